package capture

import (
	"context"
	"fmt"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
)

// Forget deletes the capture rows of the tables ts (all the sandbox's,
// when all) in sandbox id, whose forks a SANDBOX RESET dropped with their
// triggers and side tables: a table forked again starts a capture afresh.
func (m *Tracker) Forget(ctx context.Context, c sideconn.Conn, id string, ts []rewrite.Table, all bool) error {
	q := "DELETE FROM " + m.names.Q("captures") + " WHERE sandbox_id = " + quote.String(id)
	if all {
		if _, err := c.Exec(ctx, q); err != nil {
			return fmt.Errorf("forget the captures of the sandbox: %w", err)
		}
		return nil
	}
	for _, where := range registry.TableConditions(ts, 100) {
		if _, err := c.Exec(ctx, q+" AND ("+where+")"); err != nil {
			return fmt.Errorf("forget the captures of the sandbox: %w", err)
		}
	}
	return nil
}
