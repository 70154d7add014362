package recovery

import (
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

// An argument's alias in a call of a function by its bare name:
// abs(3 AS three), instr("foobar" p1, "bar"), fn(MIN(b) xx). MariaDB's
// grammar gives a call of a name that is no keyword (function_call_generic:
// IDENT_sys '(' udf_expr_list ')', built-in functions by name, UDFs and
// stored functions alike) arguments of the form expr [[AS] alias]
// (udf_expr's select_alias: an identifier or a string); the server then
// refuses a built-in's or a stored function's named argument (1583, 1584)
// and gives a UDF its name. The parser takes no alias there. The alias is
// blanked (with its AS): it names a parameter, never a table, and the
// argument's expression keeps its place, so every name in it is read.
//
// A call qualified by a database (db.f(…)) takes no alias (opt_expr_list)
// and is left alone, and so are the keyword functions whose own syntax puts
// a word after an expression (CAST(x AS type), CONVERT, WEIGHT_STRING(x AS
// CHAR(n)), the dynamic column functions, JSON_TABLE). Not in CREATE or
// ALTER TABLE, whose column lists look like calls.

// noAliasCalls are the function names whose arguments are not udf_expr's,
// where a word after an expression is their syntax, not an alias.
var noAliasCalls = map[string]bool{
	"CAST": true, "CONVERT": true, "WEIGHT_STRING": true, "JSON_TABLE": true, "CHAR": true,
	"COLUMN_GET": true, "COLUMN_CREATE": true, "COLUMN_ADD": true, "COLUMN_DELETE": true,
	"COLUMN_EXISTS": true, "COLUMN_LIST": true, "COLUMN_CHECK": true, "COLUMN_JSON": true,
}

// callContext are the words after which a name and '(' start a call in an
// expression.
var callContext = map[string]bool{
	"SELECT": true, "WHERE": true, "AND": true, "OR": true, "XOR": true, "NOT": true, "HAVING": true,
	"WHEN": true, "THEN": true, "ELSE": true, "RETURN": true, "DO": true, "DISTINCT": true, "ALL": true,
}

// argAlias: at a call's name, the aliases of its arguments (see above).
func (r *recovery) argAlias(i int) (int, bool) {
	if r.tableDDL || !r.genericCall(i) {
		return i, false
	}
	end := lexer.Closing(r.text, r.toks, i+1)
	if end <= 0 {
		return i, false
	}
	found := false
	from := i + 2
	for j := i + 2; j <= end; j++ {
		switch {
		case r.punct(j, '('):
			if k := lexer.Closing(r.text, r.toks, j); k > 0 {
				j = k
			}
		case r.punct(j, ',') || j == end:
			if a := r.aliasAt(from, j-1); a > 0 {
				r.span(a, j-1)
				found = true
			}
			from = j + 1
		}
	}
	return i, found
}

// genericCall reports whether toks[i] is the bare name of a call (a word
// no keyword, or a quoted name) in an expression: after an operator, '(',
// ',' or a word that precedes an expression, and not qualified.
func (r *recovery) genericCall(i int) bool {
	t := r.toks[i]
	if i == 0 || !r.punct(i+1, '(') || r.punct(i-1, '.') || r.blanked(i) {
		return false
	}
	switch t.Kind {
	case lexer.Ident:
		w := strings.ToLower(r.text[t.Start:t.End])
		if r.w.Keywords[w] || noAliasCalls[strings.ToUpper(w)] {
			return false
		}
	case lexer.Quoted:
	default:
		return false
	}
	if p := r.toks[i-1]; p.Kind == lexer.Punct {
		return strings.IndexByte("(,=<>+-*/%&|^!~", r.text[p.Start]) >= 0
	}
	return callContext[r.word(i-1)]
}

// aliasAt is the index of the first token of an argument's alias (AS
// included) in the argument toks[from:last+1], 0 when it has none: its
// last token is a name or a string after AS, or after an operand's end (a
// literal, a variable, a name, ')') that is no keyword nor introducer;
// a string after a string is the same literal, not an alias.
func (r *recovery) aliasAt(from, last int) int {
	if last-from < 1 {
		return 0
	}
	a, x := r.toks[last], r.toks[last-1]
	lower := strings.ToLower(r.text[a.Start:a.End])
	switch a.Kind {
	case lexer.Quoted, lexer.String:
	case lexer.Ident:
		if r.w.Reserved[lower] {
			return 0
		}
	default:
		return 0
	}
	if r.word(last-1) == "AS" {
		if last-1 == from {
			return 0
		}
		return last - 1
	}
	if a.Kind == lexer.Ident && (r.w.Keywords[lower] || intervalUnits[strings.ToUpper(lower)]) {
		return 0
	}
	switch x.Kind {
	case lexer.Number, lexer.Variable, lexer.Quoted:
	case lexer.String:
		if a.Kind == lexer.String {
			return 0
		}
	case lexer.Punct:
		if r.text[x.Start] != ')' {
			return 0
		}
	case lexer.Ident:
		w := strings.ToLower(r.text[x.Start:x.End])
		if r.w.Keywords[w] || strings.HasPrefix(w, "_") {
			return 0
		}
	default:
		return 0
	}
	return last
}
