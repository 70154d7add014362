package integration

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// Red team of issue 27 (lazy forks). Each test runs statements in a
// sandbox whose fork of a table is still filling, and the same
// statements on a copy of the table made at the fork (a database of its
// own, <db>_ref, reached directly): every answer must be the copy's.

// rt27Env is a proxy forking every table with rows lazily, filling at
// rate rows a second, and the server's root account.
func rt27Env(t *testing.T, rate int64) (*proxyHandle, *sql.DB) {
	t.Helper()
	server, _ := env(t)
	h := startTestProxy(t, server.Addr, server, func(c *proxy.Config) {
		c.Mode, c.Sandbox.LazyForkRows, c.Sandbox.LazyForkRate = "transparent", 1, rate
	})
	return h, openDB(t, server.DSN(""))
}

// rt27Pair makes database db and its reference db_ref anew, each with the
// tables setup makes (statements run in that database), and returns a
// sandbox connection to db through the proxy and a direct one to db_ref,
// both after the session statements.
func rt27Pair(t *testing.T, h *proxyHandle, root *sql.DB, db string, setup []string, session ...string) (sb, ref *sql.Conn) {
	t.Helper()
	rt27Databases(t, root, db, setup)
	sb = conn(t, openDB(t, h.dsn(db)))
	ref = conn(t, openDB(t, directDSN(h.db, db+"_ref")))
	for _, q := range session {
		mustExecC(t, sb, q)
		mustExecC(t, ref, q)
	}
	return sb, ref
}

// rt27Same runs each statement on sb and on ref and reports every answer
// that differs (not only the first). The first statement forks the table;
// it is logged when the table is whole before the last one (the proxy
// made the statements wait for the fill, which is one right answer).
func rt27Same(t *testing.T, sb, ref *sql.Conn, table string, stmts ...string) {
	t.Helper()
	rt27Run(t, nil, sb, ref, table, stmts...)
}

// rt27SameWaiting is rt27Same where a statement may wait for the fill:
// one still running after a second has h's fills run at full speed (the
// statements after it run on the whole fork, as after a wait at the slow
// rate).
func rt27SameWaiting(t *testing.T, h *proxyHandle, sb, ref *sql.Conn, table string, stmts ...string) {
	t.Helper()
	rt27Run(t, h, sb, ref, table, stmts...)
}

// rt27Run is rt27Same, lifting h's fill rate (when not nil) for a
// statement that waits.
func rt27Run(t *testing.T, h *proxyHandle, sb, ref *sql.Conn, table string, stmts ...string) {
	t.Helper()
	ctx := context.Background()
	for i, q := range stmts {
		answered := make(chan struct{})
		if h != nil {
			go func() {
				select {
				case <-answered:
				case <-time.After(time.Second): // not a bound: only when to lift the rate
					h.setFillRate(0)
				}
			}()
		}
		got := runBoth(ctx, sb, q)
		close(answered)
		want := runBoth(ctx, ref, q)
		if got != want {
			t.Errorf("statement %d %q:\n sandbox: %s\n    copy: %s", i, q, got, want)
		}
		if i == 0 && !lazyFilling(t, sb, table) {
			t.Logf("%s is not filling after %q: the statements after it waited for the fill", table, q)
		}
	}
	if !lazyFilling(t, sb, table) {
		t.Logf("%s was whole before the last statement (a statement the fork cannot serve waits for the fill)", table)
	}
}

// rt27Whole lets h's fills run at full speed, then compares q's rows (run
// after the fill: a full scan waits for it) on sb and ref.
func rt27Whole(t *testing.T, h *proxyHandle, sb, ref *sql.Conn, q string) {
	t.Helper()
	h.setFillRate(0)
	ctx := context.Background()
	if got, want := runBoth(ctx, sb, q), runBoth(ctx, ref, q); got != want {
		t.Errorf("after the fill, %q:\n sandbox: %s\n    copy: %s", q, got, want)
	}
}

// TestRedTeam27TimeZoneTimestampKey: a TIMESTAMP unique key pinned by a
// string literal is read in the session's time zone; the copy-up reads it
// in UTC (the snapshot connection's), so it copies up the wrong row and
// the statement misses the row a copy has.
func TestRedTeam27TimeZoneTimestampKey(t *testing.T) {
	h, root := rt27Env(t, 500)
	sb, ref := rt27Pair(t, h, root, "rt27tz", []string{
		"SET time_zone = '+00:00'",
		"CREATE TABLE t (id INT PRIMARY KEY, ts TIMESTAMP NOT NULL, v INT NOT NULL, UNIQUE KEY (ts))",
		"INSERT INTO t SELECT seq, TIMESTAMP'2020-01-01 00:00:00' + INTERVAL seq HOUR, seq FROM seq_1_to_20000",
	}, "SET time_zone = '+05:00'")
	rt27SameWaiting(t, h, sb, ref, "rt27tz.t",
		"UPDATE t SET v = 0 WHERE id = 1",
		// 2020-01-02 05:00 at +05:00 is 00:00 UTC: id 24.
		"SELECT id, v FROM t WHERE ts = '2020-01-02 05:00:00'",
		"UPDATE t SET v = -1 WHERE ts = '2020-01-03 05:00:00'",
		"DELETE FROM t WHERE ts = '2020-01-04 05:00:00'",
		"INSERT INTO t (id, ts, v) VALUES (100001, '2020-01-05 05:00:00', 1)",
	)
	rt27Whole(t, h, sb, ref, "SELECT COUNT(*), SUM(v), SUM(id) FROM t")
}

// TestRedTeam27LossyUniqueInsert: an INSERT whose literal the column
// stores rounded or truncated (DECIMAL scale, DATETIME fractions, a string
// to an INT) lands on a key the literal does not equal: the copy-up by
// `col = literal` misses the row it collides with, so the fork accepts a
// row a copy refuses with 1062 (in the server's default strict mode).
func TestRedTeam27LossyUniqueInsert(t *testing.T) {
	h, root := rt27Env(t, 500)
	sb, ref := rt27Pair(t, h, root, "rt27lossy", []string{
		"CREATE TABLE t (id INT PRIMARY KEY, d DECIMAL(8,2) NOT NULL, dt DATETIME NOT NULL, v INT NOT NULL, UNIQUE KEY (d), UNIQUE KEY (dt))",
		"INSERT INTO t SELECT seq, seq / 100, TIMESTAMP'2020-01-01 00:00:00' + INTERVAL seq SECOND, seq FROM seq_1_to_20000",
	})
	rt27SameWaiting(t, h, sb, ref, "rt27lossy.t",
		"UPDATE t SET v = 0 WHERE id = 1",
		// 12.345 is stored 12.35: id 1235's.
		"INSERT INTO t (id, d, dt, v) VALUES (100001, '12.345', '2030-01-01 00:00:00', 1)",
		// 00:00:10.6 is stored 00:00:10 (MariaDB truncates): id 10's.
		"INSERT INTO t (id, d, dt, v) VALUES (100002, '99999.01', '2020-01-01 00:00:10.6', 1)",
		// '5.5' is stored 6 in an INT: id 6.
		"INSERT INTO t (id, d, dt, v) VALUES ('5.5', '99999.02', '2031-01-01 00:00:00', 1)",
		"REPLACE INTO t (id, d, dt, v) VALUES (100003, '13.455', '2032-01-01 00:00:00', 2)",
		"SELECT id, d, v FROM t WHERE id IN (100001, 100002, 100003, 6, 1235, 1346)",
	)
	rt27Whole(t, h, sb, ref, "SELECT COUNT(*), SUM(v), SUM(id), SUM(d) FROM t")
}

// TestRedTeam27LossyUniqueInsertNonStrict: the same without strict mode,
// where the server also clips out-of-range integers and truncates long
// strings into a unique key.
func TestRedTeam27LossyUniqueInsertNonStrict(t *testing.T) {
	h, root := rt27Env(t, 500)
	sb, ref := rt27Pair(t, h, root, "rt27clip", []string{
		"CREATE TABLE t (id INT PRIMARY KEY, tn TINYINT NULL, s VARCHAR(8) NOT NULL, v INT NOT NULL, UNIQUE KEY (tn), UNIQUE KEY (s))",
		"INSERT INTO t SELECT seq, IF(seq = 127, 127, NULL), CONCAT('k', LPAD(seq, 7, '0')), seq FROM seq_1_to_20000",
	}, "SET sql_mode = ''")
	rt27SameWaiting(t, h, sb, ref, "rt27clip.t",
		"UPDATE t SET v = 0 WHERE id = 1",
		"INSERT INTO t (id, tn, s, v) VALUES (100001, 300, 'new1', 1)",
		"INSERT INTO t (id, tn, s, v) VALUES (100002, NULL, 'k0000042zzz', 1)",
		"INSERT IGNORE INTO t (id, tn, s, v) VALUES (100003, NULL, 'k0000043zzz', 1)",
		"SELECT id, tn, s, v FROM t WHERE id IN (100001, 100002, 100003)",
	)
	rt27Whole(t, h, sb, ref, "SELECT COUNT(*), SUM(v), SUM(id) FROM t")
}

// TestRedTeam27GeneratedUniqueKey: a unique key on a generated column is
// set by the row's other columns: an INSERT that leaves it out, or an
// UPDATE of a column it is computed from, collides with a production row
// the copy-up does not bring.
func TestRedTeam27GeneratedUniqueKey(t *testing.T) {
	h, root := rt27Env(t, 500)
	sb, ref := rt27Pair(t, h, root, "rt27gen", []string{
		"CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL, g INT AS (v * 2) STORED, w INT NOT NULL, UNIQUE KEY (g))",
		"INSERT INTO t (id, v, w) SELECT seq, seq, 0 FROM seq_1_to_20000",
	})
	rt27SameWaiting(t, h, sb, ref, "rt27gen.t",
		"UPDATE t SET w = 1 WHERE id = 1",
		"INSERT INTO t (id, v, w) VALUES (100001, 42, 1)",
		"UPDATE t SET v = 43 WHERE id = 2",
		"SELECT id, v, g, w FROM t WHERE id IN (2, 42, 43, 100001)",
	)
	rt27Whole(t, h, sb, ref, "SELECT COUNT(*), SUM(v), SUM(g), SUM(w) FROM t")
}

// TestRedTeam27InvisibleColumnPositional: an INSERT without a column list
// gives values to the visible columns only; the proxy maps them by
// position over every column, invisible ones included, so it reads the
// wrong columns' values as the keys.
func TestRedTeam27InvisibleColumnPositional(t *testing.T) {
	h, root := rt27Env(t, 500)
	sb, ref := rt27Pair(t, h, root, "rt27inv", []string{
		"CREATE TABLE t (id INT PRIMARY KEY, h INT INVISIBLE DEFAULT 0, u INT NULL, v INT NOT NULL DEFAULT 0, UNIQUE KEY (u))",
		"INSERT INTO t (id, h, u, v) SELECT seq, 0, seq, seq FROM seq_1_to_20000",
	})
	rt27Same(t, sb, ref, "rt27inv.t",
		"UPDATE t SET v = 0 WHERE id = 1",
		"INSERT INTO t VALUES (100001, 42, 7)",
		"REPLACE INTO t VALUES (100002, 43, 8)",
		"SELECT id, u, v FROM t WHERE id IN (42, 43, 100001, 100002)",
	)
	rt27Whole(t, h, sb, ref, "SELECT COUNT(*), SUM(v), SUM(u), SUM(id) FROM t")
}

// TestRedTeam27CopiedValues: rows copied up from the snapshot (through
// text) are the rows a copy holds, for every kind of value: SELECT of each
// column's bytes after a point UPDATE copied the row up.
func TestRedTeam27CopiedValues(t *testing.T) {
	h, root := rt27Env(t, 500)
	sb, ref := rt27Pair(t, h, root, "rt27val", []string{
		"SET sql_mode = '', time_zone = '+00:00'",
		"CREATE TABLE t (id INT PRIMARY KEY, w INT NOT NULL DEFAULT 0, d DOUBLE, f FLOAT, fd FLOAT(7,3), dc DECIMAL(30,10), " +
			"b BIT(13), e ENUM('a','b','c'), st SET('x','y','z'), j JSON, p POINT, dt DATETIME(6), dz DATE, ts TIMESTAMP(6) NULL, " +
			"y YEAR, bl BLOB, l1 VARCHAR(20) CHARACTER SET latin1, u16 VARCHAR(20) CHARACTER SET utf16, u2 VARCHAR(20) CHARACTER SET ucs2, " +
			"gb VARCHAR(20) CHARACTER SET gbk, sj VARCHAR(20) CHARACTER SET sjis, c4 CHAR(4), bn BINARY(4), u64 BIGINT UNSIGNED, " +
			"t3 TIME(3), vc INT AS (id + 1) VIRTUAL, iv INT INVISIBLE)",
		"INSERT INTO t (id) SELECT seq FROM seq_1_to_20000",
		"UPDATE t SET d = -0e0, f = 0.1, fd = 1.2345, dc = '-12345678901234567890.0123456789', b = b'1010101010101', e = 'b', st = 'x,z', " +
			"j = '{\"a\": [1, 2.50, \"\\\\u00e9\"]}', p = POINT(1.5, -2.25), dt = '0000-00-00 00:00:00', dz = '2020-02-30', ts = '2038-01-19 03:14:07.999999', " +
			"y = 0, bl = (SELECT GROUP_CONCAT(CHAR(seq - 1) ORDER BY seq SEPARATOR '') FROM seq_1_to_256), l1 = _latin1 x'E9FFA0', " +
			"u16 = _utf16 x'D83DDE00', u2 = _ucs2 x'00E9', gb = _gbk x'C4E3BAC3', sj = _sjis x'835C', c4 = 'ab  ', bn = x'6100', " +
			"u64 = 18446744073709551615, t3 = '-838:59:59.999', iv = 7 WHERE id = 2",
		"UPDATE t SET d = 1e308, f = 3.4e38, dc = 0, dt = '2020-01-01 10:00:00.000001', dz = '0000-00-00', y = 2155, " +
			"d = 4.9e-324, bl = '', l1 = '', u64 = 0, t3 = '00:00:00.001' WHERE id = 3",
		"UPDATE t SET d = 0.1 + 0.2, f = -1.17549435e-38, fd = -9999.999 WHERE id = 4",
	})
	cols := "id, w, d, HEX(d), f, HEX(f), fd, dc, HEX(b), e, st, j, ST_AsText(p), HEX(p), dt, dz, ts, UNIX_TIMESTAMP(ts), y, " +
		"HEX(bl), HEX(l1), HEX(u16), HEX(u2), HEX(gb), HEX(sj), HEX(c4), HEX(bn), u64, t3, vc, iv"
	var stmts []string
	for _, id := range []string{"2", "3", "4", "5"} {
		stmts = append(stmts, "UPDATE t SET w = w + 1 WHERE id = "+id, "SELECT "+cols+" FROM t WHERE id = "+id)
	}
	rt27Same(t, sb, ref, "rt27val.t", stmts...)
	// The session's time zone on the copied-up TIMESTAMP.
	mustExecC(t, sb, "SET time_zone = '-07:00'")
	mustExecC(t, ref, "SET time_zone = '-07:00'")
	rt27Same(t, sb, ref, "rt27val.t", "SELECT id, ts FROM t WHERE id = 2")
	rt27Whole(t, h, sb, ref, "SELECT COUNT(*), SUM(CRC32(CONCAT_WS('|', "+cols+"))) FROM t")
}

// TestRedTeam27DrainDeadlock: a statement of one connection of a sandbox
// waits for a row lock another connection's transaction holds; that
// transaction's next statement reaches a filling fork and waits for the
// fill; the fill's end drains the sandbox's statements in flight, the
// first one among them, so nothing moves until the first one's lock wait
// times out. On a copy the second statement answers at once, the
// transaction commits and the first statement gets its answer (1062).
func TestRedTeam27DrainDeadlock(t *testing.T) {
	h, root := rt27Env(t, 2000)
	ctx := context.Background()
	for _, q := range []string{
		"DROP DATABASE IF EXISTS rt27dl", "CREATE DATABASE rt27dl",
		"CREATE TABLE rt27dl.big (id INT PRIMARY KEY, v INT NOT NULL)",
		"INSERT INTO rt27dl.big SELECT seq, seq FROM rt27dl.seq_1_to_20000",
		"CREATE TABLE rt27dl.small (id INT PRIMARY KEY)",
	} {
		mustExecC(t, root, q)
	}
	t.Cleanup(func() { _, _ = root.Exec("DROP DATABASE IF EXISTS rt27dl") })
	db := openDB(t, h.dsn("rt27dl"))
	a, b := conn(t, db), conn(t, db)
	mustExecC(t, a, "SANDBOX CREATE rt27dl_box")
	mustExecC(t, b, "SANDBOX ATTACH rt27dl_box")
	t.Cleanup(func() { _, _ = a.ExecContext(ctx, "SANDBOX DISCARD rt27dl_box") })
	mustExecC(t, a, "INSERT INTO small VALUES (0)") // forks small whole (it is empty)
	mustExecC(t, a, "UPDATE big SET v = 0 WHERE id = 1")
	if !lazyFilling(t, a, "rt27dl.big") {
		t.Fatal("big is not filling")
	}
	mustExecC(t, a, "SET SESSION innodb_lock_wait_timeout = 30")
	mustExecC(t, b, "BEGIN")
	mustExecC(t, b, "INSERT INTO small VALUES (1)")
	first := make(chan error, 1)
	go func() {
		_, err := a.ExecContext(ctx, "INSERT INTO small VALUES (1)") // waits for b's row lock
		first <- err
	}()
	time.Sleep(500 * time.Millisecond) // a is waiting on the lock (no threshold: only ordering)
	go func() {
		time.Sleep(500 * time.Millisecond) // b's count waits for the fill: let it end
		h.setFillRate(0)
	}()
	got := queryString(t, b, "SELECT COUNT(*) FROM big") // waits for the fill
	if got != "20000" {
		t.Errorf("count: %s", got)
	}
	mustExecC(t, b, "COMMIT")
	err := <-first
	if mysqlErrCode(err) != 1062 {
		t.Errorf("the first connection's INSERT: %s, want 1062 as on a copy (b's statement answers at once there, b commits)", mysqlErr(err))
	}
}

// TestRedTeam27KillWaitingStatement: KILL QUERY of a statement waiting
// for a fill ends it with 1317, as it ends a statement waiting for a
// copy; the connection answers the next statement.
func TestRedTeam27KillWaitingStatement(t *testing.T) {
	h, root := rt27Env(t, 200)
	ctx := context.Background()
	for _, q := range []string{
		"DROP DATABASE IF EXISTS rt27kill", "CREATE DATABASE rt27kill",
		"CREATE TABLE rt27kill.t (id INT PRIMARY KEY, v INT NOT NULL)",
		"INSERT INTO rt27kill.t SELECT seq, seq FROM rt27kill.seq_1_to_20000",
	} {
		mustExecC(t, root, q)
	}
	t.Cleanup(func() { _, _ = root.Exec("DROP DATABASE IF EXISTS rt27kill") })
	db := openDB(t, h.dsn("rt27kill"))
	a := conn(t, db)
	mustExecC(t, a, "UPDATE t SET v = 0 WHERE id = 1")
	id := queryString(t, a, "SELECT CONNECTION_ID()")
	done := make(chan error, 1)
	go func() {
		var n string
		done <- a.QueryRowContext(ctx, "SELECT COUNT(*) FROM t").Scan(&n) // waits for the fill (100 s)
	}()
	time.Sleep(time.Second)
	killer := conn(t, db)
	mustExecC(t, killer, "KILL QUERY "+id)
	select {
	case err := <-done:
		if mysqlErrCode(err) != 1317 {
			t.Errorf("the killed statement: %s, want 1317", mysqlErr(err))
		}
	case <-time.After(60 * time.Second):
		t.Fatal("KILL QUERY did not end a statement waiting for a fill")
	}
	if !lazyFilling(t, a, "rt27kill.t") {
		t.Error("the fill ended: the test proved nothing")
	}
	wantString(t, a, "SELECT v FROM t WHERE id = 1", "0", "after the kill: %s")
}

// TestRedTeam27CloseDuringFill: a sandbox that ends (its connection
// closes) while a fork fills leaves nothing behind: no connection of the
// fill, no staging table, no fill function.
func TestRedTeam27CloseDuringFill(t *testing.T) {
	h, root := rt27Env(t, 200)
	for _, q := range []string{
		"DROP DATABASE IF EXISTS rt27close", "CREATE DATABASE rt27close",
		"CREATE TABLE rt27close.t (id INT PRIMARY KEY, v INT NOT NULL)",
		"INSERT INTO rt27close.t SELECT seq, seq FROM rt27close.seq_1_to_20000",
	} {
		mustExecC(t, root, q)
	}
	t.Cleanup(func() { _, _ = root.Exec("DROP DATABASE IF EXISTS rt27close") })
	db := openDB(t, h.dsn("rt27close"))
	a := conn(t, db)
	mustExecC(t, a, "UPDATE t SET v = 0 WHERE id = 1")
	if !lazyFilling(t, a, "rt27close.t") {
		t.Fatal("t is not filling")
	}
	name := queryString(t, root, "SELECT ROUTINE_SCHEMA FROM information_schema.ROUTINES WHERE ROUTINE_NAME LIKE 'fill%' LIMIT 1")
	if name == "" {
		t.Fatal("no fill function found")
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	db.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		left := queryString(t, root, "SELECT CONCAT((SELECT COUNT(*) FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = '"+name+"'), '/', "+
			"(SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = '"+name+"'), '/', "+
			"(SELECT COUNT(*) FROM information_schema.INNODB_TRX))")
		if left == "0/0/0" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("left after the sandbox ended (functions/tables/open transactions): %s", left)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

var _ = fmt.Sprint

// TestRedTeam27SlowStatementAtFillEnd: a statement of the sandbox that
// runs longer than the fill's drain wait (5 s) when the fill ends must
// only delay the swap. The drain's retry calls the release function a
// failed Drain returns as nil: the proxy process panics.
func TestRedTeam27SlowStatementAtFillEnd(t *testing.T) {
	h, root := rt27Env(t, 0)
	ctx := context.Background()
	for _, q := range []string{
		"DROP DATABASE IF EXISTS rt27slow", "CREATE DATABASE rt27slow",
		"CREATE TABLE rt27slow.t (id INT PRIMARY KEY, v INT NOT NULL)",
		"INSERT INTO rt27slow.t SELECT seq, seq FROM rt27slow.seq_1_to_20000",
	} {
		mustExecC(t, root, q)
	}
	t.Cleanup(func() { _, _ = root.Exec("DROP DATABASE IF EXISTS rt27slow") })
	db := openDB(t, h.dsn("rt27slow"))
	a, b := conn(t, db), conn(t, db)
	mustExecC(t, a, "SANDBOX CREATE rt27slow_box")
	mustExecC(t, b, "SANDBOX ATTACH rt27slow_box")
	t.Cleanup(func() { _, _ = a.ExecContext(ctx, "SANDBOX DISCARD rt27slow_box") })
	slept := make(chan error, 1)
	go func() {
		_, err := b.ExecContext(ctx, "DO SLEEP(12)") // in flight while the fill ends
		slept <- err
	}()
	time.Sleep(300 * time.Millisecond)
	mustExecC(t, a, "UPDATE t SET v = 0 WHERE id = 1") // forks t lazily; its fill ends in well under 5 s
	if err := <-slept; err != nil {
		t.Errorf("DO SLEEP(12): %s", mysqlErr(err))
	}
	wantString(t, a, "SELECT CONCAT(COUNT(*), '/', SUM(v)) FROM t", fmt.Sprint(20000, "/", 20000*20001/2-1), "the fork: %s")
	fresh := conn(t, openDB(t, h.dsn("rt27slow")))
	wantString(t, fresh, "SELECT 1", "1", "the proxy after the fill: %s")
}

// rt27Big makes database db anew with table t (id, v) of n rows.
func rt27Big(t *testing.T, root *sql.DB, db string, n int) {
	t.Helper()
	for _, q := range []string{
		"DROP DATABASE IF EXISTS " + db, "CREATE DATABASE " + db,
		"CREATE TABLE " + db + ".t (id INT PRIMARY KEY, v INT NOT NULL)",
		fmt.Sprintf("INSERT INTO %s.t SELECT seq, seq FROM %s.seq_1_to_%d", db, db, n),
	} {
		mustExecC(t, root, q)
	}
	t.Cleanup(func() { _, _ = root.Exec("DROP DATABASE IF EXISTS " + db) })
}

// TestRedTeam27DiffDuringFill: SANDBOX DIFF (and EXPORT) while a fork
// fills answer once it is whole, with exactly the sandbox's change.
func TestRedTeam27DiffDuringFill(t *testing.T) {
	h, root := rt27Env(t, 2000)
	rt27Big(t, root, "rt27diff", 20000)
	a := conn(t, openDB(t, h.dsn("rt27diff")))
	mustExecC(t, a, "UPDATE t SET v = 0 WHERE id = 1")
	if !lazyFilling(t, a, "rt27diff.t") {
		t.Fatal("t is not filling")
	}
	done := make(chan [][]string, 1)
	go func() {
		rows, err := a.QueryContext(context.Background(), "SANDBOX DIFF SUMMARY")
		if err != nil {
			t.Errorf("SANDBOX DIFF SUMMARY: %s", mysqlErr(err))
			done <- nil
			return
		}
		defer rows.Close()
		var out [][]string
		for rows.Next() {
			vals, _ := scanStrings(rows)
			out = append(out, nullText(vals))
		}
		done <- out
	}()
	time.Sleep(500 * time.Millisecond) // the DIFF waits for the fill: let it end
	h.setFillRate(0)
	select {
	case rows := <-done:
		if len(rows) != 1 || strings.Join(rows[0][2:5], "/") != "0/1/0" {
			t.Errorf("DIFF SUMMARY during the fill: %v, want one table 0/1/0", rows)
		}
	case <-time.After(90 * time.Second):
		t.Fatal("SANDBOX DIFF SUMMARY during the fill never answered")
	}
}

// TestRedTeam27ResetWhileWaiting: a statement waiting for a fill when
// another connection of the sandbox resets it answers as after the reset
// (a copy's statement runs before or after a reset, never fails by it).
func TestRedTeam27ResetWhileWaiting(t *testing.T) {
	h, root := rt27Env(t, 500)
	rt27Big(t, root, "rt27rst", 20000)
	ctx := context.Background()
	db := openDB(t, h.dsn("rt27rst"))
	a, b := conn(t, db), conn(t, db)
	mustExecC(t, a, "SANDBOX CREATE rt27rst_box")
	mustExecC(t, b, "SANDBOX ATTACH rt27rst_box")
	t.Cleanup(func() { _, _ = a.ExecContext(ctx, "SANDBOX DISCARD rt27rst_box") })
	mustExecC(t, a, "UPDATE t SET v = 0 WHERE id = 1")
	if !lazyFilling(t, a, "rt27rst.t") {
		t.Fatal("t is not filling")
	}
	got := make(chan string, 1)
	go func() {
		var n string
		if err := a.QueryRowContext(ctx, "SELECT SUM(v) FROM t").Scan(&n); err != nil {
			n = "error " + mysqlErr(err)
		}
		got <- n
	}()
	time.Sleep(time.Second)
	mustExecC(t, b, "SANDBOX RESET")
	select {
	case n := <-got:
		if n != fmt.Sprint(20000*20001/2) && n != fmt.Sprint(20000*20001/2-1) {
			t.Errorf("the waiting SELECT: %s, want the sum before or after the reset", n)
		}
	case <-time.After(90 * time.Second):
		t.Fatal("the waiting SELECT never answered")
	}
}

// TestRedTeam27ReachFillObjects: a sandbox's statements cannot reach the
// staging table or call the fill function or the copy-up procedure (they
// live in the sandbox's own database): a call would copy rows into the staging table behind the
// fill and break it.
func TestRedTeam27ReachFillObjects(t *testing.T) {
	h, root := rt27Env(t, 500)
	rt27Big(t, root, "rt27reach", 20000)
	a := conn(t, openDB(t, h.dsn("rt27reach")))
	mustExecC(t, a, "UPDATE t SET v = 0 WHERE id = 1")
	if !lazyFilling(t, a, "rt27reach.t") {
		t.Fatal("t is not filling")
	}
	fn := rowsOf(t, root, "SELECT ROUTINE_SCHEMA, ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_NAME LIKE 'fill%'")
	if len(fn) != 1 {
		t.Fatalf("fill functions: %v", fn)
	}
	staging := "`" + fn[0][0] + "`.`f" + strings.TrimPrefix(fn[0][1], "fill") + "`"
	up := "`" + fn[0][0] + "`.`up" + strings.TrimPrefix(fn[0][1], "fill") + "`"
	wantString(t, root, "SELECT COUNT(*) FROM information_schema.ROUTINES WHERE CONCAT('`', ROUTINE_SCHEMA, '`.`', ROUTINE_NAME, '`') = '"+up+"'",
		"1", "the copy-up procedure: %s")
	for _, q := range []string{
		"SELECT COUNT(*) FROM " + staging,
		"SELECT `" + fn[0][0] + "`.`" + fn[0][1] + "`(5, 5, 1000)",
		"INSERT INTO " + staging + " (id, v) VALUES (-1, -1)",
		"CALL " + up + "(5, 5)",
	} {
		if _, err := a.ExecContext(context.Background(), q); err == nil {
			t.Errorf("%s: went through", q)
		}
	}
	h.setFillRate(0)
	wantString(t, a, "SELECT CONCAT(COUNT(*), '/', SUM(v)) FROM t", fmt.Sprint(20000, "/", 20000*20001/2-1), "the fork: %s")
}

// rt27Databases makes database db and its reference db_ref anew, each
// with the tables setup makes, and drops them when t ends.
func rt27Databases(t *testing.T, root *sql.DB, db string, setup []string) {
	t.Helper()
	ctx := context.Background()
	for _, d := range []string{db, db + "_ref"} {
		c := conn(t, root)
		mustExecC(t, c, "DROP DATABASE IF EXISTS "+d)
		mustExecC(t, c, "CREATE DATABASE "+d)
		mustExecC(t, c, "USE "+d)
		for _, q := range setup {
			mustExecC(t, c, q)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = root.ExecContext(ctx, "DROP DATABASE IF EXISTS "+d) })
	}
}
