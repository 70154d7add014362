package integration

import (
	"context"
	"fmt"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// lazyEnv is a proxy that forks every table with rows lazily, and the
// database lzs with table t of n rows, made anew.
func lazyEnv(t *testing.T, n int) (*proxyHandle, func(string) string) {
	t.Helper()
	server, _ := env(t)
	h := startTestProxy(t, server.Addr, server, func(c *proxy.Config) { c.Mode, c.Sandbox.LazyForkRows = "transparent", 1 })
	root := openDB(t, server.DSN(""))
	for _, q := range []string{
		"DROP DATABASE IF EXISTS lzs", "CREATE DATABASE lzs",
		"CREATE TABLE lzs.t (id INT AUTO_INCREMENT PRIMARY KEY, v INT NOT NULL, s VARCHAR(20), u VARCHAR(20) UNIQUE)",
		fmt.Sprintf("INSERT INTO lzs.t SELECT seq, seq %% 100, CONCAT('s', seq), CONCAT('u', seq) FROM lzs.seq_1_to_%d", n),
		"ANALYZE TABLE lzs.t",
	} {
		mustExecC(t, root, q)
	}
	direct := func(q string) string { return queryString(t, root, q) }
	return h, direct
}

// TestLazyForkSession: a sandbox's first write to a table forked lazily
// answers as on a copy made at the fork, while production changes after
// it, and the fork ends whole, diffed and untouched in production.
func TestLazyForkSession(t *testing.T) {
	h, direct := lazyEnv(t, 30000)
	ctx := context.Background()
	db := openDB(t, h.dsn("lzs"))
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	before := h.metric(t, "sqlfork_forks_total", map[string]string{"strategy": "lazy", "kind": "full"})
	mustExecC(t, c, "UPDATE t SET v = 1000 WHERE id = 7")
	if got := h.metric(t, "sqlfork_forks_total", map[string]string{"strategy": "lazy", "kind": "full"}); got != before+1 {
		t.Fatalf("lazy forks: %v, want %v", got, before+1)
	}
	// Production after the fork: the sandbox never sees it.
	root := openDB(t, h.db.DSN(""))
	mustExecC(t, root, "UPDATE lzs.t SET v = -1 WHERE id IN (9, 29999)")
	mustExecC(t, root, "DELETE FROM lzs.t WHERE id = 10")
	for _, tc := range []struct{ q, want string }{
		{"SELECT v FROM t WHERE id = 7", "1000"},
		{"SELECT v FROM t WHERE id = 9", "9"},
		{"SELECT v FROM t WHERE id = 29999", "99"},
		{"SELECT COUNT(*) FROM t", "30000"},
		{"SELECT SUM(v) FROM t", fmt.Sprint(300*4950 - 7 + 1000)},
	} {
		wantString(t, c, tc.q, tc.want, tc.q+": %s")
	}
	mustExecC(t, c, "INSERT INTO t (v, s, u) VALUES (5, 'new', 'unew')")
	wantString(t, c, "SELECT id FROM t WHERE u = 'unew'", "30001", "new row's id: %s")
	rows := rowsOf(t, c, "SANDBOX DIFF SUMMARY")
	if len(rows) != 1 || rows[0][2] != "1" || rows[0][3] != "1" {
		t.Errorf("DIFF SUMMARY: %v", rows)
	}
	if got := direct("SELECT v FROM lzs.t WHERE id = 7"); got != "7" {
		t.Errorf("production's row 7: v = %s", got)
	}
	if got := direct("SELECT COUNT(*) FROM lzs.t"); got != "29999" {
		t.Errorf("production's rows: %s", got)
	}
}
