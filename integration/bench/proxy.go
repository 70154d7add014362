package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/sqlfork/sqlfork-proxy/integration/testdb"
)

// repoRoot finds the module root: from this source file's path (go run
// keeps it), else from `go env GOMOD`.
func repoRoot() (string, error) {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		root := filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			return root, nil
		}
	}
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside the sqlfork-proxy module; run from the repository root")
	}
	return filepath.Dir(gomod), nil
}

// buildProxy builds ./cmd/sqlfork-proxy into dir and returns the binary.
func buildProxy(ctx context.Context, root, dir string) (string, error) {
	bin := filepath.Join(dir, "sqlfork-proxy")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/sqlfork-proxy")
	cmd.Dir = root
	cmd.SysProcAttr = childAttr()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/sqlfork-proxy: %v\n%s", err, out)
	}
	return bin, nil
}

// startProxy runs the proxy binary against upstream on a free loopback port
// and waits until it completes a MySQL handshake. The port is picked by
// binding :0 and closing it, so it is retried if another process takes it.
// startProxy starts the proxy binary in mode (passthrough for the hop
// itself, transparent for sandbox mode), with extra flags after the
// others; its output goes to proxy-NAME.log in dir.
func startProxy(ctx context.Context, bin, dir, upstream, user, password, name, mode string, extra ...string) (*child, string, string, error) {
	logPath := filepath.Join(dir, "proxy-"+name+".log")
	var lastErr error
	for attempt := 1; attempt <= 3; attempt++ {
		addr, err := freeAddr()
		if err != nil {
			return nil, "", "", err
		}
		logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, "", "", err
		}
		cmd := exec.Command(bin, append([]string{"serve",
			"--listen=" + addr,
			"--upstream=" + upstream,
			"--upstream-user=" + user,
			"--upstream-password=" + password,
			"--metrics-listen=",
			"--mode=" + mode,
			"--log-level=warn"}, extra...)...)
		cmd.Stdout, cmd.Stderr = logf, logf
		// Keep settings from the caller's environment out of the benchmark.
		cmd.Env = cleanEnv("SQLFORK_")
		c, err := startChild("proxy", cmd)
		logf.Close()
		if err != nil {
			return nil, "", "", err
		}
		if err := waitMySQL(ctx, addr, user, password, c); err != nil {
			c.stop(5 * time.Second)
			lastErr = fmt.Errorf("proxy on %s not ready: %v\n--- %s (tail) ---\n%s", addr, err, logPath, tailFile(logPath, 20))
			if ctx.Err() != nil {
				return nil, "", "", lastErr
			}
			continue
		}
		return c, addr, logPath, nil
	}
	return nil, "", "", lastErr
}

func cleanEnv(dropPrefix string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, dropPrefix) {
			env = append(env, kv)
		}
	}
	return env
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// waitMySQL pings addr with go-sql-driver until it answers, c exits, or 20s
// pass.
func waitMySQL(ctx context.Context, addr, user, password string, c *child) error {
	db, err := openMySQL(addr, user, password, "")
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err = db.PingContext(pctx)
		cancel()
		if err == nil {
			return nil
		}
		if c != nil && c.exited() {
			return fmt.Errorf("process exited (%v); last ping error: %v", c.err, err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out; last ping error: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// openMySQL opens a go-sql-driver pool on addr; each tweak then adjusts
// the driver's configuration (multiStatements and the like).
func openMySQL(addr, user, password, dbName string, tweaks ...func(*mysql.Config)) (*sql.DB, error) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd = user, password
	cfg.Net, cfg.Addr, cfg.DBName = "tcp", addr, dbName
	cfg.Timeout = 5 * time.Second
	cfg.ReadTimeout = 10 * time.Minute
	cfg.WriteTimeout = 10 * time.Minute
	for _, tweak := range tweaks {
		tweak(cfg)
	}
	return testdb.OpenConfig(cfg, 1)
}
