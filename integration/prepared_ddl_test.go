package integration

import (
	"context"
	"testing"
)

// TestPreparedDropKeepsRows: preparing a DROP or TRUNCATE (COM_STMT_PREPARE)
// changes nothing, in the sandbox as on a direct connection: until it is
// executed the table keeps its rows there. An execution that fails leaves
// them too.
func TestPreparedDropKeepsRows(t *testing.T) {
	_, h := sandboxProxy(t, "transparent", nil)
	ctx := context.Background()
	for _, stmt := range []string{"TRUNCATE TABLE users", "DROP TABLE users", "DROP TABLE IF EXISTS users, other.things"} {
		t.Run(stmt, func(t *testing.T) {
			c := h.appConn(t)
			ps, err := c.PrepareContext(ctx, stmt)
			if err != nil {
				t.Fatal(err)
			}
			defer ps.Close()
			var n int
			if err := c.QueryRowContext(ctx, "SELECT COUNT(*) FROM users").Scan(&n); err != nil || n != 3 {
				t.Errorf("after preparing %q the sandbox's users has %d rows (%v), want production's 3", stmt, n, err)
			}
			if err := c.QueryRowContext(ctx, "SELECT COUNT(*) FROM other.things").Scan(&n); err != nil || n != 2 {
				t.Errorf("after preparing %q the sandbox's other.things has %d rows (%v), want production's 2", stmt, n, err)
			}
			// SQL PREPARE (the text protocol) neither.
			if _, err := c.ExecContext(ctx, "PREPARE s FROM '"+stmt+"'"); err != nil {
				t.Fatal(err)
			}
			if err := c.QueryRowContext(ctx, "SELECT COUNT(*) FROM users").Scan(&n); err != nil || n != 3 {
				t.Errorf("after PREPARE of %q the sandbox's users has %d rows (%v), want production's 3", stmt, n, err)
			}
			// Executed, it does what it says, in the sandbox only.
			if _, err := ps.ExecContext(ctx); err != nil {
				t.Fatalf("execute %q: %v", stmt, err)
			}
			err = c.QueryRowContext(ctx, "SELECT COUNT(*) FROM users").Scan(&n)
			if stmt == "TRUNCATE TABLE users" && (err != nil || n != 0) || stmt != "TRUNCATE TABLE users" && mysqlErr(err) != "1146 (42S02) Table 'app.users' doesn't exist" {
				t.Errorf("after executing %q: %d rows, %v", stmt, n, err)
			}
			if err := openDB(t, h.db.DSN("app")).QueryRowContext(ctx, "SELECT COUNT(*) FROM users").Scan(&n); err != nil || n != 3 {
				t.Errorf("production's users has %d rows (%v) after the sandbox ran %q", n, err, stmt)
			}
		})
	}
}
