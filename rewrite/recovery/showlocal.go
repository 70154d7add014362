package recovery

import "github.com/sqlfork/sqlfork-proxy/rewrite/lexer"

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

// SHOW WARNINGS | ERRORS LIMIT [offset,] n: the limit, numbers, is
// blanked; the statement names no table (the proxy answers it with what
// it says of the statement before, the server's rows limited so).

// showLimit blanks LIMIT … of SHOW WARNINGS | ERRORS at toks[i], the
// statement's first token.
func (r *recovery) showLimit(i int) {
	if r.word(i) != "SHOW" || r.word(i+1) != "WARNINGS" && r.word(i+1) != "ERRORS" || r.word(i+2) != "LIMIT" {
		return
	}
	j := i + 3
	for j < len(r.toks) && (r.toks[j].Kind == lexer.Number || r.punct(j, ',')) {
		j++
	}
	if j > i+3 && statementEnd(r.text, r.toks, j) {
		r.span(i+2, j-1)
	}
}
