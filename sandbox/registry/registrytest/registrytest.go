// Package registrytest starts sandbox registries on the fake upstream
// (session/sessiontest) for the tests of the registry and of the parts
// built on it. It is for tests only.
package registrytest

import (
	"context"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
)

// Prefix starts the databases the tests' registries make.
const Prefix = "_sqlfork"

// Names are the tests' sandbox names: Prefix, case-sensitive.
var Names = sandbox.Names{Prefix: Prefix, CaseSensitive: true}

// Config is a registry whose reaper waits an hour and whose leases outlast
// any test, with four side connections.
func Config() registry.Config {
	return registry.Config{Prefix: Prefix, Lease: time.Minute, ReapInterval: time.Hour, ForkTimeout: time.Minute,
		SideConnections: 4, ForkQueueTimeout: time.Minute}
}

// Start readies reg, named and limited, as the session manager does:
// Init on a side connection, then Start; reg is closed with the test.
func Start(t testing.TB, reg *registry.Registry) {
	t.Helper()
	ctx := context.Background()
	c, err := reg.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Init(ctx, c); err != nil {
		t.Fatal(err)
	}
	reg.Put(c)
	if err := reg.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Close)
}
