package session_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/session"
	"github.com/sqlfork/sqlfork-proxy/session/sessiontest"
)

const longAgo = "'2000-01-01 00:00:00.000000'"

// TestReconcileAtStart: at start the proxy drops what no registry row
// explains, sandboxes past their TTL, idle limit or lease, and forks a
// crash interrupted — and nothing else.
func TestReconcileAtStart(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  session.Config
		// prepare sets up state with a first process (m) and returns the
		// schemas the next start must drop and those it must keep.
		prepare func(e *env, m *session.Manager) (dropped, kept []string)
	}{
		{name: "schemas of unknown sandboxes", prepare: func(e *env, _ *session.Manager) ([]string, []string) {
			e.up.AddTable(sessiontest.Table{DB: "_sqlfork_deadbeef_app", Name: "t"})
			e.up.AddTable(sessiontest.Table{DB: "_sqlfork_deadbeef", Name: "TABLES", Type: "VIEW"})
			e.up.AddTable(sessiontest.Table{DB: "_sqlfork_notanid_app", Name: "t"}) // a look-alike
			e.up.AddTable(sessiontest.Table{DB: "_sqlforkapp", Name: "t"})
			return []string{"_sqlfork_deadbeef_app", "_sqlfork_deadbeef"}, []string{"_sqlfork_notanid_app", "_sqlforkapp", "app"}
		}},
		{name: "kept sandbox survives with its forks", prepare: func(e *env, m *session.Manager) ([]string, []string) {
			id := keptSandbox(e, m, "keepme", "1h")
			return nil, []string{physDB(id, "app"), "app"}
		}},
		{name: "kept sandbox past its TTL", prepare: func(e *env, m *session.Manager) ([]string, []string) {
			id := keptSandbox(e, m, "old", "1h")
			mustExec(e, "UPDATE `_sqlfork_meta`.sandboxes SET expires_at = "+longAgo+" WHERE id = '"+id+"'")
			return []string{physDB(id, "app")}, []string{"app"}
		}},
		{name: "kept sandbox idle too long", cfg: session.Config{IdleTTL: time.Hour},
			prepare: func(e *env, m *session.Manager) ([]string, []string) {
				id := keptSandbox(e, m, "idle", "0")
				mustExec(e, "UPDATE `_sqlfork_meta`.sandboxes SET last_active = "+longAgo+" WHERE id = '"+id+"'")
				// The first process let it go (its reaper releases it).
				mustExec(e, "DELETE FROM `_sqlfork_meta`.holders WHERE sandbox_id = '"+id+"'")
				return []string{physDB(id, "app")}, nil
			}},
		{name: "idle kept sandbox another process holds", cfg: session.Config{IdleTTL: time.Hour},
			prepare: func(e *env, m *session.Manager) ([]string, []string) {
				s := openOn(e, m, session.Options{User: "u", Mode: session.Explicit, Sandbox: "held"})
				e.mustPlan(s, "UPDATE t SET a = 1")
				e.mustPlan(s, "SANDBOX KEEP TTL 0")
				id := e.sandboxID("held")
				mustExec(e, "UPDATE `_sqlfork_meta`.sandboxes SET last_active = "+longAgo+" WHERE id = '"+id+"'")
				return nil, []string{physDB(id, "app")}
			}},
		{name: "unkept sandbox of a crashed process", prepare: func(e *env, m *session.Manager) ([]string, []string) {
			id := crashedSandbox(e)
			mustExec(e, "UPDATE `_sqlfork_meta`.sandboxes SET lease_until = "+longAgo+" WHERE id = '"+id+"'")
			mustExec(e, "UPDATE `_sqlfork_meta`.holders SET lease_until = "+longAgo+" WHERE sandbox_id = '"+id+"'")
			return []string{physDB(id, "app")}, nil
		}},
		{name: "unkept sandbox of a live process", prepare: func(e *env, m *session.Manager) ([]string, []string) {
			id := crashedSandbox(e)
			return nil, []string{physDB(id, "app")}
		}},
		// Its reaper stalled (every side connection busy with long forks):
		// its leases lapse, but it holds its liveness lock.
		{name: "unkept sandbox of a live process late renewing its leases", prepare: func(e *env, m *session.Manager) ([]string, []string) {
			late := e.start(session.Config{ReapInterval: time.Hour})
			e.t.Cleanup(late.Close)
			s := openOn(e, late, session.Options{User: "u", Mode: session.Explicit, Sandbox: "late"})
			e.t.Cleanup(s.Close)
			e.mustPlan(s, "UPDATE t SET a = 1")
			id := e.sandboxID("late")
			mustExec(e, "UPDATE `_sqlfork_meta`.sandboxes SET lease_until = "+longAgo+" WHERE id = '"+id+"'")
			mustExec(e, "UPDATE `_sqlfork_meta`.holders SET lease_until = "+longAgo+" WHERE sandbox_id = '"+id+"'")
			return nil, []string{physDB(id, "app")}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.cfg, nil)
			dropped, kept := tc.prepare(e, e.m)
			e.up.ClearLog()
			m2 := e.start(tc.cfg)
			defer m2.Close()
			for _, db := range dropped {
				if e.up.HasSchema(db) {
					t.Errorf("%s survived the start", db)
				}
			}
			for _, db := range kept {
				if !e.up.HasSchema(db) {
					t.Errorf("%s was dropped", db)
				}
			}
			for _, db := range kept {
				if n := e.count("^DROP DATABASE IF EXISTS " + q(db) + "$"); n != 0 {
					t.Errorf("the start tried to drop %s", db)
				}
			}
		})
	}
}

// keptSandbox creates the kept sandbox name (TTL ttl) on m with a fork of
// app.t, leaves it and returns its id.
func keptSandbox(e *env, m *session.Manager, name, ttl string) string {
	e.t.Helper()
	s := openOn(e, m, session.Options{User: "u", Mode: session.Explicit})
	e.mustPlan(s, "SANDBOX CREATE "+name+" TTL "+ttl)
	e.mustPlan(s, "UPDATE t SET a = 1")
	s.Close()
	return e.sandboxID(name)
}

// crashedSandbox makes an unkept sandbox with a fork of app.t on a process
// that then stops without closing its sessions, and returns its id.
func crashedSandbox(e *env) string {
	e.t.Helper()
	gone := e.start(session.Config{})
	s := openOn(e, gone, session.Options{User: "u", Mode: session.Explicit, Sandbox: "orphan"})
	e.mustPlan(s, "UPDATE t SET a = 1")
	gone.Close() // its sessions never close: their sandboxes are left to their lease
	return e.sandboxID("orphan")
}

func openOn(e *env, m *session.Manager, o session.Options) *session.Session {
	e.t.Helper()
	s, err := m.Open(e.ctx, o)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

func mustExec(e *env, sql string) {
	e.t.Helper()
	if n, err := e.up.Exec(sql); err != nil || n == 0 {
		e.t.Fatalf("%s: %d rows, %v", sql, n, err)
	}
}

// TestReconcileUnexplainedTables: tables in a known sandbox's schema that
// no registry row explains are dropped at start; the sandbox's own stay.
func TestReconcileUnexplainedTables(t *testing.T) {
	e := newEnv(t, session.Config{}, nil)
	id := keptSandbox(e, e.m, "keepme", "1h")
	e.up.AddTable(sessiontest.Table{DB: physDB(id, "app"), Name: "stray"})
	m2 := e.start(session.Config{})
	defer m2.Close()
	if e.up.HasTable(physDB(id, "app"), "stray") {
		t.Error("the stray table survived")
	}
	if !e.up.HasTable(physDB(id, "app"), "t") {
		t.Error("the sandbox's fork was dropped")
	}
}

// TestReconcileInterruptedFork: a fork a crash interrupted (its marker row
// left, its upstream lock gone with the connection) is dropped at the next
// start, and a retry in the first process forks again.
func TestReconcileInterruptedFork(t *testing.T) {
	e := newEnv(t, session.Config{}, func(up *sessiontest.Upstream) {
		up.On(`^INSERT INTO .* SELECT `).Nth(1).Break()
	})
	s := e.open(session.Options{User: "u", Mode: session.Explicit, Sandbox: "box"})
	if _, err := plan(e.ctx, s, "UPDATE t SET a = 1"); !errors.Is(err, sessiontest.ErrBroken) {
		t.Fatalf("fork on a broken connection: %v", err)
	}
	id := e.sandboxID("box")
	phys := physDB(id, "app")
	if kind, _, _ := e.tableRow(id, "app", "t"); kind != "forking" || !e.up.HasTable(phys, "t") {
		t.Fatalf("after the crash: marker %q, half-made fork present %v", kind, e.up.HasTable(phys, "t"))
	}
	m2 := e.start(session.Config{})
	defer m2.Close()
	if kind, _, _ := e.tableRow(id, "app", "t"); kind != "" || e.up.HasTable(phys, "t") {
		t.Errorf("after the next start: marker %q, half-made fork present %v", kind, e.up.HasTable(phys, "t"))
	}
	// The first process retries: the fork is made afresh.
	p := e.mustPlan(s, "UPDATE t SET a = 1")
	if kind, rows, _ := e.tableRow(id, "app", "t"); kind != "fork" || rows != "3" {
		t.Errorf("retried fork: %s with %s rows", kind, rows)
	}
	if want := "UPDATE `" + phys + "`.`t` SET a = 1"; p.SQL != want {
		t.Errorf("SQL %q, want %q", p.SQL, want)
	}
}

// TestReconcileForkInProgress: a fork marker whose lock another process
// holds is a fork in progress: the next start leaves it, unless it is
// older than any fork may take.
func TestReconcileForkInProgress(t *testing.T) {
	for _, stale := range []bool{false, true} {
		name := "running"
		if stale {
			name = "stale"
		}
		t.Run(name, func(t *testing.T) {
			copying := newGate()
			defer copying.open()
			e := newEnv(t, session.Config{}, func(up *sessiontest.Upstream) {
				up.On(`^INSERT INTO .* SELECT `).Nth(1).Before(copying.hook)
			})
			s := e.open(session.Options{User: "u", Mode: session.Explicit, Sandbox: "box"})
			done := make(chan error, 1)
			go func() {
				_, err := plan(e.ctx, s, "UPDATE t SET a = 1")
				done <- err
			}()
			copying.reached(t)
			id := e.sandboxID("box")
			if stale {
				mustExec(e, "UPDATE `_sqlfork_meta`.tables SET created_at = "+longAgo+" WHERE kind = 'forking'")
			}
			m2 := e.start(session.Config{})
			kind, _, _ := e.tableRow(id, "app", "t")
			copying.open()
			err := await(t, done, "the fork")
			m2.Close()
			switch {
			case !stale && (kind != "forking" || err != nil):
				t.Errorf("the start took a running fork for a crashed one: marker %q, fork error %v", kind, err)
			case stale && kind != "":
				t.Errorf("stale marker survived the start")
			case stale && err == nil:
				t.Errorf("the fork whose table the start dropped succeeded")
			}
		})
	}
}

// TestRestartKeepsKeptSandbox: a kept sandbox is attached after a restart
// with its forks, which are not made again.
func TestRestartKeepsKeptSandbox(t *testing.T) {
	e := newEnv(t, session.Config{}, nil)
	id := keptSandbox(e, e.m, "keepme", "1h")
	e.m.Close()
	e.m = e.start(session.Config{})
	e.up.ClearLog()
	s := e.open(session.Options{User: "u", Mode: session.Explicit, Sandbox: "keepme"})
	p := e.mustPlan(s, "UPDATE t SET a = 2")
	if want := "UPDATE `" + physDB(id, "app") + "`.`t` SET a = 2"; p.SQL != want {
		t.Errorf("SQL %q, want %q", p.SQL, want)
	}
	if n := e.count(`^CREATE TABLE .* LIKE `); n != 0 {
		t.Errorf("forked again after the restart")
	}
	// Another user does not see it.
	_, err := e.m.Open(e.ctx, session.Options{User: "other", Mode: session.Explicit, Sandbox: "keepme"})
	wantCode(t, err, 1105, "HY000", `no sandbox named "keepme"`)
}

// TestDiscardOnLastClose: an unkept sandbox goes (schemas and registry
// rows) when its last connection closes; a kept one stays.
func TestDiscardOnLastClose(t *testing.T) {
	e := newEnv(t, session.Config{}, nil)
	a := e.open(session.Options{User: "u", Mode: session.Transparent, Sandbox: "pool"})
	b := e.open(session.Options{User: "u", Mode: session.Transparent, Sandbox: "pool"})
	e.mustPlan(a, "UPDATE t SET a = 1")
	id := e.sandboxID("pool")
	a.Close()
	if !e.up.HasSchema(physDB(id, "app")) {
		t.Fatal("discarded while a connection is attached")
	}
	b.Close()
	if e.up.HasSchema(physDB(id, "app")) {
		t.Error("the fork survived the last connection")
	}
	if rows, _ := e.up.Query("SELECT id FROM `_sqlfork_meta`.sandboxes"); len(rows) != 0 {
		t.Errorf("registry rows left: %d", len(rows))
	}
	if rows, _ := e.up.Query("SELECT sandbox_id FROM `_sqlfork_meta`.tables"); len(rows) != 0 {
		t.Errorf("table rows left: %d", len(rows))
	}

	k := e.transparent("u")
	e.mustPlan(k, "UPDATE t SET a = 1")
	e.mustPlan(k, "SANDBOX KEEP")
	kid := e.idOf(k)
	k.Close()
	if !e.up.HasSchema(physDB(kid, "app")) {
		t.Error("a kept sandbox was discarded when its connection closed")
	}
}

// TestDiscardFailureIsLogged: a discard that fails when the last
// connection closes is logged; the lease and the reaper clean up later.
func TestDiscardFailureIsLogged(t *testing.T) {
	e := newEnv(t, session.Config{}, func(up *sessiontest.Upstream) {
		up.On("^DELETE FROM `_sqlfork_meta`.sandboxes").Fail(1205, "HY000", "Lock wait timeout exceeded")
	})
	s := e.transparent("u")
	e.mustPlan(s, "UPDATE t SET a = 1")
	s.Close()
	if !e.logged("discard sandbox after last connection") {
		t.Error("no warning")
	}
}

// TestReaper: every reap interval the proxy renews the leases of its
// sandboxes, merges tables other processes forked into a sandbox both
// hold, notices sandboxes discarded elsewhere, and drops expired ones.
func TestReaper(t *testing.T) {
	e, other := newReapingPair(t)
	a := e.open(session.Options{User: "u", Mode: session.Explicit, Sandbox: "shared"})
	e.mustPlan(a, "UPDATE t SET a = 1")
	id := e.sandboxID("shared")
	b := openOn(e, other, session.Options{User: "u", Mode: session.Explicit, Sandbox: "shared"})
	defer b.Close()
	if p := e.mustPlan(b, "SELECT * FROM u"); p.Flags().Changed {
		t.Fatalf("a table nobody forked is read from the sandbox: %s", p.SQL)
	}
	e.mustPlan(a, "UPDATE u SET t_id = 1")

	// Within a reap interval the other process reads the fork, and a
	// discard through one process reaches the other's sessions.
	forkSharedThenDiscarded(e, a, b, id)

	// A kept sandbox past its TTL is dropped by the reaper.
	k := e.open(session.Options{User: "u", Mode: session.Explicit})
	e.mustPlan(k, "SANDBOX CREATE short TTL 1h")
	e.mustPlan(k, "UPDATE t SET a = 1")
	kid := e.sandboxID("short")
	mustExec(e, "UPDATE `_sqlfork_meta`.sandboxes SET expires_at = "+longAgo+" WHERE id = '"+kid+"'")
	e.wait("^DROP DATABASE IF EXISTS " + q(physDB(kid, "app")) + "$")
	// Either process may have dropped it; this one notices at its next
	// reap at the latest.
	discardedAfterReap(e, k, "short")
}

// newReapingPair is an env whose reaper runs every few milliseconds and a
// second process on the same upstream, closed with the test.
func newReapingPair(t *testing.T) (*env, *session.Manager) {
	cfg := session.Config{ReapInterval: 5 * time.Millisecond, Lease: time.Minute} // a reap has a lease's time
	e := newEnv(t, cfg, nil)
	other := e.start(cfg)
	t.Cleanup(other.Close)
	return e, other
}

// forkSharedThenDiscarded: b, on another process than a, reads app.u from
// the fork a made in sandbox id ("shared") within a reap interval; then a
// discard through a reaches b.
func forkSharedThenDiscarded(e *env, a, b *session.Session, id string) {
	e.t.Helper()
	want := "SELECT * FROM `" + physDB(id, "app") + "`.`u`"
	afterReap(e, func() bool { return e.mustPlan(b, "SELECT * FROM u").SQL == want })
	e.mustPlan(a, "SANDBOX DISCARD")
	discardedAfterReap(e, b, "shared")
}

// discardedAfterReap waits, reap after reap, until s's statements fail,
// and wants them to fail because its sandbox name was discarded.
func discardedAfterReap(e *env, s *session.Session, name string) {
	e.t.Helper()
	var err error
	afterReap(e, func() bool { _, err = plan(e.ctx, s, "SELECT 1"); return err != nil })
	wantCode(e.t, err, 1105, "HY000", `sandbox "`+name+`" was discarded`)
}

// afterReap waits, reap after reap, until cond holds (for at most testkit.WaitLimit).
//
// Reaps are counted by their expiry step, which every reap of every
// process runs. Not by a renewal's read of a sandbox's row: a process
// reads none once it has no sandbox in memory, and the renewal that made
// cond true (a discard noticed, the sandbox forgotten) may have run just
// before the log was cleared — there would be no next one to wait for.
func afterReap(e *env, cond func() bool) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, testkit.WaitLimit)
	defer cancel()
	for !cond() {
		// Two expiry steps after this point: when both are one
		// process's, a whole reap of it (renew, then expiry) ran after
		// it; else the next round waits again.
		for range 2 {
			e.up.ClearLog()
			if err := e.up.Wait(ctx, `^SELECT s\.id, s\.name, s\.kept`); err != nil {
				e.t.Fatalf("the condition did not hold after the reaps of testkit.WaitLimit (%v)", err)
			}
		}
	}
}

// TestSharedSandboxOpenedBeforeFirstFork: two processes that both opened a
// named sandbox before either forked into it (a pool's connections through
// two proxies) share its forks within a reap interval, as when one of them
// attaches it later.
func TestSharedSandboxOpenedBeforeFirstFork(t *testing.T) {
	e, other := newReapingPair(t)
	a := e.open(session.Options{User: "u", Mode: session.Explicit, Sandbox: "shared"})
	b := openOn(e, other, session.Options{User: "u", Mode: session.Explicit, Sandbox: "shared"})
	defer b.Close()
	e.mustPlan(a, "UPDATE u SET t_id = 1")
	forkSharedThenDiscarded(e, a, b, e.sandboxID("shared"))
}

// TestCreateNotLetGoWhileRecorded: a sandbox SANDBOX CREATE … TTL makes is
// not idle while it is recorded (the record may wait for its life lock
// past a reap interval): the reaper does not let go of it, and the
// session gets it.
func TestCreateNotLetGoWhileRecorded(t *testing.T) {
	recording := newGate()
	defer recording.open()
	e := newEnv(t, graceCfg(), nil)
	id := session.NameID("short")
	// Its row is written (the reaper reads it), the rest (this process
	// its holder) not yet.
	e.up.On("^REPLACE INTO `_sqlfork_meta`.holders .* VALUES \\('" + id + "'").Nth(1).Before(recording.hook)
	s := e.open(session.Options{User: "u", Mode: session.Explicit})
	created := make(chan error, 1)
	go func() { _, err := plan(e.ctx, s, "SANDBOX CREATE short TTL 1h"); created <- err }()
	recording.reached(t)
	reaps(e, 2)
	recording.open()
	if err := await(t, created, "the create"); err != nil {
		t.Fatalf("SANDBOX CREATE: %v", err)
	}
	if p := e.mustPlan(s, "UPDATE t SET a = 1"); !strings.Contains(p.SQL, physDB(id, "app")) {
		t.Errorf("SQL %q, want the sandbox's fork", p.SQL)
	}
}

// TestRenewalKeepsOthersExpiry: a renewal writes back no expiry it read
// before another process recorded a new one (SANDBOX KEEP TTL there, or
// the admin API): the registry keeps the new one.
func TestRenewalKeepsOthersExpiry(t *testing.T) {
	renewing := newGate()
	defer renewing.open()
	e := newEnv(t, graceCfg(), nil)
	s := e.open(session.Options{User: "u", Mode: session.Explicit})
	e.mustPlan(s, "SANDBOX CREATE short TTL 1h")
	e.mustPlan(s, "UPDATE t SET a = 1")
	id := e.sandboxID("short")
	// The next renewal's write, after its read of kept and expiry.
	e.up.On("^UPDATE `_sqlfork_meta`.sandboxes SET .*last_active = .* WHERE id = '" + id + "'$").Nth(1).Before(renewing.hook)
	renewing.reached(t)
	const later = "2100-01-01 00:00:00.000000"
	mustExec(e, "UPDATE `_sqlfork_meta`.sandboxes SET expires_at = '"+later+"' WHERE id = '"+id+"'")
	renewing.open()
	reaps(e, 2)
	if exp, _ := e.registryExpiry(id); exp != later {
		t.Errorf("registry expiry %q, want %q (kept through another process)", exp, later)
	}
}
