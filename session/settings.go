package session

import "github.com/sqlfork/sqlfork-proxy/session/config"

// A Manager's settings are package config's; these names keep them the
// session's own.

// Config configures a Manager (config.Config).
type Config = config.Config

// Guardrails bound what one proxy user's sessions may do (config.Guardrails).
type Guardrails = config.Guardrails

// Mode is how a client session uses sandboxes (config.Mode).
type Mode = config.Mode

// Modes.
const (
	Transparent = config.Transparent
	Explicit    = config.Explicit
	Passthrough = config.Passthrough
)

// ParseMode checks a mode name.
func ParseMode(s string) (Mode, error) { return config.ParseMode(s) }

// Defaults of the side connection pool and the registry sync.
const (
	DefaultSyncLease        = config.DefaultSyncLease
	DefaultSideConnections  = config.DefaultSideConnections
	DefaultForkQueueTimeout = config.DefaultForkQueueTimeout
	DefaultLazyForkRows     = config.DefaultLazyForkRows
	DefaultLazyForkRateFor  = config.DefaultLazyForkRateFor
)

// Guardrail names, as counted in refusals and named in settings.
const (
	GuardDenyStatements      = config.GuardDenyStatements
	GuardDenyMultiStatements = config.GuardDenyMultiStatements
	GuardStatementTimeout    = config.GuardStatementTimeout
	GuardMaxRows             = config.GuardMaxRows
	GuardMaxForkBytes        = config.GuardMaxForkBytes
	GuardMaxSandboxes        = config.GuardMaxSandboxes
)
