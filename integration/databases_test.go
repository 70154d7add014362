package integration

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// dbNames lists the databases SHOW DATABASES gives on c, joined by ",".
func dbNames(t *testing.T, c rowQuerier) string {
	t.Helper()
	_, rows := queryRows(t, c, "SHOW DATABASES")
	var out []string
	for _, r := range rows {
		out = append(out, r[0].String)
	}
	return strings.Join(out, ",")
}

// wantErr requires q on c to fail with the server error prefix (number,
// state and the start of the message, as mysqlErr writes it).
func wantErr(t *testing.T, c execer, q, prefix string) {
	t.Helper()
	if _, err := c.ExecContext(context.Background(), q); !strings.HasPrefix(mysqlErr(err), prefix) {
		t.Errorf("%s: %q, want %q", q, mysqlErr(err), prefix)
	}
}

// TestSandboxDatabases: a sandbox makes, uses and drops databases of its
// own, as on a private server, with either upstream account: CREATE
// DATABASE makes one only the sandbox sees (SHOW DATABASES,
// information_schema, DATABASE(), USE, COM_INIT_DB, a login naming it, the
// server's errors in its name), DROP DATABASE drops one it made or hides
// one of production's, which it may make again empty. DIFF shows them,
// EXPORT writes them, PROMOTE applies them with the user's own rights and
// STRATEGY OURS for a drop. Production never has the sandbox's database
// until the promote, and keeps its own through the drop.
func TestSandboxDatabases(t *testing.T) {
	prod, _ := env(t)
	e := newDiffEnv(t, "transparent", false, func(c *proxy.Config) { c.PromoteUser, c.PromotePassword = prod.User, prod.Password })
	root := openDB(t, prod.DSN(""))
	ctx := context.Background()
	for _, acct := range e.accts {
		t.Run(acct.name, func(t *testing.T) {
			newDB, prodDB := "test_x_"+acct.short(), "dbs_prod_"+acct.short()
			e.database(t, prodDB, "CREATE TABLE keep (id INT PRIMARY KEY, v INT); INSERT INTO keep VALUES (1, 10), (2, 20);")
			t.Cleanup(func() { _, _ = root.Exec("DROP DATABASE IF EXISTS " + newDB) })
			before := checksum(t, e.prod, prodDB+".keep")
			tag := "dbs-" + acct.short()
			sb := conn(t, openDB(t, acct.dsn(tag, prodDB)))
			prodList := dbNames(t, sb)

			mustExecC(t, sb, "CREATE DATABASE "+newDB+" CHARACTER SET latin1 COLLATE latin1_swedish_ci")
			if got := dbNames(t, sb); !strings.Contains(","+got+",", ","+newDB+",") {
				t.Errorf("SHOW DATABASES after CREATE DATABASE: %s", got)
			}
			wantString(t, sb, "SELECT CONCAT(SCHEMA_NAME, ' ', DEFAULT_CHARACTER_SET_NAME) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = '"+newDB+"'",
				newDB+" latin1", "its information_schema.SCHEMATA row: %s")
			wantErr(t, sb, "CREATE DATABASE "+newDB, "1007 (HY000) Can't create database '"+newDB+"'; database exists")
			long := strings.Repeat("a", 65)
			wantErr(t, sb, "CREATE DATABASE "+long, "1102 (42000) Incorrect database name '"+long+"'")
			wantErr(t, sb, "ALTER DATABASE `` CHARACTER SET latin1", "1102 (42000) Incorrect database name ''")
			var n int
			if err := root.QueryRow("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", newDB).Scan(&n); err != nil || n != 0 {
				t.Fatalf("production has %s after the sandbox made it: %d, %v", newDB, n, err)
			}

			// A login naming it (Django connects to its test database).
			in := conn(t, openDB(t, acct.dsn(tag, newDB)))
			wantString(t, in, "SELECT DATABASE()", newDB, "DATABASE() in it: %s")
			mustExecC(t, in, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))")
			mustExecC(t, in, "INSERT INTO t VALUES (1, 'a'), (2, 'b')")
			wantString(t, in, "SELECT GROUP_CONCAT(v ORDER BY id) FROM t", "a,b", "its table: %s")
			wantString(t, in, "SELECT GROUP_CONCAT(TABLE_NAME) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()", "t",
				"information_schema.TABLES of DATABASE(): %s")
			wantString(t, in, "SHOW TABLES", "t", "SHOW TABLES: %s")
			wantErr(t, in, "SELECT * FROM nosuch", "1146 (42S02) Table '"+newDB+".nosuch' doesn't exist")
			wantString(t, sb, "SELECT COUNT(*) FROM "+newDB+".t", "2", "its table from another database: %s")
			// Another sandbox has no such database: none is current there.
			mustExecC(t, in, "SANDBOX DETACH")
			wantString(t, in, "SELECT DATABASE() IS NULL", "1", "DATABASE() in another sandbox: %s")
			wantErr(t, in, "SELECT * FROM t", "1046 (3D000)")

			// USE, and COM_INIT_DB.
			mustExecC(t, sb, "USE "+newDB)
			wantString(t, sb, "SELECT DATABASE()", newDB, "DATABASE() after USE: %s")
			wantString(t, sb, "SELECT COUNT(*) FROM t", "2", "its table after USE: %s")
			r := dialRaw(t, acct.h.addr, tagged(acct.user, tag), acct.password, prodDB)
			if err := r.c.UseDB(newDB); err != nil {
				t.Fatalf("COM_INIT_DB %s: %v", newDB, err)
			}
			if got := r.scalar("SELECT CONCAT(DATABASE(), ':', COUNT(*)) FROM t"); got != newDB+":2" {
				t.Errorf("after COM_INIT_DB: %s", got)
			}

			reviewDatabases(t, sb, newDB, prodDB, "")

			// DROP DATABASE of production's: hidden, made again empty.
			mustExecC(t, sb, "DROP DATABASE "+prodDB)
			wantErr(t, sb, "SELECT * FROM "+prodDB+".keep", "1146 (42S02) Table '"+prodDB+".keep' doesn't exist")
			wantErr(t, sb, "USE "+prodDB, "1049 (42000) Unknown database '"+prodDB+"'")
			if got := dbNames(t, sb); strings.Contains(","+got+",", ","+prodDB+",") {
				t.Errorf("SHOW DATABASES after DROP DATABASE %s: %s", prodDB, got)
			}
			mustExecC(t, sb, "CREATE DATABASE "+prodDB)
			wantString(t, sb, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = '"+prodDB+"'", "0", "tables of the database made again: %s")
			wantErr(t, sb, "SELECT * FROM "+prodDB+".keep", "1146 (42S02) Table '"+prodDB+".keep' doesn't exist")
			if after := checksum(t, e.prod, prodDB+".keep"); after != before {
				t.Errorf("production's %s.keep changed: %s -> %s", prodDB, before, after)
			}
			reviewDatabases(t, sb, newDB, prodDB, "database recreated")

			// The sandbox's own database dropped: gone for it, and the rest of
			// the sandbox as it was.
			mustExecC(t, sb, "DROP DATABASE "+newDB)
			wantString(t, sb, "SELECT DATABASE() IS NULL", "1", "no current database after dropping it: %s")
			if got := dbNames(t, sb); got != prodList {
				t.Errorf("SHOW DATABASES after DROP DATABASE %s: %s, want %s", newDB, got, prodList)
			}
			promoteDatabases(ctx, t, root, acct, sb, newDB, prodDB)
		})
	}
}

// tagged is user with the sandbox tag.
func tagged(user, tag string) string { return user + "+" + tag }

// reviewDatabases checks DIFF SUMMARY's and EXPORT's view of the sandbox's
// databases: newDB made (with its table), and prodDB as prodChange says
// ("" for untouched).
func reviewDatabases(t *testing.T, sb *sql.Conn, newDB, prodDB, prodChange string) {
	t.Helper()
	_, rows := queryRows(t, sb, "SANDBOX DIFF SUMMARY")
	got := map[string]string{}
	for _, r := range rows {
		got[r[0].String] = r[1].String
	}
	if got[newDB] != "database created" || got[newDB+".t"] != "created" || got[prodDB] != prodChange {
		t.Errorf("DIFF SUMMARY: %v", got)
	}
	stmts := sandboxExport(t, sb, "SANDBOX EXPORT")
	text := strings.Join(stmts, ";\n")
	create := fmt.Sprintf("CREATE DATABASE `%s` CHARACTER SET `latin1` COLLATE `latin1_swedish_ci`", newDB)
	at, table := strings.Index(text, create), strings.Index(text, "CREATE TABLE IF NOT EXISTS `"+newDB+"`.`t`")
	if at < 0 || table < at {
		t.Errorf("EXPORT does not make %s before its table:\n%s", newDB, text)
	}
	if prodChange == "database recreated" && !strings.Contains(text, "DROP DATABASE IF EXISTS `"+prodDB+"`") {
		t.Errorf("EXPORT does not drop %s:\n%s", prodDB, text)
	}
}

// promoteDatabases promotes the sandbox's databases: refused without
// STRATEGY OURS (it drops production's prodDB), and to the least-privilege
// account (no CREATE or DROP of its own on production); with them, prodDB
// is made again empty in production and the sandbox's diff is clean.
func promoteDatabases(ctx context.Context, t *testing.T, root *sql.DB, acct diffAccount, sb *sql.Conn, newDB, prodDB string) {
	t.Helper()
	if _, err := sb.ExecContext(ctx, "SANDBOX PROMOTE"); !strings.Contains(mysqlErr(err), "STRATEGY OURS drops it anyway") {
		t.Fatalf("PROMOTE of a dropped database without OURS: %s", mysqlErr(err))
	}
	_, err := sb.ExecContext(ctx, "SANDBOX PROMOTE STRATEGY OURS")
	if acct.short() == "least" {
		if !strings.HasPrefix(mysqlErr(err), "1142") && !strings.HasPrefix(mysqlErr(err), "1044") || !strings.Contains(mysqlErr(err), prodDB) {
			t.Fatalf("PROMOTE by an account that may not drop %s: %s", prodDB, mysqlErr(err))
		}
		mustExecDB(t, root, "GRANT ALL PRIVILEGES ON `"+prodDB+"`.* TO '"+sandboxUser+"'@'%'")
		t.Cleanup(func() { _, _ = root.Exec("REVOKE ALL PRIVILEGES ON `" + prodDB + "`.* FROM '" + sandboxUser + "'@'%'") })
		_, err = sb.ExecContext(ctx, "SANDBOX PROMOTE STRATEGY OURS")
	}
	if err != nil {
		t.Fatalf("SANDBOX PROMOTE STRATEGY OURS: %s", mysqlErr(err))
	}
	var n int
	if err := root.QueryRow("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?", prodDB).Scan(&n); err != nil || n != 0 {
		t.Errorf("production's %s after the promote holds %d tables (%v), want it made again empty", prodDB, n, err)
	}
	if _, rows := queryRows(t, sb, "SANDBOX DIFF SUMMARY"); len(rows) != 0 {
		t.Errorf("DIFF SUMMARY after the promote has %d rows", len(rows))
	}
}

// TestDjangoStyleTestDatabase: a test runner's flow through one named
// sandbox, with a pool per phase as Django's runner has (it reconnects
// with the test database as its NAME): create test_<name> (dropping a
// leftover first), migrate it (tables, foreign keys, indexes, a
// migrations table), run tests in transactions rolled back to savepoints,
// drop it from the main database. Production never has the test database,
// and its own tables stay as they were.
func TestDjangoStyleTestDatabase(t *testing.T) {
	prod, _ := env(t)
	e := newDiffEnv(t, "transparent", false, nil)
	root := openDB(t, prod.DSN(""))
	ctx := context.Background()
	for _, acct := range e.accts {
		t.Run(acct.name, func(t *testing.T) {
			mainDB, testDB := "dj_main_"+acct.short(), "test_dj_"+acct.short()
			e.database(t, mainDB, "CREATE TABLE site (id INT PRIMARY KEY, name VARCHAR(20)); INSERT INTO site VALUES (1, 'prod');")
			before := checksum(t, e.prod, mainDB+".site")
			tag := "django-" + acct.short()
			setup := conn(t, openDB(t, acct.dsn(tag, mainDB)))
			if _, err := setup.ExecContext(ctx, "CREATE DATABASE `"+testDB+"` CHARACTER SET utf8mb4"); err != nil {
				t.Fatalf("CREATE DATABASE: %s", mysqlErr(err))
			}
			// A second run finds it there: 1007, then drop and create.
			wantErr(t, setup, "CREATE DATABASE `"+testDB+"` CHARACTER SET utf8mb4", "1007 (HY000)")
			mustExecC(t, setup, "DROP DATABASE `"+testDB+"`")
			mustExecC(t, setup, "CREATE DATABASE `"+testDB+"` CHARACTER SET utf8mb4")

			pool := openDB(t, acct.dsn(tag, testDB))
			for _, q := range []string{
				"CREATE TABLE django_migrations (id BIGINT AUTO_INCREMENT PRIMARY KEY, app VARCHAR(255) NOT NULL, name VARCHAR(255) NOT NULL, applied DATETIME(6) NOT NULL)",
				"CREATE TABLE polls_question (id BIGINT AUTO_INCREMENT PRIMARY KEY, question_text VARCHAR(200) NOT NULL, pub_date DATETIME(6) NOT NULL)",
				"CREATE TABLE polls_choice (id BIGINT AUTO_INCREMENT PRIMARY KEY, choice_text VARCHAR(200) NOT NULL, votes INT NOT NULL, question_id BIGINT NOT NULL)",
				"ALTER TABLE polls_choice ADD CONSTRAINT polls_choice_question_id_fk FOREIGN KEY (question_id) REFERENCES polls_question (id)",
				"CREATE INDEX polls_question_pub_date ON polls_question (pub_date)",
				"INSERT INTO django_migrations (app, name, applied) VALUES ('polls', '0001_initial', NOW(6))",
			} {
				if _, err := pool.ExecContext(ctx, q); err != nil {
					t.Fatalf("migrate: %s: %s", q, mysqlErr(err))
				}
			}
			c := conn(t, pool)
			wantString(t, c, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()", "3", "tables after migrate: %s")
			wantString(t, c, "SELECT GROUP_CONCAT(REFERENCED_TABLE_NAME) FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = DATABASE() AND REFERENCED_TABLE_NAME IS NOT NULL",
				"polls_question", "foreign keys after migrate: %s")
			for _, q := range []string{"SET autocommit = 0", "SAVEPOINT s1", "INSERT INTO polls_question (question_text, pub_date) VALUES ('q?', NOW(6))",
				"INSERT INTO polls_choice (choice_text, votes, question_id) VALUES ('a', 0, LAST_INSERT_ID())", "ROLLBACK TO SAVEPOINT s1"} {
				mustExecC(t, c, q)
			}
			wantErr(t, c, "INSERT INTO polls_choice (choice_text, votes, question_id) VALUES ('b', 0, 999)", "1452 (23000)")
			mustExecC(t, c, "ROLLBACK")
			wantString(t, c, "SELECT COUNT(*) FROM polls_question", "0", "rows after the test's rollback: %s")
			_ = c.Close()
			_ = pool.Close()

			mustExecC(t, setup, "DROP DATABASE `"+testDB+"`")
			var n int
			if err := root.QueryRow("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", testDB).Scan(&n); err != nil || n != 0 {
				t.Errorf("production has %s: %d, %v", testDB, n, err)
			}
			if after := checksum(t, e.prod, mainDB+".site"); after != before {
				t.Errorf("production's %s.site changed", mainDB)
			}
			if _, rows := queryRows(t, setup, "SANDBOX DIFF SUMMARY"); len(rows) != 0 {
				t.Errorf("DIFF SUMMARY after the test database went: %d rows", len(rows))
			}
		})
	}
}

// TestSandboxDatabaseKOI8R: a database the sandbox makes under a name in
// the client's single-byte character set (koi8r) is made current by
// COM_INIT_DB, which names it in those bytes, and SHOW TABLES lists it.
func TestSandboxDatabaseKOI8R(t *testing.T) {
	e := newDiffEnv(t, "transparent", false, nil)
	const name = "\xd4\xc5\xd3\xd4" // "тест" in koi8r
	for _, acct := range e.accts {
		t.Run(acct.name, func(t *testing.T) {
			r := dialRaw(t, acct.h.addr, tagged(acct.user, "koi-"+acct.short()), acct.password, "")
			r.query("SET NAMES koi8r")
			r.query("CREATE DATABASE " + name)
			if err := r.c.UseDB(name); err != nil {
				t.Fatalf("COM_INIT_DB of the sandbox's database: %v", err)
			}
			r.query("CREATE TABLE t (a INT)")
			if got := r.scalar("SELECT CONCAT(HEX(DATABASE()), ':', COUNT(*)) FROM t"); got != "D182D0B5D181D182:0" { // DATABASE() is utf8mb3: its UTF-8 bytes
				t.Errorf("DATABASE() after COM_INIT_DB: %s", got)
			}
			if got := r.scalar("SHOW TABLES"); got != "t" {
				t.Errorf("SHOW TABLES: %s", got)
			}
			r.query("DROP DATABASE " + name)
		})
	}
}
