// Package metrics defines the proxy's Prometheus collectors and serves
// /metrics, /healthz and /readyz.
package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

const namespace = "sqlfork"

// Proxy holds the collectors the proxy core updates. Create it with New; a nil
// *Proxy is not valid.
type Proxy struct {
	ConnectionsActive    prometheus.Gauge
	ConnectionsTotal     prometheus.Counter
	ConnectionsRejected  *prometheus.CounterVec // label: reason
	AuthFailures         prometheus.Counter
	UpstreamConnectFails prometheus.Counter
	UpstreamLost         prometheus.Counter
	OrphanKills          prometheus.Counter
	ConnectionPanics     prometheus.Counter
	Commands             *prometheus.CounterVec   // label: command
	CommandDuration      *prometheus.HistogramVec // label: command

	// Sandboxes.
	Sandboxes          *sandboxCollector      // sqlfork_sandboxes{state}
	SandboxesDiscarded *prometheus.CounterVec // label: reason (discarded, last_connection, grace, expired)
	Forks              *prometheus.CounterVec // labels: strategy, kind (full, schema)
	ForkDuration       prometheus.Histogram
	ForkedBytes        prometheus.Counter
	ForkedRows         prometheus.Counter
	ForkFailures       *prometheus.CounterVec // labels: strategy, result (refused, queue_timeout, connect, error)
	// SideConns reports the side connection pool at scrape time:
	// sqlfork_side_connections{state}, sqlfork_side_connections_max and
	// sqlfork_side_connection_waiters.
	SideConns *poolCollector
	// SideConnTimeouts counts waits for a side connection that ran out.
	SideConnTimeouts   prometheus.Counter
	SandboxRefusals    *prometheus.CounterVec // label: code
	GuardrailRefusals  *prometheus.CounterVec // label: guardrail
	TransactionReplays *prometheus.CounterVec // label: outcome (restarted, replayed, refused)
	// RegistryChecks counts checks of shared sandboxes' registry rows
	// before statements (label result: unchanged, reloaded, discarded);
	// SyncLeaseWait times changes that waited for other processes' sync
	// leases.
	RegistryChecks *prometheus.CounterVec
	SyncLeaseWait  prometheus.Histogram
	// Promotes counts SANDBOX PROMOTE runs (labels strategy, outcome:
	// committed, refused, failed, partial); PromoteConflicts the rows
	// production had changed since the fork that they met; Diffs times
	// DIFF, EXPORT and PROMOTE's diffs (label kind: summary, detail,
	// export, promote).
	Promotes         *prometheus.CounterVec
	PromoteConflicts *prometheus.CounterVec
	Diffs            *prometheus.HistogramVec
	// ProductionWritable is 1 when the upstream account may change
	// production schemas, 0 when it may not, -1 until checked.
	ProductionWritable prometheus.Gauge

	// Statements.
	Statements        *prometheus.CounterVec   // labels: class, outcome (ok, error, refused)
	StatementDuration *prometheus.HistogramVec // label: class
	RewriteDuration   prometheus.Histogram
	BuildInfo         *prometheus.GaugeVec // labels: version, revision, goversion
}

// SetBuildInfo records the running build (sqlfork_build_info = 1).
func (m *Proxy) SetBuildInfo(version, revision, goVersion string) {
	m.BuildInfo.WithLabelValues(version, revision, goVersion).Set(1)
}

// New creates the collectors and registers them, plus the Go and process
// collectors, with reg.
func New(reg prometheus.Registerer) *Proxy {
	m := &Proxy{
		ConnectionsActive: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "client_connections",
			Help: "Client connections currently open.",
		}),
		ConnectionsTotal: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "client_connections_total",
			Help: "Client connections accepted.",
		}),
		ConnectionsRejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "client_connections_rejected_total",
			Help: "Client connections refused before a session started, by reason.",
		}, []string{"reason"}),
		AuthFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "client_auth_failures_total",
			Help: "Client logins refused for bad credentials.",
		}),
		UpstreamConnectFails: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "upstream_connect_failures_total",
			Help: "Failed attempts to open an upstream connection.",
		}),
		UpstreamLost: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "upstream_connections_lost_total",
			Help: "Upstream connections that failed mid-session.",
		}),
		OrphanKills: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "orphaned_statements_killed_total",
			Help: "Statements killed upstream because their client went away while they ran.",
		}),
		ConnectionPanics: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "connection_panics_total",
			Help: "Client connections closed because their handler panicked.",
		}),
		Commands: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "commands_total",
			Help: "Client protocol commands handled, by command.",
		}, []string{"command"}),
		CommandDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "command_duration_seconds",
			Help:    "Time from reading a command to the end of its response, by command.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"command"}),
		Sandboxes: &sandboxCollector{desc: prometheus.NewDesc(namespace+"_sandboxes",
			"Sandboxes this process holds, by state (active: unkept, in use; grace: unkept and named, no connection here, until its grace ends; kept).", []string{"state"}, nil)},
		SandboxesDiscarded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "sandboxes_discarded_total",
			Help: "Sandboxes discarded, by reason: discarded (SANDBOX DISCARD or the admin API), last_connection (unkept, its last connection closed: anonymous, or sandbox-grace 0), grace (unkept and named, its grace ended with no connection back), expired (TTL, idle or lease).",
		}, []string{"reason"}),
		Forks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "forks_total",
			Help: "Tables forked into sandboxes, by strategy and kind (full copy or schema only).",
		}, []string{"strategy", "kind"}),
		ForkDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: namespace, Name: "fork_duration_seconds",
			Help:    "Time to fork one table.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300},
		}),
		ForkedBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "forked_bytes_total",
			Help: "Bytes (data and indexes) of tables forked.",
		}),
		ForkedRows: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "forked_rows_total",
			Help: "Rows copied into forks (as the strategy reports them).",
		}),
		ForkFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "fork_failures_total",
			Help: "Forks that did not happen, by strategy and result (the cause): refused (the table cannot be forked faithfully, or a limit), " +
				"queue_timeout (no side connection free within fork-queue-timeout), connect (a side connection could not be opened, e.g. upstream 1040) or error.",
		}, []string{"strategy", "result"}),
		SideConns: &poolCollector{
			conns: prometheus.NewDesc(namespace+"_side_connections",
				"Side connections (forks, registry, catalog, reaper) open, by state: in_use, idle.", []string{"state"}, nil),
			max: prometheus.NewDesc(namespace+"_side_connections_max",
				"Most side connections open at once (side-connections).", nil, nil),
			waiters: prometheus.NewDesc(namespace+"_side_connection_waiters",
				"Callers queued for a side connection.", nil, nil),
		},
		SideConnTimeouts: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "side_connection_timeouts_total",
			Help: "Waits for a side connection that ran out (fork-queue-timeout); the statement got error 1205.",
		}),
		SandboxRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "sandbox_refusals_total",
			Help: "Statements refused by the sandbox layer, by MySQL error code.",
		}, []string{"code"}),
		GuardrailRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "guardrail_refusals_total",
			Help: "Statements, sandboxes and forks stopped by a guardrail, by guardrail: deny_statements, deny_multi_statements, " +
				"statement_timeout (refused, or ended by the server's timeout), max_rows (result cut), max_fork_bytes, max_sandboxes_per_user.",
		}, []string{"guardrail"}),
		TransactionReplays: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "sandbox_transaction_restarts_total",
			Help: "Client transactions that met a fork made after they began, by outcome: restarted (had only read), replayed (writes replayed), refused (1412).",
		}, []string{"outcome"}),
		Promotes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "sandbox_promotes_total",
			Help: "SANDBOX PROMOTE runs, by strategy (fail, ours, theirs) and outcome: committed, refused (conflicts, or nothing it may apply), " +
				"failed (production unchanged), partial (DDL applied, rows not).",
		}, []string{"strategy", "outcome"}),
		PromoteConflicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "sandbox_promote_conflicts_total",
			Help: "Rows SANDBOX PROMOTE found changed in production since the fork and changed differently in the sandbox, by strategy.",
		}, []string{"strategy"}),
		Diffs: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "sandbox_diff_seconds",
			Help:    "Time to read a sandbox's diff, by kind: summary, detail, export, promote.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 9),
		}, []string{"kind"}),
		RegistryChecks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "sandbox_registry_checks_total",
			Help: "Checks of a sandbox other proxy processes may share, before a statement reading production, by result: " +
				"unchanged, reloaded (another process changed its tables), discarded (discarded through another process).",
		}, []string{"result"}),
		SyncLeaseWait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: namespace, Name: "sandbox_sync_lease_wait_seconds",
			Help:    "How long a fork (or a table found missing, or a fork undone) in a shared sandbox waited for other proxy processes' sync leases to run out.",
			Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5},
		}),
		Statements: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "statements_total",
			Help: "Statements (text and prepared) of sandboxing sessions, by class (read, write, ddl, …) and outcome: ok, error (from the upstream) or refused (by the proxy).",
		}, []string{"class", "outcome"}),
		StatementDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "statement_duration_seconds",
			Help:    "Time from reading a statement of a sandboxing session to the end of its answer, forks included, by class.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 120},
		}, []string{"class"}),
		RewriteDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: namespace, Name: "rewrite_duration_seconds",
			Help:    "Time to plan a statement: analyse (cached), check, fork what it writes, rewrite.",
			Buckets: []float64{.000001, .0000025, .000005, .00001, .000025, .00005, .0001, .00025, .0005, .001, .01, .1, 1, 10},
		}),
		ProductionWritable: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "upstream_production_writable",
			Help: "1 if the proxy's upstream account may change production schemas (anything outside the proxy's own), " +
				"0 if it may not (least privilege), -1 until the sandbox manager has checked.",
		}),
		BuildInfo: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "build_info",
			Help: "Always 1, labelled with the running build.",
		}, []string{"version", "revision", "goversion"}),
	}
	m.ProductionWritable.Set(-1)
	reg.MustRegister(m.Statements, m.StatementDuration, m.RewriteDuration, m.BuildInfo, m.ProductionWritable)
	reg.MustRegister(m.ConnectionsActive, m.ConnectionsTotal, m.ConnectionsRejected, m.AuthFailures,
		m.UpstreamConnectFails, m.UpstreamLost, m.OrphanKills, m.ConnectionPanics, m.Commands, m.CommandDuration,
		m.Sandboxes, m.SandboxesDiscarded, m.Forks, m.ForkDuration, m.ForkedBytes, m.ForkedRows, m.ForkFailures, m.SandboxRefusals, m.GuardrailRefusals, m.TransactionReplays,
		m.RegistryChecks, m.SyncLeaseWait, m.Promotes, m.PromoteConflicts, m.Diffs,
		m.SideConns, m.SideConnTimeouts,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// sandboxCollector reports sqlfork_sandboxes{state} at scrape time from a
// function the proxy installs once its sandbox manager runs.
type sandboxCollector struct {
	desc  *prometheus.Desc
	mu    sync.Mutex
	count func() map[string]int
}

// SetSource installs the function that counts sandboxes by state.
func (c *sandboxCollector) SetSource(f func() map[string]int) {
	c.mu.Lock()
	c.count = f
	c.mu.Unlock()
}

// Describe implements prometheus.Collector.
func (c *sandboxCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector.
func (c *sandboxCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	f := c.count
	c.mu.Unlock()
	counts := map[string]int{"active": 0, "kept": 0}
	if f != nil {
		for k, v := range f() {
			counts[k] = v
		}
	}
	for state, n := range counts {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), state)
	}
}

// PoolStats is the state of the side connection pool: its size,
// connections handed out and idle, and callers queued.
type PoolStats struct {
	Size, InUse, Idle, Waiting int
}

// poolCollector reports the side connection pool at scrape time from a
// function the proxy installs once its sandbox manager runs.
type poolCollector struct {
	conns, max, waiters *prometheus.Desc
	mu                  sync.Mutex
	stats               func() PoolStats
}

// SetSource installs the function that reports the pool.
func (c *poolCollector) SetSource(f func() PoolStats) {
	c.mu.Lock()
	c.stats = f
	c.mu.Unlock()
}

// Describe implements prometheus.Collector.
func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.conns
	ch <- c.max
	ch <- c.waiters
}

// Collect implements prometheus.Collector.
func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	f := c.stats
	c.mu.Unlock()
	var st PoolStats
	if f != nil {
		st = f()
	}
	ch <- prometheus.MustNewConstMetric(c.conns, prometheus.GaugeValue, float64(st.InUse), "in_use")
	ch <- prometheus.MustNewConstMetric(c.conns, prometheus.GaugeValue, float64(st.Idle), "idle")
	ch <- prometheus.MustNewConstMetric(c.max, prometheus.GaugeValue, float64(st.Size))
	ch <- prometheus.MustNewConstMetric(c.waiters, prometheus.GaugeValue, float64(st.Waiting))
}
