package config

import (
	"fmt"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
)

func TestGuardrailsValidate(t *testing.T) {
	for _, tt := range []struct {
		g    Guardrails
		want string // "" when valid
	}{
		{Guardrails{}, ""},
		{Guardrails{DenyStatements: []string{"DDL", "write", "routine"}, StatementTimeout: time.Second, MaxRows: 1}, ""},
		{Guardrails{DenyStatements: []string{"sandbox"}}, `deny-statements: "sandbox" is not a statement class`},
		{Guardrails{DenyStatements: []string{"unparseable"}}, `"unparseable" is not a statement class`},
		{Guardrails{StatementTimeout: -time.Second}, "statement-timeout: must be >= 0"},
		{Guardrails{StatementTimeout: time.Microsecond}, "below the server's resolution"},
		{Guardrails{MaxRows: -1}, "max-rows"},
		{Guardrails{MaxForkBytes: -1}, "max-fork-bytes"},
		{Guardrails{MaxSandboxes: -1}, "max-sandboxes-per-user"},
	} {
		testkit.WantError(t, fmt.Sprintf("%+v", tt.g), tt.g.Validate(), tt.want)
	}
}

func TestConfigValidateTTLs(t *testing.T) {
	for _, tt := range []struct {
		def, max time.Duration
		ok       bool
	}{
		{24 * time.Hour, 720 * time.Hour, true},
		{0, 0, true},
		{24 * time.Hour, 0, true},
		{0, 720 * time.Hour, false},
		{1000 * time.Hour, 720 * time.Hour, false},
	} {
		c := Config{DefaultTTL: tt.def, MaxTTL: tt.max}
		if err := c.Validate(); (err == nil) != tt.ok {
			t.Errorf("sandbox-ttl %s, max-sandbox-ttl %s: Validate() = %v", tt.def, tt.max, err)
		}
	}
}

func TestParseMode(t *testing.T) {
	for _, m := range []string{"transparent", "EXPLICIT", "passthrough"} {
		if _, err := ParseMode(m); err != nil {
			t.Errorf("%s: %v", m, err)
		}
	}
	if _, err := ParseMode("sandbox"); err == nil {
		t.Error("unknown mode accepted")
	}
}

// TestConfigValidate: each bad setting is refused naming it.
func TestConfigValidate(t *testing.T) {
	for _, tt := range []struct {
		c    Config
		want string // "" when valid
	}{
		{Config{}, ""},
		{Config{Prefix: "_a_very_long_prefix_x"}, "longer than 20"},
		{Config{Prefix: "Upper"}, "lower-case letters"},
		{Config{Forker: "rsync"}, "unknown forker"},
		{Config{Guardrails: Guardrails{MaxRows: -1}}, "max-rows"},
		{Config{UserGuardrails: map[string]Guardrails{"bob": {MaxRows: -1}}}, `user "bob": max-rows`},
		{Config{SideConnections: -1}, "side-connections"},
		{Config{ForkQueueTimeout: time.Hour}, "fork-queue-timeout"},
		{Config{ForkTimeout: time.Minute, ForkQueueTimeout: 2 * time.Minute}, "fork timeout 1m0s"},
		{Config{Grace: -time.Second}, "sandbox-grace"},
		{Config{SyncLease: 2 * time.Minute}, "sandbox-sync-lease"},
		{Config{LazyForkRate: -1}, "lazy-fork-rate must not be negative"},
		{Config{LazyForkRows: -1}, "lazy-fork-rows and"},
	} {
		testkit.WantError(t, fmt.Sprintf("%+v", tt.c), tt.c.Validate(), tt.want)
	}
}

// TestFillDefaults: settings left zero get their defaults, and the fork
// queue's wait never exceeds the fork timeout; set ones are kept.
func TestFillDefaults(t *testing.T) {
	c := Config{}
	c.FillDefaults()
	if c.Prefix != "_sqlfork" || c.Forker != "auto" || c.ReapInterval != 10*time.Second || c.Lease != 30*time.Second ||
		c.ForkTimeout != 30*time.Minute || c.SideConnections != DefaultSideConnections || c.ForkQueueTimeout != DefaultForkQueueTimeout {
		t.Errorf("defaults: %+v", c)
	}
	c = Config{Prefix: "p", ReapInterval: time.Second, ForkTimeout: time.Minute, SideConnections: 2}
	c.FillDefaults()
	if c.Prefix != "p" || c.Lease != 3*time.Second || c.ForkQueueTimeout != time.Minute || c.SideConnections != 2 {
		t.Errorf("set settings: %+v", c)
	}
}
