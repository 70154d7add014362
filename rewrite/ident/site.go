package ident

import (
	"github.com/sqlfork/sqlfork-proxy/rewrite/collect"
	"github.com/sqlfork/sqlfork-proxy/sqlname"
)

// Site is one place in the text to splice a physical name into.
type Site struct {
	Start, End int
	Kind       collect.RefKind
	Table      sqlname.Table // logical table (DB filled from the current database when unqualified)
	Qualified  bool          // written with its database
	Write      bool
	Aliased    bool // a table reference given an alias where it is named
	Stmt       int  // index of the statement holding it
	// AliasAt, when not 0, is where the statement would take an alias
	// that keeps the table's name as written (HANDLER t OPEN names the
	// handler t): a physical table of another name gets it there.
	AliasAt int
}

// SortSites orders sites by position (insertion sort: lists are short).
func SortSites(s []Site) []Site {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j].Start < s[j-1].Start; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}
