// Package metrics defines the proxy's Prometheus collectors and serves
// /metrics, /healthz and /readyz.
package metrics

import (
	"time"

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
	RegistrySandboxes  *censusCollector       // sqlfork_registry_sandboxes{state,changes}
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
	SideConnTimeouts prometheus.Counter
	// Fills reports lazy forks' background copies at scrape time:
	// sqlfork_lazy_fills, sqlfork_lazy_fill_rows and
	// sqlfork_lazy_fill_oldest_seconds.
	Fills              *fillCollector
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
	m := &Proxy{}
	m.connectionMetrics()
	m.sandboxMetrics()
	m.forkMetrics()
	m.changeMetrics()
	m.statementMetrics()
	m.ProductionWritable.Set(-1)
	reg.MustRegister(m.Statements, m.StatementDuration, m.RewriteDuration, m.BuildInfo, m.ProductionWritable)
	reg.MustRegister(m.ConnectionsActive, m.ConnectionsTotal, m.ConnectionsRejected, m.AuthFailures,
		m.UpstreamConnectFails, m.UpstreamLost, m.OrphanKills, m.ConnectionPanics, m.Commands, m.CommandDuration,
		m.Sandboxes, m.RegistrySandboxes, m.SandboxesDiscarded, m.Forks, m.ForkDuration, m.ForkedBytes, m.ForkedRows, m.ForkFailures, m.SandboxRefusals, m.GuardrailRefusals, m.TransactionReplays,
		m.RegistryChecks, m.SyncLeaseWait, m.Promotes, m.PromoteConflicts, m.Diffs,
		m.SideConns, m.SideConnTimeouts, m.Fills,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// connectionMetrics creates the collectors of client and upstream
// connections and of protocol commands.
func (m *Proxy) connectionMetrics() {
	m.ConnectionsActive = gauge("client_connections", "Client connections currently open.")
	m.ConnectionsTotal = counter("client_connections_total", "Client connections accepted.")
	m.ConnectionsRejected = counterVec("client_connections_rejected_total",
		"Client connections refused before a session started, by reason.", "reason")
	m.AuthFailures = counter("client_auth_failures_total", "Client logins refused for bad credentials.")
	m.UpstreamConnectFails = counter("upstream_connect_failures_total", "Failed attempts to open an upstream connection.")
	m.UpstreamLost = counter("upstream_connections_lost_total", "Upstream connections that failed mid-session.")
	m.OrphanKills = counter("orphaned_statements_killed_total",
		"Statements killed upstream because their client went away while they ran.")
	m.ConnectionPanics = counter("connection_panics_total", "Client connections closed because their handler panicked.")
	m.Commands = counterVec("commands_total", "Client protocol commands handled, by command.", "command")
	m.CommandDuration = histogramVec("command_duration_seconds",
		"Time from reading a command to the end of its response, by command.",
		[]float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}, "command")
}

// sandboxMetrics creates the collectors of sandboxes, their discards and
// refusals, and the shared registry.
func (m *Proxy) sandboxMetrics() {
	m.Sandboxes = &sandboxCollector{desc: prometheus.NewDesc(namespace+"_sandboxes",
		"Sandboxes this process holds, by state (active: unkept, in use; grace: unkept and named, no connection here, until its grace ends; kept).", []string{"state"}, nil)}
	m.RegistrySandboxes = newCensusCollector()
	m.SandboxesDiscarded = counterVec("sandboxes_discarded_total",
		"Sandboxes discarded, by reason: discarded (SANDBOX DISCARD or the admin API), last_connection (unkept, its last connection closed: anonymous, or sandbox-grace 0), grace (unkept and named, its grace ended with no connection back), expired (TTL, idle or lease).",
		"reason")
	m.SandboxRefusals = counterVec("sandbox_refusals_total", "Statements refused by the sandbox layer, by MySQL error code.", "code")
	m.GuardrailRefusals = counterVec("guardrail_refusals_total",
		"Statements, sandboxes and forks stopped by a guardrail, by guardrail: deny_statements, deny_multi_statements, "+
			"statement_timeout (refused, or ended by the server's timeout), max_rows (result cut), max_fork_bytes, max_sandboxes_per_user.",
		"guardrail")
	m.TransactionReplays = counterVec("sandbox_transaction_restarts_total",
		"Client transactions that met a fork made after they began, by outcome: restarted (had only read), replayed (writes replayed), refused (1412).",
		"outcome")
	m.RegistryChecks = counterVec("sandbox_registry_checks_total",
		"Checks of a sandbox other proxy processes may share, before a statement reading production, by result: "+
			"unchanged, reloaded (another process changed its tables), discarded (discarded through another process).",
		"result")
	m.SyncLeaseWait = histogram("sandbox_sync_lease_wait_seconds",
		"How long a fork (or a table found missing, or a fork undone) in a shared sandbox waited for other proxy processes' sync leases to run out.",
		[]float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5})
}

// forkMetrics creates the collectors of forks and of the side connection
// pool they take their connections from.
func (m *Proxy) forkMetrics() {
	m.Forks = counterVec("forks_total",
		"Tables forked into sandboxes, by strategy and kind (full copy or schema only).", "strategy", "kind")
	m.ForkDuration = histogram("fork_duration_seconds", "Time to fork one table.",
		[]float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300})
	m.ForkedBytes = counter("forked_bytes_total", "Bytes (data and indexes) of tables forked.")
	m.ForkedRows = counter("forked_rows_total", "Rows copied into forks (as the strategy reports them).")
	m.ForkFailures = counterVec("fork_failures_total",
		"Forks that did not happen, by strategy and result (the cause): refused (the table cannot be forked faithfully, or a limit), "+
			"queue_timeout (no side connection free within fork-queue-timeout), connect (a side connection could not be opened, e.g. upstream 1040) or error.",
		"strategy", "result")
	m.SideConns = &poolCollector{
		conns: prometheus.NewDesc(namespace+"_side_connections",
			"Side connections (forks, registry, catalog, reaper) open, by state: in_use, idle.", []string{"state"}, nil),
		max: prometheus.NewDesc(namespace+"_side_connections_max",
			"Most side connections open at once (side-connections).", nil, nil),
		waiters: prometheus.NewDesc(namespace+"_side_connection_waiters",
			"Callers queued for a side connection.", nil, nil),
	}
	m.SideConnTimeouts = counter("side_connection_timeouts_total",
		"Waits for a side connection that ran out (fork-queue-timeout); the statement got error 1205.")
	m.Fills = &fillCollector{
		running: prometheus.NewDesc(namespace+"_lazy_fills",
			"Lazy forks whose background copy of production is running in this process.", nil, nil),
		rows: prometheus.NewDesc(namespace+"_lazy_fill_rows",
			"Rows the running lazy forks' copies have copied, and production's estimate of their tables' rows, by kind: copied, total.",
			[]string{"kind"}, nil),
		oldest: prometheus.NewDesc(namespace+"_lazy_fill_oldest_seconds",
			"Age of the oldest running lazy fork's copy: how long production has kept the read view of its snapshot.", nil, nil),
	}
}

// FillStats are the lazy forks' copies running in a process: how many,
// their rows copied and production's estimate of their tables' rows, and
// the age of the oldest.
type FillStats struct {
	Running       int
	Copied, Total int64
	Oldest        time.Duration
}

// fillCollector reports the running lazy fills at scrape time.
type fillCollector struct {
	running, rows, oldest *prometheus.Desc
	source[FillStats]
}

// Describe implements prometheus.Collector.
func (c *fillCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.running
	ch <- c.rows
	ch <- c.oldest
}

// Collect implements prometheus.Collector.
func (c *fillCollector) Collect(ch chan<- prometheus.Metric) {
	st, _ := c.read()
	ch <- prometheus.MustNewConstMetric(c.running, prometheus.GaugeValue, float64(st.Running))
	ch <- prometheus.MustNewConstMetric(c.rows, prometheus.GaugeValue, float64(st.Copied), "copied")
	ch <- prometheus.MustNewConstMetric(c.rows, prometheus.GaugeValue, float64(st.Total), "total")
	ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, st.Oldest.Seconds())
}

// changeMetrics creates the collectors of PROMOTE, DIFF and EXPORT, and the
// gauge of whether production may be changed.
func (m *Proxy) changeMetrics() {
	m.Promotes = counterVec("sandbox_promotes_total",
		"SANDBOX PROMOTE runs, by strategy (fail, ours, theirs) and outcome: committed, refused (conflicts, or nothing it may apply), "+
			"failed (production unchanged), partial (DDL applied, rows not).",
		"strategy", "outcome")
	m.PromoteConflicts = counterVec("sandbox_promote_conflicts_total",
		"Rows SANDBOX PROMOTE found changed in production since the fork and changed differently in the sandbox, by strategy.",
		"strategy")
	m.Diffs = histogramVec("sandbox_diff_seconds",
		"Time to read a sandbox's diff, by kind: summary, detail, export, promote.",
		prometheus.ExponentialBuckets(0.001, 4, 9), "kind")
	m.ProductionWritable = gauge("upstream_production_writable",
		"1 if the proxy's upstream account may change production schemas (anything outside the proxy's own), "+
			"0 if it may not (least privilege), -1 until the sandbox manager has checked.")
}

// statementMetrics creates the collectors of sandboxing sessions'
// statements and the build info gauge.
func (m *Proxy) statementMetrics() {
	m.Statements = counterVec("statements_total",
		"Statements (text and prepared) of sandboxing sessions, by class (read, write, ddl, …) and outcome: ok, error (from the upstream) or refused (by the proxy).",
		"class", "outcome")
	m.StatementDuration = histogramVec("statement_duration_seconds",
		"Time from reading a statement of a sandboxing session to the end of its answer, forks included, by class.",
		[]float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 120}, "class")
	m.RewriteDuration = histogram("rewrite_duration_seconds",
		"Time to plan a statement: analyse (cached), check, fork what it writes, rewrite.",
		[]float64{.000001, .0000025, .000005, .00001, .000025, .00005, .0001, .00025, .0005, .001, .01, .1, 1, 10})
	m.BuildInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: namespace, Name: "build_info",
		Help: "Always 1, labelled with the running build.",
	}, []string{"version", "revision", "goversion"})
}

// counter makes the counter sqlfork_<name>.
func counter(name, help string) prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Namespace: namespace, Name: name, Help: help})
}

// counterVec makes the counter sqlfork_<name> with labels.
func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: name, Help: help}, labels)
}

// gauge makes the gauge sqlfork_<name>.
func gauge(name, help string) prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{Namespace: namespace, Name: name, Help: help})
}

// histogram makes the histogram sqlfork_<name> over buckets.
func histogram(name, help string, buckets []float64) prometheus.Histogram {
	return prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: namespace, Name: name, Help: help, Buckets: buckets})
}

// histogramVec makes the histogram sqlfork_<name> over buckets, with labels.
func histogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Name: name, Help: help, Buckets: buckets}, labels)
}

// source is the function a collector reads at scrape time, which the
// proxy installs once its sandbox manager runs.
type source[T any] struct {
	mu sync.Mutex
	f  func() T
}

// SetSource installs the function the collector reads.
func (s *source[T]) SetSource(f func() T) {
	s.mu.Lock()
	s.f = f
	s.mu.Unlock()
}

// read is what the installed function says now (ok false before one is).
func (s *source[T]) read() (v T, ok bool) {
	s.mu.Lock()
	f := s.f
	s.mu.Unlock()
	if f == nil {
		return v, false
	}
	return f(), true
}

// sandboxCollector reports sqlfork_sandboxes{state} at scrape time from
// the counts by state its source gives.
type sandboxCollector struct {
	desc *prometheus.Desc
	source[map[string]int]
}

// Describe implements prometheus.Collector.
func (c *sandboxCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector.
func (c *sandboxCollector) Collect(ch chan<- prometheus.Metric) {
	counts := map[string]int{"active": 0, "kept": 0}
	got, _ := c.read()
	for k, v := range got {
		counts[k] = v
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

// poolCollector reports the side connection pool at scrape time from its
// source.
type poolCollector struct {
	conns, max, waiters *prometheus.Desc
	source[PoolStats]
}

// Describe implements prometheus.Collector.
func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.conns
	ch <- c.max
	ch <- c.waiters
}

// Collect implements prometheus.Collector.
func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	st, _ := c.read()
	ch <- prometheus.MustNewConstMetric(c.conns, prometheus.GaugeValue, float64(st.InUse), "in_use")
	ch <- prometheus.MustNewConstMetric(c.conns, prometheus.GaugeValue, float64(st.Idle), "idle")
	ch <- prometheus.MustNewConstMetric(c.max, prometheus.GaugeValue, float64(st.Size))
	ch <- prometheus.MustNewConstMetric(c.waiters, prometheus.GaugeValue, float64(st.Waiting))
}
