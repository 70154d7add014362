package proxy

import "github.com/sqlfork/sqlfork-proxy/proxy/config"

// The proxy's settings are package config's; these names keep them
// reachable as the proxy's own.

// Config holds every setting of the proxy core (config.Config).
type Config = config.Config

// User is an account clients log in to the proxy with (config.User).
type User = config.User

// Auth plugin names accepted for proxy users.
const (
	AuthNativePassword      = config.AuthNativePassword
	AuthCachingSha2Password = config.AuthCachingSha2Password
)

// Upstream TLS modes, named after the MySQL client's --ssl-mode.
const (
	UpstreamTLSDisabled  = config.UpstreamTLSDisabled
	UpstreamTLSPreferred = config.UpstreamTLSPreferred
	UpstreamTLSRequired  = config.UpstreamTLSRequired
	UpstreamTLSVerifyCA  = config.UpstreamTLSVerifyCA
	UpstreamTLSVerifyID  = config.UpstreamTLSVerifyID
)

// DefaultConfig returns the documented defaults (config.Default).
func DefaultConfig() Config { return config.Default() }
