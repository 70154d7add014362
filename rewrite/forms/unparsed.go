package forms

import (
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite/kind"
	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// IsWriteKeyword reports words that mark statements able to change data
// or schema (or run other statements): an unparseable input holding one is
// refused.
func IsWriteKeyword(w string) bool {
	switch strings.ToUpper(w) {
	case "INSERT", "UPDATE", "DELETE", "REPLACE", "CREATE", "ALTER", "DROP", "RENAME", "TRUNCATE", "LOAD",
		"CALL", "GRANT", "REVOKE", "HANDLER", "LOCK", "STATEMENT", "EXECUTE", "PREPARE", "DO", "SET", "USE",
		"OPTIMIZE", "REPAIR":
		return true
	}
	return false
}

// Unparsed is a text the parser rejected, as its tokens, and its first
// word (after opening parentheses), in upper case.
type Unparsed struct {
	Text  string
	Toks  []lexer.Token
	First string
}

// Word is Toks[i] in upper case when it is a word, else "".
func (u *Unparsed) Word(i int) string {
	if i < len(u.Toks) && u.Toks[i].Kind == lexer.Ident {
		return strings.ToUpper(u.Text[u.Toks[i].Start:u.Toks[i].End])
	}
	return ""
}

// FirstWord is the text's first word in upper case, past opening
// parentheses; "" when it starts otherwise.
func (u *Unparsed) FirstWord() string {
	for _, t := range u.Toks {
		if t.Kind == lexer.Ident {
			return strings.ToUpper(u.Text[t.Start:t.End])
		}
		if t.Kind != lexer.Comment && !(t.Kind == lexer.Punct && u.Text[t.Start] == '(') {
			break
		}
	}
	return ""
}

// ReadLike reports whether the text starts like a single statement that
// reads: the parser cannot say where the statements of an input it
// rejects begin, nor what the others do. Transaction statements in forms
// the parser does not know count, when they hold only their own words.
func (u *Unparsed) ReadLike() bool {
	switch u.First {
	case "SELECT", "SHOW", "DESC", "DESCRIBE", "EXPLAIN", "HELP", "WITH", "VALUES", "TABLE":
		return true
	case "BEGIN", "COMMIT", "ROLLBACK", "START":
	default:
		return false
	}
	readLike := true
	for i, t := range u.Toks {
		if t.Kind == lexer.Punct && u.Text[t.Start] == ',' {
			continue
		}
		switch u.Word(i) {
		case "BEGIN", "WORK", "COMMIT", "ROLLBACK", "AND", "NO", "CHAIN", "RELEASE", "START", "TRANSACTION",
			"READ", "ONLY", "WRITE", "WITH", "CONSISTENT", "SNAPSHOT":
			continue
		}
		readLike = false
	}
	return readLike
}

// Hazard says why the word at Toks[i] makes a read reach further than the
// tables it names (the proxy cannot see which tables it locks or what it
// changes), "" when it does not.
func (u *Unparsed) Hazard(i int) string {
	w, first := u.Word(i), u.First
	switch {
	case w == "OUTFILE" || w == "DUMPFILE":
		return "it writes a file on the database server"
	case w == "FOR" && (u.Word(i+1) == "UPDATE" || u.Word(i+1) == "SHARE"), w == "SHARE" && u.Word(i+1) == "MODE":
		return "it is a locking read, which must first fork the tables it locks"
	case w == "NEXT" && u.Word(i+1) == "VALUE", (w == "NEXTVAL" || w == "SETVAL") && i+1 < len(u.Toks) && u.Text[u.Toks[i+1].Start] == '(':
		return "it changes a sequence"
	case w == "LOAD_FILE":
		return "it reads a file on the database server"
	case w == "ATOMIC":
		return "it is a compound statement"
	case w == "EVENTS" && first == "SHOW", w == "PROCESSLIST", w == "ENGINE" && first == "SHOW",
		w == "EXPLAIN" && first == "SHOW", w == "ANALYZE" && first == "SHOW":
		return "it shows what the whole server holds, every sandbox's statements included"
	}
	return ""
}

// ServerErrors are the server's error codes besides
// rewrite.ServerSyntaxError's by which it rejects text (its tokens toks), a
// statement the engine cannot parse, whatever any sandbox holds
// (Refusal.ServerErrors):
//
//   - GET DIAGNOSTICS names no table, so a name the server resolves in it
//     (GET DIAGNOSTICS CONDITION f()) is a column of none: 1054;
//   - SET without parentheses (no subquery, no function call) gives a
//     system variable a name, literal or variable, whose type does not
//     depend on any table's (SET default_storage_engine = .a.MyISAM):
//     1232.
func ServerErrors(text string, toks []lexer.Token) []uint16 {
	switch {
	case kind.IsGetDiagnostics(text, toks):
		return []uint16{wire.ErBadField}
	case lexer.Word(text, toks, 0) == "SET" && lexer.Word(text, toks, 1) != "STATEMENT":
		for _, t := range toks {
			if t.Kind == lexer.Comment || t.Kind == lexer.Punct && text[t.Start] == '(' {
				return nil
			}
		}
		return []uint16{wire.ErWrongTypeForVar}
	}
	return nil
}
