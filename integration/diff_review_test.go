package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// Cases a review of DIFF / EXPORT / PROMOTE found wrong: each export,
// applied to a copy of production, must give the sandbox's tables.
func TestDiffExportReviewCases(t *testing.T) {
	e := newDiffEnv(t, "transparent", true, nil)
	replicaRoot := openDB(t, e.replica.DSN(""))
	for _, c := range []struct {
		name, schema string
		steps        []string
		tables       []string
		note         string // a note the export must hold
	}{
		{name: "self-referencing rows", tables: []string{"sr"},
			schema: "CREATE TABLE sr (id INT PRIMARY KEY, parent INT NULL, FOREIGN KEY (parent) REFERENCES sr (id)); " +
				"INSERT INTO sr VALUES (1, NULL), (2, 1), (3, 2);",
			steps: []string{"DELETE FROM sr WHERE id = 3", "DELETE FROM sr WHERE id = 2", "INSERT INTO sr VALUES (31, NULL)", "INSERT INTO sr VALUES (30, 31)"}},
		{name: "keyless rows equal under the collation", tables: []string{"kl"},
			schema: "CREATE TABLE kl (name VARCHAR(10)); INSERT INTO kl VALUES ('abc'), ('ABC'), ('x');",
			steps:  []string{"DELETE FROM kl WHERE name = BINARY 'ABC'"}},
		{name: "an invalid date kept", tables: []string{"d"},
			schema: "SET SESSION sql_mode = 'ALLOW_INVALID_DATES'; CREATE TABLE d (id INT PRIMARY KEY, dt DATE, v INT); INSERT INTO d VALUES (1, '2020-02-30', 1);",
			steps:  []string{"UPDATE d SET v = 2 WHERE id = 1"}},
		{name: "a sequence used", tables: []string{"w"}, note: "sequence",
			schema: "CREATE SEQUENCE sq; CREATE TABLE w (id INT PRIMARY KEY, v INT); INSERT INTO w VALUES (1, 1);",
			steps:  []string{"SELECT NEXTVAL(sq)", "UPDATE w SET v = NEXTVAL(sq) WHERE id = 1"}},
		{name: "a primary key redefined", tables: []string{"pk2"},
			schema: "CREATE TABLE pk2 (id INT NOT NULL, v INT, PRIMARY KEY (id)); INSERT INTO pk2 VALUES (1, 1), (2, 2);",
			steps:  []string{"ALTER TABLE pk2 DROP PRIMARY KEY, ADD PRIMARY KEY (id) COMMENT 'pk'", "UPDATE pk2 SET v = 5 WHERE id = 1"}},
	} {
		for _, acct := range e.accts {
			t.Run(acct.name+"/"+c.name, func(t *testing.T) {
				db := fmt.Sprintf("drv_%s_%d", acct.short(), len(c.name))
				e.database(t, db, c.schema)
				sb := conn(t, openDB(t, acct.dsn(db, db)))
				for _, s := range c.steps {
					mustExecC(t, sb, s)
				}
				stmts := sandboxExport(t, sb, "SANDBOX EXPORT")
				text := strings.Join(stmts, ";\n")
				if c.note != "" && !strings.Contains(text, c.note) {
					t.Errorf("the export has no note of %q", c.note)
				}
				applyExport(t, e.replica, stmts)
				compareWithReplica(t, sb, replicaRoot, db, c.tables, "export")
				if t.Failed() {
					t.Logf("export:\n%s", text)
				}
			})
		}
	}
}

// TestDiffExportAfterProductionDropsAColumn: a table without a key that
// production altered since the fork is compared on the columns both have,
// and its export is written with them (it panicked, and each panic kept a
// side connection).
func TestDiffExportAfterProductionDropsAColumn(t *testing.T) {
	e := newDiffEnv(t, "transparent", false, nil)
	root := openDB(t, e.prod.DSN(""))
	for _, acct := range e.accts {
		t.Run(acct.name, func(t *testing.T) {
			db := "drvcol_" + acct.short()
			e.database(t, db, "CREATE TABLE kl2 (a INT, b INT); INSERT INTO kl2 VALUES (1, 1), (2, 2);")
			sb := conn(t, openDB(t, acct.dsn(db, db)))
			mustExecC(t, sb, "DELETE FROM kl2 WHERE a = 1")
			mustExecDB(t, root, "ALTER TABLE `"+db+"`.kl2 DROP COLUMN b")
			for range 10 { // more than the side connections
				stmts := sandboxExport(t, sb, "SANDBOX EXPORT")
				if want := "DELETE FROM `" + db + "`.`kl2` WHERE `a` <=> 1 LIMIT 1"; !strings.Contains(strings.Join(stmts, "\n"), want) {
					t.Fatalf("export lacks %q:\n%s", want, strings.Join(stmts, "\n"))
				}
			}
			mustExecC(t, sb, "UPDATE kl2 SET a = 5") // the pool still serves
		})
	}
}

// TestCaptureAddsNoLockWaits: two transactions of one sandbox change other
// rows of a captured table without waiting on each other, as on a copy:
// with innodb_lock_wait_timeout 0 a statement that would wait for a lock
// fails at once (1205) instead.
func TestCaptureAddsNoLockWaits(t *testing.T) {
	e := newDiffEnv(t, "transparent", false, nil)
	acct := e.accts[0]
	e.database(t, "drvlock", "CREATE TABLE lk (id INT PRIMARY KEY, v INT); INSERT INTO lk VALUES (1,1),(2,2),(3,3),(4,4),(5,5),(6,6),(7,7),(8,8),(9,9);")
	a := conn(t, openDB(t, acct.dsn("locks", "drvlock")))
	b := conn(t, openDB(t, acct.dsn("locks", "drvlock")))
	mustExecC(t, a, "UPDATE lk SET v = v WHERE id = 1") // forks it
	mustExecC(t, a, "SET SESSION innodb_lock_wait_timeout = 0")
	mustExecC(t, b, "SET SESSION innodb_lock_wait_timeout = 0")
	mustExecC(t, a, "BEGIN")
	mustExecC(t, a, "UPDATE lk SET v = 0 WHERE id = 2")
	mustExecC(t, b, "BEGIN")
	mustExecC(t, b, "UPDATE lk SET v = 0 WHERE id = 5")
	ctx := context.Background()
	if _, err := a.ExecContext(ctx, "UPDATE lk SET v = 0 WHERE id = 8"); err != nil {
		t.Fatalf("a second row of a: %v (1205: it waited for a lock b holds)", err)
	}
	if _, err := b.ExecContext(ctx, "UPDATE lk SET v = 0 WHERE id = 6"); err != nil {
		t.Fatalf("a second row of b: %v (1205: it waited for a lock a holds)", err)
	}
	mustExecC(t, a, "COMMIT")
	mustExecC(t, b, "COMMIT")
	if got := diffSummary(t, a, "SANDBOX DIFF SUMMARY")["drvlock.lk"]; got.upd != 4 {
		t.Errorf("DIFF SUMMARY: %+v, want 4 updated", got)
	}
}

// TestCaptureDDLOfALatin1Client: a latin1 client in a database whose name
// is not ASCII drops a column of a captured table and writes it again (the
// capture's DROP TRIGGER, sent in UTF-8 on its connection, named another
// database, and the next write failed with 1054).
func TestCaptureDDLOfALatin1Client(t *testing.T) {
	e := newDiffEnv(t, "transparent", false, nil)
	e.database(t, "dé", "CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT); INSERT INTO t VALUES (1, 1, 1), (2, 2, 2);")
	for _, acct := range e.accts {
		t.Run(acct.name, func(t *testing.T) {
			sb := conn(t, openDB(t, acct.dsn("", "")+"?charset=latin1"))
			mustExecC(t, sb, "SANDBOX CREATE lat1"+acct.short())
			mustExecC(t, sb, "USE `d\xe9`")
			mustExecC(t, sb, "UPDATE t SET a = 10 WHERE id = 1")
			mustExecC(t, sb, "ALTER TABLE t DROP COLUMN b")
			mustExecC(t, sb, "UPDATE t SET a = 20 WHERE id = 2")
			wantString(t, sb, "SELECT GROUP_CONCAT(a ORDER BY id) FROM t", "10,20", "the sandbox's t: %s")
		})
	}
}

// TestPromoteConflictOnAKeyInAnotherCase: production inserted the key the
// sandbox inserted, spelled in another case (the same key under a _ci
// collation): PROMOTE (FAIL) refuses it.
func TestPromoteConflictOnAKeyInAnotherCase(t *testing.T) {
	db, _ := env(t)
	e := newDiffEnv(t, "transparent", false, func(c *proxy.Config) { c.PromoteUser, c.PromotePassword = db.User, db.Password })
	e.database(t, "drvci", "CREATE TABLE ci (k VARCHAR(10) COLLATE utf8mb4_general_ci PRIMARY KEY, v INT); INSERT INTO ci VALUES ('a', 1);")
	root := openDB(t, db.DSN(""))
	acct := e.accts[1]
	sb := conn(t, openDB(t, acct.dsn("", "drvci")))
	mustExecC(t, sb, "INSERT INTO ci VALUES ('B', 2)")
	mustExecDB(t, root, "INSERT INTO drvci.ci VALUES ('b', 99)")
	_, err := sb.ExecContext(context.Background(), "SANDBOX PROMOTE")
	if err == nil || !strings.Contains(err.Error(), `PROMOTE refused: 1 rows`) || !strings.Contains(err.Error(), `{"k": "B"}`) {
		t.Fatalf("PROMOTE: %v, want the conflict on B refused", err)
	}
	if got := allRows(t, root, "SELECT k, v FROM drvci.ci ORDER BY k"); got != "a 1|b 99" {
		t.Errorf("production after the refused PROMOTE: %s", got)
	}
}

// TestCaptureBodyDDLKeepsTheTransaction: a CALL whose procedure holds DDL
// of a captured table (not run: IF 0) leaves the client's transaction open,
// as on a copy (the capture's DROP TRIGGER on its connection committed it).
func TestCaptureBodyDDLKeepsTheTransaction(t *testing.T) {
	e := newDiffEnv(t, "transparent", false, nil)
	e.database(t, "drvcall", "CREATE TABLE t9 (id INT PRIMARY KEY, v INT); INSERT INTO t9 VALUES (1, 1);"+
		"CREATE PROCEDURE maybe_alter(x INT) BEGIN IF x THEN ALTER TABLE t9 ADD COLUMN w INT; END IF; END;")
	acct := e.accts[1] // sees production's procedures
	sb := conn(t, openDB(t, acct.dsn("", "drvcall")))
	mustExecC(t, sb, "UPDATE t9 SET v = 2 WHERE id = 1")
	mustExecC(t, sb, "BEGIN")
	mustExecC(t, sb, "UPDATE t9 SET v = 100 WHERE id = 1")
	mustExecC(t, sb, "CALL maybe_alter(0)")
	mustExecC(t, sb, "ROLLBACK")
	wantString(t, sb, "SELECT v FROM t9 WHERE id = 1", "2", "after ROLLBACK the sandbox has v = %s, want 2 (the transaction was committed)")
}
