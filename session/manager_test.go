package session_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/session"
	"github.com/sqlfork/sqlfork-proxy/session/sessiontest"
)

// TestNewStartsManager: at start the manager reads the upstream's version
// and name case rule, creates the registry, checks its account's
// privileges, and picks the fork strategy.
func TestNewStartsManager(t *testing.T) {
	allPrivileges := []string{"GRANT ALL PRIVILEGES ON *.* TO `sqlfork`@`%` WITH GRANT OPTION"}
	for _, tc := range []struct {
		name          string
		cfg           session.Config
		setup         func(up *sessiontest.Upstream)
		strategy      string
		caseSensitive bool
		writable      bool
		warns         []string // warnings logged at start
		quiet         []string // warnings not logged
	}{
		{name: "MariaDB", strategy: "copy", caseSensitive: true,
			warns: []string{"no TRIGGER privilege"}, quiet: []string{"can change production"}},
		{name: "TRIGGER granted on production", strategy: "copy", caseSensitive: true,
			setup: func(up *sessiontest.Upstream) { up.SetTriggerGrants(`\_sqlfork%`, "app") },
			quiet: []string{"no TRIGGER privilege"}},
		{name: "TRIGGER granted on the proxy's schemas only", strategy: "copy", caseSensitive: true,
			setup: func(up *sessiontest.Upstream) { up.SetTriggerGrants(`\_sqlfork%`) },
			warns: []string{"no TRIGGER privilege"}},
		{name: "SeekDB", strategy: "seekdb", caseSensitive: true,
			setup: func(up *sessiontest.Upstream) { up.SetVersion("5.7.25-OceanBase seekdb-v1.1.0.0") },
			quiet: []string{"no TRIGGER privilege"}},
		{name: "SeekDB forced to copy", cfg: session.Config{Forker: "copy"}, strategy: "copy", caseSensitive: true,
			setup: func(up *sessiontest.Upstream) { up.SetVersion("5.7.25-OceanBase seekdb-v1.1.0.0") }},
		{name: "lower_case_table_names=1", strategy: "copy",
			setup: func(up *sessiontest.Upstream) { up.SetLowerCaseTableNames(1) }},
		{name: "account can write production", strategy: "copy", caseSensitive: true, writable: true,
			setup: func(up *sessiontest.Upstream) { up.SetGrants(allPrivileges...) },
			warns: []string{"can change production"}},
		{name: "other prefix", cfg: session.Config{Prefix: "_sbx"}, strategy: "copy", caseSensitive: true,
			setup: func(up *sessiontest.Upstream) {
				up.SetGrants("GRANT SELECT ON `app`.* TO `sqlfork`@`%`", "GRANT ALL PRIVILEGES ON `\\_sbx%`.* TO `sqlfork`@`%`")
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.cfg, tc.setup)
			if got := e.m.Strategy(); got != tc.strategy {
				t.Errorf("strategy %s, want %s", got, tc.strategy)
			}
			if got := e.m.CaseSensitive(); got != tc.caseSensitive {
				t.Errorf("case sensitive %v, want %v", got, tc.caseSensitive)
			}
			known, writable, grants := e.m.ProductionWritable()
			if !known || writable != tc.writable || writable != (len(grants) > 0) {
				t.Errorf("ProductionWritable() = %v, %v, %q; want known, %v", known, writable, grants, tc.writable)
			}
			pfx := tc.cfg.Prefix
			if pfx == "" {
				pfx = prefix
			}
			if e.m.Prefix() != pfx {
				t.Errorf("prefix %q", e.m.Prefix())
			}
			meta := q(sandbox.MetaSchema(pfx))
			for _, re := range []string{
				"^SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED$",
				"^CREATE DATABASE IF NOT EXISTS " + meta + "$",
				"^CREATE TABLE IF NOT EXISTS " + meta + `\.sandboxes `,
				"^CREATE TABLE IF NOT EXISTS " + meta + `\.tables `,
				"^CREATE TABLE IF NOT EXISTS " + meta + `\.holders `,
				"^CREATE TABLE IF NOT EXISTS " + meta + `\.settings `,
				"^INSERT IGNORE INTO " + meta + `\.settings \(name, value\) VALUES \('lock_secret', '[0-9a-f]{64}'\)$`,
			} {
				if n := e.count(re); n != 1 {
					t.Errorf("%d statements match %s, want 1", n, re)
				}
			}
			for _, w := range tc.warns {
				if !e.logged(w) {
					t.Errorf("no warning %q logged", w)
				}
			}
			for _, w := range tc.quiet {
				if e.logged(w) {
					t.Errorf("warning %q logged", w)
				}
			}
		})
	}
}

// TestNewKeepsTheLockSecret: a second process reads the lock secret the
// first one made, so both compute the same fork lock names.
func TestNewKeepsTheLockSecret(t *testing.T) {
	e := newEnv(t, session.Config{}, nil)
	secret := func() string {
		rows, err := e.up.Query("SELECT value FROM `_sqlfork_meta`.settings WHERE name = 'lock_secret'")
		if err != nil || len(rows) != 1 {
			t.Fatalf("lock secret: %v, %d rows", err, len(rows))
		}
		return *rows[0][0]
	}
	first := secret()
	m2 := e.start(session.Config{})
	defer m2.Close()
	if got := secret(); got != first {
		t.Errorf("the second process replaced the lock secret")
	}
	// Both take the same lock for the same table of the same sandbox.
	s1 := e.open(session.Options{User: "u", Mode: session.Transparent, Sandbox: "shared"})
	s2, err := m2.Open(e.ctx, session.Options{User: "u", Mode: session.Transparent, Sandbox: "shared"})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	e.up.ClearLog()
	e.mustPlan(s1, "UPDATE t SET a = 1")
	// The second process goes for the fork lock as if its registry check
	// had come before the first one's fork (it finds the fork under the
	// lock).
	e.up.On(`g\.generation FROM`).Rows()
	if _, err := plan(e.ctx, s2, "UPDATE t SET a = 2"); err != nil {
		t.Fatal(err)
	}
	locks := e.up.Matching(`^SELECT GET_LOCK\('[^']*', 1800\)$`) // fork locks
	if len(locks) != 2 || locks[0] != locks[1] {
		t.Errorf("fork locks %q, want the same one twice", locks)
	}
}

// TestNewFails: a manager that cannot start says why and leaves no side
// connection open.
func TestNewFails(t *testing.T) {
	refused := &mysql.MyError{Code: 1040, State: "08004", Message: "Too many connections"}
	for _, tc := range []struct {
		name  string
		cfg   session.Config
		setup func(up *sessiontest.Upstream)
		want  string
		code  uint16 // of a *session.DialError, when not 0
	}{
		{name: "bad prefix", cfg: session.Config{Prefix: "Bad-Prefix"}, want: "may hold only"},
		{name: "bad forker", cfg: session.Config{Forker: "rsync"}, want: "unknown forker"},
		{name: "upstream refuses", setup: func(up *sessiontest.Upstream) { up.FailDials(1, refused) },
			want: "Too many connections", code: 1040},
		{name: "isolation cannot be set", setup: func(up *sessiontest.Upstream) {
			up.On("^SET SESSION TRANSACTION").Fail(1227, "42000", "Access denied")
		}, want: "Access denied", code: 1227},
		{name: "version unreadable", setup: func(up *sessiontest.Upstream) {
			up.On(`^SELECT VERSION\(\)`).Fail(1045, "28000", "Access denied")
		}, want: "read upstream version"},
		{name: "registry cannot be created", setup: func(up *sessiontest.Upstream) {
			up.On("^CREATE DATABASE IF NOT EXISTS `_sqlfork_meta`").Fail(1044, "42000", "Access denied for user")
		}, want: "needs all privileges on `\\_sqlfork%`"},
		{name: "lock secret missing", setup: func(up *sessiontest.Upstream) {
			up.On("^SELECT value FROM `_sqlfork_meta`.settings").Rows()
		}, want: "lock secret is missing"},
		{name: "lock secret unreadable", setup: func(up *sessiontest.Upstream) {
			up.On("^SELECT value FROM `_sqlfork_meta`.settings").Fail(1142, "42000", "SELECT command denied")
		}, want: "read the registry's lock secret"},
		{name: "registry unreadable at reconciliation", setup: func(up *sessiontest.Upstream) {
			up.On("^SELECT id FROM `_sqlfork_meta`.sandboxes$").Fail(1142, "42000", "SELECT command denied")
		}, want: "read registry"},
		{name: "expiry unreadable", setup: func(up *sessiontest.Upstream) {
			up.On(`^SELECT s\.id, s\.name, s\.kept`).Fail(1142, "42000", "SELECT command denied")
		}, want: "read registry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := sessiontest.NewUpstream()
			if tc.setup != nil {
				tc.setup(up)
			}
			m, err := session.New(context.Background(), tc.cfg, up.Dialer(), zap.NewNop())
			if err == nil {
				m.Close()
				t.Fatal("started")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
			if tc.code != 0 {
				var de *session.DialError
				code, _, _, _ := sessiontest.Code(err)
				if !errors.As(err, &de) || code != tc.code {
					t.Errorf("error %v (%T), want a *session.DialError with code %d", err, err, tc.code)
				}
			}
			if n := up.OpenConns(); n != 0 {
				t.Errorf("%d side connections left open", n)
			}
			if u := up.Unknown(); len(u) > 0 {
				t.Errorf("unknown statements %q", u)
			}
		})
	}
}

// TestNewPrivilegeCheckFails: the start-up privilege check is advisory: a
// failure is logged and the manager starts.
func TestNewPrivilegeCheckFails(t *testing.T) {
	e := newEnv(t, session.Config{}, func(up *sessiontest.Upstream) {
		up.On(`^SHOW GRANTS`).Fail(1141, "42000", "There is no such grant")
	})
	if known, _, _ := e.m.ProductionWritable(); known {
		t.Error("privileges known")
	}
	if !e.logged("could not tell whether the upstream account can write production") {
		t.Error("no warning")
	}
}

// TestManagerCounts: Counts reports the sandboxes of this process by state.
func TestManagerCounts(t *testing.T) {
	e := newEnv(t, session.Config{}, nil)
	a := e.transparent("u")
	e.transparent("u")
	e.mustPlan(a, "SANDBOX KEEP TTL 1h")
	if got := e.m.Counts(); got["active"] != 1 || got["kept"] != 1 {
		t.Errorf("Counts() = %v", got)
	}
	if st := e.m.PoolStats(); st.Size != session.DefaultSideConnections || st.InUse != 0 {
		t.Errorf("PoolStats() = %+v", st)
	}
}
