package recovery

// a SOUNDS LIKE b, MariaDB's comparison of SOUNDEX(a) and SOUNDEX(b),
// which the parser does not take: read as a = b, which it takes between
// any operands. Both operands keep their place, so every name in them (a
// subquery's tables) is read as it is.

// soundsLike: SOUNDS LIKE at toks[i], between an operand's end and an
// operand's start, not in SHOW.
func (r *recovery) soundsLike(i int) (int, bool) {
	if r.word(i) != "SOUNDS" || r.word(i+1) != "LIKE" || i <= r.first || r.word(r.first) == "SHOW" ||
		!operandEnd(r.text, r.toks, i-1, r.w.Reserved) || !operandStart(r.text, r.toks, i+2, r.w.Reserved) {
		return i, false
	}
	r.span(i, i+1)
	r.put(int(r.toks[i].Start), "=")
	return i + 1, true
}
