package recovery

import "github.com/sqlfork/sqlfork-proxy/rewrite/lexer"

// CYCLE … RESTRICT. MariaDB's WITH RECURSIVE takes, after a common table
// expression's query, CYCLE column[, column …] RESTRICT: the recursion
// stops at rows it saw already, by those columns of the expression. The
// parser does not know it; it is blanked: the columns, names of the
// expression's own, name no table, and the query around them keeps its
// names in their places.

// cteQueryEnd reports whether the ')' at toks[end] closes the query of a
// common table expression, name [(columns)] AS ( … ), of a WITH RECURSIVE
// in the statement.
func (r *recovery) cteQueryEnd(end int) bool {
	recursive := false
	for j := r.first; j < end; j++ {
		if r.word(j) == "WITH" && r.word(j+1) == "RECURSIVE" {
			recursive = true
		}
		if recursive && r.punct(j, '(') && r.word(j-1) == "AS" && lexer.Closing(r.text, r.toks, j) == end {
			return true
		}
	}
	return false
}

// cycleRestrict: ) CYCLE name[, name …] RESTRICT, the names unqualified
// and no call.
func (r *recovery) cycleRestrict(i int) (int, bool) {
	if r.word(i) != "CYCLE" || !r.punct(i-1, ')') || !r.nameAt(i+1) || !r.cteQueryEnd(i-1) {
		return i, false
	}
	j := i + 1
	for r.nameAt(j) && r.punct(j+1, ',') {
		j += 2
	}
	if !r.nameAt(j) || r.word(j+1) != "RESTRICT" {
		return i, false
	}
	r.span(i, j+1)
	return j + 1, true
}
