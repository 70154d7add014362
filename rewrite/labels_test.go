package rewrite

import "testing"

// TestMovedNameLabels: an expression whose name a mask moved (MAX  (a),
// JSON_ARRAYAGG(…) read as GROUP_CONCAT) keeps the label the server gives
// it, its text as the client wrote it, when a rename inside it makes the
// engine name the column.
func TestMovedNameLabels(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	r := mapResolver{Table{DB: "app", Name: "t"}: Table{DB: "sb_app", Name: "s1_t"}, Table{DB: "app", Name: "t2"}: Table{DB: "sb_app", Name: "t2"}}
	wantRewrites(t, e, opts, r, []rewriteCase{
		{"CREATE TABLE t2 AS SELECT MAX  (t.a), JSON_ARRAYAGG(t.a) FROM t",
			"CREATE TABLE `sb_app`.`t2` AS SELECT MAX  (`s1_t`.a) AS `MAX  (t.a)`, JSON_ARRAYAGG(`s1_t`.a) AS `JSON_ARRAYAGG(t.a)` FROM `sb_app`.`s1_t`"},
	})
}
