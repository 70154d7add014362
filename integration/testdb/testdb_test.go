package testdb_test

import (
	"context"
	"database/sql"
	"net"
	"strconv"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/sqlfork/sqlfork-proxy/integration/testdb"
)

func TestStartKillRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()

	srv := testdb.StartForTest(ctx, t, testdb.Options{Logf: t.Logf})
	if srv.Port == 0 || srv.Addr != net.JoinHostPort("127.0.0.1", strconv.Itoa(srv.Port)) {
		t.Fatalf("bad Addr/Port: %q / %d", srv.Addr, srv.Port)
	}

	db, err := sql.Open("mysql", srv.DSN("")+"?timeout=2s")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxIdleConns(0) // no pooled connections surviving the kill

	var user, plugin string
	if err := db.QueryRowContext(ctx,
		"SELECT CURRENT_USER(), plugin FROM mysql.user WHERE user = ? AND host = '127.0.0.1'",
		srv.User).Scan(&user, &plugin); err != nil {
		t.Fatal(err)
	}
	if user != srv.User+"@127.0.0.1" || plugin != "mysql_native_password" {
		t.Fatalf("CURRENT_USER()=%q plugin=%q", user, plugin)
	}
	mustExec(t, db, "CREATE DATABASE t")
	mustExec(t, db, "CREATE TABLE t.kv (k INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB")
	mustExec(t, db, "INSERT INTO t.kv VALUES (1, 'before crash')")

	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	if c, err := net.DialTimeout("tcp", srv.Addr, time.Second); err == nil {
		c.Close()
		t.Fatalf("%s still accepts connections after Kill", srv.Addr)
	}
	pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
	err = db.PingContext(pctx)
	pcancel()
	if err == nil {
		t.Fatal("Ping succeeded after Kill")
	}

	if err := srv.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	var v string
	if err := db.QueryRowContext(ctx, "SELECT v FROM t.kv WHERE k = 1").Scan(&v); err != nil {
		t.Fatal(err)
	}
	if v != "before crash" {
		t.Fatalf("v = %q after crash recovery", v)
	}

	// A second kill/restart cycle on the same port.
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, "INSERT INTO t.kv VALUES (2, 'after restart')")
}

func TestParallelServers(t *testing.T) {
	testdb.Require(t)
	for i := 0; i < 3; i++ {
		t.Run("", func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
			defer cancel()
			srv := testdb.StartForTest(ctx, t, testdb.Options{Logf: t.Logf})
			db, err := sql.Open("mysql", srv.DSN("mysql"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var port int
			if err := db.QueryRowContext(ctx, "SELECT @@port").Scan(&port); err != nil {
				t.Fatal(err)
			}
			if port != srv.Port {
				t.Fatalf("@@port = %d, want %d", port, srv.Port)
			}
		})
	}
}

func mustExec(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}
