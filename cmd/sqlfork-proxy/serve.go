package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"reflect"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
	"github.com/sqlfork/sqlfork-proxy/console"
	"github.com/sqlfork/sqlfork-proxy/metrics"
	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// metricsShutdownTimeout bounds the wait for in-flight metrics requests at exit.
const metricsShutdownTimeout = 5 * time.Second

// runServe runs the proxy with s until ctx is cancelled or SIGTERM/SIGINT
// arrives, logging to logOut. A second signal kills the process at once.
func runServe(ctx context.Context, s settings, logOut io.Writer, reload func() (settings, error)) error {
	level := zap.NewAtomicLevel()
	log, err := newLogger(s.LogFormat, s.LogLevel, logOut, level)
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()

	// The limit in force before (GOMEMLIMIT's, or none) comes back when
	// memory-limit is 0 and when serving ends.
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	mem := func(limit byteSize) { applyMemoryLimit(limit, before, log) }
	mem(s.MemoryLimit)

	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
	defer stop()
	// Once ctx ends, restore default signal handling: a second signal kills.
	defer context.AfterFunc(ctx, stop)()

	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	ver, rev := buildVersion()
	m.SetBuildInfo(ver, rev, runtime.Version())
	s.Proxy.Sandbox.NoDiffCapture = !s.DiffCapture
	srv, err := proxy.New(s.Proxy, log, m)
	if err != nil {
		return fmt.Errorf("starting proxy: %w", err)
	}

	metricsAddr, stopMetrics, err := serveMetrics(ctx, s, reg, srv, log)
	if err != nil {
		return err // names the metrics listener
	}

	log.Info("listening",
		zap.String("listen", srv.Addr().String()),
		zap.String("upstream", s.Proxy.Upstream),
		zap.String("metrics", metricsAddr),
		zap.String("version", ver),
		zap.String("commit", rev))

	if reload != nil {
		defer reloadOnHangup(ctx, s, reload, level, srv, mem, log)()
	}

	serveErr := srv.Serve(ctx)

	if stopMetrics != nil {
		shutdownMetrics(ctx, stopMetrics, log)
	}
	if serveErr != nil {
		return fmt.Errorf("serving: %w", serveErr)
	}
	reason := "server returned"
	if cause := context.Cause(ctx); cause != nil {
		reason = cause.Error() // names the signal, if one ended ctx
	}
	log.Info("stopped", zap.String("reason", reason))
	return nil
}

// serveMetrics starts the metrics listener of s, if it has one: its address
// ("disabled" without one) and the function that stops it (nil without).
func serveMetrics(ctx context.Context, s settings, reg *prometheus.Registry, srv *proxy.Server, log *zap.Logger) (string, func(context.Context) error, error) {
	if s.MetricsListen == "" {
		return "disabled", nil, nil
	}
	mux, con, err := metricsListenerMux(s, reg, srv.Ready, srv.Admin(), accountChecks(s, srv), log)
	if err != nil {
		return "", nil, err
	}
	// Metrics outlive ctx: they keep answering while the proxy drains.
	addr, shutdown, err := metrics.Serve(context.WithoutCancel(ctx), s.MetricsListen, mux, log)
	if err != nil {
		return "", nil, err
	}
	if con != nil {
		go con.Run(ctx) // samples the metrics for its charts while the proxy serves
	}
	return addr.String(), shutdown, nil
}

// reloadOnHangup applies reloaded settings (applyReload) on each SIGHUP
// until ctx ends. The function it returns stops the SIGHUP notifications.
func reloadOnHangup(ctx context.Context, s settings, reload func() (settings, error), level zap.AtomicLevel, srv *proxy.Server, mem func(byteSize), log *zap.Logger) func() {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				s = applyReload(s, reload, level, srv, mem, log)
			}
		}
	}()
	return func() { signal.Stop(hup) }
}

// shutdownMetrics stops the metrics listener through stop, waiting
// metricsShutdownTimeout at most for its requests in flight.
func shutdownMetrics(ctx context.Context, stop func(context.Context) error, log *zap.Logger) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), metricsShutdownTimeout)
	defer cancel()
	if err := stop(sctx); err != nil {
		log.Warn("metrics server did not stop cleanly", zap.Error(err))
	}
}

// applyReload re-reads the settings on SIGHUP and applies those that are
// safe to change while running — log level, sandbox limits and TTL
// defaults, the side connection pool, the lazy forks' copy rate (of the
// copies running too), the memory limit (through mem) —
// without touching connections. Other settings that changed are logged as
// needing a restart. It returns the settings in effect.
func applyReload(cur settings, reload func() (settings, error), level zap.AtomicLevel, srv *proxy.Server, mem func(byteSize), log *zap.Logger) settings {
	next, err := reload()
	if err != nil {
		log.Error("SIGHUP: settings not reloaded", zap.Error(err))
		return cur
	}
	eff := cur
	var applied, restart []string
	limits := false
	for _, st := range settingTable() {
		if formatValue(st.field(&cur)) == formatValue(st.field(&next)) {
			continue
		}
		switch st.name {
		case "log-level":
			lvl, err := zapcore.ParseLevel(next.LogLevel)
			if err != nil {
				continue // resolveSettings validated it
			}
			level.SetLevel(lvl)
			eff.LogLevel = next.LogLevel
		case "max-sandboxes", "sandbox-ttl", "sandbox-idle-ttl", "sandbox-grace", "max-sandbox-ttl", "max-fork-bytes", "max-sandboxes-per-user",
			"deny-statements", "deny-multi-statements", "statement-timeout", "max-rows", "side-connections", "fork-queue-timeout",
			"lazy-fork-rate", "lazy-fork-rate-for":
			limits = true
		case "memory-limit":
			mem(next.MemoryLimit)
			eff.MemoryLimit = next.MemoryLimit
		default:
			restart = append(restart, st.name)
			continue
		}
		applied = append(applied, st.name)
	}
	// Users' guardrails apply at once; their other settings at restart.
	if !reflect.DeepEqual(userGuardrails(cur.Proxy.Users), userGuardrails(next.Proxy.Users)) {
		limits = true
		applied = append(applied, "users[].guardrails")
	}
	if !reflect.DeepEqual(withoutGuardrails(cur.Proxy.Users), withoutGuardrails(next.Proxy.Users)) {
		restart = append(restart, "users")
	}
	eff.Proxy.Users = withGuardrailsOf(cur.Proxy.Users, next.Proxy.Users)
	if limits {
		sb := &eff.Proxy.Sandbox
		sb.MaxSandboxes, sb.Guardrails = next.Proxy.Sandbox.MaxSandboxes, next.Proxy.Sandbox.Guardrails
		sb.DefaultTTL, sb.IdleTTL, sb.MaxTTL = next.Proxy.Sandbox.DefaultTTL, next.Proxy.Sandbox.IdleTTL, next.Proxy.Sandbox.MaxTTL
		sb.Grace = next.Proxy.Sandbox.Grace
		sb.SideConnections, sb.ForkQueueTimeout = next.Proxy.Sandbox.SideConnections, next.Proxy.Sandbox.ForkQueueTimeout
		sb.LazyForkRate, sb.LazyForkRateFor = next.Proxy.Sandbox.LazyForkRate, next.Proxy.Sandbox.LazyForkRateFor
		srv.SetSandboxLimits(eff.Proxy)
	}
	if len(restart) > 0 {
		log.Warn("SIGHUP: settings changed that take effect only after a restart", zap.Strings("settings", restart))
	}
	if len(next.Shadowed) > 0 {
		log.Warn("SIGHUP: the config file sets settings a flag or an environment variable overrides: its values there do not apply",
			zap.Strings("settings", next.Shadowed))
	}
	log.Info("SIGHUP: settings reloaded", zap.Strings("applied", applied))
	return eff
}

// userGuardrails are the guardrail settings of each user, by name.
func userGuardrails(users []proxy.User) map[string]proxy.User {
	out := map[string]proxy.User{}
	for _, u := range users {
		out[u.Name] = proxy.User{DenyStatements: u.DenyStatements, DenyMultiStatements: u.DenyMultiStatements,
			StatementTimeout: u.StatementTimeout, MaxRows: u.MaxRows, MaxForkBytes: u.MaxForkBytes, MaxSandboxes: u.MaxSandboxes}
	}
	return out
}

// withoutGuardrails is users with their guardrail settings cleared.
func withoutGuardrails(users []proxy.User) []proxy.User {
	out := make([]proxy.User, len(users))
	for i, u := range users {
		out[i] = proxy.User{Name: u.Name, Password: u.Password, AuthPlugin: u.AuthPlugin, UpstreamUser: u.UpstreamUser,
			UpstreamPassword: u.UpstreamPassword, Mode: u.Mode}
	}
	return out
}

// withGuardrailsOf is users with the guardrail settings each has in next
// (none for a user next does not list).
func withGuardrailsOf(users, next []proxy.User) []proxy.User {
	g := userGuardrails(next)
	out := make([]proxy.User, len(users))
	for i, u := range users {
		n := g[u.Name]
		u.DenyStatements, u.DenyMultiStatements, u.StatementTimeout = n.DenyStatements, n.DenyMultiStatements, n.StatementTimeout
		u.MaxRows, u.MaxForkBytes, u.MaxSandboxes = n.MaxRows, n.MaxForkBytes, n.MaxSandboxes
		out[i] = u
	}
	return out
}

// applyMemoryLimit sets the Go runtime's soft memory limit to limit, or,
// for 0, back to before (what GOMEMLIMIT set at start, or none), and logs
// the limit in force.
func applyMemoryLimit(limit byteSize, before int64, log *zap.Logger) {
	switch {
	case limit > 0:
		debug.SetMemoryLimit(int64(limit))
		log.Info("memory limit", zap.Stringer("limit", limit), zap.String("from", "memory-limit"))
	case before != math.MaxInt64:
		debug.SetMemoryLimit(before)
		log.Info("memory limit", zap.Stringer("limit", byteSize(before)), zap.String("from", "GOMEMLIMIT"))
	default:
		debug.SetMemoryLimit(before)
		log.Info("no memory limit (set memory-limit or GOMEMLIMIT to bound the heap)")
	}
}

// newLogger builds a logger writing format ("json" or "console") at level and
// above to w; level is set from the level name and can change later.
func newLogger(format, levelName string, w io.Writer, level zap.AtomicLevel) (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(levelName)
	if err != nil {
		return nil, fmt.Errorf("log-level: %w", err)
	}
	level.SetLevel(lvl)
	ec := zap.NewProductionEncoderConfig()
	ec.EncodeTime = zapcore.ISO8601TimeEncoder
	ec.EncodeDuration = zapcore.StringDurationEncoder
	var enc zapcore.Encoder
	switch format {
	case "json":
		enc = zapcore.NewJSONEncoder(ec)
	case "console":
		ec.EncodeLevel = zapcore.CapitalLevelEncoder
		enc = zapcore.NewConsoleEncoder(ec)
	default:
		return nil, fmt.Errorf("log-format: %q is not one of console, json", format)
	}
	sink := zapcore.Lock(zapcore.AddSync(w))
	return zap.New(zapcore.NewCore(enc, sink, level), zap.ErrorOutput(sink), zap.AddCaller()), nil
}

// metricsListenerMux is what the metrics listener serves: /metrics,
// /healthz and /readyz (metrics), and the admin API (adminapi) and the web
// console (console, /ui/) on sandboxes unless the listener is reachable
// beyond loopback without an admin-token. The console (nil without one)
// samples the metrics while its Run runs. adminGuard keeps other sites
// out of the API and the console.
func metricsListenerMux(s settings, g prometheus.Gatherer, ready func(context.Context) error,
	sandboxes adminapi.Sandboxes, checks func(context.Context) []console.Check, log *zap.Logger) (http.Handler, *console.Console, error) {
	mux := metrics.NewMux(g, ready)
	if s.AdminToken == "" && !loopback(s.MetricsListen) {
		log.Warn("admin API disabled, and the web console with it: metrics-listen is reachable beyond loopback and no admin-token is set",
			zap.String("metrics_listen", s.MetricsListen))
		return mux, nil, nil
	}
	api := adminapi.Options{Sandboxes: sandboxes, Token: s.AdminToken, TokenlessChanges: s.AdminTokenlessChanges,
		Proxy: adminapi.Proxy{Listen: s.Proxy.Listen, UserSeparator: s.Proxy.UserSeparator}}
	adminapi.Register(mux, api)
	con, err := newConsole(s, api, g, ready, checks, log)
	if err != nil {
		return nil, nil, err
	}
	con.Register(mux)
	return adminGuard(mux, s.AdminToken == ""), con, nil
}

// loopback reports whether host:port listens on loopback only.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
