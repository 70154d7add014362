package kind

import (
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

// OfText names a statement the parser cannot read by its first words,
// for the kinds callers act on ("SHOW BINLOG EVENTS", "SHOW RELAYLOG
// EVENTS"); "" for others.
func OfText(text string, lo lexer.Options) Kind {
	var words []string
	for _, t := range lexer.Lex(text, lo) {
		if t.Kind != lexer.Ident || len(words) == 3 {
			break
		}
		words = append(words, strings.ToUpper(text[t.Start:t.End]))
	}
	if len(words) == 3 && words[0] == "SHOW" && (words[1] == "BINLOG" || words[1] == "RELAYLOG") && words[2] == "EVENTS" {
		return Kind(strings.Join(words, " "))
	}
	// Transaction statements in forms the parser does not know (only
	// their own words are let through; see unparseable): what they do to
	// the transaction matters.
	if len(words) > 0 {
		switch {
		case words[0] == "BEGIN", words[0] == "START" && len(words) > 1 && words[1] == "TRANSACTION":
			return Begin
		case words[0] == "COMMIT", words[0] == "ROLLBACK", words[0] == "KILL":
			return Kind(words[0])
		}
	}
	return ""
}

// Nameless names the statements that can name no table, when toks hold
// only words, literals, variables, '=', ',', '.' and (for XA's
// identifiers) nothing else: kind "" when they are not one.
func Nameless(text string, toks []lexer.Token) (kind Kind, class Class) {
	for i, t := range toks {
		switch t.Kind {
		case lexer.Ident, lexer.Quoted, lexer.String, lexer.Number, lexer.Variable:
		case lexer.Punct:
			switch text[t.Start] {
			case '=', ',', '.':
			case '-', '+':
				if i+1 >= len(toks) || toks[i+1].Kind != lexer.Number {
					return "", 0
				}
			default:
				return "", 0
			}
		default:
			return "", 0
		}
	}
	word := func(i int) string { return lexer.Word(text, toks, i) }
	switch word(0) {
	case "XA":
		return Xa, ClassOther
	case "INSTALL", "UNINSTALL":
		if word(1) == "PLUGIN" || word(1) == "SONAME" {
			return Kind(word(0) + " " + word(1)), ClassOther
		}
	case "CHANGE":
		if word(1) == "MASTER" {
			return ChangeMaster, ClassOther
		}
	case "GET":
		if IsGetDiagnostics(text, toks) {
			return GetDiagnostics, ClassSession
		}
	case "SIGNAL", "RESIGNAL":
		return Kind(word(0)), ClassSession
	case "BACKUP":
		if word(1) == "STAGE" {
			return BackupStage, ClassOther
		}
	case "SHOW":
		switch {
		case word(1) == "CREATE" && (word(2) == "FUNCTION" || word(2) == "TRIGGER" || word(2) == "EVENT" || word(2) == "PACKAGE"):
			return Kind("SHOW CREATE " + word(2)), ClassRead
		case (word(1) == "FUNCTION" || word(1) == "PROCEDURE" || word(1) == "PACKAGE") &&
			(word(2) == "CODE" || word(2) == "BODY" && word(3) == "CODE"):
			return Kind("SHOW " + word(1) + " CODE"), ClassRead
		case ShowsNoTable(text, toks):
			return Show, ClassRead
		}
	case "HELP":
		if len(toks) == 2 {
			return Help, ClassRead
		}
	}
	return admin(text, toks)
}

// IsGetDiagnostics reports whether text (its tokens toks) is GET [CURRENT |
// STACKED] DIAGNOSTICS …, with nothing before GET.
func IsGetDiagnostics(text string, toks []lexer.Token) bool {
	if lexer.Word(text, toks, 0) != "GET" {
		return false
	}
	w := lexer.Word(text, toks, 1)
	return w == "DIAGNOSTICS" || (w == "CURRENT" || w == "STACKED") && lexer.Word(text, toks, 2) == "DIAGNOSTICS"
}
