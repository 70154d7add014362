package session_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/session"
	"github.com/sqlfork/sqlfork-proxy/session/sessiontest"
)

// syntaxClient is a client's connection whose server rejects every
// PREPARE with a syntax error quoting near (unless it reads the text).
type syntaxClient struct {
	fakeClient
	reads bool
	near  string
}

func (f *syntaxClient) Query(ctx context.Context, sql string) (*session.Result, error) {
	if strings.HasPrefix(sql, "PREPARE ") && !f.reads {
		_, _ = f.fakeClient.Query(ctx, sql)
		return nil, sessiontest.Err(1064, "42000", "You have an error in your SQL syntax; check the manual that corresponds to "+
			"your MariaDB server version for the right syntax to use near '%s' at line 1", f.near)
	}
	return f.fakeClient.Query(ctx, sql)
}

// TestServerSyntaxError: a single statement the proxy's parser rejects
// that names a sandboxed table gets the server's own syntax error when the
// server rejects the client's text too (syntaxcheck.go); an input of
// several statements, which the server would run up to the bad one, and a
// text the server reads get the proxy's refusal (1105).
func TestServerSyntaxError(t *testing.T) {
	for _, c := range []struct {
		sql, near string
		code      uint16
	}{
		{"SELECT * FROM t WHERE", "", 1064},
		{"SELECT * FROM t WHERE WHERE id = 1", "WHERE id = 1", 1064},
		{"SELECT 1; SELECT * FROM t WHERE", "; SELECT * FROM t WHERE", 1105},
		{"SELECT * FROM t WHERE", "somewhere else", 1064},
	} {
		e := newEnv(t, session.Config{}, nil)
		f := &syntaxClient{near: c.near}
		s := e.open(session.Options{User: "u", Mode: session.Transparent, Upstream: f, DB: "app"})
		if _, err := s.PlanWith(e.ctx, "INSERT INTO t (id) VALUES (9)", rewrite.Options{DB: "app"}, false); err != nil {
			t.Fatal(err)
		}
		_, err := s.PlanWith(e.ctx, c.sql, rewrite.Options{DB: "app"}, false)
		code, _, msg, _ := sessiontest.Code(err)
		if code != c.code || code == 1064 && !strings.HasSuffix(msg, "near '"+c.near+"' at line 1") {
			t.Errorf("%q: %v, want %d", c.sql, err, c.code)
		}
	}
	// A text the server reads is prepared and dropped, and refused.
	e := newEnv(t, session.Config{}, nil)
	f := &syntaxClient{reads: true}
	s := e.open(session.Options{User: "u", Mode: session.Transparent, Upstream: f, DB: "app"})
	_, _ = s.PlanWith(e.ctx, "INSERT INTO t (id) VALUES (9)", rewrite.Options{DB: "app"}, false)
	_, err := s.PlanWith(e.ctx, "SELECT * FROM t FOR SYSTEM_TIME ALL", rewrite.Options{DB: "app"}, false)
	if code, _, _, _ := sessiontest.Code(err); code != 1105 || !strings.Contains(strings.Join(f.queries, ";"), "DEALLOCATE PREPARE") {
		t.Errorf("%v after %q", err, f.queries)
	}
}
