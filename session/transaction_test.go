package session_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/session"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// fakeClient is a client's own upstream connection as the session sees
// it: it answers every query with OK, resends with the effects it is told,
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
