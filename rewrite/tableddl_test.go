package rewrite

import "testing"

// TestAlterTableForms reads ALTER TABLE IF EXISTS, RENAME KEY | COLUMN IF
// EXISTS, WITH | WITHOUT SYSTEM VERSIONING and a column's CONSTRAINT name
// REFERENCES, with every table rewritten (the table a column references
// too).
func TestAlterTableForms(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	r := sandboxApp()
	wantRewrites(t, e, opts, r, []rewriteCase{
		{"alter table if exists t rename t2", "alter table if exists `sb_app`.`t` rename `sb_app`.`t2`"},
		{"ALTER TABLE IF EXISTS app.t RENAME TO t2", "ALTER TABLE IF EXISTS `sb_app`.`t` RENAME TO `sb_app`.`t2`"},
		{"alter table t rename key if exists d to e", "alter table `sb_app`.`t` rename key if exists d to e"},
		{"ALTER TABLE t RENAME COLUMN IF EXISTS a TO m", "ALTER TABLE `sb_app`.`t` RENAME COLUMN IF EXISTS a TO m"},
		{"CREATE TABLE t (a INT WITHOUT SYSTEM VERSIONING) WITH SYSTEM VERSIONING AS SELECT a FROM t2",
			"CREATE TABLE `sb_app`.`t` (a INT WITHOUT SYSTEM VERSIONING) WITH SYSTEM VERSIONING AS SELECT a FROM `sb_app`.`t2`"},
		{"CREATE TABLE t ENGINE=MyISAM WITH SYSTEM VERSIONING AS SELECT 0", "CREATE TABLE `sb_app`.`t` ENGINE=MyISAM WITH SYSTEM VERSIONING AS SELECT 0"},
		{"create table t (a int not null references t2, b int not null constraint t2_c references t2 (c))",
			"create table `sb_app`.`t` (a int not null references `sb_app`.`t2`, b int not null constraint t2_c references `sb_app`.`t2` (c))"},
	})
	if st := e.Analyze("create table t (b int constraint c references t2 (c))", opts).Statements[0]; len(st.References) != 1 ||
		st.References[0] != (Table{DB: "app", Name: "t2"}) {
		t.Errorf("a column's CONSTRAINT c REFERENCES t2 references %v", st.References)
	}
	wantRefused(t, e, opts, r,
		"CREATE TABLE t (LIKE t2) WITH SYSTEM VERSIONING",
		"ALTER TABLE t RENAME KEY IF EXISTS (SELECT 1) TO e",
		"ALTER TABLE t ALTER COLUMN k SET DEFAULT (SELECT 1 FROM t2 LIMIT 1)",
	)
}
