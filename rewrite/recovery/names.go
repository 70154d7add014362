package recovery

import (
	"strconv"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

// Names the parser reserves and MariaDB does not. MariaDB reads ROW, RANK,
// OF, WINDOW, … as plain names wherever a column's name can stand
// (SELECT row FROM t, UPDATE t SET row = 3, INSERT INTO t (id, row)); the
// parser rejects them there. Such a word, unquoted, where only an
// expression or a column list can hold it — after SELECT, SET, WHERE, BY,
// an operator, '(' or ',', and before ',', ')', an operator, FROM, AS, … —
// and not called (no '(' after it), is read as a placeholder name of the
// same length that appears nowhere else in the text (Masked.Placeholders),
// the same one for every occurrence of the word. None of those places
// holds the word as MariaDB's keyword (CURRENT ROW, WITH CHECK OPTION,
// AS OF, FOR EACH ROW, UNTIL after ';', STORED after ')' all have other
// neighbours). The engine then refuses the reading if a placeholder names
// a table, a database, a qualifier or a common table expression: a table
// named so keeps the text unread, as before.

// serverNames are the words the parser reserves that MariaDB 10.11 reads
// as names (measured: CREATE TABLE t (w INT), then SELECT w FROM t).
var serverNames = map[string]bool{
	"array": true, "cume_dist": true, "database": true, "dense_rank": true, "first_value": true, "generated": true,
	"groups": true, "ilike": true, "lag": true, "last_value": true, "lateral": true, "lead": true, "nth_value": true,
	"ntile": true, "of": true, "option": true, "percent_rank": true, "rank": true, "row": true, "stored": true,
	"tablesample": true, "until": true, "virtual": true, "window": true,
}

// nameBefore are the words after which an expression or a column list
// item starts; nameAfter those that may follow a column's name.
var (
	nameBefore = map[string]bool{"SELECT": true, "DISTINCT": true, "SET": true, "WHERE": true, "BY": true, "AND": true,
		"OR": true, "NOT": true, "XOR": true, "ON": true, "HAVING": true, "WHEN": true, "THEN": true, "ELSE": true,
		"LIKE": true, "BETWEEN": true, "CASE": true, "DIV": true, "MOD": true}
	nameAfter = map[string]bool{"FROM": true, "WHERE": true, "AS": true, "ASC": true, "DESC": true, "IS": true,
		"IN": true, "NOT": true, "LIKE": true, "BETWEEN": true, "AND": true, "OR": true, "XOR": true, "GROUP": true,
		"ORDER": true, "HAVING": true, "LIMIT": true, "THEN": true, "ELSE": true, "END": true, "WHEN": true,
		"DIV": true, "MOD": true, "REGEXP": true, "RLIKE": true, "COLLATE": true, "UNION": true, "EXCEPT": true,
		"INTERSECT": true, "ROWS": true, "RANGE": true, "FOR": true, "LOCK": true, "INTO": true, "SEPARATOR": true,
		"WITH": true}
)

// operatorChars are the punctuation an expression's operand may stand
// beside.
const operatorChars = "=<>!+-*/%|&^~"

// reservedName: a word of serverNames used as a column's name, read as its
// placeholder.
func (r *recovery) reservedName(i int) (int, bool) {
	t := r.toks[i]
	if t.Kind != lexer.Ident || !serverNames[strings.ToLower(r.text[t.Start:t.End])] ||
		!r.w.Reserved[strings.ToLower(r.text[t.Start:t.End])] || r.blanked(i) || !r.nameBefore(i-1) || !r.nameAfter(i+1) {
		return i, false
	}
	p, ok := r.placeholder(strings.ToLower(r.text[t.Start:t.End]))
	if !ok {
		return i, false
	}
	r.put(int(t.Start), p)
	return i, true
}

// nameBefore reports whether toks[i] may come right before a column's
// name in an expression or a list.
func (r *recovery) nameBefore(i int) bool {
	if i < 0 {
		return false
	}
	if r.toks[i].Kind == lexer.Punct {
		c := r.text[r.toks[i].Start]
		return c == ',' || c == '(' || strings.IndexByte(operatorChars, c) >= 0
	}
	return nameBefore[r.word(i)]
}

// nameAfter reports whether toks[i] may come right after a column's name
// (the end of the text too), and is no '(' of a call or a '.'.
func (r *recovery) nameAfter(i int) bool {
	if i >= len(r.toks) {
		return true
	}
	if r.toks[i].Kind == lexer.Comment {
		return r.nameAfter(i + 1)
	}
	if r.toks[i].Kind == lexer.Punct {
		c := r.text[r.toks[i].Start]
		return c == ',' || c == ')' || c == ';' || strings.IndexByte(operatorChars, c) >= 0
	}
	return nameAfter[r.word(i)]
}

// placeholder is word's placeholder: the one it was given, or a new name
// of its length, no keyword of the parser, found nowhere in the text nor
// given to another word.
func (r *recovery) placeholder(word string) (string, bool) {
	for _, p := range r.m.Placeholders {
		if p.Word == word {
			return p.Name, true
		}
	}
	lower := strings.ToLower(r.text)
	for k := 0; ; k++ {
		n := strconv.FormatInt(int64(k), 36)
		if len(n) >= len(word) {
			return "", false
		}
		name := "z" + strings.Repeat("q", len(word)-1-len(n)) + n
		if r.w.Keywords[name] || strings.Contains(lower, name) || r.given(name) {
			continue
		}
		r.m.Placeholders = append(r.m.Placeholders, Placeholder{Word: word, Name: name})
		return name, true
	}
}

// given reports whether name is another word's placeholder.
func (r *recovery) given(name string) bool {
	for _, p := range r.m.Placeholders {
		if p.Name == name {
			return true
		}
	}
	return false
}

// Placeholder is the name a word of serverNames was read as.
type Placeholder struct {
	Word, Name string
}
