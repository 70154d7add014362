package review

import (
	"slices"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
)

// foreignKey scripts forker.ForeignKeys: the databases app and the
// sandbox's, and a key of child (in the sandbox's database) on parent.
func (f *fixture) foreignKey(child, col, parent, refCol string) {
	f.side.Exact("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA ORDER BY SCHEMA_NAME").
		Rows(testkit.Row("_sqlfork_meta"), testkit.Row(physDB), testkit.Row("_sqlfork_feedf00d_app"), testkit.Row("app"), testkit.Row("mysql"))
	f.side.Match(`^SELECT k\.TABLE_SCHEMA, .* UNION ALL .* ORDER BY 1, 2, 3, 10$`).
		Rows(testkit.Row(physDB, child, "fk_"+child, col, physDB, parent, refCol, "RESTRICT", "CASCADE", 1))
}

// createdForExport is created, its rows read with their literals (the
// key's, then the row's).
func createdForExport(f *fixture) {
	created(f)
	f.query("SELECT 'insert', ", "`_sqlfork_0badcafe_app`.`n` f",
		testkit.Row("insert", `{}`, nil, `{}`, nil, "1", "1", "NULL"), testkit.Row("insert", `{}`, nil, `{}`, nil, "2", "2", "4"))
}

// exportSandbox is a sandbox with a captured table (app.t), one it made
// referencing it (app.n), one altered (app.a), one without a key (app.r),
// one dropped (app.d), a view (app.v) and a sequence (app.s).
func exportSandbox(f *fixture) {
	f.entry("t", sandbox.KindFork)
	f.both("t", []forker.Column{tID, tName}, "id")
	f.capture("t", "rows", "", "id")
	f.query("SELECT CASE WHEN", "`c_t` c",
		testkit.Row("insert", `{"id": 4}`, nil, `{}`, nil, 0, 1, "4", "4", "'d'", "NULL", "NULL"),
		testkit.Row("update", `{"id": 1}`, `{}`, `{}`, `{}`, 1, 0, "1", "1", "'b'", "1", "'a'"),
		testkit.Row("update", `{"id": 5}`, `{}`, `{}`, nil, 0, 1, "5", "5", "'e'", "5", "'E'"),
		testkit.Row("delete", `{"id": 2}`, `{}`, nil, nil, 0, 0, "2", "NULL", "NULL", "2", "'x'"),
		testkit.Row("delete", `{"id": 3}`, `{}`, nil, nil, 0, 0, "3", "NULL", "NULL", "3", "'y'"))
	createdForExport(f)
	f.foreignKey("n", "p", "t", "id")
	altered(f)
	f.query("SELECT 'insert', ", "`app`.`a`", testkit.Row("update", `{}`, `{}`, `{}`, nil, "1", "1", "'x'", "5"))
	f.side.Prefix("SELECT IFNULL(CAST(f.`id` AS CHAR), 'NULL'), IF(f.`name` IS NULL, 'NULL', IF(HEX(f.`name`) REGEXP '"+plainHex+
		"', CONCAT('''', f.`name`, ''''), CONCAT('_utf8mb4 X''', HEX(f.`name`), ''''))), IFNULL(CAST(f.`v` AS CHAR), 'NULL') "+
		"FROM `_sqlfork_0badcafe_app`.`a` f LIMIT ").Rows(testkit.Row("1", "'x'", "5"), testkit.Row("7", "_utf8mb4 X'C3A9'", "NULL"))
	f.side.Prefix("SELECT IFNULL(CAST(r.`id` AS CHAR), 'NULL') FROM `app`.`a` r LEFT JOIN `_sqlfork_0badcafe_app`.`a` f ON f.`id` = r.`id` "+
		"WHERE f.`id` IS NULL LIMIT ").Rows(testkit.Row("8"), testkit.Row("9"))
	f.entry("r", sandbox.KindFork)
	f.both("r", []forker.Column{tV, tName})
	f.query("SELECT IF(d.`sqlfork_n` > 0", "`app`.`r`", testkit.Row("delete", `{}`, `{}`, nil, nil, 2, "1", "'a'"),
		testkit.Row("insert", `{}`, nil, `{}`, nil, 1, "NULL", "'b'"))
	f.entry("d", sandbox.KindDropped)
	f.shape(rewrite.Table{DB: "app", Name: "d"}, "BASE TABLE", []forker.Column{tID}, "id")
	f.entry("v", sandbox.KindCreated)
	f.shape(rewrite.Table{DB: physDB, Name: "v"}, "VIEW", []forker.Column{tID})
	f.side.Exact("SHOW CREATE VIEW `_sqlfork_0badcafe_app`.`v`").Rows(testkit.Row("v", viewDDL, "utf8mb4", "utf8mb4_general_ci"))
	f.entry("s", sandbox.KindFork)
	f.shape(rewrite.Table{DB: "app", Name: "s"}, "SEQUENCE", []forker.Column{tID})
	f.shape(rewrite.Table{DB: physDB, Name: "s"}, "SEQUENCE", []forker.Column{tID})
}

// TestExport: an export is its header, its notes, the DDL before the
// rows, the rows (inserts and updates parents first, deletes children
// first) and the DDL after them; foreign keys are read in production's
// databases and the sandbox's only.
func TestExport(t *testing.T) {
	f := newFixture(t)
	exportSandbox(f)
	f.side.Prefix("SELECT s.ROUTINE_TYPE, s.ROUTINE_SCHEMA, s.ROUTINE_NAME FROM information_schema.ROUTINES s ").
		Rows(testkit.Row("PROCEDURE", physDB, "p1"), testkit.Row("TRIGGER", physDB, "trg1"))
	f.side.Exact("SELECT COUNT(*) FROM information_schema.ROUTINES WHERE ROUTINE_TYPE = 'PROCEDURE' AND ROUTINE_SCHEMA = 'app' AND ROUTINE_NAME = 'p1'").
		Rows(testkit.Row(0))
	f.side.Exact("SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE EVENT_OBJECT_SCHEMA = 'app' AND TRIGGER_NAME = 'trg1'").Rows(testkit.Row(1))
	r, err := f.m.Export(f.ctx, f.sb)
	if err != nil {
		t.Fatal(err)
	}
	if got := cells(r); !slices.Equal(got, wantExport) || !slices.Equal(r.Columns, ExportColumns) {
		t.Errorf("export\n %s\nwant\n %s", strings.Join(got, "\n "), strings.Join(wantExport, "\n "))
	}
	fks := f.side.Matching(`^SELECT k\.TABLE_SCHEMA`)
	if len(fks) != 1 || strings.Count(fks[0], " UNION ALL ") != 1 || !strings.Contains(fks[0], "WHERE k.TABLE_SCHEMA = '_sqlfork_0badcafe_app' ") ||
		!strings.Contains(fks[0], "WHERE k.TABLE_SCHEMA = 'app' ") {
		t.Errorf("foreign keys read with %q", fks)
	}
	own := f.side.Matching(`^SELECT s\.ROUTINE_TYPE`)
	if want := "SELECT s.ROUTINE_TYPE, s.ROUTINE_SCHEMA, s.ROUTINE_NAME FROM information_schema.ROUTINES s WHERE s.ROUTINE_SCHEMA LIKE " +
		"'!_sqlfork!_0badcafe!_%' ESCAPE '!' UNION ALL SELECT 'TRIGGER', t.TRIGGER_SCHEMA, t.TRIGGER_NAME FROM information_schema.TRIGGERS t " +
		"WHERE t.EVENT_OBJECT_SCHEMA = '_sqlfork_0badcafe_app' AND t.TRIGGER_NAME NOT LIKE '!_sqlfork%' ESCAPE '!' ORDER BY 1, 2, 3"; len(own) != 1 || own[0] != want {
		t.Errorf("routines and triggers read with %q\nwant %q", own, want)
	}
	if !slices.Equal(f.obs.diffed, []string{"export"}) {
		t.Errorf("observer told %q", f.obs.diffed)
	}
	f.unscripted()
}

var wantExport = []string{
	"SET NAMES utf8mb4",
	"SET time_zone = '+00:00'",
	"SET sql_mode = 'NO_AUTO_VALUE_ON_ZERO,NO_ENGINE_SUBSTITUTION,ALLOW_INVALID_DATES'",
	"-- app.a was compared whole with production (changed by ALTER TABLE; rows are compared on the columns production has: a change only in " +
		"`v` (not in production) shows in no row, and OVERWRITE writes every row whole): rows production changed since the fork are put back",
	"-- app.t: 1 rows changed in production since the fork are overwritten (SANDBOX PROMOTE checks them)",
	"-- app.r has no key: its rows are written by value, and running this twice writes them twice",
	"-- sequence app.s was used in the sandbox: its next value is not exported",
	"-- not exported: stored routines and triggers the sandbox made (procedure `app`.`p1`), or replaced: run their CREATE statements on production yourself",
	"ALTER TABLE `app`.`a` ADD COLUMN IF NOT EXISTS `v` int(11) DEFAULT NULL AFTER `name`",
	createdExport,
	"INSERT INTO `app`.`a` (`id`, `name`, `v`) VALUES (1, 'x', 5), (7, _utf8mb4 X'C3A9', NULL) ON DUPLICATE KEY UPDATE `id` = VALUES(`id`), `name` = VALUES(`name`), `v` = VALUES(`v`)",
	"INSERT INTO `app`.`t` (`id`, `name`) VALUES (4, 'd') ON DUPLICATE KEY UPDATE `id` = VALUES(`id`), `name` = VALUES(`name`)",
	"INSERT INTO `app`.`n` (`id`, `p`) VALUES (1, NULL), (2, 4) ON DUPLICATE KEY UPDATE `id` = VALUES(`id`), `p` = VALUES(`p`)",
	"INSERT INTO `app`.`r` (`v`, `name`) VALUES (NULL, 'b')",
	// An update of a row production no longer has is an insert.
	"INSERT INTO `app`.`t` (`id`, `name`) VALUES (5, 'e') ON DUPLICATE KEY UPDATE `id` = VALUES(`id`), `name` = VALUES(`name`)",
	"UPDATE `app`.`t` SET `name` = 'b' WHERE `id` = 1",
	"DELETE FROM `app`.`r` WHERE `v` <=> 1 AND BINARY `name` <=> BINARY 'a' LIMIT 1",
	"DELETE FROM `app`.`r` WHERE `v` <=> 1 AND BINARY `name` <=> BINARY 'a' LIMIT 1",
	"DELETE FROM `app`.`t` WHERE `id` IN (3, 2)",
	"DELETE FROM `app`.`a` WHERE `id` IN (9, 8)",
	"ALTER TABLE `app`.`a` ADD KEY IF NOT EXISTS `iv` (`v`)",
	viewExport,
	"DROP TABLE IF EXISTS `app`.`d`",
}

// made puts app.name in the sandbox as a table it made, keyed by id, with
// definition ddl (of the sandbox's table) and rows (the key's literal, then
// the row's).
func (f *fixture) made(name string, cols []forker.Column, ddl string, rows ...[]string) {
	f.entry(name, sandbox.KindCreated)
	phys := rewrite.Table{DB: physDB, Name: name}
	f.shape(phys, "BASE TABLE", cols, "id")
	f.createTable(phys, ddl)
	var answer [][]*string
	for _, r := range rows {
		row := []*string{testkit.Row("insert")[0], testkit.Row("{}")[0], nil, testkit.Row("{}")[0], nil}
		for _, v := range r {
			row = append(row, testkit.Row(v)[0])
		}
		answer = append(answer, row)
	}
	f.query("SELECT 'insert', ", phys.Quoted()+" f", answer...)
}

// foreignKeys scripts forker.ForeignKeys with keys between the sandbox's
// tables: child, column, parent, referenced column.
func (f *fixture) foreignKeys(keys ...[4]string) {
	f.side.Exact("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA ORDER BY SCHEMA_NAME").Rows(testkit.Row(physDB), testkit.Row("app"))
	var rows [][]*string
	for _, k := range keys {
		rows = append(rows, testkit.Row(physDB, k[0], "fk_"+k[0]+"_"+k[1], k[1], physDB, k[2], k[3], "RESTRICT", "RESTRICT", 1))
	}
	f.side.Match(`^SELECT k\.TABLE_SCHEMA, `).Rows(rows...)
}

// rowStatements are an export's statements after its header and notes.
func rowStatements(r []string) []string {
	return slices.DeleteFunc(slices.Clone(r[len(exportHeader):]), func(s string) bool { return strings.HasPrefix(s, "-- ") })
}

// TestExportForeignKeyOrder: the rows of a table referencing itself are
// inserted parents first and deleted children first, one DELETE each; a
// cycle of keys between tables is cut, the key of the table written first
// inserted NULL and set once the other's rows are in.
func TestExportForeignKeyOrder(t *testing.T) {
	idParent := []forker.Column{tID, {Name: "parent", Type: "int(11)", DataType: "int"}}
	t.Run("tree", func(t *testing.T) {
		f := newFixture(t)
		f.entry("tree", sandbox.KindFork)
		f.both("tree", idParent, "id")
		f.capture("tree", "rows", "", "id")
		f.query("SELECT CASE WHEN", "`c_tree` c",
			testkit.Row("delete", `{}`, `{}`, nil, nil, 0, 0, "2", "NULL", "NULL", "2", "1"),
			testkit.Row("delete", `{}`, `{}`, nil, nil, 0, 0, "3", "NULL", "NULL", "3", "2"),
			testkit.Row("insert", `{}`, nil, `{}`, nil, 0, 1, "30", "30", "31", "NULL", "NULL"),
			testkit.Row("insert", `{}`, nil, `{}`, nil, 0, 1, "31", "31", "NULL", "NULL", "NULL"))
		f.foreignKeys([4]string{"tree", "parent", "tree", "id"})
		r, err := f.m.Export(f.ctx, f.sb)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"INSERT INTO `app`.`tree` (`id`, `parent`) VALUES (31, NULL), (30, 31) ON DUPLICATE KEY UPDATE `id` = VALUES(`id`), `parent` = VALUES(`parent`)",
			"DELETE FROM `app`.`tree` WHERE `id` = 3", "DELETE FROM `app`.`tree` WHERE `id` = 2"}
		if got := rowStatements(cells(r)); !slices.Equal(got, want) {
			t.Errorf("export\n %s\nwant\n %s", strings.Join(got, "\n "), strings.Join(want, "\n "))
		}
		f.unscripted()
	})
	t.Run("cycle", func(t *testing.T) {
		f := newFixture(t)
		for _, tc := range []struct {
			name, ref string
			rows      [][]*string
		}{
			{"a2", "b", [][]*string{testkit.Row("insert", `{}`, nil, `{}`, nil, 0, 1, "1", "1", "1", "NULL", "NULL")}},
			{"b2", "a", [][]*string{testkit.Row("insert", `{}`, nil, `{}`, nil, 0, 1, "1", "1", "1", "NULL", "NULL"),
				testkit.Row("insert", `{}`, nil, `{}`, nil, 0, 1, "2", "2", "NULL", "NULL", "NULL")}},
		} {
			f.entry(tc.name, sandbox.KindFork)
			f.both(tc.name, []forker.Column{tID, {Name: tc.ref, Type: "int(11)", DataType: "int"}}, "id")
			f.capture(tc.name, "rows", "", "id")
			f.query("SELECT CASE WHEN", "`c_"+tc.name+"` c", tc.rows...)
		}
		f.foreignKeys([4]string{"a2", "b", "b2", "id"}, [4]string{"b2", "a", "a2", "id"})
		r, err := f.m.Export(f.ctx, f.sb)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{
			"INSERT INTO `app`.`b2` (`id`, `a`) VALUES (1, NULL), (2, NULL) ON DUPLICATE KEY UPDATE `id` = VALUES(`id`), `a` = VALUES(`a`)",
			"INSERT INTO `app`.`a2` (`id`, `b`) VALUES (1, 1) ON DUPLICATE KEY UPDATE `id` = VALUES(`id`), `b` = VALUES(`b`)",
			"UPDATE `app`.`b2` SET `a` = 1 WHERE `id` = 1",
		}
		got := cells(r)
		if !slices.Equal(rowStatements(got), want) {
			t.Errorf("export\n %s\nwant\n %s", strings.Join(rowStatements(got), "\n "), strings.Join(want, "\n "))
		}
		if note := "-- app.a2 is in a cycle of foreign keys between tables: rows are inserted with the keys to tables written later NULL " +
			"and given them after; rows that reference each other cannot be deleted with the checks on (1451)"; !slices.Contains(got, note) {
			t.Errorf("no note %q in %q", note, got)
		}
		f.unscripted()
	})
}

// TestExportSkipsViews: a view that reads the server's own schemas or the
// proxy's databases is left out of an export, with a note naming what it
// reads as the sandbox's user knows it, and so is a view reading it.
func TestExportSkipsViews(t *testing.T) {
	for _, tc := range []struct {
		name, from string
		note       string
	}{
		{"a system schema", "`mysql`.`user`", "-- not exported: app.v1 reads mysql.user, which is never exported or promoted"},
		{"the sandbox's information_schema", "`_sqlfork_0badcafe`.`TABLES`",
			"-- not exported: app.v1 reads information_schema.TABLES, which is never exported or promoted"},
		{"another sandbox", "`_sqlfork_feedf00d_app`.`x`", "-- not exported: app.v1 reads a database of the proxy's, which is never exported or promoted"},
		{"the registry", "`_sqlfork_meta`.`sandboxes`", "-- not exported: app.v1 reads a database of the proxy's, which is never exported or promoted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			for name, from := range map[string]string{"v1": tc.from, "v2": "`_sqlfork_0badcafe_app`.`v1`"} {
				f.entry(name, sandbox.KindCreated)
				f.shape(rewrite.Table{DB: physDB, Name: name}, "VIEW", []forker.Column{tID})
				f.side.Exact("SHOW CREATE VIEW `_sqlfork_0badcafe_app`.`" + name + "`").Rows(testkit.Row(name,
					"CREATE ALGORITHM=UNDEFINED DEFINER=`root`@`localhost` SQL SECURITY DEFINER VIEW `_sqlfork_0badcafe_app`.`"+name+
						"` AS select `x`.`id` AS `id` from "+from+" `x`"))
			}
			r, err := f.m.Export(f.ctx, f.sb)
			if err != nil {
				t.Fatal(err)
			}
			want := append(slices.Clone(exportHeader), tc.note, "-- not exported: app.v2 reads app.v1, which is not exported")
			if got := cells(r); !slices.Equal(got, want) {
				t.Errorf("export\n %s\nwant\n %s", strings.Join(got, "\n "), strings.Join(want, "\n "))
			}
			f.unscripted()
		})
	}
}

// TestExportRefused: an export fails, and shows nothing, when what the
// server gave is not what the proxy writes: a value that is not one of its
// literals, a definition that reaches outside the database; or when a read
// fails.
func TestExportRefused(t *testing.T) {
	idOnly := []forker.Column{tID}
	const def = "CREATE TABLE `n` (`id` int(11) NOT NULL, PRIMARY KEY (`id`)) ENGINE=InnoDB"
	for _, tc := range []struct {
		name  string
		setup func(f *fixture)
		err   string
	}{
		{name: "a row's value", setup: func(f *fixture) { f.made("n", idOnly, def, []string{"1", "1); DROP TABLE t; --"}) },
			err: `diff app.n: a value the server gave as "1); DROP TABLE t; --" is not a literal the proxy writes: refused`},
		{name: "a quote in text", setup: func(f *fixture) { f.made("n", idOnly, def, []string{"'it''s'", "1"}) },
			err: `diff app.n: a value the server gave as "'it''s'" is not a literal the proxy writes: refused`},
		{name: "a keyless row's value", setup: func(f *fixture) {
			f.entry("r", sandbox.KindFork)
			f.both("r", []forker.Column{tName})
			f.query("SELECT IF(d.`sqlfork_n` > 0", "`app`.`r`", testkit.Row("insert", `{}`, nil, `{}`, nil, 1, `'a\'`))
		}, err: `diff app.r: a value the server gave as "'a\\'" is not a literal the proxy writes: refused`},
		{name: "an altered table's row", setup: func(f *fixture) {
			altered(f)
			f.query("SELECT 'insert', ", "`app`.`a`")
			f.side.Prefix("SELECT IFNULL(CAST(f.`id` AS CHAR), 'NULL'), ").Rows(testkit.Row("1", "x", "2"))
		}, err: `diff app.a: a value the server gave as "x" is not a literal the proxy writes: refused`},
		{name: "an altered table's rows unread", setup: func(f *fixture) {
			altered(f)
			f.query("SELECT 'insert', ", "`app`.`a`")
			f.side.Prefix("SELECT IFNULL(CAST(f.`id` AS CHAR), 'NULL'), ").Fail(boom)
		}, err: "export app.a: ERROR 1105 (HY000): boom"},
		{name: "a key only production has", setup: func(f *fixture) {
			altered(f)
			f.query("SELECT 'insert', ", "`app`.`a`")
			f.side.Prefix("SELECT IFNULL(CAST(f.`id` AS CHAR), 'NULL'), ")
			f.side.Prefix("SELECT IFNULL(CAST(r.`id` AS CHAR), 'NULL') FROM ").Rows(testkit.Row("0x1"))
		}, err: `diff app.a: a value the server gave as "0x1" is not a literal the proxy writes: refused`},
		{name: "keys only production has unread", setup: func(f *fixture) {
			altered(f)
			f.query("SELECT 'insert', ", "`app`.`a`")
			f.side.Prefix("SELECT IFNULL(CAST(f.`id` AS CHAR), 'NULL'), ")
			f.side.Prefix("SELECT IFNULL(CAST(r.`id` AS CHAR), 'NULL') FROM ").Fail(boom)
		}, err: "export app.a: ERROR 1105 (HY000): boom"},
		{name: "a definition outside the database", setup: func(f *fixture) {
			f.made("n", idOnly, def+" DATA DIRECTORY='/tmp/x'", []string{"1", "1"})
		}, err: "the statement built for app.n reaches outside the database"},
		{name: "foreign keys unread", setup: func(f *fixture) {
			f.made("n", idOnly, def, []string{"1", "1"})
			f.side.Exact("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA ORDER BY SCHEMA_NAME").Fail(boom)
		}, err: "read foreign keys: ERROR 1105 (HY000): boom"},
		{name: "routines unread", setup: func(f *fixture) {
			f.made("n", idOnly, def, []string{"1", "1"})
			f.side.Prefix("SELECT s.ROUTINE_TYPE, ").Fail(boom)
		}, err: "list the sandbox's routines and triggers: ERROR 1105 (HY000): boom"},
		{name: "a routine not looked up", setup: func(f *fixture) {
			f.made("n", idOnly, def, []string{"1", "1"})
			f.side.Prefix("SELECT s.ROUTINE_TYPE, ").Rows(testkit.Row("FUNCTION", physDB, "fn"))
			f.side.Prefix("SELECT COUNT(*) FROM information_schema.ROUTINES ").Fail(boom)
		}, err: "look up FUNCTION app.fn in production: ERROR 1105 (HY000): boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			tc.setup(f)
			r, err := f.m.Export(f.ctx, f.sb)
			if err == nil || !strings.Contains(err.Error(), tc.err) || r != nil {
				t.Errorf("export %v, error %v\nwant %q", r, err, tc.err)
			}
		})
	}
}

// TestExportCompositeKey: rows of a table compared whole by a key of two
// columns are updated in every column (their image at the fork is
// unknown) and deleted by tuples of the key.
func TestExportCompositeKey(t *testing.T) {
	f := newFixture(t)
	f.entry("ck", sandbox.KindFork)
	cols := []forker.Column{{Name: "a", Type: "int(11)", DataType: "int"}, {Name: "b", Type: "int(11)", DataType: "int"}, tV}
	f.both("ck", cols, "a", "b")
	f.capture("ck", "full", "a fork without rows")
	f.query("SELECT 'insert', ", "`app`.`ck`",
		testkit.Row("insert", `{}`, nil, `{}`, nil, "1", "2", "1", "2", "10"),
		testkit.Row("update", `{}`, `{}`, `{}`, nil, "3", "4", "3", "4", "30"),
		testkit.Row("delete", `{}`, `{}`, nil, nil, "5", "6", "NULL", "NULL", "NULL"),
		testkit.Row("delete", `{}`, `{}`, nil, nil, "7", "8", "NULL", "NULL", "NULL"))
	r, err := f.m.Export(f.ctx, f.sb)
	if err != nil {
		t.Fatal(err)
	}
	want := append(slices.Clone(exportHeader),
		"-- app.ck was compared whole with production (a fork without rows): rows production changed since the fork are put back",
		"INSERT INTO `app`.`ck` (`a`, `b`, `v`) VALUES (1, 2, 10) ON DUPLICATE KEY UPDATE `a` = VALUES(`a`), `b` = VALUES(`b`), `v` = VALUES(`v`)",
		"UPDATE `app`.`ck` SET `a` = 3, `b` = 4, `v` = 30 WHERE `a` = 3 AND `b` = 4",
		"DELETE FROM `app`.`ck` WHERE (`a`, `b`) IN ((7, 8), (5, 6))")
	if got := cells(r); !slices.Equal(got, want) {
		t.Errorf("export\n %s\nwant\n %s", strings.Join(got, "\n "), strings.Join(want, "\n "))
	}
	if q := f.side.Matching("^SELECT 'insert', "); len(q) != 1 || !strings.HasSuffix(q[0], " ORDER BY 2 LIMIT 200001") ||
		!strings.Contains(q[0], "FROM `_sqlfork_0badcafe_app`.`ck` f LEFT JOIN `app`.`ck` r ON r.`a` = f.`a` AND r.`b` = f.`b` WHERE r.`a` IS NULL") {
		t.Errorf("rows read with %q", q)
	}
	f.unscripted()
}

// TestExportKeylessAltered: an altered table without a key is emptied and
// filled with every row the sandbox has.
func TestExportKeylessAltered(t *testing.T) {
	f := newFixture(t)
	f.entry("k", sandbox.KindFork)
	f.shape(rewrite.Table{DB: "app", Name: "k"}, "BASE TABLE", []forker.Column{tV})
	f.shape(rewrite.Table{DB: physDB, Name: "k"}, "BASE TABLE", []forker.Column{tV, tName})
	f.capture("k", "full", "changed by ALTER TABLE")
	f.createTable(rewrite.Table{DB: "app", Name: "k"}, "CREATE TABLE `k` (\n  `v` int(11) DEFAULT NULL\n) ENGINE=InnoDB")
	f.createTable(rewrite.Table{DB: physDB, Name: "k"}, "CREATE TABLE `k` (\n  `v` int(11) DEFAULT NULL,\n  `name` varchar(20) DEFAULT NULL\n) ENGINE=InnoDB")
	f.query("SELECT IF(d.`sqlfork_n` > 0", "`app`.`k`", testkit.Row("delete", `{}`, `{}`, nil, nil, 1, "1"))
	f.side.Prefix("SELECT IFNULL(CAST(f.`v` AS CHAR), 'NULL'), ").Rows(testkit.Row("2", "'b'"), testkit.Row("2", "'b'"))
	r, err := f.m.Export(f.ctx, f.sb)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ALTER TABLE `app`.`k` ADD COLUMN IF NOT EXISTS `name` varchar(20) DEFAULT NULL AFTER `v`",
		"DELETE FROM `app`.`k`", "INSERT INTO `app`.`k` (`v`, `name`) VALUES (2, 'b'), (2, 'b')"}
	got := cells(r)
	if !slices.Equal(rowStatements(got), want) {
		t.Errorf("export\n %s\nwant\n %s", strings.Join(rowStatements(got), "\n "), strings.Join(want, "\n "))
	}
	if note := "-- app.k has no key: its rows are written by value, and running this twice writes them twice"; !slices.Contains(got, note) {
		t.Errorf("no note %q in %q", note, got)
	}
	f.unscripted()
}

// TestCreateStatements: a created table whose foreign keys name a table
// written after it is created with foreign_key_checks off for that one
// statement, the setting given back at once; any other as it is.
func TestCreateStatements(t *testing.T) {
	plain := &exportTable{ddl: "CREATE TABLE IF NOT EXISTS `app`.`a` (`id` int)"}
	if got := plain.createStatements(); len(got) != 1 || got[0] != plain.ddl {
		t.Errorf("a table with no foreign key to a later one: %q", got)
	}
	cut := &exportTable{ddl: "CREATE TABLE IF NOT EXISTS `app`.`b` (`id` int)", deferFKs: []forker.ForeignKey{{}}}
	want := []string{"SET @sqlfork_fk_checks = @@foreign_key_checks, foreign_key_checks = 0", cut.ddl,
		"SET foreign_key_checks = @sqlfork_fk_checks"}
	if got := cut.createStatements(); !slices.Equal(got, want) {
		t.Errorf("a table of a cycle cut at it: %q, want %q", got, want)
	}
}
