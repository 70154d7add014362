package sideconn

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// textModes are the sql_mode flags that change how the server reads a
// statement's text or writes a definition (SHOW CREATE …): a side
// connection, which inherits the server's global sql_mode, drops them, so
// that the proxy's statements read as written and the definitions it reads
// back are whole. The combination modes (ANSI, ORACLE, …) stand for some
// of them.
var textModes = map[string]bool{
	"ANSI_QUOTES": true, "NO_BACKSLASH_ESCAPES": true, "PIPES_AS_CONCAT": true, "IGNORE_SPACE": true,
	"HIGH_NOT_PRECEDENCE": true, "EMPTY_STRING_IS_NULL": true, "SIMULTANEOUS_ASSIGNMENT": true,
	"NO_KEY_OPTIONS": true, "NO_TABLE_OPTIONS": true, "NO_FIELD_OPTIONS": true, "MYSQL323": true, "MYSQL40": true,
	"ANSI": true, "ORACLE": true, "MSSQL": true, "DB2": true, "POSTGRESQL": true, "MAXDB": true,
}

// PlainTextMode takes textModes out of c's sql_mode, and has SHOW CREATE
// quote every name (sql_quote_show_create, which a server may turn off
// globally): the definitions the proxy reads back (tabledef) are read by
// their back-quoted names.
func PlainTextMode(ctx context.Context, c Conn) error {
	rows, err := c.Query(ctx, "SELECT @@sql_mode, @@sql_quote_show_create")
	if err != nil || len(rows) != 1 || len(rows[0]) != 2 {
		return err
	}
	var keep, set []string
	changed := false
	for _, f := range strings.Split(Str(rows[0][0]), ",") {
		if textModes[strings.ToUpper(f)] {
			changed = true
			continue
		}
		keep = append(keep, f)
	}
	if changed {
		set = append(set, "sql_mode = "+quote.String(strings.Join(keep, ",")))
	}
	if Str(rows[0][1]) != "1" {
		set = append(set, "sql_quote_show_create = 1")
	}
	if len(set) == 0 {
		return nil
	}
	_, err = c.Exec(ctx, "SET SESSION "+strings.Join(set, ", "))
	return err
}

// DialError is a side connection that could not be opened (the upstream
// down, or refusing it: 1040 too many connections). Size is the pool's.
type DialError struct {
	Err  error
	Size int
}

// Error describes the failed dial.
func (e *DialError) Error() string { return "open a side connection to the upstream: " + e.Err.Error() }

// MySQLError is the error a client gets: the upstream's own code when it
// refused the connection (1040 says what to size), else 1105.
func (e *DialError) MySQLError() (uint16, string, string) {
	var me *mysql.MyError
	if !errors.As(e.Err, &me) {
		return wire.ErUnknown, wire.State(wire.ErUnknown), "sqlfork-proxy: could not open a side connection (for forks and the sandbox registry) to the upstream: " +
			e.Err.Error() + "; retry the statement"
	}
	msg := "sqlfork-proxy: the upstream refused a side connection (for forks and the sandbox registry): " + me.Message
	if me.Code == wire.ErConCount {
		msg += fmt.Sprintf("; its max_connections must cover every client connection plus the proxy's %d side connections "+
			"(side-connections): retry the statement, or ask the operator to raise the upstream's max_connections or lower "+
			"the proxy's max-connections", e.Size)
	}
	return me.Code, me.State, msg
}

// Unwrap returns the dial error.
func (e *DialError) Unwrap() error { return e.Err }
