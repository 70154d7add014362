// Package testdb starts throwaway MariaDB servers for integration tests and
// benchmarks.
//
// Every Server gets its own temporary directory (data dir, unix socket, pid
// file, error log) and its own loopback TCP port, so tests in different
// packages can run in parallel. The system MariaDB service is never used or
// touched. mariadbd runs as a child of the calling process and is SIGKILLed
// by the kernel if that process dies (Pdeathsig), so a crashed or timed-out
// test binary does not leave servers behind (its temp dir may remain).
//
// Binaries are looked up in $PATH, /usr/sbin and /usr/bin; the environment
// variables SQLFORK_MARIADBD and SQLFORK_MARIADB_INSTALL_DB override them.
package testdb

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Options configures Start.
type Options struct {
	// Logf receives mariadbd diagnostics (e.g. t.Logf); may be nil.
	Logf func(format string, args ...any)
	// ExtraArgs are appended to the mariadbd command line. They come last,
	// so they override the defaults (e.g. "--innodb-buffer-pool-size=1G").
	ExtraArgs []string
}

// Server is a running (or killed) throwaway mariadbd.
type Server struct {
	Addr     string // "127.0.0.1:PORT"
	Port     int
	DataDir  string
	Socket   string // unix socket path; root can connect here without a password
	User     string // all privileges, reachable over TCP from 127.0.0.1, mysql_native_password
	Password string

	logf    func(format string, args ...any)
	rootDir string // temp dir holding data/, socket, pid file, error log
	logPath string
	pidPath string
	bin     string
	extra   []string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

const (
	readyTimeout    = 60 * time.Second
	shutdownTimeout = 60 * time.Second
	startAttempts   = 5  // fresh ports tried by Start when the picked one is taken
	portOpenTimeout = 30 // seconds Restart lets mariadbd retry binding its old port
	testUser        = "sqlfork"
	tempPrefix      = "sqlfork-testdb-"
)

// Binaries returns the paths of mariadbd and mariadb-install-db, or an error
// naming what is missing.
func Binaries() (mariadbd, installDB string, err error) {
	mariadbd = findBinary("SQLFORK_MARIADBD", "mariadbd", "mysqld")
	installDB = findBinary("SQLFORK_MARIADB_INSTALL_DB", "mariadb-install-db", "mysql_install_db")
	var missing []string
	if mariadbd == "" {
		missing = append(missing, "mariadbd")
	}
	if installDB == "" {
		missing = append(missing, "mariadb-install-db")
	}
	if len(missing) > 0 {
		return "", "", fmt.Errorf("testdb: %s not found in $PATH, /usr/sbin or /usr/bin "+
			"(install them with: apt-get install mariadb-server mariadb-client)",
			strings.Join(missing, " and "))
	}
	return mariadbd, installDB, nil
}

func findBinary(env string, names ...string) string {
	if p := os.Getenv(env); p != "" {
		if _, err := os.Stat(p); err != nil {
			return ""
		}
		return p
	}
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
		for _, dir := range []string{"/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"} {
			p := filepath.Join(dir, name)
			if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
				return p
			}
		}
	}
	return ""
}

// Require skips the test (or fails it when the environment variable CI is
// "true") if the MariaDB server binaries are not installed.
func Require(tb testing.TB) {
	tb.Helper()
	if _, _, err := Binaries(); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("%v; CI=true, so integration tests must not be skipped", err)
		}
		tb.Skipf("skipping integration test: %v", err)
	}
}

// StartForTest is Start for a test: it skips the test (or fails it in CI)
// without MariaDB's binaries, fails it when the server does not start, and
// stops the server when the test ends.
func StartForTest(ctx context.Context, tb testing.TB, opts Options) *Server {
	tb.Helper()
	Require(tb)
	s, err := Start(ctx, opts)
	if err != nil {
		tb.Fatalf("starting MariaDB: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.Stop(); err != nil {
			tb.Errorf("stopping MariaDB: %v", err)
		}
	})
	return s
}

// Start initialises a fresh data directory and starts mariadbd on a free
// loopback port. ctx bounds only the startup; the server keeps running until
// Stop or Kill (or until the calling process exits).
func Start(ctx context.Context, opts Options) (*Server, error) {
	bin, installDB, err := Binaries()
	if err != nil {
		return nil, err
	}
	sweepStale()
	rootDir, err := makeTempDir()
	if err != nil {
		return nil, err
	}
	s := &Server{
		DataDir: filepath.Join(rootDir, "data"),
		Socket:  filepath.Join(rootDir, "mysqld.sock"),
		User:    testUser,
		logf:    opts.Logf,
		rootDir: rootDir,
		logPath: filepath.Join(rootDir, "mariadbd.err"),
		pidPath: filepath.Join(rootDir, "mariadbd.pid"),
		bin:     bin,
		extra:   append([]string(nil), opts.ExtraArgs...),
	}
	if s.logf == nil {
		s.logf = func(string, ...any) {}
	}
	ok := false
	defer func() {
		if !ok {
			s.Kill()
			os.RemoveAll(rootDir)
		}
	}()

	t0 := time.Now()
	if err := s.installDB(ctx, installDB); err != nil {
		return nil, err
	}
	tInstall := time.Since(t0)

	// The port is picked by binding :0 and closing, so another process may
	// grab it before mariadbd binds it; retry with a fresh port in that case.
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s.Port = port
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		err = s.launch(ctx, false)
		if err == nil {
			break
		}
		if !errors.Is(err, errPortInUse) || attempt >= startAttempts {
			return nil, err
		}
		s.logf("testdb: port %d was taken, retrying with another one", port)
	}

	pw := make([]byte, 16)
	if _, err := rand.Read(pw); err != nil {
		return nil, err
	}
	s.Password = hex.EncodeToString(pw)
	if err := s.createUser(ctx); err != nil {
		return nil, err
	}
	s.logf("testdb: mariadbd ready on %s (install %s, total %s), datadir %s",
		s.Addr, tInstall.Round(time.Millisecond), time.Since(t0).Round(time.Millisecond), s.DataDir)
	ok = true
	return s, nil
}

// makeTempDir creates the server's private directory. Unix socket paths are
// limited to ~107 bytes, so fall back to /tmp if $TMPDIR is very long.
func makeTempDir() (string, error) {
	dir, err := os.MkdirTemp("", tempPrefix)
	if err != nil {
		return "", err
	}
	if len(filepath.Join(dir, "mysqld.sock")) > 100 {
		os.RemoveAll(dir)
		dir, err = os.MkdirTemp("/tmp", tempPrefix)
		if err != nil {
			return "", err
		}
	}
	return dir, nil
}

// sweepStale removes temp dirs left behind by test binaries that were killed
// (their mariadbd died with them through Pdeathsig): older than an hour and
// without a live mariadbd.
func sweepStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), tempPrefix+"*"))
	if os.TempDir() != "/tmp" {
		more, _ := filepath.Glob(filepath.Join("/tmp", tempPrefix+"*"))
		dirs = append(dirs, more...)
	}
	for _, dir := range dirs {
		st, err := os.Stat(dir)
		if err != nil || !st.IsDir() || time.Since(st.ModTime()) < time.Hour {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(dir, "mariadbd.pid")); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 &&
				syscall.Kill(pid, 0) != syscall.ESRCH {
				continue // still running (or not ours to judge)
			}
		}
		os.RemoveAll(dir)
	}
}

// commonArgs are passed to both mariadb-install-db (which forwards them to
// its bootstrap mariadbd) and mariadbd, so the redo log is created with the
// size the server will use.
func (s *Server) commonArgs() []string {
	args := []string{
		"--innodb-buffer-pool-size=128M",
		"--innodb-log-file-size=48M",
		// A private tmpdir: servers sharing /tmp collide on internal
		// temporary table names (seen with parallel mariadb-install-db).
		"--tmpdir=" + filepath.Join(s.rootDir, "tmp"),
	}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root") // mariadbd refuses to run as root otherwise
	}
	return args
}

func (s *Server) installDB(ctx context.Context, installDB string) error {
	args := append([]string{
		"--no-defaults", // must be first
		"--datadir=" + s.DataDir,
		"--auth-root-authentication-method=normal", // root@localhost, no password
		"--skip-test-db",
		"--skip-name-resolve",
	}, s.commonArgs()...)
	if err := os.MkdirAll(filepath.Join(s.rootDir, "tmp"), 0o700); err != nil {
		return fmt.Errorf("testdb: %w", err)
	}
	cmd := exec.CommandContext(ctx, installDB, args...)
	cmd.Dir = s.rootDir
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("testdb: %s failed: %v\n%s", installDB, err, tail(out, 30))
	}
	return nil
}

func (s *Server) args(restart bool) []string {
	args := append([]string{
		"--no-defaults", // must be first; ignore /etc/mysql/*.cnf and ~/.my.cnf
		"--datadir=" + s.DataDir,
		"--socket=" + s.Socket,
		"--port=" + strconv.Itoa(s.Port),
		"--bind-address=127.0.0.1",
		"--skip-name-resolve",
		"--pid-file=" + s.pidPath,
		"--log-error=" + s.logPath,
		"--innodb-flush-log-at-trx-commit=2",
		"--skip-log-bin",
		"--max-connections=500",
		"--max-allowed-packet=64M",
		"--performance-schema=OFF",
		"--character-set-server=utf8mb4",
		"--collation-server=utf8mb4_general_ci",
	}, s.commonArgs()...)
	if restart {
		// After a SIGKILL the old port can linger briefly; let mariadbd retry.
		args = append(args, "--port-open-timeout="+strconv.Itoa(portOpenTimeout))
	}
	return append(args, s.extra...)
}

var errPortInUse = errors.New("port in use")

// launch starts mariadbd and waits until it accepts connections.
func (s *Server) launch(ctx context.Context, restart bool) error {
	logStart := fileSize(s.logPath)
	cmd := exec.Command(s.bin, s.args(restart)...)
	cmd.Dir = s.rootDir
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Pdeathsig: syscall.SIGKILL, // die with the test binary
		Setpgid:   true,            // don't get the terminal's Ctrl-C directly
	}
	// mariadbd writes to the error log; stray output goes to a file too so it
	// never blocks on a full pipe.
	out, err := os.OpenFile(filepath.Join(s.rootDir, "mariadbd.out"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		out.Close()
		return fmt.Errorf("testdb: starting %s: %w", s.bin, err)
	}
	out.Close()
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()

	if err := s.waitReady(ctx, done); err != nil {
		logTail := s.logTail(logStart, 40)
		if !isDone(done) {
			s.Kill()
		} else if bytes.Contains(logTail, []byte("Address already in use")) ||
			bytes.Contains(logTail, []byte("Bind on TCP/IP port")) {
			return fmt.Errorf("testdb: %w: %d", errPortInUse, s.Port)
		}
		return fmt.Errorf("testdb: mariadbd on %s not ready: %v\n--- %s (tail) ---\n%s",
			s.Addr, err, s.logPath, logTail)
	}
	return nil
}

func (s *Server) rootDB() (*sql.DB, error) {
	cfg := mysql.NewConfig()
	cfg.User = "root"
	cfg.Net = "unix"
	cfg.Addr = s.Socket
	cfg.Timeout = 2 * time.Second
	cfg.ReadTimeout = 30 * time.Second
	cfg.WriteTimeout = 30 * time.Second
	return OpenConfig(cfg, 0)
}

// OpenConfig opens a pool of go-sql-driver connections configured by cfg
// that keeps at most maxIdle of them idle.
func OpenConfig(cfg *mysql.Config, maxIdle int) (*sql.DB, error) {
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(conn)
	db.SetMaxIdleConns(maxIdle)
	return db, nil
}

func (s *Server) waitReady(ctx context.Context, done <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	db, err := s.rootDB()
	if err != nil {
		return err
	}
	defer db.Close()
	var lastErr error
	for {
		if isDone(done) {
			return errors.New("mariadbd exited during startup")
		}
		pctx, pcancel := context.WithTimeout(ctx, 3*time.Second)
		lastErr = db.PingContext(pctx)
		pcancel()
		if lastErr == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), lastErr)
		case <-done:
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (s *Server) createUser(ctx context.Context) error {
	db, err := s.rootDB()
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("testdb: connecting as root: %w", err)
	}
	defer conn.Close()
	for _, host := range []string{"127.0.0.1", "localhost"} {
		for _, q := range []string{
			fmt.Sprintf("CREATE USER '%s'@'%s' IDENTIFIED VIA mysql_native_password USING PASSWORD('%s')",
				s.User, host, s.Password),
			fmt.Sprintf("GRANT ALL PRIVILEGES ON *.* TO '%s'@'%s' WITH GRANT OPTION", s.User, host),
		} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("testdb: creating test user: %w", err)
			}
		}
	}
	return nil
}

// DSN returns a go-sql-driver/mysql DSN for User/Password over TCP, e.g.
// "sqlfork:pw@tcp(127.0.0.1:PORT)/db". Append "?param=value" as needed.
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("%s:%s@tcp(%s)/%s", s.User, s.Password, s.Addr, db)
}

// Stop shuts mariadbd down gracefully (SIGTERM, SIGKILL after a minute),
// waits for it to exit and removes its temporary directory. It is safe to
// call after Kill and more than once.
func (s *Server) Stop() error {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	var err error
	if cmd != nil && !isDone(done) {
		if e := cmd.Process.Signal(syscall.SIGTERM); e != nil && !isDone(done) {
			err = fmt.Errorf("testdb: signalling mariadbd: %w", e)
		}
		select {
		case <-done:
		case <-time.After(shutdownTimeout):
			s.logf("testdb: mariadbd did not shut down within %s, killing it\n%s",
				shutdownTimeout, s.logTail(0, 20))
			cmd.Process.Kill()
			<-done
			err = errors.New("testdb: mariadbd did not shut down in time")
		}
	}
	if s.rootDir != "" {
		if e := os.RemoveAll(s.rootDir); e != nil && err == nil {
			err = e
		}
	}
	return err
}

// Kill SIGKILLs mariadbd (simulating a crash) and waits for it to exit. The
// data directory is kept, so Restart can bring the server back.
func (s *Server) Kill() error {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil || isDone(done) {
		return nil
	}
	if err := cmd.Process.Kill(); err != nil && !isDone(done) {
		return fmt.Errorf("testdb: killing mariadbd: %w", err)
	}
	<-done
	return nil
}

// Restart starts mariadbd again on the same port and data directory (after
// Kill, or after a crash) and waits until it is ready. A still-running
// server is shut down gracefully first.
func (s *Server) Restart(ctx context.Context) error {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd != nil && !isDone(done) {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(shutdownTimeout):
			cmd.Process.Kill()
			<-done
		}
	}
	t0 := time.Now()
	if err := s.launch(ctx, true); err != nil {
		return err
	}
	s.logf("testdb: mariadbd restarted on %s in %s", s.Addr, time.Since(t0).Round(time.Millisecond))
	return nil
}

// ErrorLog returns the contents of mariadbd's error log, for diagnostics.
func (s *Server) ErrorLog() string {
	b, _ := os.ReadFile(s.logPath)
	return string(b)
}

func (s *Server) logTail(from int64, lines int) []byte {
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		return []byte(err.Error())
	}
	if from > 0 && from <= int64(len(b)) {
		b = b[from:]
	}
	return tail(b, lines)
}

func tail(b []byte, lines int) []byte {
	b = bytes.TrimRight(b, "\n")
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\n' {
			lines--
			if lines == 0 {
				return b[i+1:]
			}
		}
	}
	return b
}

func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

func isDone(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("testdb: picking a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
