// Package config holds what configures the sandboxes of a proxy process
// (session.Manager): the modes a session may run in, the settings, their
// defaults and validation, and the guardrails each proxy user is held to.
package config

import (
	"fmt"
	"strings"
	"time"
)

// Mode is how a client session uses sandboxes.
type Mode string

// Modes.
const (
	// Transparent puts every session in a sandbox from its start.
	Transparent Mode = "transparent"
	// Explicit reads production until SANDBOX CREATE or ATTACH; writes
	// outside a sandbox are refused unless production writes are allowed.
	Explicit Mode = "explicit"
	// Passthrough is a plain proxy.
	Passthrough Mode = "passthrough"
)

// ParseMode checks a mode name.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(s)); m {
	case Transparent, Explicit, Passthrough:
		return m, nil
	}
	return "", fmt.Errorf("unknown mode %q (want transparent, explicit or passthrough)", s)
}

// Config configures a Manager.
type Config struct {
	// Prefix starts every database the proxy creates (default _sqlfork).
	Prefix string
	// Forker is auto, seekdb or copy.
	Forker string
	// DefaultTTL is how long a kept sandbox lives unless KEEP TTL says
	// otherwise (0: until discarded).
	DefaultTTL time.Duration
	// IdleTTL discards a kept sandbox no connection has used for this
	// long (0: never).
	IdleTTL time.Duration
	// MaxTTL bounds the lifetime a kept sandbox may be given (0: no
	// bound). With it, "until discarded" is refused too.
	MaxTTL time.Duration
	// Grace is how long an unkept named sandbox outlives its last
	// connection (0: it ends with it, like an anonymous one), so that a
	// pool that closes and reopens connections finds it again.
	Grace time.Duration
	// MaxSandboxes bounds the sandboxes alive at once (0: no limit).
	MaxSandboxes int
	// Guardrails apply to every proxy user without an entry in
	// UserGuardrails (their MaxForkBytes bounds each sandbox's forks).
	Guardrails Guardrails
	// UserGuardrails are the guardrails of users who have their own.
	UserGuardrails map[string]Guardrails
	// Admins are proxy users who may see, attach and discard any
	// sandbox.
	Admins []string
	// ReapInterval is how often expiry is checked and leases renewed.
	ReapInterval time.Duration
	// Lease is how long an unkept sandbox survives its proxy process
	// going away without a trace (crash): other processes and the next
	// start drop it after that.
	Lease time.Duration
	// SyncLease is how long a process may trust its table map of a sandbox
	// another process may share, after checking the registry, before it
	// checks again (sandbox/registry/sync.go); a process changing where such a
	// sandbox's table is waits until the other processes' leases ran out.
	// 0: check before every statement that reads production, no waits.
	SyncLease time.Duration
	// ForkTimeout bounds one fork.
	ForkTimeout time.Duration
	// SideConnections bounds the side connections (forks, registry,
	// catalog lookups, reaper) open at once (default 8).
	SideConnections int
	// ForkQueueTimeout bounds the wait for a free side connection (default
	// 2m, at most ForkTimeout); past it the statement gets error 1205.
	ForkQueueTimeout time.Duration
	// NoDiffCapture turns off the capture of each fork's changed rows
	// (capture.go): SANDBOX DIFF then compares every table whole.
	NoDiffCapture bool
	// LazyForkRows: a table of at least this many rows (production's
	// estimate) is forked lazily where it can be — usable at once, its
	// rows copied from a snapshot in the background (sandbox/forking
	// lazy.go); 0: never (every fork is a whole copy).
	LazyForkRows int64
	// LazyForkRate bounds the rows per second a lazy fork's background
	// copy takes from production (0: as fast as it goes), for
	// LazyForkRateFor from the fork (0: until it is whole): past that the
	// copy goes as fast as it can, and the read view its snapshot keeps
	// on production ends.
	LazyForkRate    int64
	LazyForkRateFor time.Duration
}

// DefaultLazyForkRows is the proxy's default LazyForkRows.
const DefaultLazyForkRows = 100000

// DefaultLazyForkRateFor is the proxy's default LazyForkRateFor: a lazy
// fork's snapshot is throttled for an hour at most.
const DefaultLazyForkRateFor = time.Hour

// FillDefaults sets the settings left zero to their defaults.
func (c *Config) FillDefaults() {
	if c.Prefix == "" {
		c.Prefix = "_sqlfork"
	}
	if c.Forker == "" {
		c.Forker = "auto"
	}
	if c.ReapInterval <= 0 {
		c.ReapInterval = 10 * time.Second
	}
	if c.Lease <= 0 {
		c.Lease = 3 * c.ReapInterval
	}
	if c.ForkTimeout <= 0 {
		c.ForkTimeout = 30 * time.Minute
	}
	if c.SideConnections <= 0 {
		c.SideConnections = DefaultSideConnections
	}
	if c.ForkQueueTimeout <= 0 {
		c.ForkQueueTimeout = min(DefaultForkQueueTimeout, c.ForkTimeout)
	}
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	p := c.Prefix
	if p == "" {
		p = "_sqlfork"
	}
	if len(p) > 20 {
		return fmt.Errorf("sandbox prefix %q is longer than 20 characters", p)
	}
	for _, r := range p {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return fmt.Errorf("sandbox prefix %q may hold only lower-case letters, digits and '_'", p)
		}
	}
	switch c.Forker {
	case "", "auto", "seekdb", "copy":
	default:
		return fmt.Errorf("unknown forker %q (want auto, seekdb or copy)", c.Forker)
	}
	if err := c.Guardrails.Validate(); err != nil {
		return err
	}
	for user, g := range c.UserGuardrails {
		if err := g.Validate(); err != nil {
			return fmt.Errorf("user %q: %w", user, err)
		}
	}
	if c.SideConnections < 0 {
		return fmt.Errorf("side-connections must be at least 1 (0: the default %d), got %d", DefaultSideConnections, c.SideConnections)
	}
	forkTimeout := c.ForkTimeout
	if forkTimeout <= 0 {
		forkTimeout = 30 * time.Minute
	}
	if c.ForkQueueTimeout < 0 || c.ForkQueueTimeout > forkTimeout {
		return fmt.Errorf("fork-queue-timeout %s must be between 0 (the default %s) and the fork timeout %s", c.ForkQueueTimeout, DefaultForkQueueTimeout, forkTimeout)
	}
	if c.Grace < 0 {
		return fmt.Errorf("sandbox-grace must not be negative, got %s", c.Grace)
	}
	if c.LazyForkRateFor < 0 {
		return fmt.Errorf("lazy-fork-rate-for must not be negative (0: the rate holds until the fork is whole), got %s", c.LazyForkRateFor)
	}
	if c.LazyForkRows < 0 || c.LazyForkRate < 0 {
		return fmt.Errorf("lazy-fork-rows and lazy-fork-rate must not be negative (0: never lazy; no bound), got %d and %d", c.LazyForkRows, c.LazyForkRate)
	}
	if c.SyncLease < 0 || c.SyncLease > time.Minute {
		return fmt.Errorf("sandbox-sync-lease must be between 0 and 1m (the default is %s), got %s", DefaultSyncLease, c.SyncLease)
	}
	if c.MaxTTL > 0 && (c.DefaultTTL <= 0 || c.DefaultTTL > c.MaxTTL) {
		return fmt.Errorf("sandbox-ttl %s must be between 0 and max-sandbox-ttl %s (\"until discarded\" needs max-sandbox-ttl 0)", c.DefaultTTL, c.MaxTTL)
	}
	return nil
}

// Defaults of the side connection pool.
const (
	// DefaultSyncLease is the proxy's default Config.SyncLease.
	DefaultSyncLease        = 250 * time.Millisecond
	DefaultSideConnections  = 8
	DefaultForkQueueTimeout = 2 * time.Minute
)
