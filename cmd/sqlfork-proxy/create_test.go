package main

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
)

// cliProxy is the proxy the CLI's tests talk to: listening on every
// address (connect takes the admin URL's host), login tags with "+".
var cliProxy = adminapi.Proxy{Listen: "0.0.0.0:3307", UserSeparator: "+"}

// Create makes a kept sandbox of any name but "box" (taken), as
// the real one, expiring ttl after cliCreated (sandbox-ttl 24h; 0 none).
func (f *cliSandboxes) Create(_ context.Context, name, owner string, keep *time.Duration) (adminapi.Sandbox, error) {
	ttl := 24 * time.Hour
	if keep != nil {
		ttl = *keep
	}
	f.asked = append(f.asked, "create "+name+" "+owner+" "+ttl.String())
	if name == "box" {
		return adminapi.Sandbox{}, fmt.Errorf(`%w: sandbox exists: a sandbox named "box" already exists (owner sbx); discard it or choose another name`,
			adminapi.ErrConflict)
	}
	b := adminapi.Sandbox{ID: "9f50b5a8", Name: name, State: "kept", Owner: owner, Created: cliCreated()}
	if ttl > 0 {
		e := cliCreated().Add(ttl)
		b.Expires = &e
	}
	return b, nil
}

// TestSandboxCreateConnectCLI: `sandbox create` asks for a kept sandbox of
// an owner (required) and says how to connect; `sandbox connect` prints
// the login, a mariadb command line and DSNs, with the admin URL's host for
// the proxy's wildcard listen address, and never a password.
func TestSandboxCreateConnectCLI(t *testing.T) {
	const connectBox = "sandbox:   box (owner sbx)\n" +
		"login:     sbx+box\n" +
		"mariadb:   mariadb -h 127.0.0.1 -P 3307 -u sbx+box -p\n" +
		"go:        sbx+box:<password>@tcp(127.0.0.1:3307)/\n" +
		"jdbc:      jdbc:mariadb://127.0.0.1:3307/?user=sbx%2Bbox&password=<password>\n" +
		"password:  the proxy user sbx's own (not printed: the mariadb command asks for it)\n"
	tests := []cliCase{
		{"create", []string{"create", "fix", "--owner", "app", "--ttl", "7d"}, nil, 0, "create fix app 168h0m0s",
			"sandbox fix created for app, kept until 2026-12-01T10:00:00Z\nconnect: sqlfork-proxy sandbox connect fix\n", false, ""},
		{"create with sandbox-ttl", []string{"create", "fix", "--owner", "app"}, nil, 0, "create fix app 24h0m0s",
			"kept until 2026-11-25T10:00:00Z\n", true, ""},
		{"create for ever", []string{"create", "fix", "--owner", "app", "--ttl", "0"}, nil, 0, "create fix app 0s",
			"kept until discarded\n", true, ""},
		{"create json", []string{"create", "fix", "--owner", "app", "-o", "json"}, nil, 0, "create fix app 24h0m0s",
			"  \"name\": \"fix\",\n  \"state\": \"kept\",\n  \"owner\": \"app\",\n", true, ""},
		{"create without an owner", []string{"create", "fix"}, nil, 2, "", "", false, `required flag(s) "owner" not set`},
		{"create of a bad name", []string{"create", "fix prices", "--owner", "app"}, nil, 2, "", "", false,
			`sqlfork-proxy: sandbox name "fix prices" may hold only letters, digits, '_' and '-'`},
		{"create with a bad ttl", []string{"create", "fix", "--owner", "app", "--ttl", "soon"}, nil, 2, "", "", false, `--ttl: bad duration "soon"`},
		{"create of a name taken", []string{"create", "box", "--owner", "app"}, nil, 1, "create box app 24h0m0s", "", false,
			`sqlfork-proxy: admin API: conflict: sandbox exists: a sandbox named "box" already exists (owner sbx); discard it or choose another name (HTTP 409)`},
		{"create without the token", []string{"create", "fix", "--owner", "app"}, map[string]string{"SQLFORK_ADMIN_TOKEN": ""}, 1, "", "", false,
			"(HTTP 401)"},
		{"connect", []string{"connect", "box"}, nil, 0, "show box", connectBox, false, ""},
		{"connect to a database, on a host", []string{"connect", "box", "--database", "shop", "--host", "db.example"}, nil, 0, "show box",
			"mariadb:   mariadb -h db.example -P 3307 -u sbx+box -p shop\ngo:        sbx+box:<password>@tcp(db.example:3307)/shop\n" +
				"jdbc:      jdbc:mariadb://db.example:3307/shop?user=sbx%2Bbox&password=<password>\n", true, ""},
		{"connect json", []string{"connect", "box", "-o", "json"}, nil, 0, "show box",
			"{\n  \"sandbox\": \"box\",\n  \"owner\": \"sbx\",\n  \"login\": \"sbx+box\",\n  \"host\": \"127.0.0.1\",\n  \"port\": 3307,\n" +
				"  \"mariadb\": \"mariadb -h 127.0.0.1 -P 3307 -u sbx+box -p\",\n  \"go_dsn\": \"sbx+box:<password>@tcp(127.0.0.1:3307)/\",\n" +
				"  \"jdbc_url\": \"jdbc:mariadb://127.0.0.1:3307/?user=sbx%2Bbox&password=<password>\"\n}\n", false, ""},
		{"connect to a missing sandbox", []string{"connect", "nosuch"}, nil, 1, "show nosuch", "", false, "(HTTP 404)"},
	}
	for _, tc := range tests {
		tc.run(t)
	}
}

// TestConnectionTo: the login and command lines for each way the proxy
// may be set up: no login tags (SANDBOX ATTACH, the connection
// attribute), localhost (TCP, not the client's socket), IPv6, an owner
// that needs quoting in a shell.
func TestConnectionTo(t *testing.T) {
	box := adminapi.Sandbox{Name: "fix", Owner: "app"}
	for _, tc := range []struct {
		name                 string
		s                    adminapi.Sandbox
		sep, host, db        string
		login, attach        string
		mariadb, goDSN, jdbc string
	}{
		{"tags", box, "+", "127.0.0.1", "", "app+fix", "", "mariadb -h 127.0.0.1 -P 3307 -u app+fix -p",
			"app+fix:<password>@tcp(127.0.0.1:3307)/", "jdbc:mariadb://127.0.0.1:3307/?user=app%2Bfix&password=<password>"},
		{"another separator", box, "%", "127.0.0.1", "shop", "app%fix", "", "mariadb -h 127.0.0.1 -P 3307 -u app%fix -p shop",
			"app%fix:<password>@tcp(127.0.0.1:3307)/shop", "jdbc:mariadb://127.0.0.1:3307/shop?user=app%25fix&password=<password>"},
		{"no tags", box, "", "127.0.0.1", "", "app", "SANDBOX ATTACH fix",
			"mariadb -h 127.0.0.1 -P 3307 -u app -p '--init-command=SANDBOX ATTACH fix'",
			"app:<password>@tcp(127.0.0.1:3307)/?connectionAttributes=sqlfork_sandbox%3Afix",
			"jdbc:mariadb://127.0.0.1:3307/?connectionAttributes=sqlfork_sandbox%3Afix&user=app&password=<password>"},
		{"localhost", box, "+", "localhost", "", "app+fix", "", "mariadb -h localhost -P 3307 -u app+fix -p --protocol=tcp",
			"app+fix:<password>@tcp(localhost:3307)/", "jdbc:mariadb://localhost:3307/?user=app%2Bfix&password=<password>"},
		{"IPv6", box, "+", "::1", "", "app+fix", "", "mariadb -h ::1 -P 3307 -u app+fix -p",
			"app+fix:<password>@tcp([::1]:3307)/", "jdbc:mariadb://[::1]:3307/?user=app%2Bfix&password=<password>"},
		{"an owner to quote", adminapi.Sandbox{Name: "fix", Owner: "o'brien"}, "+", "127.0.0.1", "my db", "o'brien+fix", "",
			`mariadb -h 127.0.0.1 -P 3307 -u 'o'\''brien+fix' -p 'my db'`,
			"o'brien+fix:<password>@tcp(127.0.0.1:3307)/my%20db", "jdbc:mariadb://127.0.0.1:3307/my%20db?user=o%27brien%2Bfix&password=<password>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := connectionTo(tc.s, tc.sep, tc.host, 3307, tc.db)
			if c.Login != tc.login || c.Attach != tc.attach || c.MariaDB != tc.mariadb || c.GoDSN != tc.goDSN || c.JDBC != tc.jdbc {
				t.Errorf("got\n%+v\nwant login %q attach %q\n%s\n%s\n%s", c, tc.login, tc.attach, tc.mariadb, tc.goDSN, tc.jdbc)
			}
		})
	}
}

// TestProxyAddr: the proxy's listen host, unless a wildcard (then the
// admin URL's host, else 127.0.0.1) or --host says otherwise.
func TestProxyAddr(t *testing.T) {
	for _, tc := range []struct {
		listen, host, base, want string
	}{
		{"127.0.0.1:3307", "", "http://127.0.0.1:9104", "127.0.0.1:3307"},
		{"10.1.2.3:3306", "", "http://127.0.0.1:9104", "10.1.2.3:3306"},
		{"0.0.0.0:3307", "", "http://proxy.internal:9104", "proxy.internal:3307"},
		{":3307", "", "http://[::1]:9104", "[::1]:3307"},
		{"[::]:3307", "", "http://0.0.0.0:9104", "127.0.0.1:3307"},
		{"0.0.0.0:3307", "db.example", "http://127.0.0.1:9104", "db.example:3307"},
	} {
		h, p, err := proxyAddr(tc.listen, tc.host, tc.base)
		if got := net.JoinHostPort(h, strconv.Itoa(p)); err != nil || got != tc.want {
			t.Errorf("proxyAddr(%q, %q, %q) = %s, %v; want %s", tc.listen, tc.host, tc.base, got, err, tc.want)
		}
	}
	if _, _, err := proxyAddr("3307", "", ""); err == nil {
		t.Error("a listen address without a host:port was taken")
	}
}
