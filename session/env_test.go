package session_test

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/session"
	"github.com/sqlfork/sqlfork-proxy/session/sessiontest"
)

// These tests drive the sandbox layer in memory: session.Manager talks to
// a sessiontest.Upstream through side connections, and the tests check
// what it sent there (the statement log), what it answered and what state
// it left. integration/ runs the same layer against MariaDB.

const prefix = "_sqlfork"

// env is a manager on a fake upstream.
type env struct {
	t    *testing.T
	ctx  context.Context
	up   *sessiontest.Upstream
	m    *session.Manager
	logs *observer.ObservedLogs
	// prefix is the manager's (cfg.Prefix, or the default).
	prefix string
	// allowProductionWrites skips the check that production was only
	// read (for tests that write it on purpose).
	allowProductionWrites bool
}

// appTables is the production data most tests use: app.t (3 rows, an
// AUTO_INCREMENT column and a generated one), app.u and app.v (a view).
func appTables(up *sessiontest.Upstream) {
	up.AddTable(sessiontest.Table{DB: "app", Name: "t", Rows: 3, Bytes: 16384, AutoIncrement: 4,
		Columns: []sessiontest.Column{{Name: "id"}, {Name: "a"}, {Name: "g", Generated: "`a` + 1"}}})
	up.AddTable(sessiontest.Table{DB: "app", Name: "u", Rows: 10, Bytes: 32768, Columns: []sessiontest.Column{{Name: "id"}, {Name: "t_id"}}})
	up.AddView("app", "v", "select `app`.`t`.`id` AS `id` from `app`.`t`")
}

// newEnv starts a manager with cfg on a fake upstream holding appTables,
// after setup (nil: none) has changed it. The manager is closed when the
// test ends, and the test fails if the manager sent a statement the fake
// does not know, wrote production, or left side connections open.
func newEnv(t *testing.T, cfg session.Config, setup func(up *sessiontest.Upstream)) *env {
	t.Helper()
	up := sessiontest.NewUpstream()
	appTables(up)
	if setup != nil {
		setup(up)
	}
	e := &env{t: t, ctx: context.Background(), up: up, prefix: cfg.Prefix}
	if e.prefix == "" {
		e.prefix = prefix
	}
	e.m = e.start(cfg)
	t.Cleanup(func() {
		e.m.Close()
		e.check()
	})
	return e
}

// start starts another manager (another proxy process, or the same after
// a restart) on the same upstream; the test closes it.
func (e *env) start(cfg session.Config) *session.Manager {
	e.t.Helper()
	core, logs := observer.New(zap.InfoLevel)
	e.logs = logs
	// Change capture needs a real server (integration/diff_test.go).
	cfg.NoDiffCapture = true
	m, err := session.New(e.ctx, cfg, e.up.Dialer(), zap.New(core))
	if err != nil {
		e.t.Fatalf("session.New: %v", err)
	}
	return m
}

// check fails the test on statements the fake did not know and on writes
// to production.
func (e *env) check() {
	e.t.Helper()
	if u := e.up.Unknown(); len(u) > 0 {
		e.t.Errorf("statements the fake does not know:\n%s", strings.Join(u, "\n"))
	}
	if w := e.up.ProductionWrites(e.prefix); len(w) > 0 && !e.allowProductionWrites {
		e.t.Errorf("production was written:\n%s", strings.Join(w, "\n"))
	}
	if n := e.up.OpenConns(); n != 0 {
		e.t.Errorf("%d side connections open after Close", n)
	}
}

// open opens a session, failing the test on error; it is closed when the
// test ends (Close is idempotent).
func (e *env) open(o session.Options) *session.Session {
	e.t.Helper()
	s, err := e.m.Open(e.ctx, o)
	if err != nil {
		e.t.Fatalf("Open(%+v): %v", o, err)
	}
	e.t.Cleanup(s.Close)
	return s
}

// transparent opens a transparent-mode session of user.
func (e *env) transparent(user string) *session.Session {
	return e.open(session.Options{User: user, Mode: session.Transparent})
}

// transparentApp is a transparent session of user u, its sandbox's id and
// the sandbox's app database, quoted.
func (e *env) transparentApp() (s *session.Session, id, db string) {
	e.t.Helper()
	s = e.transparent("u")
	id = e.idOf(s)
	return s, id, "`" + physDB(id, "app") + "`"
}

// plan plans sql in database app as a plain statement.
func plan(ctx context.Context, s *session.Session, sql string) (*session.Plan, error) {
	return s.PlanWith(ctx, sql, rewrite.Options{DB: "app"}, false)
}

// mustPlan is plan, failing the test on error.
func (e *env) mustPlan(s *session.Session, sql string) *session.Plan {
	e.t.Helper()
	p, err := plan(e.ctx, s, sql)
	if err != nil {
		e.t.Fatalf("Plan(%q): %v", sql, err)
	}
	return p
}

// wantCode fails the test unless err carries the MySQL code and SQLSTATE,
// and a message containing msg.
func wantCode(t *testing.T, err error, code uint16, state, msg string) {
	t.Helper()
	got, gotState, gotMsg, ok := sessiontest.Code(err)
	if !ok || got != code || gotState != state || !strings.Contains(gotMsg, msg) {
		t.Errorf("error %v, want %d (%s) containing %q", err, code, state, msg)
	}
}

// physDB is the schema holding sandbox id's tables of database db.
func physDB(id, db string) string { return sandbox.Schema(prefix, id, db) }

// sandboxID reads the id of the sandbox called name from the registry.
func (e *env) sandboxID(name string) string {
	e.t.Helper()
	rows, err := e.up.Query("SELECT id FROM `_sqlfork_meta`.sandboxes WHERE name = '" + name + "'")
	if err != nil || len(rows) != 1 {
		e.t.Fatalf("registry row of sandbox %s: %v, %d rows", name, err, len(rows))
	}
	return *rows[0][0]
}

// idOf is the id of the session's sandbox, from SANDBOX STATUS.
func (e *env) idOf(s *session.Session) string {
	e.t.Helper()
	p := e.mustPlan(s, "SANDBOX STATUS")
	if p.Reply == nil || len(p.Reply.Rows) == 0 || p.Reply.Rows[0][0] == nil {
		e.t.Fatalf("SANDBOX STATUS gave %+v", p.Reply)
	}
	return *p.Reply.Rows[0][0]
}

// tableRow reads the registry row of db.tbl in sandbox id: kind, rows,
// bytes ("" kind when there is none).
func (e *env) tableRow(id, db, tbl string) (kind, rows, bytes string) {
	e.t.Helper()
	r, err := e.up.Query("SELECT kind, row_count, bytes FROM `_sqlfork_meta`.tables WHERE sandbox_id = '" + id +
		"' AND db = '" + db + "' AND tbl = '" + tbl + "'")
	if err != nil {
		e.t.Fatal(err)
	}
	if len(r) == 0 {
		return "", "", ""
	}
	return *r[0][0], *r[0][1], *r[0][2]
}

// count is how many logged statements match re.
func (e *env) count(re string) int { return e.up.Count(re) }

// q quotes a name for regular expressions of logged statements: `name`.
func q(name string) string { return regexp.QuoteMeta("`" + name + "`") }

// wait waits (at most testkit.WaitLimit) for a statement matching re.
func (e *env) wait(re string) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, testkit.WaitLimit)
	defer cancel()
	if err := e.up.Wait(ctx, re); err != nil {
		e.t.Fatal(err)
	}
}

// logged reports whether a log entry at level or above contains msg.
func (e *env) logged(msg string) bool {
	for _, l := range e.logs.All() {
		if strings.Contains(l.Message, msg) {
			return true
		}
	}
	return false
}

// await waits (at most testkit.WaitLimit) for a value from ch.
func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(testkit.WaitLimit):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

// gate holds a statement on its side connection until opened: install
// hook as a rule's Before (for one statement: Nth(1)), wait until the
// statement is held with reached, and open the gate (at the latest when
// the test function returns: defer g.open()).
type gate struct {
	held, release chan struct{}
	once          sync.Once
}

func newGate() *gate { return &gate{held: make(chan struct{}), release: make(chan struct{})} }

// hook holds the statement.
func (g *gate) hook(string) {
	close(g.held)
	<-g.release
}

// reached waits until the statement is held.
func (g *gate) reached(t *testing.T) {
	t.Helper()
	await(t, g.held, "the statement to reach the gate")
}

// open lets the statement through.
func (g *gate) open() { g.once.Do(func() { close(g.release) }) }

// ttl is a keep's ttl given explicitly.
func ttl(d time.Duration) *time.Duration { return &d }
