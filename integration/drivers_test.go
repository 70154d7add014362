package integration

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/sqlfork/sqlfork-proxy/integration/testdb"
	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// What drivers' own test suites do (scripts/driver-suites.sh, docs/DRIVERS.md)
// reads the same through a named sandbox with the least-privilege account as
// directly: each case runs statement by statement on a direct connection of
// an ALL PRIVILEGES account, on production, and through a sandbox, and the
// transcripts (result sets, affected rows, error codes) must match.

// transcript runs q and writes down what the client sees: every result
// set's rows, then the error that ended the input, if any.
func transcript(ctx context.Context, c *sql.Conn, q string) string {
	rows, err := c.QueryContext(ctx, q)
	if err != nil {
		return "error " + driverErr(err)
	}
	defer rows.Close()
	var out []string
	for {
		cols, _ := rows.Columns()
		var set []string
		for rows.Next() {
			vals, err := scanRow[sql.NullString](rows, len(cols))
			if err != nil {
				return "scan: " + err.Error()
			}
			set = append(set, strings.Join(nullText(vals), ","))
		}
		if len(cols) > 0 {
			out = append(out, strings.Join(cols, ",")+": "+strings.Join(set, " | "))
		}
		if !rows.NextResultSet() {
			break
		}
	}
	if err := rows.Err(); err != nil {
		out = append(out, "error "+driverErr(err))
	}
	return strings.Join(out, "; ")
}

// driverErr is a server error's number, or the error.
func driverErr(err error) string {
	if me, ok := err.(*mysql.MySQLError); ok {
		return fmt.Sprint(me.Number)
	}
	return err.Error()
}

// driverDiff runs steps directly on database name (made afresh by setup)
// and through a named sandbox of the least-privilege account, and compares
// the transcripts step by step. The sandbox runs first: it must leave
// production as setup made it.
func driverDiff(t *testing.T, name string, setup, steps []string, params ...string) {
	t.Helper()
	db, p := sandboxProxy(t, "transparent", nil)
	admin := openDB(t, db.DSN("")+"?multiStatements=true")
	readOnlyDatabase(t, admin, name)
	for _, q := range setup {
		mustExecDB(t, admin, "USE "+name+"; "+q)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := func(dsn string) []string {
		c := conn(t, openDB(t, withParams(dsn, params)))
		var out []string
		for _, q := range steps {
			out = append(out, transcript(ctx, c, q))
		}
		return out
	}
	sandbox := run(fmt.Sprintf("%s+%s:%s@tcp(%s)/%s", sandboxUser, name, sandboxPassword, p.addr, name))
	direct := run(directDSN(db, name))
	for i, q := range steps {
		if sandbox[i] != direct[i] {
			t.Errorf("%s\n directly:   %s\n in a sandbox: %s", q, direct[i], sandbox[i])
		}
	}
}

// TestDriverTextsParserRejects: texts the proxy's parser does not read, sent
// by driver suites, read as directly: SET STATEMENT … FOR (PyMySQL's
// test_execution_time_limit), spatial columns (test_issue_363), and a
// syntax error after statements the server runs first (test_nextset_error,
// go-mysql's TestExecuteMultiple).
func TestDriverTextsParserRejects(t *testing.T) {
	driverDiff(t, "drv_parser", []string{
		"CREATE TABLE t (id INT PRIMARY KEY, v INT)", "INSERT INTO t VALUES (1, 10), (2, 20)",
	}, []string{
		"SET STATEMENT max_statement_time=0.5 FOR SELECT v, SLEEP(0.01) FROM t ORDER BY id",
		// A limit the statement reaches in its first row's SLEEP, not
		// before its result's columns are sent (1 ms was reached first on
		// a loaded machine, by either side).
		"SET STATEMENT max_statement_time=1 FOR SELECT SLEEP(5) FROM t",
		"SET STATEMENT max_statement_time=1 FOR UPDATE t SET v = v + 1",
		"SELECT v FROM t ORDER BY id",
		"CREATE TABLE g (id INTEGER PRIMARY KEY, geom LINESTRING NOT NULL /*!80003 SRID 0 */, SPATIAL KEY geom (geom)) ENGINE=MyISAM",
		"INSERT INTO g VALUES (1, ST_GeomFromText('LINESTRING(0 0,1 1,2 2)'))",
		"SELECT id, ST_AsText(geom) FROM g",
		"SELECT COUNT(*) FROM t; xyzzy; DELETE FROM t",
		"INSERT INTO t VALUES (999, 9); SELECT id FROM t ORDER BY id LIMIT 2; DELETE FROM t WHERE id=999; THIS IS BOGUS()",
		"SELECT COUNT(*) FROM t",
		"xyzzy",
	}, "multiStatements=true")
}

// TestDriverCreateExistingDatabase: CREATE DATABASE of a database the
// sandbox has reads as directly — with IF NOT EXISTS an OK with Note 1007,
// without it error 1007 (go-mysql's suites start with CREATE DATABASE IF
// NOT EXISTS test); a database the sandbox does not have is refused (a
// sandbox makes no new databases).
func TestDriverCreateExistingDatabase(t *testing.T) {
	driverDiff(t, "drv_createdb", []string{"CREATE TABLE t (id INT PRIMARY KEY)"}, []string{
		"CREATE DATABASE IF NOT EXISTS drv_createdb",
		"SHOW WARNINGS",
		"create schema if not exists `drv_createdb` CHARACTER SET utf8mb4",
		"SHOW WARNINGS",
		"CREATE DATABASE drv_createdb",
		"USE drv_createdb",
		"SELECT COUNT(*) FROM t",
	})
}

// TestDriverFieldList: COM_FIELD_LIST of tables the sandbox has its own copy
// of — created there, forked and altered, dropped — lists them as directly
// (go-mysql's TestFieldList lists a table its suite created), with the
// logical database in each definition; the current database stays.
func TestDriverFieldList(t *testing.T) {
	db, p := sandboxProxy(t, "transparent", nil)
	admin := openDB(t, db.DSN("")+"?multiStatements=true")
	readOnlyDatabase(t, admin, "drv_fields")
	mustExecDB(t, admin, "CREATE TABLE drv_fields.t (a INT DEFAULT 5, b VARCHAR(10)); CREATE TABLE drv_fields.gone (g INT); "+
		"CREATE TABLE drv_fields.kept (k INT)")
	run := func(addr, user, password string) []string {
		r := dialRaw(t, addr, user, password, "drv_fields")
		for _, q := range []string{"CREATE TABLE n (x INT NOT NULL DEFAULT 3, y TEXT)", "ALTER TABLE t ADD COLUMN c INT DEFAULT 7", "DROP TABLE gone"} {
			if _, err := r.c.Execute(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		var out []string
		for _, table := range []string{"n", "t", "kept", "gone", "missing"} {
			fields, err := r.c.FieldList(table, "")
			if err != nil {
				out = append(out, fmt.Sprintf("%s: error %d", table, errCode(err)))
				continue
			}
			var fs []string
			for _, f := range fields {
				fs = append(fs, fmt.Sprintf("%s.%s.%s(%s)/%d default %q", f.Schema, f.Table, f.Name, f.OrgTable, f.Type, f.DefaultValue))
			}
			out = append(out, table+": "+strings.Join(fs, " "))
		}
		out = append(out, "current database "+r.scalar("SELECT DATABASE()"))
		return out
	}
	sandbox := run(p.addr, sandboxUser+"+fields", sandboxPassword)
	direct := run(db.Addr, db.User, db.Password)
	if strings.Join(sandbox, "\n") != strings.Join(direct, "\n") {
		t.Errorf("COM_FIELD_LIST\n directly:\n%s\n in a sandbox:\n%s", strings.Join(direct, "\n"), strings.Join(sandbox, "\n"))
	}
}

// TestDriverConnectionAttributes: a sandbox reads its own connection's
// attributes from performance_schema.session_account_connect_attrs as
// directly (go-sql-driver's TestConnectionAttributes), and no other
// connection's: the proxy's upstream account is shared by every proxy
// user's connections.
func TestDriverConnectionAttributes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	db := testdb.StartForTest(ctx, t, testdb.Options{Logf: t.Logf, ExtraArgs: []string{"--performance-schema=ON"}})
	mustExecDB(t, openDB(t, db.DSN("")+"?multiStatements=true"), fmt.Sprintf(`CREATE DATABASE app;
CREATE USER '%[1]s'@'%%' IDENTIFIED BY '%[2]s'; GRANT SELECT, SHOW VIEW ON app.* TO '%[1]s'@'%%';
GRANT SELECT ON mysql.func TO '%[1]s'@'%%'; GRANT ALL PRIVILEGES ON `+"`\\_sqlfork%%`"+`.* TO '%[1]s'@'%%';`, sandboxUser, sandboxPassword))
	p := startTestProxy(t, db.Addr, db, func(c *proxy.Config) {
		c.Mode = "transparent"
		c.UpstreamUser, c.UpstreamPassword = sandboxUser, sandboxPassword
	})
	other := conn(t, openDB(t, p.userDSN(sandboxUser, "app", "connectionAttributes=who:other")))
	if err := other.PingContext(ctx); err != nil {
		t.Fatal(err)
	}
	q := "SELECT ATTR_NAME, ATTR_VALUE FROM performance_schema.session_account_connect_attrs WHERE PROCESSLIST_ID = CONNECTION_ID()"
	for _, way := range []string{"direct", "sandbox"} {
		dsn := directDSN(db, "app", "connectionAttributes=attr1:value1,foo:boo")
		if way == "sandbox" {
			dsn = p.userDSN(sandboxUser+"+attrs", "app", "connectionAttributes=attr1:value1,foo:boo")
		}
		c := conn(t, openDB(t, dsn))
		queries := []string{q}
		if way == "sandbox" { // directly, every connection of the account
			queries = append(queries, "SELECT ATTR_NAME, ATTR_VALUE FROM performance_schema.session_account_connect_attrs")
		}
		for _, query := range queries {
			rows, err := c.QueryContext(ctx, query)
			if err != nil {
				t.Fatalf("%s: %s: %s", way, query, mysqlErr(err))
			}
			types, _ := rows.ColumnTypes()
			got := map[string]string{}
			for rows.Next() {
				var n, v string
				if err := rows.Scan(&n, &v); err != nil {
					t.Fatal(err)
				}
				if _, dup := got[n]; dup && way == "sandbox" {
					t.Errorf("%s: attribute %s listed twice: another connection's rows", query, n)
				}
				got[n] = v
			}
			rows.Close()
			if got["attr1"] != "value1" || got["foo"] != "boo" || got["_client_name"] != "Go-MySQL-Driver" {
				t.Errorf("%s: %s: attributes %v", way, query, got)
			}
			if got["who"] != "" {
				t.Errorf("%s: %s lists another connection's attributes", way, query)
			}
			if way == "sandbox" && (len(types) != 2 || types[0].DatabaseTypeName() != "VARCHAR") {
				t.Errorf("%s: column types %v", query, types)
			}
		}
	}
}

// TestDriverProcedures: a sandbox has stored procedures of its own, made,
// called (text and prepared, with multiple result sets, OUT parameters and
// SIGNAL) and dropped as directly, reading and writing the sandbox's copies
// of production's tables (go-sql-driver's TestMultiResultSet,
// TestErrorInMultiResult and TestInterruptBySignal, go-mysql's
// TestStmtProcedureMultiResult, PyMySQL's callproc tests); production's
// rows stay as they were.
func TestDriverProcedures(t *testing.T) {
	driverDiff(t, "drv_proc", []string{
		"CREATE TABLE t (id INT PRIMARY KEY, v INT)", "INSERT INTO t VALUES (1, 10), (2, 20)",
	}, []string{
		"DROP PROCEDURE IF EXISTS test_mrss;\nCREATE PROCEDURE test_mrss()\nBEGIN\n\tDO 1;\n\tSELECT 1, 2, 3 UNION SELECT 4, 5, 6;\n\tDO 1;\n\tSELECT 0, 0;\n\tDO 1;\n\tSELECT 7, 8, 9 UNION SELECT 10, 11, 12 UNION SELECT 13, 14, 15;\nEND",
		"SHOW WARNINGS",
		"CALL test_mrss()",
		"CREATE PROCEDURE test_signal(ret INT)\nBEGIN\n\tSELECT ret;\n\tSIGNAL SQLSTATE\n\t\t'45001'\n\tSET\n\t\tMESSAGE_TEXT = \"an error\",\n\t\tMYSQL_ERRNO = 45001;\nEND",
		"CALL test_signal(42)",
		"CREATE PROCEDURE test_proc1()\nBEGIN\n\tSELECT 1,2;\n\tSELECT 3,4;\n\tSIGNAL SQLSTATE '10000' SET MESSAGE_TEXT = \"some error\",  MYSQL_ERRNO = 10000;\nEND;",
		"CALL test_proc1",
		"create procedure `foo.bar` (arg1 int)\nbegin\n    select arg1*2;\nend\n",
		"SET @`_foo.bar_0`=123",
		"CALL `foo.bar`(@`_foo.bar_0`)",
		"CREATE PROCEDURE rw(IN x INT, OUT n INT) BEGIN DECLARE k INT DEFAULT 1; INSERT INTO t VALUES (x, x * 10); UPDATE t SET v = v + k WHERE id = 1; SELECT COUNT(*) INTO n FROM t; SELECT id, v FROM t ORDER BY id; END",
		"CALL rw(3, @n)",
		"SELECT @n",
		"SELECT id, v FROM t ORDER BY id",
		"DROP PROCEDURE test_signal",
		"CALL test_signal(1)",
		"DROP PROCEDURE test_signal",
		"DROP PROCEDURE IF EXISTS test_signal",
		"SHOW WARNINGS",
		"CALL nosuch()",
		"DROP PROCEDURE test_mrss; DROP PROCEDURE test_proc1; DROP PROCEDURE `foo.bar`; DROP PROCEDURE rw",
	}, "multiStatements=true")
	// Production is as setup left it until the direct run: the sandbox run
	// came first, and driverDiff compared the two.
}

// TestDriverPreparedCall: CALL prepared with parameters, as go-sql-driver
// sends CALL test_signal(?) and go-mysql's TestStmtProcedureMultiResult.
func TestDriverPreparedCall(t *testing.T) {
	db, p := sandboxProxy(t, "transparent", nil)
	readOnlyDatabase(t, openDB(t, db.DSN("")), "drv_pcall")
	ctx := context.Background()
	run := func(dsn string) string {
		c := conn(t, openDB(t, dsn))
		mustExecC(t, c, "DROP PROCEDURE IF EXISTS two")
		mustExecC(t, c, "CREATE PROCEDURE two(IN a INT, OUT b INT) BEGIN SELECT a AS first; SELECT a * 2 AS second; SET b = a * 3; END")
		defer mustExecC(t, c, "DROP PROCEDURE two")
		var out []string
		rows, err := c.QueryContext(ctx, "CALL two(?, @b)", 21)
		if err != nil {
			return "error " + driverErr(err)
		}
		for {
			for rows.Next() {
				var v int
				if err := rows.Scan(&v); err != nil {
					return err.Error()
				}
				out = append(out, fmt.Sprint(v))
			}
			if !rows.NextResultSet() {
				break
			}
		}
		if err := rows.Err(); err != nil {
			out = append(out, "error "+driverErr(err))
		}
		rows.Close()
		out = append(out, queryString(t, c, "SELECT @b"))
		return strings.Join(out, " ")
	}
	sandbox := run(p.userDSN(sandboxUser+"+pcall", "drv_pcall"))
	direct := run(directDSN(db, "drv_pcall"))
	if sandbox != direct {
		t.Errorf("prepared CALL: directly %q, in a sandbox %q", direct, sandbox)
	}
}
