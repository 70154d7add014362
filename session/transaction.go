package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// A table forked after a transaction took its snapshot is invisible to it
// (MariaDB: 1412 "Table definition has changed"). InnoDB takes a
// transaction's snapshot, its read view, at the transaction's first plain
// read of a table, not at BEGIN: writes and locking reads take none (they
// read the latest rows), so a transaction that has only written can use a
// table forked after it began, and the session tracks when the read view
// may have been taken (Session.view, viewEpoch). When a statement needs a
// table forked after that, the session ends the transaction and starts a
// new one before the statement (Plan.restart): a transaction that has only
// read is committed and started again; one that has written is rolled
// back, started again and its recorded statements replayed, each checked
// to have the same effect (affected rows, insert ids). What cannot be
// replayed gets 1412 and the client retries. A replay rolls back, so the
// rows it wrote are free for other connections of a shared sandbox until
// it has written them again: it fails when one of them changed them
// meanwhile. Restarting only where a read view is really in the way keeps
// replays rare (forks come with first writes, and a transaction's writes
// take no read view). The record is kept here, beside the transaction
// tracking it depends on.

// opensView reports whether running st (of the input sql) may give the
// open transaction its read view: a plain read of a table may (a SELECT,
// and any statement the proxy does not know to lock what it reads), START
// TRANSACTION WITH CONSISTENT SNAPSHOT does; InnoDB reads the tables of
// INSERT, UPDATE, DELETE, LOAD DATA and DDL with locks, the latest rows,
// without one (ha_innobase::store_lock: a locking read for every statement
// but a plain SELECT).
func opensView(st rewrite.Statement, sql string) bool {
	switch {
	case st.Kind == rewrite.KindBegin:
		return strings.Contains(strings.ToUpper(sql), "CONSISTENT")
	case st.Kind == rewrite.KindCall:
		return true // its body may read
	case st.Class == rewrite.ClassWrite || st.Class == rewrite.ClassDDL:
		return false
	case st.Class == rewrite.ClassUnparseable:
		return true
	}
	return len(st.Reads)+len(st.Writes)+len(st.Names) > 0
}

// viewSince is the epoch a read view taken by the statement just run is at
// least as new as: every fork recorded by then was made before the
// statement was sent, so the view sees it.
func (s *Session) viewSince() uint64 { return max(s.sendEpoch, s.planEpoch) }

// txLog is the open transaction's record: the statements that change
// state, as sent upstream, and what their OK packets said.
type txLog struct {
	entries []txEntry
	bytes   int
	// broken: the transaction holds something that cannot be replayed;
	// why says what, when known.
	broken bool
	why    string
}

type txEntry struct {
	payload []byte
	oks     []wire.OK
	begin   bool // BEGIN / START TRANSACTION: the replay starts with it
	// opensView: replaying it may take a read view (see opensView).
	opensView bool
	// prepared is the (rewritten) text of the statement a
	// COM_STMT_EXECUTE payload executes: the replay prepares it afresh,
	// since the client may have closed it meanwhile.
	prepared string
	// writes are the tables it writes, whose column defaults the replay
	// checks (volatileDefaults).
	writes []rewrite.Table
}

// maxTxLog bounds the bytes of statements kept for replay.
const maxTxLog = 1 << 20

func (t *txLog) reset() { *t = txLog{} }

// breaks marks the transaction as one that cannot be replayed, for the
// reason why (the first one given is kept).
func (t *txLog) breaks(why string) {
	if !t.broken {
		t.why = why
	}
	t.broken = true
}

// wrote reports whether the record holds a statement other than BEGIN.
func (t *txLog) wrote() bool {
	return slices.ContainsFunc(t.entries, func(e txEntry) bool { return !e.begin })
}

// record keeps a finished statement in the transaction log when a replay
// may need it. inTrx is whether a transaction is open after it.
func (t *txLog) record(p *Plan, o *Outcome, inTrx bool) {
	failed := o.Failed
	switch {
	case !inTrx || o.Code == wire.ErLockDeadlock || p != nil && p.ddl:
		// Ended, rolled back by a deadlock, or committed implicitly by
		// DDL (even DDL that fails).
		t.reset()
		return
	case p != nil && p.txEnd:
		// The transaction ended within the input; what is open now (after
		// COMMIT AND CHAIN, or a later BEGIN) started inside it, and a
		// replay could not tell which of its statements belong to it.
		t.reset()
		t.broken = failed || p.statements > 1
		return
	case o.Unreplayable:
		t.broken = true
		return
	case failed && (len(o.OKs) > 0 || p != nil && p.statements > 1):
		t.broken = true // part of a multi-statement input took effect
		return
	case failed:
		return // a failed statement changed nothing
	case p != nil && p.begin && p.statements == 1:
		// BEGIN commits any open transaction and starts a new one. It is
		// replayed as the query it is, also when it was prepared: a
		// prepared BEGIN run outside a transaction goes by the proxy's
		// fast path, which keeps no payload.
		t.reset()
		o = &Outcome{Payload: append([]byte{wire.ComQuery}, p.SQL...), OKs: o.OKs}
	case p == nil || o.Payload == nil:
		t.broken = true
		return
	case p.begin:
		t.reset() // BEGIN commits any open transaction and starts a new one
	case p.txControl:
		t.broken = true // savepoints: not replayed
		return
	case p.readVars || p.useDB:
		// A replay sends the recorded statements again under the settings
		// and database of its own time: after a change of sql_mode, the
		// character set or the database, the earlier ones could read
		// differently than they did.
		t.breaks("it changed sql_mode, the character set, the transaction settings or the database, under which a replay " +
			"would run its statements differently")
		return
	case p.setsVar != "" && t.wrote():
		// The same for any server variable (div_precision_increment,
		// foreign_key_checks, …): a replay runs the writes before the SET
		// under its value.
		t.breaks("it set @@" + p.setsVar + " after writing, and a replay would run the writes before under the new value")
		return
	case p.setsInsertID:
		// A replay leaves LAST_INSERT_ID() at its last insert's id, which
		// LAST_INSERT_ID(expr) changed afterwards.
		t.breaks("it set LAST_INSERT_ID(…), which a replay would not set again")
		return
	case !p.locks:
		return
	case p.volatile != "":
		t.breaks("a statement of it could have another effect when run again: " + p.volatile)
		return
	}
	if t.bytes+len(o.Payload) > maxTxLog {
		t.broken = true
		return
	}
	t.entries = append(t.entries, txEntry{payload: slices.Clone(o.Payload), oks: slices.Clone(o.OKs),
		begin: p.begin, opensView: p.opensView, prepared: o.Prepared, writes: p.writes})
	t.bytes += len(o.Payload)
}

// restartTransaction ends the client's transaction, which has only read,
// and starts a new one, so its snapshot includes tables just forked.
func (s *Session) restartTransaction(ctx context.Context) error {
	autocommit := s.up.Status()&wire.StatusAutocommit != 0
	if _, err := s.up.Query(ctx, "COMMIT"); err != nil {
		return err
	}
	if err := s.startAgain(ctx, autocommit || s.cur.explicit); err != nil {
		return err
	}
	s.restarted(false)
	s.tx.reset()
	s.log.Debug("transaction restarted after a fork")
	return nil
}

// replayTransaction rolls the client's transaction back, starts a new one
// and replays its recorded statements, checking each has the same effect.
// It returns why it could not ("" on success; the transaction is then
// rolled back) or an error that broke the connection.
func (s *Session) replayTransaction(ctx context.Context) (string, error) {
	t := &s.tx
	switch {
	case t.broken && t.why != "":
		return t.why, nil
	case t.broken || len(t.entries) == 0:
		return "its statements were not all recorded for replay", nil
	}
	if why, err := s.volatileDefaults(ctx); err != nil || why != "" {
		return why, err
	}
	autocommit := s.up.Status()&wire.StatusAutocommit != 0
	if _, err := s.up.Query(ctx, "ROLLBACK"); err != nil {
		return s.replayFailed(ctx, "rollback failed", err, false)
	}
	// The recorded BEGIN, when there is one, is sent again as the client
	// wrote it, after the settings it started with.
	if err := s.startAgain(ctx, !t.entries[0].begin && (autocommit || s.cur.explicit)); err != nil {
		return s.replayFailed(ctx, "restart failed", err, false)
	}
	for _, e := range t.entries {
		if len(e.oks) == 1 && e.oks[0].InsertID != 0 {
			// AUTO_INCREMENT values are not given back by a rollback: ask
			// for the ones the client already saw.
			if _, err := s.up.Query(ctx, fmt.Sprintf("SET insert_id = %d", e.oks[0].InsertID)); err != nil {
				return s.replayFailed(ctx, "replaying it failed", err, true)
			}
		}
		oks, err := s.up.Resend(ctx, e.payload, e.prepared)
		if err != nil {
			return s.replayFailed(ctx, "replaying it failed", err, true)
		}
		if !sameEffect(oks, e.oks) {
			return s.replayFailed(ctx, "replaying it failed", differentEffect{now: oks, then: e.oks}, true)
		}
	}
	s.restarted(true)
	s.log.Debug("transaction replayed after a fork", zap.Int("statements", len(t.entries)))
	return "", nil
}

// replayFailed says why a replay stopped, rolling back what it did when
// rollback is set; an error that is not the server's breaks the
// connection and is returned as such.
func (s *Session) replayFailed(ctx context.Context, what string, err error, rollback bool) (string, error) {
	if !isServerError(err) {
		return "", err
	}
	if rollback {
		if _, rerr := s.up.Query(ctx, "ROLLBACK"); rerr != nil && !isServerError(rerr) {
			return "", rerr
		}
	}
	return what + ": " + err.Error(), nil
}

// differentEffect is a replayed statement that did not do what it did the
// first time.
type differentEffect struct{ now, then []wire.OK }

func (d differentEffect) Error() string {
	return fmt.Sprintf("a statement had a different effect the second time (affected rows and insert ids %v, first time %v)",
		effects(d.now), effects(d.then))
}

// ServerError: the connection is as usable as after the server's own
// error.
func (differentEffect) ServerError() bool { return true }

// isServerError reports whether err is an answer of the server, after
// which the connection is still usable.
func isServerError(err error) bool {
	var se interface{ ServerError() bool }
	return errors.As(err, &se) && se.ServerError()
}

// sameEffect compares what two runs' OK packets say they did.
func sameEffect(a, b []wire.OK) bool {
	return slices.EqualFunc(a, b, func(x, y wire.OK) bool { return x.Affected == y.Affected && x.InsertID == y.InsertID })
}

// effects lists affected rows and insert ids for messages.
func effects(oks []wire.OK) [][2]uint64 {
	out := make([][2]uint64, len(oks))
	for i, o := range oks {
		out[i] = [2]uint64{o.Affected, o.InsertID}
	}
	return out
}

// restarted records that the session restarted the client's transaction;
// replayed says its writes were replayed in the new one. The new
// transaction holds a read view only when a replayed statement may have
// taken one, and then a view that sees every fork made so far.
func (s *Session) restarted(replayed bool) {
	s.trxLocked, s.view, s.viewEpoch = replayed, s.cur.chars.Snapshot, s.m.reg.Epoch()
	if replayed {
		for _, e := range s.tx.entries {
			s.view = s.view || e.opensView
		}
	}
}

// replayRefused is the error for a transaction that has written and now
// needs a table forked after it began, when the session cannot replay it.
func (s *Session) replayRefused(why string) error {
	return rewrite.Refuse(wire.ErTableDefChanged, "Table definition has changed, please retry transaction: a table this statement "+
		"uses was forked into sandbox %q after the transaction started, and the transaction has already written (%s); "+
		"ROLLBACK and run the transaction again (the fork now exists, so the retry works)", s.SandboxName(), why)
}

// volatileDefaults says why replaying the record would write other values
// than the first run did through the column defaults of the tables it
// wrote ("" when it would not): a default or ON UPDATE that reads the
// clock, a sequence or chance (rewrite.Statement.Volatile of the
// expression), or one the proxy cannot read.
func (s *Session) volatileDefaults(ctx context.Context) (string, error) {
	var conds []string
	seen := map[rewrite.Table]bool{}
	for _, e := range s.tx.entries {
		for _, t := range e.writes {
			phys := t
			if s.sb != nil {
				if en, ok := s.sb.Resolve(s.m.names.Key(t)); ok {
					phys = en.Phys
				}
			}
			if !seen[phys] {
				seen[phys] = true
				conds = append(conds, "(TABLE_SCHEMA = "+quote.String(phys.DB)+" AND TABLE_NAME = "+quote.String(phys.Name)+")")
			}
		}
	}
	if len(conds) == 0 {
		return "", nil
	}
	r, err := s.up.Query(ctx, "SELECT TABLE_NAME, COLUMN_NAME, COLUMN_DEFAULT, EXTRA FROM information_schema.COLUMNS WHERE ("+
		strings.Join(conds, " OR ")+") AND (COLUMN_DEFAULT IS NOT NULL OR EXTRA LIKE '%on update%')")
	if err != nil {
		return s.replayFailed(ctx, "its tables' column defaults could not be read", err, false)
	}
	for _, row := range r.Rows {
		if len(row) != 4 || row[0] == nil || row[1] == nil {
			continue
		}
		if why := s.volatileDefault(row[2], row[3]); why != "" {
			// The default names the sandbox's copies: told back in logical names.
			return s.unmap(fmt.Sprintf("it wrote %s, whose column %s %s", quote.Ident(*row[0]), quote.Ident(*row[1]), why)), nil
		}
	}
	return "", nil
}

// volatileDefault says why a column's default (def) or its EXTRA (ON
// UPDATE) gives a second write another value ("" when it would not).
func (s *Session) volatileDefault(def, extra *string) string {
	if extra != nil && strings.Contains(strings.ToLower(*extra), "on update") {
		return "takes the clock on update (" + *extra + "), which a replay would read later"
	}
	if def == nil || *def == "NULL" {
		return ""
	}
	a := s.m.engine.Analyze("SELECT "+*def, rewrite.Options{Server: s.m.server})
	if len(a.Statements) != 1 || a.Statements[0].Class == rewrite.ClassUnparseable {
		return "has a default the proxy cannot read (" + *def + ")"
	}
	if why := a.Statements[0].Volatile(); why != "" {
		return "defaults to " + *def + ": " + why
	}
	return ""
}

// restartRefused is the error for a transaction the session cannot end and
// start again before a statement that needs a table forked after the
// transaction took its snapshot (why).
func (s *Session) restartRefused(why string) error {
	return rewrite.Refuse(wire.ErTableDefChanged, "Table definition has changed, please retry transaction: a table this statement "+
		"uses was forked into sandbox %q after the transaction started, and the proxy cannot start the transaction again "+
		"before it unseen (%s); ROLLBACK and run the transaction again (the fork now exists, so the retry works)", s.SandboxName(), why)
}
