package txn

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

const (
	inTrans    = wire.StatusInTrans
	autocommit = wire.StatusAutocommit
)

// analyze reads sql as the session does (an engine of its own: the
// tests share no state).
func analyze(sql string, opts rewrite.Options) *rewrite.Analysis {
	return rewrite.NewEngine(1).Analyze(sql, opts)
}

// in is the input sql as the session plans it: BEGIN, the end of a
// transaction, DDL and settings from the analysis, Locks for statements
// that write.
func in(sql string) *Input {
	a := analyze(sql, rewrite.Options{DB: "app"})
	p := &Input{SQL: sql, Analysis: a, Statements: len(a.Statements)}
	for i, st := range a.Statements {
		p.Shape.Add(i, st)
		p.Locks = p.Locks || len(st.Writes) > 0 || len(st.Locked) > 0
		p.Facts.Add(st, sql)
	}
	return p
}

// step is one input run, with the server status after it.
type step struct {
	sql    string // "" : a statement the proxy did not plan
	status uint16
	failed bool
}

// run feeds the steps to t as the session does after each input: the
// record first, then the tracking; each at epoch 10, 20, ….
func run(t *Transaction, steps ...step) {
	for i, s := range steps {
		var p *Input
		if s.sql != "" {
			p = in(s.sql)
		}
		o := Outcome{Failed: s.failed, OKs: []wire.OK{{}}, Payload: append([]byte{wire.ComQuery}, s.sql...)}
		switch {
		case s.failed:
			o.OKs = nil
		case p != nil && p.Locks && !p.Begin:
			o.OKs = []wire.OK{{Affected: 1}}
		}
		t.Record(p, o, s.status&inTrans != 0)
		t.Executed(p, Result{Status: s.status, Failed: s.failed, Isolation: "REPEATABLE-READ", ReadOnly: "0",
			Since: uint64(10 * (i + 1))})
	}
}

// TestExecuted follows the tracking transition by transition: whether a
// transaction is open, whether it wrote, and when it took its read view.
func TestExecuted(t *testing.T) {
	cases := []struct {
		name             string
		steps            []step
		open, locked     bool
		view             bool
		viewEpoch        uint64
		serializableNext bool
	}{
		{name: "autocommit read", steps: []step{{"SELECT * FROM t", autocommit, false}}},
		{name: "begin", steps: []step{{"BEGIN", inTrans, false}}, open: true},
		{name: "begin with snapshot", steps: []step{{"START TRANSACTION WITH CONSISTENT SNAPSHOT", inTrans, false}}, open: true,
			view: true, viewEpoch: 10},
		{name: "first read takes the view", steps: []step{{"BEGIN", inTrans, false}, {"SELECT * FROM t", inTrans, false},
			{"SELECT * FROM u", inTrans, false}}, open: true, view: true, viewEpoch: 20},
		{name: "a write takes none", steps: []step{{"BEGIN", inTrans, false}, {"UPDATE t SET a = 1", inTrans, false}},
			open: true, locked: true},
		{name: "write then read", steps: []step{{"BEGIN", inTrans, false}, {"UPDATE t SET a = 1", inTrans, false},
			{"SELECT * FROM t", inTrans, false}}, open: true, locked: true, view: true, viewEpoch: 30},
		{name: "commit ends it", steps: []step{{"BEGIN", inTrans, false}, {"UPDATE t SET a = 1", inTrans, false},
			{"SELECT * FROM t", inTrans, false}, {"COMMIT", autocommit, false}}},
		{name: "begin in an open one starts anew", steps: []step{{"BEGIN", inTrans, false}, {"UPDATE t SET a = 1", inTrans, false},
			{"SELECT * FROM t", inTrans, false}, {"BEGIN", inTrans, false}}, open: true},
		{name: "autocommit off: a write starts one", steps: []step{{"UPDATE t SET a = 1", inTrans, false}}, open: true, locked: true},
		{name: "unplanned: assumed to write and read", steps: []step{{"BEGIN", inTrans, false}, {"", inTrans, false}},
			open: true, locked: true, view: true, viewEpoch: 20},
		{name: "SET TRANSACTION SERIALIZABLE pending", steps: []step{{"SET TRANSACTION ISOLATION LEVEL SERIALIZABLE", autocommit, false},
			{"SELECT 1", autocommit, false}}, serializableNext: true},
		{name: "SERIALIZABLE used up", steps: []step{{"SET TRANSACTION ISOLATION LEVEL SERIALIZABLE", autocommit, false},
			{"BEGIN", inTrans, false}, {"COMMIT", autocommit, false}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var tx Transaction
			run(&tx, c.steps...)
			if tx.Open() != c.open || tx.locked != c.locked || tx.view != c.view || c.view && tx.viewEpoch != c.viewEpoch ||
				tx.serializableNext != c.serializableNext {
				t.Errorf("open %v locked %v view %v@%d serializable %v; want %v %v %v@%d %v", tx.Open(), tx.locked, tx.view,
					tx.viewEpoch, tx.serializableNext, c.open, c.locked, c.view, c.viewEpoch, c.serializableNext)
			}
		})
	}
}

// TestNeeds: what the open transaction needs before a statement, from its
// state and what changed since its read view.
func TestNeeds(t *testing.T) {
	cases := []struct {
		name             string
		steps            []step
		sql              string
		touched, changed bool
		want             Action
		wantEpochAsked   uint64 // the read view's epoch the callbacks got (0: not asked)
	}{
		{name: "no transaction", sql: "SELECT * FROM t", touched: true, want: Nothing},
		{name: "no read view yet", steps: []step{{"BEGIN", inTrans, false}}, sql: "SELECT * FROM t", touched: true, want: Nothing},
		{name: "read-only meets a fork", steps: []step{{"BEGIN", inTrans, false}, {"SELECT * FROM t", inTrans, false}},
			sql: "SELECT * FROM u", touched: true, want: Restart, wantEpochAsked: 20},
		{name: "written meets a fork", steps: []step{{"BEGIN", inTrans, false}, {"SELECT * FROM t", inTrans, false},
			{"UPDATE t SET a = 1", inTrans, false}}, sql: "UPDATE u SET b = 1", touched: true, want: Replay, wantEpochAsked: 20},
		{name: "DDL commits anyway", steps: []step{{"BEGIN", inTrans, false}, {"SELECT * FROM t", inTrans, false},
			{"UPDATE t SET a = 1", inTrans, false}}, sql: "ALTER TABLE u ADD c INT", touched: true, want: Restart, wantEpochAsked: 20},
		{name: "nothing changed", steps: []step{{"BEGIN", inTrans, false}, {"SELECT * FROM t", inTrans, false}},
			sql: "UPDATE t SET a = 1", want: Nothing, wantEpochAsked: 20},
		{name: "first write after another fork", steps: []step{{"BEGIN", inTrans, false}, {"SELECT * FROM t", inTrans, false}},
			sql: "UPDATE t SET a = 1", changed: true, want: Restart, wantEpochAsked: 20},
		{name: "first write reading ROW_COUNT()", steps: []step{{"BEGIN", inTrans, false}, {"SELECT * FROM t", inTrans, false}},
			sql: "UPDATE t SET a = ROW_COUNT()", changed: true, want: Nothing, wantEpochAsked: 20},
		{name: "a later write after another fork", steps: []step{{"BEGIN", inTrans, false}, {"SELECT * FROM t", inTrans, false},
			{"UPDATE t SET a = 1", inTrans, false}}, sql: "UPDATE t SET a = 2", changed: true, want: Nothing, wantEpochAsked: 20},
		{name: "a read after another fork", steps: []step{{"BEGIN", inTrans, false}, {"SELECT * FROM t", inTrans, false}},
			sql: "SELECT * FROM t", changed: true, want: Nothing, wantEpochAsked: 20},
		{name: "READ COMMITTED keeps no view", steps: []step{{"SET TRANSACTION ISOLATION LEVEL READ COMMITTED", autocommit, false},
			{"BEGIN", inTrans, false}, {"SELECT * FROM t", inTrans, false}, {"UPDATE t SET a = 1", inTrans, false}},
			sql: "UPDATE u SET b = 1", touched: true, want: Nothing},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var tx Transaction
			run(&tx, c.steps...)
			var asked uint64
			touched := func(e uint64) bool { asked = e; return c.touched }
			changed := func(e uint64) bool { asked = e; return c.changed }
			if got := tx.Needs(in(c.sql), touched, changed); got != c.want || asked != c.wantEpochAsked {
				t.Errorf("Needs = %v (view epoch asked %d), want %v (%d)", got, asked, c.want, c.wantEpochAsked)
			}
		})
	}
}

// TestCharacteristics: how the open transaction started, from its BEGIN,
// a SET TRANSACTION before it (pending across statements that use no
// table, used up by an autocommit statement that uses one) or the
// session's settings; a chained one keeps those of the one before.
func TestCharacteristics(t *testing.T) {
	cases := []struct {
		stmts    []string // each run with autocommit on; the last opens the transaction
		want     rewrite.TxChars
		explicit bool
	}{
		{[]string{"BEGIN"}, rewrite.TxChars{Isolation: "REPEATABLE READ", Access: "READ WRITE"}, true},
		{[]string{"START TRANSACTION READ ONLY"}, rewrite.TxChars{Isolation: "REPEATABLE READ", Access: "READ ONLY"}, true},
		{[]string{"START TRANSACTION WITH CONSISTENT SNAPSHOT"},
			rewrite.TxChars{Isolation: "REPEATABLE READ", Access: "READ WRITE", Snapshot: true}, true},
		{[]string{"SET TRANSACTION ISOLATION LEVEL READ COMMITTED", "BEGIN"},
			rewrite.TxChars{Isolation: "READ COMMITTED", Access: "READ WRITE"}, true},
		{[]string{"SET TRANSACTION READ ONLY", "SELECT 1", "SET @x = 1", "START TRANSACTION"},
			rewrite.TxChars{Isolation: "REPEATABLE READ", Access: "READ ONLY"}, true},
		{[]string{"SET TRANSACTION READ ONLY", "SELECT * FROM u", "START TRANSACTION"},
			rewrite.TxChars{Isolation: "REPEATABLE READ", Access: "READ WRITE"}, true},
		{[]string{"SET TRANSACTION READ ONLY", "UPDATE u SET a = 2", "START TRANSACTION"},
			rewrite.TxChars{Isolation: "REPEATABLE READ", Access: "READ WRITE"}, true},
		{[]string{"SET TRANSACTION ISOLATION LEVEL SERIALIZABLE", "UPDATE u SET a = 2"},
			rewrite.TxChars{Isolation: "SERIALIZABLE", Access: "READ WRITE"}, false},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.stmts, "; "), func(t *testing.T) {
			var tx Transaction
			for _, q := range c.stmts[:len(c.stmts)-1] {
				run(&tx, step{q, autocommit, false})
			}
			run(&tx, step{c.stmts[len(c.stmts)-1], inTrans, false})
			if tx.cur.chars != c.want || tx.cur.explicit != c.explicit {
				t.Errorf("started with %+v (explicit %v), want %+v (%v)", tx.cur.chars, tx.cur.explicit, c.want, c.explicit)
			}
		})
	}
	t.Run("chained", func(t *testing.T) {
		var tx Transaction
		run(&tx, step{"START TRANSACTION READ ONLY, WITH CONSISTENT SNAPSHOT", inTrans, false}, step{"COMMIT AND CHAIN", inTrans, false})
		if want := (rewrite.TxChars{Isolation: "REPEATABLE READ", Access: "READ ONLY"}); tx.cur.chars != want {
			t.Errorf("chained transaction %+v, want %+v", tx.cur.chars, want)
		}
	})
	t.Run("failed SET TRANSACTION", func(t *testing.T) {
		var tx Transaction
		run(&tx, step{"SET TRANSACTION READ ONLY", autocommit, true}, step{"BEGIN", inTrans, false})
		if tx.cur.chars.Access != "READ WRITE" {
			t.Errorf("a failed SET TRANSACTION gave %+v", tx.cur.chars)
		}
	})
}

// TestSerializable: SET TRANSACTION ISOLATION LEVEL SERIALIZABLE makes
// reads lock until the transaction it applies to ends.
func TestSerializable(t *testing.T) {
	cases := []struct {
		stmts []step
		want  bool
	}{
		{nil, false},
		{[]step{{"SET TRANSACTION ISOLATION LEVEL SERIALIZABLE", autocommit, false}}, true},
		{[]step{{"SET TRANSACTION ISOLATION LEVEL SERIALIZABLE", autocommit, false}, {"SELECT 1", autocommit, false}}, true},
		{[]step{{"SET TRANSACTION ISOLATION LEVEL SERIALIZABLE", autocommit, false}, {"BEGIN", inTrans, false}}, true},
		{[]step{{"SET TRANSACTION ISOLATION LEVEL SERIALIZABLE", autocommit, false}, {"BEGIN", inTrans, false},
			{"COMMIT", autocommit, false}}, false},
		{[]step{{"SET TRANSACTION ISOLATION LEVEL SERIALIZABLE", autocommit, false}, {"SELECT * FROM t", autocommit, false}}, true},
		{[]step{{"SET TRANSACTION ISOLATION LEVEL SERIALIZABLE", autocommit, false}, {"SELECT * FROM t", autocommit, false},
			{"SELECT 1", autocommit, false}}, false},
	}
	for i, c := range cases {
		var tx Transaction
		run(&tx, c.stmts...)
		if got := tx.Serializable(); got != c.want {
			t.Errorf("case %d: Serializable() = %v, want %v", i, got, c.want)
		}
	}
}

// TestReset: COM_RESET_CONNECTION forgets the transaction, its record and
// what SET TRANSACTION left pending.
func TestReset(t *testing.T) {
	var tx Transaction
	run(&tx, step{"SET TRANSACTION ISOLATION LEVEL SERIALIZABLE", autocommit, false}, step{"BEGIN", inTrans, false},
		step{"UPDATE t SET a = 1", inTrans, false})
	tx.Reset()
	if tx.Open() || tx.Serializable() || tx.Recorded() != 0 || tx.locked || tx.view || tx.next != (rewrite.TxChars{}) ||
		tx.cur != (start{}) || tx.rec.broken {
		t.Errorf("after Reset: %+v", tx)
	}
}

func TestIsolationAndAccess(t *testing.T) {
	for _, c := range []struct{ in, iso, access string }{
		{"REPEATABLE-READ", "REPEATABLE READ", ""},
		{" read_committed ", "READ COMMITTED", ""},
		{"SERIALIZABLE", "SERIALIZABLE", ""},
		{"READ-UNCOMMITTED", "READ UNCOMMITTED", ""},
		{"SNAPSHOT", "", ""},
		{"1", "", "READ ONLY"},
		{"on", "", "READ ONLY"},
		{"0", "", "READ WRITE"},
		{"OFF", "", "READ WRITE"},
	} {
		if got := isolationLevel(c.in); got != c.iso {
			t.Errorf("isolationLevel(%q) = %q, want %q", c.in, got, c.iso)
		}
		if got := accessMode(c.in); got != c.access {
			t.Errorf("accessMode(%q) = %q, want %q", c.in, got, c.access)
		}
	}
}

// TestFacts: what Add reads of an input's statements.
func TestFacts(t *testing.T) {
	cases := []struct {
		sql                     string
		opensView, serializable bool
		volatile, setsVar, prev string
		insertID, access        bool
		writes                  int
		start, next             bool
	}{
		{sql: "SELECT * FROM t", opensView: true},
		{sql: "SELECT 1"},
		{sql: "UPDATE t SET a = 1", writes: 1},
		{sql: "UPDATE t SET a = RAND()", writes: 1, volatile: "RAND()"},
		{sql: "CALL p()", opensView: true, volatile: "procedure"},
		{sql: "BEGIN", start: true},
		{sql: "START TRANSACTION WITH CONSISTENT SNAPSHOT", opensView: true, start: true},
		{sql: "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE", next: true, serializable: true},
		{sql: "SET div_precision_increment = 8", setsVar: "div_precision_increment"},
		{sql: "SET innodb_lock_wait_timeout = 8"},
		{sql: "SET SESSION TRANSACTION READ ONLY", access: true, setsVar: "tx_read_only"},
		{sql: "SELECT ROW_COUNT(), a FROM t", opensView: true, prev: "ROW_COUNT()", volatile: "ROW_COUNT()"},
		{sql: "SELECT LAST_INSERT_ID(7)", insertID: true, volatile: "LAST_INSERT_ID"},
		{sql: "CREATE TABLE n (id INT)", writes: 1},
	}
	for _, c := range cases {
		t.Run(c.sql, func(t *testing.T) {
			a := analyze(c.sql, rewrite.Options{DB: "app"})
			var f Facts
			access := false
			for _, st := range a.Statements {
				f.Add(st, c.sql)
				access = access || SetsAccess(st)
			}
			if f.OpensView != c.opensView || f.Serializable != c.serializable || f.SetsVar != c.setsVar ||
				!strings.Contains(f.Previous, c.prev) || (c.prev == "") != (f.Previous == "") ||
				!strings.Contains(f.Volatile, c.volatile) || (c.volatile == "") != (f.Volatile == "") ||
				f.SetsInsertID != c.insertID || access != c.access || len(f.Writes) != c.writes ||
				(f.Start != nil) != c.start || (f.Next != nil) != c.next {
				t.Errorf("facts %+v (sets access %v)", f, access)
			}
		})
	}
}

// TestRecord: what the record keeps of each input, and what makes the
// transaction one that cannot be replayed.
func TestRecord(t *testing.T) {
	type rec struct {
		in   *Input
		o    Outcome
		open bool
	}
	ok := func(sql string) rec {
		return rec{in(sql), Outcome{OKs: []wire.OK{{Affected: 1}}, Payload: append([]byte{wire.ComQuery}, sql...)}, true}
	}
	begin := ok("BEGIN")
	upd := ok("UPDATE t SET a = 1")
	with := func(r rec, f func(*rec)) rec {
		cp := *r.in
		r.in = &cp
		f(&r)
		return r
	}
	cases := []struct {
		name    string
		recs    []rec
		entries int
		broken  bool
		why     string
	}{
		{name: "begin and a write", recs: []rec{begin, upd}, entries: 2},
		{name: "reads are not kept", recs: []rec{begin, ok("SELECT * FROM t"), upd}, entries: 2},
		{name: "prepared BEGIN by the fast path", recs: []rec{with(begin, func(r *rec) { r.o.Payload = nil }), upd}, entries: 2},
		{name: "ended", recs: []rec{begin, upd, with(ok("COMMIT"), func(r *rec) { r.open = false })}},
		{name: "deadlock", recs: []rec{begin, with(upd, func(r *rec) { r.o.Failed, r.o.Code, r.o.OKs = true, wire.ErLockDeadlock, nil })}},
		{name: "DDL commits", recs: []rec{begin, upd, ok("CREATE TABLE n (id INT)")}},
		{name: "COMMIT AND CHAIN", recs: []rec{begin, upd, ok("COMMIT AND CHAIN")}},
		{name: "ended in a multi-statement input", recs: []rec{begin, ok("COMMIT; BEGIN")}, broken: true},
		{name: "failed write", recs: []rec{begin, with(upd, func(r *rec) { r.o.Failed, r.o.OKs = true, nil })}, entries: 1},
		{name: "failed multi-statement input", recs: []rec{begin, with(ok("UPDATE t SET a = 1; UPDATE t SET a = 2"),
			func(r *rec) { r.o.Failed = true })}, entries: 1, broken: true},
		{name: "LOAD DATA LOCAL", recs: []rec{begin, with(upd, func(r *rec) { r.o.Unreplayable = true })}, entries: 1, broken: true},
		{name: "unplanned", recs: []rec{begin, {nil, Outcome{Payload: []byte{wire.ComQuery}}, true}}, entries: 1, broken: true},
		{name: "no payload", recs: []rec{begin, with(upd, func(r *rec) { r.o.Payload = nil })}, entries: 1, broken: true},
		{name: "savepoints", recs: []rec{begin, upd, with(ok("SAVEPOINT s"), func(r *rec) { r.in.Control = true }), upd,
			with(ok("ROLLBACK TO SAVEPOINT s"), func(r *rec) { r.in.Control = true })}, entries: 5},
		{name: "USE", recs: []rec{begin, upd, ok("USE other")}, entries: 2, broken: true, why: "changed sql_mode"},
		{name: "server variable after writing", recs: []rec{begin, upd, ok("SET div_precision_increment = 8")}, entries: 2,
			broken: true, why: "@@div_precision_increment after writing"},
		{name: "server variable before writing", recs: []rec{begin, ok("SET div_precision_increment = 8"), upd}, entries: 2},
		{name: "LAST_INSERT_ID(expr)", recs: []rec{begin, upd, ok("SELECT LAST_INSERT_ID(7)")}, entries: 2, broken: true,
			why: "LAST_INSERT_ID(…)"},
		{name: "volatile write", recs: []rec{begin, ok("UPDATE t SET a = RAND()")}, entries: 1, broken: true, why: "RAND()"},
		{name: "first reason kept", recs: []rec{begin, ok("UPDATE t SET a = RAND()"), ok("USE other")}, entries: 1, broken: true,
			why: "RAND()"},
		{name: "too big", recs: []rec{begin, with(upd, func(r *rec) { r.o.Payload = make([]byte, maxRecord+1) })}, entries: 1,
			broken: true},
		{name: "prepared, not run", recs: []rec{begin, with(upd, func(r *rec) { r.o.Prepare = true })}, entries: 1},
		{name: "part of a split input", recs: []rec{begin, with(upd, func(r *rec) { r.o.Part = true })}, entries: 1, broken: true},
		{name: "part of a split input, ended", recs: []rec{begin, with(upd, func(r *rec) { r.o.Part, r.open = true, false })}},
		{name: "EXECUTE", recs: []rec{begin, with(upd, func(r *rec) { r.in.NoReplay = true })}, entries: 1, broken: true},
		{name: "BEGIN starts anew", recs: []rec{begin, upd, ok("SAVEPOINT s"), with(begin, func(r *rec) { r.in.Statements = 2 })}, entries: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var tx Transaction
			for _, r := range c.recs {
				tx.Record(r.in, r.o, r.open)
			}
			if tx.Recorded() != c.entries || tx.rec.broken != c.broken || !strings.Contains(tx.rec.why, c.why) {
				t.Errorf("record of %d statements, broken %v (%q); want %d, %v (%q)", tx.Recorded(), tx.rec.broken, tx.rec.why,
					c.entries, c.broken, c.why)
			}
		})
	}
}

// TestBreak: only an open transaction is marked.
func TestBreak(t *testing.T) {
	var tx Transaction
	tx.Break()
	if tx.rec.broken {
		t.Error("Break outside a transaction marked the record")
	}
	run(&tx, step{"BEGIN", inTrans, false})
	tx.Break()
	if !tx.rec.broken {
		t.Error("Break in a transaction left the record replayable")
	}
}

// serverErr is an error of the server: the connection stays usable.
type serverErr string

func (e serverErr) Error() string   { return string(e) }
func (serverErr) ServerError() bool { return true }

// conn is a fake upstream connection: it records what it is sent and
// fails the queries and resends it is told to.
type conn struct {
	status  uint16
	sent    []string
	fail    map[string]error // by query prefix; "ROLLBACK#2": the second ROLLBACK
	effects map[string][]wire.OK
	rows    [][]*string // of the information_schema.COLUMNS query
}

func (c *conn) Query(_ context.Context, sql string) ([][]*string, error) {
	c.sent = append(c.sent, sql)
	if sql == "ROLLBACK" && slices.Index(c.sent, "ROLLBACK") < len(c.sent)-1 && c.fail["ROLLBACK#2"] != nil {
		return nil, c.fail["ROLLBACK#2"]
	}
	for p, err := range c.fail {
		if strings.HasPrefix(sql, p) {
			return nil, err
		}
	}
	if strings.Contains(sql, "information_schema.COLUMNS") {
		return c.rows, nil
	}
	return nil, nil
}

func (c *conn) Resend(_ context.Context, payload []byte, prepared string) ([]wire.OK, error) {
	q := string(payload[1:])
	c.sent = append(c.sent, "resend "+q+prepared)
	if err, ok := c.fail["resend "+q]; ok {
		return nil, err
	}
	if oks, ok := c.effects[q]; ok {
		return oks, nil
	}
	if strings.HasPrefix(q, "BEGIN") {
		return []wire.OK{{}}, nil
	}
	return []wire.OK{{Affected: 1}}, nil
}

func (c *conn) Status() uint16 { return c.status }

// sandbox is a fake sandbox: the tables are in db "sb_app"; epoch is now.
type sandbox struct{ epoch uint64 }

func (s sandbox) Epoch() uint64 { return s.epoch }
func (sandbox) Physical(t rewrite.Table) rewrite.Table {
	t.DB = "sb_" + t.DB
	return t
}
func (sandbox) Logical(msg string) string   { return strings.ReplaceAll(msg, "sb_", "") }
func (sandbox) Again(context.Context) error { return nil }
func (sandbox) Analyze(sql string) *rewrite.Analysis {
	return analyze(sql, rewrite.Options{})
}

// TestRestart: a read-only transaction is committed and started again
// with its characteristics; its record is forgotten and its read view is
// that of the restart.
func TestRestart(t *testing.T) {
	cases := []struct {
		name   string
		steps  []step
		status uint16
		fail   map[string]error
		want   []string
		err    bool
		view   bool
	}{
		{name: "begin", steps: []step{{"BEGIN", inTrans | autocommit, false}}, status: autocommit,
			want: []string{"COMMIT", "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ WRITE", "START TRANSACTION"}},
		{name: "snapshot", steps: []step{{"START TRANSACTION READ ONLY, WITH CONSISTENT SNAPSHOT", inTrans, false}}, view: true,
			want: []string{"COMMIT", "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY", "START TRANSACTION WITH CONSISTENT SNAPSHOT"}},
		{name: "autocommit off", steps: []step{{"SELECT * FROM t", inTrans, false}},
			want: []string{"COMMIT", "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ WRITE"}},
		{name: "COMMIT fails", steps: []step{{"BEGIN", inTrans, false}}, fail: map[string]error{"COMMIT": serverErr("gone")},
			want: []string{"COMMIT"}, err: true},
		{name: "SET fails", steps: []step{{"BEGIN", inTrans, false}}, fail: map[string]error{"SET": serverErr("no")},
			want: []string{"COMMIT", "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ WRITE"}, err: true},
		{name: "START fails", steps: []step{{"BEGIN", inTrans, false}}, fail: map[string]error{"START": serverErr("no")},
			want: []string{"COMMIT", "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ WRITE", "START TRANSACTION"}, err: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var tx Transaction
			run(&tx, append(c.steps, step{"SELECT * FROM t", inTrans, false})...)
			f := &conn{status: c.status, fail: c.fail}
			err := tx.Restart(context.Background(), f, sandbox{epoch: 99})
			if !slices.Equal(f.sent, c.want) || (err != nil) != c.err {
				t.Fatalf("sent %q, error %v; want %q (error %v)", f.sent, err, c.want, c.err)
			}
			if err == nil && (tx.locked || tx.view != c.view || tx.viewEpoch != 99) {
				t.Errorf("after the restart: locked %v view %v@%d", tx.locked, tx.view, tx.viewEpoch)
			}
		})
	}
}

// replayCase is one replay: the statements recorded and how the
// connection answers.
type replayCase struct {
	name    string
	recs    []string // run in a transaction with autocommit on
	status  uint16
	fail    map[string]error
	effects map[string][]wire.OK
	insert  uint64 // the insert id the last statement recorded got
	rows    [][]*string
	why     string // "" : replayed
	err     error
	want    []string // sent (a prefix of it when why is set)
	view    bool
}

func (c replayCase) run(t *testing.T) {
	var tx Transaction
	for _, q := range c.recs {
		run(&tx, step{q, inTrans | autocommit, false})
	}
	if c.insert != 0 {
		tx.rec.entries[len(tx.rec.entries)-1].oks = []wire.OK{{Affected: 1, InsertID: c.insert}}
	}
	f := &conn{status: c.status, fail: c.fail, effects: c.effects, rows: c.rows}
	why, err := tx.Replay(context.Background(), f, sandbox{epoch: 99})
	if !errors.Is(err, c.err) || !strings.Contains(why, c.why) || (c.why == "") != (why == "") {
		t.Fatalf("Replay = %q, %v; want %q, %v (sent %q)", why, err, c.why, c.err, f.sent)
	}
	if !hasPrefixes(f.sent, c.want) {
		t.Errorf("sent %q, want %q", f.sent, c.want)
	}
	if c.why == "" && c.err == nil && (!tx.locked || tx.viewEpoch != 99 || tx.view != c.view) {
		t.Errorf("after the replay: locked %v view %v@%d", tx.locked, tx.view, tx.viewEpoch)
	}
}

// TestReplay: a transaction that wrote is rolled back, started again and
// its record replayed, each statement checked to have the same effect,
// insert ids asked for again; the new transaction holds a read view only
// when a replayed statement may have taken one.
func TestReplay(t *testing.T) {
	for _, c := range []replayCase{
		{name: "replayed", recs: []string{"BEGIN", "UPDATE t SET a = 1"}, status: autocommit,
			want: []string{"SELECT TABLE_NAME", "ROLLBACK", "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ WRITE",
				"resend BEGIN", "resend UPDATE t SET a = 1"}},
		{name: "locking read takes a view", recs: []string{"BEGIN", "SELECT * FROM t FOR UPDATE", "UPDATE t SET a = 1"},
			status: autocommit, view: true,
			want: []string{"SELECT TABLE_NAME", "ROLLBACK", "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ WRITE",
				"resend BEGIN", "resend SELECT * FROM t FOR UPDATE", "resend UPDATE t SET a = 1"}},
		{name: "autocommit off", recs: []string{"UPDATE t SET a = 1", "SELECT * FROM t"},
			want: []string{"SELECT TABLE_NAME", "ROLLBACK", "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ WRITE",
				"resend UPDATE t SET a = 1"}},
		{name: "savepoints", recs: []string{"BEGIN", "UPDATE t SET a = 1", "SAVEPOINT s", "UPDATE t SET a = 2", "ROLLBACK TO SAVEPOINT s",
			"RELEASE SAVEPOINT s"}, status: autocommit, effects: map[string][]wire.OK{"SAVEPOINT s": {{}}, "ROLLBACK TO SAVEPOINT s": {{}},
			"RELEASE SAVEPOINT s": {{}}},
			want: []string{"SELECT TABLE_NAME", "ROLLBACK", "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ WRITE", "resend BEGIN",
				"resend UPDATE t SET a = 1", "resend SAVEPOINT s", "resend UPDATE t SET a = 2", "resend ROLLBACK TO SAVEPOINT s",
				"resend RELEASE SAVEPOINT s"}},
		{name: "insert ids asked again", recs: []string{"BEGIN", "INSERT INTO t VALUES (1)"}, insert: 7,
			effects: map[string][]wire.OK{"INSERT INTO t VALUES (1)": {{Affected: 1, InsertID: 7}}},
			want: []string{"SELECT TABLE_NAME", "ROLLBACK", "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ WRITE",
				"resend BEGIN", "SET insert_id = 7", "resend INSERT INTO t VALUES (1)"}},
	} {
		t.Run(c.name, c.run)
	}
}

// TestReplayRefused: what cannot be replayed, or fails when replayed, says
// why (and is rolled back); a broken connection is an error.
func TestReplayRefused(t *testing.T) {
	def := func(s string) *string { return &s }
	broken := errors.New("connection reset")
	for _, c := range []replayCase{
		{name: "nothing recorded", why: "not all recorded"},
		{name: "volatile", recs: []string{"BEGIN", "UPDATE t SET a = RAND()"}, why: "RAND()"},
		{name: "different effect", recs: []string{"BEGIN", "UPDATE t SET a = 1"},
			effects: map[string][]wire.OK{"UPDATE t SET a = 1": {{Affected: 0}}}, why: "different effect the second time",
			want: []string{"SELECT TABLE_NAME", "ROLLBACK", "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ WRITE",
				"resend BEGIN", "resend UPDATE t SET a = 1", "ROLLBACK"}},
		{name: "clock default", recs: []string{"BEGIN", "UPDATE t SET a = 1"},
			rows: [][]*string{{def("t"), def("a"), def("NULL"), def("")}, {def("t"), def("b"), def("current_timestamp()"), def("")}},
			why:  "it wrote `t`, whose column `b` defaults to current_timestamp()", want: []string{"SELECT TABLE_NAME"}},
		{name: "on update", recs: []string{"BEGIN", "UPDATE t SET a = 1"},
			rows: [][]*string{{def("t"), def("c"), nil, def("on update current_timestamp()")}}, why: "takes the clock on update"},
		{name: "unreadable default", recs: []string{"BEGIN", "UPDATE t SET a = 1"},
			rows: [][]*string{{def("t"), def("c"), def("(((("), nil}, {nil, nil, nil, nil}}, why: "cannot read"},
		{name: "constant default", recs: []string{"BEGIN", "UPDATE t SET a = 1"},
			rows: [][]*string{{def("t"), def("c"), def("'x'"), nil}, {def("t")}},
			want: []string{"SELECT TABLE_NAME", "ROLLBACK", "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ WRITE",
				"resend BEGIN", "resend UPDATE t SET a = 1"}},
		{name: "defaults unread", recs: []string{"BEGIN", "UPDATE t SET a = 1"}, fail: map[string]error{"SELECT": serverErr("denied")},
			why: "column defaults could not be read: denied"},
		{name: "rollback fails", recs: []string{"BEGIN", "UPDATE t SET a = 1"}, fail: map[string]error{"ROLLBACK": serverErr("no")},
			why: "rollback failed: no"},
		{name: "restart fails", recs: []string{"BEGIN", "UPDATE t SET a = 1"}, fail: map[string]error{"SET TRANSACTION": serverErr("no")},
			why: "restart failed: no"},
		{name: "insert id refused", recs: []string{"BEGIN", "INSERT INTO t VALUES (1)"}, insert: 7, fail: map[string]error{"SET insert_id": serverErr("no")},
			effects: map[string][]wire.OK{"INSERT INTO t VALUES (1)": {{Affected: 1, InsertID: 7}}}, why: "replaying it failed: no"},
		{name: "resend refused", recs: []string{"BEGIN", "UPDATE t SET a = 1"},
			fail: map[string]error{"resend UPDATE t SET a = 1": serverErr("lock wait timeout")}, why: "replaying it failed: lock wait timeout"},
		{name: "connection broken", recs: []string{"BEGIN", "UPDATE t SET a = 1"},
			fail: map[string]error{"resend UPDATE t SET a = 1": broken}, err: broken},
		{name: "connection broken at the rollback after", recs: []string{"BEGIN", "UPDATE t SET a = 1"},
			fail: map[string]error{"resend UPDATE t SET a = 1": serverErr("no"), "ROLLBACK#2": broken}, err: broken},
	} {
		t.Run(c.name, c.run)
	}
}

// hasPrefixes reports whether each of want starts the query sent at its
// place.
func hasPrefixes(sent, want []string) bool {
	if len(sent) < len(want) {
		return false
	}
	for i, w := range want {
		if !strings.HasPrefix(sent[i], w) {
			return false
		}
	}
	return true
}

// TestRollback: the record is forgotten; a server's error is not the
// caller's, a broken connection is.
func TestRollback(t *testing.T) {
	broken := errors.New("connection reset")
	for _, c := range []struct {
		fail error
		want error
	}{{nil, nil}, {serverErr("no"), nil}, {broken, broken}} {
		var tx Transaction
		run(&tx, step{"BEGIN", inTrans, false}, step{"UPDATE t SET a = 1", inTrans, false})
		f := &conn{fail: map[string]error{}}
		if c.fail != nil {
			f.fail["ROLLBACK"] = c.fail
		}
		err := tx.Rollback(context.Background(), f)
		if !errors.Is(err, c.want) || !slices.Equal(f.sent, []string{"ROLLBACK"}) || err == nil && tx.Recorded() != 0 {
			t.Errorf("Rollback with %v: %v, sent %q, %d recorded", c.fail, err, f.sent, tx.Recorded())
		}
	}
}

// TestRefused: the client's 1412 names the sandbox and why.
func TestRefused(t *testing.T) {
	for _, err := range []error{RestartRefused("sb", "a reason"), ReplayRefused("sb", "a reason")} {
		var r *rewrite.Refusal
		if !errors.As(err, &r) || r.Code != wire.ErTableDefChanged || !strings.Contains(r.Message, `sandbox "sb"`) ||
			!strings.Contains(r.Message, "(a reason)") {
			t.Errorf("refusal %v", err)
		}
	}
	d := differentEffect{now: []wire.OK{{Affected: 0}}, then: []wire.OK{{Affected: 1, InsertID: 2}}}
	if want := fmt.Sprint([][2]uint64{{1, 2}}); !strings.Contains(d.Error(), want) || !serverError(d) {
		t.Errorf("differentEffect: %v", d)
	}
}
