package recovery

// SHOW LOCAL VARIABLES | STATUS: MariaDB's LOCAL is SESSION, the default
// scope of SHOW VARIABLES and SHOW STATUS, which the parser takes without
// a word; LOCAL is blanked. The statement names no table.

// showLocal blanks LOCAL in SHOW LOCAL VARIABLES | STATUS at toks[i], the
// statement's first token.
func (r *recovery) showLocal(i int) {
	if r.word(i) == "SHOW" && r.word(i+1) == "LOCAL" && (r.word(i+2) == "VARIABLES" || r.word(i+2) == "STATUS") {
		r.span(i+1, i+1)
	}
}
