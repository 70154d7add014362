package recovery

import (
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

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

// frameString: a string as a window frame's bound ('abcd' PRECEDING),
// which the server takes in its grammar and refuses (a RANGE bound must be
// a number); read as 1 and blanks: a literal names nothing.
func (r *recovery) frameString(i int) (int, bool) {
	if r.toks[i].Kind != lexer.String || r.word(i+1) != "PRECEDING" && r.word(i+1) != "FOLLOWING" ||
		r.word(i-1) != "BETWEEN" && r.word(i-1) != "AND" && r.word(i-1) != "ROWS" && r.word(i-1) != "RANGE" {
		return i, false
	}
	r.span(i, i)
	r.put(int(r.toks[i].Start), "1")
	return i, true
}

// allDistinct: SELECT ALL DISTINCT or SELECT DISTINCT ALL, which the
// server refuses (1221) as the parser does; ALL is blanked, so the
// statement's tables are read, and the server says its error.
func (r *recovery) allDistinct(i int) (int, bool) {
	if r.word(i) != "ALL" || !(r.word(i-1) == "SELECT" && r.word(i+1) == "DISTINCT" || r.word(i-1) == "DISTINCT" && r.word(i-2) == "SELECT") {
		return i, false
	}
	r.span(i, i)
	return i, true
}

// spacedAggregates are MariaDB's aggregate functions whose names are
// keywords of its grammar, which read a call with blanks before its '('.
var spacedAggregates = map[string]bool{
	"AVG": true, "BIT_AND": true, "BIT_OR": true, "BIT_XOR": true, "COUNT": true, "GROUP_CONCAT": true, "MAX": true,
	"MIN": true, "STD": true, "STDDEV": true, "STDDEV_POP": true, "STDDEV_SAMP": true, "SUM": true, "VARIANCE": true,
	"VAR_POP": true, "VAR_SAMP": true,
}

// spacedAggregate: MAX (a), an aggregate's call with blanks (no line
// break) between its name and '(', which the parser reads as a name and a
// parenthesis: the name is moved up against the '(' (the blanks before
// it), the call's arguments keep their place.
func (r *recovery) spacedAggregate(i int) (int, bool) {
	t := r.toks[i]
	if t.Kind != lexer.Ident || !spacedAggregates[r.word(i)] || !r.punct(i+1, '(') || r.punct(i-1, '.') || r.blanked(i) {
		return i, false
	}
	gap := r.text[t.End:r.toks[i+1].Start]
	if gap == "" || strings.Trim(gap, " \t") != "" {
		return i, false
	}
	name := r.text[t.Start:t.End]
	r.blank(int(t.Start), int(r.toks[i+1].Start))
	r.put(int(r.toks[i+1].Start)-len(name), name)
	return i, true
}
