package rewrite

import "testing"

// TestServerNames reads words the parser reserves and MariaDB does not
// (ROW, RANK, OF, …) as the columns' names they are there, the tables
// rewritten around them; where such a word names a table, the text stays
// refused.
func TestServerNames(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	r := mapResolver{{DB: "app", Name: "t"}: {DB: "sb_app", Name: "t"}, {DB: "app", Name: "row"}: {DB: "sb_app", Name: "row"}}
	wantRewrites(t, e, opts, r, []rewriteCase{
		{"INSERT INTO t (id, row) VALUES (1, 2)", "INSERT INTO `sb_app`.`t` (id, row) VALUES (1, 2)"},
		{"UPDATE t SET row = 3 WHERE rank > 2", "UPDATE `sb_app`.`t` SET row = 3 WHERE rank > 2"},
		{"SELECT row, of FROM t GROUP BY row ORDER BY row DESC", "SELECT row, of FROM `sb_app`.`t` GROUP BY row ORDER BY row DESC"},
		{"SELECT sum(row) FROM t WHERE option IN (1, 2) AND window = 1", "SELECT sum(row) FROM `sb_app`.`t` WHERE option IN (1, 2) AND window = 1"},
		{"SELECT zq0, row FROM t", "SELECT zq0, row FROM `sb_app`.`t`"},
		{"SELECT t.row FROM t", "SELECT t.row FROM `sb_app`.`t`"},
	})
	wantRefused(t, e, opts, r,
		"SELECT * FROM row",
		"SELECT 1 FROM t, row",
		"SELECT row.id, row FROM row",
		"WITH a AS (SELECT 1), row AS (SELECT * FROM t) SELECT * FROM a, row",
	)
}
