package proxy

import "github.com/sqlfork/sqlfork-proxy/wire"

// wireOK is an OK packet payload with the given status and warnings and
// nothing else (no affected rows, no info).
func wireOK(status, warnings uint16) []byte {
	return wire.AppendOK(nil, 0, status, warnings, "", false)
}
