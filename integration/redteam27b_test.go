package integration

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/integration/testdb"
	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// Red team of issue 27's copy-ups from the staging table (forker/staged.go):
// statements whose keys the background copy has reached read their rows
// from the staging table while the fork fills. Each test compares the
// sandbox's answers with a copy made at the fork (rt27Pair, rt27Same).

// rt27bStaged waits until the fill of the sandbox named name has copied
// at least n rows into its staging table (the admin API's progress), so
// that copy-ups of keys up to about n read the staging table; it fails
// the test when the fill ends first.
func rt27bStaged(t *testing.T, h *proxyHandle, name string, n int64) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		sb, err := h.srv.Admin().Show(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		filling := false
		for _, tb := range sb.Tables {
			if tb.Fill != nil {
				filling = true
				if tb.Fill.Copied >= n {
					return
				}
			}
		}
		if !filling {
			t.Fatalf("the fill of %s ended before it copied %d rows", name, n)
		}
	}
	t.Fatalf("the fill of %s did not copy %d rows", name, n)
}

// rt27bUps is the admin API's copy-ups of sandbox name by source.
func rt27bUps(t *testing.T, h *proxyHandle, name string) map[string]int64 {
	t.Helper()
	ups := map[string]int64{}
	copiedUp(t, h, name, ups)
	return ups
}

// rt27bServer is a MariaDB of its own started with args, a proxy in front
// of it forking every table with rows lazily at rate rows a second (its
// root account), and the server's root account.
func rt27bServer(t *testing.T, rate int64, args ...string) (*proxyHandle, *sql.DB) {
	t.Helper()
	db := testdb.StartForTest(context.Background(), t, testdb.Options{Logf: t.Logf, ExtraArgs: args})
	h := startTestProxy(t, db.Addr, db, func(c *proxy.Config) {
		c.Mode, c.Sandbox.LazyForkRows, c.Sandbox.LazyForkRate = "transparent", 1, rate
	})
	return h, openDB(t, db.DSN(""))
}

// TestRedTeam27bBinlog: with the binary log on, in ROW or MIXED format, a
// sandbox's first write to a big table forks it lazily (the proxy's
// account, root, may create the fill function, declared DETERMINISTIC,
// whether log_bin_trust_function_creators is on or not), copy-ups read the
// staging table, and every answer is a copy's. A fill function declared
// NOT DETERMINISTIC made the first write fail with 1418 instead.
func TestRedTeam27bBinlog(t *testing.T) {
	for _, tc := range []struct {
		format string
		trust  bool
	}{{"ROW", false}, {"MIXED", false}, {"MIXED", true}} {
		t.Run(fmt.Sprintf("%s/trust=%v", tc.format, tc.trust), func(t *testing.T) {
			args := []string{"--log-bin", "--server-id=1", "--binlog-format=" + tc.format}
			if tc.trust {
				args = append(args, "--log-bin-trust-function-creators=1")
			}
			h, root := rt27bServer(t, 2000, args...)
			sb, ref := rt27Pair(t, h, root, "rt27blog", []string{
				"CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL)",
				"INSERT INTO t SELECT seq, seq FROM seq_1_to_12000",
			})
			mustExecC(t, sb, "SANDBOX CREATE rt27blog_box")
			rt27Same(t, sb, ref, "rt27blog.t", "UPDATE t SET v = 0 WHERE id = 1")
			mustExecC(t, root, "UPDATE rt27blog.t SET v = -1 WHERE id IN (2, 3, 11999)")
			// Root may create the fill function (DETERMINISTIC) with the
			// binary log on, trusted or not: the fork is lazy.
			rt27bStaged(t, h, "rt27blog_box", 100)
			rt27Same(t, sb, ref, "rt27blog.t",
				"SELECT v FROM t WHERE id = 2",
				"UPDATE t SET v = v + 10 WHERE id IN (3, 4)",
				"SELECT id, v FROM t WHERE id IN (1, 2, 3, 4, 11999) ORDER BY id",
			)
			if ups := rt27bUps(t, h, "rt27blog_box"); ups["staging"] == 0 {
				t.Errorf("copy-ups %v: none read the staging table", ups)
			}
			rt27Whole(t, h, sb, ref, "SELECT COUNT(*), SUM(v) FROM t")
		})
	}
}

// rt27bCopied is how many rows the fill of sandbox name has copied (-1
// once it has ended).
func rt27bCopied(t *testing.T, h *proxyHandle, name string) int64 {
	t.Helper()
	sb, err := h.srv.Admin().Show(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range sb.Tables {
		if tb.Fill != nil {
			return tb.Fill.Copied
		}
	}
	return -1
}

// TestRedTeam27bBoundaryRace: connections of one sandbox run statements on
// keys right at the staging table's end while the fill moves it and
// production changes those rows: each connection has keys of its own (so
// the order between connections does not matter) and its own copy made at
// the fork, and every answer is the copy's; so is the whole fork at the
// end.
func TestRedTeam27bBoundaryRace(t *testing.T) {
	const n, conns = 30000, 4
	h, root := rt27Env(t, 3000)
	setup := []string{
		"CREATE TABLE t (id BIGINT PRIMARY KEY, v INT NOT NULL, s VARCHAR(20))",
		fmt.Sprintf("INSERT INTO t SELECT seq, seq, CONCAT('s', seq) FROM seq_1_to_%d", n),
	}
	sb0, ref0 := rt27Pair(t, h, root, "rt27brace", setup)
	ctx := context.Background()
	mustExecC(t, sb0, "SANDBOX CREATE rt27brace_box")
	t.Cleanup(func() { _, _ = sb0.ExecContext(ctx, "SANDBOX DISCARD rt27brace_box") })
	rt27Same(t, sb0, ref0, "rt27brace.t", "UPDATE t SET v = 0 WHERE id = 1")
	stop := make(chan struct{})
	prod := make(chan error, 1)
	go func() { // production changes the rows at the boundary
		for i := 0; ; i++ {
			select {
			case <-stop:
				prod <- nil
				return
			default:
			}
			at := rt27bCopied(t, h, "rt27brace_box")
			if at < 0 {
				prod <- nil
				return
			}
			var q string
			switch k := at - 20 + int64(i%40); i % 3 {
			case 0:
				q = fmt.Sprintf("UPDATE rt27brace.t SET v = -1, s = 'prod' WHERE id IN (%d, %d)", k, k+1)
			case 1:
				q = fmt.Sprintf("DELETE FROM rt27brace.t WHERE id = %d", k)
			default:
				q = fmt.Sprintf("INSERT IGNORE INTO rt27brace.t VALUES (%d, -2, 'prod')", n+1000+i)
			}
			if _, err := root.ExecContext(ctx, q); err != nil {
				prod <- err
				return
			}
		}
	}()
	type result struct {
		stmts, staged int
		diffs         []string
	}
	results := make(chan result, conns)
	for c := 0; c < conns; c++ {
		sb := conn(t, openDB(t, h.dsn("rt27brace")))
		ref := conn(t, openDB(t, directDSN(h.db, "rt27brace_ref")))
		mustExecC(t, sb, "SANDBOX ATTACH rt27brace_box")
		go func(c int, sb, ref *sql.Conn) {
			var r result
			for i := 0; ; i++ {
				at := rt27bCopied(t, h, "rt27brace_box")
				if at < 0 || len(r.diffs) > 5 {
					break
				}
				// Keys of this connection (k % conns == c) around the end.
				k := func(d int64) int64 { x := at + d; return x - x%conns + int64(c) }
				var q string
				switch i % 6 {
				case 0:
					q = fmt.Sprintf("SELECT id, v, s FROM t WHERE id IN (%d, %d, %d) ORDER BY id", k(-8), k(0), k(8))
				case 1:
					q = fmt.Sprintf("UPDATE t SET v = v + 1, s = 'sb' WHERE id = %d", k(-4))
				case 2:
					q = fmt.Sprintf("DELETE FROM t WHERE id = %d", k(4))
				case 3:
					q = fmt.Sprintf("INSERT INTO t VALUES (%d, 5, 'ins')", k(-12))
				case 4:
					q = fmt.Sprintf("REPLACE INTO t VALUES (%d, %d, 'rep')", k(12), i) // a new row: see TestRedTeam27bReplaceSameRow
				default:
					q = fmt.Sprintf("SELECT id, v, s FROM t WHERE id = %d", k(0))
				}
				got, want := runBoth(ctx, sb, q), runBoth(ctx, ref, q)
				r.stmts++
				if got != want {
					r.diffs = append(r.diffs, fmt.Sprintf("connection %d, %q (the fill at %d):\n sandbox: %s\n    copy: %s", c, q, at, got, want))
				}
			}
			results <- r
		}(c, sb, ref)
	}
	total := 0
	for c := 0; c < conns; c++ {
		r := <-results
		total += r.stmts
		for _, d := range r.diffs {
			t.Error(d)
		}
	}
	close(stop)
	if err := <-prod; err != nil {
		t.Fatal(err)
	}
	t.Logf("%d statements", total)
	rt27Whole(t, h, sb0, ref0, "SELECT COUNT(*), SUM(v), SUM(CRC32(CONCAT_WS('|', id, v, s))) FROM t")
}

// TestRedTeam27bReplaceSameRow: REPLACE of a row by the same values
// answers 1 row affected on a copy (the server updates it in place) but 2
// in a fork: the capture's AFTER DELETE trigger makes the server delete
// and insert it instead (any fork, lazy or whole). An UPDATE and an
// upsert that change nothing answer as on a copy.
//
// Known and not fixed (any capture by triggers has it: a DELETE trigger
// is what makes the server delete and insert); docs/SANDBOXES.md lists it
// among the differences. Set SQLFORK_TEST_KNOWN=1 to run it.
func TestRedTeam27bReplaceSameRow(t *testing.T) {
	if os.Getenv("SQLFORK_TEST_KNOWN") == "" {
		t.Skip("known difference: REPLACE of a row by the same values answers 2 rows affected in a fork, 1 on a copy")
	}
	h, root := rt27Env(t, 500)
	sb, ref := rt27Pair(t, h, root, "rt27brep", []string{
		"CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL)",
		"INSERT INTO t SELECT seq, seq FROM seq_1_to_20000",
	})
	rt27Same(t, sb, ref, "rt27brep.t",
		"UPDATE t SET v = 0 WHERE id = 1",
		"REPLACE INTO t VALUES (2, 5)",
		"REPLACE INTO t VALUES (2, 5)",
		"UPDATE t SET v = 5 WHERE id = 2",
		"INSERT INTO t VALUES (2, 5) ON DUPLICATE KEY UPDATE v = 5",
		"REPLACE INTO t VALUES (1, 0)",
	)
	rt27Whole(t, h, sb, ref, "SELECT COUNT(*), SUM(v) FROM t")
}

// TestRedTeam27bLeastPrivilege: through the least-privilege account (SELECT
// on production, all on the proxy's own databases) a lazy fork fills, its
// copy-ups read the staging table and answer as a copy; the sandbox's
// statements reach neither the staging table nor the fill function (with
// the arguments it takes now: a call with the wrong count fails anyway).
func TestRedTeam27bLeastPrivilege(t *testing.T) {
	db, least := sandboxProxy(t, "transparent", func(c *proxy.Config) {
		c.Sandbox.LazyForkRows, c.Sandbox.LazyForkRate = 1, 2000
	})
	root := openDB(t, db.DSN(""))
	readOnlyDatabase(t, root, "rt27blp")
	setUp(t, root, []string{"DROP DATABASE IF EXISTS rt27blp_ref", "CREATE DATABASE rt27blp_ref"}, "DROP DATABASE IF EXISTS rt27blp_ref")
	for _, d := range []string{"rt27blp", "rt27blp_ref"} {
		mustExecC(t, root, "CREATE TABLE "+d+".t (id INT PRIMARY KEY, v INT NOT NULL)")
		mustExecC(t, root, "INSERT INTO "+d+".t SELECT seq, seq FROM "+d+".seq_1_to_15000")
	}
	sb := conn(t, openDB(t, least.userDSN(sandboxUser, "rt27blp")))
	ref := conn(t, openDB(t, directDSN(db, "rt27blp_ref")))
	mustExecC(t, sb, "SANDBOX CREATE rt27blp_box")
	t.Cleanup(func() { _, _ = sb.ExecContext(context.Background(), "SANDBOX DISCARD rt27blp_box") })
	rt27Same(t, sb, ref, "rt27blp.t", "UPDATE t SET v = 0 WHERE id = 1")
	if !lazyFilling(t, sb, "rt27blp.t") {
		t.Fatal("t is not filling")
	}
	rt27bStaged(t, least, "rt27blp_box", 3000)
	mustExecC(t, root, "UPDATE rt27blp.t SET v = -1 WHERE id IN (2, 3, 2999)")
	rt27Same(t, sb, ref, "rt27blp.t",
		"SELECT v FROM t WHERE id = 2",
		"UPDATE t SET v = v + 10 WHERE id IN (3, 4)",
		"DELETE FROM t WHERE id = 5",
		"SELECT id, v FROM t WHERE id IN (1, 2, 3, 4, 5, 2999) ORDER BY id",
	)
	if ups := rt27bUps(t, least, "rt27blp_box"); ups["staging"] == 0 {
		t.Errorf("copy-ups %v: none read the staging table", ups)
	}
	fn := rowsOf(t, root, "SELECT ROUTINE_SCHEMA, ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_NAME LIKE 'fill%'")
	if len(fn) != 1 {
		t.Fatalf("fill functions: %v", fn)
	}
	staging := "`" + fn[0][0] + "`.`f" + strings.TrimPrefix(fn[0][1], "fill") + "`"
	call := "`" + fn[0][0] + "`.`" + fn[0][1] + "`"
	up := "`" + fn[0][0] + "`.`up" + strings.TrimPrefix(fn[0][1], "fill") + "`"
	// The calls below have the function's arity: only the proxy may
	// refuse them.
	wantString(t, root, "SELECT COUNT(*) FROM information_schema.PARAMETERS WHERE SPECIFIC_SCHEMA = '"+fn[0][0]+"' AND SPECIFIC_NAME = '"+
		fn[0][1]+"' AND ORDINAL_POSITION > 0", "3", "the fill function takes %s arguments")
	for _, q := range []string{
		"SELECT COUNT(*) FROM " + staging,
		"SELECT " + call + "(100, 100, 1000)",
		"DO " + call + "(100, 100, 1000)",
		"INSERT INTO " + staging + " (id, v) VALUES (-1, -1)",
		"SELECT id FROM t WHERE id IN (SELECT id FROM " + staging + ")",
		"CALL " + up + "(5, 5)",
	} {
		if _, err := sb.ExecContext(context.Background(), q); mysqlErrCode(err) != 1044 {
			t.Errorf("%s: %v, want the proxy's 1044", q, err)
		}
	}
	rt27Whole(t, least, sb, ref, "SELECT COUNT(*), SUM(v) FROM t")
}

// TestRedTeam27bKillFill: a root session kills the fill's snapshot
// connection while connections of the sandbox copy rows up from the
// staging table (its rows roll back under them): every statement answers
// as the copy or fails with a MySQL error, and after SANDBOX RESET FOR the
// table the sandbox answers as a copy again (production's rows now).
func TestRedTeam27bKillFill(t *testing.T) {
	const conns = 3
	h, root := rt27Env(t, 20000) // quick to stage 20,000 rows, then slowed down
	sb0, ref0 := rt27Pair(t, h, root, "rt27bkill", []string{
		"CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL)",
		"INSERT INTO t SELECT seq, seq FROM seq_1_to_100000",
	})
	ctx := context.Background()
	mustExecC(t, sb0, "SANDBOX CREATE rt27bkill_box")
	t.Cleanup(func() { _, _ = sb0.ExecContext(ctx, "SANDBOX DISCARD rt27bkill_box") })
	rt27Same(t, sb0, ref0, "rt27bkill.t", "UPDATE t SET v = 0 WHERE id = 1")
	rt27bStaged(t, h, "rt27bkill_box", 20000)
	h.setFillRate(3000) // still filling when killed
	mustExecC(t, root, "UPDATE rt27bkill.t SET v = -1 WHERE id BETWEEN 1 AND 20000")
	type result struct {
		ok, failed int
		diffs      []string
	}
	results := make(chan result, conns)
	stop := make(chan struct{})
	for c := 0; c < conns; c++ {
		sb := conn(t, openDB(t, h.dsn("rt27bkill")))
		ref := conn(t, openDB(t, directDSN(h.db, "rt27bkill_ref")))
		mustExecC(t, sb, "SANDBOX ATTACH rt27bkill_box")
		go func(c int, sb, ref *sql.Conn) {
			var r result
			for i := 0; ; i++ {
				select {
				case <-stop:
					results <- r
					return
				default:
				}
				k := 2 + (i*conns+c)%19000
				q := fmt.Sprintf("SELECT id, v FROM t WHERE id IN (%d, %d)", k, k+conns) // this connection's keys only
				if i%2 == 1 {
					q = fmt.Sprintf("UPDATE t SET v = v + 1 WHERE id = %d", k)
				}
				got := runBoth(ctx, sb, q)
				if strings.HasPrefix(got, "error ") {
					r.failed++
					if !strings.Contains(got, "(") { // a MySQL error: "error CODE (STATE) …"
						r.diffs = append(r.diffs, fmt.Sprintf("%q: %s, not a MySQL error", q, got))
					}
					continue
				}
				r.ok++
				if want := runBoth(ctx, ref, q); got != want {
					r.diffs = append(r.diffs, fmt.Sprintf("%q:\n sandbox: %s\n    copy: %s", q, got, want))
				}
			}
		}(c, sb, ref)
	}
	time.Sleep(time.Second)
	snap := queryString(t, root, "SELECT trx_mysql_thread_id FROM information_schema.INNODB_TRX ORDER BY trx_rows_modified DESC LIMIT 1")
	mustExecC(t, root, "KILL "+snap)
	time.Sleep(2 * time.Second)
	close(stop)
	for c := 0; c < conns; c++ {
		r := <-results
		t.Logf("answered %d, failed %d", r.ok, r.failed)
		for _, d := range r.diffs {
			t.Error(d)
		}
	}
	mustExecC(t, sb0, "SANDBOX RESET FOR t")
	mustExecC(t, ref0, "DELETE FROM t")
	mustExecC(t, ref0, "INSERT INTO t SELECT * FROM rt27bkill.t")
	rt27Same(t, sb0, ref0, "rt27bkill.t", "UPDATE t SET v = 7 WHERE id = 3", "SELECT id, v FROM t WHERE id IN (2, 3)")
	rt27Whole(t, h, sb0, ref0, "SELECT COUNT(*), SUM(v) FROM t")
}
