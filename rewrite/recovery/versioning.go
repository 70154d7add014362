package recovery

// System versioning. MariaDB's CREATE and ALTER TABLE take WITH SYSTEM
// VERSIONING as a table option (before AS SELECT too) and WITH | WITHOUT
// SYSTEM VERSIONING as a column's attribute; the parser takes neither.
// They are blanked: three words that name nothing, the statement's names
// stay where they are. WITH SYSTEM VERSIONING is no common table
// expression (WITH name AS ( or WITH name (columns)). MariaDB rejects it
// after CREATE TABLE … LIKE t, so it is not blanked there.

// systemVersioning: [WITH | WITHOUT] SYSTEM VERSIONING in a CREATE or
// ALTER TABLE.
func (r *recovery) systemVersioning(i int) (int, bool) {
	if !r.tableDDL || r.word(i) != "WITH" && r.word(i) != "WITHOUT" || r.word(i+1) != "SYSTEM" || r.word(i+2) != "VERSIONING" {
		return i, false
	}
	for j := r.first; j < i; j++ {
		if r.word(j) == "LIKE" && (r.punct(j-1, '(') || r.word(j-2) == "TABLE" || r.word(j-2) == "EXISTS" || r.punct(j-2, '.')) {
			return i, false
		}
	}
	r.span(i, i+2)
	return i + 2, true
}
