package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// TestShowWarningsAsDirect: SHOW WARNINGS in a sandbox, which the proxy
// answers itself (to tell the sandbox's names back), comes with the
// server's column definitions — Code an integer — and the same rows as
// directly.
func TestShowWarningsAsDirect(t *testing.T) {
	db, _ := env(t)
	p := startTestProxy(t, db.Addr, db, func(c *proxy.Config) { c.Mode = "transparent" })
	show := func(dsn string) string {
		pool := openDB(t, dsn)
		conn, err := pool.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(context.Background(), "DO 1/0, CAST('x' AS SIGNED)"); err != nil {
			t.Fatal(err)
		}
		rows, err := conn.QueryContext(context.Background(), "SHOW WARNINGS")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		types, err := rows.ColumnTypes()
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, ct := range types {
			n, _ := ct.Nullable()
			fmt.Fprintf(&b, "%s %s nullable=%v; ", ct.Name(), ct.DatabaseTypeName(), n)
		}
		for rows.Next() {
			var level, msg string
			var code int
			if err := rows.Scan(&level, &code, &msg); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "\n%s %d %s", level, code, msg)
		}
		return b.String()
	}
	direct, proxied := show(directDSN(db, "app")), show(p.dsn("app"))
	if !strings.Contains(direct, "Code UNSIGNED INT") || !strings.Contains(direct, "1365") {
		t.Fatalf("directly: %s", direct)
	}
	if proxied != direct {
		t.Errorf("through a sandbox:\n%s\ndirectly:\n%s", proxied, direct)
	}
}
