package session

import (
	"context"
	"fmt"

	"github.com/sqlfork/sqlfork-proxy/grants"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
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
func (s *Session) readable() grants.ReadCheck {
	c := s.ownConn()
	if c == nil {
		return nil
	}
	return func(ctx context.Context) (grants.Reader, error) {
		if s.isProxyAccount(ctx) {
			return grants.Reader{All: true}, nil
		}
		gs, account, err := s.accountGrants(ctx, c)
		if err != nil {
			return grants.Reader{}, fmt.Errorf("read your account's grants before a fork: %w", err)
		}
		return grants.Reader{Set: gs, Account: account}, nil
	}
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
	if err != nil || rg.All {
		return err
	}
	var tables []rewrite.Table
	for _, e := range sb.Entries() {
		switch e.Kind {
		case sandbox.KindFork, sandbox.KindSchema, sandbox.KindDropped:
			tables = append(tables, e.Logical)
		}
	}
	return s.m.reg.WithConn(ctx, func(c SideConn) error { return grants.MayRead(ctx, c, rg, rewrite.Table{}, tables, s.m.names.Key) })
}
