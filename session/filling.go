package session

import (
	"context"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/forking"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// The fill step of a plan (forkPlanned): a statement that reaches a lazy
// fork still filling (sandbox/forking lazy.go) runs on it only once the
// fork holds every row the statement could read, change or collide with.
// A statement on that one table whose rows literal key values bound
// (rewrite.Bounds, forking.CopyUpWhere) has them copied up from the
// fork's snapshot; any other waits until the fork is whole, as it would
// have waited for a copy. So does every statement of an open transaction
// (its read view may be older than rows copied up since) and every
// statement that could reach a table the proxy cannot see it name: views,
// stored routines, DDL.

// fillFor readies the lazy forks a's statements reach (fill step).
func (s *Session) fillFor(ctx context.Context, a *rewrite.Analysis, prepared bool) error {
	if s.sb == nil || s.m == nil {
		return nil
	}
	filling := s.sb.Filling()
	if len(filling) == 0 {
		return nil
	}
	inTx := s.up != nil && (s.up.Status()&wire.StatusInTrans != 0 || s.up.Status()&wire.StatusAutocommit == 0)
	for _, st := range a.Statements {
		if !s.fillSafe(st) {
			return s.awaitFills(ctx, filling)
		}
		touched := s.fillingIn(st)
		if len(touched) == 0 {
			continue
		}
		if inTx || prepared || len(touched) > 1 {
			if err := s.awaitFills(ctx, touched); err != nil {
				return err
			}
			continue
		}
		if err := s.copyUp(ctx, st, touched[0]); err != nil {
			return err
		}
	}
	return nil
}

// fillSafe says whether the proxy sees every table st may reach: no view,
// stored routine or trigger statement, DDL or text it cannot read.
func (s *Session) fillSafe(st rewrite.Statement) bool {
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
	for _, t := range append(append([]rewrite.Table(nil), st.Reads...), st.Writes...) {
		if e, ok := s.sb.Resolve(s.m.names.Key(t)); ok && e.Kind == sandbox.KindView {
			return false
		}
	}
	return true
}

// fillingIn are the keys of the filling forks st names.
func (s *Session) fillingIn(st rewrite.Statement) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range append(append([]rewrite.Table(nil), st.Reads...), st.Writes...) {
		k := s.m.names.Key(t)
		if e, ok := s.sb.Resolve(k); ok && e.Filling && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// awaitFills waits until the fills of keys have ended.
func (s *Session) awaitFills(ctx context.Context, keys []string) error {
	for _, k := range keys {
		if err := s.m.fk.AwaitFill(ctx, s.sb, k); err != nil {
			return err
		}
	}
	return nil
}

// copyUp copies up the rows of the filling fork k that st touches, when
// st names that table only and its rows are bounded; else it waits for
// the fill.
func (s *Session) copyUp(ctx context.Context, st rewrite.Statement, k string) error {
	f, ok := s.sb.FillOf(k)
	if !ok || f.Err() != nil || !onlyTable(st) {
		return s.awaitFills(ctx, []string{k})
	}
	where, ok := forking.CopyUpWhere(st, f.Filler.Lazy().Capture.Shape)
	switch {
	case !ok:
		return s.awaitFills(ctx, []string{k})
	case where == "":
		return nil
	}
	err := f.Filler.CopyUp(ctx, where)
	if forker.Filled(err) {
		return s.awaitFills(ctx, []string{k})
	}
	return err
}

// onlyTable says whether st names one table only.
func onlyTable(st rewrite.Statement) bool {
	var one *rewrite.Table
	for _, t := range append(append([]rewrite.Table(nil), st.Reads...), st.Writes...) {
		if one == nil {
			one = &t
		} else if *one != t {
			return false
		}
	}
	return one != nil
}
