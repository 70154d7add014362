package recovery

// An index's [NOT] IGNORED, MariaDB's flag that keeps the optimizer from
// using it: in ALTER TABLE … ALTER INDEX | KEY name [NOT] IGNORED and
// after a CREATE INDEX's columns, where the parser takes VISIBLE (the same
// length as IGNORED; NOT blanked). The flag names nothing; the index's
// name is an index's.

// ignoredIndex: [NOT] IGNORED at toks[i].
func (r *recovery) ignoredIndex(i int) (int, bool) {
	at := i
	if r.word(i) == "NOT" {
		at++
	}
	if r.word(at) != "IGNORED" {
		return i, false
	}
	alter := (r.word(i-2) == "INDEX" || r.word(i-2) == "KEY") && r.word(i-3) == "ALTER" && r.word(r.first) == "ALTER"
	create := r.punct(i-1, ')') && r.word(r.first) == "CREATE" && r.createsIndex()
	if !alter && !create || !(statementEnd(r.text, r.toks, at+1) || r.punct(at+1, ',')) {
		return i, false
	}
	if at > i {
		r.span(i, i)
	}
	r.putWord(at, "VISIBLE")
	return at, true
}

// createsIndex reports whether the statement is CREATE [OR REPLACE]
// [UNIQUE | FULLTEXT | SPATIAL] INDEX.
func (r *recovery) createsIndex() bool {
	j := r.first + 1
	if r.word(j) == "OR" && r.word(j+1) == "REPLACE" {
		j += 2
	}
	if w := r.word(j); w == "UNIQUE" || w == "FULLTEXT" || w == "SPATIAL" {
		j++
	}
	return r.word(j) == "INDEX"
}
