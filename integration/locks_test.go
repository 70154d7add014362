package integration

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/integration/testdb"
	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// lockForm is a way a session reads rows under locks: setup runs first
// (outside any transaction), then, unless noTrx, BEGIN and stmts, and the
// locks are held until end.
type lockForm struct {
	name  string
	setup []string
	stmts []string
	noTrx bool
	end   string
}

// lockForms are the statements that lock the rows they read on a direct
// connection (InnoDB at REPEATABLE READ, or SERIALIZABLE), or the table
// (LOCK TABLES … READ).
var lockForms = []lockForm{
	{name: "select-for-update", stmts: []string{"SELECT * FROM lk.t WHERE id = 1 FOR UPDATE"}},
	{name: "lock-in-share-mode", stmts: []string{"SELECT * FROM lk.t WHERE id = 1 LOCK IN SHARE MODE"}},
	{name: "for-update-nowait", stmts: []string{"SELECT * FROM lk.t WHERE id = 1 FOR UPDATE NOWAIT"}},
	{name: "for-update-skip-locked", stmts: []string{"SELECT * FROM lk.t WHERE id = 1 FOR UPDATE SKIP LOCKED"}},
	{name: "insert-select", stmts: []string{"INSERT INTO lk.log (v) SELECT v FROM lk.t WHERE id = 1"}},
	{name: "replace-select", stmts: []string{"REPLACE INTO lk.log (id, v) SELECT id, v FROM lk.t WHERE id = 1"}},
	{name: "update-subquery", stmts: []string{"UPDATE lk.log SET v = v + 1 WHERE id IN (SELECT id FROM lk.t WHERE id = 1)"}},
	{name: "update-join", stmts: []string{"UPDATE lk.log JOIN lk.t ON lk.t.id = lk.log.id SET lk.log.v = lk.t.v"}},
	{name: "delete-subquery", stmts: []string{"DELETE FROM lk.log WHERE id IN (SELECT id FROM lk.t WHERE id = 1)"}},
	{name: "set-subquery", stmts: []string{"SET @v = (SELECT v FROM lk.t WHERE id = 1)"}},
	{name: "do-subquery", stmts: []string{"DO (SELECT v FROM lk.t WHERE id = 1)"}},
	{name: "insert-values-subquery", stmts: []string{"INSERT INTO lk.log (v) VALUES ((SELECT v FROM lk.t WHERE id = 1))"}},
	{name: "serializable-session", setup: []string{"SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE"},
		stmts: []string{"SELECT * FROM lk.t WHERE id = 1"}},
	{name: "serializable-next-transaction", setup: []string{"SET TRANSACTION ISOLATION LEVEL SERIALIZABLE"},
		stmts: []string{"SELECT * FROM lk.t WHERE id = 1"}},
	// Statements that use no table leave SET TRANSACTION pending (MariaDB
	// 10.11).
	{name: "serializable-next-transaction-after-table-free-statements",
		setup: []string{"SET TRANSACTION ISOLATION LEVEL SERIALIZABLE", "SELECT 1", "SET @z = 1", "SELECT 2"},
		stmts: []string{"SELECT * FROM lk.t WHERE id = 1"}},
	{name: "lock-tables-read", noTrx: true, stmts: []string{"LOCK TABLES lk.t READ"}, end: "UNLOCK TABLES"},
}

// lockFixture makes the production tables the lock tests read (readable by
// the least-privilege account when leastPrivilege is set).
func lockFixture(t testing.TB, db *testdb.Server, leastPrivilege bool) {
	t.Helper()
	root := openDB(t, db.DSN("")+"?multiStatements=true")
	if _, err := root.Exec(`DROP DATABASE IF EXISTS lk; CREATE DATABASE lk;
CREATE TABLE lk.t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB;
INSERT INTO lk.t VALUES (1, 10), (2, 20), (3, 30);
CREATE TABLE lk.log (id INT AUTO_INCREMENT PRIMARY KEY, v INT) ENGINE=InnoDB;
INSERT INTO lk.log VALUES (1, 0)`); err != nil {
		t.Fatal(err)
	}
	if !leastPrivilege {
		return
	}
	if _, err := root.Exec("GRANT SELECT ON lk.* TO '" + sandboxUser + "'@'%'"); err != nil {
		t.Fatal(err)
	}
}

// hold runs f's statements on c and returns what ends them.
func (f lockForm) hold(ctx context.Context, c *sql.Conn) (end func(), err error) {
	for _, q := range f.setup {
		if _, err := c.ExecContext(ctx, q); err != nil {
			return nil, fmt.Errorf("%s: %s", q, mysqlErr(err))
		}
	}
	if !f.noTrx {
		if _, err := c.ExecContext(ctx, "BEGIN"); err != nil {
			return nil, err
		}
	}
	for _, q := range f.stmts {
		rows, err := c.QueryContext(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("%s: %s", q, mysqlErr(err))
		}
		for rows.Next() {
		}
		rows.Close()
	}
	end = func() {
		q := f.end
		if q == "" {
			q = "ROLLBACK"
		}
		_, _ = c.ExecContext(ctx, q)
		_, _ = c.ExecContext(ctx, "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
	}
	return end, nil
}

// productionWrite updates the row every lock form reads, on a direct
// connection that gives up on a lock after a second, and puts it back.
func productionWrite(ctx context.Context, w *sql.Conn) (time.Duration, error) {
	start := time.Now()
	if _, err := w.ExecContext(ctx, "UPDATE lk.t SET v = v + 1 WHERE id = 1"); err != nil {
		return time.Since(start), err
	}
	took := time.Since(start)
	_, err := w.ExecContext(ctx, "UPDATE lk.t SET v = v - 1 WHERE id = 1")
	return took, err
}

func writerConn(t testing.TB, db *testdb.Server) *sql.Conn {
	t.Helper()
	w, err := openDB(t, db.DSN("")).Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	if _, err := w.ExecContext(context.Background(), "SET SESSION innodb_lock_wait_timeout = 1, lock_wait_timeout = 1"); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestSandboxLocksNeverBlockProduction holds each kind of locking read in a
// sandbox — with the proxy's account holding ALL PRIVILEGES and with the
// least-privilege one — and checks that a production writer of the rows
// read is not blocked: it gives up after a second of waiting for a lock,
// so a lock taken on production makes it fail. The control case shows the
// same reads on a direct connection do block it.
func TestSandboxLocksNeverBlockProduction(t *testing.T) {
	db, least := sandboxProxy(t, "transparent", nil)
	all := startTestProxy(t, db.Addr, db, func(c *proxy.Config) { c.Mode = "transparent" })
	lockFixture(t, db, true)
	ctx := context.Background()
	w := writerConn(t, db)
	before := checksum(t, db, "lk.t") + checksum(t, db, "lk.log")

	t.Run("control-direct-connection-blocks", func(t *testing.T) {
		c := conn(t, openDB(t, db.DSN("")))
		for _, f := range []lockForm{lockForms[0], lockForms[4], lockForms[len(lockForms)-1]} {
			end, err := f.hold(ctx, c)
			if err != nil {
				t.Fatalf("%s: %v", f.name, err)
			}
			if _, err := productionWrite(ctx, w); err == nil {
				t.Errorf("%s on a direct connection did not block the writer: the check cannot see blocking", f.name)
			}
			end()
		}
	})
	for _, acct := range []struct {
		name string
		dsn  string
	}{{"all-privileges", all.dsn("")}, {"least-privilege", least.userDSN(sandboxUser, "")}} {
		for _, f := range lockForms {
			t.Run(acct.name+"/"+f.name, func(t *testing.T) {
				c := conn(t, openDB(t, acct.dsn)) // a new connection: a new sandbox
				end, err := f.hold(ctx, c)
				if err != nil {
					t.Fatal(err)
				}
				defer end()
				took, err := productionWrite(ctx, w)
				if err != nil {
					t.Fatalf("the production writer was blocked by the sandbox's %s: %s (after %s)", f.name, mysqlErr(err), took)
				}
				t.Logf("production write took %s", took)
			})
		}
	}
	// A statement prepared before the session turned SERIALIZABLE must not
	// keep reading production unforked.
	t.Run("prepared-before-serializable", func(t *testing.T) {
		c := conn(t, openDB(t, all.dsn("")))
		ps, err := c.PrepareContext(ctx, "SELECT v FROM lk.t WHERE id = ?")
		if err != nil {
			t.Fatal(err)
		}
		defer ps.Close()
		mustExecC(t, c, "SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE")
		defer mustExecC(t, c, "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
		mustExecC(t, c, "BEGIN")
		defer mustExecC(t, c, "ROLLBACK")
		var v int
		if err := ps.QueryRowContext(ctx, 1).Scan(&v); err != nil {
			t.Fatal(mysqlErr(err))
		}
		if took, err := productionWrite(ctx, w); err != nil {
			t.Fatalf("the production writer was blocked by a prepared read under SERIALIZABLE: %s (after %s)", mysqlErr(err), took)
		}
	})
	if after := checksum(t, db, "lk.t") + checksum(t, db, "lk.log"); after != before {
		t.Errorf("production changed: %s -> %s", before, after)
	}
}

// TestExplicitDenyNeverLocksProduction: in explicit mode with
// --production-writes=deny (the default), a session outside any sandbox
// reads production directly; every locking read form is refused there
// (1290), and the production writer is never blocked.
func TestExplicitDenyNeverLocksProduction(t *testing.T) {
	db, _ := env(t)
	h := startTestProxy(t, db.Addr, db, func(c *proxy.Config) { c.Mode = "explicit" })
	lockFixture(t, db, false)
	ctx := context.Background()
	w := writerConn(t, db)
	for _, f := range lockForms {
		t.Run(f.name, func(t *testing.T) {
			c := conn(t, openDB(t, h.dsn("")))
			end, err := f.hold(ctx, c)
			if err == nil {
				defer end()
				t.Errorf("%s outside a sandbox was let through, want 1290", f.name)
			} else if !strings.Contains(err.Error(), "1290") {
				t.Errorf("%s outside a sandbox: %v, want 1290", f.name, err)
			}
			if took, err := productionWrite(ctx, w); err != nil {
				t.Fatalf("the production writer was blocked: %s (after %s)", mysqlErr(err), took)
			}
			_, _ = c.ExecContext(ctx, "ROLLBACK")
		})
	}
	// Plain reads stay allowed.
	c := conn(t, openDB(t, h.dsn("")))
	wantString(t, c, "SELECT v FROM lk.t WHERE id = 2", "20", "plain read outside a sandbox: %q, want 20")
}

// BenchmarkProductionWriteUnderSandboxLock times a production write of a
// row that a sandbox holds under SELECT … FOR UPDATE (…/sandbox-lock), and
// the same write with no sandbox at all (…/no-lock): the proxy forks before
// the locking read, so the two should not differ.
func BenchmarkProductionWriteUnderSandboxLock(b *testing.B) {
	db, _ := env(b)
	h := startTestProxy(b, db.Addr, db, func(c *proxy.Config) { c.Mode = "transparent" })
	lockFixture(b, db, false)
	ctx := context.Background()
	w := writerConn(b, db)
	bench := func(b *testing.B) {
		for b.Loop() {
			if _, err := productionWrite(ctx, w); err != nil {
				b.Fatal(mysqlErr(err))
			}
		}
	}
	b.Run("no-lock", bench)
	b.Run("sandbox-lock", func(b *testing.B) {
		c, err := openDB(b, h.dsn("")).Conn(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		end, err := lockForms[0].hold(ctx, c)
		if err != nil {
			b.Fatal(err)
		}
		defer end()
		bench(b)
	})
}
