package proxy

import (
	"fmt"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/sqlfork/sqlfork-proxy/wire"
)

// newError builds a MySQL error.
func newError(code uint16, state, format string, args ...any) *mysql.MyError {
	return &mysql.MyError{Code: code, State: state, Message: fmt.Sprintf(format, args...)}
}

// wireOK is an OK packet payload with the given status and warnings and
// nothing else (no affected rows, no info).
func wireOK(status, warnings uint16) []byte {
	return wire.AppendOK(nil, 0, status, warnings, "", false)
}
