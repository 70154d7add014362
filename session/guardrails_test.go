package session

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"go.uber.org/zap"
)

func TestGuardrailsValidate(t *testing.T) {
	for _, tt := range []struct {
		g    Guardrails
		want string // "" when valid
	}{
		{Guardrails{}, ""},
		{Guardrails{DenyStatements: []string{"DDL", "write", "routine"}, StatementTimeout: time.Second, MaxRows: 1}, ""},
		{Guardrails{DenyStatements: []string{"sandbox"}}, `deny-statements: "sandbox" is not a statement class`},
		{Guardrails{DenyStatements: []string{"unparseable"}}, `"unparseable" is not a statement class`},
		{Guardrails{StatementTimeout: -time.Second}, "statement-timeout: must be >= 0"},
		{Guardrails{StatementTimeout: time.Microsecond}, "below the server's resolution"},
		{Guardrails{MaxRows: -1}, "max-rows"},
		{Guardrails{MaxForkBytes: -1}, "max-fork-bytes"},
		{Guardrails{MaxSandboxes: -1}, "max-sandboxes-per-user"},
	} {
		err := tt.g.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%+v: %v", tt.g, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%+v: got %v, want %q", tt.g, err, tt.want)
		}
	}
}

// TestGuardrailsPerUser: a user with guardrails of their own gets them,
// every other user the global ones, and SetLimits replaces both at once;
// the sandboxes-per-user cap counts the owner's sandboxes only.
func TestGuardrailsPerUser(t *testing.T) {
	m := &Manager{cfg: Config{Prefix: "_sqlfork"}}
	m.reg = registry.New(registry.Config{Prefix: "_sqlfork", SideConnections: 1, ForkQueueTimeout: time.Second}, nil, zap.NewNop(), m.userRoom)
	m.SetLimits(Config{Guardrails: Guardrails{MaxRows: 10, MaxSandboxes: 1},
		UserGuardrails: map[string]Guardrails{"alice": {MaxRows: 3, MaxSandboxes: 2}}})
	if g := m.guard("bob"); g.MaxRows != 10 {
		t.Errorf("bob: max rows %d, want the global 10", g.MaxRows)
	}
	if g := m.guard("alice"); g.MaxRows != 3 {
		t.Errorf("alice: max rows %d, want her 3", g.MaxRows)
	}
	refusedAt := func(owner string) int {
		for i := 1; i <= 5; i++ {
			if _, err := m.reg.NewSandbox("", owner); err != nil {
				var r *rewrite.Refusal
				if !errors.As(err, &r) || r.Code != 1226 || r.Reason != GuardMaxSandboxes {
					t.Errorf("%s: refused with %v", owner, err)
				}
				return i
			}
		}
		return 0
	}
	if n := refusedAt("bob"); n != 2 {
		t.Errorf("bob refused at sandbox %d, want 2", n)
	}
	if n := refusedAt("alice"); n != 3 {
		t.Errorf("alice refused at sandbox %d, want 3 (bob's do not count)", n)
	}
	m.SetLimits(Config{Guardrails: Guardrails{MaxRows: 7}})
	if g := m.guard("alice"); g.MaxRows != 7 || g.MaxSandboxes != 0 {
		t.Errorf("alice after reload: %+v, want the global guardrails", g.Guardrails)
	}
	if _, err := m.reg.NewSandbox("", "bob"); err != nil {
		t.Errorf("bob after reload lifted the cap: %v", err)
	}
}
