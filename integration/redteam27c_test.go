package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// Red team of issue 27: a lazy fork's fill that a stopped proxy process
// left starts again in the next process that needs the fork whole.

// resumedLazy is a kept sandbox lzc of lzs.t (n rows) forked lazily in a
// proxy that then stops mid-fill (after before ran on its connection
// and on production), and a second proxy, filling at rate rows a second.
func resumedLazy(t *testing.T, n int, before, prod []string, rate int64) (*proxyHandle, func(string) string) {
	t.Helper()
	a, direct := lazyEnv(t, n, 500)
	ca := conn(t, openDB(t, a.dsn("lzs")))
	mustExecC(t, ca, "SANDBOX CREATE lzc")
	mustExecC(t, ca, "SANDBOX KEEP")
	for _, q := range before {
		mustExecC(t, ca, q)
	}
	if !lazyFilling(t, ca, "lzs.t") {
		t.Fatal("the fork is whole already: the fill is too fast for this test")
	}
	_ = ca.Close()
	a.stop()
	root := openDB(t, a.db.DSN(""))
	for _, q := range prod {
		mustExecC(t, root, q)
	}
	b := startTestProxy(t, a.db.Addr, a.db, func(c *proxy.Config) {
		c.Mode, c.Sandbox.LazyForkRows, c.Sandbox.LazyForkRate = "transparent", 1, rate
	})
	return b, direct
}

// fillRunsIn waits until h's process runs the fill of sandbox name.
func fillRunsIn(t *testing.T, h *proxyHandle, name string) {
	t.Helper()
	for i := 0; i < 600; i++ {
		sb, err := h.srv.Admin().Show(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		for _, tb := range sb.Tables {
			if tb.Fill != nil && tb.Fill.Copied > 0 {
				return
			}
		}
		time.Sleep(50 * time.Millisecond) // polling, not a threshold
	}
	t.Fatal("the fill never started again in the second proxy")
}

// TestRedTeam27cResumeAutoIncrement: production's rows inserted between
// the fork and the fill's new start are in the resumed fork; a sandbox
// insert made while it fills again must not take one of their ids (it
// would hide production's row, show as an update in DIFF and overwrite
// it at PROMOTE).
func TestRedTeam27cResumeAutoIncrement(t *testing.T) {
	b, direct := resumedLazy(t, 20000, []string{"UPDATE t SET v = 1000 WHERE id = 7"},
		[]string{"INSERT INTO lzs.t (v, s, u) VALUES (1, 'p1', 'p1'), (2, 'p2', 'p2'), (3, 'p3', 'p3')"}, 500)
	cb := conn(t, openDB(t, b.dsn("lzs")))
	mustExecC(t, cb, "SANDBOX ATTACH lzc")
	waited := make(chan error, 1)
	go func() {
		var n int
		waited <- cb.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM t").Scan(&n)
	}()
	fillRunsIn(t, b, "lzc")
	cw := conn(t, openDB(t, b.dsn("lzs")))
	mustExecC(t, cw, "SANDBOX ATTACH lzc")
	mustExecC(t, cw, "INSERT INTO t (v, s, u) VALUES (9, 'sb', 'sb')")
	id := queryString(t, cw, "SELECT LAST_INSERT_ID()")
	b.setFillRate(0)
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	if id <= "20003" && len(id) <= 5 {
		t.Errorf("the sandbox's insert took id %s, one of production's rows 20001..20003", id)
	}
	wantString(t, cw, "SELECT GROUP_CONCAT(s ORDER BY id) FROM t WHERE id > 20000", "p1,p2,p3,sb", "rows after 20000: %s")
	rows := rowsOf(t, cw, "SANDBOX DIFF SUMMARY")
	if len(rows) != 1 || strings.Join(rows[0][2:5], "/") != "1/1/0" {
		t.Errorf("DIFF SUMMARY %v, want 1 inserted, 1 updated, 0 deleted", rows)
	}
	if got := direct("SELECT GROUP_CONCAT(s ORDER BY id) FROM lzs.t WHERE id > 20000"); got != "p1,p2,p3" {
		t.Errorf("production's rows after 20000: %s", got)
	}
	mustExecC(t, cw, "SANDBOX DISCARD lzc")
}

// TestRedTeam27cResumeAlteredProduction: production's table altered
// between the stop and the new start (a column widened and a longer
// value stored in a row the sandbox never touched, a column dropped): the
// fill must not start again into the fork's old shape (which cut the
// value short, silently, or failed on a missing column) but say plainly
// what to do; SANDBOX RESET FOR then forks the table anew.
func TestRedTeam27cResumeAlteredProduction(t *testing.T) {
	b, direct := resumedLazy(t, 20000, []string{"UPDATE t SET v = 1000 WHERE id = 7"},
		[]string{"ALTER TABLE lzs.t MODIFY s VARCHAR(40)", "UPDATE lzs.t SET s = REPEAT('x', 30) WHERE id = 9"}, 0)
	cb := conn(t, openDB(t, b.dsn("lzs")))
	mustExecC(t, cb, "SANDBOX ATTACH lzc")
	var s string
	err := cb.QueryRowContext(context.Background(), "SELECT s FROM t WHERE id = 9").Scan(&s)
	if err == nil {
		t.Fatalf("row 9 read through a fork of production's old shape: %q (production's is 30 x)", s)
	}
	if msg := mysqlErr(err); !strings.Contains(msg, "SANDBOX RESET FOR") || !strings.Contains(msg, "lzs.t") {
		t.Fatalf("want a MySQL error naming lzs.t and SANDBOX RESET FOR, got %v", err)
	}
	if !lazyFilling(t, cb, "lzs.t") {
		t.Error("the fork no longer says filling after the refusal")
	}
	mustExecC(t, cb, "SANDBOX RESET FOR lzs.t")
	wantString(t, cb, "SELECT s FROM t WHERE id = 9", strings.Repeat("x", 30), "row 9 after the reset: %s")
	if got := direct("SELECT v FROM lzs.t WHERE id = 7"); got != "7" {
		t.Errorf("production's row 7: %s", got)
	}
	mustExecC(t, cb, "SANDBOX DISCARD lzc")
}

// TestRedTeam27cResumedTwice: a fill started again whose process stops
// too starts again once more; the sandbox's rows (an auto id insert, a
// row deleted and inserted again, one changed) stay its own through both,
// and its next insert takes a new id.
func TestRedTeam27cResumedTwice(t *testing.T) {
	b, direct := resumedLazy(t, 20000, []string{
		"INSERT INTO t (v, s, u) VALUES (5, 'a1', 'a1')", "DELETE FROM t WHERE id = 8",
		"INSERT INTO t (id, v, s, u) VALUES (8, 88, 's8', 'u8')", "UPDATE t SET v = 1000 WHERE id = 7",
	}, []string{"UPDATE lzs.t SET v = -1 WHERE id IN (7, 9)"}, 500)
	cb := conn(t, openDB(t, b.dsn("lzs")))
	mustExecC(t, cb, "SANDBOX ATTACH lzc")
	go func() {
		var n int
		_ = cb.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM t").Scan(&n)
	}()
	fillRunsIn(t, b, "lzc")
	b.stop()
	c := startTestProxy(t, b.db.Addr, b.db, func(c *proxy.Config) {
		c.Mode, c.Sandbox.LazyForkRows = "transparent", 1
	})
	cc := conn(t, openDB(t, c.dsn("lzs")))
	mustExecC(t, cc, "SANDBOX ATTACH lzc")
	wantString(t, cc, "SELECT COUNT(*) FROM t", "20001", "rows: %s")
	wantString(t, cc, "SELECT CONCAT(v, '/', (SELECT v FROM t WHERE id = 8), '/', (SELECT v FROM t WHERE id = 9)) FROM t WHERE id = 7",
		"1000/88/-1", "rows 7, 8, 9: %s")
	mustExecC(t, cc, "INSERT INTO t (v, s, u) VALUES (6, 'a2', 'a2')")
	if id := queryString(t, cc, "SELECT LAST_INSERT_ID()"); id != "20002" {
		t.Errorf("the sandbox's next insert took id %s, want 20002", id)
	}
	rows := rowsOf(t, cc, "SANDBOX DIFF SUMMARY")
	if len(rows) != 1 || strings.Join(rows[0][2:5], "/") != "2/2/0" {
		t.Errorf("DIFF SUMMARY %v, want 2 inserted, 2 updated, 0 deleted", rows)
	}
	if got := direct("SELECT COUNT(*) FROM lzs.t"); got != "20000" {
		t.Errorf("production's rows: %s", got)
	}
	mustExecC(t, cc, "SANDBOX DISCARD lzc")
}
