package session

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// A sandbox can do no more than its user's own account: a fork copies a
// production table with the proxy's account, so before anything is copied
// the session's own account (the client's upstream connection) must be
// able to read all of it. The server itself answers: PREPARE of SELECT *
// of the table on the client's connection checks the account's privileges
// (table and column grants, roles, PUBLIC) without reading a row or holding
// a lock past the PREPARE, and a refusal reaches the client as the server
// words it (1142, 1143), as a direct SELECT would get it.

// readCheck checks that the session's account may read tables whole, the
// tables a fork of target copies; nil means no check (the manager's own
// work, tests without a connection).
type readCheck func(ctx context.Context, target rewrite.Table, tables []rewrite.Table) error

// readPrepared is the name of the statement the check prepares.
const readPrepared = "`_sqlfork_read_check`"

// checkModes are the settings the check runs with on the client's
// connection: its text, names included, is UTF-8 and read without
// ANSI_QUOTES or NO_BACKSLASH_ESCAPES, whatever the client set.
var checkModes = forker.Modes{SQLMode: "NO_ENGINE_SUBSTITUTION", Charset: "utf8mb4", Collation: "utf8mb4_general_ci"}

// readable is the session's readCheck (nil without an upstream connection).
func (s *Session) readable() readCheck {
	c := s.ownConn()
	if c == nil {
		return nil
	}
	return func(ctx context.Context, target rewrite.Table, tables []rewrite.Table) error {
		if len(tables) == 0 {
			return nil
		}
		return forker.WithModes(ctx, c, checkModes, func() error {
			for _, t := range tables {
				err := s.canRead(ctx, c, t)
				var r *rewrite.Refusal
				if errors.As(err, &r) && s.m.key(t) != s.m.key(target) {
					r.Message += fmt.Sprintf(" (the sandbox copies it with %s, which a foreign key or trigger connects it to; "+
						"a sandbox copies only what your account may read)", target)
				}
				if err != nil {
					return err
				}
			}
			return nil
		})
	}
}

// canRead checks that the connection c's account may SELECT every column of
// t, and that no temporary table of the connection hides t (the check would
// then be of the temporary table).
func (s *Session) canRead(ctx context.Context, c forker.Conn, t rewrite.Table) error {
	_, err := c.Exec(ctx, "PREPARE "+readPrepared+" FROM "+rewrite.QuoteString("SELECT * FROM "+t.Quoted()))
	if err == nil {
		if _, err := c.Exec(ctx, "DEALLOCATE PREPARE "+readPrepared); err != nil {
			return err
		}
		rows, err := c.Query(ctx, "SHOW CREATE TABLE "+t.Quoted())
		if err != nil {
			return err
		}
		if len(rows) == 1 && len(rows[0]) > 1 && strings.HasPrefix(str(rows[0][1]), "CREATE TEMPORARY TABLE") {
			return refusal(wire.ErOptionPreventsStatement, "HY000", "a temporary table of this connection hides %s, which the "+
				"sandbox must copy: the proxy cannot tell whether your account may read it; drop the temporary table first", t)
		}
		return nil
	}
	var me *mysql.MyError
	if !isServerError(err) || !errors.As(err, &me) {
		return err // the connection broke
	}
	if me.Code == wire.ErNoSuchTable {
		return nil // nothing to copy: the sandbox has no such table either
	}
	if exists, xerr := s.m.inProduction(ctx, t); xerr != nil || !exists {
		return xerr // not in production (the server refuses names the account has no rights in): nothing is copied
	}
	return &rewrite.Refusal{Code: me.Code, State: me.State, Message: me.Message}
}

// inProduction reports whether production has a table or view t, as the
// proxy's account sees it.
func (m *Manager) inProduction(ctx context.Context, t rewrite.Table) (bool, error) {
	exists := false
	err := m.withConn(ctx, func(c SideConn) error {
		_, _, err := forker.Size(ctx, c, t)
		switch {
		case err == nil:
			exists = true
		case errors.Is(err, forker.ErrNoSource):
		default:
			return err
		}
		return nil
	})
	return exists, err
}
