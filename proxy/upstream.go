package proxy

import (
	"bufio"
	"context"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"sort"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/sqlfork/sqlfork-proxy/wire"
)

const (
	upstreamReadBuf  = 32 << 10
	upstreamWriteBuf = 16 << 10
	// handshakeLimit bounds packets read during authentication.
	handshakeLimit = 1 << 20
)

// Upstream auth plugin names beyond the ones proxy users may use.
const (
	authSha256Password = "sha256_password"
	authClearPassword  = "mysql_clear_password"
	authEd25519        = "client_ed25519"
	// authDialog is MariaDB's PAM dialog, which sends the password in clear.
	authDialog = "dialog"
	// authOldPassword is the pre-4.1 scramble, relayed only.
	authOldPassword = "mysql_old_password"
)

// dialParams describes one upstream connection to open.
type dialParams struct {
	addr      string
	user      string
	password  string
	db        string
	collation uint8
	// caps are the client's capability flags, and extCaps its MariaDB
	// extended ones; the upstream gets the relayable subset both sides
	// support.
	caps, extCaps uint32
	attrs         map[string]string
	tls           *tls.Config
	tlsMust       bool
	timeout       time.Duration
}

// backend is an authenticated upstream connection.
type backend struct {
	conn net.Conn
	// extCaps are the MariaDB extended capabilities the session
	// negotiated (wire.ExtCap…).
	extCaps uint32
	// socket is the TCP connection under conn (conn itself unless TLS).
	socket   net.Conn
	r        *bufio.Reader
	w        *bufio.Writer
	greeting *wire.Greeting
	caps     uint32
	status   uint16
	usingTLS bool
}

func (b *backend) close() { _ = b.conn.Close() }

// response follows an answer of shape on b, in the layout the session
// negotiated (CLIENT_DEPRECATE_EOF or not).
func (b *backend) response(shape wire.Shape, cursor bool) *wire.Response {
	r := wire.NewResponse(shape, cursor)
	if b.caps&wire.CapDeprecateEOF != 0 {
		r.DeprecateEOF()
	}
	if b.extCaps&wire.ExtCapProgress != 0 {
		r.Progress()
	}
	if b.extCaps&wire.ExtCapCacheMetadata != 0 {
		r.CacheMetadata()
	}
	r.Status = b.status
	return r
}

// dialBackend opens and authenticates an upstream connection. A refusal
// by the server comes back as *mysql.MyError, as the server sent it.
func dialBackend(ctx context.Context, p dialParams) (*backend, error) {
	b, err := openBackend(ctx, p.addr, p.timeout)
	if err != nil {
		return nil, err
	}
	if err := b.login(ctx, p); err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

// openBackend dials the upstream and reads its greeting, the first half of
// dialBackend: a client's login does it before greeting the client, so an
// unreachable upstream is reported in place of the greeting, as a server
// refusing connections does.
func openBackend(ctx context.Context, addr string, timeout time.Duration) (*backend, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dial upstream %s: %w", addr, err)
	}
	b := &backend{conn: conn, socket: conn, r: bufio.NewReaderSize(conn, upstreamReadBuf), w: bufio.NewWriterSize(conn, upstreamWriteBuf)}
	err = b.withDeadline(ctx, func() error {
		payload, _, err := wire.ReadPacket(b.r, nil, handshakeLimit)
		if err != nil {
			return fmt.Errorf("read upstream greeting: %w", err)
		}
		if b.greeting, err = wire.ParseGreeting(payload); err != nil {
			return err
		}
		if g := b.greeting; g.Caps&wire.CapProtocol41 == 0 || g.Caps&wire.CapSecureConnection == 0 {
			return fmt.Errorf("upstream %s (%s) does not speak protocol 4.1", addr, g.Version)
		}
		return nil
	})
	if err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

// login authenticates an opened backend (see openBackend) as p says.
func (b *backend) login(ctx context.Context, p dialParams) error {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	return b.withDeadline(ctx, func() error { return b.handshake(p) })
}

// withDeadline runs f with ctx's deadline on the connection, aborting its
// blocking I/O if ctx is cancelled early, and clears the deadline after.
func (b *backend) withDeadline(ctx context.Context, f func() error) error {
	deadline, _ := ctx.Deadline()
	_ = b.conn.SetDeadline(deadline)
	conn := b.conn
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	err := f()
	stop()
	_ = b.conn.SetDeadline(time.Time{})
	return err
}

// handshake answers the upstream's greeting (read by openBackend):
// TLS if configured, then authentication.
func (b *backend) handshake(p dialParams) error {
	seq, err := b.negotiate(p)
	if err != nil {
		return err
	}
	g := b.greeting
	plugin := g.AuthPlugin
	auth, err := b.authResponse(plugin, g.Salt, p.password)
	if err != nil {
		return err
	}
	if err := b.sendResponse(p, seq, plugin, auth); err != nil {
		return err
	}
	return b.authLoop(plugin, g.Salt, p.password)
}

// negotiate settles the login's capability flags (b.caps) and switches to
// TLS when configured and offered; seq is the sequence number of the
// handshake response to send next.
func (b *backend) negotiate(p dialParams) (seq uint8, err error) {
	g := b.greeting
	seq = 1 // after the greeting's
	caps := p.caps & g.Caps & relayedCaps
	caps |= wire.CapProtocol41 | wire.CapSecureConnection | wire.CapLongPassword&g.Caps
	caps &^= wire.CapConnectWithDB | wire.CapConnectAttrs | wire.CapPluginAuth | wire.CapPluginAuthLenenc
	caps |= g.Caps & (wire.CapPluginAuth | wire.CapPluginAuthLenenc)
	if p.db != "" {
		caps |= wire.CapConnectWithDB
	}
	if len(p.attrs) > 0 && g.Caps&wire.CapConnectAttrs != 0 {
		caps |= wire.CapConnectAttrs
	}
	if caps&wire.CapLongPassword == 0 { // MariaDB: extended capabilities
		b.extCaps = p.extCaps & g.ExtCaps & relayedExtCaps
	}
	if p.tls != nil && g.Caps&wire.CapSSL != 0 {
		caps |= wire.CapSSL
		req := handshakeHead(caps, p.collation)
		binary.LittleEndian.PutUint32(req[28:], b.extCaps) // the server takes them from here under TLS
		if seq, err = wire.WritePacket(b.w, seq, req); err == nil {
			err = b.w.Flush()
		}
		if err != nil {
			return 0, fmt.Errorf("send upstream SSL request: %w", err)
		}
		tc := tls.Client(b.conn, p.tls)
		if err := tc.Handshake(); err != nil {
			return 0, fmt.Errorf("upstream TLS handshake: %w", err)
		}
		b.conn = tc
		b.r.Reset(tc)
		b.w.Reset(tc)
		b.usingTLS = true
	} else if p.tlsMust {
		return 0, fmt.Errorf("upstream %s does not offer TLS, which upstream-tls requires", p.addr)
	}
	b.caps = caps
	return seq, nil
}

// sendResponse sends the HandshakeResponse41 for p's user and database
// with the auth data auth of plugin, as packet seq.
func (b *backend) sendResponse(p dialParams, seq uint8, plugin string, auth []byte) error {
	caps := b.caps
	pkt := handshakeHead(caps, p.collation)
	binary.LittleEndian.PutUint32(pkt[28:], b.extCaps) // MariaDB's, in the reserved bytes
	pkt = append(pkt, p.user...)
	pkt = append(pkt, 0)
	if caps&wire.CapPluginAuthLenenc != 0 {
		pkt = wire.AppendLenEnc(pkt, uint64(len(auth)))
	} else {
		if len(auth) > 255 {
			return errors.New("auth response too long for upstream")
		}
		pkt = append(pkt, byte(len(auth)))
	}
	pkt = append(pkt, auth...)
	if caps&wire.CapConnectWithDB != 0 {
		pkt = append(pkt, p.db...)
		pkt = append(pkt, 0)
	}
	if caps&wire.CapPluginAuth != 0 {
		pkt = append(pkt, plugin...)
		pkt = append(pkt, 0)
	}
	if caps&wire.CapConnectAttrs != 0 {
		pkt = appendAttrs(pkt, p.attrs)
	}
	return b.sendAs("upstream handshake response", seq, pkt)
}

// handshakeHead is the fixed start of a HandshakeResponse41 (and the whole
// of an SSLRequest).
func handshakeHead(caps uint32, collation uint8) []byte {
	b := make([]byte, 32, 128)
	b[0], b[1], b[2], b[3] = byte(caps), byte(caps>>8), byte(caps>>16), byte(caps>>24)
	b[7] = 1 // max packet size 16 MiB
	b[8] = collation
	return b
}

func appendAttrs(b []byte, attrs map[string]string) []byte {
	keys := make([]string, 0, len(attrs))
	for k := range attrs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var kv []byte
	for _, k := range keys {
		kv = wire.AppendLenEnc(kv, uint64(len(k)))
		kv = append(kv, k...)
		kv = wire.AppendLenEnc(kv, uint64(len(attrs[k])))
		kv = append(kv, attrs[k]...)
	}
	b = wire.AppendLenEnc(b, uint64(len(kv)))
	return append(b, kv...)
}

// authResponse computes the first auth response for plugin.
func (b *backend) authResponse(plugin string, salt []byte, password string) ([]byte, error) {
	switch plugin {
	case AuthNativePassword:
		if len(salt) < 20 {
			return nil, fmt.Errorf("%w: short scramble", wire.ErrMalformed)
		}
		return mysql.CalcNativePassword(salt[:20], []byte(password)), nil
	case AuthCachingSha2Password:
		return mysql.CalcCachingSha2Password(salt, []byte(password)), nil
	case authEd25519:
		if password == "" {
			return nil, nil
		}
		return mysql.CalcEd25519Password(salt, password)
	case authClearPassword:
		if !b.usingTLS {
			return nil, errors.New("upstream asks for mysql_clear_password over a connection without TLS; enable upstream-tls")
		}
		return append([]byte(password), 0), nil
	case authSha256Password:
		if password == "" {
			return []byte{0}, nil
		}
		if b.usingTLS {
			return append([]byte(password), 0), nil
		}
		return []byte{1}, nil // request the server's public key
	}
	return nil, fmt.Errorf("upstream auth plugin %q is not supported", plugin)
}

// authLoop reads authentication results until OK or ERR, answering auth
// switches and the caching_sha2/sha256 exchanges.
func (b *backend) authLoop(plugin string, salt []byte, password string) error {
	switched := false
	for {
		p, seq, err := wire.ReadPacket(b.r, nil, handshakeLimit)
		if err != nil {
			return fmt.Errorf("read upstream auth result: %w", err)
		}
		if len(p) == 0 {
			return fmt.Errorf("%w: empty auth packet", wire.ErrMalformed)
		}
		var reply []byte
		switch p[0] {
		case wire.OKHeader:
			if st, ok := wire.OKStatus(p); ok {
				b.status = st
			}
			return nil
		case wire.ErrHeader:
			return wire.ParseErr(p)
		case wire.EOFHeader: // auth switch request
			if switched {
				return errors.New("upstream switched auth plugin twice")
			}
			switched = true
			rest := p[1:]
			i := indexNul(rest)
			if i < 0 {
				return fmt.Errorf("%w: auth switch request", wire.ErrMalformed)
			}
			plugin = string(rest[:i])
			salt = rest[i+1:]
			if n := len(salt); n > 0 && salt[n-1] == 0 {
				salt = salt[:n-1]
			}
			salt = append([]byte(nil), salt...)
			if reply, err = b.authResponse(plugin, salt, password); err != nil {
				return err
			}
		case 0x01: // more data
			if reply, err = b.moreAuthData(plugin, p[1:], salt, password); err != nil {
				return err
			}
			if reply == nil {
				continue
			}
		default:
			return fmt.Errorf("%w: unexpected auth packet 0x%02x", wire.ErrMalformed, p[0])
		}
		if err := b.writeAuth(seq+1, reply); err != nil {
			return err
		}
	}
}

// moreAuthData answers an AuthMoreData packet; nil means read on.
func (b *backend) moreAuthData(plugin string, data, salt []byte, password string) ([]byte, error) {
	switch {
	case plugin == AuthCachingSha2Password && len(data) == 1 && data[0] == 3: // fast auth OK
		return nil, nil
	case plugin == AuthCachingSha2Password && len(data) == 1 && data[0] == 4: // full auth
		if b.usingTLS {
			return append([]byte(password), 0), nil
		}
		return []byte{2}, nil // request public key
	case plugin == AuthCachingSha2Password || plugin == authSha256Password: // public key
		block, _ := pem.Decode(data)
		if block == nil {
			return nil, fmt.Errorf("%w: upstream public key", wire.ErrMalformed)
		}
		pub, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("upstream public key: %w", err)
		}
		rsaPub, ok := pub.(*rsa.PublicKey)
		if !ok {
			return nil, errors.New("upstream public key is not RSA")
		}
		return mysql.EncryptPassword(password, salt, rsaPub)
	}
	return nil, fmt.Errorf("%w: unexpected auth data for %s", wire.ErrMalformed, plugin)
}

// changeUser runs COM_CHANGE_USER upstream with new credentials.
func (b *backend) changeUser(user, password, db string, collation uint8, attrs map[string]string) error {
	g := b.greeting
	plugin := g.AuthPlugin
	auth, err := b.authResponse(plugin, g.Salt, password)
	if err != nil {
		return err
	}
	if err := b.sendChangeUser(user, auth, plugin, db, collation, attrs); err != nil {
		return err
	}
	return b.authLoop(plugin, g.Salt, password)
}

// sendChangeUser sends COM_CHANGE_USER with the auth data auth of plugin;
// the server's answer is left to read.
func (b *backend) sendChangeUser(user string, auth []byte, plugin, db string, collation uint8, attrs map[string]string) error {
	pkt := []byte{wire.ComChangeUser}
	pkt = append(pkt, user...)
	pkt = append(pkt, 0)
	if len(auth) > 255 {
		return errors.New("auth response too long for upstream")
	}
	pkt = append(pkt, byte(len(auth)))
	pkt = append(pkt, auth...)
	pkt = append(pkt, db...)
	pkt = append(pkt, 0, collation, 0)
	if b.caps&wire.CapPluginAuth != 0 {
		pkt = append(pkt, plugin...)
		pkt = append(pkt, 0)
	}
	if b.caps&wire.CapConnectAttrs != 0 {
		pkt = appendAttrs(pkt, attrs)
	}
	return b.sendAs("upstream COM_CHANGE_USER", 0, pkt)
}

func indexNul(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return -1
}
