package grants

import (
	"slices"
)

// What an account may do to a table, read from its SHOW GRANTS lines (the
// account's, its current role's, PUBLIC's): the question PROMOTE asks of
// the promoting user's own account before the promote account carries out
// anything. The answer errs on the side of "no": where the server would
// pick one of several schema patterns matching a database (the first in
// its order), the privilege must be in all of them.

// Set is the grants of one account, as SHOW GRANTS lists them.
type Set struct {
	grants []*parsedGrant
	// caseSensitive: database and table names of different case are
	// different (lower_case_table_names=0).
	caseSensitive bool
}

// NewSet reads SHOW GRANTS lines; lines it cannot read grant nothing.
func NewSet(lines []string, caseSensitive bool) Set {
	gs := Set{caseSensitive: caseSensitive}
	for _, l := range lines {
		if g := parseGrant(l); g != nil && g.unparsable == "" && g.roles == nil && (g.kind == "" || g.kind == "PROCEDURE" || g.kind == "FUNCTION") {
			gs.grants = append(gs.grants, g)
		}
	}
	return gs
}

// AllowsRoutine reports whether the account may EXECUTE the stored
// routine db.name of kind PROCEDURE or FUNCTION: granted on it, on its
// schema or on every schema.
func (gs Set) AllowsRoutine(kind, db, name string) bool {
	var schema []*parsedGrant
	for _, g := range gs.grants {
		switch {
		case g.kind == kind:
			if gs.same(g.db, db) && sameColumn(g.table, name) && holds(g, "EXECUTE", nil) {
				return true // routine names are not case-sensitive
			}
		case g.kind != "":
		case g.db == "*":
			if holds(g, "EXECUTE", nil) {
				return true
			}
		case g.table == "*" && gs.matchDB(g.db, db):
			schema = append(schema, g)
		}
	}
	return gs.schemaHolds(schema, "EXECUTE")
}

// holds reports whether p lists priv (or ALL PRIVILEGES) for the whole of
// its target, or, with cols, for each of cols.
func holds(g *parsedGrant, priv string, cols []string) bool {
	var colsHeld []string
	for _, p := range g.privs {
		switch {
		case p.name != priv && p.name != "ALL PRIVILEGES" && p.name != "ALL":
		case len(p.columns) == 0:
			return true
		default:
			colsHeld = append(colsHeld, p.columns...)
		}
	}
	if len(cols) == 0 || len(colsHeld) == 0 {
		return false
	}
	for _, c := range cols {
		if !slices.ContainsFunc(colsHeld, func(h string) bool { return sameColumn(h, c) }) {
			return false
		}
	}
	return true
}

// Allows reports whether the account may use priv on table db.table (and,
// for SELECT, INSERT, UPDATE and REFERENCES, on each of cols: a column
// grant covers only its columns; nil cols asks for the table as a whole).
func (gs Set) Allows(priv, db, table string, cols []string) bool {
	var schema, colGrants []*parsedGrant
	for _, g := range gs.grants {
		switch {
		case g.kind != "": // a routine's
		case g.db == "*":
			if holds(g, priv, nil) {
				return true
			}
		case g.table == "*":
			if gs.matchDB(g.db, db) {
				schema = append(schema, g)
			}
		case gs.same(g.db, db) && gs.same(g.table, table):
			if holds(g, priv, nil) {
				return true
			}
			colGrants = append(colGrants, g)
		}
	}
	if gs.schemaHolds(schema, priv) {
		return true
	}
	if len(cols) == 0 {
		return false
	}
	for _, c := range cols {
		if !slices.ContainsFunc(colGrants, func(g *parsedGrant) bool { return holds(g, priv, []string{c}) }) {
			return false
		}
	}
	return true
}

// schemaHolds reports whether the schema grants matching a database give
// priv. For each grantee (the account, a role, PUBLIC, whose privileges
// add up) the server takes one of its grants matching the database: one
// naming it without wildcards, which sorts first, else one of the
// patterns, unknown which here, so every one must hold priv.
func (gs Set) schemaHolds(matching []*parsedGrant, priv string) bool {
	byGrantee := map[string][]*parsedGrant{}
	for _, g := range matching {
		byGrantee[g.to.String()] = append(byGrantee[g.to.String()], g)
	}
	for _, gg := range byGrantee {
		if i := slices.IndexFunc(gg, func(g *parsedGrant) bool { return !hasWildcard(g.db) }); i >= 0 {
			gg = gg[i : i+1]
		}
		if !slices.ContainsFunc(gg, func(g *parsedGrant) bool { return !holds(g, priv, nil) }) {
			return true
		}
	}
	return false
}

// same compares two database or table names as the server compares them,
// or errs towards "different": without lower_case_table_names=0, letters
// of another case are the same, and so are non-ASCII names only when
// their bytes are (Go's case folding is not the server's).
func (gs Set) same(a, b string) bool {
	if gs.caseSensitive {
		return a == b
	}
	return asciiLower(a) == asciiLower(b)
}

// sameColumn compares column (and routine) names as the server does,
// case-insensitively, or errs towards "different" beyond ASCII.
func sameColumn(a, b string) bool { return asciiLower(a) == asciiLower(b) }

// asciiLower is s with its ASCII letters in lower case.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// matchDB reports whether the schema pattern pat of a schema-level grant
// (LIKE: % any run, _ any character, \ escapes the next) matches db.
func (gs Set) matchDB(pat, db string) bool {
	if !gs.caseSensitive {
		pat, db = asciiLower(pat), asciiLower(db)
	}
	return likeMatch([]byte(pat), []byte(db))
}

// hasWildcard reports an unescaped % or _ in a schema pattern.
func hasWildcard(pat string) bool {
	for i := 0; i < len(pat); i++ {
		switch pat[i] {
		case '\\':
			i++
		case '%', '_':
			return true
		}
	}
	return false
}

// likeMatch is LIKE with backslash escapes as the server matches a
// grant's schema pattern: _ is one byte (it matches no character of
// several bytes), names compare bytes.
func likeMatch(pat, s []byte) bool {
	for len(pat) > 0 {
		switch c := pat[0]; {
		case c == '%':
			for i := 0; i <= len(s); i++ {
				if likeMatch(pat[1:], s[i:]) {
					return true
				}
			}
			return false
		case len(s) == 0:
			return false
		case c == '_':
		case c == '\\' && len(pat) > 1:
			pat = pat[1:]
			if pat[0] != s[0] {
				return false
			}
		case c != s[0]:
			return false
		}
		pat, s = pat[1:], s[1:]
	}
	return len(s) == 0
}
