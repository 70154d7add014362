package rewrite

import "testing"

// TestFullTextSearch reads MariaDB's MATCH … AGAINST where the parser does
// not take it (columns without parentheses, an operand of a comparison or
// of arithmetic): the tables are rewritten around it, and the qualifiers of
// its columns and the names of its searched expression are read where
// they stand.
func TestFullTextSearch(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	r := mapResolver{{DB: "app", Name: "t"}: {DB: "sb_app", Name: "t"}, {DB: "app", Name: "u"}: {DB: "sb_app", Name: "u"}}
	wantRewrites(t, e, opts, r, []rewriteCase{
		{"SELECT * FROM t WHERE MATCH a, b AGAINST ('x' IN BOOLEAN MODE)",
			"SELECT * FROM `sb_app`.`t` WHERE MATCH a, b AGAINST ('x' IN BOOLEAN MODE)"},
		{"SELECT * FROM t WHERE 0 < MATCH (a, b) AGAINST ('x')", "SELECT * FROM `sb_app`.`t` WHERE 0 < MATCH (a, b) AGAINST ('x')"},
		{"DELETE FROM t WHERE MATCH(a) AGAINST ('x' WITH QUERY EXPANSION) > 0",
			"DELETE FROM `sb_app`.`t` WHERE MATCH(a) AGAINST ('x' WITH QUERY EXPANSION) > 0"},
		{"SELECT round(MATCH t.a AGAINST ('x'), 6) FROM t", "SELECT round(MATCH t.a AGAINST ('x'), 6) FROM `sb_app`.`t`"},
		{"SELECT MATCH app.t.a AGAINST ((SELECT b FROM u LIMIT 1)) + 0 FROM app.t",
			"SELECT MATCH `sb_app`.`t`.a AGAINST ((SELECT b FROM `sb_app`.`u` LIMIT 1)) + 0 FROM `sb_app`.`t`"},
	})
	wantRefused(t, e, opts, r,
		"SELECT * FROM t WHERE MATCH\na AGAINST ('x') > 0",
		"SELECT * FROM t WHERE MATCH a, f(b) AGAINST ('x') > 0",
	)
}
