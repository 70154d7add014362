package proxy

import (
	"errors"

	"github.com/sqlfork/sqlfork-proxy/wire"
)

// errBadHandshake ends a login whose handshake response is malformed; the
// client has been told (ERR 1043).
var errBadHandshake = errors.New("malformed handshake response")

// badHandshake is the "Bad handshake" ERR packet, header included, that
// answers a malformed handshake response.
func badHandshake(seq byte, why error) []byte {
	e := wire.AppendErr(nil, wire.Error(wire.ErHandshake, "Bad handshake (sqlfork-proxy: %v)", why))
	return append([]byte{byte(len(e)), byte(len(e) >> 8), byte(len(e) >> 16), seq}, e...)
}
