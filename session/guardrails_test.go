package session

import (
	"errors"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"go.uber.org/zap"
)

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
