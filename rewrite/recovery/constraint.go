package recovery

import "github.com/sqlfork/sqlfork-proxy/rewrite/lexer"

// A column's named reference. MariaDB's column definition takes
// CONSTRAINT name REFERENCES t2 (c) after the column's type, as a
// FOREIGN KEY of that column named so; the parser takes the column's
// REFERENCES without CONSTRAINT name only. CONSTRAINT name is blanked: a
// constraint's name is no table's, and REFERENCES t2 stays where it is,
// read as the parser reads a column's REFERENCES (t2 is then a table
// the statement references, located and rewritten as a FOREIGN KEY's).

// columnConstraint: CONSTRAINT name REFERENCES in a CREATE or ALTER TABLE,
// after a column's type or attribute (not after ',' or '(', where a
// table's constraint starts).
func (r *recovery) columnConstraint(i int) (int, bool) {
	if !r.tableDDL || r.word(i) != "CONSTRAINT" || !r.nameAt(i+1) || r.word(i+2) != "REFERENCES" || i == 0 ||
		r.toks[i-1].Kind == lexer.Punct && !r.punct(i-1, ')') {
		return i, false
	}
	r.span(i, i+1)
	return i + 1, true
}
