// Package session runs each client connection's statements in its
// sandbox: it binds the connection to a sandbox, plans every statement
// (reads it with rewrite, forks what it writes, rewrites it to the
// sandbox's tables), takes it through its steps with the proxy (Run),
// answers the SANDBOX statements and tells the sandbox's names back in
// answers. Manager wires the parts that outlive a connection together:
// the registry and lifetimes (sandbox/registry), forks (sandbox/forking),
// change capture (sandbox/capture), review (sandbox/review) and the
// catalog of production's objects (catalog).
package session

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/catalog"
	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/grants"
	"github.com/sqlfork/sqlfork-proxy/kill"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/capture"
	"github.com/sqlfork/sqlfork-proxy/sandbox/forking"
	"github.com/sqlfork/sqlfork-proxy/sandbox/objects"
	"github.com/sqlfork/sqlfork-proxy/sandbox/operator"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/sandbox/review"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// SideConn is a connection the manager owns for forks and the registry,
// logged in with the proxy's own upstream account.
type SideConn = sideconn.Conn

// Dialer opens side connections.
type Dialer = sideconn.Dialer

// PoolStats is the side connection pool's state (sideconn.Stats).
type PoolStats = sideconn.Stats

// Sandbox is one sandbox (registry.Sandbox).
type Sandbox = registry.Sandbox

// Info describes a sandbox, TableInfo one of its tables (registry.Info,
// registry.TableInfo).
type (
	Info      = registry.Info
	TableInfo = registry.TableInfo
)

// Limits are the settings that may change while the manager runs
// (registry.Limits).
type Limits = registry.Limits

// DialError is a side connection that could not be opened
// (sideconn.DialError).
type DialError = sideconn.DialError

// Observer is told about sandbox events, for metrics: the registry's
// (discards, side connection waits, registry checks), the review's
// (diffs, promotes), the forks' and the transactions'.
type Observer interface {
	registry.Observer
	review.Observer
	// Forked reports one finished fork (a lazy one once usable, with no
	// rows copied yet).
	Forked(strategy string, schemaOnly bool, took time.Duration, rows, bytes int64)
	// Filled reports the rows and bytes a lazy fork's copy took once whole.
	Filled(rows, bytes int64)
	// ForkFailed reports a fork that did not happen, by cause: refused
	// (the table cannot be forked faithfully or past a limit),
	// queue_timeout (no side connection free in time), connect (a side
	// connection could not be opened) or error.
	ForkFailed(strategy, cause string)
	// TransactionRestarted reports a client transaction ended and started
	// again past a fork, by outcome: restarted (it had only read),
	// replayed (its writes were replayed) or refused (it could not be
	// replayed; the client got 1412).
	TransactionRestarted(outcome string)
	// Planned reports how long one text took to plan: read, checked,
	// rewritten, and what it writes forked.
	Planned(took time.Duration)
}

type nopObserver struct{}

func (nopObserver) Discarded(string)                                 {}
func (nopObserver) Forked(string, bool, time.Duration, int64, int64) {}
func (nopObserver) Filled(int64, int64)                              {}
func (nopObserver) ForkFailed(string, string)                        {}
func (nopObserver) SideConnTimedOut()                                {}
func (nopObserver) TransactionRestarted(string)                      {}
func (nopObserver) Planned(time.Duration)                            {}
func (nopObserver) RegistryChecked(string)                           {}
func (nopObserver) LeasesAwaited(time.Duration)                      {}
func (nopObserver) Diffed(string, time.Duration)                     {}
func (nopObserver) Promoted(string, string, int)                     {}

// Manager owns the sandboxes of one proxy process.
type Manager struct {
	// registry holds the sandboxes, their lifetimes and the side
	// connections (sandbox/registry).
	reg  *registry.Registry
	caps *capture.Tracker
	fk   *forking.Forker
	// rev reads and promotes sandboxes' changes.
	rev *review.Reviewer
	// op acts on sandboxes by name for the operator (Operator).
	op *operator.Operator
	// obs is told about sandbox events (SetObserver).
	obs atomic.Pointer[Observer]
	// dir finds the proxy's live connections, and killer answers KILL
	// with it (SetDirectory).
	dir      kill.Directory
	killer   *kill.Killer
	guards   atomic.Pointer[map[string]*guard] // by proxy user; "" for everyone else
	cfg      Config
	log      *zap.Logger
	strategy forker.Strategy
	// names maps logical tables to keys and sandbox schemas.
	names   sandbox.Names
	version string
	// server is version as the rewrite engine needs it.
	server  rewrite.Server
	engine  *rewrite.Engine
	catalog *catalog.Objects
	// objects is what every session's Placer shares (sandbox/objects).
	objects objects.Config

	privMu       sync.Mutex
	privKnown    bool
	prodWritable bool
	// account is the proxy's upstream account (CURRENT_USER(), user@host):
	// the definer of what a side connection makes, and the reader of forks.
	account string
	prodWhy []string

	// prod: the production information_schema views (isolation.go).
	prod prodViews
}

// userRoom refuses a new sandbox of owner, who has owned of this process's
// sandboxes, past the owner's max-sandboxes-per-user guardrail.
func (m *Manager) userRoom(owner string, owned int) error {
	max := m.guard(owner).MaxSandboxes
	if max <= 0 || owned < max {
		return nil
	}
	r := rewrite.Refuse(wire.ErUserLimitReached, "User '%s' has exceeded the 'max_sandboxes' resource (current value: %d): the "+
		"max-sandboxes-per-user guardrail lets a user own %d sandboxes at once in this proxy; SANDBOX DISCARD "+
		"one, or close connections (each transparent-mode connection has its own; a named sandbox outlives its last "+
		"connection for sandbox-grace)", owner, max, max)
	r.Reason = GuardMaxSandboxes
	return r
}

// New connects to the upstream, creates the registry if needed, reconciles
// it with the schemas present and starts the reaper.
func New(ctx context.Context, cfg Config, dial Dialer, log *zap.Logger) (*Manager, error) {
	cfg.FillDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := &Manager{cfg: cfg, log: log, names: sandbox.Names{Prefix: cfg.Prefix}, engine: rewrite.NewEngine(0)}
	var nop Observer = nopObserver{}
	m.obs.Store(&nop)
	m.reg = registry.New(registry.Config{Prefix: cfg.Prefix, Lease: cfg.Lease, ReapInterval: cfg.ReapInterval,
		SyncLease: cfg.SyncLease, ForkTimeout: cfg.ForkTimeout, Admins: cfg.Admins, SideConnections: cfg.SideConnections,
		ForkQueueTimeout: cfg.ForkQueueTimeout}, dial, log, m.userRoom)
	m.SetLimits(cfg)
	c, err := m.reg.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("sandbox manager: %w", err)
	}
	rows, err := c.Query(ctx, "SELECT VERSION(), @@lower_case_table_names")
	if err != nil || len(rows) != 1 || rows[0][0] == nil {
		m.reg.Drop(c)
		return nil, fmt.Errorf("sandbox manager: read upstream version: %w", err)
	}
	m.version = *rows[0][0]
	m.server = rewrite.ParseServer(m.version)
	m.names.CaseSensitive = rows[0][1] != nil && *rows[0][1] == "0"
	m.reg.SetNames(m.names)
	triggers := catalog.Triggers{Engine: m.engine, CaseSensitive: m.names.CaseSensitive, Server: m.server}
	m.caps = capture.New(capture.Config{Prefix: cfg.Prefix, NoDiffCapture: cfg.NoDiffCapture}, log, m.names, m.reg)
	m.rev = review.New(review.Config{Prefix: cfg.Prefix}, log, m.names, m.engine, m.server, m.reg, m.caps, triggers)
	m.op = operator.New(m.reg, m.rev, m.names)
	m.catalog = catalog.NewObjects(m.names, m.reg, m.engine, m.server)
	m.rev.SetChanged(m.catalog.ForgetObject)
	name := cfg.Forker
	if name == "auto" {
		name = forker.Detect(m.version)
	}
	if m.strategy, err = forker.New(name); err != nil {
		m.reg.Drop(c)
		return nil, err
	}
	lazy := cfg.LazyForkRows
	if lazy <= 0 {
		lazy = -1
	}
	m.fk = forking.New(forking.Config{Prefix: cfg.Prefix, ForkTimeout: cfg.ForkTimeout, LazyRows: lazy}, log, m.names, m.reg, m.strategy,
		m.caps, m.catalog, triggers, func(owner string) int64 { return m.guard(owner).MaxForkBytes })
	m.op.SetResetter(m.fk)
	m.rev.SetSettled(m.fk.AwaitFills)
	m.objects = objects.Config{Prefix: cfg.Prefix, Names: m.names, Registry: m.reg, Schemas: m.fk, Catalog: m.catalog,
		Engine: m.engine, Server: m.server}
	if err := m.reg.Init(ctx, c); err != nil {
		m.reg.Drop(c)
		return nil, err
	}
	m.warnTriggerVisibility(ctx, c)
	m.checkPrivileges(ctx, c)
	m.reg.Put(c)
	if err := m.reg.Start(ctx); err != nil {
		return nil, err
	}
	log.Info("sandbox manager ready", zap.String("forker", m.strategy.Name()), zap.String("upstream_version", m.version),
		zap.String("prefix", cfg.Prefix), zap.Bool("case_sensitive_names", m.names.CaseSensitive))
	return m, nil
}

// warnTriggerVisibility logs when the upstream account holds no TRIGGER
// privilege on production schemas: MariaDB and MySQL then hide triggers from
// it, so the copy strategy cannot see (and refuse) tables that have them.
func (m *Manager) warnTriggerVisibility(ctx context.Context, c SideConn) {
	if m.strategy.Name() != "copy" {
		return
	}
	rows, err := c.Query(ctx, "SELECT '*' FROM information_schema.USER_PRIVILEGES WHERE PRIVILEGE_TYPE = 'TRIGGER'"+
		" UNION ALL SELECT TABLE_SCHEMA FROM information_schema.SCHEMA_PRIVILEGES WHERE PRIVILEGE_TYPE = 'TRIGGER'")
	if err != nil {
		return
	}
	for _, r := range rows {
		// TABLE_SCHEMA is the grant's pattern (`\_sqlfork%`), not a name.
		if s := sideconn.Str(r[0]); s == "*" || !grants.PatternInside(s, m.cfg.Prefix) {
			return
		}
	}
	m.log.Warn("the upstream account has no TRIGGER privilege on production schemas, so triggers are invisible to it: " +
		"a table with triggers would be forked without them, so writes in a sandbox would skip them; grant TRIGGER on schemas that use triggers")
}

// checkPrivileges finds out whether the upstream account may change
// production (anything outside the proxy's schemas) and logs a warning
// when it may: the proxy keeps sandboxes away from production whatever the
// account may do, but least privilege is a second wall.
func (m *Manager) checkPrivileges(ctx context.Context, c SideConn) {
	writable, why, err := grants.ProductionWritable(ctx, c, m.cfg.Prefix)
	rows, aerr := c.Query(ctx, "SELECT CURRENT_USER()")
	m.privMu.Lock()
	defer m.privMu.Unlock()
	if aerr == nil && len(rows) == 1 && len(rows[0]) == 1 {
		m.account = sideconn.Str(rows[0][0])
	}
	if err != nil {
		m.log.Warn("could not tell whether the upstream account can write production", zap.Error(err))
		return
	}
	m.privKnown, m.prodWritable, m.prodWhy = true, writable, why
	if writable {
		m.log.Warn("the upstream account can change production schemas: only the proxy keeps sandboxes from writing "+
			"production; grant it SELECT (and SHOW VIEW) on production schemas and ALL on "+
			quote.Ident(grants.SandboxPattern(m.cfg.Prefix))+".* instead (docs/SANDBOXES.md)", zap.Strings("grants", why))
		return
	}
	m.log.Info("the upstream account cannot change production schemas")
}

// proxyAccount is the proxy's upstream account ("" when unknown).
func (m *Manager) proxyAccount() string {
	m.privMu.Lock()
	defer m.privMu.Unlock()
	return m.account
}

// ProductionWritable reports what the start-up check found: whether the
// upstream account may change production schemas (known is false when the
// check could not run), and the grants that allow it.
func (m *Manager) ProductionWritable() (known, writable bool, grants []string) {
	m.privMu.Lock()
	defer m.privMu.Unlock()
	return m.privKnown, m.prodWritable, append([]string(nil), m.prodWhy...)
}

// Close stops the reaper and closes side connections. Unkept sandboxes of
// sessions still open are left to their lease: the next start (or another
// process) drops them.
func (m *Manager) Close() { m.reg.Close() }

// SetLimits changes the limits, guardrails, TTL defaults, grace and lazy
// fork rate of c (the other fields of c are ignored): new sandboxes, forks,
// statements and the lazy forks' copies running obey them at once.
//
// The side connection pool takes c's SideConnections and ForkQueueTimeout
// (each when positive; the queue timeout at most the fork timeout): a larger
// pool serves queued callers at once, a smaller one closes connections past
// its size as they come back.
func (m *Manager) SetLimits(c Config) {
	guards := map[string]*guard{"": newGuard(c.Guardrails, m.cfg.Prefix)}
	for user, g := range c.UserGuardrails {
		guards[user] = newGuard(g, m.cfg.Prefix)
	}
	m.reg.SetLimits(Limits{MaxSandboxes: c.MaxSandboxes, DefaultTTL: c.DefaultTTL, IdleTTL: c.IdleTTL, MaxTTL: c.MaxTTL,
		Grace: c.Grace, SideConnections: c.SideConnections, ForkQueueTimeout: c.ForkQueueTimeout, FillRate: c.LazyForkRate,
		FillRateFor: c.LazyForkRateFor})
	m.guards.Store(&guards)
}

// PoolStats reports the side connection pool: its size, connections in use
// Operator acts on this process's sandboxes by name, whoever owns them:
// the admin API's list, show, keep, discard, diff, export and promote.
func (m *Manager) Operator() *operator.Operator { return m.op }

// and idle, and callers waiting for one.
func (m *Manager) PoolStats() PoolStats { return m.reg.PoolStats() }

// FillStats are the lazy forks' copies running in this process.
func (m *Manager) FillStats() registry.FillStats { return m.reg.FillStats() }

// Counts returns how many sandboxes this process holds, by state.
func (m *Manager) Counts() map[string]int { return m.reg.Counts() }

// Census counts the sandboxes the shared registry records, by state and
// changes, as of the reaper's last round (registry.Registry.Census).
func (m *Manager) Census() registry.Census { return m.reg.Census() }

// SetObserver installs o (nil keeps the current one) in the manager and
// each of its parts. The reaper may already be reporting: each reads its
// observer atomically.
func (m *Manager) SetObserver(o Observer) {
	if o == nil {
		return
	}
	m.reg.SetObserver(o)
	m.rev.SetObserver(o)
	m.fk.SetObserver(o)
	m.obs.Store(&o)
}

// observer is the installed Observer.
func (m *Manager) observer() Observer { return *m.obs.Load() }

// SetPromoteDialer installs what opens connections with the promote
// account, which SANDBOX PROMOTE writes production with.
func (m *Manager) SetPromoteDialer(d Dialer) { m.rev.SetPromoteDialer(d) }

// SetDirectory installs the directory of the proxy's live connections,
// for KILL and the process list; call it before the first Open.
func (m *Manager) SetDirectory(d kill.Directory) {
	m.dir, m.killer = d, kill.New(d)
}

// Strategy is the fork strategy in use.
func (m *Manager) Strategy() string { return m.strategy.Name() }

// Forks is the number of forks this process made.
func (m *Manager) Forks() int64 { return m.fk.Forks() }

// Reaps is how many rounds the sandbox reaper finished.
func (m *Manager) Reaps() int64 { return m.reg.Reaps() }

// CaseSensitive reports lower_case_table_names=0 on the upstream.
func (m *Manager) CaseSensitive() bool { return m.names.CaseSensitive }

// Prefix is the prefix of the proxy's databases.
func (m *Manager) Prefix() string { return m.cfg.Prefix }

// ---- sandbox bookkeeping ----

// ---- resolution ----
