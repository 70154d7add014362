package session

import (
	"context"
	"time"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/session/txn"
	"github.com/sqlfork/sqlfork-proxy/wire"
	"go.uber.org/zap"
)

// restartFor is what must happen to the open transaction before p
// (txn.Transaction.Needs): a table forked after its read view, or, at its
// first write, any change of the sandbox's tables since.
func (s *Session) restartFor(a *rewrite.Analysis, p *Plan) txn.Action {
	return s.tx.Needs(p.txInput(), func(epoch uint64) bool { return s.touchesNewer(a, epoch) }, s.sb.ChangedSince)
}

// executed records the outcome of a planned input: the server status
// after it (for transaction tracking), and, for DDL in a sandbox, re-reads
// which tables now exist there.
func (s *Session) executed(ctx context.Context, p *Plan, status uint16, failed bool) error {
	s.tx.Executed(p.txInput(), txn.Result{Status: status, Failed: failed, Isolation: s.vars.Isolation, ReadOnly: s.vars.ReadOnly,
		Since: s.viewSince()})
	if status&wire.StatusInTrans == 0 {
		s.releaseHolds() // the transaction ended: its fills' ends may come
	}
	started := !failed && p != nil && startsXA(p.analysis)
	if started && s.sb != nil {
		s.sb.NoteXA() // its discard rolls back what it leaves prepared
	}
	s.xa = status&wire.StatusInTrans != 0 && (s.xa || started)
	s.forgetUps(p, failed)
	if p == nil || s.sb == nil {
		return nil
	}
	if failed {
		for _, t := range p.undoOnError {
			if err := s.m.fk.Unfork(ctx, s.sb, t); err != nil {
				return err
			}
		}
	}
	s.noteWrites(ctx, p, status)
	if !failed && p.dbChange != nil {
		if err := s.recordDatabase(ctx, p.dbChange); err != nil {
			return err
		}
	}
	if len(p.refresh) > 0 {
		if err := s.m.fk.Refresh(ctx, s.sb, p.refresh); err != nil {
			return err
		}
	}
	if !failed && p.carry != nil {
		if err := s.m.caps.Carry(ctx, s.sb, p.carry.table, p.carry.before, s.ownConn()); err != nil {
			return err
		}
	}
	if !failed && p.analysis != nil {
		for _, st := range p.analysis.Statements {
			if st.Kind == rewrite.KindCreateTrigger && st.Trigger != nil {
				if err := s.m.caps.Last(ctx, s.sb, st.Trigger.Table, st.Trigger.Timing, st.Trigger.Event, s.ownConn()); err != nil {
					return err
				}
			}
		}
	}
	if !failed && len(p.adoptViews) > 0 {
		return s.objs().AdoptViews(ctx, p.adoptViews)
	}
	return nil
}

// abandon undoes what planning p did for a statement that will not run:
// schema-only forks made for a DROP would otherwise leave the sandbox an
// empty table where production has rows.
func (s *Session) abandon(ctx context.Context, p *Plan) {
	if p == nil || s.sb == nil {
		return
	}
	for _, t := range p.undoOnError {
		if err := s.m.fk.Unfork(ctx, s.sb, t); err != nil {
			s.log.Warn("undo a schema-only fork", zap.String("table", t.String()), zap.Error(err))
		}
	}
}

// touchesNewer reports whether the analysis uses a sandbox table that
// changed after epoch.
func (s *Session) touchesNewer(a *rewrite.Analysis, epoch uint64) bool {
	for _, st := range a.Statements {
		for _, list := range [][]rewrite.Table{st.Reads, st.Writes, st.Names, st.Like} {
			for _, t := range list {
				if e, ok := s.sb.Resolve(s.m.names.Key(t)); ok && e.Epoch > epoch {
					return true
				}
			}
		}
	}
	return false
}

// writesSandbox reports whether an input analyzed as a writes: a
// statement that writes tables, or DDL.
func writesSandbox(a *rewrite.Analysis) bool {
	if a == nil {
		return false
	}
	for _, st := range a.Statements {
		if len(st.Writes) > 0 || st.Class == rewrite.ClassDDL {
			return true
		}
	}
	return false
}

// noteWrites records that p, which has run (with status the server's
// status after it), wrote the sandbox or may have: a failed input too — a
// multi-statement's earlier statements, or a write a table without
// transactions kept in part, stay —, and one calling the sandbox's stored
// routines, whose bodies write what the analysis does not see. A write in
// a transaction is recorded again when the transaction ends: a promote
// that ran meanwhile did not see it and may have found the diff empty.
func (s *Session) noteWrites(ctx context.Context, p *Plan, status uint16) {
	inTrx := status&wire.StatusInTrans != 0
	wrote := p.calls || writesSandbox(p.analysis)
	if wrote || s.txWrote && !inTrx {
		s.noteWrite(ctx)
	}
	s.txWrote = inTrx && (wrote || s.txWrote)
}

// noteWrite records that the sandbox wrote now: in the registry too, the
// first time since it was made or last promoted whole (STATUS and LIST
// show it has unpromoted changes), when a side connection is free at once
// — the statement's session never waits for one: else its next write
// tries again, and the lease renewal (Persist) records it anyway.
func (s *Session) noteWrite(ctx context.Context) {
	if !s.sb.NoteWrite(time.Now().UTC()) {
		return
	}
	if err := s.m.reg.SaveWriteNow(ctx, s.sb); err != nil {
		s.log.Warn("record a sandbox write in the registry", zap.String("sandbox", s.sb.Name), zap.Error(err))
	}
}
