package review

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// TestDiffCaptured: a captured fork is diffed three ways by its key, in one
// snapshot read in UTC; SUMMARY counts by op, the detail lists each row,
// a conflict as such.
func TestDiffCaptured(t *testing.T) {
	f := newFixture(t)
	f.entry("t", sandbox.KindFork)
	f.both("t", []forker.Column{tID, tName}, "id")
	f.capture("t", "rows", "", "id")
	f.query("SELECT op, SUM(cf), COUNT(*) FROM (SELECT CASE", "`_sqlfork_0badcafe`.`c_t` c",
		testkit.Row("delete", 0, 1), testkit.Row("insert", 0, 2), testkit.Row("update", 1, 3))
	r, err := f.m.Diff(f.ctx, f.sb, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"app.t | forked | 2 | 3 | 1 | 1 | primary | capture | NULL"}
	if got := cells(r); !slices.Equal(got, want) || !slices.Equal(r.Columns, DiffSummaryColumns) {
		t.Errorf("summary %q, want %q", got, want)
	}
	sum := f.side.Matching(`^SELECT op, SUM`)
	wantSum := "SELECT op, SUM(cf), COUNT(*) FROM (SELECT CASE WHEN c.`_sqlfork_existed` = 0 THEN 'insert' WHEN f.`id` IS NULL THEN 'delete' " +
		"ELSE 'update' END op, (CASE WHEN c.`_sqlfork_existed` = 0 THEN r.`id` IS NOT NULL AND NOT (f.`id` <=> r.`id` AND BINARY f.`name` <=> BINARY r.`name`) " +
		"WHEN f.`id` IS NULL THEN r.`id` IS NOT NULL AND NOT (c.`id` <=> r.`id` AND BINARY c.`name` <=> BINARY r.`name`) " +
		"WHEN r.`id` IS NULL THEN TRUE " +
		// An update conflicts where both changed one column differently.
		"ELSE ((NOT c.`id` <=> f.`id` AND NOT c.`id` <=> r.`id` AND NOT f.`id` <=> r.`id`) OR " +
		"(NOT BINARY c.`name` <=> BINARY f.`name` AND NOT BINARY c.`name` <=> BINARY r.`name` AND NOT BINARY f.`name` <=> BINARY r.`name`)) END) cf " +
		"FROM `_sqlfork_0badcafe`.`c_t` c " +
		"LEFT JOIN `_sqlfork_0badcafe_app`.`t` f ON f.`id` = c.`id` LEFT JOIN `app`.`t` r ON r.`id` = c.`id` " +
		"WHERE (c.`_sqlfork_existed` = 0 AND f.`id` IS NOT NULL) OR (c.`_sqlfork_existed` = 1 AND (f.`id` IS NULL OR NOT " +
		"(c.`id` <=> f.`id` AND BINARY c.`name` <=> BINARY f.`name`)))) d GROUP BY op"
	if len(sum) != 1 || sum[0] != wantSum {
		t.Errorf("summary query %q\nwant %q", sum, wantSum)
	}
	// The snapshot: read in UTC in one consistent read, the time zone set
	// back after.
	log := f.side.Log()
	for i, q := range []string{"SELECT @@session.time_zone", "SET time_zone = '+00:00'", "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY"} {
		if j := slices.Index(log, q); j < 0 || i > 0 && j < slices.Index(log, "SELECT @@session.time_zone") {
			t.Errorf("snapshot: %q not in order in %q", q, log)
		}
	}
	if n := len(log); log[n-2] != "COMMIT" || log[n-1] != "SET time_zone = 'SYSTEM'" {
		t.Errorf("snapshot ends %q", log[n-2:])
	}

	f.query("SELECT CASE WHEN c.`_sqlfork_existed` = 0", "`_sqlfork_0badcafe`.`c_t` c",
		testkit.Row("insert", `{"id": 4}`, nil, `{"id": 4, "name": "d"}`, nil, 0, 1),
		testkit.Row("update", `{"id": 1}`, `{"id": 1, "name": "a"}`, `{"id": 1, "name": "b"}`, `{"id": 1, "name": "z"}`, 1, 0),
		testkit.Row("delete", `{"id": 2}`, `{"id": 2, "name": "x"}`, nil, nil, 0, 0))
	r, err = f.m.Diff(f.ctx, f.sb, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{
		`app.t | insert | {"id": 4} | NULL | {"id": 4, "name": "d"} | NULL`,
		`app.t | conflict | {"id": 1} | {"id": 1, "name": "a"} | {"id": 1, "name": "b"} | {"id": 1, "name": "z"}`,
		`app.t | delete | {"id": 2} | {"id": 2, "name": "x"} | NULL | NULL`,
	}
	if got := cells(r); !slices.Equal(got, want) || !slices.Equal(r.Columns, DiffColumns) {
		t.Errorf("detail\n %s\nwant\n %s", strings.Join(got, "\n "), strings.Join(want, "\n "))
	}
	detail := f.side.Matching("^SELECT CASE WHEN")
	if len(detail) != 1 || !strings.HasSuffix(detail[0], " ORDER BY c.`id` LIMIT 200001") ||
		!strings.Contains(detail[0], "IF(c.`_sqlfork_existed` = 1, JSON_OBJECT('id', c.`id`, 'name', c.`name`), NULL)") {
		t.Errorf("detail query %q", detail)
	}
	if !slices.Equal(f.obs.diffed, []string{"summary", "detail"}) {
		t.Errorf("observer told %q", f.obs.diffed)
	}
	f.unscripted()
}

// diffCase is a sandbox's table, scripted, and what DIFF SUMMARY and DIFF
// show of it.
type diffCase struct {
	name    string
	setup   func(f *fixture)
	summary []string
	detail  []string
	queries []string // statements the detail sends (exact)
}

const (
	createdDDL = "CREATE TABLE `n` (\n  `id` int(11) NOT NULL,\n  `p` int(11) DEFAULT NULL,\n  PRIMARY KEY (`id`),\n" +
		"  CONSTRAINT `fk` FOREIGN KEY (`p`) REFERENCES `_sqlfork_0badcafe_app`.`t` (`id`)\n) ENGINE=InnoDB"
	createdExport = "CREATE TABLE IF NOT EXISTS `app`.`n` (\n  `id` int(11) NOT NULL,\n  `p` int(11) DEFAULT NULL,\n  PRIMARY KEY (`id`),\n" +
		"  CONSTRAINT `fk` FOREIGN KEY (`p`) REFERENCES `app`.`t` (`id`)\n) ENGINE=InnoDB"
	viewDDL = "CREATE ALGORITHM=UNDEFINED DEFINER=`root`@`localhost` SQL SECURITY DEFINER VIEW `_sqlfork_0badcafe_app`.`v` AS " +
		"select `_sqlfork_0badcafe_app`.`t`.`id` AS `id` from `_sqlfork_0badcafe_app`.`t`"
	viewExport = "CREATE OR REPLACE ALGORITHM=UNDEFINED SQL SECURITY INVOKER VIEW `app`.`v` AS select `app`.`t`.`id` AS `id` from `app`.`t`"
)

// created is a table app.n the sandbox made, with 2 rows.
func created(f *fixture) {
	f.entry("n", sandbox.KindCreated)
	f.shape(rewrite.Table{DB: physDB, Name: "n"}, "BASE TABLE", []forker.Column{tID, {Name: "p", Type: "int(11)", DataType: "int"}}, "id")
	f.createTable(rewrite.Table{DB: physDB, Name: "n"}, createdDDL)
	f.side.Exact("SELECT COUNT(*) FROM `_sqlfork_0badcafe_app`.`n`").Rows(testkit.Row(2))
	f.query("SELECT 'insert', ", "`_sqlfork_0badcafe_app`.`n` f", testkit.Row("insert", `{"id": 1}`, nil, `{"id": 1, "p": null}`, nil),
		testkit.Row("insert", `{"id": 2}`, nil, `{"id": 2, "p": 1}`, nil))
}

const (
	alteredProd = "CREATE TABLE `a` (\n  `id` int(11) NOT NULL,\n  `name` varchar(20) DEFAULT NULL,\n  PRIMARY KEY (`id`)\n" +
		") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"
	alteredFork = "CREATE TABLE `a` (\n  `id` int(11) NOT NULL,\n  `name` varchar(20) DEFAULT NULL,\n  `v` int(11) DEFAULT NULL,\n" +
		"  PRIMARY KEY (`id`),\n  KEY `iv` (`v`)\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"
)

// altered is app.a, which the sandbox's DDL gave a column and an index:
// compared whole by its key.
func altered(f *fixture) {
	f.entry("a", sandbox.KindFork)
	f.shape(rewrite.Table{DB: "app", Name: "a"}, "BASE TABLE", []forker.Column{tID, tName}, "id")
	f.shape(rewrite.Table{DB: physDB, Name: "a"}, "BASE TABLE", []forker.Column{tID, tName, tV}, "id")
	f.capture("a", "full", "changed by ALTER TABLE")
	f.createTable(rewrite.Table{DB: "app", Name: "a"}, alteredProd)
	f.createTable(rewrite.Table{DB: physDB, Name: "a"}, alteredFork)
	f.side.Match(`^SELECT \(SELECT COUNT\(\*\) FROM `).Rows(testkit.Row(0, 1, 0))
	f.query("SELECT 'insert', ", "`app`.`a`", testkit.Row("update", `{"id": 1}`, `{"id": 1, "name": "x"}`, `{"id": 1, "name": "x", "v": 5}`, nil))
}

func diffCases() []diffCase { return slices.Concat(ddlCases(), rowCases()) }

// ddlCases are tables DIFF shows DDL of.
func ddlCases() []diffCase {
	return []diffCase{
		{name: "created", setup: created,
			summary: []string{"app.n | created | 2 | 0 | 0 | 0 | primary | created | NULL"},
			detail: []string{"app.n | ddl | NULL | NULL | " + createdExport + " | NULL",
				`app.n | insert | {"id": 1} | NULL | {"id": 1, "p": null} | NULL`, `app.n | insert | {"id": 2} | NULL | {"id": 2, "p": 1} | NULL`},
			queries: []string{"SELECT 'insert', JSON_OBJECT('id', f.`id`), NULL, JSON_OBJECT('id', f.`id`, 'p', f.`p`), NULL " +
				"FROM `_sqlfork_0badcafe_app`.`n` f ORDER BY f.`id` LIMIT 200001"}},
		{name: "created again", setup: func(f *fixture) {
			created(f)
			f.shape(rewrite.Table{DB: "app", Name: "n"}, "BASE TABLE", []forker.Column{tID}, "id")
		},
			summary: []string{"app.n | created | 2 | 0 | 0 | 0 | primary | created | NULL"},
			detail: []string{"app.n | ddl | NULL | NULL | DROP TABLE IF EXISTS `app`.`n`;\n" + createdExport + " | NULL",
				`app.n | insert | {"id": 1} | NULL | {"id": 1, "p": null} | NULL`, `app.n | insert | {"id": 2} | NULL | {"id": 2, "p": 1} | NULL`}},
		{name: "dropped", setup: func(f *fixture) {
			f.entry("d", sandbox.KindDropped)
			f.shape(rewrite.Table{DB: "app", Name: "d"}, "BASE TABLE", []forker.Column{tID}, "id")
		},
			summary: []string{"app.d | dropped | 0 | 0 | 0 | 0 | primary | dropped | NULL"},
			detail:  []string{"app.d | ddl | NULL | NULL | DROP TABLE IF EXISTS `app`.`d` | NULL"}},
		{name: "created and dropped", setup: func(f *fixture) { f.entry("d", sandbox.KindDropped) }},
		{name: "dropped since", setup: func(f *fixture) {
			f.entry("g", sandbox.KindFork)
			f.shape(rewrite.Table{DB: "app", Name: "g"}, "BASE TABLE", []forker.Column{tID}, "id")
		}},
		{name: "view created", setup: func(f *fixture) {
			f.entry("v", sandbox.KindCreated)
			f.shape(rewrite.Table{DB: physDB, Name: "v"}, "VIEW", []forker.Column{tID})
			f.side.Exact("SHOW CREATE VIEW `_sqlfork_0badcafe_app`.`v`").Rows(testkit.Row("v", viewDDL, "utf8mb4", "utf8mb4_general_ci"))
		},
			summary: []string{"app.v | created | 0 | 0 | 0 | 0 | view | view | NULL"},
			detail:  []string{"app.v | ddl | NULL | NULL | " + viewExport + " | NULL"}},
		{name: "view dropped", setup: func(f *fixture) {
			f.entry("v", sandbox.KindDropped)
			f.shape(rewrite.Table{DB: "app", Name: "v"}, "VIEW", []forker.Column{tID})
		},
			summary: []string{"app.v | dropped | 0 | 0 | 0 | 0 | view | view | NULL"},
			detail:  []string{"app.v | ddl | NULL | NULL | DROP VIEW IF EXISTS `app`.`v` | NULL"}},
		{name: "sequence", setup: func(f *fixture) {
			f.entry("s", sandbox.KindFork)
			f.shape(rewrite.Table{DB: "app", Name: "s"}, "SEQUENCE", []forker.Column{{Name: "next_not_cached_value", Type: "bigint(21)", DataType: "bigint"}})
			f.shape(rewrite.Table{DB: physDB, Name: "s"}, "SEQUENCE", []forker.Column{{Name: "next_not_cached_value", Type: "bigint(21)", DataType: "bigint"}})
		}}, // its values are not rows: a forked table without changed rows, which SUMMARY leaves out
	}
}

// rowCases are forks diffed by their rows.
func rowCases() []diffCase {
	return []diffCase{
		{name: "compared by key", setup: func(f *fixture) {
			f.entry("k", sandbox.KindFork)
			f.both("k", []forker.Column{tID, tV}, "id")
			f.capture("k", "full", "a fork without rows")
			f.side.Match(`^SELECT \(SELECT COUNT\(\*\) FROM `).Rows(testkit.Row(1, 2, 3))
			f.query("SELECT 'insert', ", "`app`.`k`", testkit.Row("insert", `{"id": 9}`, nil, `{"id": 9, "v": 9}`, nil),
				testkit.Row("update", `{"id": 1}`, `{"id": 1, "v": 1}`, `{"id": 1, "v": 2}`, nil))
		},
			summary: []string{"app.k | forked | 1 | 2 | 3 | 0 | primary | compare | a fork without rows"},
			detail: []string{`app.k | insert | {"id": 9} | NULL | {"id": 9, "v": 9} | NULL`,
				`app.k | update | {"id": 1} | {"id": 1, "v": 1} | {"id": 1, "v": 2} | NULL`},
			queries: []string{"SELECT 'insert', JSON_OBJECT('id', f.`id`), NULL, JSON_OBJECT('id', f.`id`, 'v', f.`v`), NULL " +
				"FROM `_sqlfork_0badcafe_app`.`k` f LEFT JOIN `app`.`k` r ON r.`id` = f.`id` WHERE r.`id` IS NULL UNION ALL " +
				"SELECT 'update', JSON_OBJECT('id', f.`id`), JSON_OBJECT('id', r.`id`, 'v', r.`v`), JSON_OBJECT('id', f.`id`, 'v', f.`v`), NULL " +
				"FROM `_sqlfork_0badcafe_app`.`k` f JOIN `app`.`k` r ON r.`id` = f.`id` WHERE NOT (f.`id` <=> r.`id` AND f.`v` <=> r.`v`) UNION ALL " +
				"SELECT 'delete', JSON_OBJECT('id', r.`id`), JSON_OBJECT('id', r.`id`, 'v', r.`v`), NULL, NULL " +
				"FROM `app`.`k` r LEFT JOIN `_sqlfork_0badcafe_app`.`k` f ON f.`id` = r.`id` WHERE f.`id` IS NULL ORDER BY 2 LIMIT 200001"}},
		{name: "keyless", setup: func(f *fixture) {
			f.entry("r", sandbox.KindFork)
			f.both("r", []forker.Column{tV, tName})
			f.side.Match(`^SELECT SUM\(GREATEST\(`).Rows(testkit.Row(2, 1))
			f.query("SELECT IF(d.`sqlfork_n` > 0", "`app`.`r`", testkit.Row("delete", `{"v": 1, "name": "a"}`, `{"v": 1, "name": "a"}`, nil, nil, 1),
				testkit.Row("insert", `{"v": 2, "name": "b"}`, nil, `{"v": 2, "name": "b"}`, nil, 2))
		},
			summary: []string{"app.r | forked | 2 | 0 | 1 | 0 | row | compare | forked before changes were captured"},
			detail: []string{`app.r | delete | {"v": 1, "name": "a"} | {"v": 1, "name": "a"} | NULL | NULL`,
				`app.r | insert | {"v": 2, "name": "b"} | NULL | {"v": 2, "name": "b"} | NULL`,
				`app.r | insert | {"v": 2, "name": "b"} | NULL | {"v": 2, "name": "b"} | NULL`},
			queries: []string{"SELECT IF(d.`sqlfork_n` > 0, 'insert', 'delete'), JSON_OBJECT('v', d.`v`, 'name', d.`name`), " +
				"IF(d.`sqlfork_n` < 0, JSON_OBJECT('v', d.`v`, 'name', d.`name`), NULL), IF(d.`sqlfork_n` > 0, JSON_OBJECT('v', d.`v`, 'name', d.`name`), NULL), " +
				"NULL, ABS(d.`sqlfork_n`) FROM (SELECT MIN(x.`v`) AS `v`, MIN(x.`name`) AS `name`, SUM(x.`sqlfork_n`) AS `sqlfork_n` " +
				"FROM (SELECT `v`, `name`, 1 AS `sqlfork_n` FROM `_sqlfork_0badcafe_app`.`r` UNION ALL SELECT `v`, `name`, -1 FROM `app`.`r`) x " +
				"GROUP BY x.`v`, BINARY x.`name` HAVING SUM(x.`sqlfork_n`) <> 0) d ORDER BY 2 LIMIT 200001"}},
		{name: "production's columns changed", setup: func(f *fixture) {
			f.entry("c", sandbox.KindFork)
			f.shape(rewrite.Table{DB: "app", Name: "c"}, "BASE TABLE", []forker.Column{tID, tV, tName}, "id")
			f.shape(rewrite.Table{DB: physDB, Name: "c"}, "BASE TABLE", []forker.Column{tID, tV}, "id")
			f.capture("c", "rows", "", "id")
			f.query("SELECT op, SUM(cf)", "`c_c` c", testkit.Row("update", 0, 1))
			f.query("SELECT CASE WHEN", "`c_c` c", testkit.Row("update", `{"id": 1}`, `{"id": 1, "v": 1}`, `{"id": 1, "v": 2}`, nil, 0, 0))
		},
			summary: []string{"app.c | forked | 0 | 1 | 0 | 0 | primary | capture | production's table changed since the fork; "},
			detail:  []string{`app.c | update | {"id": 1} | {"id": 1, "v": 1} | {"id": 1, "v": 2} | NULL`}},
		{name: "altered", setup: altered,
			summary: []string{"app.a | altered | 0 | 1 | 0 | 0 | primary | compare | changed by ALTER TABLE; rows are compared on the columns production has: a change only in `v` (not in production) shows in no row, and OVERWRITE writes every row whole"},
			detail: []string{"app.a | ddl | NULL | NULL | ALTER TABLE `app`.`a` ADD COLUMN IF NOT EXISTS `v` int(11) DEFAULT NULL AFTER `name`;\n" +
				"ALTER TABLE `app`.`a` ADD KEY IF NOT EXISTS `iv` (`v`) | NULL",
				`app.a | update | {"id": 1} | {"id": 1, "name": "x"} | {"id": 1, "name": "x", "v": 5} | NULL`}},
		{name: "unchanged fork", setup: func(f *fixture) {
			f.entry("u", sandbox.KindFork)
			f.both("u", []forker.Column{tID}, "id")
			f.capture("u", "rows", "", "id")
			f.query("SELECT op, SUM(cf)", "`c_u` c")
			f.query("SELECT CASE WHEN", "`c_u` c")
		}},
	}
}

// TestDiffMethods: each kind of table is diffed its way (created, dropped,
// views, sequences, compared by key or by whole rows), and DIFF shows its
// DDL before its rows.
func TestDiffMethods(t *testing.T) {
	for _, tc := range diffCases() {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			tc.setup(f)
			r, err := f.m.Diff(f.ctx, f.sb, true, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := cells(r); !slices.Equal(got, tc.summary) {
				t.Errorf("summary\n %s\nwant\n %s", strings.Join(got, "\n "), strings.Join(tc.summary, "\n "))
			}
			f.side.ClearLog()
			if r, err = f.m.Diff(f.ctx, f.sb, false, nil); err != nil {
				t.Fatal(err)
			}
			if got := cells(r); !slices.Equal(got, tc.detail) {
				t.Errorf("detail\n %s\nwant\n %s", strings.Join(got, "\n "), strings.Join(tc.detail, "\n "))
			}
			for _, q := range tc.queries {
				if !slices.Contains(f.side.Log(), q) {
					t.Errorf("no query\n %s\namong\n %s", q, strings.Join(f.side.Log(), "\n "))
				}
			}
			f.unscripted()
		})
	}
}

// TestDiffFor: DIFF … FOR db.table reads that table alone.
func TestDiffFor(t *testing.T) {
	f := newFixture(t)
	capturedOnly(f)
	created(f)
	f.query("SELECT op, SUM(cf)", "`c_t` c", testkit.Row("insert", 0, 1))
	r, err := f.m.Diff(f.ctx, f.sb, true, &rewrite.Table{DB: "app", Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"app.t | forked | 1 | 0 | 0 | 0 | primary | capture | NULL"}; !slices.Equal(cells(r), want) {
		t.Errorf("summary %q, want %q", cells(r), want)
	}
	if q := f.side.Matching("`n`"); len(q) != 0 {
		t.Errorf("read app.n: %q", q)
	}
	f.unscripted()
}

// TestDiffForNoSuchTable: DIFF … FOR a table neither the sandbox nor
// production has is the server's 1146; one production has that the
// sandbox did not change has an empty diff.
func TestDiffForNoSuchTable(t *testing.T) {
	f := newFixture(t)
	capturedOnly(f)
	f.side.Match("^SELECT t\\.ENGINE, .*'nosuch'").Rows()
	f.shape(rewrite.Table{DB: "app", Name: "quiet"}, "BASE TABLE", []forker.Column{tID}, "id")
	_, err := f.m.Diff(f.ctx, f.sb, true, &rewrite.Table{DB: "app", Name: "nosuch"})
	var rf *rewrite.Refusal
	if !errors.As(err, &rf) || rf.Code != wire.ErNoSuchTable || !strings.Contains(rf.Message, "Table 'app.nosuch' doesn't exist") {
		t.Errorf("DIFF FOR app.nosuch: %v", err)
	}
	r, err := f.m.Diff(f.ctx, f.sb, false, &rewrite.Table{DB: "app", Name: "quiet"})
	if err != nil || len(r.Rows) != 0 {
		t.Errorf("DIFF FOR app.quiet: %v, %+v", err, r)
	}
}

// TestJSONColumns: the check MariaDB gives a JSON column marks it (a
// back quote in its name doubled), and a JSON column's value is JSON in
// a diff's images whatever table holds it.
func TestJSONColumns(t *testing.T) {
	for clause, want := range map[string]string{"json_valid(`doc`)": "doc", "json_valid(`a``b`)": "a``b", "`v` > 0": "", "json_valid(`doc`) and 1": ""} {
		got := ""
		if m := jsonCheck.FindStringSubmatch(clause); m != nil {
			got = m[1]
		}
		if got != want {
			t.Errorf("jsonCheck(%q) = %q, want %q", clause, got, want)
		}
	}
	if got := jsonValue("c", forker.Column{Name: "doc", DataType: "longtext", Charset: "utf8mb4", JSON: true}); got != "JSON_EXTRACT(c.`doc`, '$')" {
		t.Errorf("jsonValue of a JSON column: %s", got)
	}
}
