package integration

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
)

var builtBinary struct {
	once sync.Once
	path string
	err  error
}

// proxyBinary builds cmd/sqlfork-proxy once per test run.
func proxyBinary(t *testing.T) string {
	t.Helper()
	builtBinary.once.Do(func() {
		dir, err := os.MkdirTemp("", "sqlfork-bin-")
		if err != nil {
			builtBinary.err = err
			return
		}
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Dir(filepath.Dir(file))
		builtBinary.path = filepath.Join(dir, "sqlfork-proxy")
		cmd := exec.Command("go", "build", "-o", builtBinary.path, "./cmd/sqlfork-proxy")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			builtBinary.err = errors.New(string(out))
		}
	})
	if builtBinary.err != nil {
		t.Fatalf("build proxy: %v", builtBinary.err)
	}
	return builtBinary.path
}

// TestSIGTERMDrainsInFlight: on SIGTERM the proxy stops accepting, closes
// idle sessions, lets the running statement finish, and exits 0.
func TestSIGTERMDrainsInFlight(t *testing.T) {
	db, _ := env(t)
	listen, metricsAddr := freeAddr(t), freeAddr(t)
	cmd := exec.Command(proxyBinary(t), "serve", "--listen", listen, "--upstream", db.Addr,
		"--metrics-listen", metricsAddr, "--shutdown-grace", "20s", "--log-format", "json", "--mode", "passthrough")
	cmd.Env = append(os.Environ(), "SQLFORK_UPSTREAM_USER="+db.User, "SQLFORK_UPSTREAM_PASSWORD="+db.Password)
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("proxy log:\n%s", logs.String())
		}
	})
	testkit.Eventually(t, "proxy to listen", func() bool {
		c, err := net.Dial("tcp", listen)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	dsn := db.User + ":" + db.Password + "@tcp(" + listen + ")/"
	busy := openDB(t, dsn)
	idle := openDB(t, dsn)
	idleConn, err := idle.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := idleConn.PingContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	result := make(chan error, 1)
	go func() {
		var v int
		result <- busy.QueryRow("SELECT SLEEP(2)").Scan(&v)
	}()
	admin, err := sql.Open("mysql", db.DSN(""))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	testkit.Eventually(t, "statement to run", func() bool {
		var n int
		_ = admin.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO = 'SELECT SLEEP(2)'").Scan(&n)
		return n == 1
	})
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "listener to close", func() bool {
		c, err := net.DialTimeout("tcp", listen, time.Second)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	// The idle session is told to end before the listener closes; it ends
	// once its goroutine sees it (on a loaded machine, maybe after a ping
	// the test sends meanwhile: that one then fails with it).
	testkit.Eventually(t, "the idle session to end", func() bool { return idleConn.PingContext(context.Background()) != nil })
	if err := awaitErr(t, result, testkit.WaitLimit, "in-flight statement did not finish"); err != nil {
		t.Fatalf("in-flight statement failed during graceful shutdown: %v", err)
	}
	if err := awaitErr(t, exited, testkit.WaitLimit, "proxy did not exit after draining"); err != nil {
		t.Fatalf("proxy exit: %v (want status 0)", err)
	}
	t.Logf("shutdown took %s", time.Since(start).Round(time.Millisecond))
	// Draining ended with the statement, not at the 20 s grace.
	if strings.Contains(logs.String(), "shutdown grace expired") {
		t.Errorf("the idle session lasted until the shutdown grace closed it:\n%s", logs.String())
	}
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	return len(p), nil
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
