package recovery

import "github.com/sqlfork/sqlfork-proxy/rewrite/lexer"

// WEIGHT_STRING(x [AS CHAR(n) | BINARY(n)] LEVEL levels): MariaDB's
// levels clause (1, 1-2, 1 DESC REVERSE, …: numbers and words), which the
// parser does not take, is blanked; x keeps its place.

// weightLevel: LEVEL at toks[i], up to the ')' of a WEIGHT_STRING call.
func (r *recovery) weightLevel(i int) (int, bool) {
	if r.word(i) != "LEVEL" {
		return i, false
	}
	j := i + 1
	for j < len(r.toks) && (r.toks[j].Kind == lexer.Number || r.punct(j, ',') || r.punct(j, '-') ||
		r.word(j) == "ASC" || r.word(j) == "DESC" || r.word(j) == "REVERSE") {
		j++
	}
	if j == i+1 || !r.punct(j, ')') || !r.inCall(i, "WEIGHT_STRING") {
		return i, false
	}
	r.span(i, j-1)
	return j - 1, true
}

// inCall reports whether toks[i] is at the top level of the arguments of
// a call of name.
func (r *recovery) inCall(i int, name string) bool {
	depth := 0
	for k := i - 1; k > r.first; k-- {
		switch {
		case r.punct(k, ')'):
			depth++
		case r.punct(k, '('):
			if depth == 0 {
				return r.word(k-1) == name
			}
			depth--
		}
	}
	return false
}
