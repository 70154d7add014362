package operator

import (
	"context"
	"regexp"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/catalog"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/capture"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry/registrytest"
	"github.com/sqlfork/sqlfork-proxy/sandbox/review"
	"github.com/sqlfork/sqlfork-proxy/session/sessiontest"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
)

// The operator's tests run on the in-memory upstream (sessiontest): each
// proxy process is a registry started on it as the session manager starts
// one (registrytest), a Reviewer over that registry and the Operator over
// both. Rules answer what a review reads that the fake does not emulate.

var names = registrytest.Names

// env is one proxy process's operator on up.
type env struct {
	t   *testing.T
	ctx context.Context
	up  *sessiontest.Upstream
	reg *registry.Registry
	rev *review.Reviewer
	op  *Operator
}

// newEnv is the operator of a process on a new upstream, its registry
// limited by lim.
func newEnv(t *testing.T, lim registry.Limits) *env {
	t.Helper()
	up := sessiontest.NewUpstream()
	reviewRules(up)
	return process(t, up, lim)
}

// process is the operator of another process on up.
func process(t *testing.T, up *sessiontest.Upstream, lim registry.Limits) *env {
	t.Helper()
	cfg := registrytest.Config()
	reg := registry.New(cfg, up.Dialer(), zap.NewNop(), nil)
	reg.SetNames(names)
	lim.SideConnections, lim.ForkQueueTimeout = cfg.SideConnections, cfg.ForkQueueTimeout
	reg.SetLimits(lim)
	registrytest.Start(t, reg)
	engine := rewrite.NewEngine(0)
	server := rewrite.ParseServer(sessiontest.DefaultVersion)
	rev := review.New(review.Config{Prefix: registrytest.Prefix}, zap.NewNop(), names, engine, server, reg,
		capture.New(capture.Config{Prefix: registrytest.Prefix}, zap.NewNop(), names, reg),
		catalog.Triggers{Engine: engine, CaseSensitive: true, Server: server})
	return &env{t: t, ctx: context.Background(), up: up, reg: reg, rev: rev, op: New(reg, rev, names)}
}

// reviewRules answer what a review reads that the fake does not emulate:
// the snapshot and its time zone, the sandbox's routines, the promote's
// transaction and its audit row's id.
func reviewRules(up *sessiontest.Upstream) {
	up.On(`^SELECT @@session\.time_zone$`).Rows(sessiontest.Row("SYSTEM"))
	for _, re := range []string{`^START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY$`, `^START TRANSACTION$`, `^COMMIT$`} {
		up.On(re).Affected(0)
	}
	up.On(`^SELECT s\.ROUTINE_TYPE, `).Rows()
	up.On(`^SELECT LAST_INSERT_ID\(\)$`).Rows(sessiontest.Row("1"))
}

// with runs f on a side connection of the process's registry.
func (e *env) with(f func(c sideconn.Conn) error) {
	e.t.Helper()
	if err := e.reg.WithConn(e.ctx, f); err != nil {
		e.t.Fatal(err)
	}
}

// open is a new sandbox called name of owner with one connection of this
// process, recorded in the registry.
func (e *env) open(name, owner string) *registry.Sandbox {
	e.t.Helper()
	sb, err := e.reg.Acquire(e.ctx, name, owner, true)
	if err != nil {
		e.t.Fatal(err)
	}
	e.with(func(c sideconn.Conn) error { return e.reg.Persist(e.ctx, c, sb) })
	return sb
}

// keep keeps sb for ttl (0: until discarded), as SANDBOX KEEP does.
func (e *env) keep(sb *registry.Sandbox, ttl time.Duration) {
	e.t.Helper()
	var exp time.Time
	if ttl > 0 {
		exp = time.Now().UTC().Add(ttl)
	}
	sb.KeepAs(exp)
	e.with(func(c sideconn.Conn) error { return e.reg.PersistKeep(e.ctx, c, sb) })
}

// entry records app.tbl in sb as kind, holding bytes, in the registry and
// in memory.
func (e *env) entry(sb *registry.Sandbox, tbl string, kind sandbox.Kind, bytes int64) {
	e.t.Helper()
	l := rewrite.Table{DB: "app", Name: tbl}
	en := &sandbox.Entry{Logical: l, Phys: names.Physical(sb.ID, l), Kind: kind, Rows: 3, Bytes: bytes,
		Created: time.Now().UTC().Truncate(time.Microsecond)}
	e.with(func(c sideconn.Conn) error { return e.reg.SaveEntry(e.ctx, c, sb, en) })
	e.reg.SetEntry(sb, names.Key(l), en)
}

// keyless forks app.t into sb, a table without a key whose one column is
// v int, and has the diff by value find n rows v = 7 added in the
// sandbox (its summary too).
func (e *env) keyless(sb *registry.Sandbox, n int) {
	e.t.Helper()
	e.entry(sb, "t", sandbox.KindFork, 0)
	e.up.On(`^SELECT t\.ENGINE, `).Rows(sessiontest.Row("InnoDB", "YES", "BASE TABLE"))
	e.up.On(`^SELECT COLUMN_NAME, .* FROM information_schema\.COLUMNS `).Rows(sessiontest.Row("v", "int(11)", "int", nil, nil, "", "YES"))
	e.up.On(`^SELECT INDEX_NAME, .* FROM information_schema\.STATISTICS `).Rows()
	e.up.On("^" + regexp.QuoteMeta("SELECT IF(d.`sqlfork_n` > 0, 'insert', 'delete'), ")).
		Rows(sessiontest.Row("insert", `{"v": 7}`, nil, `{"v": 7}`, nil, n, "7"))
	e.up.On(`^SELECT SUM\(GREATEST\(`).Rows(sessiontest.Row(n, 0))
}

// row is the registry's kept flag and expiry of the sandbox called name;
// ok is unset when the registry has no row of it.
func (e *env) row(name string) (kept string, expires *string, ok bool) {
	e.t.Helper()
	rows, err := e.up.Query("SELECT kept, expires_at FROM `_sqlfork_meta`.sandboxes WHERE name = '" + name + "'")
	if err != nil {
		e.t.Fatal(err)
	}
	if len(rows) == 0 {
		return "", nil, false
	}
	return sideconn.Str(rows[0][0]), rows[0][1], true
}

// around reports whether t is d after a moment between before and now.
func around(t time.Time, before time.Time, d time.Duration) bool {
	return !t.Before(before.Add(d).Truncate(time.Microsecond)) && !t.After(time.Now().Add(d))
}
