package integration

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/sqlfork/sqlfork-proxy/integration/testdb"
	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// testPKI is a throwaway CA and a server certificate it issued for
// 127.0.0.1 / localhost, written as PEM files.
type testPKI struct {
	caFile, certFile, keyFile string
	pool                      *x509.CertPool // holds the CA
	leaf                      *x509.Certificate

	cn string
	ca *testkit.PKI
}

// newTestPKI writes ca.pem, server.pem and server-key.pem into a new temp
// dir; the server certificate is for 127.0.0.1 and localhost.
func newTestPKI(t testing.TB, cn string) *testPKI {
	t.Helper()
	ca, err := testkit.NewPKI(cn, false)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := &testPKI{
		caFile:   filepath.Join(dir, "ca.pem"),
		certFile: filepath.Join(dir, "server.pem"),
		keyFile:  filepath.Join(dir, "server-key.pem"),
		pool:     x509.NewCertPool(),
		cn:       cn,
		ca:       ca,
	}
	p.pool.AddCert(ca.CA)
	writeFile(t, p.caFile, ca.CAPEM)
	p.issue(t, []net.IP{net.ParseIP("127.0.0.1")}, []string{"localhost"})
	return p
}

// issue (re)writes the server certificate and key, for the given names.
func (p *testPKI) issue(t testing.TB, ips []net.IP, dnsNames []string) {
	t.Helper()
	c, err := p.ca.Issue(p.cn, ips, dnsNames)
	if err != nil {
		t.Fatal(err)
	}
	p.leaf = c.Leaf
	writeFile(t, p.certFile, c.CertPEM)
	writeFile(t, p.keyFile, c.KeyPEM)
}

func writeFile(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

var tlsConfigSeq atomic.Int64

// verifyingTLS registers a go-sql-driver TLS config that trusts only pki's
// CA, checks the name 127.0.0.1, and records the certificate and version the
// server presented. It returns the DSN value for tls=.
func verifyingTLS(t testing.TB, pki *testPKI, seen *tlsSeen) string {
	t.Helper()
	name := fmt.Sprintf("sqlfork-test-%d", tlsConfigSeq.Add(1))
	err := mysql.RegisterTLSConfig(name, &tls.Config{
		RootCAs:    pki.pool,
		ServerName: "127.0.0.1",
		MinVersion: tls.VersionTLS12,
		VerifyConnection: func(cs tls.ConnectionState) error {
			seen.record(cs)
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mysql.DeregisterTLSConfig(name) })
	return name
}

// tlsSeen collects the TLS handshakes a client completed.
type tlsSeen struct {
	mu    sync.Mutex
	n     int
	certs [][]byte
	vers  []uint16
}

func (s *tlsSeen) record(cs tls.ConnectionState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	s.vers = append(s.vers, cs.Version)
	if len(cs.PeerCertificates) > 0 {
		s.certs = append(s.certs, cs.PeerCertificates[0].Raw)
	}
}

func (s *tlsSeen) count() int { s.mu.Lock(); defer s.mu.Unlock(); return s.n }

// pingOne opens a fresh pool with dsn, runs one query on one new connection
// and closes it, returning the query's result.
func pingOne(t testing.TB, dsn, query string) (string, error) {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var v sql.NullString
	if err := db.QueryRowContext(ctx, query).Scan(&v); err != nil {
		return "", err
	}
	return v.String, nil
}

func errNumber(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

func TestClientTLS(t *testing.T) {
	db, _ := env(t)
	pki := newTestPKI(t, "sqlfork-proxy")
	p := startTestProxy(t, db.Addr, db, func(c *proxy.Config) {
		c.TLSCert, c.TLSKey = pki.certFile, pki.keyFile
	})

	t.Run("skip-verify", func(t *testing.T) {
		got, err := pingOne(t, p.dsn("app", "tls=skip-verify"), "SELECT name FROM users WHERE id = 1")
		if err != nil || got != "alice" {
			t.Fatalf("tls=skip-verify: %q, %v", got, err)
		}
	})
	t.Run("verified", func(t *testing.T) {
		// Trusting only our CA and checking the name proves the client
		// really negotiated TLS with the proxy's certificate.
		var seen tlsSeen
		name := verifyingTLS(t, pki, &seen)
		got, err := pingOne(t, p.dsn("app", "tls="+name), "SELECT COUNT(*) FROM users")
		if err != nil || got != "3" {
			t.Fatalf("tls=%s: %q, %v", name, got, err)
		}
		if seen.count() != 1 || !bytes.Equal(seen.certs[0], pki.leaf.Raw) {
			t.Fatalf("client saw %d TLS handshakes, want 1 presenting the proxy's certificate", seen.count())
		}
		if seen.vers[0] < tls.VersionTLS12 {
			t.Fatalf("negotiated TLS version %x", seen.vers[0])
		}
	})
	t.Run("wrong-ca-refused", func(t *testing.T) {
		var seen tlsSeen
		name := verifyingTLS(t, newTestPKI(t, "other"), &seen)
		_, err := pingOne(t, p.dsn("app", "tls="+name), "SELECT 1")
		var ue x509.UnknownAuthorityError
		if !errors.As(err, &ue) {
			t.Fatalf("client trusting another CA: want x509.UnknownAuthorityError, got %v", err)
		}
	})
	t.Run("plain", func(t *testing.T) {
		got, err := pingOne(t, p.dsn("app", "tls=false"), "SELECT name FROM users WHERE id = 2")
		if err != nil || got != "bob" {
			t.Fatalf("tls=false: %q, %v", got, err)
		}
	})
	t.Run("preferred", func(t *testing.T) {
		got, err := pingOne(t, p.dsn("app", "tls=preferred"), "SELECT 'ok'")
		if err != nil || got != "ok" {
			t.Fatalf("tls=preferred: %q, %v", got, err)
		}
	})
	t.Run("large-result-over-tls", func(t *testing.T) {
		got, err := pingOne(t, p.dsn("app", "tls=skip-verify"), "SELECT REPEAT('z', 5000000)")
		if err != nil || got != strings.Repeat("z", 5000000) {
			t.Fatalf("5 MB value over TLS: len %d, %v", len(got), err)
		}
	})
}

func TestClientTLSRequired(t *testing.T) {
	db, _ := env(t)
	pki := newTestPKI(t, "sqlfork-proxy")
	p := startTestProxy(t, db.Addr, db, func(c *proxy.Config) {
		c.TLSCert, c.TLSKey, c.TLSRequired = pki.certFile, pki.keyFile, true
	})
	_, err := pingOne(t, p.dsn("app", "tls=false"), "SELECT 1")
	if errNumber(err) != 3159 {
		t.Fatalf("non-TLS client with tls-required: want error 3159, got %v", err)
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) && string(me.SQLState[:]) != "HY000" {
		t.Errorf("3159 SQLSTATE %q, want HY000", me.SQLState)
	}
	got, err := pingOne(t, p.dsn("app", "tls=skip-verify"), "SELECT name FROM users WHERE id = 3")
	if err != nil || got != "carol" {
		t.Fatalf("TLS client with tls-required: %q, %v", got, err)
	}
	var seen tlsSeen
	got, err = pingOne(t, p.dsn("app", "tls="+verifyingTLS(t, pki, &seen)), "SELECT 'verified'")
	if err != nil || got != "verified" || seen.count() != 1 {
		t.Fatalf("verified TLS client with tls-required: %q, %v (handshakes %d)", got, err, seen.count())
	}
}

// cliStatusSSL extracts the "SSL:" line of the CLI's status output.
func cliStatusSSL(out string) string {
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "SSL:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "SSL:"))
		}
	}
	return ""
}

func TestCLIOverTLS(t *testing.T) {
	db, _ := env(t)
	bin := mariadbCLI(t)
	pki := newTestPKI(t, "sqlfork-proxy")
	p := startTestProxy(t, db.Addr, db, func(c *proxy.Config) {
		c.TLSCert, c.TLSKey, c.TLSRequired = pki.certFile, pki.keyFile, true
	})

	for _, tc := range []struct {
		name string
		args []string
	}{
		{"no-verify", []string{"--ssl", "--ssl-verify-server-cert=0"}},
		{"verify-ca-and-name", []string{"--ssl-ca=" + pki.caFile, "--ssl-verify-server-cert"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(tc.args, "--batch", "app", "-e", "status; SELECT name FROM users ORDER BY id")
			res := runCLI(t, bin, p.addr, db.User, db.Password, "", args...)
			if res.exit != 0 || res.stderr != "" {
				t.Fatalf("exit %d, stderr %q, stdout:\n%s", res.exit, res.stderr, res.stdout)
			}
			ssl := cliStatusSSL(res.stdout)
			if !strings.HasPrefix(ssl, "Cipher in use is ") || len(ssl) <= len("Cipher in use is ") {
				t.Fatalf("status SSL line %q; want a cipher in use. stdout:\n%s", ssl, res.stdout)
			}
			if !strings.HasSuffix(res.stdout, "name\nalice\nbob\ncarol\n") {
				t.Fatalf("query over TLS printed:\n%s", res.stdout)
			}
		})
	}
	t.Run("wrong-ca-refused", func(t *testing.T) {
		other := newTestPKI(t, "other")
		res := runCLI(t, bin, p.addr, db.User, db.Password, "", "--ssl-ca="+other.caFile, "--ssl-verify-server-cert", "-e", "SELECT 1")
		if res.exit == 0 || !strings.Contains(res.stderr, "ERROR 2026") {
			t.Fatalf("CLI trusting another CA: exit %d stdout %q stderr %q, want ERROR 2026", res.exit, res.stdout, res.stderr)
		}
	})
	t.Run("skip-ssl-refused", func(t *testing.T) {
		res := runCLI(t, bin, p.addr, db.User, db.Password, "", "--skip-ssl", "-e", "SELECT 1")
		if res.exit == 0 || !strings.HasPrefix(res.stderr, "ERROR 3159 (HY000): ") {
			t.Fatalf("CLI without TLS against tls-required: exit %d stdout %q stderr %q, want ERROR 3159", res.exit, res.stdout, res.stderr)
		}
	})
	t.Run("plain-proxy-has-no-ssl", func(t *testing.T) {
		// The shared proxy has no certificate: the CLI falls back to plain TCP
		// and says so, which makes the "Cipher in use" check above meaningful.
		_, shared := env(t)
		res := runCLI(t, bin, shared.addr, db.User, db.Password, "", "--batch", "-e", "status")
		if res.exit != 0 {
			t.Fatalf("exit %d stderr %q", res.exit, res.stderr)
		}
		if ssl := cliStatusSSL(res.stdout); ssl != "Not in use" {
			t.Fatalf("status SSL line through a proxy without TLS: %q", ssl)
		}
	})
}

// sniffConn records what the server sends, for inspecting the handshake.
type sniffConn struct {
	net.Conn
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *sniffConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.mu.Lock()
	c.buf.Write(b[:n])
	c.mu.Unlock()
	return n, err
}

// packets splits the recorded server bytes into packet payloads.
func (c *sniffConn) packets() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.buf.Bytes()
	var out [][]byte
	for len(b) >= 4 {
		n := int(b[0]) | int(b[1])<<8 | int(b[2])<<16
		if len(b) < 4+n {
			break
		}
		out = append(out, b[4:4+n])
		b = b[4+n:]
	}
	return out
}

var sniffSeq atomic.Int64

// sniffingNet registers a go-sql-driver network that dials TCP and records
// every connection's incoming bytes into *conns.
func sniffingNet(t testing.TB, conns *[]*sniffConn, mu *sync.Mutex) string {
	t.Helper()
	name := fmt.Sprintf("sniff%d", sniffSeq.Add(1))
	mysql.RegisterDialContext(name, func(ctx context.Context, addr string) (net.Conn, error) {
		nc, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		sc := &sniffConn{Conn: nc}
		mu.Lock()
		*conns = append(*conns, sc)
		mu.Unlock()
		return sc, nil
	})
	return name
}

// sha2Exchange names what the server answered to a caching_sha2_password
// scramble: "fast" (0x01 0x03), "full+pubkey" (0x01 0x04 then a PEM public
// key), "full" (0x01 0x04 without one), or "none".
func sha2Exchange(pkts [][]byte) string {
	for i, p := range pkts {
		if len(p) == 2 && p[0] == 0x01 && p[1] == 0x03 {
			return "fast"
		}
		if len(p) == 2 && p[0] == 0x01 && p[1] == 0x04 {
			if i+1 < len(pkts) && bytes.HasPrefix(pkts[i+1], []byte("\x01-----BEGIN PUBLIC KEY-----")) {
				return "full+pubkey"
			}
			return "full"
		}
	}
	return "none"
}

// authSwitchPlugin returns the plugin named in an AuthSwitchRequest, if any.
func authSwitchPlugin(pkts [][]byte) string {
	for _, p := range pkts[1:] { // pkts[0] is the greeting
		if len(p) > 1 && p[0] == 0xFE && len(p) >= 9 {
			if i := bytes.IndexByte(p[1:], 0); i > 0 {
				return string(p[1 : 1+i])
			}
		}
	}
	return ""
}

func TestCachingSha2Password(t *testing.T) {
	db, _ := env(t)
	pki := newTestPKI(t, "sqlfork-proxy")
	users := []proxy.User{}
	for _, n := range []string{"sha_plain", "sha_tls", "sha_wrong", "sha_cli_tls", "sha_cli_plain"} {
		users = append(users, proxy.User{Name: n, Password: n + "-secret", AuthPlugin: proxy.AuthCachingSha2Password,
			UpstreamUser: db.User, UpstreamPassword: db.Password})
	}
	p := startTestProxy(t, db.Addr, db, func(c *proxy.Config) {
		c.TLSCert, c.TLSKey = pki.certFile, pki.keyFile
		c.Users = users
	})
	dsnFor := func(user, password, netw string, params ...string) string {
		return withParams(fmt.Sprintf("%s:%s@%s(%s)/app", user, password, netw, p.addr), params)
	}
	var mu sync.Mutex
	var conns []*sniffConn
	sniff := sniffingNet(t, &conns, &mu)
	// login connects once through the sniffing network and reports the
	// caching_sha2 exchange the proxy chose.
	login := func(t *testing.T, user, password string, params ...string) (string, error) {
		t.Helper()
		mu.Lock()
		start := len(conns)
		mu.Unlock()
		got, err := pingOne(t, dsnFor(user, password, sniff, params...), "SELECT CONCAT(CURRENT_USER(), ' ', DATABASE())")
		mu.Lock()
		defer mu.Unlock()
		if len(conns) != start+1 {
			t.Fatalf("expected one new connection, got %d", len(conns)-start)
		}
		pkts := conns[start].packets()
		if len(pkts) == 0 {
			t.Fatal("nothing received from the proxy")
		}
		// The proxy may greet with caching_sha2_password or switch to it.
		if pl := authSwitchPlugin(pkts); pl != "caching_sha2_password" &&
			!(pl == "" && bytes.HasSuffix(pkts[0], []byte("caching_sha2_password\x00"))) {
			t.Errorf("proxy asked for auth plugin %q (switch) / greeting %q, want caching_sha2_password", pl, pkts[0])
		}
		if err == nil && got != db.User+"@127.0.0.1 app" && got != db.User+"@localhost app" {
			t.Errorf("session is %q, want the upstream account in app", got)
		}
		return sha2Exchange(pkts), err
	}

	t.Run("plain-tcp", func(t *testing.T) {
		// First login: no cache entry, so full authentication; without TLS
		// go-sql-driver asks for the RSA public key and encrypts the password.
		ex, err := login(t, "sha_plain", "sha_plain-secret", "tls=false")
		if err != nil || ex != "full+pubkey" {
			t.Fatalf("first login: exchange %s, err %v; want full+pubkey and success", ex, err)
		}
		for i := 0; i < 2; i++ {
			ex, err = login(t, "sha_plain", "sha_plain-secret", "tls=false")
			if err != nil || ex != "fast" {
				t.Fatalf("login %d after the cache was filled: exchange %s, err %v; want fast and success", i+2, ex, err)
			}
		}
	})
	t.Run("tls", func(t *testing.T) {
		// Over TLS, full authentication sends the password in clear over the
		// encrypted channel; then the cache gives the fast path, over TLS and
		// over plain TCP alike.
		for i, want := range []string{"full", "fast"} {
			got, err := pingOne(t, dsnFor("sha_tls", "sha_tls-secret", "tcp", "tls=skip-verify"), "SELECT DATABASE()")
			if err != nil || got != "app" {
				t.Fatalf("TLS login %d (%s auth): %q, %v", i+1, want, got, err)
			}
		}
		ex, err := login(t, "sha_tls", "sha_tls-secret", "tls=false")
		if err != nil || ex != "fast" {
			t.Fatalf("plain login after TLS logins: exchange %s, err %v; want fast and success", ex, err)
		}
	})
	t.Run("wrong-password", func(t *testing.T) {
		failures := func() float64 { return p.metric(t, "sqlfork_client_auth_failures_total", nil) }
		before := failures()
		// Not cached yet.
		if _, err := login(t, "sha_wrong", "bad", "tls=false"); errNumber(err) != 1045 {
			t.Fatalf("wrong password, empty cache: want 1045, got %v", err)
		}
		if _, err := pingOne(t, dsnFor("sha_wrong", "bad", "tcp", "tls=skip-verify"), "SELECT 1"); errNumber(err) != 1045 {
			t.Fatalf("wrong password over TLS: want 1045, got %v", err)
		}
		if _, err := login(t, "sha_wrong", "sha_wrong-secret", "tls=false"); err != nil {
			t.Fatalf("right password after failures: %v", err)
		}
		// Cached now: a wrong scramble must not pass the fast path; the proxy
		// falls back to full authentication, which refuses it.
		ex, err := login(t, "sha_wrong", "sha_wrong-secret-not", "tls=false")
		if errNumber(err) != 1045 || ex != "full+pubkey" {
			t.Fatalf("wrong password, filled cache: exchange %s err %v; want full+pubkey then 1045", ex, err)
		}
		var me *mysql.MySQLError
		if errors.As(err, &me) && (string(me.SQLState[:]) != "28000" || !strings.HasPrefix(me.Message, "Access denied for user 'sha_wrong'@")) {
			t.Errorf("1045 reads %q (%s)", me.Message, me.SQLState)
		}
		if ex, err := login(t, "sha_wrong", "sha_wrong-secret", "tls=false"); err != nil || ex != "fast" {
			t.Fatalf("right password after a refused one: exchange %s err %v; want fast", ex, err)
		}
		if got := failures() - before; got != 3 {
			t.Errorf("auth failures counted: %v, want 3", got)
		}
	})
	t.Run("mariadb-cli", func(t *testing.T) {
		bin := mariadbCLI(t)
		for _, tc := range []struct {
			user string
			args []string
		}{
			{"sha_cli_tls", []string{"--ssl", "--ssl-verify-server-cert=0"}},
			{"sha_cli_plain", []string{"--skip-ssl"}},
		} {
			for i := 0; i < 2; i++ { // full, then fast authentication
				args := append(tc.args, "--batch", "--skip-column-names", "app", "-e", "SELECT DATABASE()")
				res := runCLI(t, bin, p.addr, tc.user, tc.user+"-secret", "", args...)
				if res.exit != 0 || res.stdout != "app\n" {
					t.Fatalf("%s login %d (%v): exit %d stdout %q stderr %q", tc.user, i+1, tc.args, res.exit, res.stdout, res.stderr)
				}
			}
		}
	})
}

func TestUpstreamTLS(t *testing.T) {
	testdb.Require(t)
	pki := newTestPKI(t, "mariadb-upstream")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	up := testdb.StartForTest(ctx, t, testdb.Options{Logf: t.Logf, ExtraArgs: []string{
		"--ssl-ca=" + pki.caFile, "--ssl-cert=" + pki.certFile, "--ssl-key=" + pki.keyFile,
	}})

	// Sanity: the server has TLS, and a plain direct session does not use it.
	direct := openDB(t, directDSN(up, ""))
	var name, haveSSL string
	if err := direct.QueryRow("SHOW GLOBAL VARIABLES LIKE 'have_ssl'").Scan(&name, &haveSSL); err != nil || haveSSL != "YES" {
		t.Fatalf("have_ssl = %q, %v; mariadbd log:\n%s", haveSSL, err, up.ErrorLog())
	}
	sslCipher := func(t *testing.T, dsn string) string {
		t.Helper()
		db := openDB(t, dsn)
		var n, v string
		if err := db.QueryRow("SHOW SESSION STATUS LIKE 'Ssl_cipher'").Scan(&n, &v); err != nil {
			t.Fatalf("SHOW STATUS LIKE 'Ssl_cipher': %v", err)
		}
		return v
	}
	if c := sslCipher(t, directDSN(up, "", "tls=false")); c != "" {
		t.Fatalf("plain direct session has Ssl_cipher %q", c)
	}

	for _, mode := range []string{proxy.UpstreamTLSVerifyID, proxy.UpstreamTLSVerifyCA} {
		t.Run(mode, func(t *testing.T) {
			p := startTestProxy(t, up.Addr, up, func(c *proxy.Config) {
				c.UpstreamTLS, c.UpstreamTLSCA = mode, pki.caFile
			})
			// The client talks plain TCP to the proxy; upstream sees TLS.
			if c := sslCipher(t, p.dsn("", "tls=false")); c == "" {
				t.Fatalf("upstream reports no Ssl_cipher for the proxy's session with upstream-tls %s", mode)
			}
		})
	}
	t.Run("required-no-ca", func(t *testing.T) {
		p := startTestProxy(t, up.Addr, up, func(c *proxy.Config) { c.UpstreamTLS = proxy.UpstreamTLSRequired })
		if c := sslCipher(t, p.dsn("")); c == "" {
			t.Fatal("upstream reports no Ssl_cipher with upstream-tls required")
		}
	})
	t.Run("preferred", func(t *testing.T) {
		p := startTestProxy(t, up.Addr, up, func(c *proxy.Config) { c.UpstreamTLS = proxy.UpstreamTLSPreferred })
		if c := sslCipher(t, p.dsn("")); c == "" {
			t.Fatal("upstream reports no Ssl_cipher with upstream-tls preferred against a TLS server")
		}
	})
	t.Run("disabled", func(t *testing.T) {
		p := startTestProxy(t, up.Addr, up, nil)
		if c := sslCipher(t, p.dsn("")); c != "" {
			t.Fatalf("upstream reports Ssl_cipher %q with upstream-tls disabled", c)
		}
	})
	t.Run("verify-identity-wrong-ca", func(t *testing.T) {
		other := newTestPKI(t, "other")
		p := startTestProxy(t, up.Addr, up, func(c *proxy.Config) {
			c.UpstreamTLS, c.UpstreamTLSCA = proxy.UpstreamTLSVerifyID, other.caFile
		})
		_, err := pingOne(t, p.dsn(""), "SELECT 1")
		if errNumber(err) != 1429 || !strings.Contains(err.Error(), "certificate") {
			t.Fatalf("upstream certificate from an untrusted CA: want error 1429 naming the certificate, got %v", err)
		}
	})
	t.Run("name-mismatch", func(t *testing.T) {
		// Reissue the server certificate for another name only, and have
		// MariaDB reload it: verify-ca still connects, verify-identity must not.
		pki.issue(t, []net.IP{net.ParseIP("192.0.2.1")}, []string{"elsewhere.invalid"})
		if _, err := direct.Exec("FLUSH SSL"); err != nil {
			t.Fatalf("FLUSH SSL: %v", err)
		}
		var seen tlsSeen
		cfgName := fmt.Sprintf("sqlfork-test-%d", tlsConfigSeq.Add(1))
		if err := mysql.RegisterTLSConfig(cfgName, &tls.Config{InsecureSkipVerify: true,
			VerifyConnection: func(cs tls.ConnectionState) error { seen.record(cs); return nil }}); err != nil {
			t.Fatal(err)
		}
		defer mysql.DeregisterTLSConfig(cfgName)
		if _, err := pingOne(t, directDSN(up, "", "tls="+cfgName), "SELECT 1"); err != nil ||
			seen.count() != 1 || !bytes.Equal(seen.certs[0], pki.leaf.Raw) {
			t.Fatalf("MariaDB did not switch to the reissued certificate (err %v, handshakes %d)", err, seen.count())
		}
		pca := startTestProxy(t, up.Addr, up, func(c *proxy.Config) {
			c.UpstreamTLS, c.UpstreamTLSCA = proxy.UpstreamTLSVerifyCA, pki.caFile
		})
		if c := sslCipher(t, pca.dsn("")); c == "" {
			t.Fatal("verify-ca with a certificate for another name: no Ssl_cipher upstream")
		}
		pid := startTestProxy(t, up.Addr, up, func(c *proxy.Config) {
			c.UpstreamTLS, c.UpstreamTLSCA = proxy.UpstreamTLSVerifyID, pki.caFile
		})
		_, err := pingOne(t, pid.dsn(""), "SELECT 1")
		if errNumber(err) != 1429 || !strings.Contains(err.Error(), "certificate") {
			t.Fatalf("verify-identity with a certificate for another name: want error 1429 naming the certificate, got %v", err)
		}
		t.Logf("client sees: %v", err)
	})
	t.Run("required-against-plain-server", func(t *testing.T) {
		plain, _ := env(t) // the shared MariaDB has no TLS
		p := startTestProxy(t, plain.Addr, plain, func(c *proxy.Config) { c.UpstreamTLS = proxy.UpstreamTLSRequired })
		_, err := pingOne(t, p.dsn("app"), "SELECT 1")
		if errNumber(err) != 1429 || !strings.Contains(err.Error(), "TLS") {
			t.Fatalf("upstream-tls required against a server without TLS: want error 1429 mentioning TLS, got %v", err)
		}
		t.Logf("client sees: %v", err)
	})
}

// tlsRawHello connects to addr, reads the greeting, sends an SSLRequest
// (packet 1) and completes TLS; it returns the TLS connection and the
// greeting's scramble.
func tlsRawHello(t *testing.T, addr string) (*tls.Conn, []byte) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(20 * time.Second))
	g, seq, err := readRawPacket(nc)
	if err != nil || seq != 0 || len(g) < 1 || g[0] != 10 {
		t.Fatalf("greeting: seq %d %q, %v", seq, g, err)
	}
	// Protocol 10: version NUL, thread id, scramble 1 (8), filler, caps,
	// charset, status, caps high, scramble length, reserved, scramble 2.
	rest := g[1+bytes.IndexByte(g[1:], 0)+1:]
	salt := append([]byte(nil), rest[4:12]...)
	salt = append(salt, rest[4+8+1+2+1+2+2+1+10:][:12]...)
	if _, err := nc.Write(rawPacket(1, rawHandshakeHead(rawClientCaps|0x800))); err != nil {
		t.Fatal(err)
	}
	tc := tls.Client(nc, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // test
	if err := tc.Handshake(); err != nil {
		t.Fatalf("TLS handshake: %v", err)
	}
	return tc, salt
}

// rawClientCaps: protocol 4.1, secure connection, plugin auth (lenenc
// data), connect with db, connection attributes.
const rawClientCaps = 0x200 | 0x8000 | 0x80000 | 0x200000 | 0x8 | 0x100000

func rawHandshakeHead(caps uint32) []byte {
	p := binary.LittleEndian.AppendUint32(nil, caps)
	p = binary.LittleEndian.AppendUint32(p, 1<<24)
	p = append(p, 45)
	return append(p, make([]byte, 23)...)
}

func rawPacket(seq byte, payload []byte) []byte {
	return append([]byte{byte(len(payload)), byte(len(payload) >> 8), byte(len(payload) >> 16), seq}, payload...)
}

func readRawPacket(r io.Reader) ([]byte, byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, 0, err
	}
	p := make([]byte, int(hdr[0])|int(hdr[1])<<8|int(hdr[2])<<16)
	_, err := io.ReadFull(r, p)
	return p, hdr[3], err
}

// TestMalformedHandshakeOverTLS: under client TLS, a malformed
// HandshakeResponse (those go-mysql's parser panics on among them) gets
// "Bad handshake" (1043, 08S01) as packet 3 over TLS; nothing panics and
// the proxy keeps serving TLS logins.
func TestMalformedHandshakeOverTLS(t *testing.T) {
	db, _ := env(t)
	pki := newTestPKI(t, "sqlfork-proxy")
	p := startTestProxy(t, db.Addr, db, func(c *proxy.Config) {
		c.TLSCert, c.TLSKey = pki.certFile, pki.keyFile
	})
	head := rawHandshakeHead(rawClientCaps)
	withUser := append(append([]byte(nil), head...), 'u', 0)
	valid := append(append([]byte(nil), withUser...), 0, 'a', 'p', 'p', 0)
	valid = append(valid, "mysql_native_password\x00"...)
	cases := []struct {
		name string
		p    []byte
	}{
		{"0xFE auth length", append(append([]byte(nil), withUser...), 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F)},
		{"truncated attribute length", append(append([]byte(nil), valid...), 0xFC)},
		{"attribute past the end", append(append([]byte(nil), valid...), 3, 9, 'a', 'b')},
		{"user not terminated", append(append([]byte(nil), head...), "root"...)},
		{"short", head[:20]},
		{"second SSLRequest", rawHandshakeHead(rawClientCaps | 0x800)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tc, _ := tlsRawHello(t, p.addr)
			if _, err := tc.Write(rawPacket(2, c.p)); err != nil {
				t.Fatal(err)
			}
			reply, seq, err := readRawPacket(tc)
			if err != nil {
				t.Fatalf("no answer over TLS: %v", err)
			}
			if seq != 3 || len(reply) < 9 || reply[0] != 0xFF || binary.LittleEndian.Uint16(reply[1:]) != 1043 ||
				string(reply[3:9]) != "#08S01" || !strings.Contains(string(reply), "Bad handshake") {
				t.Fatalf("answer seq %d %q; want ERR 1043 (08S01) Bad handshake as packet 3", seq, reply)
			}
		})
	}
	if n := p.metric(t, "sqlfork_connection_panics_total", nil); n != 0 {
		t.Fatalf("connection panics: %v", n)
	}
	got, err := pingOne(t, p.dsn("app", "tls=skip-verify"), "SELECT name FROM users WHERE id = 1")
	if err != nil || got != "alice" {
		t.Fatalf("TLS login after malformed ones: %q, %v", got, err)
	}
}

// TestTLSPipelinedFirstCommand: a client that sends its handshake response
// and its first statement in one TLS write gets both answered: the proxy
// reads no further than the login needs.
func TestTLSPipelinedFirstCommand(t *testing.T) {
	db, _ := env(t)
	pki := newTestPKI(t, "sqlfork-proxy")
	p := startTestProxy(t, db.Addr, db, func(c *proxy.Config) {
		c.TLSCert, c.TLSKey = pki.certFile, pki.keyFile
	})
	tc, salt := tlsRawHello(t, p.addr)
	h1 := sha1.Sum([]byte(db.Password))
	h2 := sha1.Sum(h1[:])
	h := sha1.New()
	h.Write(salt)
	h.Write(h2[:])
	scramble := h.Sum(nil)
	for i := range scramble {
		scramble[i] ^= h1[i]
	}
	resp := rawHandshakeHead(rawClientCaps | 0x800)
	resp = append(resp, db.User...)
	resp = append(resp, 0, byte(len(scramble)))
	resp = append(resp, scramble...)
	resp = append(resp, "app\x00mysql_native_password\x00"...)
	resp = append(resp, 0) // no attributes
	query := rawPacket(0, append([]byte{0x03}, "SELECT 40 + 2"...))
	if _, err := tc.Write(append(rawPacket(2, resp), query...)); err != nil {
		t.Fatal(err)
	}
	ok, seq, err := readRawPacket(tc)
	if err != nil || seq != 3 || len(ok) == 0 || ok[0] != 0 {
		t.Fatalf("login answer seq %d %q, %v; want OK as packet 3", seq, ok, err)
	}
	var rows []string
	for {
		pkt, _, err := readRawPacket(tc)
		if err != nil {
			t.Fatalf("result of the pipelined statement: %v", err)
		}
		if pkt[0] == 0xFF {
			t.Fatalf("pipelined statement: %q", pkt)
		}
		if pkt[0] == 0xFE && len(pkt) < 9 {
			if len(rows) > 0 {
				break
			}
			rows = append(rows, "") // end of the column definitions
			continue
		}
		if len(rows) > 0 {
			rows = append(rows, string(pkt[1:]))
		}
	}
	if len(rows) != 2 || rows[1] != "42" {
		t.Fatalf("pipelined SELECT 40 + 2 returned rows %q", rows[1:])
	}
}
