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
	exec := func(qs ...string) func(*testing.T, *sql.Conn) {
		return func(t *testing.T, c *sql.Conn) {
			for _, q := range qs {
				mustExecC(t, c, q)
			}
		}
	}
	for _, tc := range []struct {
		name, db string
		setup    func(*testing.T, *sql.Conn) // before the statement is prepared
		prepare  string
		change   func(*testing.T, *sql.Conn) // before it runs
		what     string                      // what the run is
		msg      string                      // what f_write writes if it runs
	}{
		// One string by default; under NO_BACKSLASH_ESCAPES 'a\' ends
		// early and f_write is code. The insert forks sx.t: the plan is
		// stale.
		{name: "sql_mode", db: "sx", setup: exec(), prepare: `SELECT 'a\', sx.f_write(0x78) #'`,
			change: exec("SET sql_mode = 'NO_BACKSLASH_ESCAPES'", "INSERT INTO sx.t VALUES (10, 10)"),
			what:   "executing the statement read again under NO_BACKSLASH_ESCAPES", msg: "x"},
		// sx2.vh is a table, sx.vh a view calling f_write.
		{name: "current-database", db: "sx2", setup: exec(), prepare: "SELECT * FROM vh",
			change: exec("USE sx", "INSERT INTO sx.t VALUES (11, 11)"),
			what:   "executing the statement read again in database sx", msg: "via view"},
		// Two strings in gbk (0xBF 0x5C is one character, so the quote
		// after it ends the first); in utf8mb4 the backslash escapes that
		// quote and f_write is code.
		{name: "character-set", db: "sx", setup: exec("SET NAMES gbk"),
			prepare: "SELECT 1 FROM sx.t WHERE '\xbf\\' = ' OR sx.f_write(0x71) #'",
			change:  exec("SET NAMES utf8mb4", "INSERT INTO sx.t VALUES (12, 12)"),
			what:    "executing the statement read again in gbk", msg: "q"},
		// Nothing in the sandbox changes: the server prepares the statement
		// anew because production's table changed, reading it in the
		// character set of now.
		{name: "character-set-and-production-ddl", db: "sx", setup: exec("SET NAMES gbk"),
			prepare: "SELECT 1 FROM sx.t WHERE '\xbf\\' = ' OR sx.f_write(0x72) #'",
			change: func(t *testing.T, c *sql.Conn) {
				mustExecC(t, c, "SET NAMES utf8mb4")
				mustExecDB(t, root, "ALTER TABLE sx.t ADD COLUMN extra INT")
				t.Cleanup(func() { _, _ = root.Exec("ALTER TABLE sx.t DROP COLUMN extra") })
			},
			what: "executing the statement the server reads again in utf8mb4", msg: "r"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := conn(t, openDB(t, h.dsn(tc.db)))
			tc.setup(t, c)
			ps, err := c.PrepareContext(ctx, tc.prepare)
			if err != nil {
				t.Fatal(mysqlErr(err))
			}
			defer ps.Close()
			tc.change(t, c)
			rows, err := ps.QueryContext(ctx)
			if err == nil {
				rows.Close()
			}
			confinedOrRefused(ctx, t, c, err, tc.what, tc.msg)
		})
	}
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
