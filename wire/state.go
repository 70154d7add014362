package wire

import (
	"fmt"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// State is the SQLSTATE the server sends with error code: go-mysql's copy
// of the server's table, with the codes it lacks that the proxy sends
// (MariaDB's own, and the proxy's use of a malformed packet as a
// connection error), and HY000 for any other.
func State(code uint16) string {
	switch code {
	case ErSubqueriesNotSupported:
		return "42000"
	case ErMalformedPacket:
		return "08S01"
	}
	if s, ok := mysql.MySQLState[code]; ok {
		return s
	}
	return "HY000"
}

// Error is the error the proxy sends with code, its SQLSTATE (State) and
// message.
func Error(code uint16, format string, args ...any) *mysql.MyError {
	return &mysql.MyError{Code: code, State: State(code), Message: fmt.Sprintf(format, args...)}
}
