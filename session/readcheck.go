package session

import (
	"context"
	"fmt"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/grants"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// A sandbox can do no more than its user's own account: a fork copies a
// production table with the proxy's account, so before anything is copied
// the session's own account must be able to read all of it. The answer is
// read from the account's grants (SHOW GRANTS on the client's connection:
// the account, its current role, PUBLIC; grants.Set), which leaves the
// connection's warnings and state as they were, against the table's
// columns as the proxy's account sees them (on the fork's side
// connection), and a refusal reaches the client worded as the server words
// a denied SELECT (1142).

// readCheck reads the grants of the session's account (nil: no check, the
// manager's own work, tests without a connection).
type readCheck func(ctx context.Context) (readGrants, error)

// readGrants are an account's grants and name, as a fork checks them;
// all: the account is the proxy's, which reads whatever it copies.
type readGrants struct {
	gs      grants.Set
	account string // user@host
	all     bool
}

// isProxyAccount reports whether the session's connection is logged in as
// the proxy's own upstream account (what its side connections do is then
// what the session's account may do).
func (s *Session) isProxyAccount(ctx context.Context) bool {
	proxy := s.m.proxyAccount()
	if proxy == "" || s.up == nil {
		return false
	}
	if s.account == "" {
		r, err := s.up.Query(ctx, "SELECT CURRENT_USER()")
		if err != nil || len(r.Rows) != 1 || len(r.Rows[0]) != 1 {
			return false
		}
		s.account = sideconn.Str(r.Rows[0][0])
	}
	return s.account == proxy
}

// readable is the session's readCheck: nil without an upstream
// connection, or when the session's account is the proxy's own, which
// copies nothing it could not read itself.
func (s *Session) readable() readCheck {
	c := s.ownConn()
	if c == nil {
		return nil
	}
	return func(ctx context.Context) (readGrants, error) {
		if s.isProxyAccount(ctx) {
			return readGrants{all: true}, nil
		}
		gs, account, err := s.accountGrants(ctx, c)
		if err != nil {
			return readGrants{}, fmt.Errorf("read your account's grants before a fork: %w", err)
		}
		return readGrants{gs: gs, account: account}, nil
	}
}

// mayRead refuses the first of tables, which a fork of target copies, that
// production has and the account may not read whole; c is a side
// connection.
func (m *Manager) mayRead(ctx context.Context, c SideConn, rg readGrants, target rewrite.Table, tables []rewrite.Table) error {
	if rg.all {
		return nil
	}
	for _, t := range tables {
		rows, err := c.Query(ctx, "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = "+quote.String(t.DB)+
			" AND TABLE_NAME = "+quote.String(t.Name)+" ORDER BY ORDINAL_POSITION")
		if err != nil {
			return fmt.Errorf("read the columns of %s: %w", t, err)
		}
		cols := make([]string, len(rows))
		for i, r := range rows {
			cols[i] = sideconn.Str(r[0])
		}
		if len(cols) == 0 || rg.gs.Allows("SELECT", t.DB, t.Name, cols) {
			continue // production has no such table (nothing is copied), or it may be read
		}
		user, host, _ := strings.Cut(rg.account, "@")
		r := rewrite.ServerRefusal(wire.ErTableAccessDenied, "SELECT command denied to user '%s'@'%s' for table %s", user, host, t.Quoted())
		if target != (rewrite.Table{}) && m.names.Key(t) != m.names.Key(target) {
			r.Message += fmt.Sprintf(" (the sandbox copies it with %s, which a foreign key or trigger connects it to; "+
				"a sandbox copies only what your account may read)", target)
		}
		return r
	}
	return nil
}

// mayReadSandbox refuses SANDBOX DIFF, EXPORT and PROMOTE, which read
// production's rows of the sandbox's tables with the proxy's account, when
// the session's own account may not read one of those tables whole (any
// more: grants may have been taken back since the fork).
func (s *Session) mayReadSandbox(ctx context.Context, sb *Sandbox) error {
	rd := s.readable()
	if rd == nil {
		return nil
	}
	rg, err := rd(ctx)
	if err != nil || rg.all {
		return err
	}
	var tables []rewrite.Table
	for _, e := range sb.Entries() {
		switch e.Kind {
		case sandbox.KindFork, sandbox.KindSchema, sandbox.KindDropped:
			tables = append(tables, e.Logical)
		}
	}
	return s.m.reg.WithConn(ctx, func(c SideConn) error { return s.m.mayRead(ctx, c, rg, rewrite.Table{}, tables) })
}
