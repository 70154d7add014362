// Command bench is the end-to-end benchmark of sqlfork-proxy (`make bench`).
//
// It starts a throwaway MariaDB (integration/testdb), builds and starts the
// proxy as a child process, starts a plain TCP byte relay as another child
// process (this program re-executed with -relay), and runs sysbench against
// MariaDB directly, through the relay and through the proxy, interleaved
// round by round. It reports median QPS, median p95 latency and the relay's
// and proxy's CPU time per query, then streams a ~1 GiB result set and
// one 200 MiB row along each path (direct, the relay, the passthrough
// proxy, and the sandbox-mode proxy as a single statement, inside a
// multi-statement input with SANDBOX statements and as a prepared
// statement) while sampling the hop's RSS. With -diff (after all that) or
// -diff-only (alone) it measures SANDBOX DIFF and EXPORT of a sandbox's
// fork of a 1M-row table, with change capture on and off (diff.go). The
// result is a Markdown report on stdout (and in -out FILE). See
// docs/BENCHMARKS.md.
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sqlfork/sqlfork-proxy/integration/testdb"
)

type options struct {
	rounds     int
	duration   time.Duration
	warmup     time.Duration
	threads    []int
	workloads  []string
	tables     int
	tableSize  int
	skipMemory bool
	skipFork   bool
	// sandboxProd adds the target sandbox-prod: a named sandbox that forks
	// nothing, so every statement reads production and first checks the
	// sandbox registry (read-your-writes across proxy processes).
	sandboxProd bool
	forkSizes   []int
	forkReps    int
	forkLinked  bool
	memRows     int
	memRowMiB   int // size of the one large row of the memory test; 0 skips it
	out         string
	args        []string // the command line, for the report
	bufferPool  string   // MariaDB's --innodb-buffer-pool-size
	redoLog     string   // MariaDB's --innodb-log-file-size ("": testdb's)

	// The diff benchmark (diff.go): -diff adds it, -diff-only runs it alone.
	diff, diffOnly   bool
	diffRows         int   // rows of the production table
	diffRuns         int   // runs of each DIFF / EXPORT measurement
	diffSweep        []int // changed rows of the sweep, ascending; the first is the main scenario's 100
	diffReps         int   // forks and bulk UPDATEs per capture setting
	diffBulkRows     int   // rows of the bulk UPDATE
	diffFallbackRuns int   // runs of DIFF SUMMARY without capture (whole-table compare)

	// The lazy-fork benchmark (lazy.go): -lazy-only runs it alone.
	lazyOnly  bool
	lazySizes []int
	lazyReps  int
	lazyOps   int // point SELECT + UPDATE pairs measured per run
	// lazyPrepared: the point statements go as prepared statements.
	lazyPrepared bool
	// lazyTx: the first write is an ORM's transaction, and each point
	// statement runs in a transaction of its own.
	lazyTx bool

	// The fork-storm benchmark (storm.go): -storm-only runs it alone.
	storm stormOptions
	// The stress benchmark of lazy forks (stress.go): -lazy-stress runs
	// it alone.
	stress stressOptions
}

func main() {
	var o options
	var threads, workloads, relay, lazySizes string
	flag.IntVar(&o.rounds, "rounds", 3, "interleaved rounds per workload × threads; medians are taken over them")
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "length of each sysbench run (whole seconds)")
	flag.DurationVar(&o.warmup, "warmup", 5*time.Second, "unrecorded oltp_read_only run per target before measuring (0 disables)")
	flag.StringVar(&threads, "threads", "4,32", "comma-separated sysbench thread counts")
	flag.StringVar(&workloads, "workloads", "oltp_point_select,oltp_read_only", "comma-separated sysbench workloads")
	flag.IntVar(&o.tables, "tables", 4, "sysbench --tables")
	flag.IntVar(&o.tableSize, "table-size", 10000, "sysbench --table-size")
	flag.BoolVar(&o.skipMemory, "skip-memory", false, "skip the large result set streaming test")
	flag.BoolVar(&o.sandboxProd, "sandbox-prod", false, "also measure sandbox-prod: the sandbox-mode proxy in a named sandbox that forks nothing (every statement reads production after a registry check)")
	flag.IntVar(&o.memRows, "mem-rows", 1100000, "rows of ~1 KB streamed by the memory test (1100000 ≈ 1 GiB)")
	flag.IntVar(&o.memRowMiB, "mem-row-mib", 200, "MiB of the one large row streamed by the memory test (0 skips it)")
	var forkSizes string
	flag.BoolVar(&o.skipFork, "skip-fork", false, "skip the fork-time measurement")
	flag.StringVar(&forkSizes, "fork-sizes", "10000,100000,1000000", "comma-separated table sizes (rows) for the fork-time measurement")
	flag.IntVar(&o.forkReps, "fork-reps", 3, "forks per size (median reported)")
	flag.BoolVar(&o.forkLinked, "fork-linked", true, "also fork sbtest1 with a child table of as many rows joined by a foreign key (both are forked)")
	flag.StringVar(&o.out, "out", "", "also write the Markdown report to this file")
	flag.StringVar(&o.bufferPool, "innodb-buffer-pool-size", "256M", "the throwaway MariaDB's --innodb-buffer-pool-size")
	flag.StringVar(&o.redoLog, "innodb-log-file-size", "", "the throwaway MariaDB's --innodb-log-file-size (default: integration/testdb's, 48M)")
	var diffSweep string
	flag.BoolVar(&o.diff, "diff", false, "also run the diff benchmark: SANDBOX DIFF / EXPORT of a -diff-rows fork, change capture on and off (several minutes)")
	flag.BoolVar(&o.diffOnly, "diff-only", false, "run only the diff benchmark (no sysbench, fork-time or memory test)")
	flag.IntVar(&o.diffRows, "diff-rows", 1000000, "rows of the diff benchmark's production table")
	flag.IntVar(&o.diffRuns, "diff-runs", 20, "runs of each DIFF / EXPORT measurement (median and p95 over them)")
	flag.StringVar(&diffSweep, "diff-sweep", "100,10000,100000", "changed rows (40% UPDATE, 30% INSERT, 30% DELETE) at which DIFF SUMMARY and DIFF are measured; starts at 100")
	flag.IntVar(&o.diffReps, "diff-reps", 3, "forks and bulk UPDATEs per capture setting (on, off), interleaved")
	flag.IntVar(&o.diffBulkRows, "diff-bulk-rows", 100000, "rows of the bulk UPDATE measured with capture on and off")
	flag.IntVar(&o.diffFallbackRuns, "diff-fallback-runs", 5, "runs of DIFF SUMMARY with capture off (a whole-table compare)")
	flag.StringVar(&relay, "relay", "", "internal: run as the TCP relay, LISTEN,UPSTREAM")
	lazyFlags(&o, &lazySizes)
	stormFlags(&o.storm)
	stressFlags(&o.stress)
	flag.Parse()

	if relay != "" {
		// runRelay serves until killed; it returns only on failure.
		fmt.Fprintln(os.Stderr, "relay:", runRelay(relay))
		os.Exit(1)
	}
	o.args = os.Args[1:]
	var err error
	if o.threads, err = parseInts(threads); err != nil {
		fatalf("-threads: %v", err)
	}
	if o.forkSizes, err = parseInts(forkSizes); err != nil {
		fatalf("-fork-sizes: %v", err)
	}
	if o.diffSweep, err = parseInts(diffSweep); err != nil {
		fatalf("-diff-sweep: %v", err)
	}
	if o.lazySizes, err = parseInts(lazySizes); err != nil {
		fatalf("-lazy-sizes: %v", err)
	}
	o.workloads = splitList(workloads)
	switch {
	case len(o.workloads) == 0:
		fatalf("-workloads is empty")
	case o.rounds < 1:
		fatalf("-rounds must be at least 1")
	case o.duration < time.Second || o.duration%time.Second != 0:
		fatalf("-duration must be a whole number of seconds, at least 1s")
	case o.tables < 1 || o.tableSize < 1:
		fatalf("-tables and -table-size must be positive")
	case o.memRows < 1:
		fatalf("-mem-rows must be positive")
	case o.memRowMiB < 0 || o.memRowMiB > maxRowMiB:
		fatalf("-mem-row-mib must be between 0 and %d", maxRowMiB)
	case o.diffRuns < 1 || o.diffReps < 1 || o.diffFallbackRuns < 1:
		fatalf("-diff-runs, -diff-reps and -diff-fallback-runs must be positive")
	}
	if err := checkDiffSizes(o); err != nil {
		fatalf("%v", err)
	}
	if err := o.stress.check(); err != nil {
		fatalf("%v", err)
	}
	if err := run(o); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}

// lazyFlags defines the lazy-fork benchmark's flags (lazy.go).
func lazyFlags(o *options, sizes *string) {
	flag.BoolVar(&o.lazyOnly, "lazy-only", false, "run only the lazy-fork benchmark (issue 27)")
	flag.StringVar(sizes, "lazy-sizes", "1000000,10000000", "comma-separated table sizes (rows) of the lazy-fork benchmark")
	flag.IntVar(&o.lazyReps, "lazy-reps", 3, "runs per size of the lazy-fork benchmark (medians reported)")
	flag.IntVar(&o.lazyOps, "lazy-ops", 200, "point SELECT and UPDATE pairs measured per run, while filling and on a copy")
	flag.BoolVar(&o.lazyPrepared, "lazy-prepared", false, "send the lazy-fork benchmark's statements as prepared statements, the key a parameter")
	flag.BoolVar(&o.lazyTx, "lazy-tx", false, "run the lazy-fork benchmark's first write as an ORM's transaction (BEGIN, SELECT and UPDATE by key, COMMIT) "+
		"and each point statement in a transaction of its own")
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
	os.Exit(2)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, errors.New("empty list")
	}
	return out, nil
}

// env is what every part of the benchmark shares: the throwaway MariaDB,
// a direct connection to it and the proxy binary.
type env struct {
	root, tmp, proxyBin, sbBin string
	db                         *testdb.Server
	direct                     *sql.DB
}

// run does the whole benchmark. Every child process and temp dir it creates
// is released by its defers, on success, error and Ctrl-C alike (a second
// Ctrl-C aborts at once; the children then die through Pdeathsig).
func run(o options) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cancelOnSignal(cancel)

	start := time.Now()
	var e env
	var err error
	if e.sbBin, err = exec.LookPath("sysbench"); err != nil && !o.diffOnly && !o.storm.only && !o.stress.on {
		return errors.New("sysbench not found in $PATH (apt-get install sysbench)")
	}
	if e.root, err = repoRoot(); err != nil {
		return err
	}
	if e.tmp, err = os.MkdirTemp("", "sqlfork-bench-"); err != nil {
		return err
	}
	defer os.RemoveAll(e.tmp)

	logf("building ./cmd/sqlfork-proxy in %s", e.root)
	if e.proxyBin, err = buildProxy(ctx, e.root, e.tmp); err != nil {
		return err
	}

	mariadbArgs := []string{"--innodb-buffer-pool-size=" + o.bufferPool, "--max-connections=500",
		// The memory test: a row of -mem-row-mib, and a recursive CTE of
		// -mem-rows rows (the default bound, 1000, would cut it).
		fmt.Sprintf("--max-allowed-packet=%dM", maxPacketMiB(o.memRowMiB)), "--max-recursive-iterations=4294967295"}
	if o.storm.only {
		mariadbArgs = stormMariaDBArgs(o.storm)
	}
	if o.redoLog != "" {
		mariadbArgs = append(mariadbArgs, "--innodb-log-file-size="+o.redoLog)
	}
	logf("starting throwaway MariaDB (%s)", strings.Join(mariadbArgs, " "))
	if e.db, err = testdb.Start(ctx, testdb.Options{ExtraArgs: mariadbArgs}); err != nil {
		return err
	}
	defer func() {
		logf("stopping MariaDB")
		if err := e.db.Stop(); err != nil {
			logf("stopping MariaDB: %v", err)
		}
	}()
	logf("MariaDB on %s", e.db.Addr)

	if e.direct, err = openMySQL(e.db.Addr, e.db.User, e.db.Password, ""); err != nil {
		return err
	}
	defer e.direct.Close()
	var mariadbVersion string
	if err := e.direct.QueryRowContext(ctx, "SELECT VERSION()").Scan(&mariadbVersion); err != nil {
		return fmt.Errorf("SELECT VERSION(): %w", err)
	}
	rep := &report{
		opts:        o,
		started:     start.UTC(),
		machine:     describeMachine(ctx, e.root, e.sbBin, mariadbVersion),
		mariadbArgs: mariadbArgs,
		clkTck:      clkTck(),
	}
	if err := measure(ctx, o, e, rep); err != nil {
		return err
	}
	rep.loadEnd = loadavg()
	rep.elapsed = time.Since(start)
	if err := writeReport(o, rep); err != nil {
		return err
	}
	if rep.stress != nil && len(rep.stress.problems()) > 0 {
		return errors.New("lazy stress: a fork or production is wrong (see the report)")
	}
	return nil
}

// cancelOnSignal calls cancel on the first SIGINT or SIGTERM; a second
// one kills the harness outright.
func cancelOnSignal(cancel context.CancelFunc) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		signal.Stop(sigs) // a second signal kills the harness outright
		logf("got %v: stopping and cleaning up (send it again to abort at once)", s)
		cancel()
	}()
}

// measure runs the benchmarks o asks for, the hop's and the diff's, into
// rep.
func measure(ctx context.Context, o options, e env, rep *report) error {
	if o.storm.only {
		rep.loadStart = loadavg()
		var err error
		rep.storm, err = measureStorm(ctx, o.storm, e)
		return err
	}
	if o.stress.on {
		rep.loadStart = loadavg()
		var err error
		rep.stress, err = measureStress(ctx, o.stress, e)
		return err
	}
	if o.lazyOnly {
		rep.loadStart = loadavg()
		var err error
		rep.lazy, err = measureLazy(ctx, o, e)
		return err
	}
	if !o.diffOnly {
		if err := runHop(ctx, o, e, rep); err != nil {
			return err
		}
	}
	if o.diff || o.diffOnly {
		if rep.loadStart == "" {
			rep.loadStart = loadavg()
		}
		var err error
		if rep.diff, err = measureDiff(ctx, o, e); err != nil {
			return err
		}
	}
	return nil
}

// writeReport prints the report and writes it to -out, if given.
func writeReport(o options, rep *report) error {
	md := rep.markdown()
	fmt.Print(md)
	if o.out != "" {
		if err := os.WriteFile(o.out, []byte(md), 0o644); err != nil {
			return err
		}
		logf("report written to %s", o.out)
	}
	return nil
}

// runHop is the benchmark of the hop: sysbench through the relay and the
// proxies, fork times and the memory test.
func runHop(ctx context.Context, o options, e env, rep *report) error {
	db := e.db
	if err := execDirect(ctx, e.direct, "DROP DATABASE IF EXISTS sbtest", "CREATE DATABASE sbtest"); err != nil {
		return err
	}
	h, err := startHops(ctx, o, e)
	if err != nil {
		return err
	}
	defer h.stop()

	sb := sbConfig{bin: e.sbBin, user: db.User, password: db.Password, tables: o.tables, tableSize: o.tableSize}
	logf("sysbench prepare: %d tables × %d rows", o.tables, o.tableSize)
	if err := sb.prepare(ctx, db.Addr); err != nil {
		return err
	}
	release, err := h.forkAll(ctx, o, db)
	if err != nil {
		return err
	}
	defer release()

	rep.sbArgsSample = sbArgsSample(sb, o)
	rep.loadStart = loadavg()
	if err := h.warmUp(ctx, o, sb); err != nil {
		return h.exitErr(err)
	}
	if err := h.sysbenchRuns(ctx, o, sb, rep); err != nil {
		return h.exitErr(err)
	}
	if !o.skipFork {
		if err := measureForks(ctx, o, sb, e, h.sandboxAddr, rep); err != nil {
			return h.exitErr(err)
		}
	}
	if !o.skipMemory {
		loads := []memLoad{resultLoad(o.memRows)}
		if o.memRowMiB > 0 {
			loads = append(loads, rowLoad(o.memRowMiB<<20))
		}
		rep.streams, err = measureMemory(ctx, loads, memPaths(h.targets), db.User, db.Password, maxPacketMiB(o.memRowMiB)<<20)
		if err != nil {
			return h.exitErr(err)
		}
	}
	if h.proxy.exited() {
		return h.exitErr(errors.New("proxy exited during the benchmark"))
	}
	rep.proxyHWMKB, _ = procStatusKB(h.proxy.pid(), "VmHWM")
	rep.relayHWMKB, _ = procStatusKB(h.relay.pid(), "VmHWM")
	return nil
}

// hops are the processes sysbench reaches the server through (the relay,
// the passthrough proxy and the sandbox-mode proxy) and the targets they
// and the server make.
type hops struct {
	relay, proxy, sandbox *child
	sandboxAddr           string
	proxyLog, sandboxLog  string
	targets               []sbTarget
}

// startHops starts the relay, waited for, and both proxies; on an error,
// what it started is stopped.
func startHops(ctx context.Context, o options, e env) (h *hops, err error) {
	db := e.db
	h = &hops{}
	defer func() {
		if err != nil {
			h.stop()
		}
	}()
	relay, relayAddr, err := startRelay(db.Addr)
	if err != nil {
		return nil, err
	}
	h.relay = relay
	if err := waitMySQL(ctx, relayAddr, db.User, db.Password, relay); err != nil {
		return nil, fmt.Errorf("relay on %s: %w", relayAddr, err)
	}
	logf("relay (pid %d) on %s", relay.pid(), relayAddr)

	proxy, proxyAddr, proxyLog, err := startProxy(ctx, e.proxyBin, e.tmp, db.Addr, db.User, db.Password, "passthrough", "passthrough")
	if err != nil {
		return nil, err
	}
	h.proxy, h.proxyLog = proxy, proxyLog
	logf("proxy (pid %d) on %s", proxy.pid(), proxyAddr)
	sbProxy, sbAddr, sbLog, err := startProxy(ctx, e.proxyBin, e.tmp, db.Addr, db.User, db.Password, "transparent", "transparent")
	if err != nil {
		return nil, err
	}
	h.sandbox, h.sandboxAddr, h.sandboxLog = sbProxy, sbAddr, sbLog
	logf("sandbox-mode proxy (pid %d) on %s", sbProxy.pid(), sbAddr)

	h.targets = []sbTarget{
		{name: "direct", addr: db.Addr},
		{name: "relay", addr: relayAddr, proc: relay},
		{name: "proxy", addr: proxyAddr, proc: proxy},
		{name: "sandbox", addr: sbAddr, proc: sbProxy, user: db.User + "+bench"},
	}
	if o.sandboxProd {
		h.targets = append(h.targets, sbTarget{name: "sandbox-prod", addr: sbAddr, proc: sbProxy, user: db.User + "+benchprod"})
	}
	return h, nil
}

// stop stops the hops started, in the reverse order.
func (h *hops) stop() {
	if h.sandbox != nil {
		h.sandbox.stop(10 * time.Second)
	}
	if h.proxy != nil {
		h.proxy.stop(10 * time.Second)
	}
	if h.relay != nil {
		h.relay.stop(5 * time.Second)
	}
}

// exitErr is err, naming the exit of a proxy that exited and its log's
// tail.
func (h *hops) exitErr(err error) error {
	return withExit(err, proxyProc{h.proxy, h.proxyLog}, proxyProc{h.sandbox, h.sandboxLog})
}

// forkAll opens the connection that holds the shared sandbox (user+bench)
// for the whole run, sandbox mode then measured with its tables already
// forked, and forks every table in it. release closes the connection.
func (h *hops) forkAll(ctx context.Context, o options, db *testdb.Server) (release func(), err error) {
	holder, err := openMySQL(h.sandboxAddr, db.User+"+bench", db.Password, "sbtest")
	if err != nil {
		return nil, err
	}
	holder.SetMaxIdleConns(1)
	hc, err := holder.Conn(ctx)
	if err != nil {
		holder.Close()
		return nil, err
	}
	release = func() {
		hc.Close()
		holder.Close()
	}
	forkStart := time.Now()
	for i := 1; i <= o.tables; i++ {
		if _, err := hc.ExecContext(ctx, fmt.Sprintf("UPDATE sbtest%d SET k = k WHERE id = 0", i)); err != nil {
			err = h.exitErr(fmt.Errorf("fork sbtest%d in the sandbox: %w", i, err))
			release()
			return nil, err
		}
	}
	logf("sandbox: forked %d tables × %d rows in %s", o.tables, o.tableSize, time.Since(forkStart).Round(time.Millisecond))
	return release, nil
}

// warmUp runs oltp_read_only, unrecorded, against each target once, if
// -warmup asks for it.
func (h *hops) warmUp(ctx context.Context, o options, sb sbConfig) error {
	if o.warmup <= 0 {
		return nil
	}
	secs := max(1, int(o.warmup.Round(time.Second)/time.Second))
	for _, t := range h.targets {
		logf("warm-up: oltp_read_only, 4 threads, %ds, %s (not recorded)", secs, t.name)
		if _, err := sb.run(ctx, "oltp_read_only", 4, time.Duration(secs)*time.Second, t); err != nil {
			return fmt.Errorf("warm-up via %s: %w", t.name, err)
		}
	}
	return nil
}

// sysbenchRuns runs each workload at each thread count, in rounds of each
// target in turn, recording every run in rep.
func (h *hops) sysbenchRuns(ctx context.Context, o options, sb sbConfig, rep *report) error {
	total := len(o.workloads) * len(o.threads) * o.rounds * len(h.targets)
	n := 0
	for _, wl := range o.workloads {
		for _, th := range o.threads {
			for round := 1; round <= o.rounds; round++ {
				for _, t := range h.targets {
					n++
					m, err := sb.run(ctx, wl, th, o.duration, t)
					if err != nil {
						return fmt.Errorf("%s, %d threads, round %d, via %s: %w", wl, th, round, t.name, err)
					}
					r := runRecord{workload: wl, threads: th, round: round, target: t.name, runMeasured: m}
					if m.cpuTicks >= 0 {
						r.cpuUsPerQuery = float64(m.cpuTicks) / float64(rep.clkTck) * 1e6 / float64(m.queries)
					}
					rep.runs = append(rep.runs, r)
					logf("[%d/%d] %s threads=%d round=%d %-6s %9.0f qps  p95 %6.2f ms  %s  host busy %3.0f%%",
						n, total, wl, th, round, t.name, m.qps, m.p95ms, fmtCPU(r), m.hostBusy)
				}
			}
		}
	}
	return nil
}

// measureForks times forks of each -fork-sizes table through the
// sandbox-mode proxy on sbAddr, alone and (-fork-linked) with a child table.
func measureForks(ctx context.Context, o options, sb sbConfig, e env, sbAddr string, rep *report) error {
	for _, size := range o.forkSizes {
		for _, linked := range []bool{false, true} {
			if linked && !o.forkLinked {
				continue
			}
			res, err := measureFork(ctx, sb, e.db, e.direct, sbAddr, size, o.forkReps, linked)
			if err != nil {
				return err
			}
			rep.forks = append(rep.forks, res)
		}
	}
	return nil
}

// proxyProc is a proxy process and its log file.
type proxyProc struct {
	c   *child
	log string
}

// withExit is err, naming the first of procs that exited, its exit and its
// log's tail.
func withExit(err error, procs ...proxyProc) error {
	for _, p := range procs {
		if p.c.exited() {
			return fmt.Errorf("%w\nproxy exited (%v); --- %s (tail) ---\n%s", err, p.c.err, p.log, tailFile(p.log, 30))
		}
	}
	return err
}

func fmtCPU(r runRecord) string {
	if r.cpuTicks < 0 {
		return "cpu        -      "
	}
	return fmt.Sprintf("cpu %6.1f µs/query", r.cpuUsPerQuery)
}

func kbToMiB(kb int64) float64 { return float64(kb) / 1024 }

// maxRowMiB bounds -mem-row-mib: the row and its packet overhead must fit
// MariaDB's largest max_allowed_packet (1 GiB).
const maxRowMiB = 960

// maxPacketMiB is the max_allowed_packet MariaDB and the memory test's
// client are given: 256 MiB, or more when the large row needs it (REPEAT
// gives NULL past it).
func maxPacketMiB(rowMiB int) int { return max(256, rowMiB+64) }
