package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func testEnv(vars map[string]string, stdout, stderr io.Writer) env {
	return env{
		lookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
		readFile:  os.ReadFile,
		stdout:    stdout,
		stderr:    stderr,
	}
}

func TestRun(t *testing.T) {
	busy := testkit.Listen(t)

	tests := []struct {
		name       string
		args       []string
		env        map[string]string
		wantCode   int
		wantStdout string // substring
		wantStderr string // substring
	}{
		{"version", []string{"version"}, nil, 0, "sqlfork-proxy dev\ncommit: unknown\ngo: " + runtime.Version(), ""},
		{"no command shows help", nil, nil, 0, "serve", ""},
		{"serve help", []string{"serve", "--help"}, nil, 0, "SQLFORK_UPSTREAM_PASSWORD", ""},
		{"unknown command", []string{"frobnicate"}, nil, 2, "", `sqlfork-proxy: unknown command "frobnicate" for "sqlfork-proxy"`},
		{"unknown flag", []string{"serve", "--listne", "x"}, nil, 2, "", "sqlfork-proxy: unknown flag: --listne\nRun 'sqlfork-proxy serve --help' for usage."},
		{"extra argument", []string{"serve", "now"}, nil, 2, "", `unknown command "now" for "sqlfork-proxy serve"`},
		{"version takes no args", []string{"version", "x"}, nil, 2, "", `unknown command "x" for "sqlfork-proxy version"`},
		{"bad duration flag", []string{"serve", "--idle-timeout", "x"}, nil, 2, "",
			"sqlfork-proxy: idle-timeout: bad duration \"x\": use forms like 500ms, 90s, 30m, 2h, 1h30m, 7d or a number of seconds\n"},
		{"bad listen env", []string{"serve"}, map[string]string{"SQLFORK_LISTEN": "bad"}, 2, "",
			`sqlfork-proxy: listen: "bad" is not host:port`},
		{"bad config file", []string{"serve", "--config", "testdata-does-not-exist.yaml"}, nil, 2, "",
			"sqlfork-proxy: config: open testdata-does-not-exist.yaml: "},
		{"busy listen port", []string{"serve", "--listen", busy.Addr().String(), "--metrics-listen="}, nil, 1, "",
			"sqlfork-proxy: starting proxy: "},
		{"busy metrics port", []string{"serve", "--listen", "127.0.0.1:0", "--metrics-listen", busy.Addr().String()}, nil, 1, "",
			"sqlfork-proxy: metrics listener: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tc.args, testEnv(tc.env, &stdout, &stderr))
			if code != tc.wantCode {
				t.Errorf("exit code %d, want %d\nstdout: %s\nstderr: %s", code, tc.wantCode, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String(), tc.wantStdout) {
				t.Errorf("stdout does not contain %q:\n%s", tc.wantStdout, stdout.String())
			}
			if !strings.Contains(stderr.String(), tc.wantStderr) {
				t.Errorf("stderr does not contain %q:\n%s", tc.wantStderr, stderr.String())
			}
			if tc.wantCode == 0 && stderr.Len() != 0 {
				t.Errorf("unexpected stderr: %s", stderr.String())
			}
		})
	}
}

// TestServe starts the whole command, checks the "listening" log line and the
// metrics endpoints, then cancels it as a signal would and expects exit 0.
func TestServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	args := []string{"serve", "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--log-format", "json"}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, args, testEnv(map[string]string{"SQLFORK_LOG_LEVEL": "debug"}, io.Discard, &stderr))
	}()

	var line struct {
		Level, Msg                         string
		Listen, Upstream, Metrics, Version string
	}
	deadline := time.Now().Add(10 * time.Second)
	for line.Msg != "listening" {
		if time.Now().After(deadline) {
			t.Fatalf("no listening line; stderr:\n%s", stderr.String())
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited early with %d; stderr:\n%s", code, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		sc := bufio.NewScanner(strings.NewReader(stderr.String()))
		for sc.Scan() {
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				t.Fatalf("log line is not JSON: %q: %v", sc.Text(), err)
			}
			if line.Msg == "listening" {
				break
			}
		}
	}
	if line.Level != "info" || line.Upstream != "127.0.0.1:3306" || line.Version != "dev" ||
		strings.HasSuffix(line.Listen, ":0") || strings.HasSuffix(line.Metrics, ":0") {
		t.Errorf("unexpected listening line %+v", line)
	}

	for path, want := range map[string]string{"/healthz": "ok", "/metrics": "sqlfork_client_connections_total"} {
		resp, err := http.Get("http://" + line.Metrics + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("GET %s: %d %q", path, resp.StatusCode, body)
		}
	}

	// The admin API shares the listener: on loopback without a token it
	// only reads, so a keep is refused before the proxy is asked.
	resp, err := http.Post("http://"+line.Metrics+"/api/v1/sandboxes/box/keep", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("POST keep without a token: %d, want 403", resp.StatusCode)
	}

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit code %d; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop after cancel")
	}
	if c, err := net.DialTimeout("tcp", line.Metrics, time.Second); err == nil {
		_ = c.Close()
		t.Error("metrics listener still open after exit")
	}
}

func TestNewLogger(t *testing.T) {
	tests := []struct {
		format, level string
		wantDebug     bool
		wantPrefix    string
	}{
		{"json", "debug", true, `{"level":"debug"`},
		{"json", "info", false, `{"level":"info"`},
		{"console", "warn", false, ""},
		{"console", "error", false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.format+"/"+tc.level, func(t *testing.T) {
			var buf bytes.Buffer
			log, err := newLogger(tc.format, tc.level, &buf, zap.NewAtomicLevel())
			if err != nil {
				t.Fatal(err)
			}
			log.Debug("d")
			log.Info("i")
			log.Error("e")
			out := buf.String()
			if got := strings.Contains(out, `"d"`) || strings.Contains(out, "\td\n"); got != tc.wantDebug {
				t.Errorf("debug logged = %v, want %v:\n%s", got, tc.wantDebug, out)
			}
			if !strings.HasPrefix(out, tc.wantPrefix) {
				t.Errorf("output %q does not start with %q", out, tc.wantPrefix)
			}
			if !strings.Contains(out, "e") {
				t.Errorf("error not logged: %q", out)
			}
		})
	}
	if _, err := newLogger("xml", "info", io.Discard, zap.NewAtomicLevel()); err == nil {
		t.Error("bad format accepted")
	}
	if _, err := newLogger("json", "loud", io.Discard, zap.NewAtomicLevel()); err == nil {
		t.Error("bad level accepted")
	}
}
