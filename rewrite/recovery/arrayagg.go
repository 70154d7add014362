package recovery

import "github.com/sqlfork/sqlfork-proxy/rewrite/lexer"

// JSON_ARRAYAGG([DISTINCT] expr [ORDER BY …] [LIMIT …]), MariaDB's
// aggregate with GROUP_CONCAT's clauses, of which the parser takes none:
// read as GROUP_CONCAT (a blank before it, the same length), which the
// parser takes with DISTINCT and ORDER BY (its LIMIT is concatLimit's).
// Every expression keeps its place, ORDER BY's included, so every name in
// them (a qualifier, a subquery's tables) is read as it is.

// arrayAgg: JSON_ARRAYAGG( at toks[i], not qualified.
func (r *recovery) arrayAgg(i int) (int, bool) {
	if r.word(i) != "JSON_ARRAYAGG" || r.toks[i].Kind != lexer.Ident || !r.punct(i+1, '(') || r.punct(i-1, '.') ||
		r.toks[i+1].Start != r.toks[i].End {
		return i, false
	}
	r.put(int(r.toks[i].Start), " GROUP_CONCAT")
	return i, true
}
