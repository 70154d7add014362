package integration

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/proxy"

	"github.com/sqlfork/sqlfork-proxy/integration/testdb"
)

// globalsAccount is a proxy with its upstream account: the least-privilege
// one (SELECT on production) or one with ALL PRIVILEGES.
type globalsAccount struct {
	name, user, password string
	h                    *proxyHandle
}

// globalsAccounts starts the proxies of both accounts over one production
// server, and a direct copy server to compare the server's answers with.
func globalsAccounts(t *testing.T) (prod *testdb.Server, direct *testdb.Server, accs []globalsAccount) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	prod, least, all, direct := directAndSandboxes(ctx, t)
	return prod, direct, []globalsAccount{
		{"least-privilege", sandboxUser, sandboxPassword, least},
		{"all-privileges", prod.User, prod.Password, all},
	}
}

// prodGlobals are production's global values of the variables the tests
// set (and of those they must not).
func prodGlobals(t *testing.T, c *sql.DB) string {
	t.Helper()
	rows, err := c.Query("SELECT VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.GLOBAL_VARIABLES WHERE VARIABLE_NAME IN " +
		"('SORT_BUFFER_SIZE', 'SQL_MODE', 'AUTOCOMMIT', 'JOIN_BUFFER_SIZE', 'MAX_CONNECTIONS', 'SERVER_ID', 'BINLOG_FORMAT', " +
		"'INIT_CONNECT', 'GENERAL_LOG', 'EVENT_SCHEDULER', 'LONG_QUERY_TIME', 'DIV_PRECISION_INCREMENT') ORDER BY 1")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var n, v string
		if err := rows.Scan(&n, &v); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s=%s ", n, v)
	}
	return b.String()
}

// globalOutcome is q's outcome on c as text: the error's code, state and message,
// or the first row's first value, then the warnings.
func globalOutcome(c *sql.Conn, q string) string {
	ctx := context.Background()
	var out string
	if strings.HasPrefix(strings.ToUpper(q), "SELECT") {
		var v sql.NullString
		if err := c.QueryRowContext(ctx, q).Scan(&v); err != nil {
			return mysqlErr(err)
		}
		out = v.String
	} else if _, err := c.ExecContext(ctx, q); err != nil {
		return mysqlErr(err)
	}
	rows, err := c.QueryContext(ctx, "SHOW WARNINGS")
	if err != nil {
		return out + " | " + mysqlErr(err)
	}
	defer rows.Close()
	for rows.Next() {
		var l, code, m string
		_ = rows.Scan(&l, &code, &m)
		out += " | " + l + " " + code + " " + m
	}
	return out
}

// TestSandboxGlobals: SET GLOBAL of a variable with a session scope is the
// sandbox's: its connections read it as @@GLOBAL.x and in SHOW GLOBAL
// VARIABLES, the connections that join it afterwards start with it as
// their session value (not those already in it, nor the one that set it),
// another sandbox and production do not see it, and production's globals
// never change. Errors are the server's; what no sandbox can hold stays
// refused (1290), also when SET GLOBAL hides in dynamic SQL, a stored
// program or a multi-statement input.
func TestSandboxGlobals(t *testing.T) {
	prod, direct, accs := globalsAccounts(t)
	root := openDB(t, prod.DSN(""))
	before := prodGlobals(t, root)
	dc := conn(t, openDB(t, direct.DSN("")))
	for _, acc := range accs {
		t.Run(acc.name, func(t *testing.T) {
			dsn := func(tag string, params ...string) string {
				tag += "_" + acc.name[:3]
				return withParams(fmt.Sprintf("%s+%s:%s@tcp(%s)/app", acc.user, tag, acc.password, acc.h.addr), params)
			}
			prodSort := queryString(t, root, "SELECT @@GLOBAL.sort_buffer_size")
			a := conn(t, openDB(t, dsn("glob")))
			early := conn(t, openDB(t, dsn("glob"))) // in the sandbox before the SET GLOBAL
			wantString(t, early, "SELECT @@SESSION.sort_buffer_size", prodSort, "a connection's session value before: %s")
			mustExecC(t, a, "SET @save = @@global.sort_buffer_size")
			wantString(t, a, "SELECT @save", prodSort, "@save = %s, want production's global")
			mustExecC(t, a, "SET GLOBAL sort_buffer_size = 1024*1024")
			wantString(t, a, "SELECT @@global.sort_buffer_size", "1048576", "@@global after SET GLOBAL: %s")
			wantString(t, a, "SELECT @@GLOBAL.sort_buffer_size + 1", "1048577", "@@GLOBAL in an expression: %s")
			wantString(t, a, "SELECT @@session.sort_buffer_size", prodSort, "the setting session's own value changed: %s")
			wantString(t, early, "SELECT @@session.sort_buffer_size", prodSort, "a session already in the sandbox changed: %s")
			wantString(t, early, "SELECT @@global.sort_buffer_size", "1048576", "another connection of the sandbox reads @@global %s")
			late := conn(t, openDB(t, dsn("glob")))
			wantString(t, late, "SELECT @@SESSION.sort_buffer_size", "1048576", "a connection that joins afterwards starts with %s")
			other := conn(t, openDB(t, dsn("glob_other")))
			wantString(t, other, "SELECT @@global.sort_buffer_size", prodSort, "another sandbox reads @@global %s")
			wantString(t, other, "SELECT @@session.sort_buffer_size", prodSort, "another sandbox's session %s")
			// Labels and types as the server gives them.
			for _, c := range []*sql.Conn{a, dc} {
				rows, err := c.QueryContext(context.Background(), "SELECT @@global.sort_buffer_size, @@GLOBAL.sql_mode")
				if err != nil {
					t.Fatal(err)
				}
				cols, _ := rows.ColumnTypes()
				rows.Close()
				var got []string
				for _, col := range cols {
					got = append(got, col.Name()+":"+col.DatabaseTypeName())
				}
				if strings.Join(got, ",") != "@@global.sort_buffer_size:UNSIGNED BIGINT,@@GLOBAL.sql_mode:VARCHAR" {
					t.Errorf("columns %v", got)
				}
			}
			var name, value string
			if err := a.QueryRowContext(context.Background(), "SHOW GLOBAL VARIABLES LIKE 'sort_buffer_%'").Scan(&name, &value); err != nil || value != "1048576" {
				t.Errorf("SHOW GLOBAL VARIABLES in the sandbox: %s %s %v", name, value, err)
			}
			if err := other.QueryRowContext(context.Background(), "SHOW GLOBAL VARIABLES WHERE Variable_name = 'sort_buffer_size'").Scan(&name, &value); err != nil || value != prodSort {
				t.Errorf("SHOW GLOBAL VARIABLES in another sandbox: %s %s %v", name, value, err)
			}
			// Several assignments, scopes mixed; DEFAULT; a variable SET
			// STATEMENT cannot set.
			mustExecC(t, a, "SET GLOBAL div_precision_increment = 7, SESSION join_buffer_size = 300000, @u = 5, sql_select_limit = 9")
			wantString(t, a, "SELECT CONCAT(@@global.div_precision_increment, ' ', @@div_precision_increment, ' ', @@join_buffer_size, ' ', @u, ' ', @@sql_select_limit)",
				"7 4 299904 5 9", "mixed SET: %s")
			mustExecC(t, a, "SET @@global.autocommit := 0")
			wantString(t, conn(t, openDB(t, dsn("glob"))), "SELECT @@autocommit", "0", "autocommit of a new connection: %s")
			wantString(t, a, "SELECT @@autocommit", "1", "the setting session's autocommit: %s")
			mustExecC(t, a, "SET GLOBAL autocommit = DEFAULT")
			mustExecC(t, a, "SET GLOBAL sort_buffer_size = DEFAULT")
			wantString(t, a, "SELECT @@global.sort_buffer_size", "2097152", "DEFAULT is the compiled default: %s")
			mustExecC(t, a, "SET GLOBAL sort_buffer_size = @save")
			wantString(t, a, "SELECT @@global.sort_buffer_size", prodSort, "restored: %s")
			// The server's errors and warnings, as a direct connection gets them.
			for _, q := range []string{"SET GLOBAL sort_buffer_size = 'abc'", "SET GLOBAL sql_mode = 'nosuch'", "SET GLOBAL timestamp = 1",
				"SET GLOBAL nosuch = 1", "SET GLOBAL sort_buffer_size = 1", "SET @@global.sql_log_bin = 0", "SET GLOBAL insert_id = 1"} {
				want := globalOutcome(dc, q)
				if got := globalOutcome(a, q); got != want {
					t.Errorf("%s:\n direct:  %s\n sandbox: %s", q, want, got)
				}
			}
			_, _ = dc.ExecContext(context.Background(), "SET GLOBAL sort_buffer_size = DEFAULT")
			// What no sandbox can hold.
			for _, q := range []string{"SET GLOBAL max_connections = 1000", "SET GLOBAL innodb_buffer_pool_size = 1073741824",
				"SET GLOBAL general_log = 1", "SET GLOBAL event_scheduler = ON", "SET GLOBAL server_id = 77", "SET GLOBAL binlog_format = 'ROW'",
				"SET GLOBAL init_connect = 'DO 1'", "SET GLOBAL max_user_connections = 3", "SET GLOBAL sort_buffer_size = 65536, max_connections = 5",
				"SET GLOBAL TRANSACTION ISOLATION LEVEL SERIALIZABLE", "SET GLOBAL long_query_time = 0",
				"CREATE PROCEDURE gp() SET GLOBAL sort_buffer_size = 65536", "BEGIN NOT ATOMIC SET GLOBAL sort_buffer_size = 65536; END",
				"SET GLOBAL sort_buffer_size = (SELECT COUNT(*) FROM users)", "SET STATEMENT sort_buffer_size = 65536 FOR SET GLOBAL max_connections = 5"} {
				_, err := a.ExecContext(context.Background(), q)
				if e := mysqlErr(err); !strings.HasPrefix(e, "1290") && !strings.HasPrefix(e, "1105") && !strings.HasPrefix(e, "1064") {
					t.Errorf("%s: %s, want 1290 (or 1105 for a block, 1064 where the server rejects it too)", q, e)
				}
			}
			mc := conn(t, openDB(t, dsn("glob", "multiStatements=true")))
			if _, err := mc.ExecContext(context.Background(), "SELECT 1; SET GLOBAL sort_buffer_size = 65536"); !strings.HasPrefix(mysqlErr(err), "1290") {
				t.Errorf("SET GLOBAL in a multi-statement input: %s, want 1290", mysqlErr(err))
			}
			// Dynamic SQL and an executable comment are the sandbox's too.
			// An SQL prepared statement's EXECUTE is planned as its text.
			// The server checks the privilege at PREPARE (1227 for the
			// least-privilege account), which the proxy sends on.
			_, err := a.ExecContext(context.Background(), "PREPARE gs FROM 'SET GLOBAL sort_buffer_size = 65536'")
			switch e := mysqlErr(err); {
			case err == nil:
				mustExecC(t, a, "EXECUTE gs")
				wantString(t, a, "SELECT @@global.sort_buffer_size", "65536", "EXECUTE of a prepared SET GLOBAL: %s")
			case acc.name != "least-privilege" || !strings.HasPrefix(e, "1227"):
				t.Errorf("PREPARE of SET GLOBAL: %s", e)
			}
			for _, q := range []string{"CREATE PROCEDURE gp2() EXECUTE gs", "BEGIN NOT ATOMIC EXECUTE gs; END"} {
				if _, err := a.ExecContext(context.Background(), q); err == nil {
					t.Errorf("%s ran: a body would run the prepared SET GLOBAL on the server", q)
					_, _ = a.ExecContext(context.Background(), "DROP PROCEDURE IF EXISTS gp2")
				}
			}
			mustExecC(t, a, "EXECUTE IMMEDIATE 'SET GLOBAL sort_buffer_size = 131072'")
			wantString(t, a, "SELECT @@global.sort_buffer_size", "131072", "EXECUTE IMMEDIATE of SET GLOBAL: %s")
			mustExecC(t, a, "/*!100000 SET GLOBAL sort_buffer_size = 262144 */")
			wantString(t, a, "SELECT @@global.sort_buffer_size", "262144", "SET GLOBAL in an executable comment: %s")
			wantString(t, other, "SELECT @@global.sort_buffer_size", prodSort, "another sandbox reads @@global %s")
			if after := prodGlobals(t, root); after != before {
				t.Errorf("production's globals changed:\n before: %s\n after:  %s", before, after)
			}
		})
	}
	if after := prodGlobals(t, root); after != before {
		t.Errorf("production's globals changed:\n before: %s\n after:  %s", before, after)
	}
}

// showStatusRows are the rows of q (a SHOW STATUS) on c, "name=value" each.
func showStatusRows(t *testing.T, c *sql.Conn, q string) string {
	t.Helper()
	_, rows := queryRows(t, c, q)
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r[0].String + "=" + r[1].String
	}
	return strings.Join(out, " ")
}

// TestSandboxFlushStatus: FLUSH STATUS in a sandbox resets the session's
// counters as the session reads them, so the regression tests' pattern —
// FLUSH STATUS; a query; SHOW STATUS LIKE 'Handler_read%' — gives the
// numbers a direct connection gives; the server's status (Flush_commands,
// which a real FLUSH counts) is untouched.
func TestSandboxFlushStatus(t *testing.T) {
	prod, direct, accs := globalsAccounts(t)
	for _, srv := range []*testdb.Server{prod, direct} {
		r := openDB(t, srv.DSN("")+"?multiStatements=true")
		if _, err := r.Exec("DROP DATABASE IF EXISTS gstat; CREATE DATABASE gstat; CREATE TABLE gstat.t (a INT PRIMARY KEY, b INT, KEY (b)); " +
			"INSERT INTO gstat.t VALUES (1, 10), (2, 20), (3, 30), (4, 40), (5, 50)"); err != nil {
			t.Fatal(err)
		}
	}
	root := openDB(t, prod.DSN(""))
	mustExecDB(t, root, "GRANT SELECT ON gstat.* TO '"+sandboxUser+"'@'%'")
	t.Cleanup(func() { _, _ = root.Exec("DROP DATABASE IF EXISTS gstat") })
	flushes := func() string { return queryRows2(t, root, "SHOW GLOBAL STATUS LIKE 'Flush_commands'") }
	beforeFlushes := flushes()
	dc := conn(t, openDB(t, direct.DSN("gstat")))
	steps := []struct{ query, show string }{
		{"SELECT * FROM t WHERE b > 20 ORDER BY a", "SHOW STATUS LIKE 'Handler_read%'"},
		{"SELECT COUNT(*) FROM t a JOIN t b", "show session status like 'select%'"},
		{"SELECT b FROM t ORDER BY b DESC LIMIT 2", "SHOW LOCAL STATUS WHERE Variable_name LIKE 'Sort%' OR Variable_name = 'Com_select'"},
		{"SELECT * FROM t WHERE a = 99", "SHOW STATUS LIKE 'Empty_queries'"},
		{"SELECT MAX(a) FROM t WHERE b < 45", "SHOW STATUS LIKE 'Handler_%'"},
	}
	for _, acc := range accs {
		t.Run(acc.name, func(t *testing.T) {
			sc := conn(t, openDB(t, fmt.Sprintf("%s:%s@tcp(%s)/gstat", acc.user, acc.password, acc.h.addr)))
			for _, flush := range []string{"FLUSH STATUS", "flush local status", "FLUSH NO_WRITE_TO_BINLOG STATUS"} {
				for _, st := range steps {
					for _, c := range []*sql.Conn{dc, sc} {
						mustExecC(t, c, flush)
						mustExecC(t, c, st.query)
					}
					if want, got := showStatusRows(t, dc, st.show), showStatusRows(t, sc, st.show); want != got {
						t.Errorf("%s; %s; %s:\n direct:  %s\n sandbox: %s", flush, st.query, st.show, want, got)
					}
				}
			}
		})
	}
	if after := flushes(); after != beforeFlushes {
		t.Errorf("the server counted FLUSH commands: %s -> %s", beforeFlushes, after)
	}
}

// TestSandboxGlobalsAcrossProxies: a sandbox's globals are in the
// registry: a connection that joins the sandbox through another proxy
// process starts with them as its session values and reads them as
// @@GLOBAL, and one of a proxy started after the first has set them too.
func TestSandboxGlobalsAcrossProxies(t *testing.T) {
	prod, p1 := sandboxProxy(t, "transparent", nil)
	_, p2 := sandboxProxy(t, "transparent", nil)
	root := openDB(t, prod.DSN(""))
	prodSort := queryString(t, root, "SELECT @@GLOBAL.sort_buffer_size")
	a := conn(t, openDB(t, p1.userDSN(sandboxUser+"+globx", "app")))
	mustExecC(t, a, "SET GLOBAL sort_buffer_size = 2*1024*1024")
	b := conn(t, openDB(t, p2.userDSN(sandboxUser+"+globx", "app")))
	wantString(t, b, "SELECT CONCAT(@@SESSION.sort_buffer_size, ' ', @@GLOBAL.sort_buffer_size)", "2097152 2097152",
		"through the second proxy: session and global %s")
	p3 := startTestProxy(t, prod.Addr, prod, func(c *proxy.Config) {
		c.Mode, c.UpstreamUser, c.UpstreamPassword = "transparent", sandboxUser, sandboxPassword
	})
	c := conn(t, openDB(t, p3.userDSN(sandboxUser+"+globx", "app")))
	wantString(t, c, "SELECT @@SESSION.sort_buffer_size", "2097152", "through a proxy started later: %s")
	if got := queryString(t, root, "SELECT @@GLOBAL.sort_buffer_size"); got != prodSort {
		t.Errorf("production's sort_buffer_size changed: %s -> %s", prodSort, got)
	}
}
