package sandbox

import (
	"strings"

	"github.com/sqlfork/sqlfork-proxy/sqlname"
)

// systemSchemas are the server's own databases: nothing that names them is
// exported or promoted, and a sandbox's DDL may not change them.
var systemSchemas = map[string]bool{"mysql": true, "sys": true, "performance_schema": true, "information_schema": true}

// IsSystemSchema reports one of the server's own databases (any case).
func IsSystemSchema(db string) bool { return systemSchemas[strings.ToLower(db)] }

// WithDB is t in db when t names no database.
func WithDB(t sqlname.Table, db string) sqlname.Table {
	if t.DB == "" {
		t.DB = db
	}
	return t
}
