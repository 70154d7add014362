package proxy

import (
	"encoding/binary"
	"fmt"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// Error codes the proxy itself sends. All are server codes: client
// libraries take an ERR packet carrying one of their own codes (2000–2999)
// for a malformed packet (libmariadb reports 2027), so where a direct
// connection would have made the client produce one (the server lost), the
// proxy closes the connection instead and lets the client say it.
const (
	codeUnknownCom         = 1047 // ER_UNKNOWN_COM_ERROR
	codeAccessDenied       = 1045 // ER_ACCESS_DENIED_ERROR
	codeNotSupportedAuth   = 1251 // ER_NOT_SUPPORTED_AUTH_MODE
	codeConCount           = 1040 // ER_CON_COUNT_ERROR
	codeServerShutdown     = 1053 // ER_SERVER_SHUTDOWN
	codeSecureTransportReq = 3159 // ER_SECURE_TRANSPORT_REQUIRED
	codeHandshakeError     = 1043 // ER_HANDSHAKE_ERROR
	// codeUpstreamUnavailable is ER_CONNECT_TO_FOREIGN_DATA_SOURCE: the
	// upstream cannot be reached or refused the proxy's own login.
	codeUpstreamUnavailable = 1429
)

// newError builds a MySQL error.
func newError(code uint16, state, format string, args ...any) *mysql.MyError {
	return &mysql.MyError{Code: code, State: state, Message: fmt.Sprintf(format, args...)}
}

// parseErrPacket decodes an ERR packet payload.
func parseErrPacket(p []byte) *mysql.MyError {
	e := &mysql.MyError{Code: mysql.ER_UNKNOWN_ERROR, State: "HY000"}
	if len(p) < 3 || p[0] != errHeader {
		e.Message = "malformed error packet from upstream"
		return e
	}
	e.Code = binary.LittleEndian.Uint16(p[1:])
	rest := p[3:]
	if len(rest) >= 6 && rest[0] == '#' {
		e.State = string(rest[1:6])
		rest = rest[6:]
	}
	e.Message = string(rest)
	return e
}

// errPayload encodes e as an ERR packet payload (protocol 4.1).
func errPayload(e *mysql.MyError) []byte {
	state := e.State
	if len(state) != 5 {
		state = "HY000"
	}
	b := make([]byte, 0, 9+len(e.Message))
	b = append(b, errHeader, byte(e.Code), byte(e.Code>>8), '#')
	b = append(b, state...)
	return append(b, e.Message...)
}

// okPayload encodes an OK packet with the given status and no session state.
func okPayload(status, warnings uint16) []byte {
	return []byte{okHeader, 0, 0, byte(status), byte(status >> 8), byte(warnings), byte(warnings >> 8)}
}
