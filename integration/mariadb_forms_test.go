package integration

import (
	"context"
	"errors"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// TestSandboxMariaDBOperandForms: forms of MariaDB's grammar the proxy's
// parser does not take, read through a sandbox as the server reads them
// (MariaDB's func_like, precedence, subselect4, intersect, select and
// keywords tests): LIKE … ESCAPE of a placeholder or a subquery, LIKE …
// IN chains, IS tests chained, FROM DUAL HAVING, FROM t = alias, SHOW
// COLUMNS FROM t FROM db and DROP TABLE option reach the sandbox's
// tables; SELECT ALL DISTINCT and SET of an unknown variable get the
// server's own errors.
func TestSandboxMariaDBOperandForms(t *testing.T) {
	_, h := sandboxProxy(t, "transparent", nil)
	c := h.appConn(t)
	ctx := context.Background()
	mustExecC(t, c, "INSERT INTO users (name) VALUES ('sandbox%only')") // users is the sandbox's from here
	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		if err := c.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	for _, q := range []string{
		"SELECT COUNT(*) FROM users WHERE name LIKE 'sandbox|%%' ESCAPE '|' IS TRUE IS TRUE",
		"SELECT COUNT(*) FROM users = u WHERE u.name LIKE 'sandbox%' ESCAPE (SELECT MIN('|') FROM users) IN (1)",
		"SELECT COUNT(*) FROM users WHERE EXISTS ((SELECT 1 FROM DUAL HAVING users.name LIKE 'sandbox%'))",
	} {
		if n := count(q); n != 1 {
			t.Errorf("%s: %d rows, want the sandbox's one", q, n)
		}
	}
	if n := count("SELECT COUNT(*) FROM users WHERE name LIKE ? ESCAPE ?", "sandbox|%only", "|"); n != 1 {
		t.Errorf("LIKE ? ESCAPE ?: %d rows, want the sandbox's one", n)
	}
	rows, err := c.QueryContext(ctx, "SHOW COLUMNS FROM users FROM app LIKE 'name'")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		n++
	}
	rows.Close()
	if n != 1 {
		t.Errorf("SHOW COLUMNS FROM users FROM app: %d rows", n)
	}
	mustExecC(t, c, "CREATE TABLE option (option INT)")
	mustExecC(t, c, "DROP TABLE option")
	for q, want := range map[string]uint16{"SELECT ALL DISTINCT * FROM users": 1221, "SET option = 1": 1193} {
		_, err := c.ExecContext(ctx, q)
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != want {
			t.Errorf("%s: %v, want the server's %d", q, err, want)
		}
	}
}
