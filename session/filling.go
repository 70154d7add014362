package session

import (
	"context"
	"errors"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox/forking"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Lazy forks still filling (sandbox/forking lazy.go). A statement that
// reaches one runs on it only once the fork holds every row the statement
// could read, change or collide with. A statement on that one table whose
// rows literal key values bound (rewrite.Bounds, forking.CopyUpWhere) has
// them copied up from the fork's snapshot, in the gate step, where a
// fill's end and a reset wait for it; so does each execution of a prepared
// one whose parameters bound them (fillForExecution), read from its
// COM_STMT_EXECUTE. Any other waits until the fork is whole, as it would
// have waited for a copy, before its tables are forked (its captures may
// change) and before its transaction's restart is decided (the whole fork
// is a new table): so does every statement of an open transaction (its
// read view may be older than rows copied up since), and every statement
// that could reach a table the proxy cannot see it name (views, stored
// routines, DDL). An execution waits after its plan is made: the fill's
// end changes the sandbox's tables, and the gate step plans it again.

// copyUp is rows to copy up into the filling fork of key before the
// statement runs ("" where: none, the statement only runs on it).
type copyUp struct {
	key string
	forking.CopyUp
}

// Filling says whether the session's sandbox has lazy forks still
// filling.
func (s *Session) Filling() bool {
	return s.sb != nil && s.sb.AnyFilling()
}

// inTransaction says whether the client's connection is in a
// transaction, or makes one of each statement (autocommit off).
func (s *Session) inTransaction() bool {
	return s.up != nil && (s.up.Status()&wire.StatusInTrans != 0 || s.up.Status()&wire.StatusAutocommit == 0)
}

// lazyEligible says whether st, planned as p, may fork the table it writes
// lazily: a write of one table whose rows literal values (or, prepared,
// its parameters at each execution) may bound; in a transaction, one that
// can be replayed so far (txfill.go), by a statement that can be run
// again.
func (s *Session) lazyEligible(ctx context.Context, st rewrite.Statement, p *Plan) bool {
	switch st.Kind {
	case rewrite.KindInsert, rewrite.KindReplace, rewrite.KindUpdate, rewrite.KindDelete:
	default:
		return false
	}
	if s.inTransaction() && (!s.tx.Replayable() || p.tx.Volatile != "" || p.tx.Previous != "") {
		return false
	}
	return st.Bounds != nil && onlyTable(st) && s.copyUpSafe(ctx, st)
}

// awaitFillsFirst waits, before a's tables are forked, for the fills a
// cannot run beside: all of the sandbox's for a statement that may reach
// tables it does not name; those it names for one run in a transaction
// whose rows no copy-up can bound (a prepared one's executions wait,
// fillForExecution). A transaction holding fills lets them go first
// (awaitFillsHeld).
func (s *Session) awaitFillsFirst(ctx context.Context, a *rewrite.Analysis, p *Plan, prepared bool) error {
	if s.m == nil || !s.Filling() {
		return nil
	}
	inTx := s.inTransaction()
	for _, st := range a.Statements {
		if !s.fillSafe(ctx, st) {
			return s.awaitFillsHeld(ctx, p, nil, s.awaitAllFills)
		}
		touched := s.fillingIn(ctx, st)
		if len(touched) == 0 || !inTx || prepared || len(touched) == 1 && onlyTable(st) && st.Bounds != nil && !s.namesView(ctx, st) {
			continue
		}
		if err := s.awaitFillsHeld(ctx, p, touched, func(ctx context.Context) error { return s.awaitFills(ctx, touched) }); err != nil {
			return err
		}
	}
	return nil
}

// fillFor plans the copy-ups of a's statements into p once its tables are
// forked, and waits for the fills of the filling forks a statement
// reaches otherwise. A prepared statement's are planned at each execution
// instead (fillForExecution), from its parameters.
func (s *Session) fillFor(ctx context.Context, a *rewrite.Analysis, p *Plan, prepared bool) error {
	p.copyUps = nil
	if prepared {
		return nil
	}
	return s.planCopyUps(ctx, a, p, nil)
}

// fillForExecution plans the copy-ups of an execution of the prepared
// statement planned as p, whose parameters are params (nil: not read).
func (s *Session) fillForExecution(ctx context.Context, p *Plan, params []wire.Param) error {
	p.copyUps = nil
	if p.analysis == nil {
		return nil
	}
	var vals []string
	for _, prm := range params {
		vals = append(vals, rewrite.ParamLiteral(prm))
	}
	return s.planCopyUps(ctx, p.analysis, p, vals)
}

// planCopyUps plans the copy-ups of a's statements into p, their
// placeholders given vals (Bounds.Bind), and waits for the fills of the
// filling forks a statement reaches otherwise. In an open transaction the
// rows are copied up now, inside it (copyUpInTx).
func (s *Session) planCopyUps(ctx context.Context, a *rewrite.Analysis, p *Plan, vals []string) error {
	if s.m == nil || !s.Filling() {
		return nil
	}
	inTx, mixed := s.inTransaction(), txChanging(a, p)
	for _, st := range a.Statements {
		touched := s.fillingIn(ctx, st)
		if len(touched) == 0 {
			continue
		}
		up, ok := copyUp{}, false
		if len(touched) == 1 && s.copyUpSafe(ctx, st) && !mixed {
			st.Bounds = st.Bounds.Bind(vals)
			up, ok = s.copyUpOf(st, touched[0])
		}
		switch {
		case ok && !inTx:
			p.copyUps = append(p.copyUps, up)
			continue
		case ok:
			var err error
			if ok, err = s.copyUpInTx(ctx, a, p, up); err != nil {
				return err
			}
		}
		if !ok {
			if err := s.awaitFillsHeld(ctx, p, touched, func(ctx context.Context) error { return s.awaitFills(ctx, touched) }); err != nil {
				return err
			}
		}
	}
	return nil
}

// txChanging reports whether a's statements, more than one, include one
// that may start or end a transaction, roll one back to a savepoint or
// change autocommit: copy-ups planned before the input runs could be
// undone by it, or leave a transaction touching the fork without holding
// its fill (txfill.go). Such an input's statements wait for the fills.
func txChanging(a *rewrite.Analysis, p *Plan) bool {
	if len(a.Statements) < 2 {
		return false
	}
	if p.shape.Begin || p.shape.End || p.shape.Control {
		return true
	}
	for _, st := range a.Statements {
		for _, v := range st.Vars {
			if v.System && v.Set && strings.EqualFold(v.Name, "autocommit") {
				return true
			}
		}
	}
	return false
}

// copyUpOf is what st needs copied up into the filling fork of key k,
// this process's; ok is false when st's rows are not bounded so.
func (s *Session) copyUpOf(st rewrite.Statement, k string) (copyUp, bool) {
	f, ok := s.sb.FillOf(k)
	if !ok || f.Err() != nil || !onlyTable(st) {
		return copyUp{}, false
	}
	up, ok := forking.CopyUpWhere(st, f.Filler.Lazy().Capture.Shape)
	return copyUp{key: k, CopyUp: up}, ok
}

// copiedUp is the gate step's copy-up of p's rows (fillFor): each fork
// the statement runs on while it fills is used (registry.Fill.Use) until
// done, so the fill's end waits for the statement. A fill that ended
// meanwhile made its fork whole: there is nothing to copy.
func (s *Session) copiedUp(ctx context.Context, p *Plan) (done func(), err error) {
	uses, err := s.useFills(ctx, p)
	if err != nil {
		return func() {}, err
	}
	done = func() {
		for _, u := range uses {
			u()
		}
	}
	for _, up := range p.copyUps {
		f, ok := s.sb.FillOf(up.key)
		if !ok || up.Where == "" {
			continue
		}
		if _, err := f.Filler.CopyUp(ctx, up.Where, up.Keys, s.m.reg.NextEpoch); err != nil {
			done()
			return func() {}, copyUpFailed(f.Filler.Lazy().Src, err)
		}
	}
	return done, nil
}

// useFills marks the statement running on the forks of p's copy-ups
// (registry.Fill.Use, once each: a second read lock behind a waiting
// fill's end would wait for ever), once no other session's transaction
// holds any of them (txfill.go). It waits for such a one's end holding
// none of its marks — a transaction taking a hold waits for them — or
// for KILL.
func (s *Session) useFills(ctx context.Context, p *Plan) ([]func(), error) {
	for {
		var uses []func()
		var busy <-chan struct{}
		var held *registry.Fill
		seen := map[string]bool{}
		for _, up := range p.copyUps {
			f, ok := s.sb.FillOf(up.key)
			if !ok || seen[up.key] {
				continue
			}
			seen[up.key] = true
			uses = append(uses, f.Use())
			if busy = f.HeldElsewhere(s); busy != nil {
				held = f
				break
			}
		}
		if busy == nil {
			return uses, nil
		}
		for _, u := range uses {
			u()
		}
		if err := s.awaitHold(ctx, held, busy); err != nil {
			return nil, err
		}
	}
}

// copyUpFailed is the error a statement gets when the rows it needs could
// not be copied up into the filling fork of production table t: a server's error as it
// is (a deadlock's 1213 says to retry), anything else (the fill's
// connection lost) said plainly.
func copyUpFailed(t rewrite.Table, err error) error {
	var me interface {
		MySQLError() (uint16, string, string)
	}
	if errors.As(err, &me) {
		return err
	}
	return rewrite.Refuse(wire.ErUnknown, "the rows of %s this statement needs could not be copied into its fork while it fills (%v); "+
		"retry, or SANDBOX RESET FOR the table if it fails again", t, err)
}

// fillSafe says whether the proxy sees every table st may reach: no view
// it cannot follow (fillviews.go), stored routine or trigger statement, DDL
// or text it cannot read.
func (s *Session) fillSafe(ctx context.Context, st rewrite.Statement) bool {
	switch st.Kind {
	case rewrite.KindSelect, rewrite.KindInsert, rewrite.KindReplace, rewrite.KindUpdate, rewrite.KindDelete:
	default:
		return len(st.Reads) == 0 && len(st.Writes) == 0 && len(st.Names) == 0 && st.Routine == nil && len(st.Funcs) == 0
	}
	if st.Unprovable != "" || len(st.Names) > 0 || st.Routine != nil || st.Inner != nil {
		return false
	}
	for _, f := range st.Funcs {
		if !s.m.catalog.Native(f) {
			return false
		}
	}
	for _, t := range named(st) {
		if view, _, ok := s.viewOf(ctx, t); view && !ok {
			return false
		}
	}
	return true
}

// fillingIn are the keys of the filling forks st names, and of those the
// views it names read.
func (s *Session) fillingIn(ctx context.Context, st rewrite.Statement) []string {
	seen := map[string]bool{}
	var out []string
	add := func(k string) {
		if e, ok := s.sb.Resolve(k); ok && e.Filling && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	for _, t := range named(st) {
		add(s.m.names.Key(t))
		_, fills, _ := s.viewOf(ctx, t)
		for _, k := range fills {
			add(k)
		}
	}
	return out
}

// awaitAllFills waits until every fill of the sandbox has ended, or KILL
// interrupts it (Interrupt).
func (s *Session) awaitAllFills(ctx context.Context) error {
	ctx, done := s.interruptible(ctx)
	defer done()
	return interrupted(ctx, s.m.fk.AwaitFills(ctx, s.sb))
}

// awaitFills waits until the fills of keys have ended, or KILL interrupts
// it (Interrupt).
func (s *Session) awaitFills(ctx context.Context, keys []string) error {
	ctx, done := s.interruptible(ctx)
	defer done()
	for _, k := range keys {
		if err := s.m.fk.AwaitFill(ctx, s.sb, k); err != nil {
			return interrupted(ctx, err)
		}
	}
	return nil
}

// named are the tables st reads and writes.
func named(st rewrite.Statement) []rewrite.Table {
	return append(append([]rewrite.Table(nil), st.Reads...), st.Writes...)
}

// onlyTable says whether st names one table only.
func onlyTable(st rewrite.Statement) bool {
	var one *rewrite.Table
	for _, t := range named(st) {
		if one == nil {
			one = &t
		} else if *one != t {
			return false
		}
	}
	return one != nil
}

// errInterrupted ends a wait KILL interrupted.
var errInterrupted = rewrite.ServerRefusal(wire.ErQueryInterrupted, "Query execution was interrupted")

// Interrupt ends the wait of the session's statement in the proxy (for a
// lazy fork's fill), as KILL QUERY or KILL ends a statement the server
// runs: the statement gets 1317.
func (s *Session) Interrupt() {
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	if s.waitStop != nil {
		s.waitStop(errInterrupted)
	}
}

// interruptible is ctx, ended by Interrupt until done.
func (s *Session) interruptible(ctx context.Context) (context.Context, func()) {
	ctx, stop := context.WithCancelCause(ctx)
	s.waitMu.Lock()
	s.waitStop = stop
	s.waitMu.Unlock()
	return ctx, func() {
		s.waitMu.Lock()
		s.waitStop = nil
		s.waitMu.Unlock()
		stop(nil)
	}
}

// interrupted is err, or 1317 when Interrupt ended ctx.
func interrupted(ctx context.Context, err error) error {
	if err != nil && errors.Is(context.Cause(ctx), errInterrupted) {
		return errInterrupted
	}
	return err
}
