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
			testkit.Eventually(t, "the server to end the connection", func() bool { return !threadAlive(t, admin, first) })
			if p != nil {
				testkit.Eventually(t, "the proxy to close the client connection", func() bool {
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

// TestClientKilledMidStatement: a client killed during SELECT SLEEP(3600)
// leaves no running query upstream: the proxy notices the client is gone
// and kills the statement on a connection of its own (the statement ends
// long before its hour, and the proxy counts it killed).
func TestClientKilledMidStatement(t *testing.T) {
	db, _ := env(t)
	admin := openDB(t, db.DSN(""))
	cli := mariadbCLI(t)
	for i, mode := range []string{"passthrough", "transparent"} {
		t.Run(mode, func(t *testing.T) {
			p := startTestProxy(t, db.Addr, db, func(c *proxy.Config) { c.Mode = mode })
			stmt := fmt.Sprintf("SELECT SLEEP(%d)", 3600+i)
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
			testkit.Eventually(t, "the statement to run upstream", func() bool { return running() == 1 })
			killed := time.Now()
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			testkit.Eventually(t, "the statement to end upstream", func() bool { return running() == 0 })
			t.Logf("the statement ended %v after its client was killed", time.Since(killed).Round(time.Millisecond))
			if got := p.metric(t, "sqlfork_orphaned_statements_killed_total", nil); got != 1 {
				t.Errorf("orphaned statements killed: %v", got)
			}
		})
	}
}

// TestClientGoneMidWriteFinishes (issue 13): a write whose client goes away
// while it runs runs to its end, as on a direct connection, where the
// server notices the client gone only when it next writes to it:
// go-sql-driver cancels a statement by closing its connection, and its
// TestContextCancelExec finds the row of an INSERT … SLEEP(1) cancelled
// after 250 ms written. Only plain reads are killed (above).
func TestClientGoneMidWriteFinishes(t *testing.T) {
	db, _ := env(t)
	for _, way := range []string{"direct", "passthrough", "transparent"} {
		t.Run(way, func(t *testing.T) {
			dsn := directDSN(db, "app")
			if way != "direct" {
				p := startTestProxy(t, db.Addr, db, func(c *proxy.Config) { c.Mode = way })
				dsn = p.dsn("app")
				if way == "transparent" { // a named sandbox, which every connection of the pool shares
					dsn = fmt.Sprintf("%s+cancelw:%s@tcp(%s)/app", db.User, db.Password, p.addr)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			pool := openDB(t, dsn)
			keeper, err := pool.Conn(ctx) // holds the named sandbox
			if err != nil {
				t.Fatal(err)
			}
			defer keeper.Close()
			table := "cancel_w_" + way
			for _, q := range []string{"DROP TABLE IF EXISTS " + table, "CREATE TABLE " + table + " (v INT)"} {
				if _, err := keeper.ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			if way != "transparent" { // on production: the shared database must stay as seeded
				defer func() { _, _ = keeper.ExecContext(context.Background(), "DROP TABLE "+table) }()
			}
			cctx, ccancel := context.WithCancel(ctx)
			defer time.AfterFunc(250*time.Millisecond, ccancel).Stop()
			if _, err := pool.ExecContext(cctx, "INSERT INTO "+table+" VALUES (SLEEP(1))"); err != context.Canceled {
				t.Fatalf("want context.Canceled, got %v", err)
			}
			// The INSERT runs its second (the watcher looking meanwhile)
			// and its row is written, as directly; killed, it never is.
			var n int
			testkit.Eventually(t, "the cancelled INSERT's row, as directly", func() bool {
				return keeper.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table).Scan(&n) == nil && n == 1
			})
		})
	}
}
