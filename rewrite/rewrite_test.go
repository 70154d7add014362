package rewrite

import (
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

// TestNamedColumns: a view or a table made from a query names its columns
// as the server would have from the client's text: an expression the
// rewrite changes, and a column of information_schema read through the
// sandbox's views of it, keep their written text as an alias.
func TestNamedColumns(t *testing.T) {
	e := NewEngine(0)
	r := mapResolver{{DB: "information_schema", Name: "tables"}: {DB: "sb", Name: "TABLES"}, {DB: "app", Name: "t"}: {DB: "sb_app", Name: "t"}}
	wantRewrites(t, e, Options{DB: "app", Server: maria1011}, r, []rewriteCase{
		{"create table t4 AS select table_name from information_schema.TABLES where table_schema = database()",
			"create table t4 AS select table_name AS `table_name` from `sb`.`TABLES` where table_schema = database()"},
		{"CREATE TABLE t4 SELECT i.`table_name`, information_schema.tables.Table_Schema, table_rows x, table_rows + 1 FROM information_schema.tables i",
			"CREATE TABLE t4 SELECT i.`table_name` AS `table_name`, `sb`.`TABLES`.Table_Schema AS `Table_Schema`, " +
				"table_rows x, table_rows + 1 FROM `sb`.`TABLES` i"},
		{"CREATE VIEW v AS SELECT table_name FROM information_schema.TABLES",
			"CREATE VIEW v AS SELECT table_name AS `table_name` FROM `sb`.`TABLES`"},
		// Columns of tables are named as written anyway; a view's would
		// not be: a query that reads another table is left as it is.
		{"CREATE TABLE t5 AS SELECT table_name FROM information_schema.TABLES JOIN t", "CREATE TABLE t5 AS SELECT table_name FROM `sb`.`TABLES` JOIN `sb_app`.`t`"},
		// information_schema views the sandbox does not mirror name their
		// columns as written themselves.
		{"CREATE TABLE t6 AS SELECT collation_name FROM information_schema.COLLATIONS", "CREATE TABLE t6 AS SELECT collation_name FROM information_schema.COLLATIONS"},
		// Names matter only where a table or view is made.
		{"INSERT INTO t SELECT table_name FROM information_schema.TABLES", "INSERT INTO `sb_app`.`t` SELECT table_name FROM `sb`.`TABLES`"},
		{"SELECT table_name FROM information_schema.TABLES", "SELECT table_name FROM `sb`.`TABLES`"},
		// A column of a table is named by its name, not by the text of
		// its qualified reference.
		{"CREATE TABLE t7 AS SELECT t.a, `app`.t.b FROM t", "CREATE TABLE t7 AS SELECT t.a, `sb_app`.`t`.b AS `b` FROM `sb_app`.`t`"},
		// An expression the rewrite changes keeps its text.
		{"CREATE VIEW v AS SELECT (SELECT MAX(a) FROM t)", "CREATE VIEW v AS SELECT (SELECT MAX(a) FROM `sb_app`.`t`) AS `(SELECT MAX(a) FROM t)`"},
	})
}

// TestColumnName: the column a column reference's text names.
func TestColumnName(t *testing.T) {
	for _, c := range []struct {
		text, want string
		ansi, ok   bool
	}{
		{text: "table_name", want: "table_name", ok: true},
		{text: "`Table``Name`", want: "Table`Name", ok: true},
		{text: "db . t . `c`", want: "c", ok: true},
		{text: `t."c"`, want: "c", ansi: true, ok: true},
		{text: `t."c"`},
		{text: "a + 1"},
		{text: "t."},
		{text: "ä"},
		{text: ""},
	} {
		got, ok := lexer.ColumnName(c.text, c.ansi)
		if got != c.want || ok != c.ok {
			t.Errorf("columnName(%q) = %q, %v; want %q, %v", c.text, got, ok, c.want, c.ok)
		}
	}
}
