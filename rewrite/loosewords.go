package rewrite

import (
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite/ident"
	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

// Names a DDL or administrative statement holds that no reference of the
// tree accounts for are taken for tables (Analysis.loose) unless the
// grammar fixes them as something else. notTable knows two more such
// places: a window frame's bound (2 PRECEDING, UNBOUNDED FOLLOWING),
// where PRECEDING and FOLLOWING are the frame's words, and the name of a
// call qualified by its database (db.f(…)), a stored function the
// statement calls (Statement.Funcs, with its schema).

// notTable reports whether the chain ch of text (its tokens toks) is one
// of the places above; qualified holds the statement's calls qualified by
// a database, "db.f" in lower case.
func notTable(text string, toks []lexer.Token, ch ident.Chain, qualified map[string]bool) bool {
	if ch.Star {
		return false
	}
	first := toks[ch.First]
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
