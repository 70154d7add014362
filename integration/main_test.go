// Package integration drives sqlfork-proxy end to end with real clients
// against a throwaway MariaDB started by the tests.
package integration

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/integration/testdb"
	"github.com/sqlfork/sqlfork-proxy/metrics"
	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// shared is one MariaDB and one proxy in front of it, used by tests that
// do not break either.
var shared struct {
	once  sync.Once
	err   error
	db    *testdb.Server
	proxy *proxyHandle
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.proxy != nil {
		shared.proxy.stop()
	}
	if shared.db != nil {
		_ = shared.db.Stop()
	}
	os.Exit(code)
}

// env returns the shared MariaDB and proxy, starting them on first use.
func env(t testing.TB) (*testdb.Server, *proxyHandle) {
	t.Helper()
	testdb.Require(t)
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		shared.db, shared.err = testdb.Start(ctx, testdb.Options{})
		if shared.err != nil {
			return
		}
		shared.err = seed(shared.db)
		if shared.err != nil {
			return
		}
		shared.proxy, shared.err = startProxy(shared.db.Addr, shared.db, nil)
	})
	if shared.err != nil {
		t.Fatalf("start test environment: %v", shared.err)
	}
	return shared.db, shared.proxy
}

// seed creates the schema the tests share.
func seed(db *testdb.Server) error {
	conn, err := sql.Open("mysql", db.DSN("")+"?multiStatements=true")
	if err != nil {
		return err
	}
	defer conn.Close()
	_, err = conn.Exec(`
CREATE DATABASE IF NOT EXISTS app;
CREATE DATABASE IF NOT EXISTS other;
CREATE TABLE app.users (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(64) NOT NULL UNIQUE,
  email VARCHAR(128), score DECIMAL(10,2), created DATETIME(3), bio TEXT, avatar BLOB) ENGINE=InnoDB;
INSERT INTO app.users (name, email, score, created, bio, avatar) VALUES
  ('alice','alice@example.com',10.50,'2024-01-02 03:04:05.678','C:\\temp\\new', x'00FF10'),
  ('bob',NULL,-3.25,'2023-12-31 23:59:59.000','', NULL),
  ('carol','carol@example.com',NULL,NULL,NULL,x'');
CREATE TABLE other.things (id INT PRIMARY KEY, label VARCHAR(20));
INSERT INTO other.things VALUES (1,'one'),(2,'two');
CREATE PROCEDURE app.two_results() BEGIN SELECT 1 AS a; SELECT 'x' AS b, 2 AS c; END;
CREATE PROCEDURE app.out_param(IN x INT, OUT y INT) BEGIN SET y = x * 2; END;
`)
	return err
}

// proxyHandle is an in-process proxy.
type proxyHandle struct {
	addr   string
	srv    *proxy.Server
	cfg    proxy.Config
	reg    *prometheus.Registry
	cancel context.CancelFunc
	done   chan error
	db     *testdb.Server
	once   sync.Once
}

// startProxy runs a proxy in front of upstream, logging in with db's account.
func startProxy(upstream string, db *testdb.Server, mutate func(*proxy.Config)) (*proxyHandle, error) {
	return startProxyLogging(upstream, db, mutate, zap.NewNop())
}

// startProxyLogging is startProxy with the proxy's logs going to log.
func startProxyLogging(upstream string, db *testdb.Server, mutate func(*proxy.Config), log *zap.Logger) (*proxyHandle, error) {
	cfg := proxy.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.Upstream = upstream
	cfg.UpstreamUser, cfg.UpstreamPassword = db.User, db.Password
	cfg.ShutdownGrace = 5 * time.Second
	// The proxy-core tests expect a plain proxy; sandbox tests ask for
	// their mode.
	cfg.Mode = "passthrough"
	// The tests share one MariaDB and check which sandboxes are left:
	// sandboxes end with their last connection unless a test asks for a
	// grace (sandbox_grace_test.go).
	cfg.Sandbox.Grace = 0
	// SQLFORK_TEST_LAZY_FORK_ROWS runs every suite with lazy forks from
	// that many rows (1: every table with rows; issue 27).
	if v, err := strconv.ParseInt(os.Getenv("SQLFORK_TEST_LAZY_FORK_ROWS"), 10, 64); err == nil {
		cfg.Sandbox.LazyForkRows = v
	}
	if mutate != nil {
		mutate(&cfg)
	}
	reg := prometheus.NewRegistry()
	pm := metrics.New(reg)
	pm.SetBuildInfo("test", "test", runtime.Version())
	srv, err := proxy.New(cfg, log, pm)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &proxyHandle{addr: srv.Addr().String(), srv: srv, cfg: cfg, reg: reg, cancel: cancel, done: make(chan error, 1), db: db}
	go func() { h.done <- srv.Serve(ctx) }()
	return h, nil
}

// startTestProxy is startProxy stopped at the end of the test.
func startTestProxy(t testing.TB, upstream string, db *testdb.Server, mutate func(*proxy.Config)) *proxyHandle {
	t.Helper()
	h, err := startProxy(upstream, db, mutate)
	if err != nil {
		t.Fatalf("start proxy: %v", err)
	}
	t.Cleanup(h.stop)
	return h
}

// setFillRate changes the rows per second the proxy's lazy forks copy,
// the copies running included, as a SIGHUP reload of lazy-fork-rate does
// (0: no bound): a test keeps a fill slow while it runs statements during
// it, then lets it end.
func (h *proxyHandle) setFillRate(rate int64) {
	h.cfg.Sandbox.LazyForkRate = rate
	h.srv.SetSandboxLimits(h.cfg)
}

// stop shuts the proxy down (once; later calls return at once). The wait
// is a hang guard: a proxy discards its sandboxes as it stops, each XA
// transaction a red-team test left prepared rolled back and each schema
// dropped, which on a busy machine (the suite runs as two processes)
// took over 30 s.
func (h *proxyHandle) stop() {
	h.once.Do(func() {
		h.cancel()
		select {
		case <-h.done:
		case <-time.After(3 * time.Minute):
			panic("proxy did not stop")
		}
	})
}

// dsn is a go-sql-driver DSN through the proxy.
func (h *proxyHandle) dsn(db string, params ...string) string {
	return withParams(fmt.Sprintf("%s:%s@tcp(%s)/%s", h.db.User, h.db.Password, h.addr, db), params)
}

// directDSN is a go-sql-driver DSN straight to MariaDB.
func directDSN(db *testdb.Server, name string, params ...string) string {
	return withParams(db.DSN(name), params)
}

func withParams(dsn string, params []string) string {
	if len(params) == 0 {
		return dsn
	}
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + strings.Join(params, "&")
}

// counter reads a counter or gauge value from the proxy's registry.
func (h *proxyHandle) metric(t testing.TB, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := h.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if v, ok := labels[lp.GetName()]; ok && v != lp.GetValue() {
					continue next
				}
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return 0
}

func openDB(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// awaitErr waits, limit at most, for the error ch reports (nil for a
// success) and returns it; when none comes in time, the test fails with
// late.
func awaitErr(t testing.TB, ch <-chan error, limit time.Duration, late string) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(limit):
		t.Fatal(late)
		return nil
	}
}

// mysqlErr extracts a server error's number, state and message.
func mysqlErr(err error) string {
	if err == nil {
		return ""
	}
	if me, ok := err.(*mysql.MySQLError); ok {
		return fmt.Sprintf("%d (%s) %s", me.Number, string(me.SQLState[:]), me.Message)
	}
	return "non-server error: " + err.Error()
}
