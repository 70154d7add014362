package session_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox/operator"
	"github.com/sqlfork/sqlfork-proxy/session"
)

// TestAdminDiffExportPromote: the admin API's DIFF, EXPORT and PROMOTE
// find the sandbox by name whoever owns it, a missing one is ErrNoSandbox
// as for Show, a strategy it does not know is refused before anything is
// read, and a PROMOTE without a promote account is ErrForbidden, the
// refusal SQL would get in its chain.
func TestAdminDiffExportPromote(t *testing.T) {
	e := newEnv(t, session.Config{}, nil)
	s := e.open(session.Options{User: "alice", Mode: session.Explicit, Sandbox: "ops"})
	e.mustPlan(s, "UPDATE t SET a = 1")
	for name, call := range map[string]func() error{
		"diff": func() error { _, err := e.m.Operator().Diff(e.ctx, "nosuch", true, nil); return err },
		"diff of one": func() error {
			_, err := e.m.Operator().Diff(e.ctx, "nosuch", false, &rewrite.Table{DB: "app", Name: "t"})
			return err
		},
		"export":       func() error { _, err := e.m.Operator().Export(e.ctx, "nosuch"); return err },
		"promote":      func() error { _, err := e.m.Operator().Promote(e.ctx, "nosuch", ""); return err },
		"promote ours": func() error { _, err := e.m.Operator().Promote(e.ctx, "nosuch", "ours"); return err },
	} {
		if err := call(); !errors.Is(err, operator.ErrNoSandbox) || err.Error() != `no such sandbox: "nosuch"` {
			t.Errorf("%s of a missing sandbox: %v", name, err)
		}
	}
	for _, strategy := range []string{"mine", "FAILS", " ours"} {
		_, err := e.m.Operator().Promote(e.ctx, "ops", strategy)
		if !errors.Is(err, operator.ErrStrategy) || !strings.Contains(err.Error(), "(FAIL, OURS or THEIRS)") {
			t.Errorf("PROMOTE by strategy %q: %v", strategy, err)
		}
	}
	for _, strategy := range []string{"", "fail", "Ours", "THEIRS"} {
		_, err := e.m.Operator().Promote(e.ctx, "ops", strategy)
		var r *rewrite.Refusal
		if !errors.Is(err, operator.ErrForbidden) || errors.Is(err, operator.ErrRefused) || !errors.As(err, &r) || r.Code != 1290 ||
			!strings.HasPrefix(err.Error(), "SANDBOX PROMOTE needs a promote account: ") {
			t.Errorf("PROMOTE by %q without a promote account: %v", strategy, err)
		}
	}
}
