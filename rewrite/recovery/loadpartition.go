package recovery

import "github.com/sqlfork/sqlfork-proxy/rewrite/lexer"

// LOAD DATA … INTO TABLE t PARTITION (p, …): the partitions the rows may
// go to, which the parser does not take there; blanked (partitions are
// the table's own, no table).

// loadPartition: PARTITION (names) right after a LOAD's INTO TABLE t.
func (r *recovery) loadPartition(i int) (int, bool) {
	if r.word(i) != "PARTITION" || r.word(r.first) != "LOAD" || !r.punct(i+1, '(') ||
		!(r.word(i-2) == "TABLE" || r.punct(i-2, '.') && r.word(i-4) == "TABLE") {
		return i, false
	}
	end := lexer.Closing(r.text, r.toks, i+1)
	if end <= 0 {
		return i, false
	}
	for j := i + 2; j < end; j++ {
		if t := r.toks[j]; t.Kind != lexer.Ident && t.Kind != lexer.Quoted && !r.punct(j, ',') {
			return i, false
		}
	}
	r.span(i, end)
	return end, true
}
