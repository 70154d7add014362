package integration

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// Connection liveness both ways (issue 13): what the far side of a
// connection does reaches the near side through the proxy as it would
// directly.

// TestIdleUpstreamCloseReachesPool: when the server closes an idle pooled
// connection (here KILL CONNECTION; wait_timeout, a restart or a failover
// alike), the driver finds the connection dead before reusing it and dials
// anew, so the application sees no error — directly, and through the proxy
// in each mode.
func TestIdleUpstreamCloseReachesPool(t *testing.T) {
	db, _ := env(t)
	admin := openDB(t, db.DSN(""))
	for _, mode := range []string{"direct", "passthrough", "transparent"} {
		t.Run(mode, func(t *testing.T) {
			dsn := directDSN(db, "app")
			var p *proxyHandle
			if mode != "direct" {
				p = startTestProxy(t, db.Addr, db, func(c *proxy.Config) { c.Mode = mode })
				dsn = p.dsn("app")
			}
			pool := openDB(t, dsn)
			pool.SetMaxOpenConns(1)
			pool.SetMaxIdleConns(1)
			var first int64
			if err := pool.QueryRow("SELECT CONNECTION_ID()").Scan(&first); err != nil {
				t.Fatal(err)
			}
			if _, err := admin.Exec(fmt.Sprintf("KILL CONNECTION %d", first)); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the server to end the connection", func() bool { return !threadAlive(t, admin, first) })
			if p != nil {
				waitFor(t, "the proxy to close the client connection", func() bool {
					return p.metric(t, "sqlfork_upstream_connections_lost_total", nil) == 1
				})
			}
			var next int64
			if err := pool.QueryRow("SELECT CONNECTION_ID()").Scan(&next); err != nil {
				t.Fatalf("the pool's next query failed: %v", err)
			}
			if next == first {
				t.Fatalf("still on killed connection %d", first)
			}
		})
	}
}

// threadAlive reports whether the server still has thread id.
func threadAlive(t *testing.T, admin *sql.DB, id int64) bool {
	t.Helper()
	var n int
	if err := admin.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ?", id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// TestClientKilledMidStatement: a client killed during SELECT SLEEP(30)
// leaves no running query upstream within 2 s: the proxy notices the
// client is gone and kills the statement on a connection of its own.
func TestClientKilledMidStatement(t *testing.T) {
	db, _ := env(t)
	admin := openDB(t, db.DSN(""))
	cli := mariadbCLI(t)
	for i, mode := range []string{"passthrough", "transparent"} {
		t.Run(mode, func(t *testing.T) {
			p := startTestProxy(t, db.Addr, db, func(c *proxy.Config) { c.Mode = mode })
			stmt := fmt.Sprintf("SELECT SLEEP(%d)", 30+i)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := cliCmd(ctx, cli, p.addr, db.User, db.Password, "-e", stmt)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			running := func() int {
				var n int
				if err := admin.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO = ?", stmt).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			waitFor(t, "the statement to run upstream", func() bool { return running() == 1 })
			killed := time.Now()
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			waitFor(t, "the statement to end upstream", func() bool { return running() == 0 })
			if took := time.Since(killed); took > 2*time.Second {
				t.Errorf("the statement ran %v after its client was killed (want < 2s)", took)
			} else {
				t.Logf("the statement ended %v after its client was killed", took.Round(time.Millisecond))
			}
			if got := p.metric(t, "sqlfork_orphaned_statements_killed_total", nil); got != 1 {
				t.Errorf("orphaned statements killed: %v", got)
			}
		})
	}
}
