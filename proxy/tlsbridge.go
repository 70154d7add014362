package proxy

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"

	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Client TLS is terminated by the proxy: when a client answers the greeting
// with an SSLRequest, the login (login.go) completes the TLS handshake on
// the client's socket with the proxy's certificate, reads the handshake
// response and the rest of the login from that TLS connection, and hands
// it to the session. The login reads whole packets and nothing past them,
// so a command the client pipelines after its handshake response stays in
// the TLS connection for the session. Exchanges that send the password in
// clear (caching_sha2_password's full authentication over TLS) are safe
// between client and proxy; towards the upstream the proxy sends it only
// over TLS or RSA-encrypted (relayauth.go).

// startTLS answers the client's SSLRequest r: the client's TLS handshake
// with the proxy's certificate, after which the login reads and writes
// through TLS.
func (l *clientLogin) startTLS(r *wire.HandshakeResponse) error {
	if l.srv.tlsConf == nil {
		return l.badHandshake(errors.New("an SSLRequest, but TLS is not enabled on sqlfork-proxy"))
	}
	if r.Caps&wire.CapSecureConnection == 0 {
		return l.badHandshake(errors.New("the client does not speak protocol 4.1 with secure authentication"))
	}
	tc := tls.Server(l.sock, l.srv.tlsConf)
	if err := tc.Handshake(); err != nil {
		return fmt.Errorf("client TLS handshake: %w", err)
	}
	l.conn, l.tls = tc, true
	return nil
}

// checkTunneled checks the HandshakeResponse a client sent under TLS.
func checkTunneled(p []byte) error {
	if len(p) == wire.SSLRequestLen {
		return errors.New("an SSLRequest inside TLS")
	}
	return wire.CheckHandshakeResponse(p)
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
