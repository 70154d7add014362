package recovery

import "github.com/sqlfork/sqlfork-proxy/rewrite/lexer"

// Window functions' and grouping's forms the parser lacks: a frame's
// EXCLUDE CURRENT ROW | GROUP | TIES | NO OTHERS (blanked: which rows of
// the frame count, words only), COUNT(DISTINCT x) OVER (…) (DISTINCT
// blanked: the same argument), and GROUP BY … WITH CUBE (blanked; the
// server refuses it, 1235). None names anything.

// frameExclude: EXCLUDE … before the ')' of a window's frame.
func (r *recovery) frameExclude(i int) (int, bool) {
	if r.word(i) != "EXCLUDE" {
		return i, false
	}
	end := 0
	switch r.word(i + 1) {
	case "GROUP", "TIES":
		end = i + 1
	case "CURRENT":
		if r.word(i+2) == "ROW" {
			end = i + 2
		}
	case "NO":
		if r.word(i+2) == "OTHERS" {
			end = i + 2
		}
	}
	if end == 0 || !r.punct(end+1, ')') || r.word(i-1) != "FOLLOWING" && r.word(i-1) != "PRECEDING" && r.word(i-1) != "ROW" {
		return i, false
	}
	r.span(i, end)
	return end, true
}

// windowDistinct: DISTINCT as the first word of an aggregate's arguments
// when OVER follows the call.
func (r *recovery) windowDistinct(i int) (int, bool) {
	if r.word(i) != "DISTINCT" || !r.punct(i-1, '(') || r.word(i-2) == "" {
		return i, false
	}
	if end := lexer.Closing(r.text, r.toks, i-1); end <= 0 || r.word(end+1) != "OVER" {
		return i, false
	}
	r.span(i, i)
	return i, true
}

// withCube: WITH CUBE ending a GROUP BY list.
func (r *recovery) withCube(i int) (int, bool) {
	if r.word(i) != "WITH" || r.word(i+1) != "CUBE" || !r.selecting {
		return i, false
	}
	r.span(i, i+1)
	return i + 1, true
}
