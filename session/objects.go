package session

import (
	"context"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/objects"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
)

// A session's stored objects in its sandbox — copies of production views,
// functions and procedures, the tables of the triggers it defines, what
// the objects its statements name reach — are sandbox/objects' (a Placer
// per session); the session gives it what only the session knows
// (placerHost) and calls it while planning.

// objs is the session's Placer, made on first use.
func (s *Session) objs() *objects.Placer {
	if s.obj == nil {
		s.obj = objects.New(s.m.objects, placerHost{s: s})
	}
	return s.obj
}

// placerHost is the session as its Placer sees it (objects.Session).
type placerHost struct{ s *Session }

// Sandbox implements objects.Session.
func (h placerHost) Sandbox() *registry.Sandbox { return h.s.sb }

// RoutineDB implements objects.Session.
func (h placerHost) RoutineDB(db string) string { return h.s.routineDB(db) }

// Ensure implements objects.Session.
func (h placerHost) Ensure(ctx context.Context, t rewrite.Table, mode forker.Mode) (*sandbox.Entry, bool, error) {
	return h.s.ensure(ctx, t, mode)
}

// Resolver implements objects.Session.
func (h placerHost) Resolver() rewrite.Resolver { return resolver{s: h.s} }

// Confined implements objects.Session.
func (h placerHost) Confined(ctx context.Context, a *rewrite.Analysis) error {
	return h.s.confined(ctx, a)
}

// MayExecute implements objects.Session.
func (h placerHost) MayExecute(ctx context.Context, kind, db, name string) error {
	return h.s.mayExecute(ctx, kind, db, name)
}

// Serializable implements objects.Session.
func (h placerHost) Serializable() bool { return h.s.serializable() }

// StopCapturesFor implements objects.Session.
func (h placerHost) StopCapturesFor(ctx context.Context, st rewrite.Statement, own bool) error {
	return h.s.stopCapturesFor(ctx, st, own)
}

// EnsureInfoViews implements objects.Session.
func (h placerHost) EnsureInfoViews(ctx context.Context) error {
	return h.s.m.ensureInfoViews(ctx, h.s.sb)
}

// ensure is forking.Forker.Ensure of t in the session's sandbox, with the
// stored routines the triggers it copied call placed there.
func (s *Session) ensure(ctx context.Context, t rewrite.Table, mode forker.Mode) (*sandbox.Entry, bool, error) {
	e, made, err := s.m.fk.Ensure(ctx, s.sb, t, mode, s.readable())
	if err == nil {
		err = s.objs().PlaceNeeded(ctx)
	}
	return e, made, err
}

// routineDB is the sandbox database holding the routines and triggers of
// logical database db; it is recorded for telling its name back in
// messages.
func (s *Session) routineDB(db string) string {
	phys := sandbox.Schema(s.m.cfg.Prefix, s.sb.ID, s.m.names.Norm(rewrite.Table{DB: db}).DB)
	if s.schemas == nil {
		s.schemas = map[string]string{}
	}
	s.schemas[phys] = db
	return phys
}

// ResolveFunction implements rewrite.FunctionResolver (Placer.ResolveFunction).
func (r resolver) ResolveFunction(f rewrite.Func, db string) (string, bool, error) {
	return r.s.objs().ResolveFunction(f, db)
}

// ResolveRoutine implements rewrite.RoutineResolver (Placer.ResolveRoutine).
func (r resolver) ResolveRoutine(st *rewrite.Statement) (string, error) {
	return r.s.objs().ResolveRoutine(st)
}

// ResolveTrigger implements rewrite.TriggerResolver (Placer.ResolveTrigger).
func (r resolver) ResolveTrigger(st *rewrite.Statement) (string, bool, error) {
	return r.s.objs().ResolveTrigger(st, r.productionTrigger)
}

// prepareViews makes the sandbox's copies of the production views st names
// (Placer.PrepareViews) and marks in p what they need: a replay refused
// when one calls a stored function, the copies to adopt once st ran. It
// returns, by key, the names that are production views.
func (s *Session) prepareViews(ctx context.Context, st rewrite.Statement, first []rewrite.Table, p *Plan) (map[string]bool, error) {
	v, err := s.objs().PrepareViews(ctx, st, first)
	if v.Calls && p.tx.Volatile == "" {
		// Its functions may write: kept for a replay, which the proxy
		// refuses (it does not check their statements).
		p.locks = true
		p.tx.Volatile = "it reads a view calling a stored function, whose statements the proxy does not check for a second run"
	}
	p.adoptViews = append(p.adoptViews, v.Adopt...)
	return v.Names, err
}

// forkTrigger makes ready what a trigger statement needs in the sandbox
// (Placer.ForkTrigger); for SHOW CREATE TRIGGER it marks in p a trigger
// that is production's.
func (s *Session) forkTrigger(ctx context.Context, st rewrite.Statement, p *Plan) error {
	if st.Kind != rewrite.KindShowCreateTrigger {
		p.locks = true
	}
	production, err := s.objs().ForkTrigger(ctx, st)
	if production {
		p.productionTrigger = true
	}
	return err
}
