// Package body reads the body of a stored program (a procedure, a
// function, a trigger, a compound statement) statement by statement,
// handing each piece that may name a table to an Analyzer.
package body

import (
	"slices"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

// Analyzer analyses the pieces of a body a Reader finds; each
// method returns why the proxy cannot read the piece, "" when it can.
type Analyzer interface {
	// Table analyses text[start:end], a table name.
	Table(start, end int) string
	// Expr analyses text[start:end], an expression.
	Expr(start, end int) string
	// Statement analyses toks[from:to], a statement of the body.
	Statement(from, to int) string
}

// Reader reads a procedure's body.
type Reader struct {
	Text string
	Toks []lexer.Token
	// an analyses the pieces of the body found.
	Analyzer Analyzer
	// function is set for a stored function's body, which returns its
	// value with RETURN.
	Function bool
	// tooDeep is set when the body nests deeper than serverMaxNesting:
	// a syntax error for sure.
	TooDeep bool
	// blocks are the names (lower case) of the cursors declared in each
	// block around the statement read (innermost last), cursors how many
	// of those blocks declare each name.
	blocks  [][]string
	cursors map[string]int
	// dynamic says why the first statement of dynamic SQL read (PREPARE
	// or EXECUTE of a text built at run time) cannot be seen through.
	Dynamic string
}

// enterBlock opens a block's scope of cursors.
func (b *Reader) enterBlock() { b.blocks = append(b.blocks, nil) }

// leaveBlock closes the innermost block's scope: its cursors are gone.
func (b *Reader) leaveBlock() {
	n := len(b.blocks) - 1
	for _, c := range b.blocks[n] {
		b.cursors[c]--
	}
	b.blocks = b.blocks[:n]
}

// declareCursor notes the cursor named at toks[i] in the innermost block.
func (b *Reader) declareCursor(i int) {
	if n := len(b.blocks); n > 0 && i < len(b.Toks) {
		name := strings.ToLower(lexer.IdentText(b.Text, b.Toks[i]))
		if b.cursors == nil {
			b.cursors = map[string]int{}
		}
		b.blocks[n-1] = append(b.blocks[n-1], name)
		b.cursors[name]++
	}
}

// isCursor reports whether a cursor called name is declared in a block
// around the statement read.
func (b *Reader) isCursor(name string) bool { return b.cursors[strings.ToLower(name)] > 0 }

// Anchors reads the anchored types of toks[from:to], a declaration's (or
// parameters') names and types: TYPE OF table.column (or db.table.column)
// and ROW TYPE OF table (or db.table, or a cursor declared before) name a
// table, whose definition the server reads when the routine runs; each is
// analysed as the query SELECT * FROM <table>, so that it is the body's
// and rewritten in place. TYPE OF variable names none.
func (b *Reader) Anchors(from, to int) string {
	text, toks := b.Text, b.Toks
	w := func(j int) string { return lexer.Word(text, toks, j) }
	isName := func(j int) bool { return j < to && (toks[j].Kind == lexer.Ident || toks[j].Kind == lexer.Quoted) }
	for k := from; k < to; k++ {
		if w(k) != "TYPE" || w(k+1) != "OF" {
			continue
		}
		row := k > from && w(k-1) == "ROW"
		// The name: one to three parts.
		parts, last := 0, -1 // the name's parts, and the index of its last
		for n := k + 2; isName(n); n += 2 {
			parts, last = parts+1, n
			if !lexer.PunctAt(text, toks, n+1, '.') {
				break
			}
		}
		if parts == 0 || parts > 3 || lexer.PunctAt(text, toks, last+1, '.') {
			return "the proxy cannot read this anchored type (TYPE OF) in a body"
		}
		tableEnd := last // ROW TYPE OF [db.]table
		switch {
		case row && parts == 3:
			return "the proxy cannot read this anchored type (ROW TYPE OF) in a body"
		case row && parts == 1 && b.isCursor(lexer.IdentText(text, toks[k+2])):
			k = last
			continue // a cursor's row
		case !row && parts == 1:
			k = last
			continue // a variable's type
		case !row:
			tableEnd = last - 2 // TYPE OF [db.]table.column
		}
		if why := b.Analyzer.Table(int(toks[k+2].Start), int(toks[tableEnd].End)); why != "" {
			return why
		}
		k = last
	}
	return ""
}

// ServerMaxNesting is a nesting of the body's compound statements (blocks,
// IF, CASE, loops, handlers) past which the server's parser surely refuses
// the definition: its stack (bison's, grown by my_yyoverflow up to
// MY_YACC_MAX, 32000 entries, in sql_parse.cc) holds at least the opening
// word of every enclosing statement while it reads the innermost, and it
// answers "memory exhausted" (ER_PARSE_ERROR) when it needs more. Bodies
// nested less deeply are read (the server accepts some 6,000 nested BEGIN
// … END blocks); deeper ones are sent to the server unchanged as the
// syntax error they are, so that the client gets the server's own error.
const ServerMaxNesting = 32000

// Statement reads the body statement at toks[i]; end is the index of the
// token after it. A non-empty why says what the proxy cannot read.
func (b *Reader) Statement(i, depth int) (end int, why string) {
	text, toks := b.Text, b.Toks
	w := func(j int) string { return lexer.Word(text, toks, j) }
	if i >= len(toks) {
		return 0, "the procedure has no body"
	}
	if depth > ServerMaxNesting {
		b.TooDeep = true
		return 0, "the body's blocks nest too deep for the server's parser"
	}
	if j := i + 1; j < len(toks) && lexer.PunctAt(text, toks, j, ':') && (toks[i].Kind == lexer.Ident || toks[i].Kind == lexer.Quoted) {
		// A label: only before a block or a loop.
		switch w(i + 2) {
		case "BEGIN", "LOOP", "WHILE", "REPEAT", "FOR":
			return b.Statement(i+2, depth)
		}
		return 0, "the proxy reads labels only before BEGIN and loops in a procedure body"
	}
	switch w(i) {
	case "BEGIN":
		return b.block(i, depth)
	case "DECLARE":
		return b.declare(i, depth)
	case "SIGNAL", "RESIGNAL", "OPEN", "CLOSE", "FETCH", "LEAVE", "ITERATE", "GET":
		return b.simple(i)
	case "IF":
		return b.ifStatement(i, depth)
	case "CASE":
		return b.caseStatement(i, depth)
	case "LOOP":
		k, why := b.statements(i+1, depth, "END")
		return b.endOf(k, "LOOP", why)
	case "WHILE":
		return b.whileStatement(i, depth)
	case "REPEAT":
		return b.repeatStatement(i, depth)
	case "FOR":
		return b.forStatement(i, depth)
	case "RETURN":
		if b.Function {
			end := b.semi(i)
			return end, b.expr(i+1, end)
		}
		return 0, "the proxy does not read RETURN here in a procedure body"
	case "END", "ELSE", "ELSEIF", "UNTIL", "WHEN", "THEN":
		return 0, "the proxy does not read " + w(i) + " here in a procedure body"
	}
	end = b.semi(i)
	return end, b.Analyzer.Statement(i, end)
}

// semi is the end of a simple statement from toks[j]: the next semicolon
// (a body's statements all end with one; the body itself may end the
// input).
func (b *Reader) semi(j int) int {
	for j < len(b.Toks) && !lexer.PunctAt(b.Text, b.Toks, j, ';') {
		j++
	}
	return j
}

// onlyWords reports whether toks[from:to] reach no table: words, literals,
// variables, '=' and ',' only.
func (b *Reader) onlyWords(from, to int) bool {
	for k := from; k < to; k++ {
		switch t := b.Toks[k]; t.Kind {
		case lexer.Ident, lexer.String, lexer.Number, lexer.Variable, lexer.Quoted:
		case lexer.Punct:
			if c := b.Text[t.Start]; c != '=' && c != ',' && c != '.' && c != '-' && c != '+' {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// block reads BEGIN [NOT ATOMIC] … END [label] at toks[i].
func (b *Reader) block(i, depth int) (int, string) {
	text, toks := b.Text, b.Toks
	j := i + 1
	if lexer.Word(text, toks, j) == "NOT" && lexer.Word(text, toks, j+1) == "ATOMIC" {
		j += 2
	}
	b.enterBlock()
	k, why := b.statements(j, depth, "END")
	b.leaveBlock()
	switch {
	case why != "":
		return 0, why
	case k+1 == len(toks) || lexer.PunctAt(text, toks, k+1, ';'):
		return k + 1, ""
	case endLabel(text, toks, k+1):
		return k + 2, "" // END label
	}
	return 0, "the proxy cannot read where a BEGIN of the procedure's body ends"
}

// declare reads a DECLARE at toks[i]: of a handler, a cursor, or
// variables (with a DEFAULT expression, which may read tables).
func (b *Reader) declare(i, depth int) (int, string) {
	text, toks := b.Text, b.Toks
	end := b.semi(i)
	for k := i + 1; k < end; k++ {
		switch lexer.Word(text, toks, k) {
		case "HANDLER":
			return b.handler(k+1, depth)
		case "CURSOR":
			return b.cursor(i, k, end)
		case "DEFAULT":
			// An expression, which may read tables: analysed.
			if !onlyWordsOrTypes(text, toks, i+1, k) {
				return 0, "the proxy cannot read this declaration"
			}
			if why := b.Anchors(i+1, k); why != "" {
				return 0, why
			}
			return end, b.expr(k+1, end)
		}
	}
	if !onlyWordsOrTypes(text, toks, i+1, end) {
		return 0, "the proxy cannot read this declaration"
	}
	return end, b.Anchors(i+1, end)
}

// cursor reads DECLARE name CURSOR [(params)] FOR query (DECLARE at
// toks[i], CURSOR at toks[k], ending at toks[end]).
func (b *Reader) cursor(i, k, end int) (int, string) {
	text, toks := b.Text, b.Toks
	f := k + 1
	if lexer.PunctAt(text, toks, f, '(') {
		// MariaDB's cursor parameters, ([IN] name type, …): names and
		// types only.
		c := lexer.Closing(text, toks, f)
		if c == 0 || c >= end || !cursorParams(text, toks, f+1, c) {
			return 0, "the proxy cannot read this cursor declaration"
		}
		f = c + 1
	}
	if lexer.Word(text, toks, f) != "FOR" || f+1 >= end {
		return 0, "the proxy cannot read this cursor declaration"
	}
	if f > k+1 {
		if why := b.Anchors(k+2, f-1); why != "" {
			return 0, why
		}
	}
	if why := b.Analyzer.Statement(f+1, end); why != "" {
		return 0, why
	}
	b.declareCursor(i + 1)
	return end, ""
}

// simple reads SIGNAL, RESIGNAL, OPEN, CLOSE, FETCH, LEAVE, ITERATE and
// GET: literals and variables only, but for OPEN's actual parameters
// (expressions that may read tables).
func (b *Reader) simple(i int) (int, string) {
	w := lexer.Word(b.Text, b.Toks, i)
	end := b.semi(i)
	if w == "OPEN" && b.cursorArgs(i+1, end) {
		return end, b.expr(i+3, end-1)
	}
	if b.onlyWords(i+1, end) {
		return end, ""
	}
	switch w {
	case "LEAVE", "ITERATE", "GET":
		return 0, "the proxy cannot read this " + w + " in a procedure body"
	}
	return 0, "the proxy reads only literals and variables in " + w + " in a procedure body"
}

// whileStatement reads WHILE condition DO … END WHILE at toks[i].
func (b *Reader) whileStatement(i, depth int) (int, string) {
	do := b.find(i+1, "DO")
	if do < 0 {
		return 0, "the proxy cannot read this WHILE in a procedure body"
	}
	if why := b.expr(i+1, do); why != "" {
		return 0, why
	}
	k, why := b.statements(do+1, depth, "END")
	return b.endOf(k, "WHILE", why)
}

// repeatStatement reads REPEAT … UNTIL condition END REPEAT at toks[i].
func (b *Reader) repeatStatement(i, depth int) (int, string) {
	k, why := b.statements(i+1, depth, "UNTIL")
	if why != "" {
		return 0, why
	}
	end := b.find(k+1, "END")
	if end < 0 || lexer.Word(b.Text, b.Toks, end+1) != "REPEAT" {
		return 0, "the proxy cannot read this REPEAT in a procedure body"
	}
	if why := b.expr(k+1, end); why != "" {
		return 0, why
	}
	return b.endOf(end, "REPEAT", "")
}

// statements reads body statements, each ending with ';', from toks[i] up
// to one of the words stop: the index of that word.
func (b *Reader) statements(i, depth int, stop ...string) (int, string) {
	text, toks := b.Text, b.Toks
	for {
		if i >= len(toks) {
			return 0, "the proxy cannot read where a block of the procedure's body ends"
		}
		if w := lexer.Word(text, toks, i); slices.Contains(stop, w) {
			return i, ""
		}
		k, why := b.Statement(i, depth+1)
		if why != "" {
			return 0, why
		}
		if !lexer.PunctAt(text, toks, k, ';') {
			return 0, "the proxy cannot read where a statement of the procedure's body ends"
		}
		i = k + 1
	}
}

// endOf reads END kw [label] at toks[i] (after a block read with why):
// the index after it.
func (b *Reader) endOf(i int, kw, why string) (int, string) {
	if why != "" {
		return 0, why
	}
	text, toks := b.Text, b.Toks
	if lexer.Word(text, toks, i) != "END" || lexer.Word(text, toks, i+1) != kw {
		return 0, "the proxy cannot read where this " + kw + " of the procedure's body ends"
	}
	if endLabel(text, toks, i+2) {
		return i + 3, ""
	}
	return i + 2, ""
}

// endLabel reports whether toks[i] is a label closing a block: a name
// followed by ';' or the end of the input.
func endLabel(text string, toks []lexer.Token, i int) bool {
	if i >= len(toks) || toks[i].Kind != lexer.Ident && toks[i].Kind != lexer.Quoted {
		return false
	}
	switch lexer.Word(text, toks, i) {
	case "IF", "LOOP", "WHILE", "REPEAT", "CASE", "FOR":
		return false
	}
	return i+1 == len(toks) || lexer.PunctAt(text, toks, i+1, ';')
}

// find is the index of the first word w from toks[i] outside parentheses
// and before any ';', -1 when there is none.
func (b *Reader) find(i int, w string) int {
	text, toks := b.Text, b.Toks
	depth := 0
	for ; i < len(toks); i++ {
		switch {
		case lexer.PunctAt(text, toks, i, '('):
			depth++
		case lexer.PunctAt(text, toks, i, ')'):
			depth--
		case lexer.PunctAt(text, toks, i, ';'):
			return -1
		case depth == 0 && lexer.Word(text, toks, i) == w:
			return i
		}
	}
	return -1
}

// ifStatement reads IF cond THEN … [ELSEIF cond THEN …] [ELSE …] END IF.
func (b *Reader) ifStatement(i, depth int) (int, string) {
	return b.branches(i, depth, "IF", "ELSEIF")
}

// caseStatement reads CASE [value] WHEN v THEN … [WHEN …] [ELSE …] END
// CASE.
func (b *Reader) caseStatement(i, depth int) (int, string) {
	when := b.find(i+1, "WHEN")
	if when < 0 {
		return 0, "the proxy cannot read this CASE in a procedure body"
	}
	if when > i+1 {
		if why := b.expr(i+1, when); why != "" {
			return 0, why
		}
	}
	return b.branches(when, depth, "CASE", "WHEN")
}

// branches reads the branches of an IF or a CASE from toks[i], the word
// opening the first (IF, WHEN): a condition up to THEN and statements up
// to the next branch's word (next), ELSE or END; then ELSE's statements
// and END kw.
func (b *Reader) branches(i, depth int, kw, next string) (int, string) {
	text, toks := b.Text, b.Toks
	for {
		then := b.find(i+1, "THEN")
		if then < 0 {
			return 0, "the proxy cannot read this " + kw + " in a procedure body"
		}
		if why := b.expr(i+1, then); why != "" {
			return 0, why
		}
		k, why := b.statements(then+1, depth, next, "ELSE", "END")
		if why != "" {
			return 0, why
		}
		switch lexer.Word(text, toks, k) {
		case next:
			i = k
			continue
		case "ELSE":
			k, why = b.statements(k+1, depth, "END")
		}
		return b.endOf(k, kw, why)
	}
}

// forStatement reads FOR v IN (query) DO … END FOR (query a SELECT, a
// WITH or VALUES rows), FOR v IN cursor DO … and FOR v IN [REVERSE] low ..
// high DO ….
func (b *Reader) forStatement(i, depth int) (int, string) {
	text, toks := b.Text, b.Toks
	w := func(j int) string { return lexer.Word(text, toks, j) }
	if w(i+2) != "IN" {
		return 0, "the proxy cannot read this FOR in a procedure body"
	}
	do := b.find(i+3, "DO")
	if do < 0 {
		return 0, "the proxy cannot read this FOR in a procedure body"
	}
	j := i + 3
	switch {
	case lexer.PunctAt(text, toks, j, '(') && lexer.PunctAt(text, toks, do-1, ')') && (b.find(j+1, "SELECT") >= 0 || w(j+1) == "VALUES") ||
		w(j+1) == "SELECT" || w(j+1) == "WITH":
		// A query: SELECT, WITH, or a table value constructor, VALUES
		// (…)[, (…)], analysed as a statement of its own.
		if why := b.Analyzer.Statement(j+1, do-1); why != "" {
			return 0, why
		}
	case do == j+1 && (toks[j].Kind == lexer.Ident || toks[j].Kind == lexer.Quoted):
		// A cursor declared before.
	case b.cursorArgs(j, do):
		// A cursor declared before, opened with parameters.
		if why := b.expr(j+2, do-1); why != "" {
			return 0, why
		}
	default:
		if w(j) == "REVERSE" {
			j++
		}
		// low .. high: the lexer may read "1..3" as numbers "1." and
		// ".3", so the bounds are split on the text's "..", outside any
		// string.
		if j >= do {
			return 0, "the proxy cannot read this FOR in a procedure body"
		}
		from, to := int(toks[j].Start), int(toks[do-1].End)
		dots := strings.Index(text[from:to], "..")
		for k := j; k < do && dots >= 0; k++ {
			if t := toks[k]; t.Kind != lexer.Number && t.Kind != lexer.Punct && t.Kind != lexer.Ident && int(t.Start) <= from+dots && from+dots < int(t.End) {
				dots = -1 // inside a string or a quoted name
			}
		}
		if dots < 0 {
			return 0, "the proxy cannot read this FOR in a procedure body"
		}
		if why := b.Analyzer.Expr(from, from+dots); why != "" {
			return 0, why
		}
		if why := b.Analyzer.Expr(from+dots+2, to); why != "" {
			return 0, why
		}
	}
	k, why := b.statements(do+1, depth, "END")
	return b.endOf(k, "FOR", why)
}

// cursorArgs reports whether toks[i:end] is a cursor's name and its
// actual parameters: name ( expression, … ), the list not empty.
func (b *Reader) cursorArgs(i, end int) bool {
	text, toks := b.Text, b.Toks
	return i+3 < end && (toks[i].Kind == lexer.Ident || toks[i].Kind == lexer.Quoted) &&
		lexer.PunctAt(text, toks, i+1, '(') && lexer.Closing(text, toks, i+1) == end-1
}

// handler reads the rest of DECLARE … HANDLER at toks[i]: FOR and the
// conditions, then the handler's statement, read as any body statement.
func (b *Reader) handler(i, depth int) (int, string) {
	text, toks := b.Text, b.Toks
	w := func(j int) string { return lexer.Word(text, toks, j) }
	if w(i) != "FOR" {
		return 0, "the proxy cannot read this handler declaration"
	}
	i++
	for {
		switch {
		case w(i) == "SQLSTATE":
			i++
			if w(i) == "VALUE" {
				i++
			}
			if i >= len(toks) || toks[i].Kind != lexer.String {
				return 0, "the proxy cannot read this handler declaration"
			}
			i++
		case w(i) == "NOT" && w(i+1) == "FOUND":
			i += 2
		case i < len(toks) && (toks[i].Kind == lexer.Number || toks[i].Kind == lexer.Ident || toks[i].Kind == lexer.Quoted):
			i++ // SQLWARNING, SQLEXCEPTION, an error number or a condition's name
		default:
			return 0, "the proxy cannot read this handler declaration"
		}
		if !lexer.PunctAt(text, toks, i, ',') {
			break
		}
		i++
	}
	return b.Statement(i, depth+1)
}

// expr analyses toks[from:to], an expression of the body (a condition, a
// default, a bound), as the query SELECT <expression>: the tables its
// subqueries read are the body's, rewritten in place.
func (b *Reader) expr(from, to int) string {
	if from >= to {
		return "the proxy cannot read an empty expression in the procedure's body"
	}
	return b.Analyzer.Expr(int(b.Toks[from].Start), int(b.Toks[to-1].End))
}

// cursorParams reports whether toks[from:to] are a cursor's formal
// parameters as the proxy reads them: names and types, whose parentheses
// hold only literals (VARCHAR(32), DECIMAL(10,2), ENUM('a','b')), and no
// default value (an expression).
func cursorParams(text string, toks []lexer.Token, from, to int) bool {
	if !onlyWordsOrTypes(text, toks, from, to) {
		return false
	}
	inner := false
	for k := from; k < to; k++ {
		switch t := toks[k]; {
		case lexer.PunctAt(text, toks, k, '('):
			if inner {
				return false
			}
			inner = true
		case lexer.PunctAt(text, toks, k, ')'):
			inner = false
		case t.Kind == lexer.Ident && (inner || lexer.Word(text, toks, k) == "DEFAULT"):
			return false
		}
	}
	return true
}

// onlyWordsOrTypes reports whether toks[from:to] of a declaration are
// words, literals and the parentheses and commas of types.
func onlyWordsOrTypes(text string, toks []lexer.Token, from, to int) bool {
	for k := from; k < to; k++ {
		switch t := toks[k]; t.Kind {
		case lexer.Ident, lexer.String, lexer.Number, lexer.Quoted, lexer.Variable:
		case lexer.Punct:
			if c := text[t.Start]; c != '(' && c != ')' && c != ',' && c != '-' && c != '+' && c != '.' {
				return false
			}
		default:
			return false
		}
	}
	return true
}
