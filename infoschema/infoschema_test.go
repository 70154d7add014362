package infoschema

import (
	"errors"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
)

func TestOwnOnly(t *testing.T) {
	e := rewrite.NewEngine(0)
	for _, c := range []struct {
		sql      string
		prepared bool
		full     bool
		code     uint16 // 0: answered by the proxy
		none     bool   // not a process list
	}{
		{sql: "SHOW PROCESSLIST"},
		{sql: "show full processlist", full: true},
		{sql: "SHOW PROCESSLIST", prepared: true, code: 1295},
		{sql: "SELECT 1; SHOW PROCESSLIST", code: 1290},
		{sql: "SHOW TABLES", none: true},
		{sql: "SHOW DATABASES", none: true},
		{sql: "SELECT 1; SHOW DATABASES", code: 1290},
		{sql: "SHOW ENGINE INNODB STATUS", code: 1290},
		{sql: "SELECT 1; SHOW TABLE_STATISTICS", code: 1290},
	} {
		pl, err := OwnOnly(e.Analyze(c.sql, rewrite.Options{}), c.prepared)
		var r *rewrite.Refusal
		switch {
		case c.code != 0:
			if !errors.As(err, &r) || r.Code != c.code {
				t.Errorf("%q: %v, want refusal %d", c.sql, err, c.code)
			}
		case err != nil:
			t.Errorf("%q: %v", c.sql, err)
		case c.none != (pl == nil):
			t.Errorf("%q: process list %+v", c.sql, pl)
		case pl != nil && (pl.Full != c.full || !strings.Contains(pl.SQL(), "PROCESSLIST") || strings.Contains(pl.SQL(), "FULL") != c.full):
			t.Errorf("%q: %+v runs %q", c.sql, pl, pl.SQL())
		}
	}
}

func TestInfoSchemaKnown(t *testing.T) {
	for _, v := range Views {
		if !Known(strings.ToLower(v.Name)) {
			t.Errorf("mirrored %s is not known", v.Name)
		}
	}
	for name, want := range map[string]bool{
		"ENGINES": true, "character_sets": true, "ROUTINES": true, "user_variables": true,
		"PROCESSLIST": false, "INNODB_TRX": false, "GEOMETRY_COLUMNS": false, "KEY_PERIOD_USAGE": false,
		"VIEW_TABLE_USAGE": false, "no_such_table": false,
	} {
		if Known(name) != want {
			t.Errorf("infoSchemaKnown(%q) = %v", name, !want)
		}
		st := rewrite.Statement{Reads: []rewrite.Table{{DB: "information_schema", Name: name}}}
		if refused := ServerWide(st) != ""; refused == want {
			t.Errorf("serverWide(information_schema.%s) refused: %v", name, refused)
		}
	}
}
