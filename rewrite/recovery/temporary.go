package recovery

// Temporary sequences. The parser knows CREATE and DROP SEQUENCE but not
// their TEMPORARY: DROP TEMPORARY SEQUENCE [IF EXISTS] s[, …] and CREATE
// [OR REPLACE] TEMPORARY SEQUENCE s … are read with TEMPORARY blanked,
// which leaves the same names in the same places (every name of DROP's
// list is a sequence, a table to the proxy; CREATE's is the one after
// SEQUENCE). MariaDB 10.11 commits the open transaction at CREATE
// TEMPORARY SEQUENCE, as at any DDL, and not at DROP TEMPORARY SEQUENCE,
// as at DROP TEMPORARY TABLE: the TEMPORARY of a DROP is kept
// (Masked.Temporary) so that its statement is marked temporary.

// temporarySequence blanks the TEMPORARY of DROP TEMPORARY SEQUENCE and
// CREATE [OR REPLACE] TEMPORARY SEQUENCE at toks[i], the statement's first
// token (tableDDLAt blanked OR REPLACE already).
func (r *recovery) temporarySequence(i int) {
	switch {
	case r.word(i) == "DROP" && r.word(i+1) == "TEMPORARY" && r.word(i+2) == "SEQUENCE":
		r.span(i+1, i+1)
		r.m.Temporary = append(r.m.Temporary, int(r.toks[i+1].Start))
	case r.word(i) == "CREATE" && r.word(i+1) == "TEMPORARY" && r.word(i+2) == "SEQUENCE":
		r.span(i+1, i+1)
	case r.word(i) == "CREATE" && r.word(i+1) == "OR" && r.word(i+2) == "REPLACE" && r.word(i+3) == "TEMPORARY" &&
		r.word(i+4) == "SEQUENCE":
		r.span(i+3, i+3)
	}
}
