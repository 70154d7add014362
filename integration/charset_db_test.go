package integration

import (
	"context"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// TestSandboxNonASCIICurrentDatabase: a current database whose name is not
// ASCII, made current by USE or by the handshake in a single-byte client
// character set, is the database the server makes current. The client's
// latin1 bytes C3 A4 name `Ã¤` on the server; read as UTF-8 they would name
// `ä`, where the proxy would find no stored function f and send the call
// unrewritten, to production's f, which writes production. The sandbox runs
// its copy of f instead, and production stays as it is.
func TestSandboxNonASCIICurrentDatabase(t *testing.T) {
	db, least := sandboxProxy(t, "transparent", nil)
	all := startTestProxy(t, db.Addr, db, func(c *proxy.Config) { c.Mode = "transparent" })
	grantProcRead(t, db)
	root := openDB(t, directDSN(db, "", "multiStatements=true"))
	mustExecDB(t, root, "DROP DATABASE IF EXISTS `Ã¤`; DROP DATABASE IF EXISTS `ä`")
	mustExecDB(t, root, "CREATE DATABASE `Ã¤`; CREATE TABLE `Ã¤`.t1 (a INT) ENGINE=InnoDB; INSERT INTO `Ã¤`.t1 VALUES (1);"+
		"CREATE FUNCTION `Ã¤`.f() RETURNS INT MODIFIES SQL DATA BEGIN UPDATE t1 SET a = a + 1000; RETURN 1; END;"+
		"CREATE TABLE `Ã¤`.`Ã¶` (a INT)")
	// The least-privilege account reads production, as it does app's.
	mustExecDB(t, root, "GRANT SELECT, EXECUTE ON `Ã¤`.* TO '"+sandboxUser+"'@'%'")
	t.Cleanup(func() {
		_, _ = root.Exec("REVOKE SELECT, EXECUTE ON `Ã¤`.* FROM '" + sandboxUser + "'@'%'")
		_, _ = root.Exec("DROP DATABASE IF EXISTS `Ã¤`")
	})
	production := func(t *testing.T) {
		t.Helper()
		var a int
		if err := root.QueryRow("SELECT a FROM `Ã¤`.t1").Scan(&a); err != nil || a != 1 {
			t.Fatalf("production's `Ã¤`.t1: a = %d (%v), want 1", a, err)
		}
	}
	// COM_FIELD_LIST names its table in the client's bytes too: the
	// sandbox's copy, altered, is listed, not production's table.
	t.Run("field-list", func(t *testing.T) {
		r := dialRaw(t, least.addr, sandboxUser, sandboxPassword, "")
		for _, q := range []string{"SET NAMES latin1", "USE `\xc3\xa4`", "ALTER TABLE `\xc3\xb6` ADD COLUMN b INT"} {
			if _, err := r.c.Execute(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		fields, err := r.c.FieldList("\xc3\xb6", "")
		if err != nil {
			t.Fatalf("COM_FIELD_LIST: %v", err)
		}
		var names []string
		for _, f := range fields {
			names = append(names, string(f.Name))
		}
		if strings.Join(names, ",") != "a,b" {
			t.Errorf("COM_FIELD_LIST of the altered table: %v, want a,b (the sandbox's)", names)
		}
	})
	ctx := context.Background()
	direct := conn(t, openDB(t, directDSN(db, "\xc3\xa4", "charset=latin1", "collation=latin1_swedish_ci")))
	for _, acct := range []struct{ name, dsn string }{
		{"all-privileges", all.dsn("")}, {"least-privilege", least.userDSN(sandboxUser, "")},
	} {
		for _, how := range []string{"use", "handshake"} {
			t.Run(acct.name+"/"+how, func(t *testing.T) {
				dsn := withParams(acct.dsn, []string{"charset=latin1"})
				if how == "handshake" {
					dsn = withParams(acct.dsn+"\xc3\xa4", []string{"charset=latin1", "collation=latin1_swedish_ci"})
				}
				c := conn(t, openDB(t, dsn))
				if how == "use" {
					if _, err := c.ExecContext(ctx, "USE `\xc3\xa4`"); err != nil {
						t.Fatalf("USE: %v", err)
					}
				}
				var got string
				if err := c.QueryRowContext(ctx, "SELECT HEX(CONVERT(DATABASE() USING utf8mb4))").Scan(&got); err != nil || got != "C383C2A4" {
					t.Fatalf("DATABASE() in UTF-8: %q (%v), want C383C2A4 (`Ã¤`)", got, err)
				}
				var one, a int
				if err := c.QueryRowContext(ctx, "SELECT f()").Scan(&one); err != nil {
					t.Fatalf("SELECT f(): %v", err)
				}
				production(t)
				if err := c.QueryRowContext(ctx, "SELECT a FROM t1").Scan(&a); err != nil || a != 1001 {
					t.Errorf("the sandbox's t1: a = %d (%v), want 1001", a, err)
				}
				// Answers the proxy makes itself name the database too.
				for _, q := range []string{"SHOW TABLES", "SHOW FULL TABLES", "SHOW TABLES LIKE '%'", "SHOW TABLE STATUS", "SHOW TRIGGERS",
					"SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() ORDER BY 1"} {
					got, want := diffOutcome(ctx, c, q, nil, true), diffOutcome(ctx, direct, q, nil, true)
					if q == "SHOW TABLE STATUS" { // sizes and times differ
						if g, w := strings.Count(got, "|"), strings.Count(want, "|"); g != w {
							t.Errorf("%s: %d rows, directly %d", q, g, w)
						}
						continue
					}
					if got != want {
						t.Errorf("%s:\n got    %s\n direct %s", q, got, want)
					}
				}
				// The server's errors name the sandbox's database in the
				// results' latin1: told back as on a direct connection.
				for _, q := range []string{"INSERT INTO nosuch VALUES (1)", "CALL nosuch()", "SELECT * FROM t1 WHERE nosuch = 1"} {
					_, err := c.ExecContext(ctx, q)
					_, want := direct.ExecContext(ctx, q)
					if err == nil || want == nil || err.Error() != want.Error() {
						t.Errorf("%s: %v, directly %v", q, err, want)
					}
				}
			})
		}
	}
}
