package integration

// Red-team tests of XA transactions in a sandbox (commit a039b32): their
// isolation from other sandboxes and production, production left
// untouched (rows and locks), fidelity against a direct connection, and
// what becomes of a prepared XA transaction when its sandbox goes.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/sqlfork/sqlfork-proxy/integration/testdb"
	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// rtxaEnv is a proxy in sandbox mode and the account its clients log in
// with: the least-privilege one, or one with ALL PRIVILEGES.
type rtxaEnv struct {
	name     string
	db       *testdb.Server
	h        *proxyHandle
	user, pw string
}

// rtxaEnvs are both proxies, the least-privilege one first.
func rtxaEnvs(t *testing.T) []rtxaEnv {
	t.Helper()
	db, h := sandboxProxy(t, "transparent", nil)
	all := startTestProxy(t, db.Addr, db, func(c *proxy.Config) {
		c.Mode = "transparent"
		c.Sandbox.ReapInterval = 500 * time.Millisecond
	})
	return []rtxaEnv{
		{name: "leastpriv", db: db, h: h, user: sandboxUser, pw: sandboxPassword},
		{name: "allpriv", db: db, h: all, user: db.User, pw: db.Password},
	}
}

// dsn is a DSN of sandbox tag (user+tag) through e's proxy.
func (e rtxaEnv) dsn(tag, db string, params ...string) string {
	return withParams(fmt.Sprintf("%s+%s:%s@tcp(%s)/%s", e.user, tag, e.pw, e.h.addr, db), params)
}

// rtxaDB opens a pool that keeps no idle connection: a Close ends the
// connection on the server.
func rtxaDB(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db := openDB(t, dsn)
	db.SetMaxIdleConns(0)
	return db
}

// rtxaOutcome is "ok" or the server error's number and SQLSTATE.
func rtxaOutcome(err error) string {
	if err == nil {
		return "ok"
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return fmt.Sprintf("%d/%s", me.Number, string(me.SQLState[:]))
	}
	return "non-server error: " + err.Error()
}

// rtxaAll runs q on c and returns every row of every result set, one line
// a row, columns separated by '|'.
func rtxaAll(ctx context.Context, c *sql.Conn, q string) (string, error) {
	rows, err := c.QueryContext(ctx, q)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var b strings.Builder
	for {
		cols, err := rows.Columns()
		if err != nil {
			return b.String(), err
		}
		for rows.Next() {
			vals := make([]sql.RawBytes, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				return b.String(), err
			}
			for _, v := range vals {
				b.Write(v)
				b.WriteByte('|')
			}
			b.WriteByte('\n')
		}
		if !rows.NextResultSet() {
			break
		}
	}
	return b.String(), rows.Err()
}

// rtxaServerXIDs is the server's XA RECOVER (raw data column) as root sees
// it.
func rtxaServerXIDs(t *testing.T, root *sql.DB) []string {
	t.Helper()
	rows, err := root.Query("XA RECOVER")
	if err != nil {
		t.Fatalf("XA RECOVER: %s", mysqlErr(err))
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var f, g, b int
		var d []byte
		if err := rows.Scan(&f, &g, &b, &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, string(d))
	}
	return out
}

// rtxaHas reports whether an id of ids ends with suffix (a sandbox's has
// its prefix before).
func rtxaHas(ids []string, suffix string) bool {
	for _, id := range ids {
		if strings.HasSuffix(id, suffix) {
			return true
		}
	}
	return false
}

// rtxaPrepare runs an XA transaction that writes (so that it stays
// prepared) on a connection of db, prepares it and ends the connection:
// the prepared transaction is then the server's, detached.
func rtxaPrepare(t *testing.T, db *sql.DB, xid, write string) {
	t.Helper()
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"XA START " + xid, write, "XA END " + xid, "XA PREPARE " + xid} {
		mustExecC(t, c, q)
	}
	c.Close()
}

// TestRTXAIsolation: a sandbox can neither see nor end production's or
// another sandbox's prepared XA transactions, whatever the way it sends
// XA RECOVER, XA COMMIT or XA ROLLBACK: spellings, comments, executable
// comments, SQL PREPARE from a literal or a variable, EXECUTE IMMEDIATE,
// anonymous blocks, stored procedures, multi-statements, the binary
// protocol.
func TestRTXAIsolation(t *testing.T) {
	for _, e := range rtxaEnvs(t) {
		t.Run(e.name, func(t *testing.T) { rtxaIsolation(t, e) })
	}
}

func rtxaIsolation(t *testing.T, e rtxaEnv) {
	ctx := context.Background()
	root := openDB(t, e.db.DSN(""))
	setUp(t, root, []string{"CREATE TABLE IF NOT EXISTS other.rtxa_prod (a INT)"}, "DROP TABLE IF EXISTS other.rtxa_prod")
	direct := rtxaDB(t, e.db.DSN(""))
	t.Cleanup(func() { _, _ = root.Exec("XA ROLLBACK 'prodxa1'") })
	rtxaPrepare(t, direct, "'prodxa1'", "INSERT INTO other.rtxa_prod VALUES (1)")

	tagA, tagB := "rtxa_ia_"+e.name, "rtxa_ib_"+e.name
	// a keeps sandbox A alive while its prepared transaction is detached.
	adb := rtxaDB(t, e.dsn(tagA, "app"))
	a := conn(t, adb)
	mustExecC(t, a, "SELECT 1")
	rtxaPrepare(t, adb, "'sbxa1'", "INSERT INTO users (name) VALUES ('rtxa_a')")
	t.Cleanup(func() { _, _ = a.ExecContext(context.Background(), "XA ROLLBACK 'sbxa1'") })

	bdb := rtxaDB(t, e.dsn(tagB, "app", "multiStatements=true"))
	b := conn(t, bdb)
	// B's own prepared transaction, held by its live connection.
	for _, q := range []string{"XA START 'bown'", "INSERT INTO users (name) VALUES ('rtxa_b')", "XA END 'bown'", "XA PREPARE 'bown'"} {
		mustExecC(t, b, q)
	}
	t.Cleanup(func() { _, _ = b.ExecContext(context.Background(), "XA ROLLBACK 'bown'") })
	if got, err := rtxaAll(ctx, b, "XA RECOVER"); err != nil || got != "1|4|0|bown|\n" {
		t.Errorf("sandbox B's own XA RECOVER: %q %s, want bown only", got, mysqlErr(err))
	}

	check := func(what string) {
		t.Helper()
		ids := rtxaServerXIDs(t, root)
		if !rtxaHas(ids, "prodxa1") {
			t.Errorf("after %s: production's prepared XA transaction prodxa1 is gone from the server", what)
		}
		if !rtxaHas(ids, "sbxa1") {
			t.Errorf("after %s: sandbox A's prepared XA transaction sbxa1 is gone from the server", what)
		}
	}
	check("setup")

	// Each attack on a connection of its own (ended after), B's sandbox
	// kept by b.
	attacks := [][]string{
		{"XA RECOVER"}, {"xa recover"}, {"Xa ReCoVeR format='sql'"}, {"XA RECOVER FORMAT='RAW'"}, {"XA RECOVER FORMAT=\"SQL\""},
		{"XA RECOVER FORMAT=SQL"}, {"XA RECOVER FORMAT=RAW"},
		{"/*!XA RECOVER*/"}, {"/*!100000 XA RECOVER*/"}, {"/*M!XA RECOVER*/"}, {"/*M!100000 XA RECOVER*/"}, {"XA/**/RECOVER"},
		{"XA RECOVER -- x"}, {"XA RECOVER;"}, {"XA /*!RECOVER*/"}, {"/*!XA*/ RECOVER"},
		{"PREPARE s FROM 'XA RECOVER'", "EXECUTE s"},
		{"SET @q = 'XA RECOVER'", "PREPARE s FROM @q", "EXECUTE s"},
		{"SET @q = CONCAT('XA ', 'RECOVER')", "PREPARE s FROM @q", "EXECUTE s"},
		{"SELECT 'XA RECOVER' INTO @q", "PREPARE s FROM @q", "EXECUTE s"},
		{"EXECUTE IMMEDIATE 'XA RECOVER'"},
		{"SET @q = 'XA RECOVER'", "EXECUTE IMMEDIATE @q"},
		{"EXECUTE IMMEDIATE CONCAT('XA ', 'RECOVER')"},
		{"EXECUTE IMMEDIATE 'EXECUTE IMMEDIATE ''XA RECOVER'''"},
		{"BEGIN NOT ATOMIC XA RECOVER; END"},
		{"BEGIN NOT ATOMIC EXECUTE IMMEDIATE 'XA RECOVER'; END"},
		{"BEGIN NOT ATOMIC DECLARE q TEXT DEFAULT CONCAT('XA ', 'RECOVER'); EXECUTE IMMEDIATE q; END"},
		{"BEGIN NOT ATOMIC PREPARE s FROM 'XA RECOVER'; EXECUTE s; END"},
		{"CREATE PROCEDURE rtxa_p1() XA RECOVER", "CALL rtxa_p1()"},
		{"CREATE PROCEDURE rtxa_p2() EXECUTE IMMEDIATE CONCAT('XA ', 'RECOVER')", "CALL rtxa_p2()"},
		{"SELECT 1; XA RECOVER"}, {"XA RECOVER; SELECT 1"},
		{"SET STATEMENT max_statement_time = 0 FOR XA RECOVER"},
		{"SHOW ENGINE INNODB STATUS"},
		{"SELECT * FROM information_schema.INNODB_TRX"},
		{"SELECT * FROM performance_schema.events_transactions_current"},
		{"SELECT * FROM performance_schema.events_transactions_history"},

		{"XA COMMIT 'prodxa1'"}, {"XA ROLLBACK 'prodxa1'"}, {"xa rollback 'prodxa1'"},
		{"XA ROLLBACK X'70726f64786131'"}, {"XA ROLLBACK 0x70726f64786131"},
		{"/*!XA ROLLBACK 'prodxa1'*/"}, {"XA ROLLBACK /*!'prodxa1'*/"}, {"XA /*!ROLLBACK 'prodxa1'*/"},
		{"XA ROLLBACK /*!999999 'x' */ 'prodxa1'"}, {"XA ROLLBACK /*M!999999 'x', */ 'prodxa1'"},
		{"XA ROLLBACK 'prodxa1' /*!, '' */"}, {"XA ROLLBACK 'prodxa1', '', 1"},
		{"PREPARE s FROM 'XA ROLLBACK ''prodxa1'''", "EXECUTE s"},
		{"SET @r = 'XA ROLLBACK ''prodxa1'''", "PREPARE s FROM @r", "EXECUTE s"},
		{"SET @r = CONCAT('XA ROLLBACK ', QUOTE('prodxa1'))", "PREPARE s FROM @r", "EXECUTE s"},
		{"SET @r = CONCAT('XA ROLLBACK ', QUOTE('prodxa1'))", "EXECUTE IMMEDIATE @r"},
		{"EXECUTE IMMEDIATE 'XA ROLLBACK ''prodxa1'''"},
		{"EXECUTE IMMEDIATE CONCAT('XA ROLLBACK ', QUOTE('prodxa1'))"},
		{"BEGIN NOT ATOMIC XA ROLLBACK 'prodxa1'; END"},
		{"BEGIN NOT ATOMIC EXECUTE IMMEDIATE CONCAT('XA ROLLBACK ', QUOTE('prodxa1')); END"},
		{"CREATE PROCEDURE rtxa_p3() XA ROLLBACK 'prodxa1'", "CALL rtxa_p3()"},
		{"CREATE PROCEDURE rtxa_p4() EXECUTE IMMEDIATE CONCAT('XA ROLLBACK ', QUOTE('prodxa1'))", "CALL rtxa_p4()"},
		{"SELECT 1; XA ROLLBACK 'prodxa1'"},
		{"SET sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')", "XA ROLLBACK 'x\\', 'prodxa1'"},
		{"SET sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')", "XA ROLLBACK 'prodxa1' -- \\'"},
		{"SET sql_mode = 'ANSI_QUOTES'", "XA ROLLBACK \"prodxa1\""},
		{"SET NAMES latin1", "XA ROLLBACK 'prodxa1'"},
		{"SET NAMES gbk", "XA ROLLBACK '\xbf\\', 'prodxa1' -- '"},
		{"SET NAMES sjis", "XA ROLLBACK '\x95\\', 'prodxa1' -- '"},
	}
	for i, attack := range attacks {
		c, err := bdb.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var outs []string
		for _, q := range attack {
			got, err := rtxaAll(ctx, c, q)
			outs = append(outs, rtxaOutcome(err))
			if got != "" {
				outs = append(outs, fmt.Sprintf("rows %q", got))
			}
			if strings.Contains(got, "prodxa1") || strings.Contains(got, "sbxa1") {
				t.Errorf("attack %d %q: %q shows another's XA transaction: %q", i, attack, q, got)
			}
		}
		t.Logf("attack %d %q: %v", i, attack, outs)
		c.Close()
		check(fmt.Sprintf("attack %d %q", i, attack))
	}

	// The binary protocol: XA statements prepared with COM_STMT_PREPARE.
	for _, q := range []string{"XA RECOVER", "XA ROLLBACK 'prodxa1'", "XA COMMIT 'prodxa1'", "/*!XA RECOVER*/"} {
		c, err := bdb.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		st, err := c.PrepareContext(ctx, q)
		if err == nil {
			rows, err := st.QueryContext(ctx)
			if err == nil {
				for rows.Next() {
					cols, _ := rows.Columns()
					vals := make([]sql.RawBytes, len(cols))
					ptrs := make([]any, len(cols))
					for i := range vals {
						ptrs[i] = &vals[i]
					}
					_ = rows.Scan(ptrs...)
					for _, v := range vals {
						if strings.Contains(string(v), "prodxa1") || strings.Contains(string(v), "sbxa1") {
							t.Errorf("COM_STMT_PREPARE %q shows another's XA transaction: %q", q, v)
						}
					}
				}
				rows.Close()
			}
			t.Logf("COM_STMT_PREPARE %q: executed: %s", q, rtxaOutcome(err))
			st.Close()
		} else {
			t.Logf("COM_STMT_PREPARE %q: %s", q, rtxaOutcome(err))
		}
		c.Close()
		check("COM_STMT_PREPARE " + q)
	}

	// A gtrid crafted to end up as A's or production's: another
	// sandbox's prefix bytes written by hand, empty and 57-byte ids.
	var aFull string
	for _, id := range rtxaServerXIDs(t, root) {
		if strings.HasSuffix(id, "sbxa1") {
			aFull = id
		}
	}
	for _, q := range []string{
		fmt.Sprintf("XA ROLLBACK X'%x'", aFull), fmt.Sprintf("XA ROLLBACK X'%x'", aFull[7:]),
		fmt.Sprintf("XA ROLLBACK X'%x', ''", aFull), "XA ROLLBACK ''", "XA ROLLBACK '', ''",
		"XA ROLLBACK '" + strings.Repeat("p", 57) + "'",
	} {
		c, err := bdb.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.ExecContext(ctx, q)
		if !strings.HasPrefix(mysqlErr(err), "1397") {
			t.Errorf("sandbox B: %s: %s, want 1397 (XAER_NOTA)", q, mysqlErr(err))
		}
		c.Close()
		check(q)
	}
	if got, err := rtxaAll(ctx, b, "XA RECOVER"); err != nil || got != "1|4|0|bown|\n" {
		t.Errorf("sandbox B's own XA RECOVER at the end: %q %s, want bown only", got, mysqlErr(err))
	}
}

// TestRTXAFidelity: XA statements in a sandbox answer as on a direct
// connection to a copy: the errors (number and SQLSTATE) of misuse, the
// forms the server accepts, and XA RECOVER in both formats for ids of
// every kind.
func TestRTXAFidelity(t *testing.T) {
	for _, e := range rtxaEnvs(t) {
		t.Run(e.name, func(t *testing.T) { rtxaFidelity(t, e) })
	}
}

func rtxaFidelity(t *testing.T, e rtxaEnv) {
	ctx := context.Background()
	root := openDB(t, e.db.DSN(""))
	copyDB := "rtxa_fid_" + e.name
	setUp(t, root, []string{"DROP DATABASE IF EXISTS " + copyDB, "CREATE DATABASE " + copyDB,
		"CREATE TABLE " + copyDB + ".users LIKE app.users", "INSERT INTO " + copyDB + ".users SELECT * FROM app.users"},
		"DROP DATABASE IF EXISTS "+copyDB)
	ddb := rtxaDB(t, e.db.DSN(copyDB))
	sdb := rtxaDB(t, e.dsn("rtxa_fid_"+e.name, "app"))
	keep := conn(t, sdb) // keeps the sandbox
	mustExecC(t, keep, "SELECT 1")

	long := strings.Repeat("g", 65)
	seqs := [][]string{
		{"XA END 'f1'"},
		{"XA PREPARE 'f1'"},
		{"XA COMMIT 'nope'"},
		{"XA ROLLBACK 'nope'"},
		{"XA START 'f2'", "XA START 'f3'", "XA END 'f2'", "XA ROLLBACK 'f2'"},
		{"XA START 'f4'", "INSERT INTO users (name) VALUES ('f4')", "XA END 'f4'", "XA PREPARE 'f4'", "XA PREPARE 'f4'",
			"XA COMMIT 'f4' ONE PHASE", "XA END 'f4'", "INSERT INTO users (name) VALUES ('f4b')", "XA ROLLBACK 'f4'"},
		{"XA START 'f5'", "COMMIT", "ROLLBACK", "BEGIN", "START TRANSACTION", "SAVEPOINT s1", "CREATE TABLE rtxa_ddl (a INT)",
			"ALTER TABLE users ADD COLUMN rtxa_c INT", "LOCK TABLES users READ", "SET autocommit = 1", "XA END 'f5'", "XA ROLLBACK 'f5'"},
		{"XA START 'f6' JOIN"}, {"XA START 'f6' RESUME"},
		{"XA START 'f7'", "XA END 'f7' SUSPEND", "XA END 'f7' SUSPEND FOR MIGRATE", "XA ROLLBACK 'f7'"},
		{"XA START 'f8'", "SELECT 1", "XA PREPARE 'f8'", "XA END 'f8'", "XA COMMIT 'f8' ONE PHASE"},
		{"XA START 'f9'", "XA END 'f10'", "XA END 'f9'", "XA PREPARE 'f10'", "XA ROLLBACK 'f9'"},
		{"START TRANSACTION", "XA START 'f11'", "ROLLBACK"},
		{"XA BEGIN 'f12'", "UPDATE users SET score = 2 WHERE name = 'bob'", "XA END 'f12'", "XA COMMIT 'f12' ONE PHASE"},
		{"XA START 'f13', 'b', 5", "XA END 'f13', 'b'", "XA END 'f13', 'b', 5", "XA ROLLBACK 'f13', 'b', 5"},
		{"XA START 'f14', ''", "XA END 'f14'", "XA ROLLBACK 'f14', '', 1"},
		{"XA RECOVER FORMAT='xyz'"}, {"XA RECOVER FORMAT=SQL"}, {"XA RECOVER FORMAT=\"SQL\""}, {"XA RECOVER FORMAT='sql'"},
		// formatID: the server reads any unsigned number (hex and decimals too).
		{"XA START 'f15', '', 0x10", "XA END 'f15', '', 16", "XA ROLLBACK 'f15', '', 16"},
		{"XA START 'f16', '', 0", "XA END 'f16', '', 0", "XA ROLLBACK 'f16', '', 0"},
		{"XA START 'f17', '', 4294967295", "XA END 'f17', '', 4294967295", "XA ROLLBACK 'f17', '', 4294967295"},
		{"XA START 'f18', '', 4294967296"},
		{"XA START 'f19', '', -1"},
		{"XA START 'f20', '', 1.5", "XA END 'f20', '', 2", "XA ROLLBACK 'f20', '', 2"},
		// ids the server refuses.
		{"XA START ''"}, {"XA START '', 'b'"}, {"XA START '" + long + "'"}, {"XA START 'f21', '" + long + "'"},
		{"XA START 'f' 'g'"},
		{"XA START X''", "XA END X''", "XA ROLLBACK X''"},
		{"XA START B'0110011001100111'", "XA END 'fg'", "XA ROLLBACK 0x6667"},
	}
	for _, seq := range seqs {
		d, err := ddb.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		s, err := sdb.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var dOut, sOut []string
		for _, q := range seq {
			_, err := rtxaAll(ctx, d, q)
			dOut = append(dOut, rtxaOutcome(err))
			_, err = rtxaAll(ctx, s, q)
			sOut = append(sOut, rtxaOutcome(err))
		}
		if strings.Join(dOut, " ") != strings.Join(sOut, " ") {
			t.Errorf("%q:\n  direct:  %v\n  sandbox: %v", seq, dOut, sOut)
		}
		d.Close()
		s.Close()
	}

	// Documented: an id written in another form (N'…', an introducer;
	// 0x alone is an identifier to the server) is refused (1290) where
	// the server has a syntax error (1064).
	for _, q := range []string{"XA START N'f22'", "XA START _latin1'f22'", "XA START 0x"} {
		if _, err := keep.ExecContext(ctx, q); !strings.HasPrefix(mysqlErr(err), "1290") {
			t.Errorf("sandbox: %s: %s, want the documented refusal (1290)", q, mysqlErr(err))
		}
	}

	// XA RECOVER in both formats, ids of every kind: each prepared on a
	// connection of its own, kept.
	ids := []string{"'-z','a b',7", "'a''b\\\\c'", "X'abcd01'", "'q',X'ff',0", "'sp ace'", "'m1'", "'x','',2", "'w','y'",
		"0x00", "'tab\\tx'", "'dq\"x'", "'a.b'", "'zZ_9'", "X'c3a9'", "'" + strings.Repeat("L", 57) + "'"}
	before := map[string]bool{}
	for _, f := range []string{"RAW", "SQL"} {
		for _, r := range xaRows(t, conn(t, root), "XA RECOVER FORMAT='"+f+"'") {
			before[f+" "+r] = true
		}
	}
	for i, id := range ids {
		for _, db := range []*sql.DB{ddb, sdb} {
			c := conn(t, db)
			for _, q := range []string{"XA START " + id, fmt.Sprintf("INSERT INTO users (name) VALUES ('rtxa_r%d')", i), "XA END " + id,
				"XA PREPARE " + id} {
				mustExecC(t, c, q)
			}
			t.Cleanup(func() { _, _ = c.ExecContext(context.Background(), "XA ROLLBACK "+id) })
		}
	}
	for _, f := range []string{"RAW", "SQL"} {
		var direct []string
		for _, r := range xaRows(t, conn(t, root), "XA RECOVER FORMAT='"+f+"'") {
			if d := strings.SplitN(r, " ", 4)[3]; !before[f+" "+r] && !strings.HasPrefix(d, "\xff") && !strings.HasPrefix(d, "X'ff") {
				direct = append(direct, r)
			}
		}
		sandbox := xaRows(t, keep, "XA RECOVER FORMAT='"+f+"'")
		sort.Strings(direct)
		sort.Strings(sandbox)
		if strings.Join(direct, "\n") != strings.Join(sandbox, "\n") {
			t.Errorf("XA RECOVER FORMAT='%s':\n  direct:\n    %s\n  sandbox:\n    %s", f, strings.Join(direct, "\n    "),
				strings.Join(sandbox, "\n    "))
		}
	}
}

// TestRTXAProductionLocks: a sandbox's prepared XA transaction, which
// outlives its connection, holds no lock on production's rows: whatever
// it read under a lock, production's writers go on. Production's rows
// stay as they were.
func TestRTXAProductionLocks(t *testing.T) {
	for _, e := range rtxaEnvs(t) {
		t.Run(e.name, func(t *testing.T) { rtxaProductionLocks(t, e) })
	}
}

func rtxaProductionLocks(t *testing.T, e rtxaEnv) {
	ctx := context.Background()
	root := openDB(t, e.db.DSN(""))
	setUp(t, root, []string{"DROP TABLE IF EXISTS other.rtxa_lk", "CREATE TABLE other.rtxa_lk (id INT PRIMARY KEY, v INT) ENGINE=InnoDB",
		"INSERT INTO other.rtxa_lk VALUES (1, 1), (5, 5), (9, 9)",
		"GRANT SELECT ON other.rtxa_lk TO '" + sandboxUser + "'@'%'"}, "DROP TABLE IF EXISTS other.rtxa_lk")
	before := checksum(t, e.db, "other.rtxa_lk") + checksum(t, e.db, "app.users")
	cases := []struct{ name, setup, lock string }{
		{"for_update", "", "SELECT * FROM other.rtxa_lk WHERE id = 1 FOR UPDATE"},
		{"for_update_range", "", "SELECT * FROM other.rtxa_lk WHERE id >= 1 FOR UPDATE"},
		{"for_update_after_write", "INSERT INTO users (name) VALUES ('rtxa_lk')", "SELECT * FROM other.rtxa_lk WHERE id = 1 FOR UPDATE"},
		{"for_update_skip_locked", "", "SELECT * FROM other.rtxa_lk FOR UPDATE SKIP LOCKED"},
		{"for_update_nowait", "", "SELECT * FROM other.rtxa_lk WHERE id = 1 FOR UPDATE NOWAIT"},
		{"subquery_for_update", "", "SELECT (SELECT v FROM other.rtxa_lk WHERE id = 1 FOR UPDATE)"},
		{"update_from_for_update", "", "UPDATE users SET score = (SELECT v FROM other.rtxa_lk WHERE id = 1 FOR UPDATE) WHERE name = 'bob'"},
		{"insert_select_for_update", "", "INSERT INTO users (name) SELECT CONCAT('rtxa_lk', id) FROM other.rtxa_lk FOR UPDATE"},
		{"cte_for_update", "", "WITH c AS (SELECT * FROM other.rtxa_lk) SELECT * FROM c FOR UPDATE"},
		{"immediate_for_update", "", "EXECUTE IMMEDIATE 'SELECT * FROM other.rtxa_lk WHERE id = 1 FOR UPDATE'"},
		{"block_for_update", "", "BEGIN NOT ATOMIC DECLARE x INT; SELECT v INTO x FROM other.rtxa_lk WHERE id = 1 FOR UPDATE; END"},
		{"set_for_update", "", "SET @x = (SELECT v FROM other.rtxa_lk WHERE id = 1 FOR UPDATE)"},
		{"share_mode", "", "SELECT * FROM other.rtxa_lk WHERE id = 1 LOCK IN SHARE MODE"},
		{"insert_select", "", "INSERT INTO users (name) SELECT CONCAT('rtxa_is', id) FROM other.rtxa_lk"},
		{"serializable", "SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE", "SELECT * FROM other.rtxa_lk WHERE id = 1"},
		{"delete_in_for_update", "", "DELETE FROM users WHERE name IN (SELECT CONCAT('x', id) FROM other.rtxa_lk FOR UPDATE)"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sdb := rtxaDB(t, e.dsn(fmt.Sprintf("rtxa_lk%d_%s", i, e.name), "app", "multiStatements=true"))
			keep := conn(t, sdb)
			mustExecC(t, keep, "SELECT 1")
			c, err := sdb.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if tc.setup != "" && strings.HasPrefix(tc.setup, "SET") {
				mustExecC(t, c, tc.setup)
			}
			var outs []string
			for _, q := range []string{"XA START 'lk'", tc.setup, "INSERT INTO users (name) VALUES ('rtxa_lkw')", tc.lock, "XA END 'lk'", "XA PREPARE 'lk'"} {
				if q == "" || strings.HasPrefix(q, "SET SESSION") {
					continue
				}
				_, err := rtxaAll(ctx, c, q)
				outs = append(outs, rtxaOutcome(err))
			}
			t.Logf("%s: %v", tc.name, outs)
			c.Close() // the prepared transaction, if any, is now the server's
			t.Cleanup(func() { _, _ = keep.ExecContext(context.Background(), "XA ROLLBACK 'lk'") })
			// Production's writers are not held up.
			w := conn(t, root)
			mustExecC(t, w, "SET SESSION innodb_lock_wait_timeout = 1")
			for _, q := range []string{"UPDATE other.rtxa_lk SET v = v WHERE id = 1", "INSERT INTO other.rtxa_lk VALUES (3, 3)",
				"DELETE FROM other.rtxa_lk WHERE id = 3", "UPDATE app.users SET score = score WHERE name = 'bob'"} {
				if _, err := w.ExecContext(ctx, q); err != nil {
					t.Errorf("%s: production's %s after the sandbox's XA PREPARE: %s", tc.name, q, mysqlErr(err))
				}
			}
		})
	}
	if after := checksum(t, e.db, "other.rtxa_lk") + checksum(t, e.db, "app.users"); after != before {
		t.Errorf("production changed: %s -> %s", before, after)
	}
}

// TestRTXAPreparedOutlives: what becomes of a sandbox's prepared XA
// transaction when the sandbox goes (its last connection ends, SANDBOX
// RESET, SANDBOX DISCARD while the transaction is held), and a fork in
// the middle of an XA transaction, eager and lazy.
func TestRTXAPreparedOutlives(t *testing.T) {
	envs := rtxaEnvs(t)
	lazy := startTestProxy(t, envs[0].db.Addr, envs[0].db, func(c *proxy.Config) {
		c.Mode = "transparent"
		c.UpstreamUser, c.UpstreamPassword = sandboxUser, sandboxPassword
		c.Sandbox.ReapInterval = 500 * time.Millisecond
		c.Sandbox.LazyForkRows = 1
	})
	envs = append(envs, rtxaEnv{name: "lazy", db: envs[0].db, h: lazy, user: sandboxUser, pw: sandboxPassword})
	for _, e := range envs {
		t.Run(e.name, func(t *testing.T) { rtxaPreparedOutlives(t, e) })
	}
}

func rtxaPreparedOutlives(t *testing.T, e rtxaEnv) {
	ctx := context.Background()
	root := openDB(t, e.db.DSN(""))
	gone := func(suffix string) bool { return !rtxaHas(rtxaServerXIDs(t, root), suffix) }
	before := checksum(t, e.db, "app.users") + checksum(t, e.db, "other.things")

	t.Run("last_connection_ends", func(t *testing.T) {
		sdb := rtxaDB(t, e.dsn("rtxa_end_"+e.name, "app"))
		rtxaPrepare(t, sdb, "'rtxa_end1'", "INSERT INTO users (name) VALUES ('rtxa_end')")
		testkit.Eventually(t, "the ended sandbox's prepared XA transaction to be rolled back", func() bool { return gone("rtxa_end1") })
	})

	t.Run("reset", func(t *testing.T) {
		// A refused SANDBOX RESET leaves the sandbox as it was: its
		// forks stay, and nothing the proxy queued drops them later.
		sdb := rtxaDB(t, e.dsn("rtxa_rst_"+e.name, "app"))
		keep := conn(t, sdb)
		mustExecC(t, keep, "UPDATE users SET score = 99 WHERE name = 'carol'")
		rtxaPrepare(t, sdb, "'rtxa_rst1'", "INSERT INTO users (name) VALUES ('rtxa_rst')")
		t.Cleanup(func() { rtxaRollbackRaw(t, root, "rtxa_rst1") })
		done := make(chan error, 1)
		go func() {
			_, err := keep.ExecContext(ctx, "SANDBOX RESET")
			done <- err
		}()
		var err error
		select {
		case err = <-done:
		case <-time.After(90 * time.Second): // a hang guard only (the reset's own wait is 5 s)
			t.Errorf("SANDBOX RESET with a prepared XA transaction of the sandbox hangs")
			rtxaRollbackRaw(t, root, "rtxa_rst1")
			err = awaitErr(t, done, 90*time.Second, "SANDBOX RESET still hangs after the transaction's rollback")
		}
		if n := queryString(t, root, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'DROP %\\_sqlfork\\_%'"); n != "0" {
			t.Errorf("after SANDBOX RESET returned: %s DROP statements of the proxy wait on the server", n)
		}
		t.Logf("SANDBOX RESET with a prepared XA transaction of the sandbox: %s", rtxaOutcome(err))
		if !strings.HasPrefix(mysqlErr(err), "1399") {
			t.Errorf("SANDBOX RESET with a prepared XA transaction of the sandbox: %s, want 1399 (XAER_RMFAIL) saying to end it first", mysqlErr(err))
		}
		if err == nil {
			if !gone("rtxa_rst1") {
				t.Errorf("SANDBOX RESET succeeded but the sandbox's prepared XA transaction (which wrote a table it reset) is still held")
			}
			wantString(t, keep, "SELECT COALESCE(score, 'null') FROM users WHERE name = 'carol'", "null", "carol's score after the reset: %s")
			return
		}
		// Refused: the client ends its transaction; the sandbox is as it was.
		if _, err := keep.ExecContext(ctx, "XA ROLLBACK 'rtxa_rst1'"); err != nil && !strings.HasPrefix(mysqlErr(err), "1397") {
			t.Fatalf("XA ROLLBACK 'rtxa_rst1': %s", mysqlErr(err)) // 1397: the hang guard rolled it back
		}
		testkit.Eventually(t, "no DROP of the sandbox's tables waiting on the server", func() bool {
			return queryString(t, root, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'DROP %\\_sqlfork\\_%'") == "0"
		})
		var score sql.NullString
		if err := keep.QueryRowContext(ctx, "SELECT score FROM users WHERE name = 'carol'").Scan(&score); err != nil || score.String != "99.00" {
			t.Errorf("after a refused SANDBOX RESET and XA ROLLBACK, the sandbox's carol: %q %s, want its own 99.00", score.String, mysqlErr(err))
		}
	})

	t.Run("discard_held", func(t *testing.T) {
		// The prepared transaction's connection is alive while another
		// sandbox discards it: the discard does not hang.
		tag := "rtxa_dh_" + e.name
		sdb := rtxaDB(t, e.dsn(tag, "app"))
		c := conn(t, sdb)
		for _, q := range []string{"XA START 'rtxa_dh1'", "INSERT INTO users (name) VALUES ('rtxa_dh')", "XA END 'rtxa_dh1'", "XA PREPARE 'rtxa_dh1'"} {
			mustExecC(t, c, q)
		}
		other := conn(t, rtxaDB(t, e.dsn("rtxa_dho_"+e.name, "app")))
		done := make(chan error, 1)
		go func() {
			_, err := other.ExecContext(ctx, "SANDBOX DISCARD "+tag)
			done <- err
		}()
		var err error
		select {
		case err = <-done:
		case <-time.After(90 * time.Second): // a hang guard only
			t.Errorf("SANDBOX DISCARD of a sandbox whose connection holds a prepared XA transaction hangs (%s DROP statements of the "+
				"proxy wait on the server)", queryString(t, root, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'DROP %\\_sqlfork\\_%'"))
			c.Close()
			rtxaRollbackRaw(t, root, "rtxa_dh1") // what unblocks the drop
			err = awaitErr(t, done, 90*time.Second, "SANDBOX DISCARD still hangs after the transaction's rollback")
		}
		t.Logf("SANDBOX DISCARD with a held prepared XA transaction: %s", rtxaOutcome(err))
		if !strings.HasPrefix(mysqlErr(err), "1399") {
			t.Errorf("SANDBOX DISCARD of a sandbox whose live connection holds a prepared XA transaction: %s, want 1399 (XAER_RMFAIL)", mysqlErr(err))
		}
		c.Close()
		if err == nil {
			testkit.Eventually(t, "the discarded sandbox's prepared XA transaction to be rolled back", func() bool { return gone("rtxa_dh1") })
		}
	})

	t.Run("fork_mid_xa", func(t *testing.T) {
		c := conn(t, rtxaDB(t, e.dsn("rtxa_fm_"+e.name, "app")))
		// A first write before any read: no restart needed.
		for _, q := range []string{"XA START 'fm1'", "UPDATE users SET score = 7 WHERE name = 'alice'", "UPDATE other.things SET label = 'fm' WHERE id = 2",
			"XA END 'fm1'", "XA PREPARE 'fm1'", "XA COMMIT 'fm1'"} {
			mustExecC(t, c, q)
		}
		wantString(t, c, "SELECT CONCAT(score, '/', (SELECT label FROM other.things WHERE id = 2)) FROM users WHERE name = 'alice'", "7.00/fm",
			"sandbox after its XA transaction: %s")
		// Reads, then a fork of the table read: refused, left open;
		// rolled back, the retry works.
		tbl := "other.rtxa_fm_" + e.name
		setUp(t, root, []string{"DROP TABLE IF EXISTS " + tbl, "CREATE TABLE " + tbl + " (id INT PRIMARY KEY, v INT) ENGINE=InnoDB",
			"INSERT INTO " + tbl + " VALUES (1, 10), (2, 20)", "GRANT SELECT ON " + tbl + " TO '" + sandboxUser + "'@'%'"},
			"DROP TABLE IF EXISTS "+tbl)
		mustExecC(t, c, "XA START 'fm2'")
		wantString(t, c, "SELECT SUM(v) FROM "+tbl, "30", "read in XA: %s")
		_, err := c.ExecContext(ctx, "UPDATE "+tbl+" SET v = v + 1 WHERE id = 1")
		if e := mysqlErr(err); err != nil && !strings.HasPrefix(e, "1412") {
			t.Errorf("a fork under an XA transaction that read: %s, want success or 1412", e)
		}
		if err == nil {
			wantString(t, c, "SELECT SUM(v) FROM "+tbl, "31", "after the fork in XA: %s")
		}
		mustExecC(t, c, "XA END 'fm2'")
		mustExecC(t, c, "XA ROLLBACK 'fm2'")
		wantString(t, c, "SELECT SUM(v) FROM "+tbl, "30", "after XA ROLLBACK: %s")

		// A read of another table, then the first write of this one (a
		// fork newer than the transaction's read view), then a read of it:
		// the read sees the write, or the statement is refused (1412);
		// never a wrong answer.
		tbl2 := "other.rtxa_fm2_" + e.name
		setUp(t, root, []string{"DROP TABLE IF EXISTS " + tbl2, "CREATE TABLE " + tbl2 + " (id INT PRIMARY KEY, v INT) ENGINE=InnoDB",
			"INSERT INTO " + tbl2 + " VALUES (1, 10), (2, 20)", "GRANT SELECT ON " + tbl2 + " TO '" + sandboxUser + "'@'%'"},
			"DROP TABLE IF EXISTS "+tbl2)
		mustExecC(t, c, "XA START 'fm3'")
		wantString(t, c, "SELECT COUNT(*) FROM users WHERE name = 'alice'", "1", "read in XA: %s")
		_, err = c.ExecContext(ctx, "UPDATE "+tbl2+" SET v = v + 1 WHERE id = 1")
		if e := mysqlErr(err); err != nil && !strings.HasPrefix(e, "1412") {
			t.Errorf("a first write under an XA transaction that read another table: %s, want success or 1412", e)
		}
		var sum sql.NullString
		err2 := c.QueryRowContext(ctx, "SELECT SUM(v) FROM "+tbl2).Scan(&sum)
		switch {
		case err2 != nil && !strings.HasPrefix(mysqlErr(err2), "1412"):
			t.Errorf("read after the fork in XA: %s", mysqlErr(err2))
		case err2 == nil && err == nil && sum.String != "31":
			t.Errorf("read after the first write in XA: %q, want 31 (its own write)", sum.String)
		case err2 == nil && err != nil && sum.String != "30":
			t.Errorf("read after the refused first write in XA: %q, want 30", sum.String)
		}
		mustExecC(t, c, "XA END 'fm3'")
		mustExecC(t, c, "XA PREPARE 'fm3'")
		mustExecC(t, c, "XA COMMIT 'fm3'")
		want := "30"
		if err == nil {
			want = "31"
		}
		wantString(t, c, "SELECT SUM(v) FROM "+tbl2, want, "after XA COMMIT: %s")
		if got := queryString(t, root, "SELECT SUM(v) FROM "+tbl2); got != "30" {
			t.Errorf("production's %s: %s", tbl2, got)
		}
	})
	if after := checksum(t, e.db, "app.users") + checksum(t, e.db, "other.things"); after != before {
		t.Errorf("production changed: %s -> %s", before, after)
	}
}

// rtxaRollbackRaw rolls back, on root, the prepared XA transaction whose
// id (a sandbox's, with its prefix) ends with suffix, if any: the test's
// own cleanup when the proxy cannot.
func rtxaRollbackRaw(t *testing.T, root *sql.DB, suffix string) {
	for _, id := range rtxaServerXIDs(t, root) {
		if strings.HasSuffix(id, suffix) {
			_, _ = root.Exec(fmt.Sprintf("XA ROLLBACK X'%x'", id))
		}
	}
}
