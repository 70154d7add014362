package integration

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// slowReaper makes a sandbox-mode proxy whose reaper never runs during a
// test: nothing but the per-statement registry check can carry one proxy's
// changes to a sandbox to another.
func slowReaper(c *proxy.Config) {
	c.Mode = "transparent"
	c.UpstreamUser, c.UpstreamPassword = sandboxUser, sandboxPassword
	c.Sandbox.ReapInterval = time.Hour
}

// rywStep is what one alternation does through its proxy: check is run
// first (what the previous alternation, through the other proxy, wrote),
// then write, which returns the check of the next alternation.
type rywCheck func(c *sql.Conn) error

// expectRows checks that q returns want (rows joined by ",").
func expectRows(q, want string) rywCheck {
	return func(c *sql.Conn) error {
		got, err := firstColumn(context.Background(), c, q)
		if err != nil {
			return fmt.Errorf("%s: %s", q, mysqlErr(err))
		}
		if g := strings.Join(got, ","); g != want {
			return fmt.Errorf("%s: got %q, want %q", q, g, want)
		}
		return nil
	}
}

// expectMissing checks that q fails with 1146 (the table does not exist).
func expectMissing(q string) rywCheck {
	return func(c *sql.Conn) error {
		_, err := c.ExecContext(context.Background(), q)
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1146 {
			return fmt.Errorf("%s: got %v, want 1146 (the sandbox dropped the table)", q, err)
		}
		return nil
	}
}

// rywWrite makes alternation i's writes through c and returns what the
// next alternation must see.
func rywWrite(c *sql.Conn, i int) ([]rywCheck, error) {
	k := i / 100
	var stmts []string
	var checks []rywCheck
	switch i % 100 {
	case 20: // a table made in the sandbox
		stmts = append(stmts, fmt.Sprintf("CREATE TABLE ryw_new%d (id INT PRIMARY KEY, v VARCHAR(16))", k),
			fmt.Sprintf("INSERT INTO ryw_new%d VALUES (1, 'n%d')", k, i))
		checks = append(checks, expectRows(fmt.Sprintf("SELECT v FROM ryw_new%d", k), fmt.Sprintf("n%d", i)))
	case 50: // the first write of a production table (a fork), then more
		stmts = append(stmts, fmt.Sprintf("UPDATE ryw_p%d SET v = 'f%d' WHERE id = 1", k%5, i))
		checks = append(checks, expectRows(fmt.Sprintf("SELECT v FROM ryw_p%d ORDER BY id", k%5), fmt.Sprintf("f%d,p2", i)))
	case 70: // the sandbox's own table dropped
		stmts = append(stmts, fmt.Sprintf("DROP TABLE ryw_new%d", k))
		checks = append(checks, expectMissing(fmt.Sprintf("SELECT * FROM ryw_new%d", k)))
	case 90:
		if k < 5 { // a production table dropped in the sandbox
			stmts = append(stmts, fmt.Sprintf("DROP TABLE ryw_q%d", k))
			checks = append(checks, expectMissing(fmt.Sprintf("SELECT * FROM ryw_q%d", k)))
			break
		}
		// and made again there
		stmts = append(stmts, fmt.Sprintf("CREATE TABLE ryw_q%d (id INT PRIMARY KEY, v VARCHAR(16))", k-5),
			fmt.Sprintf("INSERT INTO ryw_q%d VALUES (7, 'q%d')", k-5, i))
		checks = append(checks, expectRows(fmt.Sprintf("SELECT v FROM ryw_q%d", k-5), fmt.Sprintf("q%d", i)))
	}
	stmts = append(stmts, fmt.Sprintf("INSERT INTO ryw_log VALUES (%d, 'w%d')", i, i))
	checks = append(checks, expectRows(fmt.Sprintf("SELECT v FROM ryw_log WHERE id >= %d", i), fmt.Sprintf("w%d", i)))
	for _, q := range stmts {
		if _, err := c.ExecContext(context.Background(), q); err != nil {
			return nil, fmt.Errorf("%s: %s", q, mysqlErr(err))
		}
	}
	return checks, nil
}

// TestSandboxReadYourWritesAcrossProxies: connections of one named sandbox
// through two proxies sharing an upstream alternate 1,000 times, each
// reading what the previous one wrote through the other proxy — after a
// fork, a CREATE TABLE, a DROP of the sandbox's own table, a DROP of a
// production table there and its CREATE again — with reapers that never
// run in between.
//
// With the default sync lease a process trusts its map for a lease and a
// fork waits until the other's lease ran out; with none, every statement
// reading production checks the registry.
func TestSandboxReadYourWritesAcrossProxies(t *testing.T) {
	for _, lease := range []time.Duration{proxy.DefaultConfig().Sandbox.SyncLease, 0} {
		t.Run("lease="+lease.String(), func(t *testing.T) { readYourWrites(t, lease) })
	}
}

func readYourWrites(t *testing.T, lease time.Duration) {
	cfg := func(c *proxy.Config) {
		slowReaper(c)
		c.Sandbox.SyncLease = lease
	}
	db, a := sandboxProxy(t, "transparent", cfg)
	b := startTestProxy(t, db.Addr, db, cfg)
	root := openDB(t, db.DSN(""))
	var setup []string
	for k := range 5 {
		for _, p := range []string{"p", "q"} {
			setup = append(setup, fmt.Sprintf("CREATE TABLE app.ryw_%s%d (id INT PRIMARY KEY, v VARCHAR(16))", p, k),
				fmt.Sprintf("INSERT INTO app.ryw_%s%d VALUES (1, '%s1'), (2, '%s2')", p, k, p, p))
		}
	}
	var teardown []string
	for k := range 5 {
		teardown = append(teardown, fmt.Sprintf("DROP TABLE IF EXISTS app.ryw_p%d, app.ryw_q%d", k, k))
	}
	setUp(t, root, setup, teardown...)
	sums := func() string {
		var all []string
		for k := range 5 {
			all = append(all, checksum(t, db, fmt.Sprintf("app.ryw_p%d", k)), checksum(t, db, fmt.Sprintf("app.ryw_q%d", k)))
		}
		return strings.Join(all, " ")
	}
	before := sums()

	pools := [2]*sql.DB{openDB(t, a.userDSN(sandboxUser+"+ryw", "app")), openDB(t, b.userDSN(sandboxUser+"+ryw", "app"))}
	first := conn(t, pools[0])
	mustExecC(t, first, "CREATE TABLE ryw_log (id INT PRIMARY KEY, v VARCHAR(16))")
	var checks []rywCheck
	for i := range 1000 {
		c := conn(t, pools[(i+1)%2]) // the first alternation goes through b
		for _, check := range checks {
			if err := check(c); err != nil {
				t.Fatalf("alternation %d, through proxy %c: %v", i, "ab"[(i+1)%2], err)
			}
		}
		var err error
		if checks, err = rywWrite(c, i); err != nil {
			t.Fatalf("alternation %d: %v", i, err)
		}
		_ = c.Close()
	}
	if n := a.srv.Sandboxes().Forks() + b.srv.Sandboxes().Forks(); n != 5 {
		t.Errorf("%d forks through both proxies, want 5 (one per production table written)", n)
	}
	if after := sums(); after != before {
		t.Errorf("production changed: %s -> %s", before, after)
	}
	if n := queryString(t, root, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'app' AND TABLE_NAME LIKE 'ryw\\_%'"); n != "10" {
		t.Errorf("production has %s ryw_ tables, want its 10", n)
	}
	mustExecC(t, conn(t, pools[0]), "SANDBOX DISCARD")
}

// TestSandboxConcurrentFirstWrites: connections of one sandbox, each in an
// open transaction that has read, write the same row of one table and then
// their own row of another, neither forked yet — the pattern that used to
// get 1412 when a transaction was rolled back and replayed past a fork and
// another connection changed the row meanwhile. Every transaction commits,
// as on a direct connection: with BEGIN and the writes as text, and with
// BEGIN and the writes as server-side prepared statements.
func TestSandboxConcurrentFirstWrites(t *testing.T) {
	db, h := sandboxProxy(t, "transparent", nil)
	root := openDB(t, db.DSN(""))
	reset := []string{"DROP TABLE IF EXISTS app.fw_a, app.fw_b", "CREATE TABLE app.fw_a (id INT PRIMARY KEY, n INT NOT NULL)",
		"CREATE TABLE app.fw_b (id INT PRIMARY KEY, n INT NOT NULL)",
		"INSERT INTO app.fw_a SELECT seq, 0 FROM app.seq_1_to_64", "INSERT INTO app.fw_b SELECT seq, 0 FROM app.seq_1_to_64"}
	setUp(t, root, reset, "DROP TABLE IF EXISTS app.fw_a, app.fw_b")
	// Directly, every transaction commits (the rows are then set back).
	if errs := firstWrites(t, openDB(t, db.DSN("app")), 16, 0, false); len(errs) > 0 {
		t.Fatalf("directly, %d of 16 transactions failed:\n%s", len(errs), strings.Join(errs, "\n"))
	}
	for _, q := range reset {
		mustExecDB(t, root, q)
	}
	before := checksum(t, db, "app.fw_a") + checksum(t, db, "app.fw_b")
	for round, mode := range []string{"text", "prepared", "text", "prepared"} {
		params := []string{"interpolateParams=true"}
		if mode == "prepared" {
			params = nil
		}
		pool := openDB(t, h.userDSN(fmt.Sprintf("%s+fw%d", sandboxUser, round), "app", params...))
		if errs := firstWrites(t, pool, 16, round+1, mode == "prepared"); len(errs) > 0 {
			t.Errorf("%s (round %d): %d of 16 transactions failed:\n%s", mode, round, len(errs), strings.Join(errs, "\n"))
		}
		if got := queryString(t, pool, "SELECT SUM(n) FROM fw_b"); got != "16" {
			t.Errorf("%s (round %d): the sandbox's fw_b sums to %s, want 16 (every transaction's row)", mode, round, got)
		}
		mustExecC(t, conn(t, pool), "SANDBOX DISCARD")
	}
	if after := checksum(t, db, "app.fw_a") + checksum(t, db, "app.fw_b"); after != before {
		t.Errorf("production changed: %s -> %s", before, after)
	}
}

// TestSandboxReplayAfterPreparedBegin: a transaction begun by a prepared
// BEGIN (which the proxy sends outside a transaction untouched), that has
// read and written, then meets a fork and is replayed — its record starts
// with the BEGIN — and commits, as it would directly.
func TestSandboxReplayAfterPreparedBegin(t *testing.T) {
	db, h := sandboxProxy(t, "transparent", nil)
	root := openDB(t, db.DSN(""))
	setUp(t, root, []string{"CREATE TABLE app.pb_a (id INT PRIMARY KEY, n INT NOT NULL)",
		"CREATE TABLE app.pb_b (id INT PRIMARY KEY, n INT NOT NULL)", "INSERT INTO app.pb_a VALUES (1, 0)", "INSERT INTO app.pb_b VALUES (1, 0)"},
		"DROP TABLE IF EXISTS app.pb_a, app.pb_b")
	ctx := context.Background()
	c := h.appConn(t)
	mustExecC(t, c, "UPDATE pb_a SET n = 1") // pb_a forked before the transaction
	begin, err := c.PrepareContext(ctx, "BEGIN")
	if err != nil {
		t.Fatal(err)
	}
	defer begin.Close()
	if _, err := begin.ExecContext(ctx); err != nil {
		t.Fatal(mysqlErr(err))
	}
	if got := queryString(t, c, "SELECT n FROM pb_b"); got != "0" { // the read view
		t.Fatalf("pb_b: %s", got)
	}
	mustExecC(t, c, "UPDATE pb_a SET n = 2")
	mustExecC(t, c, "UPDATE pb_b SET n = 2") // forked now: the transaction is replayed
	mustExecC(t, c, "COMMIT")
	wantString(t, c, "SELECT CONCAT(a.n, b.n) FROM pb_a a, pb_b b", "22", "after the commit the sandbox holds %s, want 22")
	if v := h.metric(t, "sqlfork_sandbox_transaction_restarts_total", map[string]string{"outcome": "replayed"}); v != 1 {
		t.Errorf("%v transactions replayed, want 1", v)
	}
}

// firstWrites runs n transactions on pool at once: each reads fw_b, waits
// for the others, sets fw_a's row 1 (all the same row: they queue on its
// lock) and adds one to its own row of fw_b; beginPrepared sends BEGIN as
// a prepared statement. It returns the errors.
func firstWrites(t *testing.T, pool *sql.DB, n, round int, beginPrepared bool) []string {
	t.Helper()
	ctx := context.Background()
	var wg, ready sync.WaitGroup
	ready.Add(n)
	start := make(chan struct{})
	errs := make(chan string, n)
	for i := 1; i <= n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := firstWrite(ctx, pool, i, round, beginPrepared, ready.Done, start)
			if err != nil {
				errs <- fmt.Sprintf("connection %d: %v", i, err)
			}
		}()
	}
	ready.Wait()
	close(start)
	wg.Wait()
	close(errs)
	var out []string
	for e := range errs {
		out = append(out, e)
	}
	return out
}

// firstWrite is one transaction of firstWrites.
func firstWrite(ctx context.Context, pool *sql.DB, i, round int, beginPrepared bool, ready func(), start <-chan struct{}) error {
	c, err := pool.Conn(ctx)
	if err != nil {
		ready()
		return err
	}
	defer c.Close()
	exec := func(q string, args ...any) error {
		if _, err := c.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("%s: %s", q, mysqlErr(err))
		}
		return nil
	}
	if beginPrepared {
		var st *sql.Stmt
		if st, err = c.PrepareContext(ctx, "BEGIN"); err == nil {
			_, err = st.ExecContext(ctx)
			_ = st.Close()
		}
	} else {
		err = exec("BEGIN")
	}
	if err == nil {
		var k int
		err = c.QueryRowContext(ctx, "SELECT COUNT(*) FROM fw_b WHERE n >= 0").Scan(&k)
	}
	ready()
	<-start
	if err == nil {
		// The same value for every other connection: an UPDATE that finds
		// it set already changes nothing (0 rows affected).
		err = exec("UPDATE fw_a SET n = ? WHERE id = 1", round*100+i%2)
	}
	if err == nil {
		err = exec("UPDATE fw_b SET n = n + 1 WHERE id = ?", i)
	}
	if err == nil {
		err = exec("COMMIT")
	}
	return err
}

// TestRoutinesAcrossProxies: a production routine one proxy process drops
// in a named sandbox stays dropped there for another process's
// connections of it — that process does not copy production's again —
// while production keeps it.
func TestRoutinesAcrossProxies(t *testing.T) {
	db, a := sandboxProxy(t, "transparent", slowReaper)
	b := startTestProxy(t, db.Addr, db, slowReaper)
	root := productionRoutines(t, db, "rt_f(x INT) RETURNS INT DETERMINISTIC RETURN x + 1", "rt_p() SELECT 42 AS answer")
	ca := conn(t, openDB(t, a.userDSN(sandboxUser+"+rt", "app")))
	cb := conn(t, openDB(t, b.userDSN(sandboxUser+"+rt", "app")))
	ctx := context.Background()
	var v int
	if err := cb.QueryRowContext(ctx, "SELECT rt_f(1)").Scan(&v); err != nil || v != 2 {
		t.Fatalf("rt_f(1) through b: %d, %v", v, err)
	}
	mustExecC(t, ca, "DROP FUNCTION rt_f")
	mustExecC(t, ca, "DROP PROCEDURE rt_p")
	for _, q := range []string{"SELECT rt_f(1)", "CALL rt_p()"} {
		for name, c := range map[string]*sql.Conn{"a": ca, "b": cb} {
			_, err := c.ExecContext(ctx, q)
			var me *mysql.MySQLError
			if !errors.As(err, &me) || me.Number != 1305 {
				t.Errorf("%s through %s after the sandbox dropped it: %v, want 1305", q, name, err)
			}
		}
	}
	if err := root.QueryRow("SELECT app.rt_f(1)").Scan(&v); err != nil || v != 2 {
		t.Errorf("production's rt_f: %d, %v", v, err)
	}
}
