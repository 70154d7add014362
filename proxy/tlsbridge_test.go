package proxy

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/tls"
	"encoding/binary"
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

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// testTLSFiles writes a certificate and key for the proxy's client TLS
// (for the name sqlfork-proxy.test, from a throwaway CA).
func testTLSFiles(t testing.TB) (certFile, keyFile string) {
	t.Helper()
	ca, err := testkit.NewPKI("sqlfork-proxy.test", false)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ca.Issue("sqlfork-proxy.test", nil, []string{"sqlfork-proxy.test"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, c.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, c.KeyPEM, 0o600); err != nil {
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
	g, err := wire.ParseGreeting(greet[wire.HeaderLen:])
	if err != nil {
		t.Fatal(err)
	}
	if g.Caps&wire.CapSSL == 0 {
		t.Fatal("greeting does not offer SSL")
	}
	if _, err := nc.Write(testkit.Packet(1, handshakeHead(testClientCaps|wire.CapSSL, 45))); err != nil {
		t.Fatal(err)
	}
	tc := tls.Client(nc, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // test
	if err := tc.Handshake(); err != nil {
		t.Fatalf("client TLS handshake: %v", err)
	}
	return tc, g.Salt
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
		{"plugin not terminated", handshakeResponse(wire.CapProtocol41|wire.CapSecureConnection|wire.CapPluginAuth, "u", nil, "", "x", nil)[:wire.SSLRequestLen+4]},
		{"second SSLRequest", handshakeHead(testClientCaps|wire.CapSSL, 45)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srvEnd, cliEnd := tcpPair(t)
			done := make(chan struct{})
			s.wg.Add(1)
			go func() { defer close(done); s.handle(context.Background(), srvEnd) }()
			tc, _ := clientTLSHello(t, cliEnd)
			if _, err := tc.Write(testkit.Packet(2, c.p)); err != nil {
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

// tlsHarness is a harness whose proxy has client TLS and configured
// users native (mysql_native_password) and sha2, sha2new
// (caching_sha2_password).
func tlsHarness(t testing.TB) *harness {
	cert, key := testTLSFiles(t)
	return newHarness(t, func(c *Config) {
		c.TLSCert, c.TLSKey, c.Mode = cert, key, "passthrough"
		c.Users = []User{{Name: "native", Password: "n-secret"},
			{Name: "sha2", Password: "s-secret", AuthPlugin: AuthCachingSha2Password},
			{Name: "sha2new", Password: "s-secret", AuthPlugin: AuthCachingSha2Password}}
	})
}

// TestTLSLogin: go-mysql's client logs in over TLS with
// mysql_native_password and caching_sha2_password (auth switch, then the
// proxy's fast authentication), as configured users and as an upstream
// account the login is relayed for; the command it sends next reaches the
// session.
func TestTLSLogin(t *testing.T) {
	h := tlsHarness(t)
	h.up.addAccount("relayed", "r-secret", "")
	// The server's own goroutines (accept loop, liveness watcher) are up
	// once it has served a login.
	if cc, err := client.Connect(h.srv.Addr().String(), "native", "n-secret", ""); err == nil {
		cc.Close()
	}
	testkit.Eventually(t, "the first login's connection to end", func() bool {
		h.srv.connsMu.Lock()
		defer h.srv.connsMu.Unlock()
		return len(h.srv.conns) == 0
	})
	before := runtime.NumGoroutine()
	for _, tc := range []struct {
		user, password string
		wantErr        bool
	}{
		{"native", "n-secret", false},
		{"native", "wrong", true},
		{"sha2new", "wrong", true},
		{"sha2", "s-secret", false},
		{"sha2", "s-secret", false},
		{"sha2", "wrong", true},
		{"relayed", "r-secret", false},
		{"relayed", "wrong", true},
	} {
		cc, err := client.Connect(h.srv.Addr().String(), tc.user, tc.password, "", func(c *client.Conn) error {
			c.SetTLSConfig(&tls.Config{InsecureSkipVerify: true}) //nolint:gosec // test
			return nil
		})
		if tc.wantErr {
			var me *mysql.MyError
			if !errors.As(err, &me) || me.Code != mysql.ER_ACCESS_DENIED_ERROR {
				t.Fatalf("%s with a wrong password: %v; want 1045", tc.user, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s login: %v", tc.user, err)
		}
		if _, ok := cc.Conn.Conn.(*tls.Conn); !ok {
			t.Fatalf("client connection is %T, not TLS", cc.Conn.Conn)
		}
		if err := cc.Ping(); err != nil {
			t.Fatalf("%s: ping through the session: %v", tc.user, err)
		}
		cc.Close()
	}
	// No goroutine outlives its login's connection.
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
// its first command in one TLS record loses neither: the login gets the
// response, the session the command.
func TestTLSPipelinedCommand(t *testing.T) {
	h := tlsHarness(t)
	nc, err := net.Dial("tcp", h.srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	tc, salt := clientTLSHello(t, nc)
	caps := uint32(wire.CapProtocol41 | wire.CapSecureConnection | wire.CapPluginAuth | wire.CapSSL)
	resp := handshakeResponse(caps, "native", nativeScramble(salt, "n-secret"), "", AuthNativePassword, nil)
	binary.LittleEndian.PutUint32(resp, caps)
	query := append([]byte{wire.ComQuery}, "SELECT 1"...)
	if _, err := tc.Write(append(testkit.Packet(2, resp), testkit.Packet(0, query)...)); err != nil {
		t.Fatal(err)
	}
	pkt, err := readWhole(tc, 1<<16)
	if err != nil || pkt[3] != 3 || pkt[wire.HeaderLen] != wire.OKHeader {
		t.Fatalf("login answer %q, %v; want OK as packet 3", pkt, err)
	}
	got, err := readWhole(tc, 1<<16)
	if err != nil || got[3] != 1 || got[wire.HeaderLen] != wire.OKHeader {
		t.Fatalf("answer to the pipelined COM_QUERY %q, %v; want the upstream's OK", got, err)
	}
	if q := h.up.queries("SELECT 1"); len(q) != 1 {
		t.Fatalf("upstream got %q, want the pipelined COM_QUERY", h.up.commands())
	}
}

// BenchmarkTLSLogin measures a login over TLS (the client's TLS handshake,
// the auth exchange, the upstream login).
func BenchmarkTLSLogin(b *testing.B) {
	h := tlsHarness(b)
	cliTLS := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // benchmark
	b.ResetTimer()
	for b.Loop() {
		cc, err := client.Connect(h.srv.Addr().String(), "native", "n-secret", "", func(c *client.Conn) error {
			c.SetTLSConfig(cliTLS)
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		cc.Close()
	}
}

// FuzzTLSHandshakeResponse is FuzzHandshakeResponse under client TLS: the
// response is read inside the proxy's TLS. Nothing panics, and a response
// the check refuses gets "Bad handshake" as packet 3.
func FuzzTLSHandshakeResponse(f *testing.F) {
	f.Add(validHandshakeResponse())
	f.Add(handshakeHead(testClientCaps|wire.CapSSL, 45))
	f.Add(append(append(handshakeHead(testClientCaps, 45), 'u', 0), 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F))
	f.Add(append(handshakeResponse(testClientCaps, "u", nil, "d", AuthNativePassword, nil), 0xFC))
	f.Add(handshakeResponse(wire.CapProtocol41|wire.CapSecureConnection, "root", bytes.Repeat([]byte{1}, 20), "", "", nil))
	f.Add(handshakeResponse(testClientCaps, "native", bytes.Repeat([]byte{1}, 20), "", AuthCachingSha2Password, nil))
	h := tlsHarness(f)
	f.Fuzz(func(t *testing.T, p []byte) {
		defer h.up.forget()
		cli, err := net.Dial("tcp", h.srv.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer cli.Close()
		tc, _ := clientTLSHello(t, cli)
		if _, err := tc.Write(testkit.Packet(2, p)); err != nil {
			t.Fatal(err)
		}
		reply, rerr := readWhole(tc, 1<<16)
		if checkTunneled(p) != nil {
			if rerr != nil {
				t.Fatalf("refused response: no answer (%v)", rerr)
			}
			if e := wire.ParseErr(reply[wire.HeaderLen:]); e.Code != wire.ErHandshake || reply[3] != 3 {
				t.Fatalf("refused response answered with seq %d %q, want ERR 1043 as packet 3", reply[3], reply)
			}
		}
		if n := metricValue(t, h.m.ConnectionPanics); n != 0 {
			t.Fatalf("%v connection panics", n)
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
	go func() { defer close(done); s.handle(context.Background(), srvEnd) }()
	tc, _ := clientTLSHello(t, cliEnd)
	waitDone(t, done, "the handler to give up on a silent client") // it waits for ever without the handshake timeout
	if _, err := tc.Read(make([]byte, 1)); err == nil {
		t.Fatal("silent client's connection still open")
	}
	if got := metricValue(t, m.ConnectionPanics); got != 0 {
		t.Fatalf("connection panics = %v", got)
	}
}
