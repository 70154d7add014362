package rewrite

import "testing"

// TestQualifierOfTwoTables: a column qualifier spelled like two tables of
// the statement (in two databases) stays as written when both keep their
// names where they map, as the server resolves it by query block; it is
// refused only when a table's name changes.
func TestQualifierOfTwoTables(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	keep := mapResolver{{DB: "app", Name: "t"}: {DB: "sb_app", Name: "t"}, {DB: "other", Name: "t"}: {DB: "sb_other", Name: "t"}}
	wantRewrites(t, e, opts, keep, []rewriteCase{
		{"SELECT t.id FROM t WHERE t.id IN (SELECT other.t.id FROM other.t)",
			"SELECT t.id FROM `sb_app`.`t` WHERE t.id IN (SELECT `sb_other`.`t`.id FROM `sb_other`.`t`)"},
		{"SELECT t.id, anon.id FROM t JOIN (SELECT t1.id FROM t AS t1 JOIN other.t ON t1.id = t.id) AS anon ON anon.id = t.id",
			"SELECT t.id, anon.id FROM `sb_app`.`t` JOIN (SELECT t1.id FROM `sb_app`.`t` AS t1 JOIN `sb_other`.`t` ON t1.id = t.id) AS anon ON anon.id = t.id"},
	})
	renamed := mapResolver{{DB: "app", Name: "t"}: {DB: "sb_app", Name: "t_1"}, {DB: "other", Name: "t"}: {DB: "sb_other", Name: "t"}}
	wantRefused(t, e, opts, renamed, "SELECT t.id FROM t WHERE t.id IN (SELECT t.id FROM other.t)")
}
