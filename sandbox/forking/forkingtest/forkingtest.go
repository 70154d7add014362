// Package forkingtest builds, on the fake upstream (session/sessiontest),
// what session.New builds a sandbox Forker from, for the tests of the
// Forker and of the parts built on it. It does not import package forking,
// so that forking's own tests can use it: the caller makes the Forker
// (forking.New) from the Parts. It is for tests only.
package forkingtest

import (
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/catalog"
	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/capture"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry/registrytest"
	"github.com/sqlfork/sqlfork-proxy/session/sessiontest"
)

// Parts are one proxy process's registry on the fake upstream, started
// and closed with the test, and what a Forker reads production and
// records captures with.
type Parts struct {
	Names    sandbox.Names
	Registry *registry.Registry
	Engine   *rewrite.Engine
	Server   rewrite.Server
	Triggers catalog.Triggers
	Captures *capture.Tracker // off, as the fake keeps no side tables
	Catalog  *catalog.Objects
	Strategy forker.Strategy
}

// New builds the Parts on up with the strategy named (copy or seekdb), as
// session.New does, with registrytest's prefix and names and a registry
// whose leases and reaper outlast any test.
func New(t testing.TB, up *sessiontest.Upstream, strategy string) Parts {
	t.Helper()
	log := zap.NewNop()
	p := Parts{Names: registrytest.Names, Engine: rewrite.NewEngine(0), Server: rewrite.ParseServer(sessiontest.DefaultVersion)}
	p.Registry = registry.New(registry.Config{Prefix: registrytest.Prefix, Lease: time.Hour, ReapInterval: time.Hour,
		ForkTimeout: time.Minute, SideConnections: 4, ForkQueueTimeout: time.Minute}, up.Dialer(), log,
		func(string, int) error { return nil })
	p.Registry.SetNames(p.Names)
	registrytest.Start(t, p.Registry)
	p.Triggers = catalog.Triggers{Engine: p.Engine, CaseSensitive: p.Names.CaseSensitive, Server: p.Server}
	p.Captures = capture.New(capture.Config{Prefix: registrytest.Prefix, NoDiffCapture: true}, log, p.Names, p.Registry)
	p.Catalog = catalog.NewObjects(p.Names, p.Registry, p.Engine, p.Server)
	st, err := forker.New(strategy)
	if err != nil {
		t.Fatal(err)
	}
	p.Strategy = st
	return p
}
