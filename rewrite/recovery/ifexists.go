package recovery

import "github.com/sqlfork/sqlfork-proxy/rewrite/lexer"

// IF EXISTS in ALTER TABLE. MariaDB takes ALTER [ONLINE] [IGNORE] TABLE IF
// EXISTS t … (nothing is done when t is missing) and IF EXISTS after the
// words that name a column, an index, a constraint or a partition of the
// table (RENAME KEY IF EXISTS a TO b, RENAME COLUMN IF EXISTS a TO b,
// CHANGE COLUMN IF EXISTS a b INT); the parser takes neither. IF EXISTS
// is blanked: the statement then names the same table, and the same
// columns and indexes of it, in the same places.

// ifExistsAfter are the words of an ALTER TABLE after which IF EXISTS
// stands before the name of a column, an index, a constraint or a
// partition (never of a table).
var ifExistsAfter = map[string]bool{"KEY": true, "INDEX": true, "COLUMN": true, "CONSTRAINT": true, "PARTITION": true,
	"CHANGE": true, "MODIFY": true}

// alterIfExists blanks the IF EXISTS of ALTER [ONLINE] [IGNORE] TABLE IF
// EXISTS t at toks[i], the statement's first token, when a name (db.t
// too) follows.
func (r *recovery) alterIfExists(i int) {
	if r.word(i) != "ALTER" {
		return
	}
	j := i + 1
	for r.word(j) == "ONLINE" || r.word(j) == "IGNORE" {
		j++
	}
	if r.word(j) == "TABLE" && r.word(j+1) == "IF" && r.word(j+2) == "EXISTS" && j+3 < len(r.toks) &&
		(r.toks[j+3].Kind == lexer.Ident || r.toks[j+3].Kind == lexer.Quoted) {
		r.span(j+1, j+2)
	}
}

// renameIfExists: IF EXISTS after one of ifExistsAfter in an ALTER TABLE,
// before a name that is no call nor qualified.
func (r *recovery) renameIfExists(i int) (int, bool) {
	if !r.tableDDL || r.word(r.first) != "ALTER" || r.word(i) != "IF" || r.word(i+1) != "EXISTS" ||
		!ifExistsAfter[r.word(i-1)] || !r.nameAt(i+2) {
		return i, false
	}
	r.span(i, i+1)
	return i + 1, true
}

// nameAt reports whether toks[i] is a name, bare or quoted, that is no
// call and no qualifier (no '(' nor '.' after it).
func (r *recovery) nameAt(i int) bool {
	return i < len(r.toks) && (r.toks[i].Kind == lexer.Ident || r.toks[i].Kind == lexer.Quoted) && !r.punct(i+1, '(') &&
		!r.punct(i+1, '.')
}

// renameTableIfExists blanks the IF EXISTS of RENAME TABLE[S] IF EXISTS a
// TO b, … at toks[i], the statement's first token (MariaDB skips the pairs
// whose table is missing): the statement names the same tables in the
// same places.
func (r *recovery) renameTableIfExists(i int) {
	if r.word(i) == "RENAME" && (r.word(i+1) == "TABLE" || r.word(i+1) == "TABLES") && r.word(i+2) == "IF" &&
		r.word(i+3) == "EXISTS" && i+4 < len(r.toks) && (r.toks[i+4].Kind == lexer.Ident || r.toks[i+4].Kind == lexer.Quoted) {
		r.span(i+2, i+3)
	}
}
