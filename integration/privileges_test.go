package integration

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/grants"
	"github.com/sqlfork/sqlfork-proxy/integration/sqlrows"
)

// privConn is a forker.Conn over one database/sql connection.
type privConn struct{ c *sql.Conn }

func (p privConn) Exec(ctx context.Context, q string) (uint64, error) {
	r, err := p.c.ExecContext(ctx, q)
	if err != nil {
		return 0, err
	}
	n, err := r.RowsAffected()
	return uint64(n), err
}

func (p privConn) Query(ctx context.Context, q string) ([][]*string, error) {
	rows, err := p.c.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	return sqlrows.Text(rows)
}

// TestProductionWritable logs in as accounts with various grants and checks
// what session.ProductionWritable says about each.
func TestProductionWritable(t *testing.T) {
	db, _ := env(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	root := openDB(t, db.DSN("")+"?multiStatements=true")
	const pw = "pw-secret"
	users := []string{"pw_all", "pw_ro", "pw_rosv", "pw_ins", "pw_exec", "pw_role", "pw_roleoff", "pw_nested", "pw_unesc", "pw_gopt"}
	roles := []string{"pw_upd", "pw_outer", "pw_inner"}
	drop := func() {
		for _, u := range users {
			_, _ = root.Exec("DROP USER IF EXISTS '" + u + "'@'%'")
		}
		for _, r := range roles {
			_, _ = root.Exec("DROP ROLE IF EXISTS " + r)
		}
		_, _ = root.Exec("DROP DATABASE IF EXISTS pw_app")
	}
	drop()
	t.Cleanup(drop)
	setup := `
CREATE DATABASE pw_app;
CREATE TABLE pw_app.t (id INT PRIMARY KEY, v INT);
CREATE FUNCTION pw_app.f() RETURNS INT DETERMINISTIC RETURN 1;
CREATE ROLE pw_upd; GRANT UPDATE ON pw_app.* TO pw_upd;
CREATE ROLE pw_inner; GRANT DELETE ON pw_app.t TO pw_inner;
CREATE ROLE pw_outer; GRANT SELECT ON pw_app.* TO pw_outer; GRANT pw_inner TO pw_outer;
`
	for _, u := range users {
		setup += fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED BY '%s';\n", u, pw)
	}
	setup += "GRANT ALL PRIVILEGES ON *.* TO 'pw_all'@'%';\n" +
		"GRANT SELECT ON pw_app.* TO 'pw_ro'@'%'; GRANT ALL PRIVILEGES ON `\\_sqlfork%`.* TO 'pw_ro'@'%';\n" +
		"GRANT SELECT, SHOW VIEW ON pw_app.* TO 'pw_rosv'@'%'; GRANT ALL PRIVILEGES ON `\\_sqlfork%`.* TO 'pw_rosv'@'%'; GRANT SELECT ON mysql.func TO 'pw_rosv'@'%';\n" +
		"GRANT SELECT, INSERT ON pw_app.t TO 'pw_ins'@'%';\n" +
		"GRANT EXECUTE ON FUNCTION pw_app.f TO 'pw_exec'@'%';\n" +
		"GRANT SELECT ON pw_app.* TO 'pw_role'@'%'; GRANT pw_upd TO 'pw_role'@'%'; SET DEFAULT ROLE pw_upd FOR 'pw_role'@'%';\n" +
		"GRANT SELECT ON pw_app.* TO 'pw_roleoff'@'%'; GRANT pw_upd TO 'pw_roleoff'@'%';\n" +
		"GRANT pw_outer TO 'pw_nested'@'%'; SET DEFAULT ROLE pw_outer FOR 'pw_nested'@'%';\n" +
		"GRANT SELECT ON pw_app.* TO 'pw_unesc'@'%'; GRANT ALL PRIVILEGES ON `_sqlfork%`.* TO 'pw_unesc'@'%';\n" +
		"GRANT SELECT ON pw_app.* TO 'pw_gopt'@'%'; GRANT ALL PRIVILEGES ON `\\_sqlfork%`.* TO 'pw_gopt'@'%' WITH GRANT OPTION;\n"
	if _, err := root.ExecContext(ctx, setup); err != nil {
		t.Fatalf("setup: %s", mysqlErr(err))
	}

	tests := []struct {
		user string
		role string   // CURRENT_ROLE() before and after; "" is NULL
		want []string // nil: production is read-only
	}{
		{user: "pw_all", want: []string{"ALL PRIVILEGES ON *.* TO `pw_all`@`%`"}},
		{user: "pw_ro"},
		{user: "pw_rosv"},
		{user: "pw_ins", want: []string{"INSERT ON `pw_app`.`t` TO `pw_ins`@`%`"}},
		{user: "pw_exec", want: []string{"EXECUTE ON FUNCTION `pw_app`.`f` TO `pw_exec`@`%`"}},
		{user: "pw_role", role: "pw_upd", want: []string{"UPDATE ON `pw_app`.* TO `pw_upd`"}},
		{user: "pw_roleoff", want: []string{"UPDATE ON `pw_app`.* TO `pw_upd`"}},
		{user: "pw_nested", role: "pw_outer", want: []string{"DELETE ON `pw_app`.`t` TO `pw_inner`"}},
		{user: "pw_unesc", want: []string{"ALL PRIVILEGES ON `_sqlfork%`.* TO `pw_unesc`@`%`"}},
		{user: "pw_gopt", want: []string{"GRANT OPTION ON `\\_sqlfork%`.* TO `pw_gopt`@`%`"}},
	}
	for _, tc := range tests {
		t.Run(tc.user, func(t *testing.T) {
			udb := openDB(t, fmt.Sprintf("%s:%s@tcp(%s)/", tc.user, pw, db.Addr))
			c, err := udb.Conn(ctx)
			if err != nil {
				t.Fatalf("log in as %s: %s", tc.user, mysqlErr(err))
			}
			defer c.Close()
			currentRole := func() string {
				var r sql.NullString
				if err := c.QueryRowContext(ctx, "SELECT CURRENT_ROLE()").Scan(&r); err != nil {
					t.Fatal(err)
				}
				return r.String
			}
			if r := currentRole(); r != tc.role {
				t.Fatalf("current role before: %q, want %q", r, tc.role)
			}
			writable, why, err := grants.ProductionWritable(ctx, privConn{c}, "_sqlfork")
			if err != nil {
				t.Fatalf("ProductionWritable: %v", err)
			}
			t.Logf("%s: writable=%v why=%q", tc.user, writable, why)
			if writable != (tc.want != nil) || !reflect.DeepEqual(why, tc.want) {
				t.Errorf("got %v %q, want %v %q", writable, why, tc.want != nil, tc.want)
			}
			if r := currentRole(); r != tc.role {
				t.Errorf("current role after: %q, want %q (restored)", r, tc.role)
			}
		})
	}
}
