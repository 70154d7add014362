package recovery

import "github.com/sqlfork/sqlfork-proxy/rewrite/lexer"

// UPDATE t1, t2 SET … [WHERE c] ORDER BY e1, e2 LIMIT n: MariaDB orders
// and limits a multi-table UPDATE; the parser takes neither there. The
// ordering's expressions keep their place, read as a row the WHERE
// condition ANDs (WHERE c AND(e1, e2), or WHERE(e1, e2) when there is no
// WHERE: ORDER BY's words give way to AND( or WHERE(, LIMIT n to the ')'),
// so every name in them (a qualifier, a subquery's tables) is read as it
// is; ASC and DESC are blanked. The rows the statement writes are not
// read from the text, and every table the UPDATE names is written.

// updateOrder: ORDER BY at toks[i], at the top level of an UPDATE (or an
// EXPLAIN of one), followed by a LIMIT n that ends the statement.
func (r *recovery) updateOrder(i int) (int, bool) {
	first := r.first
	if w := r.word(first); w == "EXPLAIN" || w == "DESCRIBE" || w == "DESC" {
		first++
	}
	if r.word(i) != "ORDER" || r.word(i+1) != "BY" || r.word(first) != "UPDATE" || r.toks[i+1].End-r.toks[i].Start != 8 {
		return i, false
	}
	where, depth := false, 0
	for j := first; j < i; j++ {
		switch {
		case r.punct(j, '('):
			depth++
		case r.punct(j, ')'):
			depth--
		case depth == 0 && r.word(j) == "WHERE":
			where = true
		}
	}
	limit := atTop(r.text, r.toks, i+2, len(r.toks), func(j int) bool { return r.word(j) == "LIMIT" })
	if depth != 0 || limit == 0 || limit+1 >= len(r.toks) || r.toks[limit+1].Kind != lexer.Number || !statementEnd(r.text, r.toks, limit+2) {
		return i, false
	}
	open := "AND("
	if !where {
		open = "WHERE("
	}
	if int(r.toks[i+2].Start)-int(r.toks[i].Start) < len(open) {
		return i, false
	}
	r.span(i, i+1)
	r.put(int(r.toks[i].Start), open)
	for j := i + 2; j < limit; j++ {
		if w := r.word(j); w == "ASC" || w == "DESC" {
			r.span(j, j)
		}
	}
	r.span(limit, limit+1)
	r.put(int(r.toks[limit].Start), ")")
	return limit + 1, true
}
