package sandbox

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sqlfork/sqlfork-proxy/sqlname"
)

// TestSchema: short names are kept; long ones are cut on a UTF-8 boundary
// and hashed, so two long names never share a schema.
func TestSchema(t *testing.T) {
	if got := Schema("_sqlfork", "0123abcd", "app"); got != "_sqlfork_0123abcd_app" {
		t.Errorf("got %q", got)
	}
	long := strings.Repeat("é", 40) // 80 bytes
	a, b := Schema("_sqlfork", "0123abcd", long), Schema("_sqlfork", "0123abcd", long+"x")
	for _, s := range []string{a, b} {
		if len(s) > MaxIdent || !strings.HasPrefix(s, SchemaPrefix("_sqlfork", "0123abcd")) || !utf8.ValidString(s) {
			t.Errorf("long db gives %q (%d bytes)", s, len(s))
		}
	}
	if a == b {
		t.Error("different long names map to the same schema")
	}
	if got := MetaSchema("_p"); got != "_p_meta" {
		t.Errorf("MetaSchema: %q", got)
	}
}

// TestNames: keys, normal forms and physical tables follow the server's
// case rule; proxy schemas are recognized by prefix in any case.
func TestNames(t *testing.T) {
	app := sqlname.Table{DB: "App", Name: "T1"}
	for _, c := range []struct {
		n                 Names
		key               string
		norm, phys        sqlname.Table
		proxyUpper, other bool
	}{
		{Names{Prefix: "_sqlfork"}, "app\x00t1", sqlname.Table{DB: "app", Name: "t1"},
			sqlname.Table{DB: "_sqlfork_id_app", Name: "t1"}, true, false},
		{Names{Prefix: "_sqlfork", CaseSensitive: true}, "App\x00T1", app,
			sqlname.Table{DB: "_sqlfork_id_App", Name: "T1"}, true, false},
	} {
		if got := c.n.Key(app); got != c.key {
			t.Errorf("%+v Key: %q, want %q", c.n, got, c.key)
		}
		if got := c.n.Norm(app); got != c.norm {
			t.Errorf("%+v Norm: %v", c.n, got)
		}
		if got := c.n.Physical("id", app); got != c.phys {
			t.Errorf("%+v Physical: %v", c.n, got)
		}
		if c.n.IsProxySchema("_SQLFORK_x") != c.proxyUpper || c.n.IsProxySchema("app") != c.other {
			t.Errorf("%+v IsProxySchema", c.n)
		}
		if got := c.n.Q("sandboxes"); got != "`_sqlfork_meta`.sandboxes" {
			t.Errorf("Q: %s", got)
		}
	}
}

// TestSystemSchemas: the server's own databases in any case, and a table
// without a database takes the one given.
func TestSystemSchemas(t *testing.T) {
	for db, want := range map[string]bool{"mysql": true, "SYS": true, "Performance_Schema": true, "information_schema": true, "app": false, "mysql2": false} {
		if IsSystemSchema(db) != want {
			t.Errorf("IsSystemSchema(%q) != %v", db, want)
		}
	}
	if got := WithDB(sqlname.Table{Name: "t"}, "app"); got != (sqlname.Table{DB: "app", Name: "t"}) {
		t.Errorf("WithDB: %v", got)
	}
	if got := WithDB(sqlname.Table{DB: "x", Name: "t"}, "app"); got.DB != "x" {
		t.Errorf("WithDB kept no database: %v", got)
	}
}
