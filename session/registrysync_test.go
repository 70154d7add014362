package session_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/session"
	"github.com/sqlfork/sqlfork-proxy/session/sessiontest"
)

// Read-your-writes across proxy processes (sandbox/registry/sync.go): two managers
// on one fake upstream stand for two processes. Their reapers run once an
// hour, so nothing but the per-statement registry check can carry one
// process's changes to the other.

// slowReaper is a configuration whose reaper never runs during a test.
var slowReaper = session.Config{ReapInterval: time.Hour}

// generationQuery matches the registry check's query.
const generationQuery = `^SELECT s\.name, s\.owner, s\.created_at, g\.generation FROM `

// reloadQuery matches the reload of a sandbox's tables.
const reloadQuery = "^SELECT db, tbl, kind, phys_db, phys_tbl, row_count, bytes, created_at, fill FROM `_sqlfork_meta`.tables WHERE sandbox_id = "

// twoProcesses opens a session of sandbox name on e's manager and one on a
// second manager of the same upstream; both end with the test.
func twoProcesses(e *env, name string) (a, b *session.Session) {
	e.t.Helper()
	m2 := e.start(slowReaper)
	e.t.Cleanup(m2.Close)
	a = e.open(session.Options{User: "u", Mode: session.Transparent, Sandbox: name, DB: "app"})
	b, err := m2.Open(e.ctx, session.Options{User: "u", Mode: session.Transparent, Sandbox: name, DB: "app"})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(b.Close)
	return a, b
}

// reads reports whether p reads the sandbox's copy (a physical name of
// database id) rather than production.
func reads(p *session.Plan, id string) bool { return strings.Contains(p.SQL, physDB(id, "app")) }

// TestRegistrySyncAcrossProcesses: what one process forks, creates or
// drops in a named sandbox, the next statement through the other process
// sees, with no reaper round between them.
func TestRegistrySyncAcrossProcesses(t *testing.T) {
	e := newEnv(t, slowReaper, nil)
	a, b := twoProcesses(e, "shared")
	if p := e.mustPlan(b, "SELECT * FROM t"); p.Flags().Changed {
		t.Fatalf("before any fork, b reads %q", p.SQL)
	}
	e.mustPlan(a, "UPDATE t SET a = 1") // forks app.t through a
	id := e.sandboxID("shared")
	e.up.ClearLog()
	if p := e.mustPlan(b, "SELECT * FROM t"); !reads(p, id) {
		t.Errorf("after a's fork, b reads %q", p.SQL)
	}
	if e.count(generationQuery) != 1 || e.count(reloadQuery) != 1 {
		t.Errorf("b checked the registry %d times and reloaded %d times, want once each", e.count(generationQuery), e.count(reloadQuery))
	}

	// A table a creates, and one it drops.
	p := e.mustPlan(a, "CREATE TABLE n (id INT)")
	e.up.AddTable(sessiontest.Table{DB: physDB(id, "app"), Name: "n"}) // what the statement did upstream
	if err := a.Executed(e.ctx, p, 0, false); err != nil {
		t.Fatal(err)
	}
	if p := e.mustPlan(b, "INSERT INTO n (id) VALUES (1)"); !reads(p, id) {
		t.Errorf("b writes a's new table at %q", p.SQL)
	}
	p = e.mustPlan(a, "DROP TABLE u")
	if _, err := e.up.Exec("DROP TABLE IF EXISTS `" + physDB(id, "app") + "`.`u`"); err != nil {
		t.Fatal(err)
	}
	if err := a.Executed(e.ctx, p, 0, false); err != nil {
		t.Fatal(err)
	}
	if p := e.mustPlan(b, "SELECT * FROM u"); !reads(p, id) {
		t.Errorf("b reads the table a dropped from %q (production still has it)", p.SQL)
	}
	if kind, _, _ := e.tableRow(id, "app", "u"); kind != "dropped" {
		t.Errorf("u is %q in the registry", kind)
	}
}

// TestRegistrySyncOnlyWhenNeeded: the registry is read only before a
// statement that would read production in a sandbox another process may
// share; a check that finds the generation unchanged reloads nothing.
func TestRegistrySyncOnlyWhenNeeded(t *testing.T) {
	e := newEnv(t, slowReaper, nil)
	a, b := twoProcesses(e, "cheap")
	e.mustPlan(a, "UPDATE t SET a = 1")
	e.mustPlan(b, "SELECT * FROM t") // b loads the fork
	e.up.ClearLog()
	for _, sql := range []string{"SELECT * FROM t", "UPDATE t SET a = 2", "SELECT 1", "SELECT @@version",
		"SELECT * FROM information_schema.TABLES WHERE TABLE_NAME = 't'"} {
		e.mustPlan(b, sql)
	}
	if n := e.count(generationQuery); n != 0 {
		t.Errorf("%d registry checks for statements on forked tables or none", n)
	}
	e.mustPlan(b, "SELECT * FROM u")
	e.mustPlan(b, "SELECT * FROM u")
	if e.count(generationQuery) != 2 || e.count(reloadQuery) != 0 {
		t.Errorf("reading production twice: %d checks, %d reloads; want 2 and none", e.count(generationQuery), e.count(reloadQuery))
	}

	// An anonymous sandbox no other process claimed is not checked.
	s := e.transparent("u")
	e.up.ClearLog()
	e.mustPlan(s, "SELECT * FROM u")
	if n := e.count(generationQuery); n != 0 {
		t.Errorf("%d registry checks in an anonymous sandbox", n)
	}
}

// TestRegistrySyncAttachedAnonymous: an anonymous sandbox attached by name
// through a second process is checked there at once, and in the first
// process from its next reaper round on, which finds the other holder.
func TestRegistrySyncAttachedAnonymous(t *testing.T) {
	e := newEnv(t, session.Config{ReapInterval: 20 * time.Millisecond, Lease: time.Minute}, func(up *sessiontest.Upstream) {
		up.AddTable(sessiontest.Table{DB: "app", Name: "w", Rows: 1})
	})
	a := e.open(session.Options{User: "u", Mode: session.Explicit, DB: "app"})
	e.mustPlan(a, "SANDBOX CREATE")
	e.mustPlan(a, "UPDATE t SET a = 1")
	name := a.SandboxName()
	e.up.ClearLog()
	e.mustPlan(a, "SELECT * FROM w")
	if n := e.count(generationQuery); n != 0 {
		t.Fatalf("%d registry checks in an anonymous sandbox of one process", n)
	}
	m2 := e.start(slowReaper)
	t.Cleanup(m2.Close)
	b := openOn(e, m2, session.Options{User: "u", Mode: session.Explicit, DB: "app"})
	t.Cleanup(b.Close)
	e.mustPlan(b, "SANDBOX ATTACH "+name)
	e.mustPlan(b, "UPDATE u SET t_id = 1") // forks app.u through b
	id := e.sandboxID(name)
	if p := e.mustPlan(b, "SELECT * FROM t"); !reads(p, id) {
		t.Errorf("b reads a's fork at %q", p.SQL)
	}
	e.up.ClearLog()
	if e.mustPlan(b, "SELECT * FROM w"); e.count(generationQuery) != 1 {
		t.Errorf("b, which claimed the sandbox from the registry, checked it %d times", e.count(generationQuery))
	}
	deadline := time.Now().Add(testkit.WaitLimit)
	for {
		e.up.ClearLog()
		e.mustPlan(a, "SELECT * FROM w")
		if e.count(generationQuery) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a never noticed that b holds the sandbox")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRegistrySyncFailsClosed: when the registry cannot be read, a
// statement that would read production is refused rather than risk reading
// production where the sandbox has its own table.
func TestRegistrySyncFailsClosed(t *testing.T) {
	e := newEnv(t, slowReaper, nil)
	_, b := twoProcesses(e, "closed")
	e.up.On(generationQuery).Times(1).Fail(1205, "HY000", "Lock wait timeout exceeded")
	_, err := plan(e.ctx, b, "SELECT * FROM t")
	wantCode(t, err, 1205, "HY000", "Lock wait timeout")
	e.up.On(generationQuery).Times(1).Break()
	if _, err := plan(e.ctx, b, "SELECT * FROM t"); err == nil {
		t.Error("a broken side connection let the statement through")
	}
	if p, err := plan(e.ctx, b, "SELECT * FROM t"); err != nil || p.Flags().Changed {
		t.Errorf("once the registry answers again: %v, %q", err, p.SQL)
	}
}

// TestRegistrySyncPrepared: a prepared statement that reads production
// checks the registry at each execution, and is prepared again for the
// fork another process made; one planned on forked tables checks nothing.
func TestRegistrySyncPrepared(t *testing.T) {
	e := newEnv(t, slowReaper, nil)
	a, b := twoProcesses(e, "prepared")
	sel, err := b.PlanWith(e.ctx, "SELECT * FROM t WHERE id = ?", rewrite.Options{DB: "app"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if np, err := b.Revalidate(e.ctx, sel); err != nil || np != nil {
		t.Fatalf("nothing changed, yet Revalidate gave %v, %v", np, err)
	}
	e.mustPlan(a, "UPDATE t SET a = 1")
	id := e.sandboxID("prepared")
	np, err := b.Revalidate(e.ctx, sel)
	if err != nil || np == nil || !reads(np, id) {
		t.Fatalf("after a's fork, Revalidate gave %v, %v", np, err)
	}
	e.up.ClearLog()
	if again, err := b.Revalidate(e.ctx, np); err != nil || again != nil {
		t.Errorf("the statement prepared for the fork: %v, %v", again, err)
	}
	if n := e.count(generationQuery); n != 0 {
		t.Errorf("%d registry checks for a statement on forked tables", n)
	}
}

// TestRegistrySyncDiscardedElsewhere: a sandbox discarded through another
// process is found gone by the next statement that checks the registry.
func TestRegistrySyncDiscardedElsewhere(t *testing.T) {
	e := newEnv(t, slowReaper, nil)
	a, b := twoProcesses(e, "gone")
	e.mustPlan(a, "UPDATE t SET a = 1")
	e.mustPlan(b, "SELECT * FROM t") // b learns the sandbox is recorded
	e.mustPlan(a, "SANDBOX DISCARD")
	_, err := plan(e.ctx, b, "SELECT * FROM u")
	wantCode(t, err, 1105, "HY000", "was discarded")
}

// TestRegistrySyncSharesRounds: statements that arrive while a check of
// their sandbox runs wait for one more check, which they share: a check
// that began before a statement arrived never answers for it.
func TestRegistrySyncSharesRounds(t *testing.T) {
	e := newEnv(t, slowReaper, nil)
	_, b := twoProcesses(e, "rounds")
	g := newGate()
	defer g.open()
	e.up.On(generationQuery).Nth(1).Before(g.hook)
	first := make(chan error, 1)
	go func() { _, err := plan(e.ctx, b, "SELECT * FROM t"); first <- err }()
	g.reached(t)
	const n = 6
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		s, err := m2Open(e, b) // in b's process
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := plan(e.ctx, s, "SELECT * FROM u")
			errs <- err
		}()
	}
	waitRounds(t, b, n)
	g.open()
	if err := await(t, first, "the first statement"); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if c := e.count(generationQuery); c != 2 {
		t.Errorf("%d registry checks for %d statements arriving during one, want 2", c, n+1)
	}
}

// m2Open opens another session of like's sandbox on like's manager.
func m2Open(e *env, like *session.Session) (*session.Session, error) {
	s, err := like.Manager().Open(e.ctx, session.Options{User: "u", Mode: session.Transparent, Sandbox: like.SandboxName(), DB: "app"})
	if err == nil {
		e.t.Cleanup(s.Close)
	}
	return s, err
}

// waitRounds waits until n callers wait for the pending registry check of
// s's sandbox.
func waitRounds(t *testing.T, s *session.Session, n int) {
	t.Helper()
	deadline := time.Now().Add(testkit.WaitLimit)
	for s.SyncWaiters() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d callers wait for the next registry check, want %d", s.SyncWaiters(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestRegistrySyncLease: with a sync lease, a process checks a shared
// sandbox's registry once per lease, not before every statement that reads
// production; a fork through another process then waits until that lease
// has run out before any statement uses it, so the reader's next
// statement, which checks again, reads the fork.
func TestRegistrySyncLease(t *testing.T) {
	const lease = 2 * time.Second
	cfg := session.Config{ReapInterval: time.Hour, SyncLease: lease}
	e := newEnv(t, cfg, nil)
	m2 := e.start(cfg)
	t.Cleanup(m2.Close)
	ra, rb := &recorder{}, &recorder{}
	e.m.SetObserver(ra)
	m2.SetObserver(rb)
	opts := session.Options{User: "u", Mode: session.Transparent, Sandbox: "leased", DB: "app"}
	a := e.open(opts)
	b := openOn(e, m2, opts)
	t.Cleanup(b.Close)
	e.up.ClearLog()
	taken := time.Now() // before b's lease
	for range 5 {
		if p := e.mustPlan(b, "SELECT * FROM t"); p.Flags().Changed {
			t.Fatalf("before any fork, b reads %q", p.SQL)
		}
	}
	if n, l := e.count(generationQuery), e.count(leaseQuery); n != 1 || l != 1 {
		t.Fatalf("5 reads of production in one lease: %d registry checks and %d leases, want one each", n, l)
	}
	e.mustPlan(a, "UPDATE t SET a = 1") // forks app.t through a
	if waited := time.Since(taken); waited < lease {
		t.Errorf("a's fork was usable %s after b took its lease of %s", waited, lease)
	}
	id := e.sandboxID("leased")
	e.up.ClearLog()
	if p := e.mustPlan(b, "SELECT * FROM t"); !reads(p, id) {
		t.Errorf("after a's fork, b reads %q", p.SQL)
	}
	if n := e.count(generationQuery); n != 1 {
		t.Errorf("%d registry checks once b's lease ran out, want 1", n)
	}

	// Every fork reads the other processes' leases once (b's own does not
	// count; a's ran out while a waited).
	e.mustPlan(b, "UPDATE u SET a = 1")
	if n := e.count(leaseLeftQuery); n != 1 {
		t.Errorf("%d reads of other processes' leases, want one per fork", n)
	}
	if got, want := strings.Join(ra.syncEvents(), ", "), "registry unchanged, leases awaited"; got != want {
		t.Errorf("a's observer was told %q, want %q", got, want)
	}
	if got, want := strings.Join(rb.syncEvents(), ", "), "registry unchanged, registry reloaded"; got != want {
		t.Errorf("b's observer was told %q, want %q", got, want)
	}
}

// leaseQuery and leaseLeftQuery match a sync lease taken and the read of
// the others' leases before a fork is used.
const (
	leaseQuery     = "^REPLACE INTO `_sqlfork_meta`.readers "
	leaseLeftQuery = `^SELECT TIMESTAMPDIFF\(MICROSECOND, UTC_TIMESTAMP\(6\), MAX\(valid_until\)\) FROM `
)

// TestForkAfterDiscardElsewhere: a process that has not noticed yet that
// another discarded a named sandbox (its sync lease still runs) and forks a
// table there leaves no row and no fork behind: the statement gets
// "discarded", the process lets the sandbox go, and the next sandbox of the
// name starts empty, reading production.
func TestForkAfterDiscardElsewhere(t *testing.T) {
	cfg := session.Config{ReapInterval: time.Hour, SyncLease: time.Minute}
	e := newEnv(t, cfg, nil)
	m2 := e.start(cfg)
	t.Cleanup(m2.Close)
	opts := session.Options{User: "u", Mode: session.Explicit, DB: "app"}
	a, b := e.open(opts), openOn(e, m2, opts)
	t.Cleanup(b.Close)
	e.mustPlan(a, "SANDBOX CREATE x")
	e.mustPlan(a, "UPDATE u SET a = 1") // recorded, with a fork
	e.mustPlan(b, "SANDBOX ATTACH x")
	e.mustPlan(a, "SELECT * FROM t") // a's lease: it checks no more
	id := e.sandboxID("x")
	e.mustPlan(b, "SANDBOX DISCARD")

	_, err := plan(e.ctx, a, "UPDATE t SET a = 1")
	if err == nil || !strings.Contains(err.Error(), `sandbox "x" was discarded`) {
		t.Fatalf("a's first write after the discard elsewhere: %v, want the sandbox discarded", err)
	}
	if kind, _, _ := e.tableRow(id, "app", "t"); kind != "" {
		t.Errorf("the registry keeps a %q row of the discarded sandbox's t", kind)
	}
	if e.up.HasTable(physDB(id, "app"), "t") {
		t.Errorf("the fork of t made after the discard is left upstream")
	}
	// A new sandbox of the name reads production.
	c := openOn(e, m2, opts)
	t.Cleanup(c.Close)
	e.mustPlan(c, "SANDBOX CREATE x")
	if p := e.mustPlan(c, "SELECT * FROM t"); p.Flags().Changed {
		t.Errorf("the new sandbox x reads t from %q", p.SQL)
	}
}
