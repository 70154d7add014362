package session_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/session"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// readClient is a client's connection whose account may not read the
// tables named in denied (PREPARE gets the server's 1142), and which has a
// temporary table of each name in temporary.
type readClient struct {
	fakeClient
	denied, temporary []string
}

func (f *readClient) Query(ctx context.Context, sql string) (*session.Result, error) {
	for _, d := range f.denied {
		if strings.HasPrefix(sql, "PREPARE ") && strings.Contains(sql, d) {
			_, _ = f.fakeClient.Query(ctx, sql)
			return nil, serverErr{&mysql.MyError{Code: wire.ErTableAccessDenied, State: "42000",
				Message: "SELECT command denied to user 'bob'@'localhost' for table " + d}}
		}
	}
	for _, tmp := range f.temporary {
		if strings.HasPrefix(sql, "SHOW CREATE TABLE ") && strings.Contains(sql, tmp) {
			name, def := "t", "CREATE TEMPORARY TABLE `t` (`id` int)"
			return &session.Result{Rows: [][]*string{{&name, &def}}}, nil
		}
	}
	return f.fakeClient.Query(ctx, sql)
}

// TestForkNeedsTheAccountsRead: a fork copies a table with the proxy's
// account, so the session's own account must be able to read it whole
// first; when it cannot, the client gets the server's own 1142 and nothing
// is copied. A temporary table hiding the table is refused (the check
// would read the temporary table).
func TestForkNeedsTheAccountsRead(t *testing.T) {
	for _, c := range []struct {
		name              string
		denied, temporary []string
		code              uint16
	}{
		{name: "readable"},
		{name: "denied", denied: []string{"`app`.`t`"}, code: wire.ErTableAccessDenied},
		{name: "hidden by a temporary table", temporary: []string{"`app`.`t`"}, code: wire.ErOptionPreventsStatement},
		{name: "a missing table needs no read", denied: []string{"`app`.`nosuch`"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, session.Config{}, nil)
			f := &readClient{denied: c.denied, temporary: c.temporary}
			s := e.open(session.Options{User: "u", Mode: session.Transparent, Upstream: f, DB: "app"})
			id := e.idOf(s)
			sql := "UPDATE t SET a = 1"
			if strings.Contains(strings.Join(c.denied, ""), "nosuch") {
				sql = "CREATE TABLE nosuch (a INT)"
			}
			_, err := s.Plan(e.ctx, sql, false)
			var r *rewrite.Refusal
			switch {
			case c.code == 0 && err != nil:
				t.Fatalf("refused: %v", err)
			case c.code != 0 && (!errors.As(err, &r) || r.Code != c.code):
				t.Fatalf("got %v, want %d", err, c.code)
			case c.code != 0 && e.up.HasTable(physDB(id, "app"), "t"):
				t.Fatal("the table was copied")
			case c.name == "readable" && !e.up.HasTable(physDB(id, "app"), "t"):
				t.Fatal("the readable table was not forked")
			case c.code == wire.ErTableAccessDenied && !strings.Contains(r.Message, "SELECT command denied"):
				t.Errorf("not the server's message: %q", r.Message)
			}
		})
	}
}
