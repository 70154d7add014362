package session_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/session"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// fakeClient is a client's own upstream connection as the session sees
// it: it answers the session variables' query, every other query with OK, resends with the effects it is told,
// and reports the status it is given.
type fakeClient struct {
	mu      sync.Mutex
	status  uint16
	queries []string
	resent  [][]byte
	effects []wire.OK
}

func (f *fakeClient) Query(_ context.Context, sql string) (*session.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries = append(f.queries, sql)
	switch {
	case sql == "SHOW GRANTS":
		g := "GRANT ALL PRIVILEGES ON *.* TO `u`@`%`"
		return &session.Result{Rows: [][]*string{{&g}}}, nil
	case strings.HasPrefix(sql, "SELECT @@SESSION.sql_mode"):
		v := []string{"", "utf8mb4", "REPEATABLE-READ", "0"}
		return &session.Result{Rows: [][]*string{{&v[0], &v[1], &v[2], &v[3]}}}, nil
	case strings.HasPrefix(sql, "SELECT @@"): // settings read before a change (forker.WithModes)
		row := make([]*string, strings.Count(sql, "@@"))
		for i := range row {
			row[i] = new(string)
		}
		return &session.Result{Rows: [][]*string{row}}, nil
	}
	return &session.Result{}, nil
}

func (f *fakeClient) Resend(_ context.Context, payload []byte, _ string) ([]wire.OK, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resent = append(f.resent, append([]byte(nil), payload...))
	if strings.HasSuffix(string(payload), "BEGIN") {
		return []wire.OK{{}}, nil
	}
	return f.effects, nil
}

func (f *fakeClient) Status() uint16 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.status
}

func (f *fakeClient) set(status uint16) { f.mu.Lock(); f.status = status; f.mu.Unlock() }

// step runs p on s as the proxy does (Before, then After with the outcome
// o and the server status after it).
func step(e *env, s *session.Session, f *fakeClient, p *session.Plan, o *session.Outcome, status uint16) {
	e.t.Helper()
	if err := s.Before(e.ctx, p); err != nil {
		e.t.Fatalf("Before(%q): %v", p.SQL, err)
	}
	f.set(status)
	if err := s.After(e.ctx, p, o); err != nil {
		e.t.Fatalf("After(%q): %v", p.SQL, err)
	}
}

// TestReplayAfterFastPathBegin: a prepared BEGIN run outside a transaction
// goes by the proxy's fast path, unrecorded; the transaction's record still
// starts with it, so a replay past a fork works (it used to find the record
// incomplete and answer 1412).
func TestReplayAfterFastPathBegin(t *testing.T) {
	e := newEnv(t, session.Config{}, nil)
	rec := &recorder{}
	e.m.SetObserver(rec)
	const autocommit = 0x0002
	f := &fakeClient{status: autocommit, effects: []wire.OK{{Affected: 1}}}
	s := e.open(session.Options{User: "u", Mode: session.Transparent, Sandbox: "fast", Upstream: f, DB: "app"})
	e.mustPlan(s, "UPDATE u SET t_id = 0") // u forked before the transaction
	begin, err := s.PlanWith(e.ctx, "BEGIN", rewrite.Options{DB: "app"}, true)
	if err != nil {
		t.Fatal(err)
	}
	step(e, s, f, begin, &session.Outcome{Execution: true, OKs: []wire.OK{{}}}, inTrans|autocommit) // fast path: no payload
	sel := e.mustPlan(s, "SELECT * FROM t")
	step(e, s, f, sel, &session.Outcome{Payload: append([]byte{wire.ComQuery}, sel.SQL...)}, inTrans|autocommit)
	upd := e.mustPlan(s, "UPDATE u SET t_id = 1")
	step(e, s, f, upd, &session.Outcome{Payload: append([]byte{wire.ComQuery}, upd.SQL...), OKs: []wire.OK{{Affected: 1}}}, inTrans|autocommit)
	p := e.mustPlan(s, "UPDATE t SET a = 1") // t forked after the read view
	if !p.Flags().Replay {
		t.Fatalf("a fork after the read view of a transaction that wrote: %+v", p.Flags())
	}
	if err := s.Before(e.ctx, p); err != nil {
		t.Fatalf("replay: %v", err)
	}
	if len(f.resent) != 2 || string(f.resent[0]) != "\x03BEGIN" || !strings.Contains(string(f.resent[1]), "t_id = 1") {
		t.Errorf("replayed %q", f.resent)
	}
	if got := rec.all(); len(got) == 0 || got[len(got)-1] != "transaction replayed" {
		t.Errorf("observer heard %q", got)
	}
}

// runIn plans and runs each statement on s as the proxy does, inside a
// transaction (autocommit on), each write affecting one row.
func runIn(e *env, s *session.Session, f *fakeClient, stmts ...string) {
	e.t.Helper()
	const autocommit = 0x0002
	for _, q := range stmts {
		p := e.mustPlan(s, q)
		o := &session.Outcome{Payload: append([]byte{wire.ComQuery}, p.SQL...), OKs: []wire.OK{{}}}
		if p.Flags().Stateful && !p.Flags().Begin {
			o.OKs = []wire.OK{{Affected: 1}}
		}
		step(e, s, f, p, o, inTrans|autocommit)
	}
}

// TestReplayRefusedWhenVolatile: a transaction whose writes could have
// another effect when run again — user variables, the clock, chance, a
// server variable set after writing — is not replayed past a fork: the
// client gets 1412 saying why, and the transaction is rolled back.
func TestReplayRefusedWhenVolatile(t *testing.T) {
	cases := []struct {
		stmts []string
		why   string // "" : replayed
	}{
		{stmts: []string{"UPDATE u SET t_id = 1"}},
		{stmts: []string{"UPDATE u SET t_id = CONNECTION_ID()"}},
		{stmts: []string{"UPDATE u SET t_id = (@n := @n + 1)"}, why: "user variable @n"},
		{stmts: []string{"UPDATE u SET t_id = @x"}, why: "user variable @x"},
		{stmts: []string{"UPDATE u SET t_id = UUID_SHORT()"}, why: "UUID_SHORT()"},
		{stmts: []string{"UPDATE u SET t_id = RAND() * 10"}, why: "RAND()"},
		{stmts: []string{"UPDATE u SET t_id = UNIX_TIMESTAMP()"}, why: "the clock"},
		{stmts: []string{"UPDATE u SET t_id = LAST_INSERT_ID()"}, why: "LAST_INSERT_ID()"},
		{stmts: []string{"SET @n = 5", "UPDATE u SET t_id = 1", "SET @n = 6"}}, // plain SETs are not replayed
		{stmts: []string{"SET div_precision_increment = 8", "UPDATE u SET t_id = 1"}},
		{stmts: []string{"UPDATE u SET t_id = 1", "SELECT LAST_INSERT_ID()"}},
		{stmts: []string{"UPDATE u SET t_id = 1", "SELECT LAST_INSERT_ID(7)"}, why: "LAST_INSERT_ID(…)"},
		{stmts: []string{"UPDATE u SET t_id = 1", "SET div_precision_increment = 8"}, why: "@@div_precision_increment after writing"},
		{stmts: []string{"UPDATE u SET t_id = 1", "SET autocommit = 0, innodb_lock_wait_timeout = 5"}},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.stmts, "; "), func(t *testing.T) {
			e := newEnv(t, session.Config{}, nil)
			const autocommit = 0x0002
			f := &fakeClient{status: autocommit, effects: []wire.OK{{Affected: 1}}}
			s := e.open(session.Options{User: "u", Mode: session.Transparent, Sandbox: "vol", Upstream: f, DB: "app"})
			e.mustPlan(s, "UPDATE u SET t_id = 0") // u forked before the transaction
			runIn(e, s, f, "BEGIN", "SELECT * FROM t")
			runIn(e, s, f, c.stmts...)
			p := e.mustPlan(s, "UPDATE t SET a = 1") // t forked after the read view
			if !p.Flags().Replay {
				t.Fatalf("not a replay: %+v", p.Flags())
			}
			err := s.Before(e.ctx, p)
			if c.why == "" {
				if err != nil {
					t.Fatalf("replay refused: %v", err)
				}
				return
			}
			wantCode(t, err, wire.ErTableDefChanged, "HY000", c.why)
			if len(f.resent) != 0 {
				t.Errorf("resent %q", f.resent)
			}
			if f.queries[len(f.queries)-1] != "ROLLBACK" {
				t.Errorf("the refused transaction was not rolled back: %q", f.queries)
			}
		})
	}
}

// TestRestartKeepsCharacteristics: a transaction restarted past a fork
// starts again with its isolation level, access mode and snapshot, as the
// client started it: from its BEGIN, a SET TRANSACTION before it or the
// session's settings, which the session hands the transaction. Every way a
// transaction gets them is txn's TestCharacteristics and TestRestart;
// these cases check what the session gives it.
func TestRestartKeepsCharacteristics(t *testing.T) {
	cases := []struct {
		stmts []string // the last one starts the transaction (all, for a chained one)
		set   string   // SET TRANSACTION sent before the restart's START
		start string
	}{
		{[]string{"BEGIN"}, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ WRITE", "START TRANSACTION"},
		{[]string{"START TRANSACTION READ ONLY"}, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY", "START TRANSACTION"},
		{[]string{"SET TRANSACTION READ ONLY", "SELECT 1", "SET @x = 1", "START TRANSACTION"}, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY",
			"START TRANSACTION"},
		{[]string{"START TRANSACTION READ ONLY", "COMMIT AND CHAIN"}, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY",
			"START TRANSACTION"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.stmts, "; "), func(t *testing.T) {
			e := newEnv(t, session.Config{}, nil)
			const autocommit = 0x0002
			f := &fakeClient{status: autocommit}
			s := e.open(session.Options{User: "u", Mode: session.Transparent, Sandbox: "chars", Upstream: f, DB: "app"})
			s.SetVars(session.Vars{Isolation: "REPEATABLE-READ", ReadOnly: "0"})
			e.mustPlan(s, "UPDATE u SET t_id = 0") // u forked before the transaction
			open := len(c.stmts) - 1
			if strings.HasSuffix(c.stmts[open], "CHAIN") {
				open = 0
			}
			for _, q := range c.stmts[:open] {
				p := e.mustPlan(s, q)
				step(e, s, f, p, &session.Outcome{Payload: append([]byte{wire.ComQuery}, p.SQL...), OKs: []wire.OK{{}}}, autocommit)
			}
			runIn(e, s, f, append(c.stmts[open:], "SELECT * FROM u")...)
			p := e.mustPlan(s, "UPDATE t SET a = 1") // t forked after the read view
			if !p.Flags().Restart {
				t.Fatalf("not a restart: %+v", p.Flags())
			}
			f.queries = nil
			if err := s.Before(e.ctx, p); err != nil {
				t.Fatal(err)
			}
			if want := []string{"COMMIT", c.set, c.start}; !slices.Equal(f.queries, want) {
				t.Errorf("restarted with %q, want %q", f.queries, want)
			}
		})
	}
}

// TestRestartRefusedWhenReadingPrevious: a statement that reads what the
// statement before it left (ROW_COUNT(), FOUND_ROWS(), the warning count)
// would read what the proxy's restart or replay left instead: the
// transaction is rolled back and the client gets 1412.
func TestRestartRefusedWhenReadingPrevious(t *testing.T) {
	for _, q := range []string{"SELECT ROW_COUNT(), a FROM t", "SELECT FOUND_ROWS() FROM t", "SELECT @@warning_count, a FROM t"} {
		t.Run(q, func(t *testing.T) {
			e := newEnv(t, session.Config{}, nil)
			const autocommit = 0x0002
			f := &fakeClient{status: autocommit}
			s := e.open(session.Options{User: "u", Mode: session.Transparent, Sandbox: "prev", Upstream: f, DB: "app"})
			other := e.open(session.Options{User: "u", Mode: session.Transparent, Sandbox: "prev", Upstream: &fakeClient{}, DB: "app"})
			e.mustPlan(s, "UPDATE u SET t_id = 0") // u forked before the transaction
			runIn(e, s, f, "BEGIN", "SELECT * FROM u")
			e.mustPlan(other, "UPDATE t SET a = 0") // another connection forks t
			p := e.mustPlan(s, q)
			if !p.Flags().Restart {
				t.Fatalf("not a restart: %+v", p.Flags())
			}
			// The restart at a first write, which only spares a later
			// replay, is left out for such a statement.
			if w := e.mustPlan(s, "UPDATE u SET t_id = ROW_COUNT()"); w.Flags().Restart || w.Flags().Replay {
				t.Errorf("a first write reading ROW_COUNT() restarts the transaction: %+v", w.Flags())
			}
			if w := e.mustPlan(s, "UPDATE u SET t_id = 1"); !w.Flags().Restart {
				t.Errorf("a first write does not restart the transaction: %+v", w.Flags())
			}
			wantCode(t, s.Before(e.ctx, p), wire.ErTableDefChanged, "HY000", "reads "+strings.Fields(q)[1])
			if f.queries[len(f.queries)-1] != "ROLLBACK" {
				t.Errorf("the refused transaction was not rolled back: %q", f.queries)
			}
		})
	}
}

// TestSerializableNextTransaction: SET TRANSACTION ISOLATION LEVEL
// SERIALIZABLE stays pending across statements that use no table (as on
// MariaDB 10.11), so the transaction it then applies to reads under locks
// and its reads are forked first, never taking locks on production.
func TestSerializableNextTransaction(t *testing.T) {
	for _, set := range []bool{false, true} {
		e := newEnv(t, session.Config{}, nil)
		const autocommit = 0x0002
		f := &fakeClient{status: autocommit}
		s := e.open(session.Options{User: "u", Mode: session.Transparent, Upstream: f, DB: "app"})
		stmts := []string{"SELECT 1", "SET @z = 1", "SELECT 2"}
		if set {
			stmts = append([]string{"SET TRANSACTION ISOLATION LEVEL SERIALIZABLE"}, stmts...)
		}
		for _, q := range stmts {
			p := e.mustPlan(s, q)
			step(e, s, f, p, &session.Outcome{Payload: append([]byte{wire.ComQuery}, p.SQL...), OKs: []wire.OK{{}}}, autocommit)
		}
		runIn(e, s, f, "BEGIN")
		if p := e.mustPlan(s, "SELECT * FROM t"); p.Flags().Changed != set {
			t.Errorf("SERIALIZABLE next transaction %v: the read was forked: %v", set, p.Flags().Changed)
		}
	}
}
