package recovery

// NATURAL INNER JOIN and NATURAL STRAIGHT_JOIN, which MariaDB takes and
// the parser does not: read as NATURAL JOIN (INNER blanked, STRAIGHT_JOIN
// read as JOIN and blanks), which joins the same tables on the same
// columns; STRAIGHT_JOIN only fixes the order the optimizer reads them in.

// naturalJoin: INNER JOIN or STRAIGHT_JOIN after NATURAL at toks[i-1].
func (r *recovery) naturalJoin(i int) (int, bool) {
	if r.word(i-1) != "NATURAL" {
		return i, false
	}
	switch {
	case r.word(i) == "INNER" && r.word(i+1) == "JOIN":
		r.span(i, i)
	case r.word(i) == "STRAIGHT_JOIN":
		r.putWord(i, "JOIN")
	default:
		return i, false
	}
	return i, true
}
