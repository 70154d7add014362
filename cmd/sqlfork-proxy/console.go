package main

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
	"github.com/sqlfork/sqlfork-proxy/console"
	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// newConsole is the web console (/ui/) of settings s, beside the admin API
// api serves with: the same sandboxes and rules, the proxy's metrics g,
// readiness ready and accounts' checks.
func newConsole(s settings, api adminapi.Options, g prometheus.Gatherer, ready func(context.Context) error,
	checks func(context.Context) []console.Check, log *zap.Logger) (*console.Console, error) {
	ver, rev := buildVersion()
	return console.New(console.Options{API: api, Upstream: s.Proxy.Upstream, Mode: s.Proxy.Mode, Version: ver + " (" + rev + ")",
		Ready: ready, Checks: checks, Gatherer: g, Logger: log})
}

// accountChecks are the checks of the accounts srv uses, as the console
// shows them: whether the upstream account may change production (what
// the sandbox manager found when it started), and whether a promote
// account is set.
func accountChecks(s settings, srv *proxy.Server) func(context.Context) []console.Check {
	return func(context.Context) []console.Check {
		up := console.Check{Role: "upstream account", Account: s.Proxy.UpstreamUser, Status: console.CheckUnknown,
			Summary: "not checked yet: the check runs when the sandboxes start (the first sandboxed login, or /readyz)"}
		if m := srv.Sandboxes(); m != nil {
			switch known, writable, grants := m.ProductionWritable(); {
			case !known:
				up.Summary = "the check could not run (the proxy's log says why)"
			case writable:
				up.Status, up.Details = console.CheckWarn, grants
				up.Summary = "can change production: only the proxy keeps sandboxes from writing it; grant it SELECT on production instead"
			default:
				up.Status, up.Summary = console.CheckOK, "cannot change production (least privilege): sandboxes cannot write it even past the proxy"
			}
		}
		promote := console.Check{Role: "promote account", Account: s.Proxy.PromoteUser, Status: console.CheckOK,
			Summary: "PROMOTE writes production as this account"}
		if s.Proxy.PromoteUser == "" {
			promote.Status = console.CheckWarn
			promote.Summary = "none set: PROMOTE is refused until the proxy starts with --promote-user and --promote-password"
		}
		return []console.Check{up, promote}
	}
}
