package integration

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// Red team of the live fill rate (lazy-fork-rate reloaded while fills
// run). A statement that needs a fork whole waits for its fill: each
// test's fill would take hours at the rate it was slowed to, so the
// statement's hang guard (minutes) tells a fill the new rate reached from
// one it did not.

// wantWhole wants q, a statement that waits for the fill, to answer want
// on c before its hang guard (two minutes) ends it.
func wantWhole(t *testing.T, c *sql.Conn, q, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*testkit.WaitLimit)
	defer cancel()
	var got string
	if err := c.QueryRowContext(ctx, q).Scan(&got); err != nil {
		t.Fatalf("%s: %s (the fill never ended: the new rate did not reach it)", q, mysqlErr(err))
	}
	if got != want {
		t.Fatalf("%s: %s, want %s", q, got, want)
	}
}

// TestRT27dFillRateDroppedThenLifted: a fill running unbounded is slowed
// to 1 row/s while one of its chunks runs (an unbounded fill nearly
// always has one running), then lifted (0) a moment later: it goes on at
// full speed and ends. The throttle charged the whole unbounded chunk
// (thousands of rows) at 1 row/s instead, in one timer no later change
// woke: hours with its snapshot open on production.
func TestRT27dFillRateDroppedThenLifted(t *testing.T) {
	h, _ := lazyEnv(t, 200000, 1)
	c := conn(t, openDB(t, h.dsn("lzs")))
	mustExecC(t, c, "UPDATE t SET v = 1000 WHERE id = 7")
	if !lazyFilling(t, c, "lzs.t") {
		t.Fatal("t is not filling")
	}
	name := rowsOf(t, c, "SANDBOX STATUS")[0][1]
	h.setFillRate(0)
	testkit.Eventually(t, "the fill to run unbounded", func() bool { return rt27bCopied(t, h, name) > 1000 })
	h.setFillRate(1)
	time.Sleep(300 * time.Millisecond) // ordering only: a chunk runs meanwhile
	h.setFillRate(0)
	wantWhole(t, c, "SELECT COUNT(*) FROM t", "200000")
}

// TestRT27dFillRateHuge: rates whose 1/20 s chunk is past the fill
// function's INT argument (and the largest int64) fill the fork whole
// and right.
func TestRT27dFillRateHuge(t *testing.T) {
	h, _ := lazyEnv(t, 20000, 1)
	c := conn(t, openDB(t, h.dsn("lzs")))
	mustExecC(t, c, "UPDATE t SET v = 1000 WHERE id = 7")
	if !lazyFilling(t, c, "lzs.t") {
		t.Fatal("t is not filling")
	}
	name := rowsOf(t, c, "SANDBOX STATUS")[0][1]
	h.setFillRate(20 * (1<<31 + 5))
	testkit.Eventually(t, "the fill to copy", func() bool { return rt27bCopied(t, h, name) > 500 || !lazyFilling(t, c, "lzs.t") })
	h.setFillRate(9223372036854775807)
	wantWhole(t, c, "SELECT CONCAT(COUNT(*), '/', SUM(v), '/', COUNT(DISTINCT id)) FROM t", fmt.Sprint(20000, "/", 200*4950-7+1000, "/", 20000))
}

// TestRT27dKeptSandboxFillingStays: a kept sandbox whose lazy fork fills,
// detached and idle, stays in this process's memory while its fill runs
// (the reaper let it go, leaving the fill running where no reload, reset
// or discard reached it: a later statement waited for it at the old rate,
// a discard for its snapshot's locks); lifting the rate then reaches the
// fill, and the sandbox attached again reads its fork whole.
func TestRT27dKeptSandboxFillingStays(t *testing.T) {
	server, _ := env(t)
	h := startTestProxy(t, server.Addr, server, func(c *proxy.Config) {
		c.Mode, c.Sandbox.LazyForkRows, c.Sandbox.LazyForkRate = "transparent", 1, 1
		c.Sandbox.ReapInterval = 300 * time.Millisecond
	})
	root := openDB(t, server.DSN(""))
	rt27Big(t, root, "rtlg", 3000)
	c := conn(t, openDB(t, h.dsn("rtlg")))
	mustExecC(t, c, "SANDBOX CREATE rtlgbox TTL 1h")
	t.Cleanup(func() { _ = h.srv.Admin().Discard(context.Background(), "rtlgbox") })
	mustExecC(t, c, "UPDATE t SET v = 0 WHERE id = 1")
	t.Cleanup(func() { // before the discard (cleanups run last first)
		if t.Failed() {
			killTransactions(root) // a fill left running out of reach holds locks the discard's DROP waits for
		}
	})
	if !lazyFilling(t, c, "rtlg.t") {
		t.Fatal("t is not filling")
	}
	mustExecC(t, c, "SANDBOX DETACH")
	m := h.srv.Sandboxes()
	reaps := m.Reaps()
	testkit.Eventually(t, "three reaper rounds", func() bool { return m.Reaps() >= reaps+3 })
	if n := m.FillStats().Running; n != 1 {
		t.Fatalf("fills running in sandboxes in memory: %d, want 1 (the idle kept sandbox left memory with its fill running)", n)
	}
	h.setFillRate(0)
	c2 := conn(t, openDB(t, h.dsn("rtlg")))
	mustExecC(t, c2, "SANDBOX ATTACH rtlgbox")
	wantWhole(t, c2, "SELECT CONCAT(COUNT(*), '/', SUM(v)) FROM t", fmt.Sprint(3000, "/", 3000*3001/2-1))
}

// killTransactions ends every open InnoDB transaction of the server.
func killTransactions(root *sql.DB) {
	rows, err := root.Query("SELECT trx_mysql_thread_id FROM information_schema.INNODB_TRX")
	if err != nil {
		return
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if rows.Scan(&id) == nil {
			ids = append(ids, id)
		}
	}
	rows.Close()
	for _, id := range ids {
		_, _ = root.Exec(fmt.Sprint("KILL ", id))
	}
}
