package main

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/sqlfork/sqlfork-proxy/metrics"
	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// TestReloadAppliesGrace: SIGHUP applies a changed sandbox-grace at once,
// like the other sandbox limits, rather than asking for a restart.
func TestReloadAppliesGrace(t *testing.T) {
	cur := reloadable()
	next := cur
	next.Proxy.Sandbox.Grace = 90 * time.Second
	eff, logs := reload(t, cur, next)
	if eff.Proxy.Sandbox.Grace != 90*time.Second {
		t.Errorf("grace in effect after the reload: %s, want 1m30s", eff.Proxy.Sandbox.Grace)
	}
	var applied []string
	for _, e := range logs.All() {
		if e.Message == "SIGHUP: settings changed that take effect only after a restart" || e.Level > zap.InfoLevel {
			t.Errorf("reload logged %q %v", e.Message, e.ContextMap())
		}
		if e.Message == "SIGHUP: settings reloaded" {
			for _, v := range e.ContextMap()["applied"].([]any) {
				applied = append(applied, v.(string))
			}
		}
	}
	if !slices.Contains(applied, "sandbox-grace") {
		t.Errorf("applied settings %q, want sandbox-grace among them", applied)
	}
}

// reloadable is settings a proxy runs with, with no upstream needed.
func reloadable() settings {
	cur := defaultSettings()
	cur.Proxy.Listen = "127.0.0.1:0"
	cur.Proxy.Mode = "passthrough" // no sandbox manager, no upstream needed
	return cur
}

// reload runs a proxy with cur, reloads next into it and returns the
// settings in effect and the reload's logs.
func reload(t *testing.T, cur, next settings) (settings, *observer.ObservedLogs) {
	t.Helper()
	srv, err := proxy.New(cur.Proxy, zap.NewNop(), metrics.New(prometheus.NewRegistry()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-done }) // closes the listener
	core, logs := observer.New(zap.InfoLevel)
	eff := applyReload(cur, func() (settings, error) { return next, nil }, zap.NewAtomicLevel(), srv, func(byteSize) {}, zap.New(core))
	return eff, logs
}

// TestReloadWarnsOfShadowedSettings: a reload whose config file sets a
// value a flag or an environment variable overrides says so.
func TestReloadWarnsOfShadowedSettings(t *testing.T) {
	cur := reloadable()
	next := cur
	next.Shadowed = []string{"lazy-fork-rate"}
	_, logs := reload(t, cur, next)
	warned := logs.FilterMessageSnippet("a flag or an environment variable overrides").All()
	if len(warned) != 1 || !slices.Equal(warned[0].ContextMap()["settings"].([]any), []any{"lazy-fork-rate"}) {
		t.Errorf("reload logs %v, want one warning naming lazy-fork-rate", logs.All())
	}
}
