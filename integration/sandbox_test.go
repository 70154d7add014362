package integration

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/integration/seekdbshim"
	"github.com/sqlfork/sqlfork-proxy/integration/testdb"
	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// sandboxUser is an upstream account with only SELECT on production
// schemas and all privileges on the proxy's own: the database itself then
// guarantees production is never written.
const sandboxUser, sandboxPassword = "sbx", "sbx-pw"

var sandboxUserOnce sync.Once

// leastPrivilegeEnv returns the shared MariaDB (env's) with the
// least-privilege account made on it.
func leastPrivilegeEnv(t *testing.T) *testdb.Server {
	t.Helper()
	db, _ := env(t)
	var err error
	sandboxUserOnce.Do(func() {
		root := openDB(t, db.DSN("")+"?multiStatements=true")
		_, err = root.Exec(fmt.Sprintf(`CREATE USER IF NOT EXISTS '%[1]s'@'%%' IDENTIFIED BY '%[2]s';
GRANT SELECT, SHOW VIEW ON app.* TO '%[1]s'@'%%';
GRANT SELECT, SHOW VIEW ON other.* TO '%[1]s'@'%%';
GRANT SELECT ON mysql.func TO '%[1]s'@'%%';
GRANT ALL PRIVILEGES ON `+"`\\_sqlfork%%`"+`.* TO '%[1]s'@'%%';`, sandboxUser, sandboxPassword))
	})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// readOnlyDatabase makes the empty database name on root's server, which
// the proxy's least-privilege account may read (SELECT, SHOW VIEW, as on
// production's schemas) but not write; it is dropped when the test ends.
func readOnlyDatabase(t *testing.T, root *sql.DB, name string) {
	t.Helper()
	setUp(t, root, []string{"DROP DATABASE IF EXISTS " + name, "CREATE DATABASE " + name,
		"GRANT SELECT, SHOW VIEW ON " + name + ".* TO '" + sandboxUser + "'@'%'"}, "DROP DATABASE IF EXISTS "+name)
}

// setUp runs the statements of setup on root, failing the test at the
// first error, and those of teardown (their errors ignored) when the test
// ends.
func setUp(t *testing.T, root *sql.DB, setup []string, teardown ...string) {
	t.Helper()
	for _, q := range setup {
		mustExecDB(t, root, q)
	}
	t.Cleanup(func() {
		for _, q := range teardown {
			_, _ = root.Exec(q)
		}
	})
}

// sandboxProxy starts a proxy in the given mode logging in upstream with
// the least-privilege account.
func sandboxProxy(t *testing.T, mode string, mutate func(*proxy.Config)) (*testdb.Server, *proxyHandle) {
	t.Helper()
	db := leastPrivilegeEnv(t)
	h := startTestProxy(t, db.Addr, db, func(c *proxy.Config) {
		c.Mode = mode
		c.UpstreamUser, c.UpstreamPassword = sandboxUser, sandboxPassword
		c.Sandbox.ReapInterval = 500 * time.Millisecond
		if mutate != nil {
			mutate(c)
		}
	})
	return db, h
}

func (h *proxyHandle) userDSN(user, db string, params ...string) string {
	return withParams(fmt.Sprintf("%s:%s@tcp(%s)/%s", user, sandboxPassword, h.addr, db), params)
}

// appConn is a connection through h to app as the least-privilege
// account's proxy user (sandboxUser).
func (h *proxyHandle) appConn(t *testing.T) *sql.Conn {
	t.Helper()
	return conn(t, openDB(t, h.userDSN(sandboxUser, "app")))
}

func conn(t *testing.T, db *sql.DB) *sql.Conn {
	t.Helper()
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func mustExecC(t *testing.T, c interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, q string, args ...any) sql.Result {
	t.Helper()
	r, err := c.ExecContext(context.Background(), q, args...)
	if err != nil {
		t.Fatalf("%s: %s", q, mysqlErr(err))
	}
	return r
}

func queryString(t *testing.T, c interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, q string, args ...any) string {
	t.Helper()
	var s sql.NullString
	if err := c.QueryRowContext(context.Background(), q, args...).Scan(&s); err != nil {
		t.Fatalf("%s: %s", q, mysqlErr(err))
	}
	return s.String
}

// wantString checks that q reads want on c; if not, the test fails with
// format, which has one verb for the value read.
func wantString(t *testing.T, c interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, q, want, format string) {
	t.Helper()
	if got := queryString(t, c, q); got != want {
		t.Errorf(format, got)
	}
}

func checksum(t *testing.T, db *testdb.Server, table string) string {
	t.Helper()
	root := openDB(t, db.DSN(""))
	var name string
	var sum sql.NullInt64
	if err := root.QueryRow("CHECKSUM TABLE "+table).Scan(&name, &sum); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(sum.Int64, sum.Valid)
}

func sandboxSchemas(t *testing.T, root *sql.DB) []string {
	t.Helper()
	return column(t, root, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE '\\_sqlfork\\_%' AND SCHEMA_NAME NOT IN ('_sqlfork_meta', '_sqlfork_production') ORDER BY 1")
}

func TestSandboxTransparent(t *testing.T) {
	db, h := sandboxProxy(t, "transparent", nil)
	before := checksum(t, db, "app.users")
	pool := openDB(t, h.userDSN(sandboxUser, "app"))
	c1 := conn(t, pool)

	mustExecC(t, c1, "UPDATE users SET score = 99 WHERE name = 'alice'")
	wantString(t, c1, "SELECT score FROM users WHERE name = 'alice'", "99.00", "sandbox sees score %s, want its own write 99.00")
	r := mustExecC(t, c1, "INSERT INTO app.users (name) VALUES ('dave')")
	if id, _ := r.LastInsertId(); id != 4 {
		t.Errorf("insert id %d, want 4 (AUTO_INCREMENT carried over)", id)
	}
	wantString(t, c1, "SELECT COUNT(*) FROM users u JOIN other.things t ON t.id = 1", "4", "join count %s, want 4")
	// Production and other sessions are untouched.
	if after := checksum(t, db, "app.users"); after != before {
		t.Errorf("production checksum changed: %s -> %s", before, after)
	}
	c2 := conn(t, pool)
	wantString(t, c2, "SELECT score FROM users WHERE name = 'alice'", "10.50", "another session sees %s, want production's 10.50")

	// DDL stays in the sandbox.
	mustExecC(t, c1, "CREATE TABLE scratch (id INT PRIMARY KEY, v TEXT)")
	mustExecC(t, c1, "INSERT INTO scratch VALUES (1, 'x')")
	wantString(t, c1, "SELECT v FROM app.scratch", "x", "sandbox table reads %q")
	mustExecC(t, c1, "ALTER TABLE users ADD COLUMN note VARCHAR(10)")
	mustExecC(t, c1, "UPDATE users SET note = 'n' WHERE id = 1")
	mustExecC(t, c1, "TRUNCATE TABLE other.things")
	wantString(t, c1, "SELECT COUNT(*) FROM other.things", "0", "truncated fork has %s rows")
	// A write after TRUNCATE uses the (empty) fork: it must not fork again.
	mustExecC(t, c1, "INSERT INTO other.things VALUES (9, 'nine')")
	wantString(t, c1, "SELECT GROUP_CONCAT(id) FROM other.things", "9", "after TRUNCATE and INSERT the sandbox holds ids %q, want 9")
	mustExecC(t, c1, "DROP TABLE scratch")
	_, err := c1.ExecContext(context.Background(), "SELECT * FROM scratch")
	if e := mysqlErr(err); !strings.HasPrefix(e, "1146") || strings.Contains(e, "_sqlfork") {
		t.Errorf("dropped sandbox table: %s, want 1146 naming app.scratch", e)
	}
	root := openDB(t, db.DSN(""))
	wantString(t, root, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'app' AND TABLE_NAME = 'scratch'", "0", "CREATE TABLE in the sandbox reached production: %s tables app.scratch")
	wantString(t, root, "SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'app' AND TABLE_NAME = 'users' AND COLUMN_NAME = 'note'", "0", "ALTER TABLE in the sandbox reached production: %s columns app.users.note")
	wantString(t, root, "SELECT COUNT(*) FROM other.things", "2", "TRUNCATE reached production: %s rows left")

	// Refusals, with errors that say why.
	for q, want := range map[string]string{
		"DROP DATABASE mysql":                   "1290",
		"SELECT * FROM _sqlfork_meta.sandboxes": "1044",
		// The sandbox has no procedure of that name, and production's,
		// which never run in a sandbox, are invisible to the
		// least-privilege account: the server's 1305.
		"CALL two_results()":                     "1305",
		"GRANT SELECT ON app.* TO 'x'@'%'":       "1290",
		"SANDBOX FROB":                           "1064",
		"SET GLOBAL max_connections = 10":        "1290",
		"SELECT * FROM `_sqlfork_meta`.`tables`": "1044",
	} {
		_, err := c1.ExecContext(context.Background(), q)
		if e := mysqlErr(err); !strings.HasPrefix(e, want) {
			t.Errorf("%s: %s, want %s", q, e, want)
		}
	}

	if n := h.metric(t, "sqlfork_sandbox_refusals_total", map[string]string{"code": "1290"}); n < 3 {
		t.Errorf("sqlfork_sandbox_refusals_total{code=1290} = %v, want >= 3", n)
	}
	for _, c := range []struct {
		class, outcome string
		min            float64
	}{{"write", "ok", 3}, {"ddl", "ok", 4}, {"read", "ok", 3}, {"ddl", "refused", 1}, {"read", "error", 1}} {
		if n := h.metric(t, "sqlfork_statements_total", map[string]string{"class": c.class, "outcome": c.outcome}); n < c.min {
			t.Errorf("sqlfork_statements_total{class=%s,outcome=%s} = %v, want >= %v", c.class, c.outcome, n, c.min)
		}
	}
	if n := h.metric(t, "sqlfork_rewrite_duration_seconds", nil); n < 10 {
		t.Errorf("sqlfork_rewrite_duration_seconds has %v samples", n)
	}
	// STATUS lists the sandbox's tables.
	rows, err := c1.QueryContext(context.Background(), "SANDBOX STATUS")
	if err != nil {
		t.Fatal(mysqlErr(err))
	}
	tables := map[string]string{}
	for rows.Next() {
		var id, name, state, mode, owner, conns, changes string
		var created, expires, promoted, table, tstate, trows, tbytes sql.NullString
		if err := rows.Scan(&id, &name, &state, &mode, &owner, &created, &expires, &conns, &changes, &promoted, &table, &tstate, &trows, &tbytes); err != nil {
			t.Fatal(err)
		}
		tables[table.String] = tstate.String
		if owner != sandboxUser || state != "active" || changes != "unpromoted" || promoted.Valid {
			t.Errorf("status: owner %q state %q changes %q promoted %v", owner, state, changes, promoted)
		}
	}
	rows.Close()
	if tables["app.users"] != "fork" || tables["app.scratch"] != "dropped" || tables["other.things"] != "schema" {
		t.Errorf("status tables = %v", tables)
	}
	if after := checksum(t, db, "app.users"); after != before {
		t.Errorf("production checksum changed: %s -> %s", before, after)
	}

	// The last connection out discards an unkept sandbox.
	if len(sandboxSchemas(t, root)) == 0 {
		t.Fatal("no sandbox schemas while the sandbox is alive")
	}
	c1.Close()
	c2.Close()
	pool.Close() // no connection is left in the sandbox
	testkit.Eventually(t, "sandbox schemas dropped", func() bool { return len(sandboxSchemas(t, root)) == 0 })
}

// concurrently runs f(0) … f(n-1) at once and fails the test with any
// error they return once all are done.
func concurrently(t *testing.T, n int, f func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- f(i)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(mysqlErr(err))
		}
	}
}

func TestSandboxPooledTagForksOnce(t *testing.T) {
	_, h := sandboxProxy(t, "transparent", nil)
	pool := openDB(t, h.userDSN(sandboxUser+"+pooltest", "app"))
	pool.SetMaxOpenConns(16)
	concurrently(t, 16, func(i int) error {
		_, err := pool.Exec("INSERT INTO users (name) VALUES (?)", fmt.Sprintf("pool-%d", i))
		return err
	})
	if n := h.srv.Sandboxes().Forks(); n != 1 {
		t.Errorf("16 concurrent writers forked app.users %d times, want once", n)
	}
	// A copy, or a lazy fork where the suite forces them (every prepared
	// write may fork lazily).
	copies := h.metric(t, "sqlfork_forks_total", map[string]string{"strategy": "copy", "kind": "full"})
	if n := copies + h.metric(t, "sqlfork_forks_total", map[string]string{"strategy": "lazy", "kind": "full"}); n != 1 {
		t.Errorf("sqlfork_forks_total = %v, want 1", n)
	}
	if n := h.metric(t, "sqlfork_sandboxes", map[string]string{"state": "active"}); n != 1 {
		t.Errorf("sqlfork_sandboxes = %v, want 1", n)
	}
	wantString(t, pool, "SELECT COUNT(*) FROM users WHERE name LIKE 'pool-%'", "16", "pool sees %s rows, want 16")
}

func TestSandboxKeepAndAttachFromAnotherProxy(t *testing.T) {
	db, a := sandboxProxy(t, "explicit", nil)
	ca := a.appConn(t)
	if _, err := ca.ExecContext(context.Background(), "UPDATE users SET score = 1"); !strings.HasPrefix(mysqlErr(err), "1290") {
		t.Fatalf("explicit mode outside a sandbox: %s, want 1290", mysqlErr(err))
	}
	// Dynamic SQL cannot slip a write past explicit mode either.
	_, err1 := ca.ExecContext(context.Background(), "PREPARE s FROM 'DELETE FROM users'")
	_, err2 := ca.ExecContext(context.Background(), "EXECUTE s")
	if !strings.HasPrefix(mysqlErr(err1), "1290") && !strings.HasPrefix(mysqlErr(err2), "1290") {
		t.Errorf("PREPARE/EXECUTE of a DELETE outside a sandbox: %q, %q; want 1290", mysqlErr(err1), mysqlErr(err2))
	}
	if got := queryString(t, openDB(t, db.DSN("")), "SELECT COUNT(*) FROM app.users"); got != "3" {
		t.Fatalf("production users: %s rows", got)
	}
	mustExecC(t, ca, "SANDBOX CREATE keeper TTL 1h")
	mustExecC(t, ca, "UPDATE users SET score = 42 WHERE name = 'bob'")

	root := openDB(t, db.DSN(""))
	b := startTestProxy(t, db.Addr, db, func(c *proxy.Config) {
		c.Mode = "explicit"
		c.UpstreamUser, c.UpstreamPassword = sandboxUser, sandboxPassword
	})
	a.stop() // the first proxy goes away; the kept sandbox stays
	cb := b.appConn(t)
	wantString(t, cb, "SELECT score FROM users WHERE name = 'bob'", "-3.25", "before ATTACH: %s, want production's -3.25")
	mustExecC(t, cb, "SANDBOX ATTACH keeper")
	wantString(t, cb, "SELECT score FROM users WHERE name = 'bob'", "42.00", "after ATTACH through another proxy: %s, want 42.00")
	mustExecC(t, cb, "SANDBOX DISCARD")
	wantString(t, cb, "SELECT score FROM users WHERE name = 'bob'", "-3.25", "after DISCARD: %s, want production's -3.25")
	if s := sandboxSchemas(t, root); len(s) != 0 {
		t.Errorf("schemas left after DISCARD: %v", s)
	}
}

func TestSandboxForkMidTransaction(t *testing.T) {
	_, h := sandboxProxy(t, "transparent", nil)
	pool := openDB(t, h.userDSN(sandboxUser+"+midtrx", "app"))
	c1, c2 := conn(t, pool), conn(t, pool)
	// A transaction that has only read is restarted past the fork.
	mustExecC(t, c1, "BEGIN")
	if got := queryString(t, c1, "SELECT score FROM users WHERE name = 'carol'"); got != "" {
		t.Fatalf("carol's score %q", got)
	}
	mustExecC(t, c1, "UPDATE users SET score = 7 WHERE name = 'carol'")
	wantString(t, c1, "SELECT score FROM users WHERE name = 'carol'", "7.00", "in the transaction after the fork: %q, want 7.00")
	mustExecC(t, c1, "COMMIT")
	// A transaction that has written and read (its read view: from then
	// on it cannot see a table made later), when another connection forks
	// a table it then uses, is rolled back and replayed by the proxy in a
	// new transaction, its writes checked to have the same effect.
	mustExecC(t, c1, "BEGIN")
	mustExecC(t, c1, "UPDATE users SET score = 8 WHERE name = 'carol'")
	readView(t, c1)
	mustExecC(t, c2, "UPDATE other.things SET label = 'uno' WHERE id = 1")
	wantString(t, c1, "SELECT label FROM other.things WHERE id = 1", "uno", "after the replay: %q, want uno")
	wantString(t, c1, "SELECT score FROM users WHERE name = 'carol'", "8.00", "the replayed transaction lost its write: score %q, want 8.00")
	mustExecC(t, c1, "COMMIT")
	wantString(t, c2, "SELECT score FROM users WHERE name = 'carol'", "8.00", "after COMMIT another connection sees %q, want 8.00")
	// One that has only written holds no read view yet: it uses a table
	// another connection made after it began as it is, as directly — no
	// restart, no replay.
	before := restarts(t, h)
	mustExecC(t, c1, "BEGIN")
	mustExecC(t, c1, "UPDATE users SET score = 9 WHERE name = 'carol'")
	mustExecC(t, c2, "CREATE TABLE app.fresh6 (id INT PRIMARY KEY)")
	mustExecC(t, c1, "INSERT INTO app.fresh6 VALUES (1)")
	wantString(t, c1, "SELECT COUNT(*) FROM app.fresh6", "1", "the transaction's own row in a table made after it began: %s rows")
	mustExecC(t, c1, "ROLLBACK")
	if after := restarts(t, h); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("a transaction without a read view was restarted: %v -> %v", before, after)
	}
	// An insert is replayed with the AUTO_INCREMENT value it had, even if
	// another connection took later ones meanwhile.
	mustExecC(t, c1, "BEGIN")
	r := mustExecC(t, c1, "INSERT INTO users (name) VALUES ('mid-0')")
	id0, _ := r.LastInsertId()
	readView(t, c1)
	mustExecC(t, c2, "INSERT INTO users (name) VALUES ('mid-2')")
	mustExecC(t, c2, "CREATE TABLE app.fresh0 (id INT PRIMARY KEY)")
	wantString(t, c1, "SELECT COUNT(*) FROM app.fresh0", "0", "after the replay: %q")
	if got := queryString(t, c1, "SELECT id FROM users WHERE name = 'mid-0'"); got != fmt.Sprint(id0) {
		t.Errorf("replayed insert got id %s, want the %d the client saw", got, id0)
	}
	mustExecC(t, c1, "COMMIT")
	// A transaction the proxy cannot replay (here: a write whose second
	// run could write another value) is rolled back and the statement
	// fails with 1412 and a retry hint.
	e := mysqlErr(forkUnderTransaction(t, c1, c2, "fresh", "SAVEPOINT s1", "INSERT INTO users (name) VALUES (IF(RAND() < 2, 'mid-1', 'x'))"))
	if !strings.HasPrefix(e, "1412") || !strings.Contains(e, "retry") {
		t.Errorf("transaction that cannot be replayed: %s, want 1412 with a retry hint", e)
	}
	mustExecC(t, c1, "ROLLBACK")
	wantString(t, c1, "SELECT COUNT(*) FROM users WHERE name = 'mid-1'", "0", "the refused transaction left %s rows")
	// Savepoints are replayed as the transaction used them.
	if err := forkUnderTransaction(t, c1, c2, "fresh1", "INSERT INTO users (name) VALUES ('svp-6')", "SAVEPOINT s1",
		"INSERT INTO users (name) VALUES ('svp-7')", "ROLLBACK TO SAVEPOINT s1", "RELEASE SAVEPOINT s1"); err != nil {
		t.Fatalf("a transaction with savepoints, replayed: %v", err)
	}
	mustExecC(t, c1, "COMMIT")
	wantString(t, c1, "SELECT GROUP_CONCAT(name ORDER BY name) FROM users WHERE name IN ('svp-6', 'svp-7')", "svp-6",
		"after the replayed savepoints: %s")
	// Nor one that changed how text is read after it wrote: sent again
	// under NO_BACKSLASH_ESCAPES, 'mid\\4' would store two backslashes
	// where the client stored one, with the same affected-rows count.
	e = mysqlErr(forkUnderTransaction(t, c1, c2, "fresh2",
		`INSERT INTO users (name) VALUES ('mid\\4')`, "SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')"))
	if !strings.HasPrefix(e, "1412") {
		t.Errorf("transaction replayed under another sql_mode: %s, want 1412", e)
	}
	mustExecC(t, c1, "ROLLBACK")
	mustExecC(t, c1, "SET SESSION sql_mode = REPLACE(@@sql_mode, 'NO_BACKSLASH_ESCAPES', '')")
	wantString(t, c1, "SELECT COUNT(*) FROM users WHERE name LIKE 'mid%4'", "0", "the refused transaction left %s rows")
	// Nor one that changed its database: unqualified names in it would
	// be read in the new one.
	e = mysqlErr(forkUnderTransaction(t, c1, c2, "fresh3", "INSERT INTO users (name) VALUES ('mid-5')", "USE other"))
	if !strings.HasPrefix(e, "1412") {
		t.Errorf("transaction replayed in another database: %s, want 1412", e)
	}
	mustExecC(t, c1, "ROLLBACK")
	mustExecC(t, c1, "USE app")
	// COMMIT AND CHAIN ends the transaction that wrote and starts one that
	// has not: what follows is restarted, never a replay that would run
	// the committed UPDATE a second time.
	mustExecC(t, c1, "UPDATE users SET score = 20 WHERE name = 'carol'")
	mustExecC(t, c1, "BEGIN")
	mustExecC(t, c1, "UPDATE users SET score = score + 1 WHERE name = 'carol'")
	mustExecC(t, c1, "COMMIT AND CHAIN")
	mustExecC(t, c2, "CREATE TABLE app.fresh4 (id INT PRIMARY KEY)")
	if _, err := c1.ExecContext(context.Background(), "SELECT * FROM app.fresh4"); err != nil {
		t.Errorf("read after COMMIT AND CHAIN: %s", mysqlErr(err))
	}
	mustExecC(t, c1, "COMMIT")
	wantString(t, c1, "SELECT score FROM users WHERE name = 'carol'", "21.00", "after COMMIT AND CHAIN and a fork: score %q, want 21.00 (the committed UPDATE ran once)")
	// CREATE TEMPORARY TABLE does not commit: the transaction's earlier
	// writes stay part of any replay (or the replay is refused), never
	// silently lost.
	err := forkUnderTransaction(t, c1, c2, "fresh5",
		"UPDATE users SET score = 30 WHERE name = 'carol'", "CREATE TEMPORARY TABLE tmp_mid (id INT)", "INSERT INTO users (name) VALUES ('mid-6')")
	if e := mysqlErr(err); err != nil && !strings.HasPrefix(e, "1412") {
		t.Errorf("after CREATE TEMPORARY TABLE: %s, want success or 1412", e)
	} else if err == nil {
		wantString(t, c1, "SELECT score FROM users WHERE name = 'carol'", "30.00", "the replay lost the write before CREATE TEMPORARY TABLE: score %q, want 30.00")
	}
	mustExecC(t, c1, "ROLLBACK")
	mustExecC(t, c1, "DROP TEMPORARY TABLE IF EXISTS tmp_mid")
	// … and the client's ROLLBACK undid all of it: the proxy committed
	// nothing on its behalf (as it would for DDL that commits anyway).
	wantString(t, c1, "SELECT score FROM users WHERE name = 'carol'", "21.00", "after ROLLBACK of a transaction with CREATE TEMPORARY TABLE: score %q, want 21.00")
}

// forkUnderTransaction begins a transaction on c1 that runs stmts and
// takes its read view, then has c2 create the table app.<table> and c1
// read it; it returns the error of that read.
func forkUnderTransaction(t *testing.T, c1, c2 *sql.Conn, table string, stmts ...string) error {
	t.Helper()
	mustExecC(t, c1, "BEGIN")
	for _, q := range stmts {
		mustExecC(t, c1, q)
	}
	readView(t, c1)
	mustExecC(t, c2, "CREATE TABLE app."+table+" (id INT PRIMARY KEY)")
	_, err := c1.ExecContext(context.Background(), "SELECT * FROM app."+table)
	return err
}

// readView makes c's open transaction take its read view (InnoDB's
// snapshot, taken at the first plain read): a table made after it is
// invisible to the transaction, which then needs the proxy to restart it.
func readView(t *testing.T, c *sql.Conn) {
	t.Helper()
	queryString(t, c, "SELECT COUNT(*) FROM app.users")
}

// TestSandboxSeekDBStrategy runs the seekdb fork strategy against the
// emulating shim (integration/seekdbshim: MariaDB behind a front that
// answers VERSION() like SeekDB and implements FORK TABLE with its busy
// window), or against a real SeekDB when SQLFORK_TEST_SEEKDB_ADDR is set
// (with SQLFORK_TEST_SEEKDB_USER/_PASSWORD, and a database app holding a
// table users with a column score and a row name='alice').
func TestSandboxSeekDBStrategy(t *testing.T) {
	db := leastPrivilegeEnv(t)
	addr, user, pw, shim := seekdbUpstream(t, db, 300*time.Millisecond)
	h := startTestProxy(t, addr, db, func(c *proxy.Config) {
		c.Mode = "transparent"
		c.UpstreamUser, c.UpstreamPassword = user, pw
	})
	c := conn(t, openDB(t, fmt.Sprintf("%s:%s@tcp(%s)/app", user, pw, h.addr)))
	mustExecC(t, c, "UPDATE users SET score = 5 WHERE name = 'alice'")
	if s := h.srv.Sandboxes().Strategy(); s != "seekdb" {
		t.Fatalf("strategy %q, want seekdb (auto from VERSION())", s)
	}
	wantString(t, c, "SELECT score FROM users WHERE name = 'alice'", "5.00", "sandbox reads %q, want 5.00")
	// DDL right after the fork waits out FORK TABLE's background task.
	mustExecC(t, c, "ALTER TABLE users ADD COLUMN seek INT")
	if shim != nil && shim.Forks() != 1 {
		t.Errorf("FORK TABLE ran %d times, want 1", shim.Forks())
	}
	root := openDB(t, db.DSN(""))
	if shim != nil {
		wantString(t, root, "SELECT score FROM app.users WHERE name = 'alice'", "10.50", "production changed: %q")
	}
}

// seekdbUpstream is the SeekDB the seekdb strategy's tests run against:
// a real one when SQLFORK_TEST_SEEKDB_ADDR is set (with its account,
// SQLFORK_TEST_SEEKDB_USER and _PASSWORD), otherwise the shim emulating
// FORK TABLE in front of db (its FORK TABLE busy for busy), logged in with
// the least-privilege account; shim is nil for a real SeekDB.
func seekdbUpstream(t *testing.T, db *testdb.Server, busy time.Duration) (addr, user, pw string, shim *seekdbshim.Shim) {
	t.Helper()
	if addr = os.Getenv("SQLFORK_TEST_SEEKDB_ADDR"); addr != "" {
		return addr, os.Getenv("SQLFORK_TEST_SEEKDB_USER"), os.Getenv("SQLFORK_TEST_SEEKDB_PASSWORD"), nil
	}
	shim, err := seekdbshim.Start(context.Background(), db.Addr, seekdbshim.Options{BusyFor: busy})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shim.Close() })
	return shim.Addr(), sandboxUser, sandboxPassword, shim
}

// TestSandboxStatementsInMultiStatements: SANDBOX statements mixed with SQL
// in one COM_QUERY, as a driver with multiStatements sends them.
func TestSandboxStatementsInMultiStatements(t *testing.T) {
	_, h := sandboxProxy(t, "explicit", nil)
	c := conn(t, openDB(t, h.userDSN(sandboxUser, "app", "multiStatements=true")))
	rows, err := c.QueryContext(context.Background(),
		"SELECT score FROM users WHERE id = 1; SANDBOX CREATE multi TTL 1h; UPDATE users SET score = 3 WHERE id = 1; "+
			"SELECT score FROM users WHERE id = 1; SANDBOX STATUS; sandbox detach ; SELECT score FROM users WHERE id = 1")
	if err != nil {
		t.Fatal(mysqlErr(err))
	}
	var got []string
	for {
		for rows.Next() {
			vals, err := scanStrings(rows)
			if err != nil {
				t.Fatal(err)
			}
			if len(vals) == 1 {
				got = append(got, vals[0].String)
			} else {
				got = append(got, vals[1].String+"/"+vals[10].String) // name/table_name
			}
		}
		if !rows.NextResultSet() {
			break
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(mysqlErr(err))
	}
	rows.Close()
	want := []string{"10.50", "3.00", "multi/app.users", "10.50"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("results %v, want %v", got, want)
	}
	// An error stops the input, as on the server.
	_, err = c.ExecContext(context.Background(), "SANDBOX ATTACH multi; SANDBOX FROB; UPDATE users SET score = 4 WHERE id = 1")
	if e := mysqlErr(err); !strings.HasPrefix(e, "1064") {
		t.Errorf("bad SANDBOX statement in a multi-statement: %s", e)
	}
	wantString(t, c, "SELECT score FROM users WHERE id = 1", "3.00", "after the failed input the sandbox reads %q, want 3.00 (the UPDATE after the error must not run)")
	// An input whose second statement fails leaves the server's "more
	// results" flag in the last status the proxy saw; the proxy's own
	// answer to the next command must not carry it (the driver would wait
	// for a result that never comes).
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.ExecContext(ctx, "SELECT 1; SELECT * FROM no_such_table"); err == nil {
		t.Fatal("a missing table did not fail")
	}
	st, err := c.QueryContext(ctx, "SANDBOX STATUS")
	if err != nil {
		t.Fatalf("SANDBOX STATUS after a failed multi-statement input: %s", mysqlErr(err))
	}
	for st.Next() {
	}
	if st.NextResultSet() {
		t.Error("SANDBOX STATUS after a failed multi-statement input announced another result")
	}
	if err := st.Err(); err != nil {
		t.Errorf("SANDBOX STATUS after a failed multi-statement input: %s", mysqlErr(err))
	}
	st.Close()
	wantString(t, c, "SELECT score FROM users WHERE id = 1", "3.00", "after SANDBOX STATUS: %q")
	mustExecC(t, c, "SANDBOX DISCARD multi")
}

// TestSandboxResetAndChangeUser pins down what the two session-resetting
// commands do to the sandbox binding: COM_RESET_CONNECTION keeps it (a pool
// resets between borrowers), COM_CHANGE_USER binds afresh as a new login of
// that user would (releasing, here discarding, the old unkept sandbox).
func TestSandboxResetAndChangeUser(t *testing.T) {
	_, h := sandboxProxy(t, "transparent", nil)
	r := dialRaw(t, h.addr, sandboxUser+"+rc", sandboxPassword, "app")
	r.query("UPDATE users SET score = 77 WHERE id = 1")
	r.send(0x1F) // COM_RESET_CONNECTION
	r.expectOK()
	if v := r.scalar("SELECT score FROM users WHERE id = 1"); v != "77.00" {
		t.Errorf("after COM_RESET_CONNECTION: %s, want the sandbox's 77.00", v)
	}
	// Column metadata shows the logical database, not the fork's.
	res := r.query("SELECT u.id, u.name FROM users u")
	for _, f := range res.Fields {
		if string(f.Schema) != "app" || string(f.OrgTable) != "users" {
			t.Errorf("column %s: schema %q org_table %q, want app.users", f.Name, f.Schema, f.OrgTable)
		}
	}
	if p := r.changeUser(sandboxUser, sandboxPassword, "app"); p[0] != 0 {
		t.Fatalf("change user: %q", p)
	}
	if v := r.scalar("SELECT score FROM users WHERE id = 1"); v != "10.50" {
		t.Errorf("after COM_CHANGE_USER to an untagged login: %s, want a fresh sandbox's 10.50", v)
	}
	if p := r.changeUser(sandboxUser+"+rc", sandboxPassword, "app"); p[0] != 0 {
		t.Fatalf("change user back: %q", p)
	}
	if v := r.scalar("SELECT score FROM users WHERE id = 1"); v != "10.50" {
		t.Errorf("back in rc: %s, want 10.50 (the unkept sandbox went with its last connection)", v)
	}
}

// TestSandboxConnectionAttributeAndUserMode: the sqlfork_sandbox connection
// attribute chooses the sandbox like the user-name tag does, and a user's
// mode from the config overrides the proxy's.
func TestSandboxConnectionAttributeAndUserMode(t *testing.T) {
	_, h := sandboxProxy(t, "transparent", func(c *proxy.Config) {
		c.Users = []proxy.User{{Name: "trusted", Password: sandboxPassword, Mode: "passthrough"}}
	})
	a := conn(t, openDB(t, h.userDSN(sandboxUser, "app", "connectionAttributes=sqlfork_sandbox:attr1")))
	b := conn(t, openDB(t, h.userDSN(sandboxUser, "app", "connectionAttributes=sqlfork_sandbox:attr1")))
	mustExecC(t, a, "UPDATE users SET score = 31 WHERE id = 2")
	wantString(t, b, "SELECT score FROM users WHERE id = 2", "31.00", "second connection with the attribute reads %q, want the shared sandbox's 31.00")
	// A passthrough user is a plain proxy session: with the SELECT-only
	// upstream account its write is refused by the database itself.
	tr := conn(t, openDB(t, h.userDSN("trusted", "app")))
	_, err := tr.ExecContext(context.Background(), "UPDATE users SET score = 32 WHERE id = 2")
	if e := mysqlErr(err); !strings.HasPrefix(e, "1142") {
		t.Errorf("passthrough user's write: %s, want the server's 1142 (no UPDATE privilege)", e)
	}
	wantString(t, tr, "SELECT score FROM users WHERE id = 2", "-3.25", "passthrough user reads %q, want production's -3.25")
}

// TestSandboxOneForkAcrossProcesses: connections of two proxies writing the
// same table of one sandbox at once fork it once in all (GET_LOCK on the
// upstream, then the registry).
func TestSandboxOneForkAcrossProcesses(t *testing.T) {
	db, a := sandboxProxy(t, "transparent", nil)
	b := startTestProxy(t, db.Addr, db, func(c *proxy.Config) {
		c.Mode = "transparent"
		c.UpstreamUser, c.UpstreamPassword = sandboxUser, sandboxPassword
	})
	concurrently(t, 16, func(i int) error {
		h := a
		if i%2 == 1 {
			h = b
		}
		c := openDB(t, h.userDSN(sandboxUser+"+xproc", "other"))
		_, err := c.Exec("INSERT INTO things VALUES (?, 'x')", 100+i)
		return err
	})
	if n := a.srv.Sandboxes().Forks() + b.srv.Sandboxes().Forks(); n != 1 {
		t.Errorf("two proxies forked other.things %d times, want once", n)
	}
}

// TestSandboxPreparedBeforeFork: a server-side prepared statement prepared
// before its table was forked reads the fork afterwards (the proxy prepares
// it again upstream and translates its id).
func TestSandboxPreparedBeforeFork(t *testing.T) {
	_, h := sandboxProxy(t, "transparent", nil)
	c := h.appConn(t)
	sel, err := c.PrepareContext(context.Background(), "SELECT score FROM users WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	defer sel.Close()
	var v string
	if err := sel.QueryRow(1).Scan(&v); err != nil || v != "10.50" {
		t.Fatalf("before the fork: %q %v", v, err)
	}
	upd, err := c.PrepareContext(context.Background(), "UPDATE users SET score = ? WHERE id = ?") // forks users
	if err != nil {
		t.Fatal(err)
	}
	defer upd.Close()
	if _, err := upd.Exec(55, 1); err != nil {
		t.Fatal(mysqlErr(err))
	}
	for i := range 3 { // the first execute re-prepares; later ones reuse it
		if err := sel.QueryRow(1).Scan(&v); err != nil || v != "55.00" {
			t.Fatalf("execute %d after the fork: %q %v, want the fork's 55.00", i, v, err)
		}
	}
}
