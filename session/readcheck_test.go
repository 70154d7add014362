package session_test

import (
	"cmp"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/session"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// grantsClient is a client's connection whose account holds grants.
type grantsClient struct {
	fakeClient
	grants []string
	user   string // CURRENT_USER(): bob@localhost unless set
}

func (f *grantsClient) Query(ctx context.Context, sql string) (*session.Result, error) {
	switch sql {
	case "SHOW GRANTS":
		_, _ = f.fakeClient.Query(ctx, sql)
		var rows [][]*string
		for _, g := range f.grants {
			rows = append(rows, []*string{&g})
		}
		return &session.Result{Rows: rows}, nil
	case "SELECT CURRENT_USER()":
		u := cmp.Or(f.user, "bob@localhost")
		return &session.Result{Rows: [][]*string{{&u}}}, nil
	}
	return f.fakeClient.Query(ctx, sql)
}

// TestForkNeedsTheAccountsRead: a fork copies a table with the proxy's
// account, so the session's own account must be able to read it whole
// first, by its grants; when it cannot, the client gets 1142 as the server
// words it, nothing is copied, and the connection ran nothing that leaves
// a warning (PREPARE, SHOW CREATE would clear the client's).
func TestForkNeedsTheAccountsRead(t *testing.T) {
	for _, c := range []struct {
		name, sql string
		grants    []string
		code      uint16
		user      string
	}{
		{"the proxy's own account reads what it copies", "UPDATE t SET a = 1", nil, 0, "sqlfork@%"},
		{"schema grant", "UPDATE t SET a = 1", []string{"GRANT SELECT ON `app`.* TO `bob`@`localhost`"}, 0, ""},
		{"table grant", "UPDATE t SET a = 1", []string{"GRANT SELECT ON `app`.`t` TO `bob`@`localhost`"}, 0, ""},
		{"all columns", "UPDATE t SET a = 1", []string{"GRANT SELECT (`id`, `a`, `g`) ON `app`.`t` TO `bob`@`localhost`"}, 0, ""},
		{"some columns", "UPDATE t SET a = 1", []string{"GRANT SELECT (`id`) ON `app`.`t` TO `bob`@`localhost`"}, wire.ErTableAccessDenied, ""},
		{"another table", "UPDATE t SET a = 1", []string{"GRANT SELECT ON `app`.`u` TO `bob`@`localhost`"}, wire.ErTableAccessDenied, ""},
		{"none", "DELETE FROM t WHERE 1 = 0", nil, wire.ErTableAccessDenied, ""},
		{"a new table needs no read", "CREATE TABLE nosuch (a INT)", nil, 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, session.Config{}, nil)
			f := &grantsClient{grants: c.grants, user: c.user}
			s := e.open(session.Options{User: "u", Mode: session.Transparent, Upstream: f, DB: "app"})
			id := e.idOf(s)
			_, err := s.Plan(e.ctx, c.sql, false)
			var r *rewrite.Refusal
			switch {
			case c.code == 0 && err != nil:
				t.Fatalf("refused: %v", err)
			case c.code != 0 && (!errors.As(err, &r) || r.Code != c.code):
				t.Fatalf("got %v, want %d", err, c.code)
			case c.code != 0 && e.up.HasTable(physDB(id, "app"), "t"):
				t.Fatal("the table was copied")
			case c.code != 0 && r.Message != "SELECT command denied to user 'bob'@'localhost' for table `app`.`t`":
				t.Errorf("not the server's wording: %q", r.Message)
			case c.code == 0 && strings.HasPrefix(c.sql, "UPDATE") && !e.up.HasTable(physDB(id, "app"), "t"):
				t.Fatal("the readable table was not forked")
			}
			for _, q := range f.queries {
				if strings.HasPrefix(q, "PREPARE") || strings.HasPrefix(q, "SHOW CREATE") || c.user != "" && q == "SHOW GRANTS" {
					t.Errorf("ran %q on the client's connection", q)
				}
			}
		})
	}
}
