package session

import (
	"context"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/infoschema"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
)

// forkStep is what a plan decided in a sandbox still needs before it can
// be sent: the input's analysis, text and reading, to fork what it writes
// and rewrite it to the forks (forkPlanned).
type forkStep struct {
	a        *rewrite.Analysis
	sql      string
	opts     rewrite.Options
	prepared bool
	// execute, for an EXECUTE of a statement the session keeps, is its
	// PREPARE's fork step (forkExecute) in place of the input's.
	execute *executeStep
}

// forkPlanned forks what p, decided in a sandbox, writes (and reads under
// locks), rewrites it to the sandbox's tables and completes it; nothing
// for a plan that needs no fork step. On error what it made for p goes.
func (s *Session) forkPlanned(ctx context.Context, p *Plan) error {
	if p == nil || p.fork == nil {
		return nil
	}
	f := p.fork
	p.fork = nil
	if f.execute != nil {
		return s.forkExecute(ctx, p, f.sql, f.opts, f.execute)
	}
	a, sql, opts, prepared := f.a, f.sql, f.opts, f.prepared
	err := s.awaitFillsFirst(ctx, a, p, prepared)
	var res *rewrite.Result
	if err == nil {
		res, err = s.forkLinked(ctx, a, sql, opts, prepared, p)
	}
	// The tables the text was rewritten to: a reset while the fill step
	// waits makes the plan stale at the gate.
	version := s.current(opts)
	if err == nil {
		err = s.fillFor(ctx, a, p, prepared)
	}
	if err != nil {
		// What planning made for a statement that will not run goes.
		s.abandon(ctx, p)
		return err
	}
	p.SQL, p.changed, p.renames = res.SQL, res.Changed, res.Renames
	s.keepPrepare(a, sql, opts, prepared, p)
	p.rewritten, p.splices = res.SQL, res.Splices
	p.nameRows, p.binaryRows = writesNames(a), prepared
	if len(a.Statements) == 1 && a.Statements[0].Kind == rewrite.KindShowCreateView {
		p.viewDB = a.Statements[0].DB
	}
	if answersPlan(a) {
		p.nameRows, p.planJSON, p.explainDB = true, true, a.Statements[0].DB
	}
	p.unmapped = s.unmapped(a)
	s.planInsertID(a, p)
	s.injectTimeout(a, p)
	p.version = version
	p.restart = s.restartFor(a, p)
	s.planEpoch = s.m.reg.Epoch()
	if p.locks && p.changed {
		p.audited = sql
		if !prepared {
			s.audit(a, sql, false) // a prepared one at each execution
		}
	}
	return nil
}

// forkAndRewrite forks what the input needs in the sandbox (forkFor), its
// information_schema views when it reads them, and rewrites it to the
// sandbox's tables.
func (s *Session) forkAndRewrite(ctx context.Context, a *rewrite.Analysis, sql string, opts rewrite.Options, prepared bool, p *Plan) (*rewrite.Result, error) {
	if err := s.confined(ctx, a); err != nil {
		return nil, err
	}
	if err := s.forkFor(ctx, a, p, prepared); err != nil {
		return nil, err
	}
	if infoschema.Uses(a) {
		if err := s.m.ensureInfoViews(ctx, s.sb); err != nil {
			return nil, err
		}
		if err := s.readOwnConn(ctx, a); err != nil {
			return nil, err
		}
		p.infoIdents = rewrite.Identifiers(sql, opts)
		if text, ok := s.m.engine.PreparedText(sql, opts); ok {
			// An EXECUTE of it answers with the prepared text's labels.
			p.infoIdents = append(p.infoIdents, rewrite.Identifiers(text, opts)...)
		}
	}
	return a.Rewrite(resolver{s: s, productionViews: showCreateView(a), productionTrigger: p.productionTrigger, counts: p.counts})
}

// forkFor forks, once per sandbox, the tables the input writes (a DROP or
// TRUNCATE only their definition, unless it is prepared: it runs later or
// never) and those that must be in the sandbox
// first, and marks in p what the input locks and which tables DDL changes.
func (s *Session) forkFor(ctx context.Context, a *rewrite.Analysis, p *Plan, prepared bool) error {
	for i, st := range a.Statements {
		if done, err := s.routineFor(ctx, a, p, st); done || err != nil {
			if err != nil {
				return err
			}
			continue
		}
		if err := s.tablesFor(ctx, a, i, p, prepared); err != nil {
			return err
		}
	}
	return nil
}

// routineFor readies what a statement of routines, triggers or a compound
// block needs; done is true when st was one (nothing else to fork for it).
func (s *Session) routineFor(ctx context.Context, a *rewrite.Analysis, p *Plan, st rewrite.Statement) (done bool, err error) {
	switch {
	case (st.Kind == rewrite.KindCreateProcedure || st.Kind == rewrite.KindCreateFunction) && st.Routine != nil:
		if err := s.objs().RoutineChanging(ctx, st); err != nil {
			return true, err
		}
		if err := s.objs().ForkBody(ctx, st, true); err != nil {
			return true, err
		}
		p.locks = true
		return true, nil
	case st.Kind == rewrite.KindCall:
		p.locks, p.calls = true, true // its body may write: kept for a replay
		return true, nil
	case st.Kind == rewrite.KindCompound && a.CompoundDDL():
		return true, s.forkBlock(ctx, a, p)
	case st.Trigger != nil && st.Routine != nil:
		return true, s.forkTrigger(ctx, st, p)
	case (st.Kind == rewrite.KindShowCreateFunction || st.Kind == rewrite.KindShowCreateProcedure) && st.Routine != nil:
		return true, s.objs().ShowsOwnRoutine(ctx, st)
	case (st.Kind == rewrite.KindDropFunction || st.Kind == rewrite.KindDropProcedure || st.Kind == rewrite.KindAlterFunction ||
		st.Kind == rewrite.KindAlterProcedure) && st.Routine != nil:
		return true, s.objs().RoutineChanging(ctx, st)
	}
	return false, nil
}

// tablesFor forks what statement i of a writes and what must be in the
// sandbox first, places the functions it calls, and marks in p what it
// locks.
func (s *Session) tablesFor(ctx context.Context, a *rewrite.Analysis, i int, p *Plan, prepared bool) error {
	st := a.Statements[i]
	if calls, err := s.objs().PlaceFunctions(ctx, st); err != nil {
		return err
	} else if calls {
		p.locks, p.calls = true, true // its functions may write: kept for a replay
		if p.tx.Volatile == "" {
			p.tx.Volatile = "it calls a stored function, whose statements the proxy does not check for a second run"
		}
	}
	// A foreign key from a sandbox table must point into the sandbox: one
	// pointing at production would let sandbox rows block production's
	// deletes and updates. Tables read under locks are forked first too,
	// so that the locks are taken in the sandbox, never on production
	// rows; and a view made in the sandbox must read the sandbox's
	// tables, or writes through it would reach production.
	first, err := s.objs().ForkFirst(ctx, st)
	if err != nil {
		return err
	}
	if maintains(a, i) && a.Maintenance(i) != rewrite.KindChecksumTable {
		// Checked, analysed (statistics) on the sandbox's copies, never on
		// production's tables.
		first = append(first, st.Reads...)
	}
	// Production views are copied, not forked.
	views, err := s.prepareViews(ctx, st, first, p)
	if err != nil {
		return err
	}
	if err := s.forkWrites(ctx, st, p, views, prepared); err != nil {
		return err
	}
	for _, t := range first {
		if views[s.m.names.Key(s.m.names.Norm(t))] {
			continue
		}
		if _, _, err := s.ensure(ctx, t, forker.Full); err != nil {
			return err
		}
	}
	if carried, err := s.carriedDDL(ctx, a, p, prepared); carried || err != nil {
		if err != nil {
			return err
		}
	} else if err := s.plannedDDL(ctx, p, st, true); err != nil {
		return err
	}
	if st.Class == rewrite.ClassWrite || st.Class == rewrite.ClassDDL || st.Kind == rewrite.KindLockTables ||
		st.Class == rewrite.ClassTransaction && st.Kind == "" || len(st.Locked) > 0 || len(st.Writes) > 0 {
		p.locks = true
	}
	return nil
}

// forkWrites forks the tables st writes (not the production views it
// copies). DROP and TRUNCATE need only the table's structure, when they
// run now: a prepared one runs later or never, and until then the table
// keeps its rows in the sandbox as in production. A schema-only fork a
// DROP made goes if the statement fails (p.undoOnError).
func (s *Session) forkWrites(ctx context.Context, st rewrite.Statement, p *Plan, views map[string]bool, prepared bool) error {
	mode := forker.Full
	switch st.Kind {
	case rewrite.KindDropTable, rewrite.KindTruncateTable, rewrite.KindDropView:
		if !prepared {
			mode = forker.SchemaOnly
		}
	}
	if s.lazyEligible(ctx, st, p) {
		mode = forker.FullOrLazy
	}
	for _, t := range st.Writes {
		if views[s.m.names.Key(s.m.names.Norm(t))] {
			continue
		}
		_, made, err := s.ensure(ctx, t, mode)
		if err != nil {
			return err
		}
		if made && mode == forker.SchemaOnly && st.Kind != rewrite.KindTruncateTable {
			p.undoOnError = append(p.undoOnError, t)
		}
	}
	return nil
}

// plannedDDL marks in p the tables st, when DDL, changes (re-read once it
// has run) and stops their captures (own: st is the client's statement;
// see stopCapturesFor).
func (s *Session) plannedDDL(ctx context.Context, p *Plan, st rewrite.Statement, own bool) error {
	if st.Class != rewrite.ClassDDL {
		return nil
	}
	p.refresh = append(p.refresh, st.Writes...)
	return s.stopCapturesFor(ctx, st, own)
}

// forkBlock makes ready, before it runs, what an anonymous block holding
// DDL (a, one COMPOUND statement) needs in the sandbox, as ForkBody does
// for a procedure's body: each of its statements' tables forked whole —
// never schema only, as a statement before a DROP may read the rows — or
// placed when production does not have them, with the tables that must be
// in the sandbox first and the copies of production views, so that the
// block, rewritten once, names the sandbox's tables all through. The
// tables its DDL changes are re-read once it has run (p.refresh), as after
// the client's own DDL. Its DDL commits the open transaction in the middle
// of the block, where a replay could not tell what belonged to which
// transaction: a transaction left open after it is not replayed (1412).
func (s *Session) forkBlock(ctx context.Context, a *rewrite.Analysis, p *Plan) error {
	p.locks = true
	if p.tx.Volatile == "" {
		p.tx.Volatile = "it ran a compound statement holding DDL, which commits the open transaction in the middle of the block"
	}
	for _, b := range a.CompoundBody() {
		for _, bs := range b.Statements {
			first, err := s.objs().BodyFirst(ctx, bs)
			if err != nil {
				return err
			}
			views, err := s.prepareViews(ctx, bs, first, p)
			if err != nil {
				return err
			}
			for _, t := range append(append([]rewrite.Table{}, bs.Writes...), first...) {
				if infoschema.Virtual(t) || views[s.m.names.Key(s.m.names.Norm(t))] {
					continue
				}
				if _, _, err := s.ensure(ctx, t, forker.Full); err != nil {
					return err
				}
			}
			if err := s.plannedDDL(ctx, p, bs, false); err != nil {
				return err
			}
		}
		if infoschema.Uses(b) {
			if err := s.m.ensureInfoViews(ctx, s.sb); err != nil {
				return err
			}
		}
	}
	return nil
}
