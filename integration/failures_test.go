package integration

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"net"
	"os"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/sqlfork/sqlfork-proxy/integration/testdb"
	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestUpstreamUnreachable: a client gets error 1429 naming the upstream in
// place of the greeting (a server code: client libraries read their own
// 2000–2999 codes in an ERR packet as a malformed packet); the proxy
// stays up.
func TestUpstreamUnreachable(t *testing.T) {
	db, _ := env(t)
	down := freeAddr(t)
	p := startTestProxy(t, down, db, nil)
	for i := 0; i < 3; i++ {
		c := openDB(t, p.dsn(""))
		err := c.Ping()
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1429 || !strings.Contains(me.Message, down) {
			t.Fatalf("attempt %d: want error 1429 naming %s, got %v", i, down, err)
		}
	}
	if got := p.metric(t, "sqlfork_upstream_connect_failures_total", nil); got < 3 {
		t.Fatalf("upstream connect failures metric = %v", got)
	}
}

// TestUpstreamKilledMidQuery: kill -9 of mariadbd mid-query gives clients
// errors, the proxy keeps serving (with errors while MariaDB is down) and
// serves normally once it is back. The mariadb command-line client shows
// the same error codes through the proxy as on a direct connection, both
// for the statement in flight and for a login while MariaDB is down.
func TestUpstreamKilledMidQuery(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	db := testdb.StartForTest(ctx, t, testdb.Options{Logf: t.Logf})
	p := startTestProxy(t, db.Addr, db, nil)

	busy := openDB(t, p.dsn(""))
	idle := openDB(t, p.dsn(""))
	idle.SetMaxIdleConns(1)
	if err := idle.Ping(); err != nil {
		t.Fatal(err)
	}
	queryErr := make(chan error, 1)
	go func() {
		_, err := busy.Exec("SELECT SLEEP(60)")
		queryErr <- err
	}()
	cli := mariadbCLI(t)
	direct, proxied := cliAsync(cli, db.Addr, db.User, db.Password, "SELECT SLEEP(61)"),
		cliAsync(cli, p.addr, db.User, db.Password, "SELECT SLEEP(62)")
	testkit.Eventually(t, "queries to start", func() bool {
		var n int
		admin, err := sql.Open("mysql", db.DSN(""))
		if err != nil {
			return false
		}
		defer admin.Close()
		_ = admin.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT SLEEP(6_)%'").Scan(&n)
		return n == 3
	})
	if err := db.Kill(); err != nil {
		t.Fatal(err)
	}
	// As from a direct connection: the connection ends, and the driver
	// says so itself.
	if err := awaitErr(t, queryErr, 20*time.Second, "in-flight query did not fail after mariadbd was killed"); !errors.Is(err, mysql.ErrInvalidConn) {
		t.Fatalf("in-flight query: want the driver's invalid connection, got %v", err)
	}
	if d, px := <-direct, <-proxied; cliErrorCode(d) != "2013" || cliErrorCode(px) != cliErrorCode(d) {
		t.Fatalf("mariadb CLI, statement in flight when mariadbd died: direct %q, through the proxy %q (want ERROR 2013 both)", d, px)
	}
	// While MariaDB is down: new connections get a clear error, not a hang.
	var me *mysql.MySQLError
	if err := openDB(t, p.dsn("")).Ping(); !errors.As(err, &me) || me.Number != 1429 {
		t.Fatalf("connect while upstream down: want 1429, got %v", err)
	}
	if d, px := <-cliAsync(cli, db.Addr, db.User, db.Password, "SELECT 1"), <-cliAsync(cli, p.addr, db.User, db.Password, "SELECT 1"); cliErrorCode(d) == "" || cliErrorCode(px) != cliErrorCode(d) {
		t.Fatalf("mariadb CLI, login while mariadbd is down: direct %q, through the proxy %q (want the same ERROR code)", d, px)
	}
	if err := db.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	fresh := openDB(t, p.dsn(""))
	var one int
	if err := fresh.QueryRow("SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("after restart: %v", err)
	}
	// The pooled connection whose upstream died fails once, then the
	// driver's retry on a new connection succeeds.
	if err := idle.QueryRow("SELECT 1").Scan(&one); err != nil {
		t.Logf("stale pooled connection: %v", err)
		if err := idle.QueryRow("SELECT 1").Scan(&one); err != nil {
			t.Fatalf("pool did not recover: %v", err)
		}
	}
	if got := p.metric(t, "sqlfork_upstream_connections_lost_total", nil); got < 1 {
		t.Fatalf("upstream lost metric = %v", got)
	}
}

func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// TestClientGoneMidResult: a client that disconnects in the middle of a
// large result set leaves no upstream connection, goroutine or descriptor.
func TestClientGoneMidResult(t *testing.T) {
	db, _ := env(t)
	p := startTestProxy(t, db.Addr, db, nil)
	warm := dialRaw(t, p.addr, db.User, db.Password, "")
	warm.c.Close()
	testkit.Eventually(t, "the warm-up connection to end", func() bool {
		return p.metric(t, "sqlfork_client_connections", nil) == 0
	})
	goroutines, fds := runtime.NumGoroutine(), openFDs(t)

	for i := 0; i < 5; i++ {
		r := dialRaw(t, p.addr, db.User, db.Password, "app")
		id := r.scalar("SELECT CONNECTION_ID()")
		r.send(append([]byte{0x03}, "SELECT seq, REPEAT('x', 200) FROM seq_1_to_5000000"...)...)
		if first := r.read(); first[0] != 2 {
			t.Fatalf("expected a 2-column result, got %q", first)
		}
		for j := 0; j < 1000; j++ {
			r.read()
		}
		r.c.Close()
		waitUpstreamGone(t, db, id)
	}
	testkit.Eventually(t, "goroutines and descriptors to return to baseline", func() bool {
		return runtime.NumGoroutine() <= goroutines && openFDs(t) <= fds
	})
	if n := p.metric(t, "sqlfork_client_connections", nil); n != 0 {
		t.Fatalf("active connections gauge = %v", n)
	}
}

// rawConn logs in with go-mysql and returns the bare TCP connection.
func rawLogin(t *testing.T, p *proxyHandle) net.Conn {
	t.Helper()
	r := dialRaw(t, p.addr, p.db.User, p.db.Password, "")
	return r.c.Conn.Conn
}

// TestMalformedAndOversizedPackets: bad packets close only the offending
// connection; the proxy keeps serving everyone else.
func TestMalformedAndOversizedPackets(t *testing.T) {
	db, _ := env(t)
	p := startTestProxy(t, db.Addr, db, nil)
	bystander := openDB(t, p.dsn(""))
	bystander.SetMaxOpenConns(1)
	if err := bystander.Ping(); err != nil {
		t.Fatal(err)
	}
	readAll := func(c net.Conn) []byte {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		var out []byte
		buf := make([]byte, 4096)
		for {
			n, err := c.Read(buf)
			out = append(out, buf[:n]...)
			if err != nil {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					t.Fatal("proxy neither answered nor closed the connection")
				}
				return out
			}
		}
	}
	cases := []struct {
		name  string
		send  []byte
		close bool // half-close after sending
		want  string
	}{
		{"empty packet", []byte{0, 0, 0, 0}, false, "empty command packet"},
		{"truncated header", []byte{5, 0}, true, ""},
		{"truncated payload", []byte{50, 0, 0, 0, 0x03, 'S', 'E'}, true, ""},
		{"huge length then gone", []byte{0xFF, 0xFF, 0xFF, 0, 0x03, 'x'}, true, ""},
		{"garbage command", []byte{3, 0, 0, 0, 0xEE, 0xEE, 0xEE}, false, "not supported"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conn := rawLogin(t, p)
			if _, err := conn.Write(c.send); err != nil {
				t.Fatal(err)
			}
			if c.close {
				_ = conn.(*net.TCPConn).CloseWrite()
			}
			var got []byte
			if c.close || c.want == "empty command packet" {
				got = readAll(conn)
			} else {
				got = make([]byte, 256)
				_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
				n, err := conn.Read(got)
				if err != nil {
					t.Fatal(err)
				}
				got = got[:n]
			}
			if c.want != "" && !strings.Contains(string(got), c.want) {
				t.Fatalf("response %q lacks %q", got, c.want)
			}
		})
	}
	// A handshake response that is garbage.
	conn, err := net.Dial("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	greeting := make([]byte, 512)
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Read(greeting); err != nil {
		t.Fatal(err)
	}
	_, _ = conn.Write([]byte{3, 0, 0, 1, 0xde, 0xad, 0xbe})
	readAll(conn)
	conn.Close()

	// An oversized statement (above upstream's max_allowed_packet, 64 MiB in
	// tests) streams through the proxy and gets MariaDB's own error.
	r := dialRaw(t, p.addr, db.User, db.Password, "")
	big := append([]byte{0x03}, "SELECT '"...)
	big = append(big, strings.Repeat("a", 70<<20)...)
	big = append(big, '\'')
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		r.c.ResetSequence()
		_ = r.c.WritePacket(append(make([]byte, 4), big...)) // may fail once the peer closes
	}()
	// Read the answer off the socket, and close the socket rather than the
	// go-mysql Conn: the writer goroutine owns go-mysql's sequence counter
	// (Conn.Close resets it) until it returns.
	nc := r.c.Conn.Conn
	defer func() { nc.Close(); <-wrote }()
	_ = nc.SetReadDeadline(time.Now().Add(20 * time.Second))
	hdr := make([]byte, 4)
	if _, err := io.ReadFull(nc, hdr); err != nil {
		t.Fatalf("oversized statement: want upstream's error packet, got %v", err)
	}
	pkt := make([]byte, int(hdr[0])|int(hdr[1])<<8|int(hdr[2])<<16)
	if _, err := io.ReadFull(nc, pkt); err != nil {
		t.Fatal(err)
	}
	if hdr[3] != 5 || pkt[0] != 0xFF || !strings.Contains(string(pkt), "max_allowed_packet") {
		t.Fatalf("oversized statement: want upstream's max_allowed_packet error as packet 5, got seq %d %q", hdr[3], pkt)
	}

	var one int
	if err := bystander.QueryRow("SELECT 1").Scan(&one); err != nil {
		t.Fatalf("bystander broken by others' bad packets: %v", err)
	}
	if n := p.metric(t, "sqlfork_connection_panics_total", nil); n != 0 {
		t.Fatalf("panics: %v", n)
	}
}

// TestHandshakeAndIdleTimeouts: a client that never logs in, and one that
// sits idle past idle-timeout, are disconnected, and the idle one's
// upstream connection is closed too.
func TestHandshakeAndIdleTimeouts(t *testing.T) {
	db, _ := env(t)
	p := startTestProxy(t, db.Addr, db, func(c *proxy.Config) {
		c.HandshakeTimeout = 300 * time.Millisecond
		c.IdleTimeout = 500 * time.Millisecond
	})
	conn, err := net.Dial("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 1024)
	if _, err := conn.Read(buf); err != nil { // greeting
		t.Fatal(err)
	}
	if _, err := conn.Read(buf); err == nil || isTimeout(err) {
		t.Fatalf("silent client not disconnected by handshake timeout: %v", err)
	}

	r := dialRaw(t, p.addr, db.User, db.Password, "")
	id := r.scalar("SELECT CONNECTION_ID()")
	waitUpstreamGone(t, db, id)
	if err := r.c.Ping(); err == nil {
		t.Fatal("idle connection still usable after idle timeout")
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestMaxConnections: past max-connections a client gets error 1040.
func TestMaxConnections(t *testing.T) {
	db, _ := env(t)
	p := startTestProxy(t, db.Addr, db, func(c *proxy.Config) { c.MaxConnections = 2 })
	a := dialRaw(t, p.addr, db.User, db.Password, "")
	b := dialRaw(t, p.addr, db.User, db.Password, "")
	c := openDB(t, p.dsn(""))
	var me *mysql.MySQLError
	if err := c.Ping(); !errors.As(err, &me) || me.Number != 1040 {
		t.Fatalf("third connection: want 1040, got %v", err)
	}
	a.c.Close()
	testkit.Eventually(t, "a slot to free up", func() bool { return c.Ping() == nil })
	_ = b
}

// TestHandshakeSizeLimit: a client that streams data instead of logging in
// is cut off after 1 MiB rather than buffered without bound.
func TestHandshakeSizeLimit(t *testing.T) {
	db, _ := env(t)
	p := startTestProxy(t, db.Addr, db, nil)
	conn, err := net.Dial("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := conn.Read(make([]byte, 512)); err != nil { // greeting
		t.Fatal(err)
	}
	// A handshake response announced as 16 MiB with continuations, sent
	// in full: 64 MiB if the proxy kept reading.
	chunk := make([]byte, 1<<20)
	hdr := []byte{0xFF, 0xFF, 0xFF, 1}
	var sent int
	for sent < 64<<20 {
		if sent%(1<<24) == 0 {
			if _, err := conn.Write(hdr); err != nil {
				break
			}
		}
		if _, err := conn.Write(chunk); err != nil {
			break
		}
		sent += len(chunk)
	}
	if sent >= 64<<20 {
		t.Fatalf("proxy accepted %d bytes of handshake", sent)
	}
	if sent > 8<<20 {
		t.Fatalf("proxy read %d bytes before refusing the handshake", sent)
	}
}

// TestShutdownGraceEnforced: statements still running when the grace
// period ends are cut off, so shutdown is bounded.
func TestShutdownGraceEnforced(t *testing.T) {
	db, _ := env(t)
	p, err := startProxy(db.Addr, db, func(c *proxy.Config) { c.ShutdownGrace = 500 * time.Millisecond })
	if err != nil {
		t.Fatal(err)
	}
	r := dialRaw(t, p.addr, db.User, db.Password, "")
	id := r.scalar("SELECT CONNECTION_ID()")
	r.send(append([]byte{0x03}, "SELECT SLEEP(3600)"...)...) // the grace, not the statement, ends the shutdown
	testkit.Eventually(t, "statement to run", func() bool {
		admin, err := sql.Open("mysql", db.DSN(""))
		if err != nil {
			return false
		}
		defer admin.Close()
		var n int
		_ = admin.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = " + id + " AND INFO LIKE 'SELECT SLEEP%'").Scan(&n)
		return n == 1
	})
	start := time.Now()
	p.stop() // panics when the proxy has not stopped after 30 s
	t.Logf("shutdown took %s with a 500ms grace", time.Since(start).Round(time.Millisecond))
	_ = r.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := r.c.ReadPacket(); err == nil {
		t.Fatal("statement outlived the shutdown grace")
	}
	waitUpstreamGone(t, db, id)
}

// TestIdleTimeoutSparesRunningCommand: the idle timeout does not cut a
// command that reads from the client after running longer than it.
func TestIdleTimeoutSparesRunningCommand(t *testing.T) {
	db, _ := env(t)
	p := startTestProxy(t, db.Addr, db, func(c *proxy.Config) { c.IdleTimeout = time.Second })
	mysql.RegisterReaderHandler("late", func() io.Reader { return strings.NewReader("a\nb\nc\n") })
	defer mysql.DeregisterReaderHandler("late")
	sdb := openDB(t, p.dsn("app", "multiStatements=true"))
	sdb.SetMaxOpenConns(1)
	mustExecDB(t, sdb, "CREATE TEMPORARY TABLE late (v VARCHAR(5))")
	if _, err := sdb.Exec("DO SLEEP(1.5); LOAD DATA LOCAL INFILE 'Reader::late' INTO TABLE late"); err != nil {
		t.Fatalf("LOAD DATA after a statement longer than the idle timeout: %v", err)
	}
	var n int
	if err := sdb.QueryRow("SELECT COUNT(*) FROM late").Scan(&n); err != nil || n != 3 {
		t.Fatalf("loaded %d rows, err %v", n, err)
	}
}

// TestWriteTimeoutDropsStalledReader: a client that stops reading a large
// result is disconnected after write-timeout, releasing its upstream.
func TestWriteTimeoutDropsStalledReader(t *testing.T) {
	db, _ := env(t)
	p := startTestProxy(t, db.Addr, db, func(c *proxy.Config) { c.WriteTimeout = 300 * time.Millisecond })
	r := dialRaw(t, p.addr, db.User, db.Password, "app")
	id := r.scalar("SELECT CONNECTION_ID()")
	if tc, ok := r.c.Conn.Conn.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4096)
	}
	r.send(append([]byte{0x03}, "SELECT seq, REPEAT('x', 1000) FROM seq_1_to_1000000"...)...)
	// Read nothing: socket buffers fill, the proxy's write times out.
	waitUpstreamGone(t, db, id)
}

// TestProbeFailureDoesNotLeakUpstreamAccount: when the proxy cannot log in
// upstream itself, a client that has not logged in learns that, not the
// upstream account's name or host.
func TestProbeFailureDoesNotLeakUpstreamAccount(t *testing.T) {
	db, _ := env(t)
	p := startTestProxy(t, db.Addr, db, func(c *proxy.Config) { c.UpstreamPassword = "wrong" })
	err := openDB(t, p.dsn("")).Ping()
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1429 {
		t.Fatalf("want 1429, got %v", err)
	}
	if strings.Contains(me.Message, "'"+db.User+"'") || !strings.Contains(me.Message, "1045") {
		t.Fatalf("message %q should name the upstream error code but not the account", me.Message)
	}
}

// cliAsync runs the mariadb command-line client once with -e stmt and sends
// its standard error (or why it could not run) when it ends.
func cliAsync(bin, addr, user, password, stmt string) <-chan string {
	out := make(chan string, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := cliCmd(ctx, bin, addr, user, password, "-e", stmt)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil && stderr.Len() == 0 {
			out <- err.Error()
			return
		}
		out <- stderr.String()
	}()
	return out
}

// cliErrorCode is N of the first "ERROR N" the command-line client printed,
// "" if none.
func cliErrorCode(stderr string) string {
	m := regexp.MustCompile(`ERROR (\d+)`).FindStringSubmatch(stderr)
	if m == nil {
		return ""
	}
	return m[1]
}

// TestUpstreamTooManyConnections (issue 13): when the server refuses a
// connection with 1040, the client gets that 1040 through the proxy as it
// does directly: after authentication, where the server keeps its last slot
// for accounts with CONNECTION ADMIN (with SQLSTATE 08004), and in place of
// the greeting once that slot is taken too — word for word and packet for
// packet: the server sends that one before it knows the client's
// capabilities, so without a SQLSTATE (drivers retry on it; go-sql-driver's
// TestConcurrent compares its text, "Error 1040: Too many connections").
func TestUpstreamTooManyConnections(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	db := testdb.StartForTest(ctx, t, testdb.Options{Logf: t.Logf, ExtraArgs: []string{"--max-connections=3"}})
	p := startTestProxy(t, db.Addr, db, nil)
	if err := openDB(t, p.dsn("")).Ping(); err != nil { // the proxy's probe login, done before the server is full
		t.Fatal(err)
	}
	// An account without CONNECTION ADMIN, which the limit applies to.
	mustExecDB(t, openDB(t, db.DSN("")), "CREATE USER 'few'@'%' IDENTIFIED BY 'few-pw'")
	fewDSN := func(addr string) string { return "few:few-pw@tcp(" + addr + ")/" }
	var held []*sql.Conn
	defer func() {
		for _, c := range held {
			_ = c.Close()
		}
	}()
	admin, err := openDB(t, db.DSN("")).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	held = append(held, admin)
	// settle waits until the server has counted every closed connection
	// out: it frees a slot a moment after the client's close.
	settle := func() {
		prev := -1
		for range 100 {
			var name string
			var n int
			if err := admin.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Threads_connected'").Scan(&name, &n); err != nil {
				t.Fatal(err)
			}
			if n == prev {
				return
			}
			prev = n
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatal("the count of connections never settled")
	}
	var direct *mysql.MySQLError
	for range 10 {
		c, err := openDB(t, fewDSN(db.Addr)).Conn(ctx)
		if errors.As(err, &direct) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	if direct == nil || direct.Number != 1040 || direct.SQLState != [5]byte{'0', '8', '0', '0', '4'} {
		t.Fatalf("directly: want 1040 (08004) after authentication once the server is full, got %v after %d connections", direct, len(held))
	}
	settle()
	err = openDB(t, fewDSN(p.addr)).Ping()
	var proxied *mysql.MySQLError
	if !errors.As(err, &proxied) || *proxied != *direct {
		t.Fatalf("after authentication, through the proxy: %v; directly: %v", err, direct)
	}
	// The slot kept for CONNECTION ADMIN taken, the server refuses in place
	// of its greeting.
	settle()
	for range 10 {
		c, err := openDB(t, db.DSN("")).Conn(ctx)
		if err != nil {
			break
		}
		held = append(held, c)
	}
	settle()
	err = openDB(t, fewDSN(db.Addr)).Ping()
	if !errors.As(err, &direct) || direct.Number != 1040 || err.Error() != "Error 1040: Too many connections" {
		t.Fatalf("directly: want 1040 without SQLSTATE in place of the greeting, got %v", err)
	}
	err = openDB(t, fewDSN(p.addr)).Ping()
	if !errors.As(err, &proxied) || *proxied != *direct || err.Error() != "Error 1040: Too many connections" {
		t.Fatalf("in place of the greeting, through the proxy: %v; directly: %v", err, direct)
	}
}
