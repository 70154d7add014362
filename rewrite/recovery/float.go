package recovery

import (
	"errors"
	"strconv"

	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

// A floating-point literal beyond the range of a double (1.8e308,
// 1e+1111111111): the parser rejects the statement, and so does the
// server (1367, an illegal double found while parsing), which names its
// tables the same whatever the literal. It is read as 0 and blanks; a
// number names no table.

// hugeFloat: toks[i] is a number with an exponent that overflows a
// double.
func (r *recovery) hugeFloat(i int) (int, bool) {
	t := r.toks[i]
	if t.Kind != lexer.Number || r.text[t.Start] < '0' || r.text[t.Start] > '9' {
		return i, false
	}
	if _, err := strconv.ParseFloat(r.text[t.Start:t.End], 64); !errors.Is(err, strconv.ErrRange) {
		return i, false
	}
	r.span(i, i)
	r.put(int(t.Start), "0")
	return i, true
}
