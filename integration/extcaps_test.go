package integration

import (
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// TestMariaDBExtendedMetadataAsDirect (issue 13): the proxy offers MariaDB's
// extended capabilities as the server does, so a MariaDB client sees the
// extended type information of columns through it as directly — JSON's
// format, a geometry's type — in passthrough mode and in a sandbox, for a
// fork's columns too (told back to the logical database).
func TestMariaDBExtendedMetadataAsDirect(t *testing.T) {
	db, _ := env(t)
	admin := openDB(t, db.DSN(""))
	mustExecDB(t, admin, "CREATE DATABASE extmeta")
	t.Cleanup(func() { mustExecDB(t, admin, "DROP DATABASE extmeta") })
	mustExecDB(t, admin, "CREATE TABLE extmeta.types (id INT PRIMARY KEY, j JSON, g POINT)")
	mustExecDB(t, admin, "INSERT INTO extmeta.types VALUES (1, '{\"a\": 1}', POINT(1, 2))")
	cli := mariadbCLI(t)
	script := "SELECT j, g FROM extmeta.types; UPDATE extmeta.types SET id = id; SELECT id, j, g FROM extmeta.types"
	typeInfo := func(addr string) string {
		res := runCLI(t, cli, addr, db.User, db.Password, "", "--column-type-info", "-t", "-e", script)
		if res.exit != 0 {
			t.Fatalf("%s: exit %d: %s", addr, res.exit, res.stderr)
		}
		return res.stdout
	}
	direct := typeInfo(db.Addr)
	if !strings.Contains(direct, "(format=json)") || !strings.Contains(direct, "(type=point)") {
		t.Fatalf("directly, no extended type information:\n%s", direct)
	}
	for _, mode := range []string{"passthrough", "transparent"} {
		t.Run(mode, func(t *testing.T) {
			p := startTestProxy(t, db.Addr, db, func(c *proxy.Config) { c.Mode = mode })
			if got := typeInfo(p.addr); got != direct {
				t.Errorf("through the proxy:\n%s\ndirectly:\n%s", got, direct)
			}
		})
	}
}
