package proxy

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/server"

	"github.com/sqlfork/sqlfork-proxy/wire"
)

// testTLSFiles writes a self-signed certificate and key for the proxy's
// client TLS.
func testTLSFiles(t testing.TB) (certFile, keyFile string) {
	t.Helper()
	term, err := newTLSTerm(nil) // its in-memory certificate serves as a test certificate
	if err != nil {
		t.Fatal(err)
	}
	cert := term.innerServer.Certificates[0]
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	keyDER, err := x509MarshalKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, pemBlock("CERTIFICATE", cert.Certificate[0]), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pemBlock("PRIVATE KEY", keyDER), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// clientTLSHello reads the greeting, sends an SSLRequest (packet 1) and
// completes the client's TLS handshake.
func clientTLSHello(t testing.TB, nc net.Conn) (*tls.Conn, []byte) {
	t.Helper()
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	greet, err := readWhole(nc, 1<<16)
	if err != nil {
		t.Fatalf("greeting: %v", err)
	}
	g, err := parseGreeting(greet[wire.HeaderLen:])
	if err != nil {
		t.Fatal(err)
	}
	if g.caps&wire.CapSSL == 0 {
		t.Fatal("greeting does not offer SSL")
	}
	if _, err := nc.Write(testPacket(1, handshakeHead(testClientCaps|wire.CapSSL, 45))); err != nil {
		t.Fatal(err)
	}
	tc := tls.Client(nc, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // test
	if err := tc.Handshake(); err != nil {
		t.Fatalf("client TLS handshake: %v", err)
	}
	return tc, g.salt
}

// TestTLSMalformedHandshake: under TLS, a malformed HandshakeResponse gets
// "Bad handshake" as packet 3, encrypted, instead of a panic in go-mysql.
func TestTLSMalformedHandshake(t *testing.T) {
	s, m := newOfflineServerWith(t, func(c *Config) { c.TLSCert, c.TLSKey = testTLSFiles(t) })
	valid := validHandshakeResponse()
	huge := handshakeResponse(testClientCaps, strings.Repeat("u", 100<<10), nil, "", AuthNativePassword, nil)
	huge = append(huge[:len(handshakeHead(0, 0))+100<<10+1], 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F)
	cases := []struct {
		name string
		p    []byte
	}{
		{"short", valid[:20]},
		{"user not terminated", append(handshakeHead(testClientCaps, 45), "root"...)},
		{"100 KB user, 0xFE auth length", huge},
		{"0xFE auth length", append(append(handshakeHead(testClientCaps, 45), 'u', 0), 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F)},
		{"lenenc auth NULL", append(append(handshakeHead(testClientCaps, 45), 'u', 0), 0xFB)},
		{"truncated attribute length", append(handshakeResponse(testClientCaps, "u", nil, "d", AuthNativePassword, nil), 0xFC)},
		{"attribute string past the end", append(handshakeResponse(testClientCaps, "u", nil, "d", AuthNativePassword, nil), 3, 9, 'a', 'b')},
		{"plugin not terminated", handshakeResponse(wire.CapProtocol41|wire.CapSecureConnection|wire.CapPluginAuth, "u", nil, "", "x", nil)[:sslRequestLen+4]},
		{"second SSLRequest", handshakeHead(testClientCaps|wire.CapSSL, 45)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srvEnd, cliEnd := tcpPair(t)
			done := make(chan struct{})
			s.wg.Add(1)
			go func() { defer close(done); s.handle(context.Background(), srvEnd) }()
			tc, _ := clientTLSHello(t, cliEnd)
			if _, err := tc.Write(testPacket(2, c.p)); err != nil {
				t.Fatal(err)
			}
			pkt, err := readWhole(tc, 1<<16)
			if err != nil {
				t.Fatalf("reading the answer: %v (panics %v)", err, metricValue(t, m.ConnectionPanics))
			}
			if e := wire.ParseErr(pkt[wire.HeaderLen:]); e.Code != wire.ErHandshake || e.State != "08S01" || pkt[3] != 3 {
				t.Fatalf("answer seq %d %q, want ERR 1043 (08S01) as packet 3", pkt[3], pkt[wire.HeaderLen:])
			}
			waitDone(t, done, "the handler to return")
			_ = tc.Close()
		})
	}
	if got := metricValue(t, m.ConnectionPanics); got != 0 {
		t.Fatalf("connection panics = %v, want 0", got)
	}
	if got := metricValue(t, m.ConnectionsActive); got != 0 {
		t.Fatalf("active connections = %v, want 0", got)
	}
}

// tcpPair returns both ends of a loopback TCP connection.
func tcpPair(t testing.TB) (srv, cli net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cli, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	srv, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Close(); _ = srv.Close() })
	return srv, cli
}

// tlsLogin runs the proxy's login path (greetingConn and the TLS tunnel in
// front of go-mysql, as Server.handshake does) on srvEnd and returns the
// connection the session would read from.
func tlsLogin(term *tlsTerm, goSrv *server.Server, auth server.AuthenticationHandler, srvEnd net.Conn) (net.Conn, error) {
	deadline := time.Now().Add(10 * time.Second)
	_ = srvEnd.SetDeadline(deadline)
	gc := &greetingConn{Conn: srvEnd, caps: clientCaps(mariaDBCaps, true), term: term, deadline: deadline}
	defer gc.abortTLS()
	_, err := goSrv.NewCustomizedConn(gc, auth, server.EmptyHandler{})
	outer, err := gc.endTLS(err)
	if err != nil {
		return nil, err
	}
	if outer == nil {
		return nil, errors.New("login without the tunnel")
	}
	_ = srvEnd.SetDeadline(time.Time{})
	gc.handshakeDone()
	return outer, nil
}

// TestTLSLoginThroughTunnel: go-mysql's client logs in over TLS with
// mysql_native_password and caching_sha2_password (auth switch, full then
// fast authentication); the command it sends next is read from the
// session's connection.
func TestTLSLoginThroughTunnel(t *testing.T) {
	term, err := newTLSTerm(nil)
	if err != nil {
		t.Fatal(err)
	}
	term.outer = term.innerServer // any certificate does for the client's side
	goSrv := server.NewServer("5.5.5-10.11.6-MariaDB", 45, mysql.AUTH_NATIVE_PASSWORD, nil, term.innerServer)
	auth := server.NewInMemoryAuthenticationHandler()
	if err := auth.AddUser("native", "n-secret", mysql.AUTH_NATIVE_PASSWORD); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"sha2", "sha2new"} {
		if err := auth.AddUser(u, "s-secret", mysql.AUTH_CACHING_SHA2_PASSWORD); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	before := runtime.NumGoroutine()
	for _, tc := range []struct {
		user, password string
		wantErr        bool
	}{
		{"native", "n-secret", false},
		{"native", "wrong", true},
		{"sha2new", "wrong", true},  // full authentication refused
		{"sha2", "s-secret", false}, // full authentication, password in clear over TLS
		{"sha2", "s-secret", false}, // fast authentication
		{"sha2", "wrong", true},
	} {
		type result struct {
			outer net.Conn
			err   error
		}
		res := make(chan result, 1)
		go func() {
			nc, err := ln.Accept()
			if err != nil {
				res <- result{err: err}
				return
			}
			outer, err := tlsLogin(term, goSrv, auth, nc)
			if err != nil {
				nc.Close()
			}
			res <- result{outer, err}
		}()
		cc, err := client.Connect(ln.Addr().String(), tc.user, tc.password, "", func(c *client.Conn) error {
			c.SetTLSConfig(&tls.Config{InsecureSkipVerify: true}) //nolint:gosec // test
			return nil
		})
		r := <-res
		if tc.wantErr {
			// The client gets go-mysql's ERR, delivered by the tunnel.
			var me *mysql.MyError
			if !errors.As(err, &me) || me.Code != mysql.ER_ACCESS_DENIED_ERROR || r.err == nil {
				t.Fatalf("%s with a wrong password: client %v, server %v; want 1045", tc.user, err, r.err)
			}
			continue
		}
		if err != nil || r.err != nil {
			t.Fatalf("%s login: client %v, server %v", tc.user, err, r.err)
		}
		if _, ok := cc.Conn.Conn.(*tls.Conn); !ok {
			t.Fatalf("client connection is %T, not TLS", cc.Conn.Conn)
		}
		// The session reads the client's next command from the proxy's TLS.
		pinged := make(chan error, 1)
		go func() { pinged <- cc.Ping() }()
		_ = r.outer.SetDeadline(time.Now().Add(10 * time.Second))
		pkt, err := readWhole(r.outer, 1<<16)
		if err != nil || !bytes.Equal(pkt, []byte{1, 0, 0, 0, wire.ComPing}) {
			t.Fatalf("%s: session read %q, %v; want COM_PING", tc.user, pkt, err)
		}
		if _, err := r.outer.Write(testPacket(1, []byte{0, 0, 0, 2, 0, 0, 0})); err != nil {
			t.Fatal(err)
		}
		if err := <-pinged; err != nil {
			t.Fatalf("%s: ping through the session: %v", tc.user, err)
		}
		cc.Close()
		r.outer.Close()
	}
	// No tunnel goroutine outlives its login.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after the logins, %d before", n, before)
	}
}

// nativeScramble is mysql_native_password's answer to salt.
func nativeScramble(salt []byte, password string) []byte {
	h1 := sha1.Sum([]byte(password))
	h2 := sha1.Sum(h1[:])
	h := sha1.New()
	h.Write(salt[:20])
	h.Write(h2[:])
	out := h.Sum(nil)
	for i := range out {
		out[i] ^= h1[i]
	}
	return out
}

// TestTLSPipelinedCommand: a client that sends its handshake response and
// its first command in one TLS record loses neither: go-mysql gets the
// response, the session the command.
func TestTLSPipelinedCommand(t *testing.T) {
	term, err := newTLSTerm(nil)
	if err != nil {
		t.Fatal(err)
	}
	term.outer = term.innerServer
	goSrv := server.NewServer("5.5.5-10.11.6-MariaDB", 45, mysql.AUTH_NATIVE_PASSWORD, nil, term.innerServer)
	auth := server.NewInMemoryAuthenticationHandler()
	if err := auth.AddUser("root", "secret", mysql.AUTH_NATIVE_PASSWORD); err != nil {
		t.Fatal(err)
	}
	srvEnd, cliEnd := tcpPair(t)
	type result struct {
		outer net.Conn
		err   error
	}
	res := make(chan result, 1)
	go func() {
		outer, err := tlsLogin(term, goSrv, auth, srvEnd)
		res <- result{outer, err}
	}()
	tc, salt := clientTLSHello(t, cliEnd)
	caps := uint32(wire.CapProtocol41 | wire.CapSecureConnection | wire.CapPluginAuth | wire.CapSSL)
	resp := handshakeResponse(caps, "root", nativeScramble(salt, "secret"), "", AuthNativePassword, nil)
	binary.LittleEndian.PutUint32(resp, caps)
	query := append([]byte{wire.ComQuery}, "SELECT 1"...)
	if _, err := tc.Write(append(testPacket(2, resp), testPacket(0, query)...)); err != nil {
		t.Fatal(err)
	}
	pkt, err := readWhole(tc, 1<<16)
	if err != nil || pkt[3] != 3 || pkt[wire.HeaderLen] != wire.OKHeader {
		t.Fatalf("login answer %q, %v; want OK as packet 3", pkt, err)
	}
	r := <-res
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.outer.Close()
	_ = r.outer.SetDeadline(time.Now().Add(10 * time.Second))
	got, err := readWhole(r.outer, 1<<16)
	if err != nil || !bytes.Equal(got, testPacket(0, query)) {
		t.Fatalf("session read %q, %v; want the pipelined COM_QUERY", got, err)
	}
}

// BenchmarkTLSLogin measures a login over TLS through the tunnel (the
// client's TLS handshake, the in-memory one, the auth exchange).
func BenchmarkTLSLogin(b *testing.B) {
	term, err := newTLSTerm(nil)
	if err != nil {
		b.Fatal(err)
	}
	term.outer = term.innerServer
	goSrv := server.NewServer("5.5.5-10.11.6-MariaDB", 45, mysql.AUTH_NATIVE_PASSWORD, nil, term.innerServer)
	benchLogin(b, goSrv, term)
}

// BenchmarkTLSLoginDirect is the same login with go-mysql terminating the
// client's TLS itself (no tunnel), for comparison.
func BenchmarkTLSLoginDirect(b *testing.B) {
	term, err := newTLSTerm(nil)
	if err != nil {
		b.Fatal(err)
	}
	goSrv := server.NewServer("5.5.5-10.11.6-MariaDB", 45, mysql.AUTH_NATIVE_PASSWORD, nil, term.innerServer)
	benchLogin(b, goSrv, nil)
}

func benchLogin(b *testing.B, goSrv *server.Server, term *tlsTerm) {
	auth := server.NewInMemoryAuthenticationHandler()
	if err := auth.AddUser("root", "secret", mysql.AUTH_NATIVE_PASSWORD); err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	cliTLS := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // benchmark
	b.ResetTimer()
	for b.Loop() {
		done := make(chan error, 1)
		go func() {
			nc, err := ln.Accept()
			if err != nil {
				done <- err
				return
			}
			defer nc.Close()
			gc := &greetingConn{Conn: nc, caps: clientCaps(mariaDBCaps, true), term: term, deadline: time.Now().Add(10 * time.Second)}
			defer gc.abortTLS()
			_, err = goSrv.NewCustomizedConn(gc, auth, server.EmptyHandler{})
			_, err = gc.endTLS(err)
			done <- err
		}()
		cc, err := client.Connect(ln.Addr().String(), "root", "secret", "", func(c *client.Conn) error {
			c.SetTLSConfig(cliTLS)
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		cc.Close()
	}
}

func x509MarshalKey(k any) ([]byte, error) { return x509.MarshalPKCS8PrivateKey(k) }

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// FuzzTLSHandshakeResponse is FuzzHandshakeResponse under client TLS: the
// response goes through the proxy's TLS tunnel to go-mysql. Nothing panics,
// and a response the check refuses gets "Bad handshake" as packet 3.
func FuzzTLSHandshakeResponse(f *testing.F) {
	f.Add(validHandshakeResponse())
	f.Add(handshakeHead(testClientCaps|wire.CapSSL, 45))
	f.Add(append(append(handshakeHead(testClientCaps, 45), 'u', 0), 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F))
	f.Add(append(handshakeResponse(testClientCaps, "u", nil, "d", AuthNativePassword, nil), 0xFC))
	f.Add(handshakeResponse(wire.CapProtocol41|wire.CapSecureConnection, "root", bytes.Repeat([]byte{1}, 20), "", "", nil))
	term, err := newTLSTerm(nil)
	if err != nil {
		f.Fatal(err)
	}
	term.outer = term.innerServer
	goSrv := server.NewServer("5.5.5-10.11.6-MariaDB", 45, mysql.AUTH_NATIVE_PASSWORD, nil, term.innerServer)
	auth := server.NewInMemoryAuthenticationHandler()
	if err := auth.AddUser("root", "secret"); err != nil {
		f.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	defer ln.Close()
	f.Fuzz(func(t *testing.T, p []byte) {
		cli, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer cli.Close()
		nc, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer nc.Close()
			_, _ = tlsLogin(term, goSrv, auth, nc)
		}()
		tc, _ := clientTLSHello(t, cli)
		if _, err := tc.Write(testPacket(2, p)); err != nil {
			t.Fatal(err)
		}
		reply, rerr := readWhole(tc, 1<<16)
		_ = cli.Close()
		waitDone(t, done, "the login to end")
		if checkTunneled(p) != nil {
			if rerr != nil {
				t.Fatalf("refused response: no answer (%v)", rerr)
			}
			if e := wire.ParseErr(reply[wire.HeaderLen:]); e.Code != wire.ErHandshake || reply[3] != 3 {
				t.Fatalf("refused response answered with seq %d %q, want ERR 1043 as packet 3", reply[3], reply)
			}
		}
	})
}

// TestTLSSilentClientTimesOut: a client that completes TLS and then sends
// nothing is cut off at the handshake timeout, tunnel included.
func TestTLSSilentClientTimesOut(t *testing.T) {
	s, m := newOfflineServerWith(t, func(c *Config) {
		c.TLSCert, c.TLSKey = testTLSFiles(t)
		c.HandshakeTimeout = 300 * time.Millisecond
	})
	srvEnd, cliEnd := tcpPair(t)
	done := make(chan struct{})
	s.wg.Add(1)
	start := time.Now()
	go func() { defer close(done); s.handle(context.Background(), srvEnd) }()
	tc, _ := clientTLSHello(t, cliEnd)
	waitDone(t, done, "the handler to give up on a silent client")
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("silent client held for %v", d)
	}
	if _, err := tc.Read(make([]byte, 1)); err == nil {
		t.Fatal("silent client's connection still open")
	}
	if got := metricValue(t, m.ConnectionPanics); got != 0 {
		t.Fatalf("connection panics = %v", got)
	}
}
