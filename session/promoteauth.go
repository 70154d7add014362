package session

import (
	"context"
	"fmt"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/grants"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox/review"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
)

// PROMOTE applies only what the promoting user's own account could do on
// production: the promote account carries the changes out, but each
// statement's privileges — on the table, its columns, its schema — must be
// the user's own, read from the grants of the session's connection (its
// account, its current role, PUBLIC; grants.Set). What is missing is refused
// by name before production is touched.

// promoteCheck is the session's check of a promote's needs against its own
// account's grants (nil without a connection).
func (s *Session) promoteCheck() review.PromoteCheck {
	c := s.ownConn()
	if c == nil {
		return nil
	}
	return func(ctx context.Context, needs []review.Need) error {
		gs, account, err := s.accountGrants(ctx, c)
		if err != nil {
			return fmt.Errorf("read your account's grants for PROMOTE: %w", err)
		}
		return review.MissingPrivileges(gs, account, needs)
	}
}

// resultModes read names in UTF-8 from the client's connection.
var resultModes = forker.Modes{Charset: "utf8mb4", Collation: "utf8mb4_general_ci", Results: "utf8mb4"}

// accountGrants reads the grants of the account c is logged in as (its
// own, its current role's, PUBLIC's) and its name (CURRENT_USER()).
func (s *Session) accountGrants(ctx context.Context, c forker.Conn) (gs grants.Set, account string, err error) {
	var lines []string
	err = forker.WithModes(ctx, c, resultModes, func() error {
		rows, err := c.Query(ctx, "SELECT CURRENT_USER()")
		if err != nil {
			return err
		}
		if len(rows) == 1 && len(rows[0]) == 1 {
			account = sideconn.Str(rows[0][0])
		}
		lines, err = grants.Show(ctx, c, "SHOW GRANTS")
		return err
	})
	return grants.NewSet(lines, s.m.names.CaseSensitive), account, err
}

// mayExecute refuses, as the server refuses a CALL (1370), the copy of
// production's routine db.name of kind PROCEDURE or FUNCTION for a
// session whose own account may not EXECUTE it: the copy runs with the
// proxy's account as its definer.
func (s *Session) mayExecute(ctx context.Context, kind, db, name string) error {
	c := s.ownConn()
	if c == nil || s.isProxyAccount(ctx) {
		return nil // the copy's definer is the session's own account
	}
	gs, account, err := s.accountGrants(ctx, c)
	if err != nil {
		return fmt.Errorf("read your account's grants for a copy of %s %s: %w", strings.ToLower(kind), quote.Ident(db)+"."+quote.Ident(name), err)
	}
	if gs.AllowsRoutine(kind, db, name) {
		return nil
	}
	user, host, _ := strings.Cut(account, "@")
	return rewrite.Refuse(errProcAccessDenied, "execute command denied to user '%s'@'%s' for routine '%s.%s'", user, host, db, name)
}

// errProcAccessDenied is MariaDB's ER_PROCACCESS_DENIED_ERROR.
const errProcAccessDenied = 1370
