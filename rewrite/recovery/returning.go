package recovery

// REPLACE … RETURNING. The parser takes a RETURNING list after INSERT and
// DELETE, not after REPLACE, which MariaDB reads with the same clauses as
// INSERT but IGNORE, ON DUPLICATE KEY UPDATE and a row alias. A REPLACE
// whose RETURNING list is more than the simple one blanked (a qualifier,
// a call, a subquery) is read as INSERT (the word padded with a blank):
// the statement's table, its rows' values and the whole list keep their
// places, so every name in them, a subquery's tables included, is read
// where it stands. The statement's offset is kept (Masked.Replaces) and
// the engine gives the statement its REPLACE back, or refuses the text
// when that statement is no INSERT it can make a REPLACE of again.

// replaceReturning: RETURNING, at toks[i], of the REPLACE statement it is
// in, outside any parentheses: the statement's REPLACE is read as INSERT.
func (r *recovery) replaceReturning(i int) {
	first := r.toks[r.first]
	if r.word(r.first) != "REPLACE" || len(r.m.Replaces) > 0 && r.m.Replaces[len(r.m.Replaces)-1] == int(first.Start) {
		return
	}
	depth := 0
	for j := r.first; j < i; j++ {
		switch {
		case r.punct(j, '('):
			depth++
		case r.punct(j, ')'):
			depth--
		}
	}
	if depth != 0 {
		return
	}
	r.putWord(r.first, "INSERT")
	r.m.Replaces = append(r.m.Replaces, int(first.Start))
}
