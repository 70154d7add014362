// Package config holds the proxy's settings, their documented defaults and
// their validation.
package config

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/sqlfork/sqlfork-proxy/session"
)

// Auth plugin names accepted for proxy users.
const (
	AuthNativePassword      = "mysql_native_password"
	AuthCachingSha2Password = "caching_sha2_password"
)

// Upstream TLS modes, named after the MySQL client's --ssl-mode.
const (
	UpstreamTLSDisabled  = "disabled"
	UpstreamTLSPreferred = "preferred"
	UpstreamTLSRequired  = "required"
	UpstreamTLSVerifyCA  = "verify-ca"
	UpstreamTLSVerifyID  = "verify-identity"
)

// User is an account clients log in to the proxy with, mapped to the upstream
// account the proxy uses on their behalf.
type User struct {
	// Name and Password are what the client presents to the proxy.
	Name     string `yaml:"name"`
	Password string `yaml:"password"`
	// AuthPlugin is the method the proxy asks the client to use:
	// mysql_native_password (default) or caching_sha2_password.
	AuthPlugin string `yaml:"auth_plugin"`
	// UpstreamUser and UpstreamPassword are the credentials used upstream.
	// Empty UpstreamUser means the proxy's default upstream account.
	UpstreamUser     string `yaml:"upstream_user"`
	UpstreamPassword string `yaml:"upstream_password"`
	// Mode overrides the proxy's sandbox mode for this user
	// (transparent, explicit or passthrough).
	Mode string `yaml:"mode"`

	// Guardrails of this user, each replacing the global setting of the
	// same name when set (see session.Guardrails). DenyStatements is a
	// comma-separated list of statement classes ("" denies none).
	DenyStatements      *string        `yaml:"deny_statements"`
	DenyMultiStatements *bool          `yaml:"deny_multi_statements"`
	StatementTimeout    *time.Duration `yaml:"statement_timeout"`
	MaxRows             *int64         `yaml:"max_rows"`
	MaxForkBytes        *int64         `yaml:"max_fork_bytes"`
	MaxSandboxes        *int           `yaml:"max_sandboxes"`
}

// guardrails are the user's guardrails: global with the user's own
// settings in place of the global ones; own reports whether there are any.
func (u User) guardrails(global session.Guardrails) (g session.Guardrails, own bool) {
	g = global
	if u.DenyStatements != nil {
		g.DenyStatements, own = nil, true
		for _, f := range strings.Split(*u.DenyStatements, ",") {
			if f = strings.TrimSpace(f); f != "" {
				g.DenyStatements = append(g.DenyStatements, f)
			}
		}
	}
	if u.DenyMultiStatements != nil {
		g.DenyMultiStatements, own = *u.DenyMultiStatements, true
	}
	if u.StatementTimeout != nil {
		g.StatementTimeout, own = *u.StatementTimeout, true
	}
	if u.MaxRows != nil {
		g.MaxRows, own = *u.MaxRows, true
	}
	if u.MaxForkBytes != nil {
		g.MaxForkBytes, own = *u.MaxForkBytes, true
	}
	if u.MaxSandboxes != nil {
		g.MaxSandboxes, own = *u.MaxSandboxes, true
	}
	return g, own
}

// SandboxConfig is the sandbox configuration of c, with each user's own
// guardrails filled in from Users.
func (c *Config) SandboxConfig() session.Config {
	sc := c.Sandbox
	sc.UserGuardrails = nil
	for _, u := range c.Users {
		if g, own := u.guardrails(c.Sandbox.Guardrails); own {
			if sc.UserGuardrails == nil {
				sc.UserGuardrails = map[string]session.Guardrails{}
			}
			sc.UserGuardrails[u.Name] = g
		}
	}
	return sc
}

// Config holds every setting of the proxy core.
type Config struct {
	// Listen is the client-facing host:port.
	Listen string
	// Upstream is the MySQL/MariaDB server host:port.
	Upstream string
	// UpstreamUser and UpstreamPassword are the default upstream account. A
	// client may log in to the proxy with the same name and password.
	UpstreamUser     string
	UpstreamPassword string
	// PromoteUser and PromotePassword are the upstream account SANDBOX
	// PROMOTE writes production with ("": PROMOTE is refused).
	PromoteUser     string
	PromotePassword string
	// Users are extra proxy accounts, each mapped to upstream credentials.
	Users []User
	// AuthPlugin is the auth method for the default account.
	AuthPlugin string

	// TLSCert and TLSKey enable client-side TLS. TLSRequired refuses
	// clients that do not use it.
	TLSCert     string
	TLSKey      string
	TLSRequired bool

	// UpstreamTLS is one of the UpstreamTLS* modes; UpstreamTLSCA is a PEM
	// file of CAs for verify-ca/verify-identity.
	UpstreamTLS   string
	UpstreamTLSCA string

	// ConnectTimeout bounds dialling and authenticating upstream.
	ConnectTimeout time.Duration
	// HandshakeTimeout bounds the client handshake.
	HandshakeTimeout time.Duration
	// IdleTimeout closes a client connection that sends no command for this
	// long; it also bounds each read from a client in the middle of a command.
	IdleTimeout time.Duration
	// WriteTimeout bounds each write to a client (like MySQL's
	// net_write_timeout), so a client that stops reading cannot hold its
	// session and upstream connection forever.
	WriteTimeout time.Duration
	// ShutdownGrace is how long in-flight statements may run after shutdown starts.
	ShutdownGrace time.Duration
	// MaxConnections caps concurrent client connections (0: no cap).
	MaxConnections int

	// Mode is the sandbox mode: transparent, explicit or passthrough.
	Mode string
	// ProductionWrites is deny or allow: whether explicit-mode sessions
	// outside a sandbox may write production.
	ProductionWrites string
	// UserSeparator splits a login name into user and sandbox
	// (appuser+mysandbox); empty disables the tag.
	UserSeparator string
	// Sandbox configures sandboxes (prefix, forker, TTLs, limits).
	Sandbox session.Config
}

// DefaultSandboxGrace is how long a named sandbox outlives its last
// connection by default (sandbox-grace): long enough for a pool that
// closes its idle connections to open a new one, or for the next test of
// a suite that connects per test.
const DefaultSandboxGrace = 5 * time.Minute

// Default returns the documented defaults.
func Default() Config {
	return Config{
		Listen:           "127.0.0.1:3307",
		Upstream:         "127.0.0.1:3306",
		UpstreamUser:     "root",
		AuthPlugin:       AuthNativePassword,
		UpstreamTLS:      UpstreamTLSDisabled,
		ConnectTimeout:   10 * time.Second,
		HandshakeTimeout: 10 * time.Second,
		IdleTimeout:      8 * time.Hour,
		WriteTimeout:     60 * time.Second,
		ShutdownGrace:    30 * time.Second,
		Mode:             string(session.Transparent),
		ProductionWrites: "deny",
		UserSeparator:    "+",
		Sandbox: session.Config{Prefix: "_sqlfork", Forker: "auto", DefaultTTL: 24 * time.Hour,
			IdleTTL: 7 * 24 * time.Hour, MaxTTL: 30 * 24 * time.Hour, Grace: DefaultSandboxGrace, ReapInterval: 10 * time.Second,
			SyncLease:       session.DefaultSyncLease,
			SideConnections: session.DefaultSideConnections, ForkQueueTimeout: session.DefaultForkQueueTimeout,
			LazyForkRows: session.DefaultLazyForkRows, LazyForkRateFor: session.DefaultLazyForkRateFor},
	}
}

// Validate reports the first bad setting, naming it.
func (c *Config) Validate() error {
	for _, check := range []func() error{c.validEndpoints, c.validTLS, c.validTimeouts, c.validModes, c.validSandbox, c.validUsers} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// validEndpoints checks the listen and upstream addresses, the default
// upstream account and its auth plugin.
func (c *Config) validEndpoints() error {
	if err := validAddr("listen", c.Listen); err != nil {
		return err
	}
	if err := validAddr("upstream", c.Upstream); err != nil {
		return err
	}
	if c.UpstreamUser == "" {
		return errors.New("upstream-user: must not be empty")
	}
	if err := validPlugin("auth-plugin", c.AuthPlugin); err != nil {
		return err
	}
	return nil
}

// validTLS checks the TLS settings towards clients and the upstream.
func (c *Config) validTLS() error {
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return errors.New("tls-cert/tls-key: both must be set, or neither")
	}
	if c.TLSRequired && c.TLSCert == "" {
		return errors.New("tls-required: needs tls-cert and tls-key")
	}
	switch c.UpstreamTLS {
	case UpstreamTLSDisabled, UpstreamTLSPreferred, UpstreamTLSRequired, UpstreamTLSVerifyCA, UpstreamTLSVerifyID:
	default:
		return fmt.Errorf("upstream-tls: %q is not one of disabled, preferred, required, verify-ca, verify-identity", c.UpstreamTLS)
	}
	if c.UpstreamTLSCA != "" && c.UpstreamTLS != UpstreamTLSVerifyCA && c.UpstreamTLS != UpstreamTLSVerifyID {
		return errors.New("upstream-tls-ca: only used with upstream-tls verify-ca or verify-identity")
	}
	return nil
}

// validTimeouts checks the timeouts and the connection limit.
func (c *Config) validTimeouts() error {
	for name, d := range map[string]time.Duration{
		"connect-timeout": c.ConnectTimeout, "handshake-timeout": c.HandshakeTimeout,
		"idle-timeout": c.IdleTimeout, "write-timeout": c.WriteTimeout, "shutdown-grace": c.ShutdownGrace,
	} {
		if d <= 0 {
			return fmt.Errorf("%s: must be positive, got %s", name, d)
		}
	}
	if c.MaxConnections < 0 {
		return fmt.Errorf("max-connections: must be >= 0, got %d", c.MaxConnections)
	}
	return nil
}

// validModes checks the sandbox mode, production-writes and the user
// separator.
func (c *Config) validModes() error {
	if _, err := session.ParseMode(c.Mode); err != nil {
		return fmt.Errorf("mode: %w", err)
	}
	if c.ProductionWrites != "deny" && c.ProductionWrites != "allow" {
		return fmt.Errorf("production-writes: %q is not deny or allow", c.ProductionWrites)
	}
	if len(c.UserSeparator) > 1 {
		return fmt.Errorf("user-separator: %q must be one character or empty", c.UserSeparator)
	}
	return nil
}

// validSandbox checks the sandbox settings: guardrails, limits and side
// connections.
func (c *Config) validSandbox() error {
	if err := c.Sandbox.Guardrails.Validate(); err != nil {
		return err // names the setting
	}
	if err := c.Sandbox.Validate(); err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	if c.Sandbox.MaxSandboxes < 0 {
		return errors.New("max-sandboxes: must be >= 0")
	}
	if c.Sandbox.SideConnections < 1 {
		return fmt.Errorf("side-connections: must be at least 1, got %d", c.Sandbox.SideConnections)
	}
	if c.Sandbox.ForkQueueTimeout <= 0 {
		return fmt.Errorf("fork-queue-timeout: must be positive, got %s", c.Sandbox.ForkQueueTimeout)
	}
	return nil
}

// validUsers checks the declared users: each one named, once, not as the
// default account, and its own settings (validUser).
func (c *Config) validUsers() error {
	seen := map[string]bool{c.UpstreamUser: true}
	for i, u := range c.Users {
		if u.Name == "" {
			return fmt.Errorf("users[%d].name: must not be empty", i)
		}
		if seen[u.Name] {
			return fmt.Errorf("users[%d].name: %q is declared twice (or shadows upstream-user)", i, u.Name)
		}
		seen[u.Name] = true
		if err := c.validUser(i, u); err != nil {
			return err
		}
	}
	return nil
}

// validUser checks the settings of users[i], u: its mode, its name against
// the user separator, its auth plugin and its own guardrails.
func (c *Config) validUser(i int, u User) error {
	if u.Mode != "" {
		if _, err := session.ParseMode(u.Mode); err != nil {
			return fmt.Errorf("users[%d].mode: %w", i, err)
		}
	}
	if c.UserSeparator != "" && strings.Contains(u.Name, c.UserSeparator) {
		return fmt.Errorf("users[%d].name: %q contains the user separator %q", i, u.Name, c.UserSeparator)
	}
	if u.AuthPlugin != "" {
		if err := validPlugin(fmt.Sprintf("users[%d].auth_plugin", i), u.AuthPlugin); err != nil {
			return err
		}
	}
	if g, own := u.guardrails(c.Sandbox.Guardrails); own {
		if err := g.Validate(); err != nil {
			return fmt.Errorf("users[%d] (%s): %w", i, u.Name, err)
		}
	}
	return nil
}

func validAddr(name, addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s: %q is not host:port: %w", name, addr, err)
	}
	_ = host
	if port == "" {
		return fmt.Errorf("%s: %q has no port", name, addr)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return fmt.Errorf("%s: %q has a bad port: %w", name, addr, err)
	}
	return nil
}

func validPlugin(name, p string) error {
	switch p {
	case AuthNativePassword, AuthCachingSha2Password:
		return nil
	}
	return fmt.Errorf("%s: %q is not mysql_native_password or caching_sha2_password", name, p)
}
