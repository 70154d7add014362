package proxy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/sqlfork/sqlfork-proxy/wire"
)

// relayedCaps are the capabilities the proxy can pass between client and
// upstream: the relay follows both result-set layouts (with EOF packets,
// and the OK packets of CLIENT_DEPRECATE_EOF). Compression is not relayed:
// the proxy compresses for the client itself (compress.go) and talks plain
// upstream. Left out for now: query attributes and the MariaDB extended
// capabilities (bulk, progress, metadata cache, extended metadata).
const relayedCaps = wire.CapLongPassword | wire.CapFoundRows | wire.CapLongFlag | wire.CapConnectWithDB | wire.CapNoSchema |
	wire.CapODBC | wire.CapLocalFiles | wire.CapIgnoreSpace | wire.CapProtocol41 | wire.CapInteractive | wire.CapIgnoreSigpipe |
	wire.CapTransactions | wire.CapSecureConnection | wire.CapMultiStatements | wire.CapMultiResults | wire.CapPSMultiResults |
	wire.CapPluginAuth | wire.CapConnectAttrs | wire.CapPluginAuthLenenc | wire.CapSessionTrack | wire.CapDeprecateEOF

// greeting is an upstream server's initial handshake packet.
type greeting struct {
	version    string
	connID     uint32
	salt       []byte
	caps       uint32
	collation  uint8
	status     uint16
	authPlugin string
}

// parseGreeting decodes a protocol-10 initial handshake payload.
func parseGreeting(p []byte) (*greeting, error) {
	if len(p) > 0 && p[0] == wire.ErrHeader {
		return nil, wire.ParseErr(p)
	}
	if len(p) < 1 || p[0] != 10 {
		return nil, fmt.Errorf("%w: unsupported protocol version in server greeting", wire.ErrMalformed)
	}
	g := &greeting{}
	p = p[1:]
	i := bytes.IndexByte(p, 0)
	if i < 0 {
		return nil, fmt.Errorf("%w: greeting version", wire.ErrMalformed)
	}
	g.version = string(p[:i])
	p = p[i+1:]
	if len(p) < 4+8+1+2 {
		return nil, fmt.Errorf("%w: short greeting", wire.ErrMalformed)
	}
	g.connID = binary.LittleEndian.Uint32(p)
	g.salt = append([]byte(nil), p[4:12]...)
	p = p[13:]
	g.caps = uint32(binary.LittleEndian.Uint16(p))
	p = p[2:]
	if len(p) >= 16 {
		g.collation = p[0]
		g.status = binary.LittleEndian.Uint16(p[1:])
		g.caps |= uint32(binary.LittleEndian.Uint16(p[3:])) << 16
		saltLen := int(p[5])
		p = p[16:]
		if g.caps&wire.CapSecureConnection != 0 {
			n := max(13, saltLen-8)
			if len(p) < n {
				return nil, fmt.Errorf("%w: greeting scramble", wire.ErrMalformed)
			}
			part := p[:n]
			if k := bytes.IndexByte(part, 0); k >= 0 {
				part = part[:k]
			}
			g.salt = append(g.salt, part...)
			p = p[n:]
		}
		if g.caps&wire.CapPluginAuth != 0 {
			if k := bytes.IndexByte(p, 0); k >= 0 {
				p = p[:k]
			}
			g.authPlugin = string(p)
		}
	}
	if g.authPlugin == "" {
		g.authPlugin = AuthNativePassword
	}
	return g, nil
}

// clientCaps is what the proxy advertises to clients for an upstream
// advertising upstreamCaps.
func clientCaps(upstreamCaps uint32, tls bool) uint32 {
	// Compression is the proxy's own, between it and the client.
	c := upstreamCaps&relayedCaps | wire.CapProtocol41 | wire.CapSecureConnection | wire.CapPluginAuth | wire.CapCompress
	if tls {
		c |= wire.CapSSL
	}
	return c
}

// proxyConnIDBase puts the connection ids the proxy announces above any
// thread id a MySQL/MariaDB server hands out in practice, so a client that
// cancels with KILL QUERY <greeting id> through the proxy gets "Unknown
// thread id" instead of killing an unrelated upstream session.
const proxyConnIDBase = 1 << 31

// handshakeReadLimit bounds what a client may send before it has logged
// in. go-mysql joins continuation packets without limit; this keeps an
// unauthenticated peer from making the proxy buffer gigabytes.
const handshakeReadLimit = 1 << 20

// errHandshakeTooLarge ends a login that sends more than handshakeReadLimit.
var errHandshakeTooLarge = errors.New("client sent more than 1 MiB before logging in")

// greetingConn wraps a client connection: during the handshake it rewrites
// the capability flags and connection id of the first packet written
// (go-mysql's greeting) and caps what the client may send; it also reports
// the peer's address without a port, as MySQL does in error messages. When
// the client asks for TLS (term set), it terminates the client's TLS and
// carries the login to go-mysql through a tlsTunnel (tlsbridge.go).
type greetingConn struct {
	net.Conn
	caps    uint32
	connID  uint32
	status  uint16
	patched atomic.Bool
	done    atomic.Bool
	read    int // bytes read during the handshake (one reader goroutine)
	// checked is set once the client's first packet after the greeting
	// has been read and checked (checkFirst); pending holds what of it
	// the reader has not taken yet. failed is set when it was malformed
	// and the client has been answered: go-mysql's own error reply is
	// then dropped.
	checked bool
	pending []byte
	failed  bool
	// term is the proxy's client TLS (nil without it); tun is the login's
	// tunnel once the client has switched to TLS, deadline its end.
	term     *tlsTerm
	deadline time.Time
	tun      *tlsTunnel
}

func (c *greetingConn) Write(b []byte) (int, error) {
	if c.failed {
		return 0, errBadHandshake
	}
	if !c.patched.Load() {
		c.patched.Store(true)
		c.patch(b)
	}
	if c.tun != nil {
		return c.tun.local.Write(b)
	}
	return c.Conn.Write(b)
}

func (c *greetingConn) Read(b []byte) (int, error) {
	if c.done.Load() {
		return c.Conn.Read(b)
	}
	if !c.checked && c.patched.Load() {
		if err := c.checkFirst(); err != nil {
			return 0, err
		}
	}
	if len(c.pending) > 0 {
		n := copy(b, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	if c.tun != nil {
		return c.tun.local.Read(b)
	}
	return c.readRaw(b)
}

// readRaw reads from the client's socket, within the handshake limit until
// handshakeDone.
func (c *greetingConn) readRaw(b []byte) (int, error) {
	if c.done.Load() {
		return c.Conn.Read(b)
	}
	if c.read >= handshakeReadLimit {
		return 0, errHandshakeTooLarge
	}
	n, err := c.Conn.Read(b[:min(len(b), handshakeReadLimit-c.read)])
	c.read += n
	return n, err
}

// Under the TLS tunnel, go-mysql's connection ends at the tunnel: its
// deadlines and close (after a refused login, while the tunnel may still
// be delivering the ERR) must not reach the client's socket.

func (c *greetingConn) Close() error {
	if c.tun != nil {
		return c.tun.local.Close()
	}
	return c.Conn.Close()
}

func (c *greetingConn) SetDeadline(t time.Time) error {
	if c.tun != nil {
		return nil
	}
	return c.Conn.SetDeadline(t)
}

func (c *greetingConn) SetReadDeadline(t time.Time) error {
	if c.tun != nil {
		return nil
	}
	return c.Conn.SetReadDeadline(t)
}

func (c *greetingConn) SetWriteDeadline(t time.Time) error {
	if c.tun != nil {
		return nil
	}
	return c.Conn.SetWriteDeadline(t)
}

// endTLS ends the login's TLS tunnel, if any, after go-mysql's login
// returned (loginErr): the client's connection for the session is then
// the proxy's TLS (nil without a tunnel), and a login go-mysql accepted
// fails if its OK did not reach the client.
func (c *greetingConn) endTLS(loginErr error) (net.Conn, error) {
	if c.tun == nil {
		return nil, loginErr
	}
	outer, err := c.tun.finish()
	if loginErr != nil {
		return nil, loginErr
	}
	if err != nil {
		return nil, err
	}
	return outer, nil
}

// abortTLS stops a tunnel still running (a panic in the login).
func (c *greetingConn) abortTLS() {
	if c.tun == nil {
		return
	}
	select {
	case <-c.tun.done:
	default:
		c.tun.abort()
		<-c.tun.done
	}
}

// handshakeDone lifts the handshake read limit.
func (c *greetingConn) handshakeDone() { c.done.Store(true) }

// patch edits a greeting packet (header included) in place.
func (c *greetingConn) patch(b []byte) {
	if len(b) < wire.HeaderLen+1 || b[wire.HeaderLen] != 10 {
		return
	}
	p := b[wire.HeaderLen+1:]
	i := bytes.IndexByte(p, 0)
	if i < 0 || len(p) < i+1+4+8+1+2+1+2+2 {
		return
	}
	p = p[i+1:]
	binary.LittleEndian.PutUint32(p, c.connID)
	p = p[4+8+1:] // connection id, scramble part 1, filler
	binary.LittleEndian.PutUint16(p, uint16(c.caps))
	// The upstream's status flags (go-mysql sends none): drivers such as
	// PyMySQL read autocommit from here and skip SET autocommit when it
	// seems already what they want.
	binary.LittleEndian.PutUint16(p[3:], c.status)
	binary.LittleEndian.PutUint16(p[5:], uint16(c.caps>>16)) // after charset and status
}

// RemoteAddr returns the peer host without the port.
func (c *greetingConn) RemoteAddr() net.Addr { return hostAddr{c.Conn.RemoteAddr()} }

type hostAddr struct{ net.Addr }

func (a hostAddr) String() string {
	if host, _, err := net.SplitHostPort(a.Addr.String()); err == nil {
		return host
	}
	return a.Addr.String()
}
