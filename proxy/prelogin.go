package proxy

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/sqlfork/sqlfork-proxy/wire"
)

// sslRequestLen is the payload length of an SSLRequest: the fixed start of
// a HandshakeResponse41 and nothing else.
const sslRequestLen = 4 + 4 + 1 + 23

// errBadHandshake ends a login whose handshake response is malformed; the
// client has been told (ERR 1043).
var errBadHandshake = errors.New("malformed handshake response")

// handshakeResp is a client's decoded HandshakeResponse41 (or, with
// only caps and collation set, its SSLRequest).
type handshakeResp struct {
	caps uint32
	// extCaps are a MariaDB client's extended capabilities (no CLIENT_MYSQL
	// in caps).
	extCaps   uint32
	collation uint8
	user      string
	auth      []byte
	db        string
	plugin    string // "" when the client did not name one
	attrs     map[string]string
	// sslRequest is set for an SSLRequest: the response follows under TLS.
	sslRequest bool
}

// checkHandshakeResponse reports why p, the payload of a client's first
// packet after the greeting, is not a well-formed SSLRequest or
// HandshakeResponse41 (parseHandshakeResponse).
func checkHandshakeResponse(p []byte) error {
	_, err := parseHandshakeResponse(p)
	return err
}

// parseHandshakeResponse decodes p, the payload of a client's first packet
// after the greeting, reading every field (user, auth data, database,
// plugin name, connection attributes) with bounds checks: a malformed one
// is answered "Bad handshake" as the server does. The slices it returns do
// not alias p.
func parseHandshakeResponse(p []byte) (*handshakeResp, error) {
	if len(p) < sslRequestLen {
		return nil, fmt.Errorf("%d bytes, fewer than a handshake response's fixed part", len(p))
	}
	r := &handshakeResp{caps: binary.LittleEndian.Uint32(p), collation: p[8]}
	if r.caps&wire.CapProtocol41 == 0 {
		return nil, errors.New("the client does not speak protocol 4.1")
	}
	if r.caps&wire.CapLongPassword == 0 {
		r.extCaps = binary.LittleEndian.Uint32(p[28:])
	}
	if len(p) == sslRequestLen {
		r.sslRequest = true
		return r, nil
	}
	rest := p[sslRequestLen:]
	i := indexNul(rest)
	if i < 0 {
		return nil, errors.New("the user name is not NUL-terminated")
	}
	r.user, rest = string(rest[:i]), rest[i+1:]
	auth, rest, err := cutAuthData(rest, r.caps)
	if err != nil {
		return nil, err
	}
	r.auth = append([]byte(nil), auth...)
	if r.caps&wire.CapConnectWithDB != 0 && len(rest) > 0 {
		if i = indexNul(rest); i < 0 {
			return nil, errors.New("the database name is not NUL-terminated")
		}
		r.db, rest = string(rest[:i]), rest[i+1:]
	}
	if r.caps&wire.CapPluginAuth != 0 {
		if i = indexNul(rest); i < 0 {
			return nil, errors.New("the auth plugin name is not NUL-terminated")
		}
		r.plugin, rest = string(rest[:i]), rest[i+1:]
	}
	if r.caps&wire.CapConnectAttrs != 0 && len(rest) > 0 && rest[0] != 0xFB {
		if r.attrs, err = cutAttrs(rest); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// cutAuthData splits the auth data off the start of rest, as caps say it
// is framed.
func cutAuthData(rest []byte, caps uint32) (auth, after []byte, err error) {
	switch {
	case caps&wire.CapPluginAuthLenenc != 0:
		if len(rest) > 0 && rest[0] == 0xFB {
			return nil, nil, errors.New("the auth data is NULL")
		}
		n, size, ok := wire.LenEnc(rest)
		if !ok || n > uint64(len(rest)-size) {
			return nil, nil, errors.New("the auth data's length exceeds the packet")
		}
		return rest[size : size+int(n)], rest[size+int(n):], nil
	case caps&wire.CapSecureConnection != 0:
		if len(rest) < 1 || int(rest[0]) > len(rest)-1 {
			return nil, nil, errors.New("the auth data's length exceeds the packet")
		}
		return rest[1 : 1+int(rest[0])], rest[1+int(rest[0]):], nil
	}
	return nil, nil, errors.New("the client does not speak protocol 4.1 with secure authentication")
}

// cutAttrs decodes the connection attributes at the start of rest: their
// total length, then key and value strings within it. Strings running
// past the end of the packet make the response malformed.
func cutAttrs(rest []byte) (map[string]string, error) {
	total, size, ok := wire.LenEnc(rest)
	if !ok || total > uint64(len(rest)-size) {
		return nil, errors.New("the connection attributes' length exceeds the packet")
	}
	attrs := map[string]string{}
	kv := rest[size : size+int(total)]
	for len(kv) > 0 {
		var pair [2]string
		for j := range pair {
			n, size, ok := wire.LenEnc(kv)
			if !ok || n > uint64(len(kv)-size) {
				return nil, errors.New("a connection attribute's length exceeds the packet")
			}
			pair[j], kv = string(kv[size:size+int(n)]), kv[size+int(n):]
		}
		attrs[pair[0]] = pair[1]
	}
	return attrs, nil
}

// badHandshake is the "Bad handshake" ERR packet, header included, that
// answers a malformed handshake response.
func badHandshake(seq byte, why error) []byte {
	e := wire.AppendErr(nil, wire.Error(wire.ErHandshake, "Bad handshake (sqlfork-proxy: %v)", why))
	return append([]byte{byte(len(e)), byte(len(e) >> 8), byte(len(e) >> 16), seq}, e...)
}
