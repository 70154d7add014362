package session_test

import (
	"testing"

	"github.com/sqlfork/sqlfork-proxy/session"
)

// TestReviewCommandsName: SANDBOX DIFF, EXPORT and PROMOTE name the
// session's own sandbox or one the user owns — another user's is "no
// sandbox named" as one that does not exist — and outside any sandbox a
// name is needed; PROMOTE without a promote account is refused with what
// to start the proxy with.
func TestReviewCommandsName(t *testing.T) {
	e := newEnv(t, session.Config{}, nil)
	bob := e.open(tagged("bobs"))
	e.mustPlan(bob, "UPDATE app.t SET a = 1")
	alice := e.transparent("alice")
	outside := e.open(session.Options{User: "carol", Mode: session.Explicit})
	for _, c := range []struct {
		s          *session.Session
		sql        string
		code       uint16
		state, msg string
	}{
		{alice, "SANDBOX DIFF bobs", 1105, "HY000", `no sandbox named "bobs"`},
		{alice, "SANDBOX EXPORT nosuch", 1105, "HY000", `no sandbox named "nosuch"`},
		{alice, "SANDBOX PROMOTE bobs", 1105, "HY000", `no sandbox named "bobs"`},
		{outside, "SANDBOX DIFF", 1105, "HY000", "not in a sandbox"},
		{outside, "SANDBOX EXPORT", 1105, "HY000", "not in a sandbox"},
		{bob, "SANDBOX PROMOTE", 1290, "HY000", "needs a promote account"},
		{bob, "SANDBOX PROMOTE bobs STRATEGY OURS", 1290, "HY000", "needs a promote account"},
	} {
		_, err := plan(e.ctx, c.s, c.sql)
		wantCode(t, err, c.code, c.state, c.msg)
	}
}
