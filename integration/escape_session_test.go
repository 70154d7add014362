package integration

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/integration/testdb"
	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// sessionFixture makes production objects for the session-level escape
// tests, with an ALL PRIVILEGES proxy account in front: only the proxy
// keeps production unchanged.
func sessionFixture(t *testing.T) (*testdb.Server, *proxyHandle, *sql.DB) {
	t.Helper()
	db, _ := env(t)
	root := openDB(t, db.DSN("")+"?multiStatements=true")
	if _, err := root.Exec(`DROP DATABASE IF EXISTS sx; DROP DATABASE IF EXISTS sx2; CREATE DATABASE sx; CREATE DATABASE sx2;
CREATE TABLE sx.audit (id INT AUTO_INCREMENT PRIMARY KEY, msg VARCHAR(100));
CREATE TABLE sx.t (id INT PRIMARY KEY, v INT);
INSERT INTO sx.t VALUES (1, 1), (2, 2);
CREATE TABLE sx.my (a INT) ENGINE=MyISAM;
INSERT INTO sx.my VALUES (1), (2);
CREATE FUNCTION sx.f_write(m VARCHAR(100)) RETURNS INT MODIFIES SQL DATA BEGIN INSERT INTO sx.audit (msg) VALUES (m); RETURN 1; END;
CREATE VIEW sx.vh AS SELECT sx.f_write('via view') AS x;
CREATE TABLE sx2.vh (x INT);
INSERT INTO sx2.vh VALUES (7);`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = root.Exec("DROP DATABASE IF EXISTS sx; DROP DATABASE IF EXISTS sx2") })
	h := startTestProxy(t, db.Addr, db, func(c *proxy.Config) {
		c.Mode = "transparent"
		c.Sandbox.ReapInterval = 500 * time.Millisecond
	})
	return db, h, root
}

// confinedOrRefused checks a statement that reached a call of sx.f_write
// (writing msg) on connection c: refused by the proxy (err), or run with
// the sandbox's copy of the function, whose row the sandbox holds.
func confinedOrRefused(ctx context.Context, t *testing.T, c *sql.Conn, err error, what, msg string) {
	t.Helper()
	if err != nil {
		if !strings.Contains(mysqlErr(err), "sqlfork-proxy") {
			t.Errorf("%s: %v; want the proxy's refusal or a run in the sandbox", what, mysqlErr(err))
		}
		return
	}
	var n int
	if qerr := c.QueryRowContext(ctx, "SELECT COUNT(*) FROM sx.audit WHERE msg = ?", msg).Scan(&n); qerr != nil || n == 0 {
		t.Errorf("%s ran, but the sandbox's sx.audit has no %q (%d, %v): the call did not run the sandbox's copy", what, msg, n, qerr)
	}
}

func auditRows(t *testing.T, root *sql.DB) string {
	t.Helper()
	var n string
	if err := root.QueryRow("SELECT CONCAT(COUNT(*), ':', COALESCE(GROUP_CONCAT(msg), '')) FROM sx.audit").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPreparedStatementReadAgainWithNewSettings: the server reads a
// prepared statement's text again, with the settings of the moment, when
// it prepares it anew (after a table it uses changed). The proxy must then
// have read it with those settings too, or a text that was one string
// becomes code: the stored function that code calls runs as the sandbox's
// copy (its write in the sandbox), or the proxy refuses.
func TestPreparedStatementReadAgainWithNewSettings(t *testing.T) {
	_, h, root := sessionFixture(t)
	ctx := context.Background()
	before := auditRows(t, root)

	t.Run("sql_mode", func(t *testing.T) {
		c := conn(t, openDB(t, h.dsn("sx")))
		// One string by default; under NO_BACKSLASH_ESCAPES 'a\' ends
		// early and f_write is code.
		ps, err := c.PrepareContext(ctx, `SELECT 'a\', sx.f_write(0x78) #'`)
		if err != nil {
			t.Fatal(mysqlErr(err))
		}
		defer ps.Close()
		mustExecC(t, c, "SET sql_mode = 'NO_BACKSLASH_ESCAPES'")
		mustExecC(t, c, "INSERT INTO sx.t VALUES (10, 10)") // forks sx.t: the plan is stale
		rows, err := ps.QueryContext(ctx)
		if err == nil {
			rows.Close()
		}
		confinedOrRefused(ctx, t, c, err, "executing the statement read again under NO_BACKSLASH_ESCAPES", "x")
	})
	t.Run("current-database", func(t *testing.T) {
		c := conn(t, openDB(t, h.dsn("sx2")))
		ps, err := c.PrepareContext(ctx, "SELECT * FROM vh") // sx2.vh: a table
		if err != nil {
			t.Fatal(mysqlErr(err))
		}
		defer ps.Close()
		mustExecC(t, c, "USE sx") // sx.vh: a view calling f_write
		mustExecC(t, c, "INSERT INTO sx.t VALUES (11, 11)")
		rows, err := ps.QueryContext(ctx)
		if err == nil {
			rows.Close()
		}
		confinedOrRefused(ctx, t, c, err, "executing the statement read again in database sx", "via view")
	})
	t.Run("character-set", func(t *testing.T) {
		c := conn(t, openDB(t, h.dsn("sx")))
		// Two strings in gbk (0xBF 0x5C is one character, so the quote
		// after it ends the first); in utf8mb4 the backslash escapes that
		// quote and f_write is code.
		mustExecC(t, c, "SET NAMES gbk")
		ps, err := c.PrepareContext(ctx, "SELECT 1 FROM sx.t WHERE '\xbf\\' = ' OR sx.f_write(0x71) #'")
		if err != nil {
			t.Fatal(mysqlErr(err))
		}
		defer ps.Close()
		mustExecC(t, c, "SET NAMES utf8mb4")
		mustExecC(t, c, "INSERT INTO sx.t VALUES (12, 12)")
		rows, err := ps.QueryContext(ctx)
		if err == nil {
			rows.Close()
		}
		confinedOrRefused(ctx, t, c, err, "executing the statement read again in gbk", "q")
	})
	t.Run("character-set-and-production-ddl", func(t *testing.T) {
		// Nothing in the sandbox changes: the server prepares the statement
		// anew because production's table changed, reading it in the
		// character set of now.
		c := conn(t, openDB(t, h.dsn("sx")))
		mustExecC(t, c, "SET NAMES gbk")
		ps, err := c.PrepareContext(ctx, "SELECT 1 FROM sx.t WHERE '\xbf\\' = ' OR sx.f_write(0x72) #'")
		if err != nil {
			t.Fatal(mysqlErr(err))
		}
		defer ps.Close()
		mustExecC(t, c, "SET NAMES utf8mb4")
		if _, err := root.Exec("ALTER TABLE sx.t ADD COLUMN extra INT"); err != nil {
			t.Fatal(err)
		}
		defer func() { _, _ = root.Exec("ALTER TABLE sx.t DROP COLUMN extra") }()
		rows, err := ps.QueryContext(ctx)
		if err == nil {
			rows.Close()
		}
		confinedOrRefused(ctx, t, c, err, "executing the statement the server reads again in utf8mb4", "r")
	})
	if after := auditRows(t, root); after != before {
		t.Errorf("production sx.audit changed: %s -> %s", before, after)
	}
}

// TestTransparentNeverOutsideSandbox: a transparent session that cannot get
// a new sandbox (--max-sandboxes reached) must refuse, never run on
// production.
func TestTransparentNeverOutsideSandbox(t *testing.T) {
	db, _, root := sessionFixture(t)
	h := startTestProxy(t, db.Addr, db, func(c *proxy.Config) {
		c.Mode = "transparent"
		c.Sandbox.MaxSandboxes = 1
		c.Sandbox.ReapInterval = 500 * time.Millisecond
	})
	before := auditRows(t, root)
	c := conn(t, openDB(t, h.dsn("sx")))
	mustExecC(t, c, "SANDBOX KEEP TTL 1h")
	defer mustExecC(t, c, "SANDBOX DISCARD")
	if _, err := c.ExecContext(context.Background(), "SANDBOX DETACH"); err == nil {
		t.Fatal("SANDBOX DETACH at the sandbox limit succeeded; want an error")
	}
	if _, err := c.ExecContext(context.Background(), "INSERT INTO sx.audit (msg) VALUES ('after detach')"); err != nil {
		t.Fatalf("the session lost its sandbox: %s", mysqlErr(err))
	}
	if after := auditRows(t, root); after != before {
		t.Errorf("production sx.audit changed: %s -> %s", before, after)
	}
}

// TestTableLockingReadsDoNotBlockProduction: a read of a MyISAM table takes
// a table lock that blocks its writers while the read runs; in a sandbox
// the table is forked first, so a production writer does not wait.
func TestTableLockingReadsDoNotBlockProduction(t *testing.T) {
	db, h, _ := sessionFixture(t)
	ctx := context.Background()
	c := conn(t, openDB(t, h.dsn("sx")))
	w := writerConn(t, db)
	done := make(chan error, 1)
	go func() {
		rows, err := c.QueryContext(ctx, "SELECT SLEEP(2), a FROM sx.my LIMIT 1")
		if err == nil {
			for rows.Next() {
			}
			rows.Close()
		}
		done <- err
	}()
	// Wait until the read is running (sleeping inside the statement).
	for deadline := time.Now().Add(10 * time.Second); ; {
		var n int
		if err := w.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT SLEEP(2), a FROM %'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the sandbox's read never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The writer gives up after a second of waiting for a lock; the read
	// holds the table for two.
	start := time.Now()
	if _, err := w.ExecContext(ctx, "UPDATE sx.my SET a = a WHERE a = 1"); err != nil {
		t.Fatalf("the production writer was blocked by a sandbox's read of a MyISAM table: %s", mysqlErr(err))
	}
	t.Logf("production write took %s while the sandbox read the table", time.Since(start))
	if err := <-done; err != nil {
		t.Fatalf("sandbox read: %s", mysqlErr(err))
	}
}
