package rewrite

import "testing"

// TestQueryForms reads CYCLE … RESTRICT, FETCH FIRST ROW WITH TIES,
// MariaDB's LAST_VALUE(…), FOR PORTION OF and CHECK | REPAIR VIEW with
// every table rewritten.
func TestQueryForms(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	r := sandboxApp()
	wantRewrites(t, e, opts, r, []rewriteCase{
		{"WITH RECURSIVE cte (d, f, g) AS (SELECT 0, 1, 1 UNION SELECT d + 1, t.a, t.b FROM t, cte WHERE t.a = cte.g) CYCLE f, g RESTRICT SELECT * FROM cte",
			"WITH RECURSIVE cte (d, f, g) AS (SELECT 0, 1, 1 UNION SELECT d + 1, t.a, t.b FROM `sb_app`.`t`, cte WHERE t.a = cte.g) CYCLE f, g RESTRICT SELECT * FROM cte"},
		{"select * from t order by a fetch first row with ties", "select * from `sb_app`.`t` order by a fetch first row with ties"},
		{"select * from t order by a offset 2 rows fetch next rows with ties", "select * from `sb_app`.`t` order by a offset 2 rows fetch next rows with ties"},
		{"SELECT NULLIF(LAST_VALUE(@a:=@a+1, a), 0) FROM t", "SELECT NULLIF(LAST_VALUE(@a:=@a+1, a), 0) FROM `sb_app`.`t`"},
		{"UPDATE t SET c = LAST_VALUE(@x:=a, (SELECT MAX(b) FROM t2)) WHERE c = 0",
			"UPDATE `sb_app`.`t` SET c = LAST_VALUE(@x:=a, (SELECT MAX(b) FROM `sb_app`.`t2`)) WHERE c = 0"},
		{"DELETE FROM t FOR PORTION OF p FROM '2000-01-01' TO DATE'2000-01-02' WHERE a = 1",
			"DELETE FROM `sb_app`.`t` FOR PORTION OF p FROM '2000-01-01' TO DATE'2000-01-02' WHERE a = 1"},
		{"UPDATE t FOR PORTION OF p FROM '2000-01-01' TO '2000-01-02' SET a = 1", "UPDATE `sb_app`.`t` FOR PORTION OF p FROM '2000-01-01' TO '2000-01-02' SET a = 1"},
		{"check view v1 for upgrade", "check view `sb_app`.`v1` for upgrade"},
		{"REPAIR VIEW v1, app.v2 FROM MYSQL", "REPAIR VIEW `sb_app`.`v1`, `sb_app`.`v2` FROM MYSQL"},
	})
	wantRefused(t, e, opts, r,
		"DELETE FROM t FOR PORTION OF p FROM (SELECT MIN(a) FROM t2) TO '2000-01-02'",
		"SELECT LAST_VALUE(a) OVER (ORDER BY b) FROM t ORDER BY a FETCH FIRST ROW WITH TIES x",
		"DELETE t FROM t FOR PORTION OF p FROM '2000-01-01' TO '2000-01-02'",
		"DELETE FROM t, t2 FOR PORTION OF p FROM '2000-01-01' TO '2000-01-02'",
		"SELECT * FROM t AS x, (SELECT 2 AS a) CYCLE a RESTRICT",
		"check view v1 quick",
		"repair view v1 for upgrade",
		"WITH RECURSIVE cte AS (SELECT 1 AS a) CYCLE t.a RESTRICT SELECT * FROM cte",
	)
}
