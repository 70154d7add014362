package recovery

import "github.com/sqlfork/sqlfork-proxy/rewrite/lexer"

// SET NAMES DEFAULT COLLATE c. MariaDB sets the server's default character
// set with the collation c (or its default one, for COLLATE DEFAULT); the
// parser takes SET NAMES DEFAULT only. COLLATE c is blanked: the statement
// stays a SET NAMES, which changes how the server reads the texts that
// follow, so the proxy reads the session's settings again after it, from
// the server (a collation the server lacks is its error, 1273). A
// collation names no table.

// namesDefaultCollate blanks the COLLATE c of SET NAMES DEFAULT COLLATE c
// at toks[i], the statement's first token, c a name, a string or DEFAULT
// that ends the statement.
func (r *recovery) namesDefaultCollate(i int) {
	if r.word(i) != "SET" || r.word(i+1) != "NAMES" || r.word(i+2) != "DEFAULT" || r.word(i+3) != "COLLATE" ||
		i+4 >= len(r.toks) || !statementEnd(r.text, r.toks, i+5) {
		return
	}
	switch r.toks[i+4].Kind {
	case lexer.Ident, lexer.Quoted, lexer.String:
		r.span(i+3, i+4)
	}
}
