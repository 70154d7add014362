package session_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox/operator"
	"github.com/sqlfork/sqlfork-proxy/session"
)

// TestSandboxStatements walks the SANDBOX statements through their
// answers and refusals, for an owner, another user and an admin.
func TestSandboxStatements(t *testing.T) {
	e := newEnv(t, session.Config{Admins: []string{"root"}, MaxTTL: 720 * time.Hour, DefaultTTL: 24 * time.Hour}, nil)
	who := map[string]*session.Session{
		"alice": e.open(session.Options{User: "alice", Mode: session.Explicit}),
		"bob":   e.open(session.Options{User: "bob", Mode: session.Explicit}),
		"root":  e.open(session.Options{User: "root", Mode: session.Explicit}),
	}
	demo := physDB(sandboxIDOf("demo"), "app")
	for _, step := range []struct {
		user, sql string
		info      string     // the OK packet's message contains it
		rows      [][]string // the result set's rows start with these values
		code      uint16     // a refusal's code (SQLSTATE HY000 unless state)
		state     string
		msg       string
	}{
		{user: "alice", sql: "SANDBOX STATUS", rows: [][]string{{"", "", "production", "explicit", "", "", "", "", "", "", "", "", "", ""}}},
		{user: "alice", sql: "SANDBOX DETACH", info: "not in a sandbox"},
		{user: "alice", sql: "SANDBOX KEEP", code: 1105, msg: "not in a sandbox; SANDBOX CREATE or ATTACH first"},
		{user: "alice", sql: "SANDBOX DISCARD", code: 1105, msg: "not in a sandbox; name the sandbox"},
		{user: "alice", sql: "SANDBOX CREATE demo", info: "sandbox demo created (id " + sandboxIDOf("demo") + ")"},
		{user: "alice", sql: "SANDBOX CREATE demo", code: 1105, msg: `a sandbox named "demo" already exists`},
		{user: "alice", sql: "UPDATE t SET a = 1"},
		{user: "alice", sql: "SANDBOX STATUS", rows: [][]string{{sandboxIDOf("demo"), "demo", "active", "explicit", "alice", "*", "", "1",
			"unpromoted", "", "app.t", "fork", "3", "16384"}}},
		{user: "alice", sql: "SANDBOX KEEP TTL 0", code: 1105, msg: "at most 30d (max-sandbox-ttl), not no end"},
		{user: "alice", sql: "SANDBOX KEEP", info: "sandbox demo kept until "},
		{user: "alice", sql: "sandbox keep ttl 2h;", info: "sandbox demo kept until "},
		{user: "bob", sql: "SANDBOX ATTACH demo", code: 1105, msg: `no sandbox named "demo"`},
		{user: "bob", sql: "SANDBOX DISCARD demo", code: 1105, msg: `no sandbox named "demo"`},
		{user: "bob", sql: "SANDBOX CREATE demo", code: 1105, msg: `a sandbox named "demo" already exists`},
		{user: "bob", sql: "SANDBOX LIST", rows: [][]string{}},
		{user: "root", sql: "SANDBOX LIST", rows: [][]string{{sandboxIDOf("demo"), "demo", "kept", "alice", "*", "*", "1", "1", "16384"}}},
		{user: "root", sql: "SANDBOX ATTACH demo", info: "attached to sandbox demo"},
		{user: "root", sql: "SANDBOX ATTACH demo", info: "already in sandbox demo"},
		{user: "alice", sql: "SANDBOX LIST", rows: [][]string{{sandboxIDOf("demo"), "demo", "kept", "alice", "*", "*", "2", "1", "16384"}}},
		{user: "alice", sql: "SANDBOX DETACH", info: "detached from sandbox demo; now in production (no sandbox)"}, // kept: no warning
		{user: "alice", sql: "SANDBOX ATTACH nosuch", code: 1105, msg: `no sandbox named "nosuch"; SANDBOX LIST shows yours`},
		{user: "alice", sql: "SANDBOX DISCARD nosuch", code: 1105, msg: `no sandbox named "nosuch"`},
		{user: "alice", sql: "SANDBOX CREATE other TTL 1000h", code: 1105, msg: "at most 30d (max-sandbox-ttl), not 1000h"},
		{user: "alice", sql: "SANDBOX FROB", code: 1064, state: "42000", msg: "unknown SANDBOX statement"},
		{user: "alice", sql: "SANDBOX DISCARD demo", info: "sandbox demo discarded; now in production"},
		{user: "root", sql: "SELECT 1", code: 1105, msg: `sandbox "demo" was discarded`},
		{user: "root", sql: "SANDBOX STATUS", rows: [][]string{{"", "", "production", "explicit"}}},
		{user: "alice", sql: "SANDBOX ATTACH demo", code: 1105, msg: `no sandbox named "demo"`},
		{user: "alice", sql: "SANDBOX CREATE TTL 1h", info: "sandbox sb-"},
	} {
		p, err := plan(e.ctx, who[step.user], step.sql)
		if step.code != 0 {
			state := step.state
			if state == "" {
				state = "HY000"
			}
			wantCode(t, err, step.code, state, step.msg)
			continue
		}
		if err != nil {
			t.Fatalf("%s: %s: %v", step.user, step.sql, err)
		}
		switch {
		case step.info != "":
			if p.Reply == nil || p.Reply.Columns != nil || !strings.Contains(p.Reply.Info, step.info) {
				t.Errorf("%s: %s answered %+v, want OK with %q", step.user, step.sql, p.Reply, step.info)
			}
		case step.rows != nil:
			if p.Reply == nil || p.Reply.Columns == nil || len(p.Reply.Rows) != len(step.rows) {
				t.Errorf("%s: %s answered %+v, want %d rows", step.user, step.sql, p.Reply, len(step.rows))
				continue
			}
			for i, want := range step.rows {
				if got := cells(p.Reply.Rows[i]); !cellsMatch(got, want) {
					t.Errorf("%s: %s row %d = %q, want %q", step.user, step.sql, i, got, want)
				}
			}
		}
		if p.Class() != "sandbox" && p.Reply != nil {
			t.Errorf("class %s", p.Class())
		}
	}
	if e.up.HasSchema(demo) {
		t.Errorf("%s survived SANDBOX DISCARD", demo)
	}
}

// sandboxIDOf is the id of the sandbox called name: ids of named
// sandboxes derive from the name, the same in every process and version
// (registries outlive upgrades).
func sandboxIDOf(name string) string {
	sum := sha256.Sum256([]byte("sqlfork-sandbox\x00" + name))
	return hex.EncodeToString(sum[:4])
}

func cells(row []*string) []string {
	out := make([]string, len(row))
	for i, v := range row {
		if v != nil {
			out[i] = *v
		}
	}
	return out
}

// cellsMatch compares a row with the values wanted: "*" is any non-empty
// value.
func cellsMatch(got, want []string) bool {
	if len(got) < len(want) {
		return false
	}
	for i, w := range want {
		if w == "*" && got[i] == "" || w != "*" && got[i] != w {
			return false
		}
	}
	return true
}

// TestSandboxStatementsRefusedInTransaction: SANDBOX statements are
// refused inside a transaction, and cannot be prepared.
func TestSandboxStatementsRefusedInTransaction(t *testing.T) {
	e := newEnv(t, session.Config{}, nil)
	s := e.transparent("u")
	_, err := s.PlanWith(e.ctx, "SANDBOX LIST", rewrite.Options{}, true)
	wantCode(t, err, 1295, "HY000", "cannot be prepared")
	p := e.mustPlan(s, "BEGIN")
	if err := s.Executed(e.ctx, p, 0x0001, false); err != nil {
		t.Fatal(err)
	}
	_, err = plan(e.ctx, s, "SANDBOX CREATE x")
	wantCode(t, err, 1179, "25000", "not allowed in a transaction")
}

// TestSandboxTransparent: a transparent session is never on production:
// DETACH and DISCARD move it to a new anonymous sandbox, and the old one,
// unkept, goes.
func TestSandboxTransparent(t *testing.T) {
	e := newEnv(t, session.Config{}, nil)
	s := e.transparent("u")
	first := s.SandboxName()
	if !strings.HasPrefix(first, "sb-") || s.Mode() != session.Transparent || s.User() != "u" {
		t.Fatalf("transparent session in %q (%s, %s)", first, s.Mode(), s.User())
	}
	e.mustPlan(s, "UPDATE t SET a = 1")
	id := e.idOf(s)
	p := e.mustPlan(s, "SANDBOX DETACH")
	if second := s.SandboxName(); second == first || !strings.HasPrefix(second, "sb-") || !strings.Contains(p.Reply.Info, second) {
		t.Errorf("after DETACH in %q: %q", second, p.Reply.Info)
	}
	if e.up.HasSchema(physDB(id, "app")) {
		t.Error("the unkept sandbox left by DETACH survived")
	}
	// Its change went with it: DETACH says so, as a warning too.
	const gone = "its changes to 1 tables were discarded with it (SANDBOX KEEP before DETACH keeps a sandbox)"
	if !strings.HasSuffix(p.Reply.Info, "; "+gone) || len(p.Reply.Warnings) != 1 || p.Reply.Warnings[0].Message != gone ||
		p.Reply.Warnings[0].Level != "Warning" {
		t.Errorf("DETACH of a sandbox with changes: %q, warnings %+v", p.Reply.Info, p.Reply.Warnings)
	}
	if p := e.mustPlan(s, "SANDBOX DETACH"); len(p.Reply.Warnings) != 0 {
		t.Errorf("DETACH of a sandbox without changes warns: %+v", p.Reply.Warnings)
	}
	second := s.SandboxName()
	e.mustPlan(s, "SANDBOX DISCARD")
	if third := s.SandboxName(); third == second || !strings.HasPrefix(third, "sb-") {
		t.Errorf("after DISCARD in %q", third)
	}
}

// TestOpen: where a session starts — a sandbox chosen at connect time is
// attached or created; another user's, a bad name or a limit refuse the
// login.
func TestOpen(t *testing.T) {
	e := newEnv(t, session.Config{Admins: []string{"root"}}, nil)
	a := e.open(session.Options{User: "alice", Mode: session.Explicit, Sandbox: "pool"})
	b := e.open(session.Options{User: "alice", Mode: session.Transparent, Sandbox: "pool"})
	if a.SandboxName() != "pool" || b.SandboxName() != "pool" {
		t.Errorf("in %q and %q", a.SandboxName(), b.SandboxName())
	}
	if r := e.open(session.Options{User: "root", Mode: session.Explicit, Sandbox: "pool"}); r.SandboxName() != "pool" {
		t.Errorf("admin in %q", r.SandboxName())
	}
	if p := e.open(session.Options{User: "alice", Mode: session.Explicit}); p.SandboxName() != "" {
		t.Errorf("explicit session in %q", p.SandboxName())
	}
	pt := e.open(session.Options{User: "alice", Mode: session.Passthrough, Sandbox: "pool"})
	if pt.SandboxName() != "" {
		t.Errorf("passthrough session in %q", pt.SandboxName())
	}
	if p := e.mustPlan(pt, "UPDATE t SET a = 1"); p.SQL != "UPDATE t SET a = 1" || p.Flags().Changed {
		t.Errorf("passthrough plan %+v", p)
	}
	_, err := e.m.Open(e.ctx, session.Options{User: "bob", Mode: session.Explicit, Sandbox: "pool"})
	wantCode(t, err, 1105, "HY000", `no sandbox named "pool"`)
	_, err = e.m.Open(e.ctx, session.Options{User: "bob", Mode: session.Explicit, Sandbox: "no.dots"})
	wantCode(t, err, 1105, "HY000", "may hold only letters")
}

// TestLimits: max-sandboxes refuses a new sandbox with 1040 and
// max-sandboxes-per-user with 1226, whether made at login or by SANDBOX
// CREATE; reloads apply at once.
func TestLimits(t *testing.T) {
	cfg := session.Config{MaxSandboxes: 2, UserGuardrails: map[string]session.Guardrails{"alice": {MaxSandboxes: 1}}}
	e := newEnv(t, cfg, nil)
	a := e.transparent("alice")
	_, err := e.m.Open(e.ctx, session.Options{User: "alice", Mode: session.Transparent})
	wantCode(t, err, 1226, "42000", "User 'alice' has exceeded the 'max_sandboxes' resource (current value: 1)")
	var r *rewrite.Refusal
	if !errors.As(err, &r) || r.Reason != session.GuardMaxSandboxes {
		t.Errorf("reason %+v", r)
	}
	b := e.transparent("bob")
	_, err = e.m.Open(e.ctx, session.Options{User: "carol", Mode: session.Transparent})
	wantCode(t, err, 1040, "08004", "the proxy already holds 2 sandboxes")
	c := e.open(session.Options{User: "carol", Mode: session.Explicit})
	_, err = plan(e.ctx, c, "SANDBOX CREATE mine")
	wantCode(t, err, 1040, "08004", "--max-sandboxes")
	// DETACH in transparent mode needs a new sandbox first: refused, the
	// session stays where it is.
	_, err = plan(e.ctx, b, "SANDBOX DETACH")
	wantCode(t, err, 1040, "08004", "its limit")
	if b.SandboxName() == "" {
		t.Error("a transparent session was left without a sandbox")
	}
	a.Close()
	e.mustPlan(c, "SANDBOX CREATE mine")
	e.m.SetLimits(session.Config{MaxSandboxes: 10})
	e.transparent("alice")
	e.transparent("alice")
}

// TestAdminAPI: the operators' view (Manager.List, Show, Keep, Discard).
func TestAdminAPI(t *testing.T) {
	e := newEnv(t, session.Config{MaxTTL: 48 * time.Hour, DefaultTTL: time.Hour}, nil)
	s := e.open(session.Options{User: "alice", Mode: session.Explicit, Sandbox: "ops"})
	e.mustPlan(s, "UPDATE t SET a = 1")
	e.mustPlan(s, "TRUNCATE TABLE u")
	in, err := e.m.Operator().Show(e.ctx, "ops")
	if err != nil || in.Name != "ops" || in.Owner != "alice" || in.State != "active" || in.TableCount != 2 ||
		len(in.Tables) != 2 || in.Tables[0].Table != "app.t" || in.Tables[1].State != "schema" {
		t.Errorf("Show = %+v, %v", in, err)
	}
	if _, err := e.m.Operator().Keep(e.ctx, "ops", ttl(100*time.Hour)); !errors.Is(err, operator.ErrTTL) {
		t.Errorf("Keep past max TTL: %v", err)
	}
	in, err = e.m.Operator().Keep(e.ctx, "ops", ttl(time.Hour))
	if err != nil || in.State != "kept" || in.Expires == nil {
		t.Errorf("Keep = %+v, %v", in, err)
	}
	for _, f := range []func() error{
		func() error { _, err := e.m.Operator().Show(e.ctx, "nosuch"); return err },
		func() error { _, err := e.m.Operator().Keep(e.ctx, "nosuch", ttl(time.Hour)); return err },
		func() error { return e.m.Operator().Discard(e.ctx, "nosuch") },
	} {
		if err := f(); !errors.Is(err, operator.ErrNoSandbox) {
			t.Errorf("on a missing sandbox: %v", err)
		}
	}
	// A kept sandbox of a stopped process is listed from the registry.
	e.mustPlan(s, "SANDBOX DETACH")
	keptSandbox(e, e.m, "elsewhere", "1h")
	m2 := e.start(session.Config{})
	defer m2.Close()
	list, err := m2.Operator().List(e.ctx)
	if err != nil || len(list) != 2 || list[0].Name != "elsewhere" || list[1].Name != "ops" || list[1].TableCount != 2 ||
		list[1].State != "kept" || list[1].Expires == nil {
		t.Errorf("List = %+v, %v", list, err)
	}
	if err := m2.Operator().Discard(e.ctx, "ops"); err != nil {
		t.Fatal(err)
	}
	if _, err := m2.Operator().Show(e.ctx, "ops"); !errors.Is(err, operator.ErrNoSandbox) {
		t.Errorf("Show after Discard: %v", err)
	}
}
