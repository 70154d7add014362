package integration

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// After a committed PROMOTE, every kind of table it applied is rebased:
// what it promoted is production's, so the sandbox's DIFF no longer shows
// it, and a later promote merges the sandbox's further changes with
// production's own since. Each test runs with the least-privilege account
// and the ALL PRIVILEGES one, and checks that production changes only by
// the promotes (and the test's own direct writes).

// rebaseCase is one test's sandbox connection, production and database.
type rebaseCase struct {
	db     string
	acct   diffAccount
	sc     *sql.Conn
	direct *sql.DB
	root   *sql.DB
	// sum is production's checksum as the test last left it: anything but
	// a promote or the test's direct writes that changes it is a defect.
	sum string
}

// eachRebaseCase runs run for each account, in database prefix_<account>
// made with schema, with a connection of the sandbox of that name.
func eachRebaseCase(t *testing.T, prefix, schema string, run func(t *testing.T, x *rebaseCase)) {
	prod, _ := env(t)
	e := newDiffEnv(t, "transparent", false, func(c *proxy.Config) { c.PromoteUser, c.PromotePassword = prod.User, prod.Password })
	root := openDB(t, prod.DSN(""))
	for _, acct := range e.accts {
		t.Run(acct.name, func(t *testing.T) {
			db := prefix + "_" + acct.short()
			e.database(t, db, schema)
			x := &rebaseCase{db: db, acct: acct, sc: conn(t, openDB(t, acct.dsn(db, db))), direct: openDB(t, prod.DSN(db)), root: root}
			x.settle(t)
			run(t, x)
		})
	}
}

// settle records production as it is now (after a promote or a direct
// write of the test).
func (x *rebaseCase) settle(t *testing.T) {
	t.Helper()
	x.sum = strings.Join(tableNames(t, x.root, x.db), ",") + ":" + databaseChecksum(t, x.root, x.db)
}

// untouched checks that production is as the test last left it.
func (x *rebaseCase) untouched(t *testing.T, when string) {
	t.Helper()
	if got := strings.Join(tableNames(t, x.root, x.db), ",") + ":" + databaseChecksum(t, x.root, x.db); got != x.sum {
		t.Errorf("%s production changed though nothing was promoted: %s, was %s", when, got, x.sum)
	}
}

// direct changes production itself.
func (x *rebaseCase) directly(t *testing.T, stmts ...string) {
	t.Helper()
	x.untouched(t, "before a direct write,")
	for _, s := range stmts {
		mustExecDB(t, x.direct, s)
	}
	x.settle(t)
}

// promote runs stmt, which must commit.
func (x *rebaseCase) promote(t *testing.T, stmt string) {
	t.Helper()
	x.untouched(t, "before "+stmt+",")
	if _, err := x.sc.ExecContext(context.Background(), stmt); err != nil {
		t.Fatalf("%s: %s", stmt, mysqlErr(err))
	}
	x.settle(t)
}

// rights gives the least-privilege account a writer's rights on the test's
// database, after checking that promote is refused without them.
func (x *rebaseCase) rights(t *testing.T, promote string) {
	t.Helper()
	promoteRightsFor(t, x.root, x.acct, x.sc, promote, x.db)
	x.untouched(t, "after a promote refused for its rights,")
}

// wantDiffOps checks the sandbox's DIFF rows of table (ddl rows too), each
// "op key before -> after", against want.
func (x *rebaseCase) wantDiffOps(t *testing.T, table string, want ...string) {
	t.Helper()
	var got []string
	for _, r := range diffDetail(t, x.sc, "SANDBOX DIFF") {
		if r.table == x.db+"."+table {
			got = append(got, r.op+" "+r.key.String+" "+r.before.String+" -> "+r.after.String)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("DIFF of %s:\n %s\nwant\n %s", table, strings.Join(got, "\n "), strings.Join(want, "\n "))
	}
}

// emptyDiff checks that the sandbox's DIFF SUMMARY lists nothing.
func (x *rebaseCase) emptyDiff(t *testing.T, when string) {
	t.Helper()
	if got := diffSummary(t, x.sc, "SANDBOX DIFF SUMMARY"); len(got) != 0 {
		t.Errorf("DIFF SUMMARY %s: %+v, want nothing", when, got)
	}
	if got := diffDetail(t, x.sc, "SANDBOX DIFF"); len(got) != 0 {
		t.Errorf("DIFF %s: %+v, want nothing", when, got)
	}
	x.untouched(t, "after DIFF "+when+",")
}

// registryKind is the kind the registry records for table in the sandbox.
func (x *rebaseCase) registryKind(t *testing.T, table string) string {
	t.Helper()
	return allRows(t, x.root, "SELECT t.kind FROM _sqlfork_meta.tables t JOIN _sqlfork_meta.sandboxes s ON s.id = t.sandbox_id "+
		"WHERE s.name = '"+x.db+"' AND t.db = '"+x.db+"' AND t.tbl = '"+table+"'")
}

// TestRebaseCreatedTable: a table the sandbox created, once promoted, is
// an ordinary fork of production's whose fork-time image is what was
// promoted: DIFF is empty; the sandbox's later change of a row diffs by
// row, and its promote merges by cell with production's changes since (a
// column of the same row, a row it inserted).
func TestRebaseCreatedTable(t *testing.T) {
	eachRebaseCase(t, "rb_created", "CREATE TABLE seed (id INT PRIMARY KEY);", func(t *testing.T, x *rebaseCase) {
		x.grantCreate(t)
		mustExecC(t, x.sc, "CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT, UNIQUE KEY ua (a))")
		mustExecC(t, x.sc, "INSERT INTO t VALUES (1, 1, 1), (2, 2, 2)")
		x.untouched(t, "after the sandbox's CREATE TABLE,")
		x.rights(t, "SANDBOX PROMOTE")
		x.promote(t, "SANDBOX PROMOTE")
		if got := allRows(t, x.root, "SELECT id, a, b FROM `"+x.db+"`.t ORDER BY id"); got != "1 1 1|2 2 2" {
			t.Fatalf("production's t after PROMOTE: %s", got)
		}
		x.emptyDiff(t, "after the promote of a created table")
		if got := x.registryKind(t, "t"); got != "fork" {
			t.Errorf("the registry's kind of t after the promote: %q, want fork", got)
		}

		mustExecC(t, x.sc, "UPDATE t SET a = 10 WHERE id = 1")
		x.directly(t, "UPDATE t SET b = 20 WHERE id = 1", "INSERT INTO t VALUES (3, 3, 3)")
		sum := diffSummary(t, x.sc, "SANDBOX DIFF SUMMARY")
		if got, want := sum[x.db+".t"], (sumRow{change: "forked", upd: 1, keyKind: "primary", method: "capture"}); got != want || len(sum) != 1 {
			t.Errorf("DIFF SUMMARY after the sandbox's update: %+v, want only t %+v", sum, want)
		}
		x.wantDiffOps(t, "t", `update {"id": 1} {"id": 1, "a": 1, "b": 1} -> {"id": 1, "a": 10, "b": 1}`)
		x.promote(t, "SANDBOX PROMOTE")
		if got, want := allRows(t, x.root, "SELECT id, a, b FROM `"+x.db+"`.t ORDER BY id"), "1 10 20|2 2 2|3 3 3"; got != want {
			t.Errorf("production's t after the second PROMOTE: %s, want %s (merged by cell, production's insert kept)", got, want)
		}
		x.emptyDiff(t, "after the second promote")
	})
}

// grantCreate lets the least-privilege account create tables in the test's
// database in its sandbox (CREATE only: a promote still lacks INSERT).
func (x *rebaseCase) grantCreate(t *testing.T) {
	t.Helper()
	if x.acct.name != "least-privilege" {
		return
	}
	g := "CREATE ON `" + x.db + "`.* TO '" + sandboxUser + "'@'%'"
	mustExecDB(t, x.root, "GRANT "+g)
	t.Cleanup(func() { _, _ = x.root.Exec("REVOKE " + strings.Replace(g, " TO ", " FROM ", 1)) })
}

// TestRebaseDroppedTable: once the drop of a table is promoted, the
// sandbox's entry means the table is absent from production too: DIFF is
// empty, and stays empty when production makes a table of that name
// again, which a later promote leaves alone.
func TestRebaseDroppedTable(t *testing.T) {
	eachRebaseCase(t, "rb_dropped", "CREATE TABLE t (id INT PRIMARY KEY, v INT); INSERT INTO t VALUES (1, 1); "+
		"CREATE TABLE u (id INT PRIMARY KEY, v INT); INSERT INTO u VALUES (1, 1);", func(t *testing.T, x *rebaseCase) {
		mustExecC(t, x.sc, "DROP TABLE t")
		x.rights(t, "SANDBOX PROMOTE STRATEGY OURS")
		x.promote(t, "SANDBOX PROMOTE STRATEGY OURS")
		if got := tableNames(t, x.root, x.db); strings.Join(got, ",") != "u" {
			t.Fatalf("production's tables after the promoted drop: %v", got)
		}
		x.emptyDiff(t, "after the promote of a drop")
		if got := x.registryKind(t, "t"); got != "absent" {
			t.Errorf("the registry's kind of t after the promote: %q, want absent", got)
		}
		x.directly(t, "CREATE TABLE t (id INT PRIMARY KEY, w INT)", "INSERT INTO t VALUES (7, 7)")
		x.emptyDiff(t, "after production made t again")
		mustExecC(t, x.sc, "UPDATE u SET v = 2 WHERE id = 1")
		x.promote(t, "SANDBOX PROMOTE STRATEGY OURS")
		if got := allRows(t, x.root, "SELECT id, w FROM `"+x.db+"`.t"); got != "7 7" {
			t.Errorf("production's own t after a later promote: %q, want 7 7 (the promoted drop is not applied again)", got)
		}
		if got := allRows(t, x.root, "SELECT v FROM `"+x.db+"`.u"); got != "2" {
			t.Errorf("production's u after the later promote: %s, want 2", got)
		}
	})
}

// TestRebaseView: a view the sandbox made, and one it replaced, once
// promoted are production's: DIFF is empty and the sandbox reads them as
// before; a later replacement in the sandbox is a change again.
func TestRebaseView(t *testing.T) {
	eachRebaseCase(t, "rb_view", "CREATE TABLE t (id INT PRIMARY KEY, v INT); INSERT INTO t VALUES (1, 1), (2, 2); "+
		"CREATE VIEW old_v AS SELECT id FROM t;", func(t *testing.T, x *rebaseCase) {
		mustExecC(t, x.sc, "CREATE VIEW new_v AS SELECT id, v * 2 AS w FROM t")
		mustExecC(t, x.sc, "CREATE OR REPLACE VIEW old_v AS SELECT id, v FROM t")
		x.rights(t, "SANDBOX PROMOTE")
		x.promote(t, "SANDBOX PROMOTE")
		if got := allRows(t, x.root, "SELECT id, w FROM `"+x.db+"`.new_v ORDER BY id"); got != "1 2|2 4" {
			t.Fatalf("production's new_v after the promote: %s", got)
		}
		if got := allRows(t, x.root, "SELECT id, v FROM `"+x.db+"`.old_v ORDER BY id"); got != "1 1|2 2" {
			t.Fatalf("production's old_v after the promote: %s", got)
		}
		x.emptyDiff(t, "after the promote of two views")
		wantString(t, x.sc, "SELECT CONCAT((SELECT GROUP_CONCAT(w ORDER BY id) FROM new_v), '/', (SELECT GROUP_CONCAT(v ORDER BY id) FROM old_v))",
			"2,4/1,2", "the sandbox reads its promoted views as %s, want 2,4/1,2")
		mustExecC(t, x.sc, "CREATE OR REPLACE VIEW new_v AS SELECT id FROM t")
		if got := diffSummary(t, x.sc, "SANDBOX DIFF SUMMARY"); len(got) != 1 || got[x.db+".new_v"].method != "view" {
			t.Errorf("DIFF SUMMARY after the view was replaced again: %+v, want new_v only", got)
		}
	})
}

// TestRebaseOverwrittenTable: a table compared whole (DDL the capture
// cannot follow) and promoted with OVERWRITE is captured from then on,
// against what was promoted: DIFF is empty, production's later changes
// are never shown as the sandbox's, and the sandbox's later change is
// promoted by row without reverting them.
func TestRebaseOverwrittenTable(t *testing.T) {
	eachRebaseCase(t, "rb_overwrite", "CREATE TABLE t (id INT PRIMARY KEY, a INT); INSERT INTO t VALUES (1, 1), (2, 2), (3, 3);",
		func(t *testing.T, x *rebaseCase) {
			mustExecC(t, x.sc, "UPDATE t SET a = 5 WHERE id = 1")
			mustExecC(t, x.sc, "ALTER TABLE t ADD COLUMN b INT DEFAULT (a * 10)")
			if got := diffSummary(t, x.sc, "SANDBOX DIFF SUMMARY")[x.db+".t"]; got.method != "compare" {
				t.Fatalf("DIFF SUMMARY of t %+v: want it compared whole", got)
			}
			x.rights(t, "SANDBOX PROMOTE OVERWRITE t")
			x.promote(t, "SANDBOX PROMOTE OVERWRITE t")
			if got := allRows(t, x.root, "SELECT id, a, b FROM `"+x.db+"`.t ORDER BY id"); got != "1 5 50|2 2 20|3 3 30" {
				t.Fatalf("production's t after PROMOTE OVERWRITE: %s", got)
			}
			x.emptyDiff(t, "after PROMOTE OVERWRITE")
			x.directly(t, "UPDATE t SET a = 7 WHERE id = 2", "DELETE FROM t WHERE id = 3", "INSERT INTO t VALUES (4, 4, 40)")
			x.emptyDiff(t, "after production's own changes")
			mustExecC(t, x.sc, "UPDATE t SET b = 11 WHERE id = 1")
			x.wantDiffOps(t, "t", `update {"id": 1} {"id": 1, "a": 5, "b": 50} -> {"id": 1, "a": 5, "b": 11}`)
			x.promote(t, "SANDBOX PROMOTE")
			if got, want := allRows(t, x.root, "SELECT id, a, b FROM `"+x.db+"`.t ORDER BY id"), "1 5 11|2 7 20|4 4 40"; got != want {
				t.Errorf("production's t after the later PROMOTE: %s, want %s", got, want)
			}
			x.emptyDiff(t, "after the later promote")
		})
}

// TestOverwriteSwappedUniqueValues: a whole-table OVERWRITE, after DDL,
// of rows that swapped the values of a unique key applies (each row's
// upsert alone would meet the other's old value: 1062).
func TestOverwriteSwappedUniqueValues(t *testing.T) {
	eachRebaseCase(t, "rb_swap", "CREATE TABLE users (id INT PRIMARY KEY, email VARCHAR(20) NOT NULL, n INT, UNIQUE KEY ue (email)); "+
		"CREATE TABLE orders (id INT PRIMARY KEY, uid INT, FOREIGN KEY (uid) REFERENCES users (id) ON DELETE CASCADE); "+
		"INSERT INTO users VALUES (1, 'a', 1), (2, 'b', 2), (3, 'c', 3); INSERT INTO orders VALUES (10, 1), (20, 2);",
		func(t *testing.T, x *rebaseCase) {
			mustExecC(t, x.sc, "ALTER TABLE users ADD COLUMN m INT DEFAULT (n * 10)")
			mustExecC(t, x.sc, "UPDATE users SET email = 'tmp' WHERE id = 1")
			mustExecC(t, x.sc, "UPDATE users SET email = 'a' WHERE id = 2")
			mustExecC(t, x.sc, "UPDATE users SET email = 'b' WHERE id = 1")
			if got := diffSummary(t, x.sc, "SANDBOX DIFF SUMMARY")[x.db+".users"]; got.method != "compare" {
				t.Fatalf("DIFF SUMMARY of users %+v: want it compared whole", got)
			}
			x.rights(t, "SANDBOX PROMOTE OVERWRITE users")
			x.promote(t, "SANDBOX PROMOTE OVERWRITE users")
			if got, want := allRows(t, x.root, "SELECT id, email, n, m FROM `"+x.db+"`.users ORDER BY id"), "1 b 1 10|2 a 2 20|3 c 3 30"; got != want {
				t.Errorf("production's users after PROMOTE OVERWRITE: %s, want %s", got, want)
			}
			if got := allRows(t, x.root, "SELECT id, uid FROM `"+x.db+"`.orders ORDER BY id"); got != "10 1|20 2" {
				t.Errorf("production's orders after PROMOTE OVERWRITE users: %s, want 10 1|20 2 (no cascade)", got)
			}
			x.emptyDiff(t, "after PROMOTE OVERWRITE")
		})
}

// TestRebaseOnlyWhatWasApplied: a DRY RUN rebases nothing, and a promote
// FOR one table rebases that table only: the other, not promoted, still
// shows as the sandbox made it.
func TestRebaseOnlyWhatWasApplied(t *testing.T) {
	eachRebaseCase(t, "rb_only", "CREATE TABLE seed (id INT PRIMARY KEY);", func(t *testing.T, x *rebaseCase) {
		x.grantCreate(t)
		mustExecC(t, x.sc, "CREATE TABLE a (id INT PRIMARY KEY, v INT)")
		mustExecC(t, x.sc, "CREATE TABLE b (id INT PRIMARY KEY, v INT)")
		mustExecC(t, x.sc, "INSERT INTO a VALUES (1, 1)")
		mustExecC(t, x.sc, "INSERT INTO b VALUES (1, 1)")
		x.rights(t, "SANDBOX PROMOTE FOR a")
		mustExecC(t, x.sc, "SANDBOX PROMOTE FOR a DRY RUN")
		x.untouched(t, "after a DRY RUN,")
		sum := diffSummary(t, x.sc, "SANDBOX DIFF SUMMARY")
		if sum[x.db+".a"].change != "created" || sum[x.db+".b"].change != "created" || len(sum) != 2 {
			t.Errorf("DIFF SUMMARY after a DRY RUN: %+v, want a and b created", sum)
		}
		x.promote(t, "SANDBOX PROMOTE FOR a")
		sum = diffSummary(t, x.sc, "SANDBOX DIFF SUMMARY")
		if got := sum[x.db+".b"]; got.change != "created" || got.ins != 1 || len(sum) != 1 {
			t.Errorf("DIFF SUMMARY after PROMOTE FOR a: %+v, want only b, created with its row", sum)
		}
		if got := x.registryKind(t, "b"); got != "created" {
			t.Errorf("the registry's kind of b, not promoted: %q, want created", got)
		}
	})
}
