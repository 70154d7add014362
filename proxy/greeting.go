package proxy

import (
	"errors"
	"net"
	"sync/atomic"

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

// proxyConnIDBase bounds the thread ids a MySQL/MariaDB server hands out
// in practice: an id at or above it names no upstream thread.
const proxyConnIDBase = 1 << 31

// handshakeReadLimit bounds what a client may send before it has logged
// in. go-mysql joins continuation packets without limit; this keeps an
// unauthenticated peer from making the proxy buffer gigabytes.
const handshakeReadLimit = 1 << 20

// errHandshakeTooLarge ends a login that sends more than handshakeReadLimit.
var errHandshakeTooLarge = errors.New("client sent more than 1 MiB before logging in")

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

// appendGreeting appends the greeting the proxy sends a client with caps,
// from the upstream's g: MariaDB's extended capabilities the relay passes
// through, when the client may see them (no CLIENT_MYSQL).
func appendGreeting(b []byte, g *wire.Greeting, caps, connID uint32) []byte {
	var ext uint32
	if caps&wire.CapLongPassword == 0 { // as the MariaDB upstream: extended capabilities
		ext = g.ExtCaps & relayedExtCaps
	}
	return wire.AppendGreeting(b, g, caps, ext, connID)
}
