package session_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/sandbox/operator"
	"github.com/sqlfork/sqlfork-proxy/session"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// script is an Exchange that records the steps Run takes and fails Send
// when told to.
type script struct {
	steps    []string
	sendErr  error
	refused  error
	outcome  session.Outcome
	relabels bool
}

func (x *script) Refuse(p *session.Plan, err error) error {
	x.steps, x.refused = append(x.steps, "refuse"), err
	return nil
}

func (x *script) Answer(p *session.Plan) error {
	x.steps = append(x.steps, "answer")
	return nil
}

func (x *script) Send(_ context.Context, p *session.Plan, replanned bool) error {
	x.steps = append(x.steps, "send "+p.SQL)
	return x.sendErr
}

func (x *script) Relay(_ context.Context, p *session.Plan, rl *session.Relabel) (*session.Outcome, error) {
	x.steps, x.relabels = append(x.steps, "relay"), rl != nil
	o := x.outcome
	return &o, nil
}

// TestRunSteps: Run takes a statement through its steps in order — a
// refusal is refused before anything is sent, the session's own answer is
// answered, a text is sent then relayed with its names told back — and a
// statement whose Send failed never ran: what planning made for it (a
// DROP's registry row) is undone, and the client gets Send's error.
func TestRunSteps(t *testing.T) {
	e := newEnv(t, session.Config{}, nil)
	s, id, db := e.transparentApp()
	run := func(x *script, sql string) bool {
		t.Helper()
		ok, err := s.Run(e.ctx, session.Input{Text: sql}, x)
		if err != nil {
			t.Fatalf("Run(%q): %v", sql, err)
		}
		return ok
	}

	x := &script{}
	if run(x, "SELECT * FROM nodb_named") || strings.Join(x.steps, "|") != "refuse" {
		t.Errorf("a table named with no database current: ok, steps %q", x.steps)
	}
	wantCode(t, x.refused, wire.ErNoDB, "3D000", "No database selected")

	x = &script{}
	if !run(x, "SANDBOX STATUS") || strings.Join(x.steps, "|") != "answer" {
		t.Errorf("SANDBOX STATUS: steps %q", x.steps)
	}

	// A refusal of the fork step (DDL of a table of the server's own
	// schema) is refused before anything is sent.
	x = &script{}
	if run(x, "ALTER TABLE mysql.user ADD COLUMN z INT") || strings.Join(x.steps, "|") != "refuse" {
		t.Errorf("DDL of the server's own schema: ok, steps %q", x.steps)
	}
	wantCode(t, x.refused, wire.ErOptionPreventsStatement, "HY000", "a table of the server's own schema")

	x = &script{}
	if !run(x, "UPDATE app.t SET a = 1") || strings.Join(x.steps, "|") != "send UPDATE "+db+".`t` SET a = 1|relay" ||
		!x.relabels {
		t.Errorf("UPDATE: steps %q, relabelled %v", x.steps, x.relabels)
	}

	x = &script{outcome: session.Outcome{Failed: true, Code: 1051}}
	if run(x, "SELECT 1") || strings.Join(x.steps, "|") != "send SELECT 1|relay" {
		t.Errorf("a statement the server failed: ok, steps %q", x.steps)
	}

	broke := errors.New("the upstream went away")
	x = &script{sendErr: broke}
	if run(x, "DROP TABLE app.u") || len(x.steps) != 2 || x.steps[1] != "refuse" || !errors.Is(x.refused, broke) {
		t.Errorf("a DROP whose send failed: steps %q, refused %v", x.steps, x.refused)
	}
	if kind, _, _ := e.tableRow(id, "app", "u"); kind != "" {
		t.Errorf("a DROP that was never sent left %q in the registry", kind)
	}
	if p := e.mustPlan(s, "SELECT * FROM app.u"); p.Flags().Changed {
		t.Errorf("after a DROP that was never sent, u is read from %q", p.SQL)
	}
}

// TestAnswerRunsCommand: planning a SANDBOX statement decides it and runs
// nothing; Run's answer step runs it. A refusal there is refused, and
// nothing goes upstream.
func TestAnswerRunsCommand(t *testing.T) {
	e := newEnv(t, session.Config{}, nil)
	s := e.open(session.Options{User: "u", Mode: session.Explicit})
	p, err := s.Decided(e.ctx, "SANDBOX CREATE later")
	if err != nil || !p.Answered() || p.Reply != nil {
		t.Fatalf("plan of SANDBOX CREATE: %v, answered %v, reply %v", err, p != nil && p.Answered(), p)
	}
	if _, err := e.m.Operator().Show(e.ctx, "later"); !errors.Is(err, operator.ErrNoSandbox) {
		t.Fatalf("planning SANDBOX CREATE made the sandbox: %v", err)
	}
	x := &script{}
	ok, err := s.Run(e.ctx, session.Input{Text: "SANDBOX CREATE later"}, x)
	if err != nil || !ok || strings.Join(x.steps, "|") != "answer" {
		t.Fatalf("Run(SANDBOX CREATE): %v, ok %v, steps %q", err, ok, x.steps)
	}
	if _, err := e.m.Operator().Show(e.ctx, "later"); err != nil {
		t.Errorf("Run's answer step did not make the sandbox: %v", err)
	}

	x = &script{}
	ok, err = s.Run(e.ctx, session.Input{Text: "SANDBOX DISCARD nosuch"}, x)
	if err != nil || ok || strings.Join(x.steps, "|") != "refuse" {
		t.Fatalf("Run(SANDBOX DISCARD nosuch): %v, ok %v, steps %q", err, ok, x.steps)
	}
	if x.refused == nil || !strings.Contains(x.refused.Error(), "nosuch") {
		t.Errorf("SANDBOX DISCARD nosuch refused with %v", x.refused)
	}
}

// TestRefreshBeforeDecide: deciding reads the session's binding and changes
// none of it — a transparent session whose sandbox was discarded elsewhere
// is still in it after decide, and no sandbox is made — while Run's
// refresh, before deciding, leaves the discarded sandbox for a new one and
// refuses the text.
func TestRefreshBeforeDecide(t *testing.T) {
	e := newEnv(t, session.Config{}, nil)
	s := e.open(tagged("pool"))
	e.mustPlan(s, "UPDATE t SET a = 1")
	other := e.open(session.Options{User: "u", Mode: session.Explicit})
	e.mustPlan(other, "SANDBOX DISCARD pool")
	count := func() int {
		t.Helper()
		all, err := e.m.Operator().List(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(all)
	}
	before := count()
	if _, err := s.Decide(e.ctx, "UPDATE app.t SET a = 2"); err != nil {
		t.Fatalf("decide: %v", err)
	}
	if s.SandboxName() != "pool" || count() != before {
		t.Errorf("deciding rebound the session: now in %q, %d sandboxes (were %d)", s.SandboxName(), count(), before)
	}
	x := &script{}
	if ok, err := s.Run(e.ctx, session.Input{Text: "UPDATE app.t SET a = 2"}, x); err != nil || ok || strings.Join(x.steps, "|") != "refuse" {
		t.Fatalf("Run after the discard: %v, ok %v, steps %q", err, ok, x.steps)
	}
	wantCode(t, x.refused, 1105, "HY000", `sandbox "pool" was discarded`)
	if s.SandboxName() == "pool" || s.SandboxName() == "" {
		t.Errorf("after the refresh the session is in %q", s.SandboxName())
	}
}

// valueClient is a client's connection whose server computes each SELECT
// CONCAT(…) of dynamic SQL (with the two character sets) as value.
type valueClient struct {
	fakeClient
	value string
}

func (f *valueClient) Query(ctx context.Context, sql string) (*session.Result, error) {
	r, err := f.fakeClient.Query(ctx, sql)
	if strings.HasPrefix(sql, "SELECT CONCAT(") {
		cs := "utf8mb4"
		return &session.Result{Rows: [][]*string{{&f.value, &cs, &cs}}}, nil
	}
	return r, err
}

// sent is how many of the queries the client's connection ran start with
// prefix.
func (f *valueClient) sent(prefix string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, q := range f.queries {
		if strings.HasPrefix(q, prefix) {
			n++
		}
	}
	return n
}

// TestNestedPlansForkAtForkStep: the plans made inside another's — a
// computed text's, a SHOW's query, an SQL EXECUTE's PREPARE — are decided
// with nothing forked, made or prepared: Run's fork step does that, and
// the statement then runs on the sandbox's tables.
func TestNestedPlansForkAtForkStep(t *testing.T) {
	e := newEnv(t, session.Config{}, nil)
	f := &valueClient{value: "UPDATE app.t SET a = 7"}
	s := e.open(session.Options{User: "u", Mode: session.Transparent, Upstream: f, DB: "app"})
	id := e.idOf(s)
	db := "`" + physDB(id, "app") + "`"
	run := func(sql, want string) {
		t.Helper()
		x := &script{}
		if ok, err := s.Run(e.ctx, session.Input{Text: sql}, x); err != nil || !ok || strings.Join(x.steps, "|") != want {
			t.Fatalf("Run(%q): %v, ok %v, steps %q; want %q", sql, err, ok, x.steps, want)
		}
	}

	computed := "EXECUTE IMMEDIATE CONCAT('UPDATE app.t ', 'SET a = 7')"
	if _, err := s.Decide(e.ctx, computed); err != nil {
		t.Fatalf("decide %q: %v", computed, err)
	}
	if kind, _, _ := e.tableRow(id, "app", "t"); kind != "" {
		t.Errorf("deciding a computed text forked app.t (%q)", kind)
	}
	run(computed, "send EXECUTE IMMEDIATE 'UPDATE "+db+".`t` SET a = 7'|relay")
	if kind, _, _ := e.tableRow(id, "app", "t"); kind == "" {
		t.Errorf("Run's fork step did not fork app.t")
	}

	views := e.count("VIEW")
	if _, err := s.Decide(e.ctx, "SHOW TABLES FROM app"); err != nil {
		t.Fatalf("decide SHOW TABLES: %v", err)
	}
	if n := e.count("VIEW"); n != views {
		t.Errorf("deciding SHOW TABLES made the sandbox's information_schema views (%d statements)", n-views)
	}

	run("PREPARE st FROM 'SELECT * FROM app.u'", "send PREPARE st FROM 'SELECT * FROM app.u'|relay")
	run("UPDATE app.u SET t_id = 1", "send UPDATE "+db+".`u` SET t_id = 1|relay")
	prepared := f.sent("PREPARE ")
	if _, err := s.Decide(e.ctx, "EXECUTE st"); err != nil {
		t.Fatalf("decide EXECUTE: %v", err)
	}
	if n := f.sent("PREPARE "); n != prepared {
		t.Errorf("deciding EXECUTE prepared its statement again upstream (%d)", n-prepared)
	}
	run("EXECUTE st", "send EXECUTE st|relay")
	if n := f.sent("PREPARE st FROM 'SELECT * FROM " + db + ".`u`'"); n != 1 {
		t.Errorf("Run's fork step prepared the moved statement %d times, want 1", n)
	}
}
