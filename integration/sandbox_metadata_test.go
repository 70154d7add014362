package integration

import (
	"context"
	"database/sql"
	"strings"
	"testing"
)

// scanStrings reads the current row as nullable strings.
func scanStrings(rows *sql.Rows) ([]sql.NullString, error) {
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	return scanRow[sql.NullString](rows, len(cols))
}

// TestSandboxMetadata: SHOW TABLES and information_schema present the
// sandbox's view of a database — created tables appear, dropped ones
// vanish, altered ones show their new columns — under logical names, and
// the proxy's own databases never appear.
func TestSandboxMetadata(t *testing.T) {
	db, h := sandboxProxy(t, "transparent", nil)
	root := openDB(t, db.DSN(""))
	c := h.appConn(t)
	prodTables := strings.Join(column(t, c, "SHOW TABLES"), ",")
	if prodTables != "users" {
		t.Fatalf("SHOW TABLES before any change: %q", prodTables)
	}
	mustExecC(t, c, "CREATE TABLE orders (id INT PRIMARY KEY, user_id INT, KEY (user_id))")
	mustExecC(t, c, "ALTER TABLE users ADD COLUMN nickname VARCHAR(20)")
	if got := strings.Join(column(t, c, "SHOW TABLES"), ","); got != "orders,users" {
		t.Errorf("SHOW TABLES: %q, want orders,users", got)
	}
	if got := strings.Join(column(t, c, "SHOW FULL TABLES FROM app LIKE 'ord%'"), ","); got != "orders" {
		t.Errorf("SHOW FULL TABLES LIKE: %q", got)
	}
	if got := strings.Join(column(t, c, "SHOW TABLES WHERE Tables_in_app <> 'users'"), ","); got != "orders" {
		t.Errorf("SHOW TABLES WHERE: %q", got)
	}
	if got := strings.Join(column(t, c, "SHOW TABLE STATUS LIKE 'orders'"), ","); got != "orders" {
		t.Errorf("SHOW TABLE STATUS: %q", got)
	}
	// information_schema, as ORMs query it.
	for q, want := range map[string]string{
		"SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'app' ORDER BY 1":                                                                                                                               "orders,users",
		"SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE'":                                                                                                       "",
		"SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'app' AND TABLE_NAME = 'users' AND COLUMN_NAME = 'nickname'":                                                                                  "nickname",
		"SELECT DISTINCT INDEX_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'app' AND TABLE_NAME = 'orders' ORDER BY 1":                                                                                        "PRIMARY,user_id",
		"SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE '\\_sqlfork%'":                                                                                                                                "0",
		"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA LIKE '\\_sqlfork%'":                                                                                                                                 "0",
		"SELECT t.TABLE_NAME FROM information_schema.TABLES t JOIN information_schema.COLUMNS c ON c.TABLE_SCHEMA = t.TABLE_SCHEMA AND c.TABLE_NAME = t.TABLE_NAME WHERE t.TABLE_SCHEMA = 'app' AND c.COLUMN_NAME = 'user_id'": "orders",
		"SELECT CONSTRAINT_TYPE FROM information_schema.TABLE_CONSTRAINTS WHERE TABLE_SCHEMA = 'app' AND TABLE_NAME = 'orders'":                                                                                                "PRIMARY KEY",
	} {
		got := strings.Join(column(t, c, q), ",")
		if strings.Contains(q, "DATABASE()") {
			want = "orders,users"
			got = strings.Join(sortedCopy(column(t, c, q)), ",")
		}
		if got != want {
			t.Errorf("%s\n got %q, want %q", q, got, want)
		}
	}
	mustExecC(t, c, "DROP TABLE users")
	if got := strings.Join(column(t, c, "SHOW TABLES"), ","); got != "orders" {
		t.Errorf("SHOW TABLES after DROP TABLE users: %q, want orders", got)
	}
	if got := strings.Join(column(t, c, "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'app'"), ","); got != "orders" {
		t.Errorf("information_schema.TABLES after DROP: %q", got)
	}
	// Another session (another sandbox) and production see production.
	c2 := h.appConn(t)
	if got := strings.Join(column(t, c2, "SHOW TABLES"), ","); got != "users" {
		t.Errorf("another sandbox's SHOW TABLES: %q", got)
	}
	if got := strings.Join(column(t, root, "SHOW TABLES FROM app"), ","); got != "users" {
		t.Errorf("production SHOW TABLES: %q", got)
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// TestSandboxForeignKeys: a foreign key created in a sandbox points at the
// sandbox's copy of the parent (forked for it), and violations fail as on
// a direct connection; production's parent is never constrained by it.
func TestSandboxForeignKeys(t *testing.T) {
	db, h := sandboxProxy(t, "transparent", nil)
	c := h.appConn(t)
	mustExecC(t, c, "CREATE TABLE posts (id INT PRIMARY KEY, user_id INT, FOREIGN KEY (user_id) REFERENCES users(id))")
	mustExecC(t, c, "INSERT INTO posts VALUES (1, 1)")
	_, err := c.ExecContext(context.Background(), "INSERT INTO posts VALUES (2, 999)")
	if e := mysqlErr(err); !strings.HasPrefix(e, "1452") || strings.Contains(e, "_sqlfork") {
		t.Errorf("FK violation: %s, want 1452 naming only logical names", e)
	}
	_, err = c.ExecContext(context.Background(), "DELETE FROM users WHERE id = 1")
	if e := mysqlErr(err); !strings.HasPrefix(e, "1451") {
		t.Errorf("deleting a referenced parent in the sandbox: %s, want 1451", e)
	}
	got := column(t, c, "SELECT REFERENCED_TABLE_SCHEMA FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = 'app' AND TABLE_NAME = 'posts' AND REFERENCED_TABLE_NAME = 'users'")
	if strings.Join(got, ",") != "app" {
		t.Errorf("information_schema.KEY_COLUMN_USAGE: referenced schema %q, want app", got)
	}
	// Production has no new table and its users rows carry no constraint.
	root := openDB(t, db.DSN(""))
	wantString(t, root, "SELECT COUNT(*) FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE REFERENCED_TABLE_NAME = 'users' AND UNIQUE_CONSTRAINT_SCHEMA = 'app'", "0", "%s foreign keys in the server reference production app.users")
}

// TestSandboxDriverChatter: what drivers and ORMs send around their
// statements works in a sandbox.
func TestSandboxDriverChatter(t *testing.T) {
	_, h := sandboxProxy(t, "transparent", nil)
	c := h.appConn(t)
	for _, q := range []string{
		"SET NAMES utf8mb4",
		"SET SESSION sql_mode = 'STRICT_TRANS_TABLES,NO_ZERO_DATE'",
		"SET autocommit = 1",
		"SELECT @@version, @@tx_isolation, DATABASE(), CONNECTION_ID()",
		"SHOW VARIABLES LIKE 'lower_case_table_names'",
		"SHOW SESSION STATUS LIKE 'Uptime'",
		"DROP TABLE IF EXISTS nothing_here, nor_here",
		"CREATE TABLE kv (k VARCHAR(10) PRIMARY KEY, v INT)",
		"DROP TABLE IF EXISTS nothing_here, kv",
		"CREATE TABLE kv (k VARCHAR(10) PRIMARY KEY, v INT)",
		"INSERT INTO kv VALUES ('a', 1) ON DUPLICATE KEY UPDATE v = v + 1 RETURNING k, v",
		"INSERT INTO kv VALUES ('a', 1) ON DUPLICATE KEY UPDATE v = v + 1 RETURNING k, v",
		"BEGIN",
		"SAVEPOINT sp1",
		"UPDATE kv SET v = 100",
		"ROLLBACK TO SAVEPOINT sp1",
		"RELEASE SAVEPOINT sp1",
		"COMMIT",
	} {
		rows, err := c.QueryContext(context.Background(), q)
		if err != nil {
			t.Errorf("%s: %s", q, mysqlErr(err))
			continue
		}
		for rows.Next() {
		}
		rows.Close()
	}
	mustExecC(t, c, "DROP TABLE IF EXISTS app.never_was")
	rows, err := c.QueryContext(context.Background(), "SHOW WARNINGS")
	if err != nil {
		t.Fatal(mysqlErr(err))
	}
	var msgs []string
	for rows.Next() {
		var level, code, msg string
		if err := rows.Scan(&level, &code, &msg); err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, code+" "+msg)
	}
	rows.Close()
	if len(msgs) != 1 || !strings.HasPrefix(msgs[0], "1051 ") || !strings.Contains(msgs[0], "app.never_was") || strings.Contains(msgs[0], "_sqlfork") {
		t.Errorf("SHOW WARNINGS after DROP TABLE IF EXISTS: %q, want 1051 naming app.never_was", msgs)
	}
	wantString(t, c, "SELECT v FROM kv WHERE k = 'a'", "2", "kv.a = %q, want 2 (the savepoint's update rolled back)")
}
