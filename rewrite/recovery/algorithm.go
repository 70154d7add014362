package recovery

// ALTER TABLE …, ALGORITHM [=] NOCOPY, MariaDB's algorithm that refuses a
// copy of the table; the parser knows COPY, INPLACE and INSTANT. Read as
// COPY and blanks: an algorithm names nothing.

// noCopy: NOCOPY after ALGORITHM [=] in a CREATE or ALTER TABLE.
func (r *recovery) noCopy(i int) (int, bool) {
	if !r.tableDDL || r.word(i) != "NOCOPY" || !(r.word(i-1) == "ALGORITHM" || r.punct(i-1, '=') && r.word(i-2) == "ALGORITHM") {
		return i, false
	}
	r.putWord(i, "COPY")
	return i, true
}
