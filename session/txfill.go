package session

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/session/txn"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Statements of an open transaction on a lazy fork still filling. The
// transaction holds the fill (registry.Fill.Hold: no other session runs on
// the fork meanwhile, and the fill's end waits for the transaction), and
// the rows a statement's literal values bound are copied up on the
// client's own connection, inside the transaction (forker.Filler.TxUp):
// its read view sees them whenever it was taken, and the locks it holds on
// the fork's rows and gaps do not stop them. A view taken before rows were
// committed into the fork by others (copy-ups, an earlier holder) would
// not see them: the transaction is restarted or replayed (txn) before its
// first copy-up into that fork.
//
// Such a transaction never waits while it holds a fill: a statement that
// needs a fork whole, or a fill another session holds after the
// transaction has written, rolls the transaction back first (its copy-ups
// go with it), lets its fills go, waits for their ends and the statement's
// fills, and replays it on the whole forks (leaveFills). A transaction
// whose record cannot be replayed takes no hold: its statements wait for
// the fill, as for a copy.

// heldFill is a fill the session's open transaction holds, and the
// copy-ups made inside the transaction.
type heldFill struct {
	fill    *registry.Fill
	release func(stamp uint64)
	// all are the bound conditions (as CopyUpWhere wrote them) copied up
	// inside the transaction, which a replay copies up again; ups those
	// not copied up again since a statement that may have undone them
	// (ROLLBACK TO SAVEPOINT, or any that failed: forgetUps).
	all map[string][]string // with the keys each pins (CopyUp.Keys)
	ups map[string]bool
	// used: a statement ran on the fork under the hold (the transaction
	// may hold its metadata lock).
	used bool
}

// copyUpInTx copies up, inside the client's open transaction, the rows up
// needs from the filling fork it names, the transaction holding the fill
// first (holdFill). ok is false when the statement must wait for the
// fill's end instead (awaitFillsHeld).
func (s *Session) copyUpInTx(ctx context.Context, a *rewrite.Analysis, p *Plan, up copyUp) (ok bool, err error) {
	f, found := s.sb.FillOf(up.key)
	if !found || p.tx.Previous != "" || s.tx.ReadOnly(s.vars.ReadOnly) {
		// (A statement reading what the one before it did, ROW_COUNT(),
		// would read the copy-up's; a READ ONLY transaction's would fail.)
		return false, nil
	}
	h, err := s.holdFill(ctx, a, p, f)
	if err != nil || h == nil {
		return errors.Is(err, errFillEnded), dropEnded(err)
	}
	if up.Where == "" || h.ups[up.Where] {
		h.used = true
		return true, nil
	}
	rows, err := f.Filler.TxRows(ctx, up.Where, up.Keys)
	if err != nil {
		return false, copyUpFailed(f.Filler.Lazy().Src, err)
	}
	q := f.Filler.TxUp(rows)
	if q != "" && !isASCII(q) && s.vars.Charset != "utf8mb4" && s.vars.Charset != "utf8mb3" && s.vars.Charset != "utf8" {
		// Names the client's character set may not spell.
		return s.cannotCopyUp(h)
	}
	if q != "" {
		if _, err := (txConn{s}).Query(ctx, q); err != nil {
			if serverCode(err) == wire.ErReadOnlyTransaction {
				h.used = true // its checks read the fork
				return false, nil
			}
			return false, err // the server's answer on the client's connection, as to a statement
		}
	}
	h.ups[up.Where], h.all[up.Where], h.used = true, up.Keys, true
	return true, nil
}

// forgetUps forgets which rows were copied up inside the transaction
// after a statement that may have undone some (p failed, rolled back to a
// savepoint, or ended a transaction: ROLLBACK AND CHAIN leaves one open):
// the next statements copy theirs up again (a copy-up of rows the fork
// has changes nothing).
func (s *Session) forgetUps(p *Plan, failed bool) {
	ended := p != nil && (p.shape.End || p.shape.Begin) // AND CHAIN keeps the transaction open, not its copy-ups
	if !failed && !ended && (p == nil || !p.shape.Control) {
		return
	}
	for _, h := range s.held {
		h.ups = map[string]bool{}
		if ended {
			h.all = map[string][]string{}
		}
	}
}

// copyUpAgain copies up again, inside the transaction started again for a
// replay, the rows the one rolled back copied up inside it: the fills it
// holds are still held, so the rows are the same.
func (s *Session) copyUpAgain(ctx context.Context) error {
	for _, h := range s.held {
		h.ups = map[string]bool{}
		for where, keys := range h.all {
			rows, err := h.fill.Filler.TxRows(ctx, where, keys)
			if err != nil {
				return fillLost{err} // the client's connection is fine: the replay fails (1412)
			}
			if q := h.fill.Filler.TxUp(rows); q != "" {
				if _, err := (txConn{s}).Query(ctx, q); err != nil {
					return err
				}
			}
			h.ups[where] = true
		}
	}
	return nil
}

// fillLost is a fill's failure met by a replay's copy-ups: the replay
// fails as after the server's own error, and the client gets 1412.
type fillLost struct{ error }

// ServerError: the client's connection is usable.
func (fillLost) ServerError() bool { return true }

func (e fillLost) Unwrap() error { return e.error }

// cannotCopyUp gives up copying up inside the transaction for h's fork
// (the statement waits for its fill): the hold goes when no statement ran
// on the fork under it.
func (s *Session) cannotCopyUp(h *heldFill) (bool, error) {
	if !h.used {
		s.letGo(h)
	}
	return false, nil
}

// letGo ends the session's hold h, under which no statement ran.
func (s *Session) letGo(h *heldFill) {
	delete(s.held, h.fill)
	h.release(s.m.reg.NextEpoch())
}

// holdFill is the session's hold of f for its open transaction, taken when
// it has none (nil: the statement must wait for the fill's end). A
// transaction whose view is older than what was committed into the fork,
// or than a table the statement uses, is restarted or replayed first (one
// that cannot be replayed takes no hold then). A
// hold another session has is waited for only by a transaction that has
// neither written nor holds a fill.
func (s *Session) holdFill(ctx context.Context, a *rewrite.Analysis, p *Plan, f *registry.Fill) (*heldFill, error) {
	for {
		if h := s.held[f]; h != nil {
			return h, nil
		}
		// A transaction that cannot be replayed holds too once it has a
		// read view that needs no replay (below): waiting for the fill
		// instead would end it under the view, and the statement would
		// then need the replay. Without a view it waits, as for a copy:
		// a hold could make it roll back later (awaitFillsHeld).
		if !s.tx.Replayable() && !s.tx.HasView() {
			return nil, nil
		}
		release, busy, ok := f.Hold(s)
		if !ok && busy == nil {
			// Its end has begun, with no holder: it waits for nobody.
			if err := s.awaitHold(ctx, f, nil); err != nil {
				return nil, err
			}
			return nil, errFillEnded
		}
		if !ok {
			if s.holdsLocks() || len(s.held) > 0 {
				return nil, nil
			}
			if err := s.awaitHold(ctx, f, busy); err != nil {
				return nil, err
			}
			continue
		}
		if s.held == nil {
			s.held = map[*registry.Fill]*heldFill{}
		}
		h := &heldFill{fill: f, release: release, all: map[string][]string{}, ups: map[string]bool{}}
		s.held[f] = h
		// (A fork made after the view refuses even the copy-up's locking
		// reads: 1412.)
		act := s.tx.Needs(p.txInput(), func(e uint64) bool { return f.LastChange() > e || s.touchesNewer(a, e) }, s.sb.ChangedSince)
		if act == txn.Replay && !s.tx.Replayable() {
			// It would be refused: the statement waits for the fill
			// instead, as for a copy.
			s.letGo(h)
			return nil, nil
		}
		if act != txn.Nothing {
			if err := s.restart(ctx, p, act); err != nil {
				return nil, err
			}
		}
	}
}

// forkLinked is forkAndRewrite, whose forks may wait for the fills of the
// tables theirs link to (keys, triggers): one the open transaction holds
// is let go first (awaitFillsHeld: rolled back, waited for, replayed),
// then the forks are made again.
func (s *Session) forkLinked(ctx context.Context, a *rewrite.Analysis, sql string, opts rewrite.Options, prepared bool, p *Plan) (*rewrite.Result, error) {
	if len(s.held) == 0 {
		return s.forkAndRewrite(ctx, a, sql, opts, prepared, p)
	}
	res, err := s.forkAndRewrite(registry.WithHolder(ctx, s), a, sql, opts, prepared, p)
	if !errors.Is(err, registry.ErrHeldBySelf) {
		return res, err
	}
	if err := s.awaitFillsHeld(ctx, p, nil, s.awaitAllFills); err != nil {
		return nil, err
	}
	return s.forkAndRewrite(ctx, a, sql, opts, prepared, p)
}

// errFillEnded says a fill ended while a statement waited for it: the
// fork is whole, and the statement runs on it.
var errFillEnded = errors.New("the fill ended")

// dropEnded is err, nil for errFillEnded.
func dropEnded(err error) error {
	if errors.Is(err, errFillEnded) {
		return nil
	}
	return err
}

// awaitHold waits until another session lets f go (busy), or f ends, or
// KILL interrupts the wait.
func (s *Session) awaitHold(ctx context.Context, f *registry.Fill, busy <-chan struct{}) error {
	ctx, done := s.interruptible(ctx)
	defer done()
	select {
	case <-busy:
	case <-f.Ended():
	case <-ctx.Done():
		return interrupted(ctx, ctx.Err())
	}
	return nil
}

// releaseHolds lets go every fill the session holds: its transaction
// ended (or is rolled back), and what it committed was committed by now.
func (s *Session) releaseHolds() {
	if len(s.held) == 0 {
		return
	}
	stamp := s.m.reg.NextEpoch()
	for f, h := range s.held {
		h.release(stamp)
		delete(s.held, f)
	}
}

// awaitFillsHeld runs wait, which waits for the fills of keys (nil: all of
// the sandbox's), as a statement of p must when its transaction may hold
// fills: when it holds some and one of those it waits for may wait for a
// session (endingAll), the
// transaction is rolled back (committed, before a statement that commits
// it anyway), its fills let go and their ends waited for too, and after
// the wait it is replayed (restarted) on the whole forks.
func (s *Session) awaitFillsHeld(ctx context.Context, p *Plan, keys []string, wait func(context.Context) error) error {
	if len(s.held) == 0 && !(s.holdsLocks() && s.heldElsewhere(keys)) || s.endingAll(keys) {
		return wait(ctx)
	}
	commits := p.commitsImplicitly()
	if err := s.leaveFills(ctx, commits); err != nil {
		return err
	}
	if err := wait(ctx); err != nil {
		if commits {
			return err
		}
		why := fmt.Sprintf("it waited for a fork to fill, and the wait failed (%v)", err)
		return s.refuse(ctx, why, fillRefused(s.SandboxName(), why), false)
	}
	if commits {
		return nil
	}
	if p.tx.Previous != "" {
		why := "this statement reads " + p.tx.Previous + ", which would then be that of the proxy's own statements"
		return s.refuseRestart(ctx, why, retryRefused(s.SandboxName(), why))
	}
	return s.restart(ctx, p, s.tx.Again())
}

// holdsLocks reports whether the open transaction may hold row locks
// another transaction could wait for: it wrote or read under locks, or it
// runs SERIALIZABLE.
func (s *Session) holdsLocks() bool {
	return s.tx.Wrote() || s.tx.Serializable() || strings.Contains(strings.ToUpper(s.vars.Isolation), "SERIALIZABLE")
}

// heldElsewhere reports whether a fill of keys (nil: all of the
// sandbox's) is held by another session's transaction.
func (s *Session) heldElsewhere(keys []string) bool {
	for _, k := range s.fillKeys(keys) {
		if f, ok := s.sb.FillOf(k); ok && f.HeldElsewhere(s) != nil {
			return true
		}
	}
	return false
}

// fillKeys is keys, or for nil the keys of every fork of the sandbox
// still filling.
func (s *Session) fillKeys(keys []string) []string {
	if keys == nil {
		return s.sb.Filling()
	}
	return keys
}

// endingAll reports whether the fills of keys (nil: all of the sandbox's),
// each this process's, have all begun to end with no holder: waiting for
// them waits for nobody.
func (s *Session) endingAll(keys []string) bool {
	for _, k := range s.fillKeys(keys) {
		f, ok := s.sb.FillOf(k)
		if e, found := s.sb.Resolve(k); !ok && found && !e.Filling {
			continue // ended
		}
		if !ok || !f.Ending() {
			return false
		}
	}
	return true
}

// leaveFills ends the server's side of the open transaction (ROLLBACK, or
// COMMIT when commit), lets its fills go and, after a rollback, waits for
// their ends: a replay then runs on the whole forks.
func (s *Session) leaveFills(ctx context.Context, commit bool) error {
	end := "ROLLBACK"
	if commit {
		end = "COMMIT"
	}
	if _, err := (txConn{s}).Query(ctx, end); err != nil && !isServerError(err) {
		return err
	}
	var fills []*registry.Fill
	for f := range s.held {
		fills = append(fills, f)
	}
	s.releaseHolds()
	if commit {
		// The transaction is over: follow it so (a replay would repeat it).
		_ = s.executed(ctx, nil, s.up.Status(), false)
		return nil
	}
	wctx, done := s.interruptible(ctx)
	defer done()
	for _, f := range fills {
		select {
		case <-f.Ended():
		case <-wctx.Done():
			why := "it held a fork still filling and waited for the fill, which was interrupted"
			return s.refuse(ctx, why, fillRefused(s.SandboxName(), why), false)
		}
	}
	return nil
}

// fillRefused is the error for a transaction the session rolled back to
// wait for a fork's fill and could not replay after it (why).
func fillRefused(sandbox, why string) error {
	return rewrite.Refuse(wire.ErTableDefChanged, "Table definition has changed, please retry transaction: the transaction used a "+
		"table of sandbox %q while its fork was still being filled, and this statement needs the whole fork; the proxy rolled "+
		"the transaction back to wait for it and cannot run it again (%s); run the transaction again", sandbox, why)
}

// retryRefused is the error for a transaction the session rolled back
// because it could not run the statement as on a copy (why).
func retryRefused(sandbox, why string) error {
	return rewrite.Refuse(wire.ErTableDefChanged, "Table definition has changed, please retry transaction: in sandbox %q, %s; "+
		"the proxy rolled the transaction back: run it again", sandbox, why)
}

// serverCode is the MySQL error code err carries (0 for none).
func serverCode(err error) uint16 {
	var me interface {
		MySQLError() (uint16, string, string)
	}
	var my *mysql.MyError
	switch {
	case errors.As(err, &me):
		code, _, _ := me.MySQLError()
		return code
	case errors.As(err, &my):
		return my.Code
	}
	return 0
}
