package session_test

import (
	"context"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/session"
	"github.com/sqlfork/sqlfork-proxy/session/sessiontest"
)

// graceCfg has a grace that never ends by itself within a test (tests end
// it with EndGraces) and a fast reaper.
//
// Reaps run every 5 ms, each with a lease's time (a minute): tests hold a
// reap's statements at a gate for as long as they need, however slow the
// machine, and no process of a test dies.
func graceCfg() session.Config {
	return session.Config{Grace: time.Hour, ReapInterval: 5 * time.Millisecond, Lease: time.Minute}
}

// tagged are the options of a transparent login of user u with the
// sandbox tag name (user+name).
func tagged(name string) session.Options {
	return session.Options{User: "u", Mode: session.Transparent, Sandbox: name}
}

// reaps waits until n whole reaps of any process have run (their expiry
// step, the last of a reap, started after this call; at most testkit.WaitLimit each).
func reaps(e *env, n int) {
	e.t.Helper()
	for range n + 1 {
		e.up.ClearLog()
		e.wait(`^SELECT s\.id, s\.name, s\.kept`)
	}
}

// waitEvent waits (reap after reap, at most testkit.WaitLimit) until r was told want.
func waitEvent(e *env, r *recorder, want string) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, testkit.WaitLimit)
	defer cancel()
	for !slices.Contains(r.all(), want) {
		e.up.ClearLog()
		if err := e.up.Wait(ctx, `^SELECT s\.id, s\.name, s\.kept`); err != nil {
			e.t.Fatalf("no %q after the reaps of testkit.WaitLimit (events %q)", want, r.all())
		}
	}
}

// registryExpiry is the expires_at of sandbox id in the registry ("" for
// NULL), and whether it has a row.
func (e *env) registryExpiry(id string) (string, bool) {
	e.t.Helper()
	rows, err := e.up.Query("SELECT expires_at FROM `_sqlfork_meta`.sandboxes WHERE id = '" + id + "'")
	if err != nil {
		e.t.Fatal(err)
	}
	if len(rows) == 0 {
		return "", false
	}
	if rows[0][0] == nil {
		return "", true
	}
	return *rows[0][0], true
}

// waitBlockedIn waits (at most testkit.WaitLimit) until a goroutine is blocked in the
// function fn, called by the registry's Acquire — a login or attach waiting —
// and fails the test if done is ready first (it did not wait).
func waitBlockedIn[T any](t *testing.T, fn string, done <-chan T) {
	t.Helper()
	deadline := time.Now().Add(testkit.WaitLimit)
	buf := make([]byte, 1<<20)
	for time.Now().Before(deadline) {
		select {
		case v := <-done:
			t.Fatalf("returned (%v) instead of waiting in %s", v, fn)
		default:
		}
		for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			if strings.Contains(g, fn) && strings.Contains(g, ").Acquire(") {
				return
			}
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("nothing waited in %s", fn)
}

// logIndex is the position in the statement log of the first statement
// matching re after position from (-1: none).
func (e *env) logIndex(re string, from int) int {
	for i, st := range e.up.Log() {
		if ok, _ := regexp.MatchString(re, st.SQL); ok && i > from {
			return i
		}
	}
	return -1
}

// observe makes a recorder the observer of e's manager.
func observe(e *env) *recorder {
	r := &recorder{}
	e.m.SetObserver(r)
	return r
}

// graceEnv is an env with graceCfg's grace and a recorder observing it.
func graceEnv(t *testing.T) (*env, *recorder) {
	e := newEnv(t, graceCfg(), nil)
	return e, observe(e)
}

// forkAnonymous opens a transparent session of user u and forks app.t in
// its sandbox: the session and the sandbox's id.
func forkAnonymous(e *env) (*session.Session, string) {
	e.t.Helper()
	s := e.transparent("u")
	e.mustPlan(s, "UPDATE t SET a = 1")
	return s, e.idOf(s)
}

// forkPool opens a session in the sandbox named pool and forks app.t in
// it: the session and the sandbox's id.
func forkPool(e *env) (*session.Session, string) {
	e.t.Helper()
	s := e.open(tagged("pool"))
	e.mustPlan(s, "UPDATE t SET a = 1")
	return s, e.sandboxID("pool")
}

// wantForkOnly wants r to have recorded one event, a fork (and no
// discard); what tells whose events they are.
func wantForkOnly(t *testing.T, r *recorder, what string) {
	t.Helper()
	if got := r.all(); len(got) != 1 || !strings.HasPrefix(got[0], "forked") {
		t.Errorf("events%s %q, want the fork only", what, got)
	}
}

// TestGraceKeepsNamedSandbox: a named sandbox outlives its last connection
// for the grace period, shown as such, and the next login with its name
// gets it back with its forks.
func TestGraceKeepsNamedSandbox(t *testing.T) {
	e, r := graceEnv(t)
	s, id := forkPool(e)
	s.Close()
	reaps(e, 2)
	if !e.up.HasSchema(physDB(id, "app")) {
		t.Fatal("the sandbox's fork went with its last connection")
	}
	if exp, ok := e.registryExpiry(id); !ok || exp == "" {
		t.Errorf("registry expiry %q (row %v), want the end of the grace", exp, ok)
	}
	if c := e.m.Counts(); c["grace"] != 1 || c["active"] != 0 {
		t.Errorf("counts %v, want one sandbox in its grace", c)
	}
	list, err := e.m.Operator().List(e.ctx)
	if err != nil || len(list) != 1 || list[0].State != "grace" || list[0].Expires == nil ||
		time.Until(*list[0].Expires) < 50*time.Minute {
		t.Errorf("List: %+v, %v; want pool in its grace, ending in about an hour", list, err)
	}

	e.up.ClearLog()
	s2 := e.open(tagged("pool"))
	p := e.mustPlan(s2, "UPDATE t SET a = 2")
	if want := "UPDATE `" + physDB(id, "app") + "`.`t` SET a = 2"; p.SQL != want {
		t.Errorf("back in the sandbox: SQL %q, want %q", p.SQL, want)
	}
	if n := e.count(`^CREATE TABLE .* LIKE `); n != 0 {
		t.Errorf("forked again after coming back")
	}
	if c := e.m.Counts(); c["active"] != 1 || c["grace"] != 0 {
		t.Errorf("counts %v, want the sandbox active again", c)
	}
	// In use again: the registry's grace is cleared at the next renewal.
	afterReap(e, func() bool { exp, _ := e.registryExpiry(id); return exp == "" })
	wantForkOnly(t, r, "")
}

// TestGraceEnds: when the grace ends with no connection back, the sandbox
// is discarded (reason grace, logged) and the next login starts afresh.
func TestGraceEnds(t *testing.T) {
	e, r := graceEnv(t)
	s, id := forkPool(e)
	s.Close()
	e.m.EndGraces()
	e.wait("^DROP DATABASE IF EXISTS " + q(physDB(id, "app")) + "$")
	waitEvent(e, r, "discarded grace")
	if _, ok := e.registryExpiry(id); ok {
		t.Error("registry row left")
	}
	logged := false
	for _, l := range e.logs.FilterMessage("sandbox discarded").All() {
		m := l.ContextMap()
		logged = logged || m["sandbox"] == "pool" && m["reason"] == "grace"
	}
	if !logged {
		t.Error(`no "sandbox discarded" log entry with sandbox pool and reason grace`)
	}
	s2 := e.open(tagged("pool"))
	if p := e.mustPlan(s2, "SELECT * FROM t"); p.Flags().Changed {
		t.Errorf("a new login after the grace reads the old fork: %s", p.SQL)
	}
	if got, want := r.all(), []string{"forked copy schema-only=false rows=3 bytes=16384", "discarded grace"}; !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}

// TestAnonymousEndsWithConnection: a sandbox without a name ends with its
// connection whatever the grace; so does a named one without a grace.
func TestAnonymousEndsWithConnection(t *testing.T) {
	e, r := graceEnv(t)
	s, id := forkAnonymous(e)
	s.Close()
	if e.up.HasSchema(physDB(id, "app")) {
		t.Error("an anonymous sandbox outlived its connection")
	}
	if got := r.all(); !slices.Contains(got, "discarded last_connection") {
		t.Errorf("events %q, want a discard for the last connection", got)
	}

	e.m.SetLimits(session.Config{Grace: 0})
	n := e.open(tagged("nograce"))
	e.mustPlan(n, "UPDATE t SET a = 1")
	nid := e.sandboxID("nograce")
	n.Close()
	if e.up.HasSchema(physDB(nid, "app")) {
		t.Error("a named sandbox outlived its connection with sandbox-grace 0")
	}
	if got := r.all(); len(got) != 4 || got[3] != "discarded last_connection" {
		t.Errorf("events %q, want a second discard for the last connection", got)
	}
}

// TestGraceAcrossProcesses: a sandbox in its grace in one process is
// found by a login through another; when the first one's grace ends it
// lets go (the other holds it), and the last holder's grace end discards
// it.
func TestGraceAcrossProcesses(t *testing.T) {
	cfg := graceCfg()
	e := newEnv(t, cfg, nil)
	other := e.start(cfg)
	defer other.Close()
	ra, rb := &recorder{}, &recorder{}
	e.m.SetObserver(ra)
	other.SetObserver(rb)
	a, id := forkPool(e)
	a.Close()

	e.up.ClearLog()
	b := openOn(e, other, tagged("pool"))
	defer b.Close()
	p := e.mustPlan(b, "UPDATE t SET a = 2")
	if want := "UPDATE `" + physDB(id, "app") + "`.`t` SET a = 2"; p.SQL != want {
		t.Errorf("through the other process: SQL %q, want %q", p.SQL, want)
	}
	if n := e.count(`^CREATE TABLE .* LIKE `); n != 0 {
		t.Errorf("the other process forked again")
	}

	e.m.EndGraces()
	afterReap(e, func() bool { return e.m.Counts()["grace"] == 0 })
	reaps(e, 1)
	if !e.up.HasSchema(physDB(id, "app")) {
		t.Fatal("discarded while another process holds it")
	}
	if holders, _ := e.up.Query("SELECT proxy_id FROM `_sqlfork_meta`.holders WHERE sandbox_id = '" + id + "'"); len(holders) != 1 {
		t.Errorf("%d holders, want the other process alone", len(holders))
	}
	e.mustPlan(b, "UPDATE t SET a = 3")

	b.Close()
	other.EndGraces()
	e.wait("^DROP DATABASE IF EXISTS " + q(physDB(id, "app")) + "$")
	waitEvent(e, rb, "discarded grace")
	wantForkOnly(t, ra, " of the first process")
}

// TestGraceOutlivesCrash: the grace is in the registry, so a sandbox in
// its grace in a process that died lasts until the grace ends (then any
// process discards it, reason grace), while one the dead process was
// using goes when its lease does (expired).
func TestGraceOutlivesCrash(t *testing.T) {
	e, r := graceEnv(t)
	gone := e.start(graceCfg())
	idle := openOn(e, gone, tagged("idle"))
	e.mustPlan(idle, "UPDATE t SET a = 1")
	idle.Close()
	busy := openOn(e, gone, tagged("busy"))
	e.mustPlan(busy, "UPDATE t SET a = 1")
	idleID, busyID := e.sandboxID("idle"), e.sandboxID("busy")
	gone.Close() // its sessions never close
	for _, id := range []string{idleID, busyID} {
		mustExec(e, "UPDATE `_sqlfork_meta`.holders SET lease_until = "+longAgo+" WHERE sandbox_id = '"+id+"'")
		mustExec(e, "UPDATE `_sqlfork_meta`.sandboxes SET lease_until = "+longAgo+" WHERE id = '"+id+"'")
	}
	e.wait("^DROP DATABASE IF EXISTS " + q(physDB(busyID, "app")) + "$")
	waitEvent(e, r, "discarded expired")
	reaps(e, 2)
	if !e.up.HasSchema(physDB(idleID, "app")) {
		t.Fatal("a sandbox in its grace went with its dead process's lease")
	}
	mustExec(e, "UPDATE `_sqlfork_meta`.sandboxes SET expires_at = "+longAgo+" WHERE id = '"+idleID+"'")
	e.wait("^DROP DATABASE IF EXISTS " + q(physDB(idleID, "app")) + "$")
	waitEvent(e, r, "discarded grace")
	if got := r.all(); len(got) != 2 {
		t.Errorf("events %q, want one discard each", got)
	}
}

// TestAttachCallsOffDiscard: a login or SANDBOX ATTACH that comes while
// the discard at the end of a grace is still reading the registry calls it
// off and gets the sandbox back with its forks.
func TestAttachCallsOffDiscard(t *testing.T) {
	for _, how := range []string{"login", "attach"} {
		t.Run(how, func(t *testing.T) {
			reading := newGate()
			defer reading.open()
			e := newEnv(t, graceCfg(), func(up *sessiontest.Upstream) {
				// The discard's look at the other processes' holders.
				up.On("^SELECT COUNT\\(\\*\\) FROM `_sqlfork_meta`.holders WHERE .* AND proxy_id <> ").Nth(1).Before(reading.hook)
			})
			r := observe(e)
			s := e.open(session.Options{User: "u", Mode: session.Explicit, Sandbox: "pool"})
			e.mustPlan(s, "UPDATE t SET a = 1")
			id := e.sandboxID("pool")
			s.Close()
			e.m.EndGraces()
			reading.reached(t)
			var back *session.Session
			if how == "login" {
				back = e.open(session.Options{User: "u", Mode: session.Explicit, Sandbox: "pool"})
			} else {
				back = e.open(session.Options{User: "u", Mode: session.Explicit})
				e.mustPlan(back, "SANDBOX ATTACH pool")
			}
			reading.open()
			reaps(e, 2)
			e.up.ClearLog()
			p := e.mustPlan(back, "UPDATE t SET a = 2")
			if want := "UPDATE `" + physDB(id, "app") + "`.`t` SET a = 2"; p.SQL != want {
				t.Errorf("SQL %q, want %q", p.SQL, want)
			}
			if n := e.count(`^CREATE TABLE .* LIKE `); n != 0 || !e.up.HasTable(physDB(id, "app"), "t") {
				t.Errorf("the sandbox's fork is gone")
			}
			wantForkOnly(t, r, "")
		})
	}
}

// TestLoginWaitsForDiscard: a login that comes while a sandbox of its name
// is being discarded past the point where it can be called off waits for
// the discard to finish — in this process or another — and then creates
// the sandbox afresh: no "was discarded" error, and the new sandbox's
// forks are never made over the old one's leftovers.
func TestLoginWaitsForDiscard(t *testing.T) {
	for _, where := range []string{"here", "other process"} {
		t.Run(where, func(t *testing.T) {
			dropping := newGate()
			defer dropping.open()
			cfg := graceCfg()
			e := newEnv(t, cfg, nil)
			r := observe(e)
			via := e.m
			if where != "here" {
				via = e.start(cfg)
				defer via.Close()
			}
			s, id := forkPool(e)
			// Held as it deletes the registry rows: past the point where
			// it can be called off, before anything is gone.
			e.up.On("^DELETE FROM `_sqlfork_meta`.sandboxes WHERE id = '" + id + "'$").Nth(1).Before(dropping.hook)
			dropOld := "^DROP DATABASE IF EXISTS " + q(physDB(id, "app")) + "$"
			reason := "grace"
			discarded := make(chan error, 1)
			if where == "here" {
				s.Close()
				e.m.EndGraces()
				discarded <- nil
			} else { // a SANDBOX DISCARD
				reason = "discarded"
				go func() { _, err := plan(e.ctx, s, "SANDBOX DISCARD"); discarded <- err }()
			}
			dropping.reached(t)
			opened := make(chan error, 1)
			var fresh *session.Session
			go func() {
				var err error
				fresh, err = via.Open(e.ctx, tagged("pool"))
				opened <- err
			}()
			if where == "here" {
				waitBlockedIn(t, ".waitGone(", opened) // until this process has let go of it
			} else {
				waitBlockedIn(t, "(*Upstream).getLock", opened) // for the sandbox's life lock
			}
			dropping.open()
			if err := await(t, discarded, "the discard"); err != nil {
				t.Fatalf("SANDBOX DISCARD: %v", err)
			}
			if err := await(t, opened, "the login"); err != nil {
				t.Fatalf("login during the discard: %v", err)
			}
			defer fresh.Close()
			// Checked now: waitEvent clears the log as it waits for reaps.
			if e.logIndex(dropOld, -1) < 0 {
				t.Errorf("the login returned before the old schema was dropped")
			}
			waitEvent(e, r, "discarded "+reason)
			if p := e.mustPlan(fresh, "SELECT * FROM t"); p.Flags().Changed {
				t.Errorf("the new sandbox reads the old one's fork: %s", p.SQL)
			}
			e.mustPlan(fresh, "UPDATE t SET a = 2")
			if kind, rows, _ := e.tableRow(id, "app", "t"); kind != "fork" || rows != "3" || !e.up.HasTable(physDB(id, "app"), "t") {
				t.Errorf("the new sandbox's fork: registry %q with %s rows, table present %v", kind, rows, e.up.HasTable(physDB(id, "app"), "t"))
			}
			drop := e.logIndex(dropOld, -1) // -1 too when the log was cleared since
			if refork := e.logIndex(`^CREATE TABLE .* LIKE `, drop); refork < 0 {
				t.Errorf("no new fork after the old schema was dropped (log position %d)", drop)
			}
		})
	}
}

// TestAttachWaitsForDiscard: SANDBOX ATTACH during a discard past the
// point where it can be called off waits for it, then finds no such
// sandbox (ATTACH never creates one), as it would a moment later.
func TestAttachWaitsForDiscard(t *testing.T) {
	dropping := newGate()
	defer dropping.open()
	e := newEnv(t, graceCfg(), nil)
	s, id := forkPool(e)
	e.up.On("^DROP DATABASE IF EXISTS " + q(physDB(id, "app")) + "$").Nth(1).Before(dropping.hook)
	s.Close()
	e.m.EndGraces()
	dropping.reached(t)
	x := e.open(session.Options{User: "u", Mode: session.Explicit})
	attached := make(chan error, 1)
	go func() { _, err := plan(e.ctx, x, "SANDBOX ATTACH pool"); attached <- err }()
	waitBlockedIn(t, ".waitGone(", attached)
	dropping.open()
	err := await(t, attached, "the attach")
	wantCode(t, err, 1105, "HY000", `no sandbox named "pool"`)
}

// TestDiscardReasons: every way a sandbox ends is counted by its reason
// and logged with the sandbox's name.
func TestDiscardReasons(t *testing.T) {
	e, r := graceEnv(t)
	anon := e.transparent("u")
	anonName := sandboxName(e, anon)
	anon.Close()

	named := e.open(tagged("named"))
	e.mustPlan(named, "UPDATE t SET a = 1")
	named.Close()
	e.m.EndGraces()
	waitEvent(e, r, "discarded grace")

	gone := e.open(tagged("gone"))
	e.mustPlan(gone, "SANDBOX DISCARD")

	kept := e.open(session.Options{User: "u", Mode: session.Explicit})
	e.mustPlan(kept, "SANDBOX CREATE short TTL 1h")
	e.mustPlan(kept, "UPDATE t SET a = 1")
	mustExec(e, "UPDATE `_sqlfork_meta`.sandboxes SET expires_at = "+longAgo+" WHERE id = '"+e.sandboxID("short")+"'")
	waitEvent(e, r, "discarded expired")

	var discards []string
	for _, ev := range r.all() {
		if strings.HasPrefix(ev, "discarded ") {
			discards = append(discards, ev)
		}
	}
	if want := []string{"discarded last_connection", "discarded grace", "discarded discarded", "discarded expired"}; !slices.Equal(discards, want) {
		t.Errorf("discards %q, want %q", discards, want)
	}
	logged := map[string]string{}
	for _, l := range e.logs.FilterMessage("sandbox discarded").All() {
		m := l.ContextMap()
		logged[m["sandbox"].(string)] = m["reason"].(string)
	}
	want := map[string]string{anonName: "last_connection", "named": "grace", "gone": "discarded", "short": "expired"}
	for name, reason := range want {
		if logged[name] != reason {
			t.Errorf("log of %s: reason %q, want %q (all: %v)", name, logged[name], reason, logged)
		}
	}
}

// sandboxName is the name of the session's sandbox, from SANDBOX STATUS.
func sandboxName(e *env, s *session.Session) string {
	e.t.Helper()
	p := e.mustPlan(s, "SANDBOX STATUS")
	return *p.Reply.Rows[0][1]
}

// TestReapSparesSandboxRecordedMeanwhile: schemas of an id the registry
// does not know (a discard's leftovers) are orphans, but a named sandbox
// gets that id back when its name is used again; one recorded after a
// reap read the registry keeps the schemas it made then, though the reap
// lists them among the orphans.
func TestReapSparesSandboxRecordedMeanwhile(t *testing.T) {
	listing := newGate()
	defer listing.open()
	e := newEnv(t, graceCfg(), nil)
	id := session.NameID("pool")
	// The next reap's list of sandbox schemas, which comes after its read
	// of the registry's ids (the orphans are the schemas it lists of ids
	// it did not read).
	e.up.On(`^SELECT SCHEMA_NAME FROM information_schema\.SCHEMATA WHERE SCHEMA_NAME LIKE '!_sqlfork!_%' ESCAPE '!'$`).Nth(1).Before(listing.hook)
	e.up.AddTable(sessiontest.Table{DB: physDB(id, "old"), Name: "left"})
	listing.reached(t)
	s := e.open(tagged("pool"))
	e.mustPlan(s, "UPDATE t SET a = 1")
	if e.sandboxID("pool") != id || !e.up.HasTable(physDB(id, "app"), "t") {
		t.Fatalf("no fork of app.t in sandbox %s", id)
	}
	listing.open()
	reaps(e, 1)
	if !e.up.HasTable(physDB(id, "app"), "t") {
		t.Error("the reap dropped the fork of a sandbox recorded after it read the registry")
	}
	if p := e.mustPlan(s, "SELECT * FROM t"); !p.Flags().Changed {
		t.Errorf("the sandbox no longer reads its fork: %s", p.SQL)
	}
}

// TestGraceNotClearedByRenewal: a renewal of the lease that saw the
// sandbox in use, and clears the grace in the registry as it writes, does
// not clear the grace its last connection, closing meanwhile, recorded:
// after a crash the registry must say the sandbox lasts until its grace
// ends, not until its lease does.
func TestGraceNotClearedByRenewal(t *testing.T) {
	clearing := newGate()
	defer clearing.open()
	e := newEnv(t, graceCfg(), nil)
	s, id := forkPool(e)
	// The next renewal's "in no grace", written after it saw s attached.
	e.up.On("^UPDATE `_sqlfork_meta`.sandboxes SET expires_at = NULL WHERE id = '" + id + "' AND kept = 0$").Nth(1).Before(clearing.hook)
	clearing.reached(t)
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	// The close records the grace now, or waits for the renewal to have
	// written; either way it has decided once it returns or waits.
	waitClosedOrBlockedIn(t, ").recordGrace(", "sync.(*Mutex).Lock", closed)
	clearing.open()
	await(t, closed, "the close")
	reaps(e, 2)
	if exp, ok := e.registryExpiry(id); !ok || exp == "" {
		t.Errorf("registry expiry %q (row %v), want the end of the grace", exp, ok)
	}
}

// waitClosedOrBlockedIn waits (at most testkit.WaitLimit) until done is closed or a
// goroutine in the function fn waits in the function on (for a lock).
func waitClosedOrBlockedIn(t *testing.T, fn, on string, done <-chan struct{}) {
	t.Helper()
	deadline := time.Now().Add(testkit.WaitLimit)
	buf := make([]byte, 1<<20)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return
		default:
		}
		for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			if strings.Contains(g, fn) && strings.Contains(g, on) {
				return
			}
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("neither done nor waiting in %s", fn)
}

// TestLastConnectionDiscardNotLetGo: the reaper does not let go of a
// sandbox whose last connection is discarding it (waiting for its life
// lock, held by another connection): the discard is not made a no-op that
// leaves the forks to the lease.
func TestLastConnectionDiscardNotLetGo(t *testing.T) {
	e, r := graceEnv(t)
	s, id := forkAnonymous(e)
	// Another connection (a claim through another process) holds the
	// sandbox's life lock.
	other, err := e.up.Dial(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if rows, err := other.Query(e.ctx, "SELECT GET_LOCK('"+e.m.LifeLock("sb-"+id)+"', 0)"); err != nil || *rows[0][0] != "1" {
		t.Fatalf("take the life lock: %v", err)
	}
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	waitClosedOrBlockedIn(t, ").discardRecorded(", "(*Upstream).getLock", closed)
	reaps(e, 2) // idle for longer than a reap interval
	other.Close()
	await(t, closed, "the close")
	if e.up.HasSchema(physDB(id, "app")) {
		t.Error("the sandbox outlived its last connection")
	}
	if got := r.all(); !slices.Contains(got, "discarded last_connection") {
		t.Errorf("events %q, want a discard for the last connection", got)
	}
}
