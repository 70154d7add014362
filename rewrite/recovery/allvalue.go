package recovery

// SET [GLOBAL | SESSION] var = ALL: MariaDB takes ALL as the value of a
// set variable (delay_key_write, log_slow_verbosity, note_verbosity); the
// parser reserves it. Read as ON and a blank: a value names no table. Not
// for the variables that change how the server reads texts or what a
// transaction locks, whose values the proxy reads.

// allValue: ALL at toks[i], the whole value of a SET's variable.
func (r *recovery) allValue(i int) (int, bool) {
	if r.word(i) != "ALL" || r.word(r.first) != "SET" || !r.punct(i-1, '=') || !statementEnd(r.text, r.toks, i+1) && !r.punct(i+1, ',') {
		return i, false
	}
	switch r.word(i - 2) {
	case "", "SQL_MODE", "NAMES", "CHARACTER_SET_CLIENT", "CHARACTER_SET_CONNECTION", "COLLATION_CONNECTION",
		"TX_ISOLATION", "TRANSACTION_ISOLATION", "AUTOCOMMIT", "STATEMENT":
		return i, false
	}
	r.putWord(i, "ON")
	return i, true
}
