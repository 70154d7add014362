package proxy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/sqlfork/sqlfork-proxy/wire"
)

// sslRequestLen is the payload length of an SSLRequest: the fixed start of
// a HandshakeResponse41 and nothing else.
const sslRequestLen = 4 + 4 + 1 + 23

// errBadHandshake ends a login whose handshake response is malformed; the
// client has been told (ERR 1043).
var errBadHandshake = errors.New("malformed handshake response")

// checkHandshakeResponse reports why p, the payload of a client's first
// packet after the greeting, is not a well-formed SSLRequest or
// HandshakeResponse41, reading every field go-mysql's server reads
// (user, auth data, database, plugin name, connection attributes) with
// bounds checks. go-mysql's own parser trusts the lengths it reads and
// panics on some (a 0xFE auth length, a truncated length-encoded
// attribute); the proxy checks first and answers "Bad handshake" as the
// server does.
func checkHandshakeResponse(p []byte) error {
	if len(p) < sslRequestLen {
		return fmt.Errorf("%d bytes, fewer than a handshake response's fixed part", len(p))
	}
	caps := binary.LittleEndian.Uint32(p)
	if len(p) == sslRequestLen {
		return nil // SSLRequest: the response follows under TLS
	}
	rest := p[sslRequestLen:]
	i := indexNul(rest)
	if i < 0 {
		return errors.New("the user name is not NUL-terminated")
	}
	rest = rest[i+1:]
	switch {
	case caps&wire.CapPluginAuthLenenc != 0:
		if len(rest) > 0 && rest[0] == 0xFB {
			return errors.New("the auth data is NULL")
		}
		n, size, ok := wire.LenEnc(rest)
		if !ok || n > uint64(len(rest)-size) {
			return errors.New("the auth data's length exceeds the packet")
		}
		rest = rest[size+int(n):]
	case caps&wire.CapSecureConnection != 0:
		if len(rest) < 1 || int(rest[0]) > len(rest)-1 {
			return errors.New("the auth data's length exceeds the packet")
		}
		rest = rest[1+int(rest[0]):]
	default:
		return errors.New("the client does not speak protocol 4.1 with secure authentication")
	}
	if caps&wire.CapConnectWithDB != 0 && len(rest) > 0 {
		if i = indexNul(rest); i < 0 {
			return errors.New("the database name is not NUL-terminated")
		}
		rest = rest[i+1:]
	}
	if caps&wire.CapPluginAuth != 0 {
		if i = indexNul(rest); i < 0 {
			return errors.New("the auth plugin name is not NUL-terminated")
		}
		rest = rest[i+1:]
	}
	if caps&wire.CapConnectAttrs != 0 && len(rest) > 0 && rest[0] != 0xFB {
		total, size, ok := wire.LenEnc(rest)
		if !ok || total > uint64(len(rest)-size) {
			return errors.New("the connection attributes' length exceeds the packet")
		}
		// go-mysql reads length-encoded strings up to the end of the
		// packet (or a NULL), not only within the attributes' length.
		for rest = rest[size:]; len(rest) > 0 && rest[0] != 0xFB; {
			n, size, ok := wire.LenEnc(rest)
			if !ok || n > uint64(len(rest)-size) {
				return errors.New("a connection attribute's length exceeds the packet")
			}
			rest = rest[size+int(n):]
		}
	}
	return nil
}

// checkFirst reads the client's first packet after the greeting, checks it
// (checkHandshakeResponse) and keeps it for the reader; a malformed one is
// answered with "Bad handshake" and ends the login.
func (c *greetingConn) checkFirst() error {
	c.checked = true
	hdr := make([]byte, wire.HeaderLen)
	if _, err := io.ReadFull(c.Conn, hdr); err != nil {
		return err
	}
	n := wire.PayloadLen(hdr)
	if n > handshakeReadLimit-wire.HeaderLen {
		return errHandshakeTooLarge
	}
	pkt := make([]byte, wire.HeaderLen+n)
	copy(pkt, hdr)
	if _, err := io.ReadFull(c.Conn, pkt[wire.HeaderLen:]); err != nil {
		return err
	}
	c.read += len(pkt)
	if err := checkHandshakeResponse(pkt[wire.HeaderLen:]); err != nil {
		_, _ = c.Conn.Write(badHandshake(hdr[3]+1, err))
		c.failed = true
		return fmt.Errorf("%w: %v", errBadHandshake, err)
	}
	c.pending = pkt
	if c.term != nil && n == sslRequestLen {
		// go-mysql switches to TLS on an SSLRequest it accepts (protocol
		// 4.1, secure connection); the proxy takes the client's TLS and
		// gives go-mysql its own (tlsbridge.go).
		if caps := binary.LittleEndian.Uint32(pkt[wire.HeaderLen:]); caps&wire.CapProtocol41 != 0 && caps&wire.CapSecureConnection != 0 {
			return c.startTLS(c.deadline)
		}
	}
	return nil
}

// badHandshake is the "Bad handshake" ERR packet, header included, that
// answers a malformed handshake response.
func badHandshake(seq byte, why error) []byte {
	e := wire.AppendErr(nil, newError(wire.ErHandshake, "08S01", "Bad handshake (sqlfork-proxy: %v)", why))
	return append([]byte{byte(len(e)), byte(len(e) >> 8), byte(len(e) >> 16), seq}, e...)
}
