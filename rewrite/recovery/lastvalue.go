package recovery

import "github.com/sqlfork/sqlfork-proxy/rewrite/lexer"

// LAST_VALUE(expr[, expr …]), MariaDB's function that evaluates every
// argument and returns the last one (not the window function, which has
// OVER after it); the parser knows only the window function. It is read as
// JSON_ARRAY (the same length), a built-in function of any number of
// arguments: every argument keeps its place, so the names in them (a
// subquery's tables) are read as they are.

// lastValue: LAST_VALUE( … ) with no OVER after it, not qualified.
func (r *recovery) lastValue(i int) (int, bool) {
	if r.word(i) != "LAST_VALUE" || r.toks[i].Kind != lexer.Ident || !r.punct(i+1, '(') || r.punct(i-1, '.') || r.blanked(i) {
		return i, false
	}
	end := lexer.Closing(r.text, r.toks, i+1)
	if end <= 0 || r.word(end+1) == "OVER" || r.word(end+1) == "RESPECT" || r.word(end+1) == "IGNORE" ||
		r.word(end+1) == "FROM" && (r.word(end+2) == "FIRST" || r.word(end+2) == "LAST") {
		return i, false
	}
	r.put(int(r.toks[i].Start), "JSON_ARRAY")
	return i, true
}
