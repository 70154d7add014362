package rewrite

import (
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite/ident"
	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

// Names a DDL or administrative statement holds that no reference of the
// tree accounts for are taken for tables (Analysis.loose) unless the
// grammar fixes them as something else. notTable knows more such places:
// a window frame's bound (2 PRECEDING, UNBOUNDED FOLLOWING), where
// PRECEDING and FOLLOWING are the frame's words; the name of a call
// qualified by its database (db.f(…)), a stored function the statement
// calls (Statement.Funcs, with its schema); an index hint's list (FORCE
// KEY (PRIMARY, b): indexes); an ODBC escape's word ({d '2001-01-01'});
// FLUSH's kind of log (FLUSH SLOW LOGS).

// notTable reports whether the chain ch of text (its tokens toks) is one
// of the places above; qualified holds the statement's calls qualified by
// a database, "db.f" in lower case.
func notTable(text string, toks []lexer.Token, ch ident.Chain, qualified map[string]bool) bool {
	if ch.Star {
		return false
	}
	first := toks[ch.First]
	if ch.N == 1 && (indexHinted(text, toks, ch.First) || odbcEscape(text, toks, ch.First) || flushLogs(text, toks, ch.First)) {
		return true
	}
	switch ch.N {
	case 1:
		w := lexer.Word(text, toks, ch.First)
		if first.Kind != lexer.Ident || w != "PRECEDING" && w != "FOLLOWING" || ch.First == 0 {
			return false
		}
		prev := toks[ch.First-1]
		return (prev.Kind == lexer.Number || lexer.Word(text, toks, ch.First-1) == "UNBOUNDED") &&
			(lexer.Word(text, toks, ch.First+1) == "AND" || lexer.PunctAt(text, toks, ch.First+1, ')'))
	case 2:
		last := ch.Tok(1)
		name := strings.ToLower(lexer.IdentText(text, first) + "." + lexer.IdentText(text, toks[last]))
		return qualified[name] && lexer.PunctAt(text, toks, last+1, '(')
	}
	return false
}

// indexHinted reports whether toks[i] is in the list of an index hint:
// USE | FORCE | IGNORE {INDEX | KEY} [FOR JOIN | ORDER BY | GROUP BY] (…).
func indexHinted(text string, toks []lexer.Token, i int) bool {
	j := i - 1
	for j >= 0 && (toks[j].Kind == lexer.Ident || toks[j].Kind == lexer.Quoted || lexer.PunctAt(text, toks, j, ',')) {
		j--
	}
	if !lexer.PunctAt(text, toks, j, '(') {
		return false
	}
	j--
	switch lexer.Word(text, toks, j) {
	case "JOIN":
		j -= 2 // FOR JOIN
	case "BY":
		j -= 3 // FOR ORDER BY, FOR GROUP BY
	}
	if w := lexer.Word(text, toks, j); w != "INDEX" && w != "KEY" {
		return false
	}
	w := lexer.Word(text, toks, j-1)
	return w == "USE" || w == "FORCE" || w == "IGNORE"
}

// odbcEscape reports whether toks[i] is the word of an ODBC escape of a
// literal, {d | t | ts 'literal'}.
func odbcEscape(text string, toks []lexer.Token, i int) bool {
	w := lexer.Word(text, toks, i)
	return (w == "D" || w == "T" || w == "TS") && lexer.PunctAt(text, toks, i-1, '{') && i+2 < len(toks) &&
		toks[i+1].Kind == lexer.String && lexer.PunctAt(text, toks, i+2, '}')
}

// flushLogs reports whether toks[i] is the kind of log of FLUSH [LOCAL |
// NO_WRITE_TO_BINLOG] {ERROR | ENGINE | GENERAL | SLOW | RELAY | BINARY}
// LOGS, a statement that names no table.
func flushLogs(text string, toks []lexer.Token, i int) bool {
	switch lexer.Word(text, toks, i) {
	case "ERROR", "ENGINE", "GENERAL", "SLOW", "RELAY", "BINARY":
	default:
		return false
	}
	j := i - 1
	if w := lexer.Word(text, toks, j); w == "LOCAL" || w == "NO_WRITE_TO_BINLOG" {
		j--
	}
	return lexer.Word(text, toks, i+1) == "LOGS" && lexer.Word(text, toks, j) == "FLUSH" && (j == 0 || lexer.PunctAt(text, toks, j-1, ';'))
}
