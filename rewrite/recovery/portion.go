package recovery

import "github.com/sqlfork/sqlfork-proxy/rewrite/lexer"

// FOR PORTION OF. MariaDB's DELETE and UPDATE of a table with an
// application-time period take FOR PORTION OF period FROM start TO end
// right after the table: the statement then changes the rows' part in
// that time only. The parser does not know it; when start and end are
// literals (no name, no subquery), the clause is blanked: the statement
// names the same table in the same place, and its rows are a superset of
// the ones it changes.

// forPortion: FOR PORTION OF p FROM literal TO literal in a DELETE or an
// UPDATE.
func (r *recovery) forPortion(i int) (int, bool) {
	if r.word(i) != "FOR" || r.word(i+1) != "PORTION" || r.word(i+2) != "OF" || !r.nameAt(i+3) || r.word(i+4) != "FROM" ||
		!r.portionTarget(i-1) {
		return i, false
	}
	to := r.literalAt(i + 5)
	if to == 0 || r.word(to) != "TO" {
		return i, false
	}
	end := r.literalAt(to + 1)
	if end == 0 {
		return i, false
	}
	r.span(i, end-1)
	return end - 1, true
}

// portionTarget reports whether toks[last] ends the one table of a
// DELETE [LOW_PRIORITY] [QUICK] [IGNORE] FROM t or an UPDATE
// [LOW_PRIORITY] [IGNORE] t (t or db.t), the only place MariaDB takes FOR
// PORTION OF.
func (r *recovery) portionTarget(last int) bool {
	if last < 0 || !r.nameAt(last) {
		return false
	}
	k := last - 1
	if r.punct(k, '.') {
		if k < 1 || r.toks[k-1].Kind != lexer.Ident && r.toks[k-1].Kind != lexer.Quoted {
			return false
		}
		k -= 2
	}
	switch r.word(r.first) {
	case "DELETE":
		if r.word(k) != "FROM" {
			return false
		}
		k--
	case "UPDATE":
	default:
		return false
	}
	for ; k > r.first; k-- {
		if w := r.word(k); w != "LOW_PRIORITY" && w != "QUICK" && w != "IGNORE" {
			return false
		}
	}
	return k == r.first
}

// literalAt is the index after the literal at toks[i] — a string, a
// number, or DATE, TIME or TIMESTAMP and a string — or 0 when none is
// there.
func (r *recovery) literalAt(i int) int {
	if i >= len(r.toks) {
		return 0
	}
	switch t := r.toks[i]; {
	case t.Kind == lexer.String || t.Kind == lexer.Number:
		return i + 1
	case (r.word(i) == "DATE" || r.word(i) == "TIME" || r.word(i) == "TIMESTAMP") && i+1 < len(r.toks) &&
		r.toks[i+1].Kind == lexer.String:
		return i + 2
	}
	return 0
}
