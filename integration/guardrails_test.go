package integration

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// TestGuardrailsAppliedAndReloaded: each guardrail (deny-statements,
// deny-multi-statements, statement-timeout, max-rows, max-fork-bytes,
// max-sandboxes-per-user), set globally and per user in users:, refuses
// what it should with its error, is counted by reason, and changes on the
// open connections when SIGHUP reloads the file.
func TestGuardrailsAppliedAndReloaded(t *testing.T) {
	db := leastPrivilegeEnv(t)
	cfg := filepath.Join(t.TempDir(), "sqlfork.yaml")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(cfg, []byte("log_format: json\n"+text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Before: bob has the global guardrails, alice her own max_rows and
	// deny_statements.
	write(`
deny_statements: ddl
deny_multi_statements: true
statement_timeout: 500ms
max_rows: 20
max_fork_bytes: 1
max_sandboxes_per_user: 1
users:
  - {name: alice, password: ` + sandboxPassword + `, max_rows: 5, deny_statements: "write,ddl"}
  - {name: bob, password: ` + sandboxPassword + `}
`)
	metricsAddr := freeAddr(t)
	p := startProxyProcess(t, db, "--mode", "explicit", "--config", cfg, "--metrics-listen", metricsAddr)
	ctx := context.Background()
	open := func(user string) *sql.Conn {
		return conn(t, openDB(t, user+":"+sandboxPassword+"@tcp("+p.addr+")/app?multiStatements=true"))
	}
	alice, bob := open("alice"), open("bob")
	mustExecC(t, alice, "SANDBOX CREATE a1")
	mustExecC(t, bob, "SANDBOX CREATE b1")
	// Rows to read: a table made in the sandbox (bob may not run DDL yet,
	// so a derived table of 50 rows).
	fifty := "SELECT seq FROM (WITH RECURSIVE n(seq) AS (SELECT 1 UNION ALL SELECT seq + 1 FROM n WHERE seq < 50) SELECT seq FROM n) AS t"
	countRows := func(c *sql.Conn) (int, string) {
		t.Helper()
		rows, err := c.QueryContext(ctx, fifty)
		if err != nil {
			return 0, mysqlErr(err)
		}
		defer rows.Close()
		return countResult(rows)
	}
	expectErr := func(who string, c *sql.Conn, stmt, want string) {
		t.Helper()
		_, err := c.ExecContext(ctx, stmt)
		if got := mysqlErr(err); !strings.HasPrefix(got, want) {
			t.Errorf("%s: %s: got %q, want %s…", who, stmt, got, want)
		}
	}
	expectOK := func(who string, c *sql.Conn, stmt string) {
		t.Helper()
		if _, err := c.ExecContext(ctx, stmt); err != nil {
			t.Errorf("%s: %s: %s", who, stmt, mysqlErr(err))
		}
	}

	// Applied.
	expectErr("bob", bob, "CREATE TABLE t1 (a INT)", "1290 (HY000) sqlfork-proxy: CREATE TABLE (ddl) statements are denied by the deny-statements guardrail")
	expectOK("bob", bob, "SELECT 1") // a class not denied
	expectErr("alice", alice, "UPDATE users SET score = 1 WHERE id = 1", "1290 (HY000) sqlfork-proxy: UPDATE (write) statements are denied")
	expectErr("bob", bob, "SELECT 1; SELECT 2", "1290 (HY000) sqlfork-proxy: multi-statement input is denied by the deny-multi-statements guardrail")
	expectErr("bob", bob, "SELECT 1; SANDBOX STATUS", "1290 (HY000) sqlfork-proxy: multi-statement input is denied")
	expectErr("bob", bob, "SELECT SLEEP(3)", "1969 (70100) Query execution was interrupted (max_statement_time exceeded)")
	if n, err := countRows(bob); n != 20 || !strings.HasPrefix(err, "1226 (42000) sqlfork-proxy: User 'bob' has exceeded the 'max_rows' resource (current value: 20)") {
		t.Errorf("bob read %d rows then %q; want 20 then error 1226", n, err)
	}
	if n, err := countRows(alice); n != 5 || !strings.HasPrefix(err, "1226 (42000)") {
		t.Errorf("alice read %d rows then %q; want her own cap of 5 then error 1226", n, err)
	}
	expectOK("bob", bob, "SELECT 1") // the cut left the session usable
	sleep, err := bob.PrepareContext(ctx, "SELECT SLEEP(?)")
	if err != nil {
		t.Fatal(mysqlErr(err))
	}
	defer sleep.Close()
	var slept int
	if err := sleep.QueryRowContext(ctx, 3).Scan(&slept); !strings.HasPrefix(mysqlErr(err), "1969 (70100)") {
		t.Errorf("bob's prepared SELECT SLEEP(3) gave %q, want the timeout's 1969", mysqlErr(err))
	}
	expectErr("bob", bob, "UPDATE users SET score = 1 WHERE id = 1", "1114 (HY000) sqlfork-proxy: forking app.users (")
	expectErr("bob", bob, "SANDBOX CREATE b2", "1226 (42000) sqlfork-proxy: User 'bob' has exceeded the 'max_sandboxes' resource (current value: 1)")
	for reason, want := range map[string]float64{"deny_statements": 2, "deny_multi_statements": 2, "statement_timeout": 2,
		"max_rows": 2, "max_fork_bytes": 1, "max_sandboxes_per_user": 1} {
		if got := scrape(t, metricsAddr)[fmt.Sprintf("sqlfork_guardrail_refusals_total{guardrail=%q}", reason)]; got != want {
			t.Errorf("sqlfork_guardrail_refusals_total{guardrail=%q} = %v, want %v", reason, got, want)
		}
	}

	// Changed by reload: bob's global guardrails loosen, alice's own
	// tighten.
	write(`
deny_statements: ""
deny_multi_statements: false
statement_timeout: 0s
max_rows: 100
max_fork_bytes: 0
max_sandboxes_per_user: 3
users:
  - {name: alice, password: ` + sandboxPassword + `, max_rows: 3, deny_statements: "ddl", statement_timeout: 200ms, max_sandboxes: 1}
  - {name: bob, password: ` + sandboxPassword + `}
`)
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "the reload to be logged", func() bool { return strings.Contains(p.logs.String(), "SIGHUP: settings reloaded") })
	if logs := p.logs.String(); !strings.Contains(logs, "users[].guardrails") || strings.Contains(logs, `"settings":["users"]`) {
		t.Errorf("reload did not apply the users' guardrails alone:\n%s", logs)
	}
	// A statement prepared before the reload runs under the new settings
	// (first: bob's writes below would make it stale anyway).
	start := time.Now()
	if err := sleep.QueryRowContext(ctx, 0.7).Scan(&slept); err != nil || slept != 0 || time.Since(start) < 600*time.Millisecond {
		t.Errorf("bob's prepared SELECT SLEEP(0.7) after the reload: %d, %q after %s, want 0 and no timeout", slept, mysqlErr(err), time.Since(start))
	}
	expectOK("bob", bob, "CREATE TABLE t1 (a INT)")
	if _, err := bob.ExecContext(ctx, "SELECT 1; SELECT 2"); err != nil {
		t.Errorf("bob: multi-statement after reload: %s", mysqlErr(err))
	}
	start = time.Now()
	expectOK("bob", bob, "DO SLEEP(0.7)")
	if d := time.Since(start); d < 600*time.Millisecond {
		t.Errorf("bob's SLEEP(0.7) took %s: still cut by a timeout", d)
	}
	if n, err := countRows(bob); n != 50 || err != "" {
		t.Errorf("bob read %d rows then %q; want all 50", n, err)
	}
	expectOK("bob", bob, "UPDATE users SET score = 1 WHERE id = 1")
	expectOK("bob", bob, "SANDBOX CREATE b2")
	expectOK("alice", alice, "UPDATE users SET score = 2 WHERE id = 1")
	expectErr("alice", alice, "CREATE TABLE t2 (a INT)", "1290 (HY000)")
	expectErr("alice", alice, "SELECT SLEEP(3)", "1969 (70100)")
	if n, err := countRows(alice); n != 3 || !strings.HasPrefix(err, "1226 (42000)") {
		t.Errorf("alice read %d rows then %q; want her new cap of 3 then error 1226", n, err)
	}
	expectErr("alice", alice, "SANDBOX CREATE a2", "1226 (42000)")
	// An input the proxy splits (it holds a SANDBOX statement) is cut the
	// same way, and ends there.
	rows, err := alice.QueryContext(ctx, fifty+"; SANDBOX STATUS")
	if err != nil {
		t.Fatal(mysqlErr(err))
	}
	if n, got := countResult(rows); n != 3 || !strings.HasPrefix(got, "1226 (42000)") {
		t.Errorf("alice's multi-statement read gave %d rows then %q; want 3 then 1226", n, got)
	}
	if rows.NextResultSet() {
		t.Error("the SANDBOX STATUS after a cut result ran")
	}
	rows.Close()
	expectOK("alice", alice, "SELECT 1")
	// A prepared statement is capped at each execution too.
	stmt, err := alice.PrepareContext(ctx, fifty+" WHERE seq > ?")
	if err != nil {
		t.Fatal(mysqlErr(err))
	}
	defer stmt.Close()
	for range 2 {
		rows, err := stmt.QueryContext(ctx, 0)
		if err != nil {
			t.Fatal(mysqlErr(err))
		}
		if n, got := countResult(rows); n != 3 || !strings.HasPrefix(got, "1226 (42000)") {
			t.Errorf("alice's prepared read gave %d rows then %q; want 3 then 1226", n, got)
		}
		rows.Close()
	}
	expectOK("alice", alice, "SANDBOX DISCARD a1")
	expectOK("bob", bob, "SANDBOX DISCARD b2") // b1, unkept, went when bob left it
}

// countResult reads the rows of the current result set and returns how
// many there were and the error that ended them ("" for none).
func countResult(rows *sql.Rows) (int, string) {
	n := 0
	for rows.Next() {
		n++
	}
	return n, mysqlErr(rows.Err())
}

// guardrailProxy is an explicit-mode proxy with max-rows 3 and a sandboxing
// user and a passthrough user.
func guardrailProxy(t *testing.T) *proxyHandle {
	db, _ := env(t)
	return startTestProxy(t, db.Addr, db, func(c *proxy.Config) {
		c.Mode = "explicit"
		c.Sandbox.Guardrails.MaxRows = 3
		c.Users = []proxy.User{{Name: "capped", Password: sandboxPassword, UpstreamUser: db.User, UpstreamPassword: db.Password},
			{Name: "through", Password: sandboxPassword, UpstreamUser: db.User, UpstreamPassword: db.Password, Mode: "passthrough"}}
	})
}

const tenRows = "SELECT seq FROM (WITH RECURSIVE n(seq) AS (SELECT 1 UNION ALL SELECT seq + 1 FROM n WHERE seq < 10) SELECT seq FROM n) AS t"

// TestMaxRowsAcrossCursorFetches: max-rows counts every row a cursor
// returns, however many COM_STMT_FETCH it takes and whatever runs between
// them; a new execution opens a new count.
func TestMaxRowsAcrossCursorFetches(t *testing.T) {
	p := guardrailProxy(t)
	r := dialRaw(t, p.addr, "capped", sandboxPassword, "app")
	id, _ := r.prepare(tenRows)
	for exec := range 2 {
		r.send(stmtPacket(0x17, id, 1 /* CURSOR_TYPE_READ_ONLY */, 1, 0, 0, 0)...)
		r.read() // column count
		r.read() // definition
		if st := r.eofStatus(); st&0x0040 == 0 {
			t.Fatalf("cursor not opened: status %x", st)
		}
		rows, errs := 0, 0
		for range 4 {
			r.send(stmtPacket(0x1C, id, 3, 0, 0, 0)...) // fetch 3 rows
			for {
				pk := r.read()
				if pk[0] == 0xFF {
					if code := int(pk[1]) | int(pk[2])<<8; code != 1226 {
						t.Errorf("execution %d: fetch ended with error %d, want 1226", exec, code)
					}
					errs++
					break
				}
				if pk[0] == 0xFE && len(pk) < 9 {
					break
				}
				rows++
			}
			r.scalar("SELECT 1") // a statement between fetches
		}
		if rows != 3 || errs == 0 {
			t.Errorf("execution %d: a cursor gave %d rows (%d errors) with max-rows 3; want 3 and then 1226", exec, rows, errs)
		}
	}
}

// TestMaxRowsNotCarriedToPassthroughUser: after COM_CHANGE_USER to a
// passthrough user, no row cap of the previous user applies.
func TestMaxRowsNotCarriedToPassthroughUser(t *testing.T) {
	p := guardrailProxy(t)
	r := dialRaw(t, p.addr, "capped", sandboxPassword, "app")
	r.scalar("SELECT 1")
	if reply := r.changeUser("through", sandboxPassword, "app"); reply[0] != 0 {
		t.Fatalf("change user: %q", reply)
	}
	res, err := r.c.Execute(tenRows)
	if err != nil {
		t.Fatalf("passthrough user after COM_CHANGE_USER: %v", err)
	}
	if n := res.RowNumber(); n != 10 {
		t.Errorf("passthrough user read %d rows, want all 10", n)
	}
}
