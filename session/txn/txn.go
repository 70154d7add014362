// Package txn is a session's open transaction as the proxy follows it: how
// it started (isolation level, access mode, snapshot), whether it wrote and
// when it may have taken its read view, and the record of its statements
// for a replay; and the restart and the replay of it past a fork.
//
// A table forked after a transaction took its snapshot is invisible to it
// (MariaDB: 1412 "Table definition has changed"). InnoDB takes a
// transaction's snapshot, its read view, at the transaction's first plain
// read of a table, not at BEGIN: writes and locking reads take none (they
// read the latest rows), so a transaction that has only written can use a
// table forked after it began, and the Transaction tracks when the read
// view may have been taken (the registry's fork epoch then). When a
// statement needs a table forked after that (Transaction.Needs), the
// session ends the transaction and starts a new one before the statement:
// a transaction that has only read is committed and started again
// (Transaction.Restart); one that has written is rolled back, started
// again and its recorded statements replayed, each checked to have the
// same effect (affected rows, insert ids; Transaction.Replay). What cannot
// be replayed gets 1412 and the client retries (ReplayRefused). A replay
// rolls back, so the rows it wrote are free for other connections of a
// shared sandbox until it has written them again: it fails when one of
// them changed them meanwhile. Restarting only where a read view is really
// in the way keeps replays rare (forks come with first writes, and a
// transaction's writes take no read view).
//
// A transaction restarted or replayed starts again as the client started
// it: with the same isolation level — one SET TRANSACTION gave it, or the
// session's when it began, which a SET SESSION inside it does not change —
// and access mode (READ ONLY: a write then fails with 1792, as in the first
// one), and WITH CONSISTENT SNAPSHOT when it had one. MariaDB shows none of
// this for the open transaction, so the Transaction follows it from the
// statements: SET TRANSACTION (pending until a transaction starts with it,
// one ends, or a statement using a table runs in autocommit mode —
// measured on 10.11: one that reads an InnoDB table uses it up, SELECT 1,
// SET and SHOW WARNINGS do not), and BEGIN / START TRANSACTION with its
// words.
//
// The package knows statements only through rewrite's analysis (Facts,
// Input) and the upstream connection only through Conn; it imports
// neither the session nor the proxy.
package txn

import (
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Transaction is one session's open transaction as the proxy follows it,
// with its record for a replay. The zero value is a session with no
// transaction open. It is used by one goroutine.
type Transaction struct {
	open   bool // a transaction is open
	locked bool // the transaction wrote or took locks
	// view: the open transaction may hold an InnoDB read view (its
	// snapshot), taken when the registry's epoch was viewEpoch or later;
	// a table forked after viewEpoch may be invisible to it.
	view      bool
	viewEpoch uint64
	// serializableNext is set by SET TRANSACTION ISOLATION LEVEL
	// SERIALIZABLE, which makes the next transaction lock what it reads;
	// serializableSet marks the statement that set it.
	serializableNext, serializableSet bool
	// next is what SET TRANSACTION gave the next transaction, cur how the
	// open one started.
	next rewrite.TxChars
	cur  start
	// rec records the open transaction's statements, for a replay.
	rec record
}

// Input is one planned input as the transaction reads it; a nil *Input is
// a statement the proxy did not plan (an EXECUTE of a statement it does not
// track), which is assumed to have written and read.
type Input struct {
	// Facts are what its statements tell (Facts.Add).
	Facts
	// SQL is the text sent upstream; a BEGIN's is replayed as a query.
	SQL string
	// Analysis is the input's analysis (nil when it was not analysed).
	Analysis *rewrite.Analysis
	// Statements is how many statements the input holds.
	Statements int
	// Shape is what its statements do to the transaction and the
	// session's settings (Shape.Add).
	Shape
	// Locks marks statements a replay must repeat (writes, locking reads).
	Locks bool
	// NoReplay: the transaction that runs the input cannot be replayed
	// (an EXECUTE, whose USING values may have changed).
	NoReplay bool
}

// Result is how an input ended, and the session's settings then.
type Result struct {
	// Status is the server status after it (SERVER_STATUS_IN_TRANS: a
	// transaction is open).
	Status uint16
	// Failed: its answer ended in an error.
	Failed bool
	// Isolation and ReadOnly are the session's @@tx_isolation and
	// @@tx_read_only as last read: a transaction that starts without
	// words of its own runs with them.
	Isolation, ReadOnly string
	// Since is the epoch a read view the input took is at least as new
	// as: every fork recorded by then was made before it was sent.
	Since uint64
}

// Open reports whether a transaction is open.
func (t *Transaction) Open() bool { return t.open }

// Serializable reports whether the transaction settings make reads lock
// what they read: SET TRANSACTION ISOLATION LEVEL SERIALIZABLE is pending
// (across statements that use no table), or the open transaction started
// SERIALIZABLE. The session's own level is the caller's to add.
func (t *Transaction) Serializable() bool {
	return t.serializableNext || t.next.Isolation == "SERIALIZABLE" || t.open && t.cur.chars.Isolation == "SERIALIZABLE"
}

// Recorded is how many statements the record holds for a replay.
func (t *Transaction) Recorded() int { return len(t.rec.entries) }

// Reset forgets everything: COM_RESET_CONNECTION ended the transaction and
// set the session's settings back.
func (t *Transaction) Reset() { *t = Transaction{} }

// Break marks the open transaction, if any, as one that cannot be
// replayed (COM_STMT_SEND_LONG_DATA's data is not kept).
func (t *Transaction) Break() {
	if t.open {
		t.rec.broken = true
	}
}

// Executed follows the transaction past an input that ran (in: nil for one
// the proxy did not plan): whether one is open, started or ended, whether
// it wrote, when it may have taken its read view, and the characteristics
// SET TRANSACTION and BEGIN give it.
func (t *Transaction) Executed(in *Input, r Result) {
	now := r.Status&wire.StatusInTrans != 0
	switch {
	case in != nil && in.Serializable:
		t.serializableNext, t.serializableSet = true, true
	case t.serializableSet:
		t.serializableSet = false // the SET itself
	case t.serializableNext && !now:
		t.serializableNext = false // the transaction it applied to ended
	}
	// A statement the proxy did not plan may have written, and read:
	// assume it did.
	locks := in == nil || in.Locks
	started := now && (!t.open || in != nil && (in.Begin || in.End))
	t.nextTransaction(in, r.Failed, now, started)
	if started {
		t.began(in, r.Isolation, r.ReadOnly)
	}
	switch {
	case started:
		// A transaction started (BEGIN in an open one, or COMMIT AND
		// CHAIN, ends it and starts another).
		t.locked, t.view = locks, false
	case now && locks:
		t.locked = true
	case !now:
		t.locked, t.view = false, false
	}
	if now && !t.view && (in == nil || in.OpensView) && t.keepsView() {
		t.view, t.viewEpoch = true, r.Since
	}

	t.open = now
}

// Action is what must happen to the open transaction before a statement.
type Action int

const (
	// Nothing: the statement runs in the transaction as it is.
	Nothing Action = iota
	// Restart: commit and start again (it has only read, or DDL commits
	// it anyway).
	Restart
	// Replay: roll back, start again and replay the record (it has
	// written).
	Replay
)

// Needs is what must happen to the open transaction before in: a table
// forked after the transaction's read view was taken is invisible to it
// (MariaDB: 1412 "Table definition has changed", or no rows at all for a
// full scan). touched reports whether in uses a sandbox table that changed
// after an epoch, changed whether any of the sandbox's tables did. A
// transaction that holds no read view yet needs nothing: its next plain
// read takes one that sees every fork made so far. At its first write, a
// transaction whose view is older than a change of the sandbox's tables
// (another connection's forks, while a shared sandbox warms up) is
// restarted too: that costs nothing now, while meeting one of those tables
// after writing would replay its writes.
func (t *Transaction) Needs(in *Input, touched, changed func(epoch uint64) bool) Action {
	switch {
	case !t.open || !t.view:
		return Nothing
	case touched(t.viewEpoch):
	case in.Locks && !t.locked && changed(t.viewEpoch):
		if in.Previous != "" {
			return Nothing // a restart now would change what it reads of the statement before it
		}
		return Restart
	default:
		return Nothing
	}
	switch {
	case in.DDL:
		return Restart // DDL commits the open transaction anyway: commit it first
	case t.locked:
		return Replay
	}
	return Restart
}

// Restarted records that the transaction was started again at epoch;
// replayed says its record was replayed in the new one. The new
// transaction holds a read view only when a replayed statement may have
// taken one (or it started WITH CONSISTENT SNAPSHOT), and then a view that
// sees every fork made by epoch.
func (t *Transaction) Restarted(replayed bool, epoch uint64) {
	t.locked, t.view, t.viewEpoch = replayed, t.cur.chars.Snapshot, epoch
	if replayed {
		for _, e := range t.rec.entries {
			t.view = t.view || e.opensView
		}
	}
	t.view = t.view && t.keepsView()
}

// keepsView says whether the open transaction keeps its read view from one
// statement to the next: not at READ COMMITTED or READ UNCOMMITTED, whose
// statements each read what was committed before them (a table made since
// too: the server refuses it, 1412, only to a view kept; WITH CONSISTENT
// SNAPSHOT is ignored there). An unknown level keeps one.
func (t *Transaction) keepsView() bool {
	switch t.cur.chars.Isolation {
	case "READ COMMITTED", "READ UNCOMMITTED":
		return false
	}
	return true
}

// HasView reports whether the open transaction holds a read view (as far
// as the proxy follows it: Needs restarts only such a one).
func (t *Transaction) HasView() bool { return t.open && t.view }

// Wrote reports whether the open transaction wrote or took locks: a
// restart of it is a replay.
func (t *Transaction) Wrote() bool { return t.open && t.locked }

// Replayable reports whether the open transaction's record can be replayed
// so far (none open: true): not broken, and holding its writes (a
// statement the proxy did not plan counts as one it did not record).
func (t *Transaction) Replayable() bool {
	return !t.open || !t.rec.broken && (!t.locked || len(t.rec.entries) > 0)
}

// Action is what a restart of the open transaction is now: a replay once
// it has written, else a restart.
func (t *Transaction) Again() Action {
	if t.Wrote() {
		return Replay
	}
	return Restart
}

// ReadOnly reports whether the open transaction, or the next one when none
// is open, is READ ONLY (as far as the proxy follows it: BEGIN's and SET
// TRANSACTION's words; sessionReadOnly is the session's @@tx_read_only).
func (t *Transaction) ReadOnly(sessionReadOnly string) bool {
	if t.open {
		return t.cur.chars.Access == "READ ONLY"
	}
	if t.next.Access != "" {
		return t.next.Access == "READ ONLY"
	}
	return accessMode(sessionReadOnly) == "READ ONLY"
}
