package recovery

import (
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

// Full-text searches the parser does not take. MariaDB reads
// MATCH columns AGAINST (expr [modifier]) as a simple expression, an
// operand like any (0 < MATCH (a) AGAINST ('x'), MATCH (a) AGAINST ('x')
// > 0, MATCH … AGAINST (…) + 0), its columns with or without parentheses
// (MATCH a, t.b AGAINST …); the parser takes it only as a whole
// condition, its columns in parentheses. The form is read as the call
// of a built-in function FIELD(columns) + (expr): MATCH becomes FIELD,
// and the blank after it '(' when the columns have none (MATCH then
// followed by a newline is not read), AGAINST becomes blanks and '+'
// (after a ')' that closes the columns when they had none), and the
// modifier (IN BOOLEAN MODE, WITH QUERY EXPANSION, …), words only, is
// blanked. Every column, its qualifiers included, and the searched
// expression keep their places, so the parser reads every name in them
// where it stands.

// fullTextModifiers are the search modifiers, as the words that end the
// AGAINST parentheses.
var fullTextModifiers = [][]string{
	{"IN", "NATURAL", "LANGUAGE", "MODE", "WITH", "QUERY", "EXPANSION"},
	{"IN", "NATURAL", "LANGUAGE", "MODE"},
	{"IN", "BOOLEAN", "MODE"},
	{"WITH", "QUERY", "EXPANSION"},
}

// fullTextSearch: MATCH columns AGAINST (expr [modifier]), read as
// FIELD(columns) + (expr).
func (r *recovery) fullTextSearch(i int) (int, bool) {
	if r.word(i) != "MATCH" || r.punct(i-1, '.') {
		return i, false
	}
	paren := r.punct(i+1, '(')
	if at := int(r.toks[i].End); !paren && (at >= len(r.text) || r.text[at] != ' ' && r.text[at] != '\t') {
		return i, false
	}
	j := i + 1
	if paren {
		j++
	}
	if j = r.matchColumns(j); j < 0 || paren && !r.punct(j, ')') {
		return i, false
	}
	if paren {
		j++
	}
	if r.word(j) != "AGAINST" || !r.punct(j+1, '(') {
		return i, false
	}
	end := lexer.Closing(r.text, r.toks, j+1)
	if end == 0 {
		return i, false
	}
	mod := r.fullTextModifier(j+2, end)
	if mod <= j+2 {
		return i, false
	}
	r.put(int(r.toks[i].Start), "FIELD")
	if !paren {
		r.put(int(r.toks[i].End), "(")
	}
	r.span(j, j)
	if !paren {
		r.put(int(r.toks[j].Start), ")")
	}
	r.put(int(r.toks[j].End)-1, "+")
	if mod < end {
		r.span(mod, end-1)
	}
	return j + 1, true
}

// matchColumns reads, from toks[j], MATCH's columns: names, each
// qualified or not (t.c, db.t.c), separated by ','. It returns the index
// after the last, -1 when there is none or a token is no such name.
func (r *recovery) matchColumns(j int) int {
	for {
		for part := 0; ; part++ {
			if !r.matchName(j) {
				return -1
			}
			j++
			if part == 2 || !r.punct(j, '.') {
				break
			}
			j++
		}
		if !r.punct(j, ',') {
			return j
		}
		j++
	}
}

// matchName reports whether toks[j] is a name: quoted, or a word the
// parser does not reserve.
func (r *recovery) matchName(j int) bool {
	if j >= len(r.toks) {
		return false
	}
	t := r.toks[j]
	return t.Kind == lexer.Quoted || t.Kind == lexer.Ident && !r.w.Reserved[strings.ToLower(r.text[t.Start:t.End])]
}

// fullTextModifier is the index of the first word of the search modifier
// that ends right before toks[end] (AGAINST's ')'), end when there is
// none.
func (r *recovery) fullTextModifier(from, end int) int {
	for _, m := range fullTextModifiers {
		k := end - len(m)
		if k < from {
			continue
		}
		ok := true
		for n, w := range m {
			ok = ok && r.word(k+n) == w
		}
		if ok {
			return k
		}
	}
	return end
}
