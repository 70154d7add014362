package objects

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/forking"
	"github.com/sqlfork/sqlfork-proxy/sandbox/forking/forkingtest"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/session/sessiontest"
)

// These tests drive a Placer against the in-memory upstream
// (session/sessiontest), with the registry, catalog and Forker built as
// session.New builds them, and a fake session (host) in place of
// session.Session.

const prefix = "_sqlfork"

// rig is a Placer of one sandbox on a fake upstream holding app.t and
// app.u.
type rig struct {
	t      *testing.T
	ctx    context.Context
	up     *sessiontest.Upstream
	names  sandbox.Names
	engine *rewrite.Engine
	server rewrite.Server
	reg    *registry.Registry
	fk     *forking.Forker
	sb     *registry.Sandbox
	h      *host
	p      *Placer
}

// host is the fake session: its resolver maps what the sandbox holds, and
// it records what the Placer asked of it.
type host struct {
	r            *rig
	serializable bool
	mayExecute   error
	confined     int // analyses checked
	infoViews    int
	stops        int
	schemas      map[string]string
}

func (h *host) Sandbox() *registry.Sandbox { return h.r.sb }

func (h *host) RoutineDB(db string) string {
	phys := sandbox.Schema(prefix, h.r.sb.ID, h.r.names.Norm(rewrite.Table{DB: db}).DB)
	h.schemas[phys] = db
	return phys
}

func (h *host) Ensure(ctx context.Context, t rewrite.Table, mode forker.Mode) (*sandbox.Entry, bool, error) {
	e, made, err := h.r.fk.Ensure(ctx, h.r.sb, t, mode, nil)
	if err == nil {
		err = h.r.p.PlaceNeeded(ctx)
	}
	return e, made, err
}

func (h *host) Resolver() rewrite.Resolver { return resolver{h: h} }

func (h *host) Confined(context.Context, *rewrite.Analysis) error {
	h.confined++
	return nil
}

func (h *host) MayExecute(context.Context, string, string, string) error { return h.mayExecute }
func (h *host) Serializable() bool                                       { return h.serializable }

func (h *host) StopCapturesFor(context.Context, rewrite.Statement, bool) error {
	h.stops++
	return nil
}

func (h *host) EnsureInfoViews(context.Context) error {
	h.infoViews++
	return nil
}

// resolver maps the tables the sandbox holds to their places, and the
// routines and triggers as the Placer says.
type resolver struct{ h *host }

func (r resolver) Resolve(t rewrite.Table, _ bool) (rewrite.Table, bool, error) {
	n := r.h.r.names
	if strings.EqualFold(t.DB, "information_schema") {
		return rewrite.Table{DB: sandbox.InfoSchema(prefix, r.h.r.sb.ID), Name: t.Name}, true, nil
	}
	e, ok := r.h.r.sb.Resolve(n.Key(n.Norm(t)))
	if !ok || e.Kind == sandbox.KindAbsent {
		return rewrite.Table{}, false, nil
	}
	return e.Phys, true, nil
}

func (r resolver) ResolveFunction(f rewrite.Func, db string) (string, bool, error) {
	return r.h.r.p.ResolveFunction(f, db)
}

func (r resolver) ResolveRoutine(st *rewrite.Statement) (string, error) {
	return r.h.r.p.ResolveRoutine(st)
}

func (r resolver) ResolveTrigger(st *rewrite.Statement) (string, bool, error) {
	return r.h.r.p.ResolveTrigger(st, false)
}

// newRig builds a Placer on a fake upstream holding app.t and app.u, after
// setup (nil: none) changed it. When the test ends the registry is closed
// and the test fails on writes to production and side connections left
// open.
func newRig(t *testing.T, setup func(up *sessiontest.Upstream)) *rig {
	t.Helper()
	up := sessiontest.NewUpstream()
	up.AddTable(sessiontest.Table{DB: "app", Name: "t", Rows: 3, Columns: []sessiontest.Column{{Name: "id"}, {Name: "a"}}})
	up.AddTable(sessiontest.Table{DB: "app", Name: "u", Rows: 10, Columns: []sessiontest.Column{{Name: "id"}, {Name: "t_id"}}})
	if setup != nil {
		setup(up)
	}
	r := &rig{t: t, ctx: context.Background(), up: up}
	t.Cleanup(func() { up.Check(t, prefix) })
	parts := forkingtest.New(t, up, "copy")
	r.names, r.engine, r.server, r.reg = parts.Names, parts.Engine, parts.Server, parts.Registry
	r.fk = forking.New(forking.Config{Prefix: prefix, ForkTimeout: time.Minute}, zap.NewNop(), r.names, r.reg, parts.Strategy,
		parts.Captures, parts.Catalog, parts.Triggers, func(string) int64 { return 0 })
	sb, err := r.reg.NewSandbox("", "u")
	if err != nil {
		t.Fatal(err)
	}
	r.sb = sb
	r.h = &host{r: r, schemas: map[string]string{}}
	r.p = New(Config{Prefix: prefix, Names: r.names, Registry: r.reg, Schemas: r.fk, Catalog: parts.Catalog, Engine: r.engine, Server: r.server}, r.h)
	return r
}

// stmt is the one statement of sql, read with app current.
func (r *rig) stmt(sql string) rewrite.Statement {
	r.t.Helper()
	a := r.analyze(sql)
	if len(a.Statements) != 1 {
		r.t.Fatalf("%s: %d statements", sql, len(a.Statements))
	}
	return a.Statements[0]
}

// analyze reads sql with app current.
func (r *rig) analyze(sql string) *rewrite.Analysis {
	return r.engine.Analyze(sql, rewrite.Options{DB: "app", CaseSensitiveNames: true, Server: r.server})
}

// kind is the sandbox's kind of app.name ("" when it has none).
func (r *rig) kind(name string) sandbox.Kind {
	if e, ok := r.sb.Resolve(r.names.Key(rewrite.Table{DB: "app", Name: name})); ok {
		return e.Kind
	}
	return ""
}

// db is the sandbox's database for app.
func (r *rig) db() string { return sandbox.Schema(prefix, r.sb.ID, "app") }

// wantRefusal fails unless err is a refusal with code whose message holds
// msg.
func wantRefusal(t *testing.T, err error, code uint16, msg string) {
	t.Helper()
	c, _, m, ok := sessiontest.Code(err)
	if !ok || c != code || !strings.Contains(m, msg) {
		t.Errorf("error %v, want %d containing %q", err, code, msg)
	}
}

// regexpQuote is regexp.QuoteMeta.
func regexpQuote(s string) string { return regexp.QuoteMeta(s) }
