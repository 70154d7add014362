package session_test

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/session"
)

// TestXAInSandbox: XA statements run in a sandbox with the sandbox's own
// transaction ids; XA RECOVER is the proxy's to answer; forms it cannot
// keep apart are refused.
func TestXAInSandbox(t *testing.T) {
	e := newEnv(t, session.Config{}, nil)
	s, id, _ := e.transparentApp()
	want := "X'" + hex.EncodeToString([]byte(sandbox.XAPrefix(id)+"g1")) + "'"
	for _, q := range []string{"XA START 'g1'", "XA END 'g1'", "XA PREPARE 'g1'", "XA COMMIT 'g1'", "XA ROLLBACK 'g1'", "XA BEGIN 'g1', 'b', 3"} {
		p := e.mustPlan(s, q)
		if !strings.Contains(p.SQL, want) || strings.Contains(p.SQL, "'g1'") {
			t.Errorf("%s sent as %q, want the id %s", q, p.SQL, want)
		}
	}
	// XA RECOVER, answered on the client's connection, is tested against a
	// server (integration/xa_test.go).
	for _, q := range []string{"XA RECOVER; SELECT 1", "XA START _latin1'g'", "PREPARE s FROM 'XA RECOVER'"} {
		if p, err := plan(e.ctx, s, q); err == nil {
			t.Errorf("%s: not refused (sent %q, answered %v)", q, p.SQL, p.Answered())
		}
	}
	if _, err := s.PlanWith(e.ctx, "XA RECOVER", rewrite.Options{DB: "app"}, true); err == nil {
		t.Error("XA RECOVER prepared: not refused")
	}
}
