// Package dynamic reads dynamic SQL. PREPARE name FROM <expression> and
// EXECUTE IMMEDIATE <expression> run a text the server computes: the proxy
// cannot see it in the input. When the expression is one the proxy may compute first with
// the same result — user and system variables, literals, and the server's
// pure string functions of them, nothing that reads a table, calls a
// stored function or changes from one evaluation to the next — the session
// asks the server for its value (SELECT <expression>, on the same
// connection just before) and sends the statement with that value as a
// string literal in the expression's place, which the engine then reads
// like any PREPARE … FROM 'text'.
package dynamic

import (
	"strings"
	"unicode/utf8"

	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

// Dynamic is a PREPARE or EXECUTE IMMEDIATE input whose text is computed
// by an expression the proxy may compute first.
type Dynamic struct {
	// Expr is the expression's text, as written.
	Expr       string
	src        string
	start, end int
	backslash  bool
}

// pureStringFuncs are the server's functions a dynamic text's expression
// may call: their value depends on their arguments only.
var pureStringFuncs = map[string]bool{"CONCAT": true, "CONCAT_WS": true, "REPLACE": true, "REPEAT": true, "LOWER": true,
	"UPPER": true, "LCASE": true, "UCASE": true, "TRIM": true, "LTRIM": true, "RTRIM": true, "SUBSTRING": true, "SUBSTR": true,
	"LEFT": true, "RIGHT": true, "LPAD": true, "RPAD": true, "IF": true, "IFNULL": true, "COALESCE": true, "SPACE": true,
	"QUOTE": true, "SFORMAT": true, "CHAR_LENGTH": true, "LENGTH": true, "HEX": true, "UNHEX": true, "CAST": true, "CONVERT": true}

// operatorWords are the words a dynamic text's expression may hold between
// its values.
var operatorWords = map[string]bool{"AND": true, "OR": true, "NOT": true, "XOR": true, "IS": true, "NULL": true, "TRUE": true,
	"FALSE": true, "DIV": true, "MOD": true, "AS": true, "CHAR": true, "BINARY": true}

// Read reads sql, a single statement read under lo, as PREPARE name FROM
// <expression> or EXECUTE IMMEDIATE <expression> [USING …] whose
// expression (not a string literal) the proxy may compute first; ok is
// false for any other input.
func Read(sql string, lo lexer.Options) (*Dynamic, bool) {
	toks := lexer.Lex(sql, lo)
	n := len(toks)
	for n > 0 && lexer.PunctAt(sql, toks, n-1, ';') {
		n--
	}
	toks = toks[:n]
	w := func(i int) string { return lexer.Word(sql, toks, i) }
	var from int
	switch {
	case w(0) == "PREPARE" && len(toks) > 3 && (toks[1].Kind == lexer.Ident || toks[1].Kind == lexer.Quoted) && w(2) == "FROM":
		from = 3
	case w(0) == "EXECUTE" && w(1) == "IMMEDIATE" && len(toks) > 2:
		from = 2
	default:
		return nil, false
	}
	to, depth, computed := from, 0, false
	for ; to < len(toks); to++ {
		t := toks[to]
		computed = computed || t.Kind == lexer.Variable || t.Kind == lexer.Ident && pureStringFuncs[w(to)]
		switch {
		case t.Kind == lexer.Comment || lexer.PunctAt(sql, toks, to, ';'):
			return nil, false
		case depth == 0 && from == 2 && w(to) == "USING":
			goto found
		case lexer.PunctAt(sql, toks, to, '('):
			depth++
		case lexer.PunctAt(sql, toks, to, ')'):
			depth--
		case t.Kind == lexer.Variable || t.Kind == lexer.String || t.Kind == lexer.Number || operatorWords[w(to)]:
		case t.Kind == lexer.Ident && pureStringFuncs[w(to)] && lexer.PunctAt(sql, toks, to+1, '('):
		case t.Kind == lexer.Punct && strings.IndexByte(",+-*/=<>!|&", sql[t.Start]) >= 0:
		default:
			return nil, false
		}
	}
found:
	if !computed || depth != 0 {
		return nil, false // literals only (read as they are), or unbalanced
	}
	d := &Dynamic{src: sql, start: int(toks[from].Start), end: int(toks[to-1].End), backslash: !lo.NoBackslashEscapes}
	d.Expr = sql[d.start:d.end]
	return d, true
}

// With is the input with the string value (nil: NULL) in the expression's
// place, as a literal the server reads back as value.
func (d *Dynamic) With(value *string) string {
	lit := "NULL"
	if value != nil {
		lit = lexer.Quote(*value, d.backslash)
	}
	return d.src[:d.start] + lit + d.src[d.end:]
}

// BareExecute reports whether sql, read under lo, is EXECUTE name, with
// no USING values.
func BareExecute(sql string, lo lexer.Options) bool {
	toks := lexer.Lex(sql, lo)
	n := len(toks)
	for n > 0 && lexer.PunctAt(sql, toks, n-1, ';') {
		n--
	}
	return n == 2 && lexer.Word(sql, toks, 0) == "EXECUTE" && (toks[1].Kind == lexer.Ident || toks[1].Kind == lexer.Quoted) &&
		lexer.Word(sql, toks, 1) != "IMMEDIATE"
}

// LiteralText reads sql as the words head ("" for a name) followed by one
// string literal (see rewrite's Engine.ImmediateText) and returns the literal's text.
func LiteralText(sql string, lo lexer.Options, head ...string) (string, bool) {
	toks := lexer.Lex(sql, lo)
	n := len(toks)
	for n > 0 && lexer.PunctAt(sql, toks, n-1, ';') {
		n--
	}
	if n != len(head)+1 {
		return "", false
	}
	for i, w := range head {
		if w == "" && toks[i].Kind != lexer.Ident && toks[i].Kind != lexer.Quoted || w != "" && lexer.Word(sql, toks, i) != w {
			return "", false
		}
	}
	lit := toks[len(head)]
	if lit.Kind != lexer.String || sql[lit.Start] != '\'' && sql[lit.Start] != '"' {
		return "", false
	}
	text := lexer.Unquote(sql[lit.Start:lit.End], !lo.NoBackslashEscapes)
	for i := 0; i < len(text); i++ {
		if text[i] >= utf8.RuneSelf {
			return "", false
		}
	}
	for i, t := range lexer.Lex(text, lo) {
		if t.Kind == lexer.Variable && text[t.Start:t.End] == "?" || i == 0 && t.Kind == lexer.Comment {
			return "", false
		}
	}
	return text, true
}

// Unpreparable reports whether text, read under lo, is a statement the
// server will not prepare (see rewrite.UnpreparableText).
func Unpreparable(text string, lo lexer.Options) bool {
	toks := lexer.Lex(text, lo)
	switch lexer.Word(text, toks, 0) {
	case "PREPARE", "EXECUTE", "DEALLOCATE":
		return true
	case "DROP":
		return lexer.Word(text, toks, 1) == "PREPARE"
	}
	return false
}
