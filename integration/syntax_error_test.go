package integration

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// TestSandboxServerSyntaxError: in a sandbox, a statement the proxy cannot
// parse gets the server's own error when MariaDB rejects it too (1064 for a
// syntax error, 1273 for an unknown collation), and the proxy's refusal
// when MariaDB reads it; in a transaction the server is not asked.
func TestSandboxServerSyntaxError(t *testing.T) {
	_, h := sandboxProxy(t, "transparent", nil)
	c := h.appConn(t)
	code := func(q string) (uint16, string) {
		t.Helper()
		_, err := c.ExecContext(context.Background(), q)
		var me *mysql.MySQLError
		if !errors.As(err, &me) {
			t.Fatalf("%s: %v, want a server error", q, err)
		}
		return me.Number, me.Message
	}
	mustExecC(t, c, "UPDATE users SET name = name WHERE id = 0") // users is the sandbox's: its statements are read
	if n, msg := code("DELETE FROM users WHERE name = 'x' ORDER"); n != 1064 || !strings.Contains(msg, "SQL syntax") {
		t.Errorf("a syntax error: %d %s, want MariaDB's 1064", n, msg)
	}
	if n, msg := code("UPDATE users SET name = 'x' COLLATE nonesuch_ci WHERE id = 1 FOR SYSTEM_TIME ALL"); n != 1064 && n != 1273 {
		t.Errorf("a statement the server rejects: %d %s", n, msg)
	}
	if n, msg := code("SELECT * FROM users FOR SYSTEM_TIME ALL"); n == 1064 || !strings.Contains(msg, "sqlfork-proxy") {
		t.Errorf("a statement MariaDB reads: %d %s, want the proxy's refusal", n, msg)
	}
	mustExecC(t, c, "BEGIN")
	if n, msg := code("DELETE FROM users WHERE name = 'x' ORDER"); n == 1064 || !strings.Contains(msg, "sqlfork-proxy") {
		t.Errorf("in a transaction: %d %s, want the proxy's refusal", n, msg)
	}
	mustExecC(t, c, "ROLLBACK")
}

// TestSandboxServerErrors: in a sandbox, statements the proxy refuses
// unread get the server's own error when MariaDB rejects their text
// whatever the sandbox holds, as it does on a direct connection: a
// subquery where the statement takes none (1970), a name in GET
// DIAGNOSTICS (1054), a system variable given a qualified name (1232), a
// syntax error in a function's or a prepared trigger's body (1064), an
// engine the server does not have (1286).
func TestSandboxServerErrors(t *testing.T) {
	_, h := sandboxProxy(t, "transparent", nil)
	c := h.appConn(t)
	mustExecC(t, c, "UPDATE users SET name = name WHERE id = 0") // users is the sandbox's
	for _, q := range []struct {
		sql  string
		code uint16
	}{
		{"HANDLER users READ `PRIMARY` = ((SELECT 1))", 1970},
		{"EXECUTE IMMEDIATE 'SELECT ?' USING (1 IN (SELECT id FROM users))", 1970},
		{"GET DIAGNOSTICS CONDITION p1() @var = CLASS_ORIGIN", 1054},
		{"SET default_storage_engine = .a.MyISAM", 1232},
		{"CREATE FUNCTION f1 (lo INT, hi INT) RETURNS INT\nBEGIN\n  FOR i IN lo . . hi\n  DO\n    NULL\n  END FOR;\n  RETURN 0;\nEND", 1064},
		{`PREPARE stmt FROM 'CREATE TRIGGER tr AFTER DELETE ON users FOR EACH ROW SET @a = 1\\'`, 1064},
		// An engine the server does not have: its 1286, not the proxy's
		// refusal of an engine it cannot confine.
		{`set default_storage_engine = "a.MYISAM"`, 1286},
	} {
		_, err := c.ExecContext(context.Background(), q.sql)
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != q.code || strings.Contains(me.Message, "sqlfork") {
			t.Errorf("%s: %v, want MariaDB's %d", q.sql, err, q.code)
		}
	}
	// An engine the server has (MERGE, MRG_MyISAM's alias) is the proxy's
	// refusal.
	if _, err := c.ExecContext(context.Background(), "SET default_storage_engine = MERGE"); err == nil || !strings.Contains(err.Error(), "sqlfork-proxy") {
		t.Errorf("an engine the proxy cannot confine: %v", err)
	}
	// A function's body the server reads is still refused by the proxy.
	_, err := c.ExecContext(context.Background(), "CREATE FUNCTION f2 () RETURNS INT\nBEGIN\n  FOR i IN 1 .. (SELECT 2) DO SET @x = i; END FOR;\n  RETURN 0;\nEND")
	if err != nil && !strings.Contains(err.Error(), "sqlfork-proxy") {
		t.Errorf("a body MariaDB reads: %v", err)
	}
}
