package integration

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// Red team of lazy forks and transactions (88ec18d): statements of an open
// transaction on a fork still filling copy their rows up inside the
// transaction, which holds the fill until it ends. Each test compares the
// sandbox's answers with those of a copy made at the fork (a database
// <db>_ref reached directly), or with the answers a copy gives by
// construction.

// rt29Setup is a table r of 20,001 rows (keys 0..20000) of many types:
// zero dates, DATETIME(3), TIMESTAMP, BIT, BLOB with bytes no character
// set spells, JSON, ENUM, virtual and stored generated columns, CHAR with
// trailing spaces, a unique VARCHAR, a latin1 column with non-ASCII text.
var rt29Setup = []string{
	"SET SESSION sql_mode = 'NO_AUTO_VALUE_ON_ZERO'",
	"SET SESSION time_zone = '+00:00'",
	"CREATE TABLE r (id INT AUTO_INCREMENT PRIMARY KEY, d DATE, dt DATETIME(3), ts TIMESTAMP NULL DEFAULT NULL, b BIT(5), bl BLOB, " +
		"j JSON, e ENUM('a','b','c'), g INT AS (CHAR_LENGTH(c) * 2) VIRTUAL, gs VARCHAR(30) AS (CONCAT('g', u)) STORED, c CHAR(10), " +
		"u VARCHAR(20) UNIQUE, l VARCHAR(20) CHARACTER SET latin1)",
	"INSERT INTO r (id, d, dt, ts, b, bl, j, e, c, u, l) SELECT seq, IF(seq % 7 = 0, '0000-00-00', '2020-01-01' + INTERVAL seq DAY), " +
		"IF(seq % 5 = 0, '0000-00-00 00:00:00', '2021-03-28 00:30:00.123' + INTERVAL seq HOUR), FROM_UNIXTIME(1600000000 + seq * 3600), " +
		"seq % 32, CONCAT(CHAR(seq % 256), X'FF00', seq), JSON_OBJECT('k', seq, 's', 'é'), ELT(1 + seq % 3, 'a', 'b', 'c'), " +
		"IF(seq % 4 = 0, 'pad', 'c'), CONCAT('u', seq), CONCAT('caf', CHAR(0xE9 USING latin1), seq) FROM seq_0_to_20000",
	"CREATE TABLE small (id INT PRIMARY KEY, v INT)",
	"INSERT INTO small VALUES (1, 1), (2, 2)",
	"ANALYZE TABLE r",
}

// rt29Pair is rt27Pair with go-sql-driver parameters for both connections
// (multiStatements=true, say).
func rt29Pair(t *testing.T, h *proxyHandle, root *sql.DB, db string, setup []string, params ...string) (sb, ref *sql.Conn) {
	t.Helper()
	rt27Databases(t, root, db, setup)
	sb = conn(t, openDB(t, h.dsn(db, params...)))
	ref = conn(t, openDB(t, directDSN(h.db, db+"_ref", params...)))
	return sb, ref
}

// rt29Same runs each statement on sb and then on ref and reports each
// answer that differs (ref's database names, db_ref, told back as db); a statement the sandbox has not answered in 3 s
// has the fill run at full speed (a statement that waits for the fill
// is a right answer too, only slower).
func rt29Same(t *testing.T, h *proxyHandle, sb, ref *sql.Conn, stmts ...string) {
	t.Helper()
	ctx := context.Background()
	for _, q := range stmts {
		lift := liftAfter(h, 3*time.Second)
		got := runBoth(ctx, sb, q)
		close(lift)
		if want := strings.ReplaceAll(strings.ReplaceAll(runBoth(ctx, ref, q), "_ref`", "`"), "_ref.", "."); got != want {
			t.Errorf("%q:\n sandbox: %s\n    copy: %s", q, got, want)
		}
	}
}

// rt29Battery is a transaction of point statements on r, every one
// copying rows up inside it: key 0, savepoints, a 1062, an
// AUTO_INCREMENT insert, ON DUPLICATE KEY UPDATE, REPLACE of two rows,
// locking reads, a TIMESTAMP in the session's zone, FOUND_ROWS() and
// ROW_COUNT() after a copy-up, the session's settings after the copy-ups.
// (A statement on the filling fork that reads FOUND_ROWS() or ROW_COUNT()
// gets 1412 in a transaction that cannot be replayed, as documented: left
// out.)
func rt29Battery(begin string, base int) []string {
	k := func(i int) int { return base + i }
	return []string{
		begin,
		"SELECT COUNT(*) FROM small",
		"SELECT * FROM r WHERE id = 0",
		fmt.Sprintf("SELECT * FROM r WHERE id IN (%d, %d, %d) ORDER BY id", k(7), k(10), k(35)),
		fmt.Sprintf("UPDATE r SET e = 'c', b = b'10101' WHERE id = %d", k(14)),
		"SAVEPOINT a",
		fmt.Sprintf("UPDATE r SET c = 'sp' WHERE id = %d", k(15)),
		fmt.Sprintf("DELETE FROM r WHERE id = %d", k(16)),
		"ROLLBACK TO SAVEPOINT a",
		fmt.Sprintf("SELECT * FROM r WHERE id IN (%d, %d) ORDER BY id", k(15), k(16)),
		fmt.Sprintf("UPDATE r SET c = 'again' WHERE id = %d", k(15)),
		"RELEASE SAVEPOINT a",
		fmt.Sprintf("INSERT INTO r (id, c, u) VALUES (%d, 'dup', 'x%d')", k(17), k(17)),
		fmt.Sprintf("INSERT INTO r (id, c, u) VALUES (%d, 'dupu', 'u%d')", k(100000), k(18)),
		fmt.Sprintf("INSERT INTO r (c, u) VALUES ('auto', 'new%d')", base),
		"SELECT LAST_INSERT_ID()",
		fmt.Sprintf("INSERT INTO r (id, c, u) VALUES (%d, 'odku', 'u%d') ON DUPLICATE KEY UPDATE c = 'odku2', dt = dt + INTERVAL 1 SECOND", k(18), k(18)),
		fmt.Sprintf("REPLACE INTO r (id, c, u) VALUES (%d, 'rep', 'u%d')", k(19), k(20)),
		fmt.Sprintf("SELECT * FROM r WHERE id IN (%d, %d, %d) ORDER BY id", k(18), k(19), k(20)),
		fmt.Sprintf("SELECT id, c, l FROM r WHERE id = %d FOR UPDATE", k(21)),
		fmt.Sprintf("SELECT id, c, bl FROM r WHERE u = 'u%d' LOCK IN SHARE MODE", k(22)),
		fmt.Sprintf("UPDATE r SET c = 'tz', ts = '2020-06-01 10:00:00' WHERE id = %d", k(23)),
		fmt.Sprintf("SELECT id, ts, UNIX_TIMESTAMP(ts), dt, d FROM r WHERE id IN (%d, %d) ORDER BY id", k(23), k(24)),
		fmt.Sprintf("SELECT SQL_CALC_FOUND_ROWS id FROM r WHERE id IN (%d, %d, %d) LIMIT 1", k(25), k(26), k(27)),
		"SELECT FOUND_ROWS()",
		fmt.Sprintf("UPDATE r SET c = 'w' WHERE id IN (%d, %d)", k(29), k(30)),
		"SELECT ROW_COUNT()",
		fmt.Sprintf("UPDATE r SET c = 'x' WHERE id = %d", k(31)),
		"SELECT ROW_COUNT(), @@warning_count",
		fmt.Sprintf("UPDATE r SET d = '2020-02-30' WHERE id = %d", k(32)),
		"SELECT @@warning_count",
		fmt.Sprintf("SELECT * FROM r WHERE id IN (%d, %d, %d, %d, %d) ORDER BY id", k(28), k(29), k(31), k(32), k(33)),
		"SELECT @@session.sql_mode, @@session.time_zone, @@session.autocommit, @@session.tx_isolation",
		"COMMIT",
		fmt.Sprintf("SELECT * FROM r WHERE id IN (%d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d) ORDER BY id",
			k(14), k(15), k(16), k(17), k(18), k(19), k(20), k(21), k(22), k(23), k(28), k(31), k(32)),
		fmt.Sprintf("SELECT * FROM r WHERE u = 'new%d'", base),
	}
}

// TestRT29TransactionBattery: the battery in transactions begun by BEGIN
// and by autocommit off, in REPEATABLE READ, SERIALIZABLE, READ
// UNCOMMITTED and READ COMMITTED, under a client sql_mode and time zone
// unlike the fill's (ANSI_QUOTES, NO_BACKSLASH_ESCAPES,
// PAD_CHAR_TO_FULL_LENGTH, strict; +05:30): every answer is the copy's,
// the fork still fills after them, and it ends equal to the copy.
func TestRT29TransactionBattery(t *testing.T) {
	h, root := rt27Env(t, 400)
	sb, ref := rt29Pair(t, h, root, "rt29bat", rt29Setup)
	for _, q := range []string{
		"SET SESSION time_zone = '+05:30'",
		"SET SESSION sql_mode = 'ANSI_QUOTES,NO_BACKSLASH_ESCAPES,PAD_CHAR_TO_FULL_LENGTH,STRICT_ALL_TABLES,NO_AUTO_VALUE_ON_ZERO'",
	} {
		mustExecC(t, sb, q)
		mustExecC(t, ref, q)
	}
	rt29Same(t, h, sb, ref, "UPDATE r SET c = 'first' WHERE id = 1")
	if !lazyFilling(t, sb, "rt29bat.r") {
		t.Fatal("r is not filling")
	}
	for i, v := range []struct{ iso, begin string }{
		{"REPEATABLE READ", "BEGIN"},
		{"SERIALIZABLE", "START TRANSACTION"},
		{"READ UNCOMMITTED", "SET autocommit = 0"},
		{"READ COMMITTED", "BEGIN"},
	} {
		rt29Same(t, h, sb, ref, "SET SESSION TRANSACTION ISOLATION LEVEL "+v.iso)
		rt29Same(t, h, sb, ref, rt29Battery(v.begin, 100*(i+1))...)
		if v.begin == "SET autocommit = 0" {
			rt29Same(t, h, sb, ref, "SET autocommit = 1")
		}
	}
	if !lazyFilling(t, sb, "rt29bat.r") {
		t.Error("r is whole: a statement of the transactions waited for the fill")
	}
	h.setFillRate(0)
	sum := "SELECT CONCAT(COUNT(*), '/', SUM(CRC32(CONCAT_WS('|', id, d, dt, ts, b, HEX(bl), j, e, g, gs, c, u, l)))) FROM r"
	if got, want := queryString(t, sb, sum), queryString(t, ref, sum); got != want {
		t.Errorf("the fork %s, the copy %s", got, want)
	}
	rt29Same(t, h, sb, ref, "INSERT INTO r (c) VALUES ('after')", "SELECT LAST_INSERT_ID()")
}

// TestRT29MultiStatementRollback: in a transaction holding the fill, one
// COM_QUERY of several statements (CLIENT_MULTI_STATEMENTS) whose first
// one ends the transaction or rolls back to a savepoint. The rows the
// later statements need are copied up inside the transaction before the
// text runs, so the ROLLBACK takes them away again: the UPDATE after it
// finds no row, where a copy updates it.
func TestRT29MultiStatementRollback(t *testing.T) {
	h, root := rt27Env(t, 400)
	sb, ref := rt29Pair(t, h, root, "rt29ms", rt29Setup, "multiStatements=true")
	rt29Same(t, h, sb, ref, "UPDATE r SET c = 'first' WHERE id = 1")
	if !lazyFilling(t, sb, "rt29ms.r") {
		t.Fatal("r is not filling")
	}
	rt29Same(t, h, sb, ref,
		"BEGIN",
		"UPDATE r SET c = 'x' WHERE id = 3",
		"ROLLBACK; UPDATE r SET c = 'after' WHERE id = 5",
		"SELECT id, c FROM r WHERE id IN (3, 5) ORDER BY id",
		"BEGIN",
		"UPDATE r SET c = 'y' WHERE id = 6",
		"SAVEPOINT s",
		"ROLLBACK TO SAVEPOINT s; UPDATE r SET c = 'sp' WHERE id = 7",
		"SELECT id, c FROM r WHERE id IN (6, 7) ORDER BY id",
		"COMMIT; UPDATE r SET c = 'ac' WHERE id = 8",
		"SELECT id, c FROM r WHERE id IN (6, 7, 8) ORDER BY id",
		"SET autocommit = 0",
		"UPDATE r SET c = 'z' WHERE id = 9",
		"ROLLBACK; DELETE FROM r WHERE id = 10",
		"COMMIT",
		"SET autocommit = 1",
		"SELECT id, c FROM r WHERE id IN (9, 10) ORDER BY id",
	)
	h.setFillRate(0)
	rt29Same(t, h, sb, ref, "SELECT COUNT(*), SUM(CRC32(CONCAT_WS('|', id, c))) FROM r")
}

// TestRT29CompatModes: a client in the compatibility sql_modes the proxy
// accepts (ORACLE and MSSQL it refuses, saying so) in a transaction on a
// filling fork: the copy-up block is parsed in the client's mode.
func TestRT29CompatModes(t *testing.T) {
	h, root := rt27Env(t, 400)
	sb, ref := rt29Pair(t, h, root, "rt29ora", rt29Setup)
	rt29Same(t, h, sb, ref, "UPDATE r SET c = 'first' WHERE id = 1")
	if !lazyFilling(t, sb, "rt29ora.r") {
		t.Fatal("r is not filling")
	}
	for _, mode := range []string{"ANSI", "DB2", "POSTGRESQL,NO_BACKSLASH_ESCAPES", "MAXDB", "TRADITIONAL"} {
		rt29Same(t, h, sb, ref,
			"SET SESSION sql_mode = '"+mode+"'",
			"BEGIN",
			"SELECT id, c, u FROM r WHERE id = 11",
			"UPDATE r SET c = 'o' WHERE id = 12",
			"SELECT @@session.sql_mode",
			"COMMIT",
			"SELECT id, c FROM r WHERE id IN (11, 12) ORDER BY id",
			"SET SESSION sql_mode = DEFAULT",
		)
	}
}

// rt29Shared is a proxy filling at rate, lzs.t of n rows (lazyEnv),
// lzs.small, and two connections a and b of one named sandbox.
func rt29Shared(t *testing.T, n int, rate int64, name string) (h *proxyHandle, root *sql.DB, a, b *sql.Conn) {
	t.Helper()
	h, _ = lazyEnv(t, n, rate)
	root = openDB(t, h.db.DSN(""))
	mustExecC(t, root, "CREATE TABLE lzs.small (id INT PRIMARY KEY, v INT)")
	mustExecC(t, root, "INSERT INTO lzs.small VALUES (1, 1), (2, 2)")
	a, b = conn(t, openDB(t, h.dsn("lzs"))), conn(t, openDB(t, h.dsn("lzs")))
	mustExecC(t, a, "SANDBOX CREATE "+name)
	mustExecC(t, b, "SANDBOX ATTACH "+name)
	return h, root, a, b
}

// TestRT29SnapshotOlderThanOthersChange: a REPEATABLE READ transaction
// whose read view was taken (WITH CONSISTENT SNAPSHOT, or a read of
// another table) before another connection of the sandbox changed a row
// of the filling fork. On a copy the transaction does not see that
// change; the proxy restarts the transaction before its first copy-up
// (its view is older than the fork's last change), and the new view sees
// it: the moved snapshot of any restart in a shared sandbox
// (docs/SANDBOXES.md). Not seeing the row at all would be wrong.
func TestRT29SnapshotOlderThanOthersChange(t *testing.T) {
	h, _, a, b := rt29Shared(t, 20000, 400, "rt29snap")
	mustExecC(t, a, "UPDATE t SET v = 1 WHERE id = 1")
	if !lazyFilling(t, a, "lzs.t") {
		t.Fatal("t is not filling")
	}
	for i, begin := range []string{"START TRANSACTION WITH CONSISTENT SNAPSHOT", "BEGIN"} {
		id := 20 + i
		mustExecC(t, a, begin)
		wantString(t, a, "SELECT COUNT(*) FROM small", "2", "small: %s")
		mustExecC(t, b, fmt.Sprintf("UPDATE t SET v = 2000 WHERE id = %d", id)) // committed after a's read view
		got := runBoth(context.Background(), a, fmt.Sprintf("SELECT v FROM t WHERE id = %d", id))
		if want := fmt.Sprintf("[{%d true}]", id%100); got != want && got != "[{2000 true}]" && !strings.Contains(got, "1412") {
			t.Errorf("%s: row %d read after another connection's change committed after the read view: %s, want %s (as on a copy), "+
				"2000 (the restart's moved snapshot) or 1412", begin, id, got, want)
		}
		mustExecC(t, a, "COMMIT")
	}
	if !lazyFilling(t, a, "lzs.t") {
		t.Log("t is whole")
	}
	h.setFillRate(0)
}

// TestRT29LockingReadDeadlock: connection b of a shared sandbox holds a
// row lock on a whole table (SELECT … FOR UPDATE, no write); a's
// transaction holds the fill of t and waits for that row; b then reads
// one row of t. On a copy b's read answers at once, b commits, and a's
// UPDATE goes on. Through the proxy b's read waits for a's transaction
// to end (b "has not written"), a waits for b's lock: a gets 1205 after
// innodb_lock_wait_timeout.
func TestRT29LockingReadDeadlock(t *testing.T) {
	for _, lock := range []string{"FOR UPDATE", "LOCK IN SHARE MODE"} {
		t.Run(strings.ReplaceAll(lock, " ", ""), func(t *testing.T) {
			h, _, a, b := rt29Shared(t, 20000, 400, "rt29lk")
			ctx := context.Background()
			mustExecC(t, a, "UPDATE small SET v = 10 WHERE id = 1") // forks small
			h.setFillRate(0)
			testkit.Eventually(t, "small to be whole", func() bool { return !lazyFilling(t, a, "lzs.small") })
			h.setFillRate(400)
			mustExecC(t, a, "UPDATE t SET v = 1 WHERE id = 1")
			if !lazyFilling(t, a, "lzs.t") {
				t.Fatal("t is not filling")
			}
			mustExecC(t, a, "SET SESSION innodb_lock_wait_timeout = 5")
			mustExecC(t, b, "BEGIN")
			wantString(t, b, "SELECT v FROM small WHERE id = 1 "+lock, "10", "b's locking read: %s")
			mustExecC(t, a, "BEGIN")
			mustExecC(t, a, "UPDATE t SET v = 100 WHERE id = 5") // a holds t's fill
			aDone := make(chan string, 1)
			go func() { aDone <- runBoth(ctx, a, "UPDATE small SET v = 11 WHERE id = 1") }()
			time.Sleep(time.Second) // a waits for b's lock (not a bound: the outcome does not depend on it)
			bDone := make(chan string, 1)
			go func() {
				got := runBoth(ctx, b, "SELECT v FROM t WHERE id = 7")
				_, _ = b.ExecContext(ctx, "COMMIT")
				bDone <- got
			}()
			var gotA string
			start := time.Now()
			select {
			case gotA = <-aDone:
				t.Logf("a's UPDATE answered after %v: %s", time.Since(start), gotA)
			case <-time.After(120 * time.Second):
				t.Fatal("a's UPDATE never answered")
			}
			if gotA != "affected 1, id 0" {
				t.Errorf("a's UPDATE of the row b locked (%s) while b's read of t waited for a: %s, want affected 1 as on a copy (b's read does not wait there)",
					lock, gotA)
			}
			_, _ = a.ExecContext(ctx, "COMMIT")
			h.setFillRate(0) // b, rolled back, waits for the fill's end
			select {
			case got := <-bDone:
				if got != "[{7 true}]" {
					t.Errorf("b's read of row 7: %s", got)
				}
			case <-time.After(120 * time.Second):
				t.Fatal("b's read never answered after a's COMMIT")
			}
			h.setFillRate(0)
		})
	}
}

// TestRT29ReadOnly: a START TRANSACTION READ ONLY's statement on a
// filling fork waits for the fill (docs/SANDBOXES.md: its copy-up insert
// would fail with 1792), then reads what a copy reads; so when its read
// view is older than a copy-up another connection committed, which
// restarts it first. The transaction must stay read only (1792 for a
// write). Observed: the statement gets 1105 "could not be copied … 1792".
func TestRT29ReadOnly(t *testing.T) {
	for _, restart := range []bool{false, true} {
		t.Run(fmt.Sprint("restart=", restart), func(t *testing.T) {
			h, _, a, b := rt29Shared(t, 20000, 400, "rt29ro")
			ctx := context.Background()
			mustExecC(t, a, "UPDATE t SET v = 1 WHERE id = 1")
			mustExecC(t, a, "START TRANSACTION READ ONLY")
			wantString(t, a, "SELECT COUNT(*) FROM small", "2", "small: %s")
			if restart {
				wantString(t, b, "SELECT v FROM t WHERE id = 20", "20", "b's row 20: %s") // an autocommit copy-up after a's view
			}
			lift := liftAfter(h, 5*time.Second)
			got := runBoth(ctx, a, "SELECT v FROM t WHERE id = 21")
			close(lift)
			if got != "[{21 true}]" {
				t.Errorf("row 21 in the READ ONLY transaction: %s, want 21 (after waiting for the fill)", got)
			}
			if got := runBoth(ctx, a, "INSERT INTO small VALUES (3, 3)"); !strings.HasPrefix(got, "error 1792") {
				t.Errorf("a write in the READ ONLY transaction: %s, want 1792", got)
			}
			mustExecC(t, a, "COMMIT")
			wantString(t, a, "SELECT COUNT(*) FROM small", "2", "small after the READ ONLY transaction: %s")
		})
	}
}

// TestRT29HolderKilled: the holder of a fill killed (KILL CONNECTION from
// another connection of the sandbox), or its client gone without a word:
// the server rolls its transaction back, the hold goes, the other
// connection's statement on the fork runs, and the fill ends.
func TestRT29HolderKilled(t *testing.T) {
	for _, how := range []string{"kill", "disconnect", "kill query"} {
		t.Run(strings.ReplaceAll(how, " ", ""), func(t *testing.T) {
			h, root, a, b := rt29Shared(t, 20000, 400, "rt29kill")
			ctx := context.Background()
			mustExecC(t, a, "UPDATE t SET v = 1 WHERE id = 1")
			holderDB := openDB(t, h.dsn("lzs"))
			holder := conn(t, holderDB)
			mustExecC(t, holder, "SANDBOX ATTACH rt29kill")
			mustExecC(t, holder, "BEGIN")
			mustExecC(t, holder, "UPDATE t SET v = 500 WHERE id = 5")
			id := queryString(t, holder, "SELECT CONNECTION_ID()")
			done := make(chan string, 1)
			go func() { done <- runBoth(ctx, b, "UPDATE t SET v = v + 1 WHERE id IN (5, 6)") }()
			time.Sleep(500 * time.Millisecond)
			switch how {
			case "kill":
				mustExecC(t, a, "KILL CONNECTION "+id)
			case "kill query":
				// KILL QUERY of an idle holder ends nothing: its
				// transaction goes on, then commits.
				mustExecC(t, a, "KILL QUERY "+id)
				mustExecC(t, holder, "COMMIT")
			default:
				holder.Close()
				holderDB.Close()
			}
			select {
			case got := <-done:
				if got != "affected 2, id 0" {
					t.Errorf("b's UPDATE after the holder's end: %s", got)
				}
			case <-time.After(90 * time.Second):
				t.Fatal("b's statement still waits for the holder, gone")
			}
			want := "6,7"
			if how == "kill query" {
				want = "501,7"
			}
			wantString(t, b, "SELECT GROUP_CONCAT(v ORDER BY id) FROM t WHERE id IN (5, 6)", want, "rows 5 and 6: %s")
			h.setFillRate(0)
			testkit.EventuallyWithin(t, "the fill to end", 90*time.Second, func() bool { return !lazyFilling(t, b, "lzs.t") })
			wantString(t, b, "SELECT GROUP_CONCAT(v ORDER BY id) FROM t WHERE id IN (1, 5, 6)", "1,"+want, "rows 1, 5, 6 after the fill: %s")
			if got := queryString(t, root, "SELECT GROUP_CONCAT(v ORDER BY id) FROM lzs.t WHERE id IN (1, 5, 6)"); got != "1,5,6" {
				t.Errorf("production's rows: %s", got)
			}
		})
	}
}

// TestRT29ResetWhileHeld: SANDBOX RESET FOR the table, SANDBOX RESET and
// SANDBOX DISCARD from another connection while a transaction holds the
// fork's fill, the holder going on with statements on the fork, then
// committing: nothing waits for good, and production keeps its rows.
func TestRT29ResetWhileHeld(t *testing.T) {
	// (SANDBOX RESET from another connection waits for the holder's
	// metadata lock, as it does for any open transaction on a fork, and
	// the holder's next statement waits at the gate for the reset: the
	// reset ends with 1205 after lock_wait_timeout, 50 s a run; run with
	// SQLFORK_TEST_SLOW=1.)
	cmds := []string{"SANDBOX DISCARD rt29rs"}
	if os.Getenv("SQLFORK_TEST_SLOW") != "" {
		cmds = append(cmds, "SANDBOX RESET FOR lzs.t", "SANDBOX RESET")
	}
	for _, cmd := range cmds {
		t.Run(strings.Fields(cmd)[1]+fmt.Sprint(len(cmd)), func(t *testing.T) {
			h, root, a, b := rt29Shared(t, 20000, 400, "rt29rs")
			ctx := context.Background()
			mustExecC(t, a, "UPDATE t SET v = 1 WHERE id = 1")
			mustExecC(t, a, "BEGIN")
			mustExecC(t, a, "UPDATE t SET v = 500 WHERE id = 5")
			resetDone := make(chan string, 1)
			go func() { resetDone <- runBoth(ctx, b, cmd) }()
			time.Sleep(time.Second)
			aDone := make(chan string, 1)
			go func() {
				r1 := runBoth(ctx, a, "UPDATE t SET v = 600 WHERE id = 6")
				r2 := runBoth(ctx, a, "SELECT v FROM t WHERE id = 7")
				r3 := runBoth(ctx, a, "COMMIT")
				aDone <- r1 + " | " + r2 + " | " + r3
			}()
			deadline := time.After(150 * time.Second)
			var gotA, gotReset string
			for gotA == "" || gotReset == "" {
				select {
				case gotA = <-aDone:
				case gotReset = <-resetDone:
				case <-deadline:
					t.Fatalf("hang: the holder's statements answered %q, %s answered %q", gotA, cmd, gotReset)
				}
			}
			t.Logf("holder: %s; %s: %s", gotA, cmd, gotReset)
			if strings.Contains(gotA, "non-server") || strings.Contains(gotReset, "non-server") {
				t.Errorf("a connection broke: holder %s, %s %s", gotA, cmd, gotReset)
			}
			h.setFillRate(0)
			if !strings.HasPrefix(cmd, "SANDBOX DISCARD") {
				testkit.EventuallyWithin(t, "no fill", 90*time.Second, func() bool { return !lazyFilling(t, b, "lzs.t") })
				got := queryString(t, b, "SELECT CONCAT(COUNT(*), '/', SUM(v)) FROM t")
				t.Logf("the sandbox's t after: %s", got)
			}
			if got := queryString(t, root, "SELECT GROUP_CONCAT(v ORDER BY id) FROM lzs.t WHERE id IN (1, 5, 6)"); got != "1,5,6" {
				t.Errorf("production's rows: %s", got)
			}
		})
	}
}

// TestRT29ShutdownWhileHeld: the proxy shuts down while a transaction
// holds a fill and another connection's statement waits for it: the
// shutdown ends within its bound, and production keeps its rows.
func TestRT29ShutdownWhileHeld(t *testing.T) {
	h, root, a, b := rt29Shared(t, 20000, 400, "rt29sd")
	ctx := context.Background()
	mustExecC(t, a, "UPDATE t SET v = 1 WHERE id = 1")
	mustExecC(t, a, "BEGIN")
	mustExecC(t, a, "UPDATE t SET v = 500 WHERE id = 5")
	go func() { _ = runBoth(ctx, b, "UPDATE t SET v = 7 WHERE id = 7") }()
	time.Sleep(500 * time.Millisecond)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		h.stop()
	}()
	select {
	case <-stopped:
	case <-time.After(60 * time.Second):
		t.Fatal("the proxy did not stop while a transaction held a fill")
	}
	if got := queryString(t, root, "SELECT GROUP_CONCAT(v ORDER BY id) FROM lzs.t WHERE id IN (1, 5, 7)"); got != "1,5,7" {
		t.Errorf("production's rows: %s", got)
	}
}

// TestRT29SharedInterleaved: three connections of one sandbox run
// transactions and autocommit statements on the same keys of a filling
// fork at once, each transaction's statements in order; every change is
// an increment of v of one row by a known amount, so the final sums are
// known whatever the order: no change lost, duplicated or undone, nothing
// waits for good.
func TestRT29SharedInterleaved(t *testing.T) {
	h, root, a, b := rt29Shared(t, 20000, 400, "rt29il")
	ctx := context.Background()
	c := conn(t, openDB(t, h.dsn("lzs")))
	mustExecC(t, c, "SANDBOX ATTACH rt29il")
	mustExecC(t, a, "UPDATE t SET s = 'first' WHERE id = 1")
	if !lazyFilling(t, a, "lzs.t") {
		t.Fatal("t is not filling")
	}
	keys := []int{101, 102, 103, 104}
	want := map[int]int{}
	for _, k := range keys {
		want[k] = k % 100
	}
	type op struct {
		c    *sql.Conn
		name string
	}
	errs := make(chan error, 3)
	run := func(o op, seed int) {
		var err error
		defer func() { errs <- err }()
		for i := 0; i < 12; i++ {
			k1, k2 := keys[(seed+i)%4], keys[(seed+i+1)%4]
			tx := (seed+i)%3 != 0
			stmts := []string{fmt.Sprintf("UPDATE t SET v = v + 1 WHERE id = %d", k1),
				fmt.Sprintf("SELECT v FROM t WHERE id = %d", k2),
				fmt.Sprintf("UPDATE t SET v = v + 10 WHERE id IN (%d, %d)", k1, k2)}
			if tx {
				stmts = append(append([]string{"BEGIN"}, stmts...), "COMMIT")
			}
			for _, q := range stmts {
				cctx, cancel := context.WithTimeout(ctx, 120*time.Second)
				var e error
				if strings.HasPrefix(q, "SELECT") {
					var v int
					e = o.c.QueryRowContext(cctx, q).Scan(&v)
				} else {
					_, e = o.c.ExecContext(cctx, q)
				}
				cancel()
				if e != nil {
					err = fmt.Errorf("%s: %s: %s", o.name, q, mysqlErr(e))
					return
				}
			}
		}
	}
	for i, o := range []op{{a, "a"}, {b, "b"}, {c, "c"}} {
		go run(o, i)
	}
	for i := 0; i < 3; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	// Each of the 36 rounds adds 1 to k1 and 10 to k1 and k2.
	for s := 0; s < 3; s++ {
		for i := 0; i < 12; i++ {
			want[keys[(s+i)%4]] += 11
			want[keys[(s+i+1)%4]] += 10
		}
	}
	var wantS []string
	for _, k := range keys {
		wantS = append(wantS, fmt.Sprint(want[k]))
	}
	wantString(t, a, "SELECT GROUP_CONCAT(v ORDER BY id) FROM t WHERE id IN (101, 102, 103, 104)", strings.Join(wantS, ","), "the rows after: %s")
	h.setFillRate(0)
	testkit.EventuallyWithin(t, "the fill to end", 90*time.Second, func() bool { return !lazyFilling(t, a, "lzs.t") })
	wantString(t, b, "SELECT GROUP_CONCAT(v ORDER BY id) FROM t WHERE id IN (101, 102, 103, 104)", strings.Join(wantS, ","), "the rows after the fill: %s")
	if got := queryString(t, root, "SELECT GROUP_CONCAT(v ORDER BY id) FROM lzs.t WHERE id IN (101, 102, 103, 104)"); got != "1,2,3,4" {
		t.Errorf("production's rows: %s", got)
	}
}

// TestRT29LeastPrivilege: the battery through a proxy logged in upstream
// with the least-privilege account (SELECT on production).
func TestRT29LeastPrivilege(t *testing.T) {
	db, least := sandboxProxy(t, "transparent", func(c *proxy.Config) {
		c.Sandbox.LazyForkRows, c.Sandbox.LazyForkRate = 1, 400
	})
	root := openDB(t, db.DSN(""))
	readOnlyDatabase(t, root, "rt29lp")
	setUp(t, root, []string{"DROP DATABASE IF EXISTS rt29lp_ref", "CREATE DATABASE rt29lp_ref"}, "DROP DATABASE IF EXISTS rt29lp_ref")
	for _, d := range []string{"rt29lp", "rt29lp_ref"} {
		c := conn(t, root)
		mustExecC(t, c, "USE "+d)
		for _, q := range rt29Setup {
			mustExecC(t, c, q)
		}
	}
	sb := conn(t, openDB(t, least.userDSN(sandboxUser, "rt29lp")))
	ref := conn(t, openDB(t, directDSN(db, "rt29lp_ref")))
	mustExecC(t, sb, "SANDBOX CREATE rt29lp_box")
	t.Cleanup(func() { _, _ = sb.ExecContext(context.Background(), "SANDBOX DISCARD rt29lp_box") })
	for _, q := range []string{"SET SESSION time_zone = '-03:00'", "SET SESSION sql_mode = 'NO_BACKSLASH_ESCAPES,ANSI_QUOTES'"} {
		mustExecC(t, sb, q)
		mustExecC(t, ref, q)
	}
	rt29Same(t, least, sb, ref, "UPDATE r SET c = 'first' WHERE id = 1")
	if !lazyFilling(t, sb, "rt29lp.r") {
		t.Fatal("r is not filling")
	}
	rt29Same(t, least, sb, ref, rt29Battery("BEGIN", 300)...)
	rt29Same(t, least, sb, ref, rt29Battery("SET autocommit = 0", 500)...)
	rt29Same(t, least, sb, ref, "SET autocommit = 1")
	if !lazyFilling(t, sb, "rt29lp.r") {
		t.Error("r is whole: a statement of the transactions waited for the fill")
	}
	least.setFillRate(0)
	sum := "SELECT CONCAT(COUNT(*), '/', SUM(CRC32(CONCAT_WS('|', id, d, dt, ts, b, HEX(bl), j, e, g, gs, c, u, l)))) FROM r"
	if got, want := queryString(t, sb, sum), queryString(t, ref, sum); got != want {
		t.Errorf("the fork %s, the copy %s", got, want)
	}
}

// TestRT29RollbackAndChain: ROLLBACK AND CHAIN in a transaction that
// copied a row up: the rollback takes the copy-up away, but the chained
// transaction opens at once (the server's status stays "in
// transaction"), so the session keeps its holds and its record of the
// rows copied up (forgetUps forgets them only after a failed statement or
// a ROLLBACK TO SAVEPOINT). The next statements on that row copy nothing
// up and find no row: SELECT answers nothing, UPDATE affects 0 rows, and
// the change is lost, where a copy reads and updates the row.
func TestRT29RollbackAndChain(t *testing.T) {
	h, root := rt27Env(t, 400)
	sb, ref := rt29Pair(t, h, root, "rt29rc", rt29Setup)
	rt29Same(t, h, sb, ref, "UPDATE r SET c = 'first' WHERE id = 1")
	if !lazyFilling(t, sb, "rt29rc.r") {
		t.Fatal("r is not filling")
	}
	rt29Same(t, h, sb, ref,
		"BEGIN",
		"UPDATE r SET c = 'ch1' WHERE id = 40",
		"ROLLBACK AND CHAIN",
		"SELECT id, c FROM r WHERE id = 40",
		"UPDATE r SET c = 'ch2' WHERE id = 40",
		"DELETE FROM r WHERE id = 41",
		"COMMIT AND CHAIN",
		"SELECT id, c FROM r WHERE id IN (40, 41) ORDER BY id",
		"UPDATE r SET c = 'ch3' WHERE id = 42",
		"ROLLBACK AND CHAIN",
		"INSERT INTO r (id, c, u) VALUES (42, 'dup', 'z42')",
		"SELECT id, c FROM r WHERE id = 42",
		"COMMIT",
		"SELECT id, c FROM r WHERE id IN (40, 41, 42) ORDER BY id",
	)
	h.setFillRate(0)
	testkit.EventuallyWithin(t, "the fill to end", 90*time.Second, func() bool { return !lazyFilling(t, sb, "rt29rc.r") })
	sum := "SELECT CONCAT(COUNT(*), '/', SUM(CRC32(CONCAT_WS('|', id, d, dt, ts, b, HEX(bl), j, e, g, gs, c, u, l)))) FROM r"
	if got, want := queryString(t, sb, sum), queryString(t, ref, sum); got != want {
		t.Errorf("the fork %s, the copy %s", got, want)
	}
}

// TestRT29ImplicitCommits: transactions holding the fill ended by SET
// autocommit = 1 and by DDL (implicit commits; one on the filling table
// itself, which needs the fork whole), prepared executions
// (COM_STMT_EXECUTE) rolled back to a savepoint: every answer is the
// copy's, the fill ends after them, and DIFF shows the changes.
func TestRT29ImplicitCommits(t *testing.T) {
	h, root := rt27Env(t, 400)
	sb, ref := rt29Pair(t, h, root, "rt29ch", rt29Setup)
	ctx := context.Background()
	rt29Same(t, h, sb, ref, "UPDATE r SET c = 'first' WHERE id = 1")
	if !lazyFilling(t, sb, "rt29ch.r") {
		t.Fatal("r is not filling")
	}
	// Prepared executions in a transaction, rolled back to a savepoint.
	for _, c := range []*sql.Conn{sb, ref} {
		mustExecC(t, c, "BEGIN")
	}
	for _, c := range []rt28pCase{
		{"UPDATE r SET c = ? WHERE id = ?", []any{"p1", 43}},
		{"SAVEPOINT p", nil},
		{"UPDATE r SET c = ? WHERE id = ?", []any{"p2", 44}},
		{"ROLLBACK TO SAVEPOINT p", nil},
		{"SELECT id, c FROM r WHERE id IN (?, ?) ORDER BY id", []any{43, 44}},
		{"DELETE FROM r WHERE id = ?", []any{44}},
		{"INSERT INTO r (id, c, u) VALUES (?, ?, ?)", []any{44, "p3", "u44"}},
		{"COMMIT", nil},
		{"SELECT id, c, u FROM r WHERE id IN (?, ?) ORDER BY id", []any{43, 44}},
	} {
		got, want := runBoth(ctx, sb, c.q, c.args...), runBoth(ctx, ref, c.q, c.args...)
		if got != want {
			t.Errorf("%s %v:\n sandbox: %s\n    copy: %s", c.q, c.args, got, want)
		}
	}
	rt29Same(t, h, sb, ref,
		"SET autocommit = 0",
		"UPDATE r SET c = 'ac0' WHERE id = 45",
		"SET autocommit = 1",
		"ROLLBACK",
		"SELECT id, c FROM r WHERE id = 45",
		"BEGIN",
		"UPDATE r SET c = 'ddl' WHERE id = 46",
		"CREATE TABLE zz (id INT PRIMARY KEY)",
		"ROLLBACK",
		"SELECT id, c FROM r WHERE id = 46",
		"BEGIN",
		"UPDATE r SET c = 'ddl2' WHERE id = 47",
		"ALTER TABLE r ADD COLUMN z INT NOT NULL DEFAULT 7",
		"ROLLBACK",
		"SELECT id, c, z FROM r WHERE id IN (46, 47, 48) ORDER BY id",
	)
	h.setFillRate(0)
	testkit.EventuallyWithin(t, "the fill to end", 90*time.Second, func() bool { return !lazyFilling(t, sb, "rt29ch.r") })
	sum := "SELECT CONCAT(COUNT(*), '/', SUM(CRC32(CONCAT_WS('|', id, d, dt, ts, b, HEX(bl), j, e, g, gs, c, u, l, z)))) FROM r"
	if got, want := queryString(t, sb, sum), queryString(t, ref, sum); got != want {
		t.Errorf("the fork %s, the copy %s", got, want)
	}
	// Changed rows 1, 43, 46, 47, 44 (deleted and inserted again), 45
	// (rolled back after SET autocommit = 1 committed it).
	if rows := rowsOf(t, sb, "SANDBOX DIFF SUMMARY"); len(rows) == 0 || rows[0][0] != "rt29ch.r" || rows[0][3] != "6" {
		t.Errorf("DIFF SUMMARY %v, want r with 6 rows updated", rows)
	}
}
