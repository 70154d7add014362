package recovery

import "github.com/sqlfork/sqlfork-proxy/rewrite/lexer"

// Values and defaults the parser does not take.
//
//   - IGNORE as a value (INSERT … VALUES (1, IGNORE), UPDATE t SET b =
//     IGNORE, ON DUPLICATE KEY UPDATE b = IGNORE, LOAD DATA … SET c =
//     IGNORE): MariaDB leaves the column as it would be without it. It is
//     read as PI() and blanks, a value that is no literal, as DEFAULT is
//     (one character longer): no row's column is taken for a literal the
//     statement does not write. A word, it names nothing.
//   - A column's DEFAULT (expr) whose expression holds what the parser
//     takes in no DEFAULT — a variable, a '?', a subquery — in CREATE or
//     ALTER TABLE: DEFAULT is read as CHECK and a blank, whose parentheses
//     take any expression; the expression keeps its place, so every name
//     in it, a subquery's tables included, is read where it stands.
//   - A column's DEFAULT @v, @@var or ? (a variable alone): the variable,
//     which names nothing, is read as the literal 0.

// valueEnd are the words that may follow a value of an INSERT's, an
// UPDATE's or a LOAD DATA's SET list.
var valueEnd = map[string]bool{"WHERE": true, "ORDER": true, "LIMIT": true, "RETURNING": true}

// ignoreValue: IGNORE where a value stands — after '(' , ',' or '=', and
// before ',', ')', ';', the end, WHERE, ORDER BY, LIMIT or RETURNING —
// read as PI(). IGNORE the keyword (INSERT IGNORE, IGNORE INDEX, IGNORE n
// LINES, ALTER IGNORE) has other neighbours.
func (r *recovery) ignoreValue(i int) (int, bool) {
	if r.word(i) != "IGNORE" || !(r.punct(i-1, '(') || r.punct(i-1, ',') || r.punct(i-1, '=')) ||
		!(statementEnd(r.text, r.toks, i+1) || r.punct(i+1, ',') || r.punct(i+1, ')') || valueEnd[r.word(i+1)]) {
		return i, false
	}
	r.putWord(i, "PI()")
	return i, true
}

// defaultExpression: DEFAULT (expr) of a column (columnDefault), expr
// holding a variable, a '?' or a subquery, read as CHECK (expr). Not
// DEFAULT (SELECT …), whose parentheses are the subquery's: CHECK would
// need a pair more.
func (r *recovery) defaultExpression(i int) (int, bool) {
	if !r.punct(i+1, '(') || r.word(i+2) == "SELECT" || r.word(i+2) == "WITH" || r.word(i-1) == "SET" || !r.columnDefault(i) {
		return i, false
	}
	end := lexer.Closing(r.text, r.toks, i+1)
	if end == 0 || !r.unparsedDefault(i+2, end) {
		return i, false
	}
	r.putWord(i, "CHECK")
	return i, true
}

// defaultVariable: DEFAULT @v, DEFAULT @@var or DEFAULT ? of a column
// (columnDefault), the variable alone (followed by ',', ')', the end or
// a word that is no operator: another attribute), read as DEFAULT 0 and
// blanks. The server reads the variable when a row takes the default, not
// when the table is made or changed, and a variable names no table.
func (r *recovery) defaultVariable(i int) (int, bool) {
	if i+1 >= len(r.toks) || r.toks[i+1].Kind != lexer.Variable || !r.columnDefault(i) ||
		!(statementEnd(r.text, r.toks, i+2) || r.punct(i+2, ',') || r.punct(i+2, ')') || r.attributeAt(i+2)) {
		return i, false
	}
	r.putWord(i+1, "0")
	return i + 1, true
}

// operatorWords are the words that continue an expression after an
// operand.
var operatorWords = map[string]bool{"AND": true, "OR": true, "XOR": true, "DIV": true, "MOD": true, "IS": true,
	"IN": true, "LIKE": true, "REGEXP": true, "RLIKE": true, "BETWEEN": true, "SOUNDS": true, "COLLATE": true,
	"MEMBER": true, "ESCAPE": true}

// attributeAt reports whether toks[j] is a word that starts a column's
// attribute, not one that continues an expression (NOT only before NULL).
func (r *recovery) attributeAt(j int) bool {
	w := r.word(j)
	return w != "" && !operatorWords[w] && (w != "NOT" || r.word(j+1) == "NULL")
}

// columnDefault reports whether the DEFAULT at toks[i] is a column's, in
// CREATE or ALTER TABLE: right after its type or another attribute (a
// word, a string or ')'), in the statement's column list (depth 1 in
// CREATE TABLE, 0 or 1 in ALTER TABLE) and before any query's SELECT (not
// one in an expression, deeper).
func (r *recovery) columnDefault(i int) bool {
	if !r.tableDDL || r.word(i) != "DEFAULT" || i <= r.first || !(r.toks[i-1].Kind == lexer.Ident || r.toks[i-1].Kind == lexer.String || r.punct(i-1, ')')) {
		return false
	}
	depth := 0
	for j := r.first; j < i; j++ {
		switch {
		case r.punct(j, '('):
			depth++
		case r.punct(j, ')'):
			depth--
		case r.word(j) == "SELECT" && depth <= 1:
			return false
		}
	}
	return depth == 1 || depth == 0 && r.word(r.first) == "ALTER"
}

// unparsedDefault reports whether toks[from:to] hold a variable, a '?' or
// SELECT: what the parser takes in no DEFAULT.
func (r *recovery) unparsedDefault(from, to int) bool {
	for j := from; j < to; j++ {
		if r.toks[j].Kind == lexer.Variable || r.word(j) == "SELECT" {
			return true
		}
	}
	return false
}
