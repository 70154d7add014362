package integration

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// The grace of named sandboxes (docs/SANDBOXES.md, "Lifecycle and
// registry") with real clients and pools. The suite's proxies run without
// a grace (startProxyLogging); these tests set one, and discard their
// sandboxes when they end. Discard counters are per process but a proxy's
// reaper also ends what earlier tests left in their grace, so the tests
// follow their own sandbox in the registry rather than count discards.

// withGrace gives a proxy's named sandboxes a grace.
func withGrace(d time.Duration) func(*proxy.Config) {
	return func(c *proxy.Config) { c.Sandbox.Grace = d }
}

// discards is how many sandboxes the proxy discarded, by reason.
func discards(t *testing.T, h *proxyHandle) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, r := range []string{"discarded", "last_connection", "grace", "expired"} {
		out[r] = h.metric(t, "sqlfork_sandboxes_discarded_total", map[string]string{"reason": r})
	}
	return out
}

// discardAtEnd discards the sandbox tag through h when the test ends
// (before h stops), so that it does not outlive the test in its grace.
func discardAtEnd(t *testing.T, h *proxyHandle, tag string) {
	t.Helper()
	t.Cleanup(func() {
		pool := openDB(t, h.userDSN(sandboxUser+"+"+tag, "app"))
		if _, err := pool.Exec("SANDBOX DISCARD"); err != nil {
			t.Errorf("discard sandbox %s: %s", tag, mysqlErr(err))
		}
		_ = pool.Close()
	})
}

// registryRow is the id and creation time of the sandbox called name in
// the registry ("" when there is none).
func registryRow(t *testing.T, root *sql.DB, name string) string {
	t.Helper()
	var id, created string
	err := root.QueryRow("SELECT id, created_at FROM _sqlfork_meta.sandboxes WHERE name = ?", name).Scan(&id, &created)
	if err == sql.ErrNoRows {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return id + " created " + created
}

// sandboxesIn is how many sandboxes the proxy holds in state (active,
// kept, grace).
func sandboxesIn(t *testing.T, h *proxyHandle, state string) float64 {
	t.Helper()
	return h.metric(t, "sqlfork_sandboxes", map[string]string{"state": state})
}

// cycles writes one row per cycle through pool, which keeps no idle
// connection (every statement logs in anew and closes its connection),
// and returns what failed.
func cycles(t *testing.T, h *proxyHandle, tag, prefix string, n int) []string {
	t.Helper()
	pool := openDB(t, h.userDSN(sandboxUser+"+"+tag, "app"))
	pool.SetMaxIdleConns(0)
	var failed []string
	for i := range n {
		if _, err := pool.Exec("INSERT INTO users (name) VALUES (?)", fmt.Sprintf("%s-%03d", prefix, i)); err != nil {
			failed = append(failed, fmt.Sprintf("cycle %d: %s", i, mysqlErr(err)))
		}
	}
	return failed
}

// TestSandboxGraceRapidReconnects: 200 rapid connect-write-disconnect
// cycles on one named sandbox: no cycle fails, every row is kept, and the
// sandbox is never made again (app.users is forked once).
func TestSandboxGraceRapidReconnects(t *testing.T) {
	db, h := sandboxProxy(t, "transparent", withGrace(10*time.Minute))
	discardAtEnd(t, h, "rapid")
	before := checksum(t, db, "app.users")
	logins := h.metric(t, "sqlfork_client_connections_total", nil)
	const n = 200
	if failed := cycles(t, h, "rapid", "rapid", n); len(failed) > 0 {
		t.Errorf("%d of %d cycles failed:\n%s", len(failed), n, strings.Join(failed, "\n"))
	}
	if got := h.metric(t, "sqlfork_client_connections_total", nil) - logins; got < n {
		t.Fatalf("%v logins for %d cycles: the pool reused connections", got, n)
	}
	c := conn(t, openDB(t, h.userDSN(sandboxUser+"+rapid", "app")))
	if got := queryString(t, c, "SELECT COUNT(*) FROM users WHERE name LIKE 'rapid-%'"); got != fmt.Sprint(n) {
		t.Errorf("the sandbox holds %s of the %d rows written", got, n)
	}
	if got := h.metric(t, "sqlfork_forks_total", map[string]string{"kind": "full"}); got != 1 {
		t.Errorf("%v forks, want app.users forked once: the sandbox was made again", got)
	}
	if after := checksum(t, db, "app.users"); after != before {
		t.Error("production changed")
	}
}

// TestSandboxNoGraceReconnects: without a grace each cycle's sandbox ends
// with its connection, while the next cycle's login comes in: the login
// waits for that discard and starts afresh; none fails.
func TestSandboxNoGraceReconnects(t *testing.T) {
	db, h := sandboxProxy(t, "transparent", withGrace(0))
	before := checksum(t, db, "app.users")
	const n = 50
	if failed := cycles(t, h, "nograce", "nograce", n); len(failed) > 0 {
		t.Errorf("%d of %d cycles failed:\n%s", len(failed), n, strings.Join(failed, "\n"))
	}
	// A cycle whose login comes before the proxy has seen the previous
	// one's connection close shares its sandbox, so there are 1 to n.
	testkit.EventuallyWithin(t, "the last cycle's sandbox to be discarded", time.Minute, func() bool {
		return sandboxesIn(t, h, "active")+sandboxesIn(t, h, "grace") == 0
	})
	if d := discards(t, h)["last_connection"]; d < 1 {
		t.Errorf("%v sandboxes ended with their connection, want at least 1", d)
	} else {
		t.Logf("%v sandboxes for %d cycles", d, n)
	}
	c := conn(t, openDB(t, h.userDSN(sandboxUser+"+nograce", "app")))
	wantString(t, c, "SELECT COUNT(*) FROM users WHERE name LIKE 'nograce-%'", "0", "a new sandbox holds %s rows of ended ones")
	if after := checksum(t, db, "app.users"); after != before {
		t.Error("production changed")
	}
}

// TestSandboxGraceORMWorkloadsInSequence: the four ORM workloads (GORM,
// SQLAlchemy, mysql2, Connector/J) run one after another, twice, through
// one named sandbox with nothing else holding it: each workload's pool
// closes its connections before the next starts, and each sees what the
// ones before it made, as the same sequence does on MariaDB directly. The
// workloads' tables have distinct names (gorm_, sa_, m2_, cj_) and share
// one database, so each lists the others' tables too, directly as in the
// sandbox.
func TestSandboxGraceORMWorkloadsInSequence(t *testing.T) {
	py := requireSQLAlchemy(t)
	requireMysql2(t)
	cp := requireConnectorJ(t, "orm/java/Workload.java")
	db, h := sandboxProxy(t, "transparent", withGrace(10*time.Minute))
	discardAtEnd(t, h, "orms")
	root := openDB(t, db.DSN(""))
	ormDatabases(t, "seq_direct", "seq_sb")
	direct := ormTarget{db.Addr, db.User, db.Password, "seq_direct"}
	sandboxed := ormTarget{h.addr, sandboxUser + "+orms", sandboxPassword, "seq_sb"}
	workloads := []struct {
		name string
		run  func(tg ormTarget, n int) string
	}{
		{"gorm", func(tg ormTarget, n int) string { return runGorm(t, tg, n) }},
		{"sqlalchemy", func(tg ormTarget, n int) string { return runSQLAlchemy(t, py, tg, n) }},
		{"mysql2", func(tg ormTarget, n int) string { return runMysql2(t, tg, n) }},
		{"connector/j", func(tg ormTarget, n int) string { return runConnectorJ(t, cp, tg, n) }},
	}
	first := ""
	for n := 1; n <= 2; n++ {
		for _, w := range workloads {
			want := w.run(direct, n)
			got := strings.ReplaceAll(w.run(sandboxed, n), "seq_sb", "seq_direct")
			if got != want {
				t.Errorf("%s run %d: through the sandbox\n%s\ndirectly\n%s", w.name, n, got, want)
			} else {
				t.Logf("%s run %d transcript (both):\n%s", w.name, n, got)
			}
			row := registryRow(t, root, "orms")
			if first == "" {
				first = row
			}
			if row == "" || row != first {
				t.Errorf("after %s run %d the sandbox is %q, want the one the first workload made (%s)", w.name, n, row, first)
			}
		}
	}
}

// TestSandboxGracePoolAcrossGraceEnd: a pool that closes idle connections
// (database/sql's max idle time) and opens new ones: within the grace its
// next connection finds the sandbox with its rows; once the pool has let
// go of every connection for longer than the grace, the sandbox is
// discarded (reason grace) and the next connection starts afresh from
// production.
func TestSandboxGracePoolAcrossGraceEnd(t *testing.T) {
	var cfg proxy.Config
	db, h := sandboxProxy(t, "transparent", func(c *proxy.Config) {
		c.Sandbox.Grace = 10 * time.Minute
		c.Sandbox.ReapInterval = 200 * time.Millisecond
		cfg = *c
	})
	discardAtEnd(t, h, "lifetime")
	root := openDB(t, db.DSN(""))
	before := checksum(t, db, "app.users")
	pool := openDB(t, h.userDSN(sandboxUser+"+lifetime", "app"))
	pool.SetConnMaxIdleTime(50 * time.Millisecond)
	write := func(name string) {
		t.Helper()
		if _, err := pool.Exec("INSERT INTO users (name) VALUES (?)", name); err != nil {
			t.Fatalf("write %s: %s", name, mysqlErr(err))
		}
	}
	rows := func() string {
		t.Helper()
		return queryString(t, pool, "SELECT COUNT(*) FROM users WHERE name LIKE 'life-%'")
	}
	write("life-1")
	made := registryRow(t, root, "lifetime")
	testkit.EventuallyWithin(t, "the pool to close its connections, leaving the sandbox in its grace", time.Minute, func() bool {
		return pool.Stats().OpenConnections == 0 && sandboxesIn(t, h, "grace") == 1
	})
	if got := rows(); got != "1" {
		t.Fatalf("within the grace the pool's new connection sees %s rows, want 1", got)
	}
	write("life-2")

	// A grace shorter than the pool's pause (set as SIGHUP sets it: it
	// applies to graces that start afterwards).
	cfg.Sandbox.Grace = time.Second
	h.srv.SetSandboxLimits(cfg)
	// The discard is counted just after its registry row goes.
	testkit.EventuallyWithin(t, "the grace to end with the pool's connections closed", time.Minute, func() bool {
		return pool.Stats().OpenConnections == 0 && registryRow(t, root, "lifetime") == "" && discards(t, h)["grace"] >= 1
	})
	if d := discards(t, h); d["grace"] < 1 || d["last_connection"] != 0 || d["discarded"] != 0 {
		t.Errorf("discards %v, want the sandbox's for its grace", d)
	}
	if got := rows(); got != "0" {
		t.Errorf("after the grace the pool's new connection sees %s rows, want a fresh sandbox's 0", got)
	}
	write("life-3")
	if got := rows(); got != "1" {
		t.Errorf("the fresh sandbox holds %s rows, want 1", got)
	}
	if again := registryRow(t, root, "lifetime"); again == "" || again == made {
		t.Errorf("the sandbox after the grace is %q, want a new one (the first: %s)", again, made)
	}
	if after := checksum(t, db, "app.users"); after != before {
		t.Error("production changed")
	}
}

// TestSandboxGraceAcrossProxies: a sandbox in its grace in one proxy is
// found by a login through another sharing the upstream; a proxy whose
// grace ends while a connection through the other holds the sandbox lets
// go of it without discarding it.
func TestSandboxGraceAcrossProxies(t *testing.T) {
	var cfgA proxy.Config
	db, a := sandboxProxy(t, "transparent", func(c *proxy.Config) { c.Sandbox.Grace = 10 * time.Minute; cfgA = *c })
	_, b := sandboxProxy(t, "transparent", withGrace(10*time.Minute))
	root := openDB(t, db.DSN(""))
	before := checksum(t, db, "app.users")
	if failed := cycles(t, a, "across", "across-a", 1); len(failed) > 0 {
		t.Fatal(failed)
	}
	testkit.Eventually(t, "the sandbox in its grace in proxy A", func() bool { return sandboxesIn(t, a, "grace") == 1 })
	made := registryRow(t, root, "across")

	held := conn(t, openDB(t, b.userDSN(sandboxUser+"+across", "app")))
	if got := queryString(t, held, "SELECT COUNT(*) FROM users WHERE name LIKE 'across-%'"); got != "1" {
		t.Fatalf("through proxy B: %s rows, want A's 1", got)
	}
	mustExecC(t, held, "INSERT INTO users (name) VALUES ('across-b')")

	// A's next grace is short; the connection through B still holds the
	// sandbox when it ends.
	cfgA.Sandbox.Grace = time.Second
	a.srv.SetSandboxLimits(cfgA)
	if failed := cycles(t, a, "across", "across-a2", 1); len(failed) > 0 {
		t.Fatal(failed)
	}
	testkit.Eventually(t, "proxy A to let go of the sandbox", func() bool {
		return sandboxesIn(t, a, "grace")+sandboxesIn(t, a, "active") == 0
	})
	if row := registryRow(t, root, "across"); row != made {
		t.Errorf("the sandbox B holds is %q after A let go, want it unchanged (%s)", row, made)
	}
	wantString(t, held, "SELECT COUNT(*) FROM users WHERE name LIKE 'across-%'", "3", "through proxy B after A let go: %s rows, want 3")
	mustExecC(t, held, "SANDBOX DISCARD")
	if after := checksum(t, db, "app.users"); after != before {
		t.Error("production changed")
	}
}
