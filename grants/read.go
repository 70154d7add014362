package grants

import (
	"context"
	"fmt"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// ReadCheck reads the grants of the session's account (nil: no check, the
// manager's own work, tests without a connection).
type ReadCheck func(ctx context.Context) (Reader, error)

// Reader is an account's grants and name, as a fork checks them; All:
// the account is the proxy's, which reads whatever it copies.
type Reader struct {
	Set     Set
	Account string // user@host
	All     bool
}

// MayRead refuses the first of tables, which a fork of target copies, that
// production has and the account may not read whole; c is a side
// connection; key compares table names as the server does.
func MayRead(ctx context.Context, c sideconn.Conn, rg Reader, target rewrite.Table, tables []rewrite.Table, key func(rewrite.Table) string) error {
	if rg.All {
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
		if len(cols) == 0 || rg.Set.Allows("SELECT", t.DB, t.Name, cols) {
			continue // production has no such table (nothing is copied), or it may be read
		}
		user, host, _ := strings.Cut(rg.Account, "@")
		r := rewrite.ServerRefusal(wire.ErTableAccessDenied, "SELECT command denied to user '%s'@'%s' for table %s", user, host, t.Quoted())
		if target != (rewrite.Table{}) && key(t) != key(target) {
			r.Message += fmt.Sprintf(" (the sandbox copies it with %s, which a foreign key or trigger connects it to; "+
				"a sandbox copies only what your account may read)", target)
		}
		return r
	}
	return nil
}
