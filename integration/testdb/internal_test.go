package testdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// script writes an executable shell script and returns its path.
func script(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeTB records what Require does with a test; Skipf and Fatalf end
// the goroutine, as testing's do.
type fakeTB struct {
	testing.TB
	skipped, fatal string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Skipf(format string, a ...any) {
	f.skipped = fmt.Sprintf(format, a...)
	runtime.Goexit()
}
func (f *fakeTB) Fatalf(format string, a ...any) {
	f.fatal = fmt.Sprintf(format, a...)
	runtime.Goexit()
}

// require runs Require(tb) on a goroutine of its own, which Skipf and
// Fatalf may end.
func require(tb *fakeTB) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		Require(tb)
	}()
	<-done
}

// TestBinaries: the environment overrides the binaries found, and a
// missing one is named; Require skips without them, or fails under CI.
func TestBinaries(t *testing.T) {
	fake := script(t, "mariadbd", "exit 0\n")
	for _, tc := range []struct {
		name           string
		mariadbd, inst string // environment overrides ("" leaves the lookup)
		missing        string // named in the error ("" for none)
		ci             string
	}{
		{name: "overridden", mariadbd: fake, inst: fake},
		{name: "mariadbd missing", mariadbd: "/nonexistent/mariadbd", inst: fake, missing: "mariadbd not found", ci: "false"},
		{name: "install-db missing", mariadbd: fake, inst: "/nonexistent/install", missing: "mariadb-install-db not found", ci: "true"},
		{name: "both missing", mariadbd: "/nonexistent/a", inst: "/nonexistent/b", missing: "mariadbd and mariadb-install-db not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("SQLFORK_MARIADBD", tc.mariadbd)
			t.Setenv("SQLFORK_MARIADB_INSTALL_DB", tc.inst)
			t.Setenv("CI", tc.ci)
			d, i, err := Binaries()
			if tc.missing == "" {
				if err != nil || d != tc.mariadbd || i != tc.inst {
					t.Errorf("Binaries = %q, %q, %v", d, i, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.missing) || d != "" || i != "" {
				t.Fatalf("Binaries = %q, %q, %v; want an error naming %q", d, i, err, tc.missing)
			}
			tb := &fakeTB{TB: t}
			require(tb)
			if tc.ci == "true" {
				if !strings.Contains(tb.fatal, "CI=true") || tb.skipped != "" {
					t.Errorf("under CI: fatal %q, skipped %q", tb.fatal, tb.skipped)
				}
			} else if !strings.Contains(tb.skipped, tc.missing) || tb.fatal != "" {
				t.Errorf("without CI: skipped %q, fatal %q", tb.skipped, tb.fatal)
			}
			if _, err := Start(context.Background(), Options{}); err == nil || !strings.Contains(err.Error(), tc.missing) {
				t.Errorf("Start without the binaries: %v", err)
			}
		})
	}
	// With the binaries, Require lets the test run.
	t.Setenv("SQLFORK_MARIADBD", fake)
	t.Setenv("SQLFORK_MARIADB_INSTALL_DB", fake)
	tb := &fakeTB{TB: t}
	require(tb)
	if tb.skipped != "" || tb.fatal != "" {
		t.Errorf("Require with the binaries: skipped %q, fatal %q", tb.skipped, tb.fatal)
	}
	// Found in the usual places when not overridden.
	t.Setenv("SQLFORK_MARIADBD", "")
	t.Setenv("SQLFORK_MARIADB_INSTALL_DB", "")
	if findBinary("SQLFORK_NO_SUCH_VARIABLE", "no-such-binary-sqlfork") != "" {
		t.Error("found a binary that does not exist")
	}
	if p := findBinary("SQLFORK_NO_SUCH_VARIABLE", "no-such-binary-sqlfork", "sh"); p == "" || filepath.Base(p) != "sh" {
		t.Errorf("findBinary of sh = %q", p)
	}
}

// TestStartFails: a failing install, a server that exits at once and a
// port always taken each fail Start with what went wrong, leaving no
// directory behind.
func TestStartFails(t *testing.T) {
	// The fake server writes to its error log what it was told, then
	// what a server whose port is taken writes.
	taken := `for a in "$@"; do case "$a" in --log-error=*) log="${a#--log-error=}";; --port=*) echo "$a" >> "$(dirname "$0")/ports";; esac; done
echo "[ERROR] Can't start server: Bind on TCP/IP port. Got error: 98: Address already in use" >> "$log"
exit 1
`
	for _, tc := range []struct {
		name, install, server string
		msg                   string
		portInUse             bool
		attempts              int // ports tried
	}{
		{name: "install fails", install: "echo install broke >&2; exit 3\n", server: "exit 0\n", msg: "failed: exit status 3\ninstall broke"},
		{name: "server exits", install: "exit 0\n", server: "exit 1\n", msg: "mariadbd exited during startup"},
		{name: "port always taken", install: "exit 0\n", server: taken, portInUse: true, attempts: startAttempts},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			server := script(t, "mariadbd", tc.server)
			t.Setenv("SQLFORK_MARIADBD", server)
			t.Setenv("SQLFORK_MARIADB_INSTALL_DB", script(t, "install", tc.install))
			var logged []string
			_, err := Start(context.Background(), Options{Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }})
			if err == nil || !strings.Contains(err.Error(), tc.msg) || errors.Is(err, errPortInUse) != tc.portInUse {
				t.Fatalf("Start = %v, want an error saying %q (port in use: %v)", err, tc.msg, tc.portInUse)
			}
			if left, _ := filepath.Glob(filepath.Join(tmp, tempPrefix+"*")); len(left) != 0 {
				t.Errorf("left behind: %q", left)
			}
			if tc.attempts > 0 {
				ports, _ := os.ReadFile(filepath.Join(filepath.Dir(server), "ports"))
				if n := strings.Count(string(ports), "--port="); n != tc.attempts || len(logged) != tc.attempts-1 {
					t.Errorf("%d ports tried, %d retries logged; want %d tries", n, len(logged), tc.attempts)
				}
			}
		})
	}
}

// TestLaunchGivesUp: a server that never gets ready within the caller's
// context is killed, and the error says why.
func TestLaunchGivesUp(t *testing.T) {
	root := t.TempDir()
	s := &Server{rootDir: root, DataDir: filepath.Join(root, "data"), Socket: filepath.Join(root, "none.sock"),
		logPath: filepath.Join(root, "err"), pidPath: filepath.Join(root, "pid"), Addr: "127.0.0.1:1",
		bin: script(t, "mariadbd", "exec sleep 600\n"), logf: t.Logf}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := s.launch(ctx, false)
	if err == nil || !strings.Contains(err.Error(), "not ready: context canceled") {
		t.Fatalf("launch = %v", err)
	}
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	if !isDone(done) {
		t.Error("the server that never got ready still runs")
	}
	// Kill and Stop of a server that is gone do nothing but tidy up.
	if err := s.Kill(); err != nil {
		t.Error(err)
	}
	if err := s.Stop(); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Errorf("Stop left %s: %v", root, err)
	}
	if got := s.ErrorLog(); got != "" {
		t.Errorf("ErrorLog of a removed server = %q", got)
	}
	if got := string(s.logTail(0, 3)); !strings.Contains(got, "no such file") {
		t.Errorf("logTail of a missing log = %q", got)
	}
	// A server never started: nothing to stop or kill.
	var never Server
	if never.Kill() != nil || never.Stop() != nil {
		t.Error("Kill or Stop of a server never started")
	}
}

// TestTempDirs: a $TMPDIR too long for a socket path falls back to /tmp;
// old directories of dead servers are swept, live and recent ones kept.
func TestTempDirs(t *testing.T) {
	long := filepath.Join(t.TempDir(), strings.Repeat("d", 100))
	if err := os.MkdirAll(long, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", long)
	dir, err := makeTempDir()
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if !strings.HasPrefix(dir, "/tmp/"+tempPrefix) {
		t.Errorf("makeTempDir under a long TMPDIR = %q, want it in /tmp", dir)
	}

	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	// Past any pid_max: no process has it (a finished child's pid could
	// be reused meanwhile).
	const deadPid = 2147483646
	old := time.Now().Add(-2 * time.Hour)
	for _, tc := range []struct {
		name string
		pid  string // the pid file's contents ("" for none)
		age  time.Time
		kept bool
	}{
		{name: "old-no-pid", age: old},
		{name: "old-dead", pid: fmt.Sprint(deadPid), age: old},
		{name: "old-garbage-pid", pid: "x", age: old},
		{name: "old-live", pid: fmt.Sprint(os.Getpid()), age: old, kept: true},
		{name: "recent", age: time.Now(), kept: true},
	} {
		d := filepath.Join(tmp, tempPrefix+tc.name)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if tc.pid != "" {
			if err := os.WriteFile(filepath.Join(d, "mariadbd.pid"), []byte(tc.pid+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chtimes(d, tc.age, tc.age); err != nil {
			t.Fatal(err)
		}
	}
	sweepStale()
	for _, name := range []string{"old-no-pid", "old-dead", "old-garbage-pid", "old-live", "recent"} {
		_, err := os.Stat(filepath.Join(tmp, tempPrefix+name))
		kept := err == nil
		if want := name == "old-live" || name == "recent"; kept != want {
			t.Errorf("%s kept: %v, want %v", name, kept, want)
		}
	}
}

// TestTail: the last lines of a text, trailing newlines aside.
func TestTail(t *testing.T) {
	for _, tc := range []struct {
		in    string
		lines int
		want  string
	}{
		{"a\nb\nc\n\n", 2, "b\nc"},
		{"a\nb", 5, "a\nb"},
		{"", 1, ""},
	} {
		if got := string(tail([]byte(tc.in), tc.lines)); got != tc.want {
			t.Errorf("tail(%q, %d) = %q, want %q", tc.in, tc.lines, got, tc.want)
		}
	}
	if fileSize("/nonexistent/file") != 0 {
		t.Error("fileSize of a missing file")
	}
}

// TestRestartRunningAndPortTaken: Restart of a running server stops it
// first and brings it back with its data; a Restart whose port another
// process took fails with errPortInUse.
func TestRestartRunningAndPortTaken(t *testing.T) {
	Require(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	srv, err := Start(ctx, Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
		if err := srv.Stop(); err != nil {
			t.Errorf("second Stop: %v", err)
		}
	})
	db, err := sql.Open("mysql", srv.DSN("")+"?timeout=2s")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxIdleConns(0)
	if _, err := db.ExecContext(ctx, "CREATE DATABASE kept"); err != nil {
		t.Fatal(err)
	}
	if err := srv.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	var name string
	if err := db.QueryRowContext(ctx, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'kept'").Scan(&name); err != nil {
		t.Fatalf("after a restart of the running server: %v", err)
	}
	if !strings.Contains(srv.ErrorLog(), "ready for connections") {
		t.Errorf("error log without the server's start:\n%s", srv.ErrorLog())
	}
	// Another process takes the port while the server is down; the
	// server gives up binding at once.
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", srv.Addr)
	if err != nil {
		t.Skipf("the port could not be taken for the test: %v", err)
	}
	srv.extra = append(srv.extra, "--port-open-timeout=0")
	err = srv.Restart(ctx)
	l.Close()
	if !errors.Is(err, errPortInUse) {
		t.Fatalf("Restart on a taken port = %v, want errPortInUse", err)
	}
	srv.extra = srv.extra[:len(srv.extra)-1]
	if err := srv.Restart(ctx); err != nil {
		t.Fatalf("Restart once the port is free: %v", err)
	}
}
