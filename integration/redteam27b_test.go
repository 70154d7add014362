package integration

import (
	"context"
	"database/sql"
	"fmt"
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

// inList is "1, 2, …, n".
func inList(from, n int) string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprint(from + i)
	}
	return strings.Join(ids, ", ")
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
// sandbox's first write to a big table forks it, lazily or whole, and
// every answer is a copy's. The fill function is NOT DETERMINISTIC and
// MODIFIES SQL DATA: unless log_bin_trust_function_creators is on, the
// server refuses to create it (1418), whatever the account, and the first
// write failed with that error instead of copying the table whole. With
// it on, the fork is lazy and copy-ups read the staging table.
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
				"INSERT INTO t SELECT seq, seq FROM seq_1_to_60000",
			})
			mustExecC(t, sb, "SANDBOX CREATE rt27blog_box")
			rt27Same(t, sb, ref, "rt27blog.t", "UPDATE t SET v = 0 WHERE id = 1")
			mustExecC(t, root, "UPDATE rt27blog.t SET v = -1 WHERE id IN (2, 3, 59999)")
			if tc.trust {
				rt27bStaged(t, h, "rt27blog_box", 100)
			}
			rt27Same(t, sb, ref, "rt27blog.t",
				"SELECT v FROM t WHERE id = 2",
				"UPDATE t SET v = v + 10 WHERE id IN (3, 4)",
				"SELECT id, v FROM t WHERE id IN (1, 2, 3, 4, 59999) ORDER BY id",
			)
			if ups := rt27bUps(t, h, "rt27blog_box"); tc.trust && ups["staging"] == 0 {
				t.Errorf("copy-ups %v: none read the staging table", ups)
			}
			rt27Whole(t, sb, ref, "SELECT COUNT(*), SUM(v) FROM t")
		})
	}
}
