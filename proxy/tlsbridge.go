package proxy

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"sync"
	"time"

	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Client TLS is terminated by the proxy, not by go-mysql. go-mysql's server
// switches to TLS itself when it reads an SSLRequest and parses the
// HandshakeResponse that follows inside TLS, out of the proxy's reach, and
// its parser panics on some malformed responses. So when a client sends an
// SSLRequest, greetingConn completes the TLS handshake with the client
// (outer, the proxy's certificate) and gives go-mysql a second TLS leg in
// memory (inner: go-mysql's tls.Server on an ephemeral certificate, the
// proxy's tls.Client on the other end). The tunnel carries the login's
// packets between the two in plain text, checks the HandshakeResponse
// before go-mysql sees it, and reads from the client only when the login
// expects a packet, so the first command stays in outer for the session.
// go-mysql still sees a *tls.Conn (caching_sha2_password full
// authentication over TLS takes the password in clear).

// tlsTerm is the proxy's client TLS: outer is the proxy's certificate,
// innerServer goes to go-mysql and innerClient is the proxy's end of the
// in-memory leg.
type tlsTerm struct {
	outer       *tls.Config
	innerServer *tls.Config
	innerClient *tls.Config
}

// innerServerName names the in-memory leg (its session cache key).
const innerServerName = "sqlfork-proxy.login"

// newTLSTerm builds the in-memory leg's configurations around the proxy's
// client TLS configuration: a P-256 certificate made for this process and
// TLS 1.2 with session tickets, whose resumed handshake has no public-key
// operation at all (TLS 1.3 resumption still does an X25519 exchange: about
// four times the cost). The leg never leaves the process; its protocol
// version only has to satisfy go-mysql, which checks for a *tls.Conn.
func newTLSTerm(outer *tls.Config) (*tlsTerm, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: innerServerName},
		DNSNames:     []string{innerServerName},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(100 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	curves := []tls.CurveID{tls.X25519}
	return &tlsTerm{
		outer: outer,
		innerServer: &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
			MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS12, CurvePreferences: curves},
		// The peer is go-mysql in this process, over memory: nothing to verify.
		innerClient: &tls.Config{InsecureSkipVerify: true, ServerName: innerServerName, //nolint:gosec // in-process leg
			MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS12, CurvePreferences: curves, ClientSessionCache: tls.NewLRUClientSessionCache(64)},
	}, nil
}

// clientSocket is the client's socket below the proxy's TLS, for the whole
// session: reads count toward the handshake limit until the login ends
// (then they cost one atomic load), and the peer's address has no port
// (as greetingConn's).
type clientSocket struct {
	net.Conn
	gc *greetingConn
}

func (c clientSocket) Read(b []byte) (int, error) { return c.gc.readRaw(b) }
func (c clientSocket) RemoteAddr() net.Addr       { return c.gc.RemoteAddr() }

// tlsTunnel carries one login between the client's TLS (outer) and
// go-mysql's (over local, through inner).
type tlsTunnel struct {
	outer *tls.Conn
	inner *tls.Conn
	local *memConn    // go-mysql's end, read and written through greetingConn
	peer  *memConn    // inner's end
	watch *time.Timer // aborts the tunnel at the handshake deadline
	done  chan struct{}
	// mu orders abort and finish: once finished, the socket is the
	// session's and abort leaves it alone.
	mu       sync.Mutex
	finished bool
	// Set by run before done is closed.
	ok  bool // go-mysql's OK was delivered to the client
	err error
}

// startTLS completes the client's TLS handshake on the raw socket, then
// starts the tunnel; go-mysql's own TLS handshake and login go through
// greetingConn's local end. deadline bounds the tunnel's life.
func (c *greetingConn) startTLS(deadline time.Time) error {
	outer := tls.Server(clientSocket{Conn: c.Conn, gc: c}, c.term.outer)
	if err := outer.Handshake(); err != nil {
		return fmt.Errorf("client TLS handshake: %w", err)
	}
	local, peer := newMemConn(c.Conn)
	t := &tlsTunnel{outer: outer, inner: tls.Client(peer, c.term.innerClient), local: local, peer: peer,
		done: make(chan struct{})}
	if !deadline.IsZero() {
		t.watch = time.AfterFunc(time.Until(deadline), t.abort)
	}
	c.tun = t
	go t.run()
	return nil
}

// run is the tunnel's goroutine: the in-memory TLS handshake, then the
// login's packets in turn, until go-mysql's final OK or ERR.
func (t *tlsTunnel) run() {
	defer close(t.done)
	defer t.peer.Close() // go-mysql then reads EOF
	if err := t.inner.Handshake(); err != nil {
		t.err = fmt.Errorf("in-memory TLS to the login handler: %w", err)
		return
	}
	first, expect := true, true
	for {
		if expect {
			pkt, err := readWhole(t.outer, handshakeReadLimit)
			if err != nil {
				t.err = err
				return
			}
			if first {
				first = false
				if err := checkTunneled(pkt[wire.HeaderLen:]); err != nil {
					_, _ = t.outer.Write(badHandshake(pkt[3]+1, err))
					t.err = fmt.Errorf("%w: %v", errBadHandshake, err)
					return
				}
			}
			if _, err := t.inner.Write(pkt); err != nil {
				t.err = err
				return
			}
		}
		pkt, err := readWhole(t.inner, handshakeReadLimit)
		if err != nil {
			t.err = fmt.Errorf("login handler: %w", err)
			return
		}
		if _, err := t.outer.Write(pkt); err != nil {
			t.err = err
			return
		}
		p := pkt[wire.HeaderLen:]
		switch {
		case len(p) == 0:
			t.err = errors.New("login handler sent an empty packet")
			return
		case p[0] == wire.OKHeader:
			t.ok = true
			return
		case p[0] == wire.ErrHeader:
			t.err = errors.New("login refused")
			return
		case p[0] == 0x01 && len(p) == 2 && p[1] == 0x03:
			// caching_sha2_password fast authentication succeeded: the
			// login's OK or ERR follows, the client sends nothing.
			expect = false
		default:
			// An auth switch request (0xFE) or more auth data (0x01:
			// full authentication, a public key): the client answers.
			expect = true
		}
	}
}

// checkTunneled checks the HandshakeResponse a client sent under TLS.
func checkTunneled(p []byte) error {
	if len(p) == sslRequestLen {
		return errors.New("an SSLRequest inside TLS")
	}
	return checkHandshakeResponse(p)
}

// finish ends the tunnel once go-mysql's login has returned: what
// go-mysql wrote last is still delivered to the client. It returns the
// client's connection (TLS terminated by the proxy) for the session, or
// why the login did not complete.
func (t *tlsTunnel) finish() (*tls.Conn, error) {
	_ = t.local.Close()
	<-t.done
	t.mu.Lock()
	t.finished = true
	t.mu.Unlock()
	if t.watch != nil {
		t.watch.Stop()
	}
	if !t.ok {
		if t.err == nil {
			t.err = errors.New("login ended without OK")
		}
		return nil, t.err
	}
	return t.outer, nil
}

// abort unblocks and ends the tunnel (handshake deadline, or a panic in
// the login): the client's socket gets a past deadline.
func (t *tlsTunnel) abort() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.finished {
		return
	}
	_ = t.local.Close()
	_ = t.peer.Close()
	_ = t.outer.NetConn().SetDeadline(time.Now())
}

// readWhole reads one packet, header included, with nothing past it: the
// client's next packet (its first command) stays in r.
func readWhole(r io.Reader, limit int) ([]byte, error) {
	var hdr [wire.HeaderLen]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := wire.PayloadLen(hdr[:])
	if n > limit-wire.HeaderLen {
		return nil, errHandshakeTooLarge
	}
	pkt := make([]byte, wire.HeaderLen+n)
	copy(pkt, hdr[:])
	if _, err := io.ReadFull(r, pkt[wire.HeaderLen:]); err != nil {
		return nil, err
	}
	return pkt, nil
}

// memConn is one end of an in-memory connection whose writes never block
// (the login's few kilobytes are buffered), so neither TLS end can
// deadlock the other. Closing an end fails its writes and the peer's, and
// lets the peer read what was written before EOF.
type memConn struct {
	in, out *memBuf
	addr    net.Conn // addresses reported
}

type memBuf struct {
	mu     sync.Mutex
	cond   sync.Cond
	buf    []byte
	closed bool
}

func newMemConn(addr net.Conn) (a, b *memConn) {
	x, y := &memBuf{}, &memBuf{}
	x.cond.L, y.cond.L = &x.mu, &y.mu
	return &memConn{in: x, out: y, addr: addr}, &memConn{in: y, out: x, addr: addr}
}

func (c *memConn) Read(b []byte) (int, error) {
	m := c.in
	m.mu.Lock()
	defer m.mu.Unlock()
	for len(m.buf) == 0 && !m.closed {
		m.cond.Wait()
	}
	if len(m.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(b, m.buf)
	m.buf = m.buf[n:]
	return n, nil
}

func (c *memConn) Write(b []byte) (int, error) {
	m := c.out
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return 0, io.ErrClosedPipe
	}
	m.buf = append(m.buf, b...)
	m.cond.Broadcast()
	return len(b), nil
}

func (c *memConn) Close() error {
	for _, m := range []*memBuf{c.in, c.out} {
		m.mu.Lock()
		m.closed = true
		m.cond.Broadcast()
		m.mu.Unlock()
	}
	return nil
}

func (c *memConn) LocalAddr() net.Addr              { return c.addr.LocalAddr() }
func (c *memConn) RemoteAddr() net.Addr             { return c.addr.RemoteAddr() }
func (c *memConn) SetDeadline(time.Time) error      { return nil }
func (c *memConn) SetReadDeadline(time.Time) error  { return nil }
func (c *memConn) SetWriteDeadline(time.Time) error { return nil }
