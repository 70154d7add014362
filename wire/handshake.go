package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// SSLRequestLen is the payload length of an SSLRequest: the fixed start of
// a HandshakeResponse41 and nothing else.
const SSLRequestLen = 4 + 4 + 1 + 23

// HandshakeResponse is a client's decoded HandshakeResponse41 (or, with
// only caps and collation set, its SSLRequest).
type HandshakeResponse struct {
	Caps uint32
	// extCaps are a MariaDB client's extended capabilities (no CLIENT_MYSQL
	// in caps).
	ExtCaps   uint32
	Collation uint8
	User      string
	Auth      []byte
	DB        string
	Plugin    string // "" when the client did not name one
	Attrs     map[string]string
	// sslRequest is set for an SSLRequest: the response follows under TLS.
	SSLRequest bool
}

// CheckHandshakeResponse reports why p, the payload of a client's first
// packet after the greeting, is not a well-formed SSLRequest or
// HandshakeResponse41 (parseHandshakeResponse).
func CheckHandshakeResponse(p []byte) error {
	_, err := ParseHandshakeResponse(p)
	return err
}

// ParseHandshakeResponse decodes p, the payload of a client's first packet
// after the greeting, reading every field (user, auth data, database,
// plugin name, connection attributes) with bounds checks: a malformed one
// is answered "Bad handshake" as the server does. The slices it returns do
// not alias p.
func ParseHandshakeResponse(p []byte) (*HandshakeResponse, error) {
	if len(p) < SSLRequestLen {
		return nil, fmt.Errorf("%d bytes, fewer than a handshake response's fixed part", len(p))
	}
	r := &HandshakeResponse{Caps: binary.LittleEndian.Uint32(p), Collation: p[8]}
	if r.Caps&CapProtocol41 == 0 {
		return nil, errors.New("the client does not speak protocol 4.1")
	}
	if r.Caps&CapLongPassword == 0 {
		r.ExtCaps = binary.LittleEndian.Uint32(p[28:])
	}
	if len(p) == SSLRequestLen {
		r.SSLRequest = true
		return r, nil
	}
	rest := p[SSLRequestLen:]
	i := bytes.IndexByte(rest, 0)
	if i < 0 {
		return nil, errors.New("the user name is not NUL-terminated")
	}
	r.User, rest = string(rest[:i]), rest[i+1:]
	auth, rest, err := cutAuthData(rest, r.Caps)
	if err != nil {
		return nil, err
	}
	r.Auth = append([]byte(nil), auth...)
	if r.Caps&CapConnectWithDB != 0 && len(rest) > 0 {
		if i = bytes.IndexByte(rest, 0); i < 0 {
			return nil, errors.New("the database name is not NUL-terminated")
		}
		r.DB, rest = string(rest[:i]), rest[i+1:]
	}
	if r.Caps&CapPluginAuth != 0 {
		if i = bytes.IndexByte(rest, 0); i < 0 {
			return nil, errors.New("the auth plugin name is not NUL-terminated")
		}
		r.Plugin, rest = string(rest[:i]), rest[i+1:]
	}
	if r.Caps&CapConnectAttrs != 0 && len(rest) > 0 && rest[0] != 0xFB {
		if r.Attrs, err = cutAttrs(rest); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// cutAuthData splits the auth data off the start of rest, as caps say it
// is framed.
func cutAuthData(rest []byte, caps uint32) (auth, after []byte, err error) {
	switch {
	case caps&CapPluginAuthLenenc != 0:
		if len(rest) > 0 && rest[0] == 0xFB {
			return nil, nil, errors.New("the auth data is NULL")
		}
		n, size, ok := LenEnc(rest)
		if !ok || n > uint64(len(rest)-size) {
			return nil, nil, errors.New("the auth data's length exceeds the packet")
		}
		return rest[size : size+int(n)], rest[size+int(n):], nil
	case caps&CapSecureConnection != 0:
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
	total, size, ok := LenEnc(rest)
	if !ok || total > uint64(len(rest)-size) {
		return nil, errors.New("the connection attributes' length exceeds the packet")
	}
	attrs := map[string]string{}
	kv := rest[size : size+int(total)]
	for len(kv) > 0 {
		var pair [2]string
		for j := range pair {
			n, size, ok := LenEnc(kv)
			if !ok || n > uint64(len(kv)-size) {
				return nil, errors.New("a connection attribute's length exceeds the packet")
			}
			pair[j], kv = string(kv[size:size+int(n)]), kv[size+int(n):]
		}
		attrs[pair[0]] = pair[1]
	}
	return attrs, nil
}
