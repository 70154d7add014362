package txn

import (
	"slices"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Outcome is what the upstream answered to an input, as the record keeps
// it (and the session reads it: Execution).
type Outcome struct {
	// Failed: the answer ended in an error, of code Code.
	Failed bool
	Code   uint16
	// OKs are what its OK packets said, in order.
	OKs []wire.OK
	// Payload is the command as sent upstream, to replay it; nil when it
	// cannot be replayed as sent (a cursor's rows come later).
	Payload []byte
	// Prepared is the text a COM_STMT_EXECUTE payload executes.
	Prepared string
	// Prepare: the statement was prepared (COM_STMT_PREPARE), not run.
	Prepare bool
	// Execution: a prepared statement was executed.
	Execution bool
	// Unreplayable: the answer held what a replay cannot repeat (a LOAD
	// DATA LOCAL file).
	Unreplayable bool
	// Part: the statement was one group of an input the session split,
	// which is not recorded for a replay.
	Part bool
}

// record is the open transaction's record: the statements that change
// state, as sent upstream, and what their OK packets said.
type record struct {
	entries []entry
	bytes   int
	// broken: the transaction holds something that cannot be replayed;
	// why says what, when known.
	broken bool
	why    string
}

type entry struct {
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

// maxRecord bounds the bytes of statements kept for replay.
const maxRecord = 1 << 20

func (r *record) reset() { *r = record{} }

// breaks marks the transaction as one that cannot be replayed, for the
// reason why (the first one given is kept).
func (r *record) breaks(why string) {
	if !r.broken {
		r.why = why
	}
	r.broken = true
}

// wrote reports whether the record holds a statement other than BEGIN.
func (r *record) wrote() bool {
	return slices.ContainsFunc(r.entries, func(e entry) bool { return !e.begin })
}

// Record keeps in the record for a replay an input that ran (in: nil for
// one the proxy did not plan), or marks the transaction as one that cannot
// be replayed; open is whether a transaction is open after it. A prepared
// statement is not recorded until it runs; a part of a split input or an
// input marked NoReplay breaks an open transaction's record.
func (t *Transaction) Record(in *Input, o Outcome, open bool) {
	switch {
	case o.Prepare:
	case o.Part && open, in != nil && in.NoReplay && open:
		t.rec.broken = true // parts of a split input, EXECUTE: not recorded for a replay
	case o.Part:
		t.rec.reset()
	default:
		t.rec.record(in, o, open)
	}
}

// record keeps a finished statement when a replay may need it. open is
// whether a transaction is open after it.
func (r *record) record(in *Input, o Outcome, open bool) {
	failed := o.Failed
	switch {
	case !open || o.Code == wire.ErLockDeadlock || in != nil && in.DDL:
		// Ended, rolled back by a deadlock, or committed implicitly by
		// DDL (even DDL that fails).
		r.reset()
		return
	case in != nil && in.End:
		// The transaction ended within the input; what is open now (after
		// COMMIT AND CHAIN, or a later BEGIN) started inside it, and a
		// replay could not tell which of its statements belong to it.
		r.reset()
		r.broken = failed || in.Statements > 1
		return
	case o.Unreplayable:
		r.broken = true
		return
	case failed && (len(o.OKs) > 0 || in != nil && in.Statements > 1):
		r.broken = true // part of a multi-statement input took effect
		return
	case failed:
		return // a failed statement changed nothing
	case in != nil && in.Begin && in.Statements == 1:
		// BEGIN commits any open transaction and starts a new one. It is
		// replayed as the query it is, also when it was prepared: a
		// prepared BEGIN run outside a transaction goes by the proxy's
		// fast path, which keeps no payload.
		r.reset()
		o = Outcome{Payload: append([]byte{wire.ComQuery}, in.SQL...), OKs: o.OKs}
	case in == nil || o.Payload == nil:
		r.broken = true
		return
	case in.Begin:
		r.reset() // BEGIN commits any open transaction and starts a new one
	case in.Settings():
		// A replay sends the recorded statements again under the settings
		// and database of its own time: after a change of sql_mode, the
		// character set or the database, the earlier ones could read
		// differently than they did.
		r.breaks("it changed sql_mode, the character set, the transaction settings or the database, under which a replay " +
			"would run its statements differently")
		return
	case in.SetsVar != "" && r.wrote():
		// The same for any server variable (div_precision_increment,
		// foreign_key_checks, …): a replay runs the writes before the SET
		// under its value.
		r.breaks("it set @@" + in.SetsVar + " after writing, and a replay would run the writes before under the new value")
		return
	case in.SetsInsertID:
		// A replay leaves LAST_INSERT_ID() at its last insert's id, which
		// LAST_INSERT_ID(expr) changed afterwards.
		r.breaks("it set LAST_INSERT_ID(…), which a replay would not set again")
		return
	case !in.Locks && !in.Control:
		// (SAVEPOINT, ROLLBACK TO and RELEASE SAVEPOINT are kept: a
		// replay rolls back to its savepoints as the transaction did.)
		return
	case in.Volatile != "":
		r.breaks("a statement of it could have another effect when run again: " + in.Volatile)
		return
	}
	if r.bytes+len(o.Payload) > maxRecord {
		r.broken = true
		return
	}
	r.entries = append(r.entries, entry{payload: slices.Clone(o.Payload), oks: slices.Clone(o.OKs),
		begin: in.Begin, opensView: in.OpensView, prepared: o.Prepared, writes: in.Writes})
	r.bytes += len(o.Payload)
}
