package admin

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
	"github.com/sqlfork/sqlfork-proxy/session"
	"github.com/sqlfork/sqlfork-proxy/session/sessiontest"
)

// TestSandboxesOnManager: the admin API's sandboxes are the manager's —
// listed, shown, created, kept and discarded by name — and its refusals reach the
// API as its own errors (no such sandbox, forbidden); a manager that
// cannot start is the API's error too.
func TestSandboxesOnManager(t *testing.T) {
	ctx := context.Background()
	up := sessiontest.NewUpstream()
	up.AddTable(sessiontest.Table{DB: "app", Name: "t", Rows: 3, Columns: []sessiontest.Column{{Name: "id"}, {Name: "a"}}})
	m, err := session.New(ctx, session.Config{NoDiffCapture: true}, up.Dialer(), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s, err := m.Open(ctx, session.Options{User: "u", Mode: session.Transparent, Sandbox: "box"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ok, err := s.Run(ctx, session.Input{Text: "UPDATE app.t SET a = 1"}, nothingSent{}); !ok || err != nil {
		t.Fatalf("UPDATE: %v, %v", ok, err)
	}
	a := New(func(context.Context) (*session.Manager, error) { return m, nil })
	list, err := a.List(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "box" || list[0].Owner != "u" {
		t.Fatalf("List: %+v, %v", list, err)
	}
	if got, err := a.Show(ctx, "box"); err != nil || got.Name != "box" {
		t.Errorf("Show: %+v, %v", got, err)
	}
	if _, err := a.Show(ctx, "nope"); !errors.Is(err, adminapi.ErrNotFound) {
		t.Errorf("Show of no sandbox: %v, want ErrNotFound", err)
	}
	ttl := time.Hour
	if got, err := a.Keep(ctx, "box", &ttl); err != nil || got.State != "kept" || got.Expires == nil {
		t.Errorf("Keep: %+v, %v", got, err)
	}
	if got, err := a.Create(ctx, "fix", "u", &ttl); err != nil || got.State != "kept" || got.Owner != "u" || got.Connections != 0 {
		t.Errorf("Create: %+v, %v", got, err)
	}
	if _, err := a.Create(ctx, "box", "u", nil); !errors.Is(err, adminapi.ErrConflict) {
		t.Errorf("Create of a name taken: %v, want ErrConflict", err)
	}
	if _, err := a.Create(ctx, "no way", "u", nil); !errors.Is(err, adminapi.ErrBadRequest) {
		t.Errorf("Create of a bad name: %v, want ErrBadRequest", err)
	}
	if _, err := m.Open(ctx, session.Options{User: "v", Mode: session.Transparent, Sandbox: "fix"}); err == nil {
		t.Error("another user opened the sandbox made for u")
	}
	if fix, err := m.Open(ctx, session.Options{User: "u", Mode: session.Transparent, Sandbox: "fix"}); err != nil {
		t.Errorf("the owner could not open the sandbox made for it: %v", err)
	} else {
		fix.Close()
	}
	for _, o := range []adminapi.PromoteOptions{{Strategy: "FAIL"}, {Strategy: "ours", DryRun: true, Tables: []string{"app.t"}}} {
		if _, err := a.Promote(ctx, "box", o); !errors.Is(err, adminapi.ErrForbidden) {
			t.Errorf("Promote %+v without a promote account: %v, want ErrForbidden", o, err)
		}
	}
	for _, o := range []adminapi.PromoteOptions{{Tables: []string{"t"}}, {DryRun: true, Matching: "sha256:" + strings.Repeat("0", 64)},
		{Strategy: "mine"}} {
		if _, err := a.Promote(ctx, "box", o); !errors.Is(err, adminapi.ErrBadRequest) {
			t.Errorf("Promote %+v: %v, want ErrBadRequest", o, err)
		}
	}
	s.Close()
	if err := a.Discard(ctx, "box"); err != nil {
		t.Errorf("Discard: %v", err)
	}
	if _, err := a.Show(ctx, "box"); !errors.Is(err, adminapi.ErrNotFound) {
		t.Errorf("Show after Discard: %v, want ErrNotFound", err)
	}
	down := New(func(context.Context) (*session.Manager, error) { return nil, errors.New("upstream down") })
	if _, err := down.List(ctx); err == nil {
		t.Error("List without a manager succeeded")
	}
}

// nothingSent is an exchange that sends nothing upstream and relays an
// empty success: the statement's forks are what a test wants.
type nothingSent struct{}

func (nothingSent) Refuse(_ *session.Plan, err error) error { return err }
func (nothingSent) Answer(*session.Plan) error              { return nil }
func (nothingSent) Send(context.Context, *session.Plan, bool) error {
	return nil
}
func (nothingSent) Relay(context.Context, *session.Plan, *session.Relabel) (*session.Outcome, error) {
	return &session.Outcome{}, nil
}
