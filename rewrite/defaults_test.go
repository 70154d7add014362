package rewrite

import "testing"

// TestValuesAndDefaults reads IGNORE where a value stands, a column's
// DEFAULT (expr) holding a variable, a '?' or a subquery, and a column's
// DEFAULT of a variable alone: the tables are rewritten around them, a
// subquery's in the DEFAULT included; an assignment's value, which may
// name a table, is not read.
func TestValuesAndDefaults(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	r := mapResolver{{DB: "app", Name: "t"}: {DB: "sb_app", Name: "t"}, {DB: "app", Name: "u"}: {DB: "sb_app", Name: "u"}}
	wantRewrites(t, e, opts, r, []rewriteCase{
		{"INSERT INTO t VALUES (1, IGNORE), (IGNORE, 2)", "INSERT INTO `sb_app`.`t` VALUES (1, IGNORE), (IGNORE, 2)"},
		{"UPDATE t, u SET t.b = IGNORE, u.b = 1 WHERE t.a = u.a", "UPDATE `sb_app`.`t`, `sb_app`.`u` SET t.b = IGNORE, u.b = 1 WHERE t.a = u.a"},
		{"INSERT INTO t SELECT a FROM u ON DUPLICATE KEY UPDATE a=IGNORE",
			"INSERT INTO `sb_app`.`t` SELECT a FROM `sb_app`.`u` ON DUPLICATE KEY UPDATE a=IGNORE"},
		{"CREATE TABLE t (a INT DEFAULT ((SELECT 1 FROM u)), b INT DEFAULT(@v := 1))",
			"CREATE TABLE `sb_app`.`t` (a INT DEFAULT ((SELECT 1 FROM `sb_app`.`u`)), b INT DEFAULT(@v := 1))"},
		{"ALTER TABLE t ADD c INT DEFAULT (? + ?)", "ALTER TABLE `sb_app`.`t` ADD c INT DEFAULT (? + ?)"},
		{"CREATE TABLE t (a INT DEFAULT @v, b TEXT DEFAULT @@sql_mode, c INT DEFAULT ?)",
			"CREATE TABLE `sb_app`.`t` (a INT DEFAULT @v, b TEXT DEFAULT @@sql_mode, c INT DEFAULT ?)"},
		{"ALTER TABLE t ALTER COLUMN a SET DEFAULT @v", "ALTER TABLE `sb_app`.`t` ALTER COLUMN a SET DEFAULT @v"},
	})
	a := e.Analyze("INSERT INTO t (id, b) VALUES (1, IGNORE)", opts)
	if b := a.Statements[0].Bounds; b == nil || len(b.Rows) != 1 || b.Rows[0]["id"] != "1" || b.Rows[0]["b"] != "" {
		t.Errorf("INSERT … IGNORE: Bounds %+v, want id 1 and b no literal", b)
	}
	wantRefused(t, e, opts, r,
		"ALTER TABLE t ALTER a SET DEFAULT (SELECT 1 FROM u)",
		"CREATE TABLE t (a INT DEFAULT @v := (SELECT 1 FROM u))",
	)
}
