package proxy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync/atomic"

	"github.com/go-mysql-org/go-mysql/mysql"

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
	// extCaps are MariaDB's extended capabilities (wire.ExtCap…), when
	// the server is MariaDB (no CLIENT_MYSQL in caps).
	extCaps uint32
}

// parseGreeting decodes a protocol-10 initial handshake payload.
func parseGreeting(p []byte) (*greeting, error) {
	if len(p) > 0 && p[0] == wire.ErrHeader {
		return nil, &refusedGreeting{MyError: wire.ParseErr(p), payload: append([]byte(nil), p...)}
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
		if g.caps&wire.CapLongPassword == 0 { // CLIENT_MYSQL unset: MariaDB
			g.extCaps = binary.LittleEndian.Uint32(p[12:])
		}
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

// relayedExtCaps are the MariaDB extended capabilities the relay follows:
// progress reports, bulk operations (COM_STMT_BULK_EXECUTE), extended type
// information in column definitions and result sets that skip metadata the
// client has. Not offered: COM_MULTI (gone since 10.6).
const relayedExtCaps = wire.ExtCapProgress | wire.ExtCapBulkOperations | wire.ExtCapExtendedMetadata | wire.ExtCapCacheMetadata

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

// refusedGreeting is a server's error in place of its greeting (1040 too
// many connections, a blocked host), with the packet as it was sent: the
// server writes it before it knows the client's capabilities, so without
// the SQLSTATE marker of protocol 4.1, and drivers compare its text
// ("Error 1040: Too many connections", go-sql-driver's TestConcurrent).
type refusedGreeting struct {
	*mysql.MyError
	payload []byte
}

func (e *refusedGreeting) Unwrap() error { return e.MyError }

// proxyConnIDBase bounds the thread ids a MySQL/MariaDB server hands out
// in practice: an id at or above it names no upstream thread.
const proxyConnIDBase = 1 << 31

// handshakeReadLimit bounds what a client may send before it has logged
// in. go-mysql joins continuation packets without limit; this keeps an
// unauthenticated peer from making the proxy buffer gigabytes.
const handshakeReadLimit = 1 << 20

// errHandshakeTooLarge ends a login that sends more than handshakeReadLimit.
var errHandshakeTooLarge = errors.New("client sent more than 1 MiB before logging in")

// appendGreeting appends the greeting the proxy sends a client, header
// included, for an upstream that greeted with g: the upstream's version,
// collation, status flags, scramble and default auth plugin (so the
// client's auth data can be passed upstream as it is), with the
// capabilities caps and the connection id connID. MariaDB's extended
// capabilities (the last four reserved bytes) are none: the proxy relays
// none of them.
func appendGreeting(b []byte, g *greeting, caps, connID uint32) []byte {
	p := []byte{10}
	p = append(p, g.version...)
	p = append(p, 0)
	p = binary.LittleEndian.AppendUint32(p, connID)
	salt := g.salt
	p = append(p, salt[:min(8, len(salt))]...)
	for range 8 - min(8, len(salt)) {
		p = append(p, 0)
	}
	p = append(p, 0) // filler
	p = binary.LittleEndian.AppendUint16(p, uint16(caps))
	p = append(p, g.collation)
	p = binary.LittleEndian.AppendUint16(p, g.status)
	p = binary.LittleEndian.AppendUint16(p, uint16(caps>>16))
	p = append(p, byte(max(21, len(salt)+1)))
	p = append(p, make([]byte, 6)...)
	var ext uint32
	if caps&wire.CapLongPassword == 0 { // as the MariaDB upstream: extended capabilities
		ext = g.extCaps & relayedExtCaps
	}
	p = binary.LittleEndian.AppendUint32(p, ext)
	part2 := []byte{}
	if len(salt) > 8 {
		part2 = salt[8:]
	}
	p = append(p, part2...)
	for range 12 - min(12, len(part2)) {
		p = append(p, 0) // the server's scramble is 20 bytes; pad a shorter one
	}
	p = append(p, 0)
	p = append(p, g.authPlugin...)
	p = append(p, 0)
	b = append(b, byte(len(p)), byte(len(p)>>8), byte(len(p)>>16), 0)
	return append(b, p...)
}

// loginSocket is the client's socket during and after the login: reads
// count toward the handshake limit until done is set (then they cost one
// atomic load), and the peer's address has no port, as in MySQL's error
// messages.
type loginSocket struct {
	net.Conn
	read int // bytes read during the handshake (one reader goroutine)
	done atomic.Bool
}

func (c *loginSocket) Read(b []byte) (int, error) {
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

// handshakeDone lifts the handshake read limit.
func (c *loginSocket) handshakeDone() { c.done.Store(true) }

// RemoteAddr returns the peer host without the port.
func (c *loginSocket) RemoteAddr() net.Addr { return hostAddr{c.Conn.RemoteAddr()} }

type hostAddr struct{ net.Addr }

func (a hostAddr) String() string {
	if host, _, err := net.SplitHostPort(a.Addr.String()); err == nil {
		return host
	}
	return a.Addr.String()
}
