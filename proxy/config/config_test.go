package config

import (
	"strings"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/session"
)

// TestValidate: the defaults are valid, and each bad setting is reported
// by the name an operator sets it with.
func TestValidate(t *testing.T) {
	if c := Default(); c.Validate() != nil {
		t.Fatalf("the defaults are invalid: %v", c.Validate())
	}
	str := func(s string) *string { return &s }
	dur := func(d time.Duration) *time.Duration { return &d }
	for _, tc := range []struct {
		name string
		set  func(c *Config)
		want string // "" valid
	}{
		{"listen", func(c *Config) { c.Listen = "nohost" }, "listen:"},
		{"listen port", func(c *Config) { c.Listen = "127.0.0.1:" }, "has no port"},
		{"listen bad port", func(c *Config) { c.Listen = "127.0.0.1:nosuchservice" }, "has a bad port"},
		{"upstream", func(c *Config) { c.Upstream = "x" }, "upstream:"},
		{"upstream user", func(c *Config) { c.UpstreamUser = "" }, "upstream-user: must not be empty"},
		{"auth plugin", func(c *Config) { c.AuthPlugin = "ed25519" }, "auth-plugin:"},
		{"caching sha2", func(c *Config) { c.AuthPlugin = AuthCachingSha2Password }, ""},
		{"cert without key", func(c *Config) { c.TLSCert = "c.pem" }, "tls-cert/tls-key"},
		{"tls required", func(c *Config) { c.TLSRequired = true }, "tls-required"},
		{"upstream tls", func(c *Config) { c.UpstreamTLS = "always" }, "upstream-tls:"},
		{"upstream ca", func(c *Config) { c.UpstreamTLS, c.UpstreamTLSCA = UpstreamTLSRequired, "ca.pem" }, "upstream-tls-ca"},
		{"verify ca", func(c *Config) { c.UpstreamTLS, c.UpstreamTLSCA = UpstreamTLSVerifyID, "ca.pem" }, ""},
		{"timeout", func(c *Config) { c.IdleTimeout = 0 }, "idle-timeout: must be positive"},
		{"max connections", func(c *Config) { c.MaxConnections = -1 }, "max-connections"},
		{"mode", func(c *Config) { c.Mode = "sometimes" }, "mode:"},
		{"production writes", func(c *Config) { c.ProductionWrites = "maybe" }, "production-writes"},
		{"separator", func(c *Config) { c.UserSeparator = "++" }, "user-separator"},
		{"guardrail", func(c *Config) { c.Sandbox.Guardrails.MaxRows = -1 }, "max"},
		{"max sandboxes", func(c *Config) { c.Sandbox.MaxSandboxes = -1 }, "max-sandboxes"},
		{"side connections", func(c *Config) { c.Sandbox.SideConnections = 0 }, "side-connections"},
		{"fork queue", func(c *Config) { c.Sandbox.ForkQueueTimeout = 0 }, "fork-queue-timeout"},
		{"sandbox", func(c *Config) { c.Sandbox.Prefix = "Upper" }, "sandbox: sandbox prefix"},
		{"user unnamed", func(c *Config) { c.Users = []User{{}} }, "users[0].name: must not be empty"},
		{"user twice", func(c *Config) { c.Users = []User{{Name: "a"}, {Name: "a"}} }, "declared twice"},
		{"user shadows", func(c *Config) { c.Users = []User{{Name: "root"}} }, "declared twice"},
		{"user mode", func(c *Config) { c.Users = []User{{Name: "a", Mode: "x"}} }, "users[0].mode"},
		{"user separator", func(c *Config) { c.Users = []User{{Name: "a+b"}} }, "user separator"},
		{"user plugin", func(c *Config) { c.Users = []User{{Name: "a", AuthPlugin: "x"}} }, "users[0].auth_plugin"},
		{"user guardrail", func(c *Config) { c.Users = []User{{Name: "a", StatementTimeout: dur(-time.Second)}} }, "users[0] (a)"},
		{"user fine", func(c *Config) { c.Users = []User{{Name: "a", Mode: "explicit", DenyStatements: str("ddl")}} }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			tc.set(&c)
			testkit.WantError(t, "Validate", c.Validate(), tc.want)
		})
	}
}

// TestSandboxConfig: a user's own guardrails replace the global ones of
// the same name, and only users that set any get an entry.
func TestSandboxConfig(t *testing.T) {
	c := Default()
	c.Sandbox.Guardrails = session.Guardrails{MaxRows: 10, DenyStatements: []string{"ddl"}}
	deny, multi, rows, bytes, boxes := " ddl , admin,", true, int64(5), int64(7), 2
	timeout := time.Second
	c.Users = []User{{Name: "plain"}, {Name: "own", DenyStatements: &deny, DenyMultiStatements: &multi, StatementTimeout: &timeout,
		MaxRows: &rows, MaxForkBytes: &bytes, MaxSandboxes: &boxes}}
	sc := c.SandboxConfig()
	if _, ok := sc.UserGuardrails["plain"]; ok || len(sc.UserGuardrails) != 1 {
		t.Fatalf("user guardrails: %+v", sc.UserGuardrails)
	}
	g := sc.UserGuardrails["own"]
	if strings.Join(g.DenyStatements, "|") != "ddl|admin" || !g.DenyMultiStatements || g.StatementTimeout != time.Second ||
		g.MaxRows != 5 || g.MaxForkBytes != 7 || g.MaxSandboxes != 2 {
		t.Errorf("own guardrails: %+v", g)
	}
	if sc.Guardrails.MaxRows != 10 {
		t.Errorf("the global guardrails changed: %+v", sc.Guardrails)
	}
}
