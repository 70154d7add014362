package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Targets this benchmark checks (see docs/BENCHMARKS.md).
const (
	targetQPSRatio = 0.85 // proxy/relay QPS, oltp_point_select at 32 threads
	targetRSSMiB   = 64   // proxy peak RSS while streaming ~1 GiB or a 200 MiB row, on every path
)

type runRecord struct {
	workload      string
	threads       int
	round         int
	target        string
	cpuUsPerQuery float64 // valid when cpuTicks >= 0
	runMeasured
}

type machine struct {
	nproc, cpuModel, memTotal, kernel, goVersion, mariadb, sysbench, proxyRev string
}

type report struct {
	opts         options
	started      time.Time
	elapsed      time.Duration
	machine      machine
	mariadbArgs  []string
	clkTck       int64
	sbArgsSample string
	loadStart    string
	loadEnd      string
	runs         []runRecord
	streams      []streamResult
	forks        []forkResult
	proxyHWMKB   int64
	relayHWMKB   int64
	diff         *diffResult
	lazy         []lazyResult
	storm        *stormResult
	stress       *stressResult
}

func describeMachine(ctx context.Context, root, sbBin, mariadbVersion string) machine {
	m := machine{
		nproc:     strconv.Itoa(runtime.NumCPU()),
		goVersion: runtime.Version(),
		mariadb:   mariadbVersion,
		cpuModel:  "unknown",
		memTotal:  "unknown",
	}
	if out, err := exec.CommandContext(ctx, "nproc").Output(); err == nil {
		m.nproc = strings.TrimSpace(string(out))
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.cpuModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				f := strings.Fields(rest)
				if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					m.memTotal = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
				}
				break
			}
		}
	}
	if out, err := exec.CommandContext(ctx, "uname", "-r").Output(); err == nil {
		m.kernel = strings.TrimSpace(string(out))
	}
	if out, err := exec.CommandContext(ctx, sbBin, "--version").Output(); err == nil {
		m.sysbench = strings.TrimSpace(string(out))
	}
	cmd := exec.CommandContext(ctx, "git", "describe", "--tags", "--always", "--dirty")
	cmd.Dir = root
	if out, err := cmd.Output(); err == nil {
		m.proxyRev = strings.TrimSpace(string(out))
	} else {
		m.proxyRev = "unknown"
	}
	return m
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func sbArgsSample(sb sbConfig, o options) string {
	secs := int(o.duration / time.Second)
	return fmt.Sprintf("sysbench WORKLOAD --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=PORT "+
		"--mysql-user=… --mysql-password=… --mysql-db=sbtest --mysql-ssl=off --tables=%d --table-size=%d "+
		"--threads=THREADS --time=%d --events=0 --report-interval=0 --db-ps-mode=auto --rand-type=uniform "+
		"--percentile=95 run", sb.tables, sb.tableSize, secs)
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

type cell struct {
	qps, p95, cpu []float64
	errors        int64
}

func (r *report) cells() map[string]*cell {
	cs := map[string]*cell{}
	for _, x := range r.runs {
		k := cellKey(x.workload, x.threads, x.target)
		c := cs[k]
		if c == nil {
			c = &cell{}
			cs[k] = c
		}
		c.qps = append(c.qps, x.qps)
		c.p95 = append(c.p95, x.p95ms)
		if x.cpuTicks >= 0 {
			c.cpu = append(c.cpu, x.cpuUsPerQuery)
		}
		c.errors += x.ignoredErrors + x.reconnects
	}
	return cs
}

func cellKey(wl string, th int, target string) string { return fmt.Sprintf("%s/%d/%s", wl, th, target) }

var targetNames = []string{"direct", "relay", "proxy", "sandbox", "sandbox-prod"}

// targetSandboxRatio is issue 4's target: sandbox mode (tables forked)
// oltp_point_select QPS against the raw relay at 32 threads.
const targetSandboxRatio = 0.8

func (r *report) markdown() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	r.machineSection(p)
	if r.opts.storm.only || r.opts.stress.on || r.opts.lazyOnly {
		p("### Parameters\n\n")
		p("- Command: `go run ./integration/bench %s`\n", strings.Join(r.opts.args, " "))
		p("- MariaDB: throwaway server from integration/testdb with %s\n", strings.Join(r.mariadbArgs, " "))
		p("- Load average: %s at the start, %s at the end\n\n", r.loadStart, r.loadEnd)
		switch {
		case r.opts.storm.only:
			b.WriteString(stormSection(r.storm))
		case r.opts.stress.on:
			b.WriteString(stressSection(r.stress))
		default:
			b.WriteString(lazySection(r.lazy, r.opts))
		}
		return b.String()
	}
	if r.opts.diffOnly {
		p("### Parameters\n\n")
		p("- Command: `go run ./integration/bench %s`\n", strings.Join(r.opts.args, " "))
		p("- MariaDB: throwaway server from integration/testdb with %s\n", strings.Join(r.mariadbArgs, " "))
		p("- Proxy: `sqlfork-proxy serve --mode=transparent --metrics-listen= --log-level=warn` (separate processes, default GOMAXPROCS), upstream account root\n")
		b.WriteString(r.diffSection())
		return b.String()
	}
	r.parameters(p)
	cs := r.cells()
	errNotes := r.results(p, cs)
	r.ratios(p, cs)
	r.prodRatios(p, cs)
	r.forkSection(p)
	if len(errNotes) > 0 {
		p("\nsysbench reported errors: %s\n", strings.Join(errNotes, "; "))
	}

	if len(r.streams) > 0 {
		b.WriteString(r.memorySection())
	}
	if r.diff != nil {
		b.WriteString(r.diffSection())
	}
	r.targets(p, cs)
	b.WriteString(r.rssTargets())
	r.allRuns(p)
	return b.String()
}

// machineSection writes the report's title, when it ran and the machine
// it ran on.
func (r *report) machineSection(p func(string, ...any)) {
	m := r.machine
	p("## sqlfork-proxy end-to-end benchmark\n\n")
	p("Run %s, took %s.\n\n", r.started.Format("2006-01-02 15:04 MST"), r.elapsed.Round(time.Second))

	p("### Machine\n\n")
	p("- CPUs (nproc): %s\n", m.nproc)
	p("- CPU model: %s\n", m.cpuModel)
	p("- MemTotal: %s\n", m.memTotal)
	p("- Kernel: %s\n", m.kernel)
	p("- Go: %s\n", m.goVersion)
	p("- MariaDB: %s\n", m.mariadb)
	p("- sysbench: %s\n", m.sysbench)
	p("- Proxy source: %s\n", m.proxyRev)
	p("- Load average (1/5/15 min) at start of measurements: %s; at end: %s\n\n", r.loadStart, r.loadEnd)
}

// parameters writes how the sysbench runs were made: the command, rounds,
// targets and their order, and each hop.
func (r *report) parameters(p func(string, ...any)) {
	o := r.opts
	p("### Parameters\n\n")
	p("- Command: `go run ./integration/bench %s`\n", strings.Join(r.opts.args, " "))
	p("- Rounds: %d, each run %s; workloads %s; threads %s; medians over rounds\n",
		o.rounds, o.duration, strings.Join(o.workloads, ", "), joinInts(o.threads))
	order := "direct, relay, proxy, sandbox"
	if o.sandboxProd {
		order += ", sandbox-prod"
	}
	p("- Order: for each workload × threads, rounds of (%s), interleaved\n", order)
	p("- sandbox: a second proxy process in `--mode transparent`; sysbench logs in as `<user>+bench`, so every thread shares one sandbox whose tables were all forked before measuring\n")
	if o.sandboxProd {
		p("- sandbox-prod: the same proxy process, logged in as `<user>+benchprod`: a named sandbox that forks nothing, so every statement reads production; the sandbox being one another proxy process may share, the proxy checks the sandbox's generation in the registry once per sync lease (`--sandbox-sync-lease`, default 250ms: two queries on a side connection; statements waiting meanwhile share the next)\n")
	}
	if o.warmup > 0 {
		p("- Warm-up (not recorded): oltp_read_only, 4 threads, %s, against each target once\n", o.warmup)
	}
	p("- sysbench: `%s`; data: `sysbench oltp_read_only prepare` with %d tables × %d rows\n", r.sbArgsSample, o.tables, o.tableSize)
	p("- MariaDB: throwaway server from integration/testdb with %s\n", strings.Join(r.mariadbArgs, " "))
	p("- Proxy: `sqlfork-proxy serve --metrics-listen= --log-level=warn` (separate process, default GOMAXPROCS)\n")
	p("- Relay: this harness re-executed with `-relay` (separate process, default GOMAXPROCS): io.Copy both ways per connection\n")
	p("- CPU µs/query: (utime+stime of the hop process after − before the run) / CLK_TCK (%d) / queries sysbench reported\n\n", r.clkTck)
}

// results writes the table of medians per workload, threads and target:
// the notes of the cells where sysbench reported errors.
func (r *report) results(p func(string, ...any), cs map[string]*cell) (errNotes []string) {
	p("### Results\n\n")
	p("| workload | threads | target | QPS (median) | p95 ms (median) | CPU µs/query |\n")
	p("|---|---:|---|---:|---:|---:|\n")
	for _, wl := range r.opts.workloads {
		for _, th := range r.opts.threads {
			for _, t := range targetNames {
				c := cs[cellKey(wl, th, t)]
				if c == nil {
					continue
				}
				cpu := "–"
				if len(c.cpu) > 0 {
					cpu = fmt.Sprintf("%.1f", median(c.cpu))
				}
				p("| %s | %d | %s | %.0f | %.2f | %s |\n", wl, th, t, median(c.qps), median(c.p95), cpu)
				if c.errors > 0 {
					errNotes = append(errNotes, fmt.Sprintf("%s, %d threads, %s: %d ignored errors + reconnects", wl, th, t, c.errors))
				}
			}
		}
	}
	return errNotes
}

// ratios writes the proxy's and the sandbox's QPS against the relay's, and
// the proxy's and the relay's against direct.
func (r *report) ratios(p func(string, ...any), cs map[string]*cell) {
	p("\n| workload | threads | proxy/relay QPS | sandbox/relay QPS | proxy/direct QPS | relay/direct QPS |\n")
	p("|---|---:|---:|---:|---:|---:|\n")
	for _, wl := range r.opts.workloads {
		for _, th := range r.opts.threads {
			d, rl, px, sx := cs[cellKey(wl, th, "direct")], cs[cellKey(wl, th, "relay")], cs[cellKey(wl, th, "proxy")], cs[cellKey(wl, th, "sandbox")]
			if d == nil || rl == nil || px == nil || sx == nil {
				continue
			}
			p("| %s | %d | %.2f | %.2f | %.2f | %.2f |\n", wl, th,
				ratio(median(px.qps), median(rl.qps)), ratio(median(sx.qps), median(rl.qps)),
				ratio(median(px.qps), median(d.qps)), ratio(median(rl.qps), median(d.qps)))
		}
	}
}

// forkSection writes the fork times, proxy against by hand, when forks
// were measured.
func (r *report) forkSection(p func(string, ...any)) {
	if len(r.forks) == 0 {
		return
	}
	p("\n### Fork time (copy strategy)\n\n")
	p("`forkbench.sbtest1` (sysbench schema: id, k, c CHAR(120), pad CHAR(60), index on k). **proxy**: time of the first write "+
		"(`UPDATE sbtest1 SET k = k WHERE id = 0`) through the sandbox-mode proxy in a new sandbox — the fork "+
		"(information_schema checks, CREATE TABLE … LIKE, INSERT … SELECT, AUTO_INCREMENT, registry rows) plus the "+
		"no-op UPDATE; **by hand**: `CREATE TABLE … LIKE` + `INSERT … SELECT` on a direct connection. **+ FK child**: "+
		"sbtest1 has `forkbench.child` (id, sb_id → sbtest1.id), as many rows: the proxy forks both (the foreign key "+
		"connects them) and adds the key to the child's copy; by hand the same two copies and the `ALTER TABLE … ADD "+
		"FOREIGN KEY` (foreign_key_checks off). Medians of %d.\n\n", r.forks[0].reps)
	p("| rows | shape | table MB | proxy fork | by hand | proxy/hand | proxy rows/s | proxy MB/s |\n")
	p("|---:|---|---:|---:|---:|---:|---:|---:|\n")
	for _, f := range r.forks {
		shape := "alone"
		if f.linked {
			shape = "+ FK child"
		}
		p("| %d | %s | %.1f | %s | %s | %.2f | %s | %s |\n", f.rows, shape, float64(f.bytes)/1e6, f.proxy.Round(time.Millisecond),
			f.hand.Round(time.Millisecond), ratio(float64(f.proxy), float64(f.hand)),
			fmtRate(float64(f.rows), f.proxy), fmtRate(float64(f.bytes)/1e6, f.proxy))
	}
}

// targets writes the Targets section's QPS lines: the proxy's and the
// sandboxes' QPS against the relay's on oltp_point_select.
func (r *report) targets(p func(string, ...any), cs map[string]*cell) {
	p("\n### Targets\n\n")
	rl, px := cs[cellKey("oltp_point_select", 32, "relay")], cs[cellKey("oltp_point_select", 32, "proxy")]
	if rl != nil && px != nil {
		rt := ratio(median(px.qps), median(rl.qps))
		p("- proxy QPS ≥ %.2f × relay QPS on oltp_point_select at 32 threads: %.2f (%.0f vs %.0f) — %s\n",
			targetQPSRatio, rt, median(px.qps), median(rl.qps), verdict(rt >= targetQPSRatio))
	} else {
		p("- proxy QPS ≥ %.2f × relay QPS on oltp_point_select at 32 threads: not measured in this run\n", targetQPSRatio)
	}
	rl, sx := cs[cellKey("oltp_point_select", 32, "relay")], cs[cellKey("oltp_point_select", 32, "sandbox")]
	if rl != nil && sx != nil {
		rt := ratio(median(sx.qps), median(rl.qps))
		p("- sandbox-mode (tables forked) QPS ≥ %.2f × relay QPS on oltp_point_select at 32 threads: %.2f (%.0f vs %.0f) — %s\n",
			targetSandboxRatio, rt, median(sx.qps), median(rl.qps), verdict(rt >= targetSandboxRatio))
	}
	for _, th := range []int{4, 32} {
		rl, sp := cs[cellKey("oltp_point_select", th, "relay")], cs[cellKey("oltp_point_select", th, "sandbox-prod")]
		if rl != nil && sp != nil {
			rt := ratio(median(sp.qps), median(rl.qps))
			p("- named sandbox reading production (registry checks) QPS ≥ %.2f × relay QPS on oltp_point_select at %d threads: %.2f (%.0f vs %.0f) — %s\n",
				targetSandboxRatio, th, rt, median(sp.qps), median(rl.qps), verdict(rt >= targetSandboxRatio))
		}
	}
}

// allRuns writes every sysbench run, and the hops' peak RSS.
func (r *report) allRuns(p func(string, ...any)) {
	p("\n### All runs\n\n")
	p("| workload | threads | round | target | QPS | p95 ms | CPU µs/query | host CPU busy |\n")
	p("|---|---:|---:|---|---:|---:|---:|---:|\n")
	for _, x := range r.runs {
		cpu := "–"
		if x.cpuTicks >= 0 {
			cpu = fmt.Sprintf("%.1f", x.cpuUsPerQuery)
		}
		p("| %s | %d | %d | %s | %.0f | %.2f | %s | %.0f%% |\n", x.workload, x.threads, x.round, x.target, x.qps, x.p95ms, cpu, x.hostBusy)
	}
	p("\nProcess peak RSS over the whole run (VmHWM): proxy %.1f MiB, relay %.1f MiB.\n",
		kbToMiB(r.proxyHWMKB), kbToMiB(r.relayHWMKB))
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func verdict(ok bool) string {
	if ok {
		return "**met**"
	}
	return "**missed**"
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

// memorySection is the report's table of the memory test: each load along
// each path, with the hop's RSS and a verdict where the target applies.
func (r *report) memorySection() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("\n### Memory: streaming a large result set and a large row\n\n")
	p("Read with go-sql-driver/mysql over one connection per path, rows discarded (`sql.RawBytes`), " +
		"multiStatements only for the multi-statement path, interpolateParams=false (so a statement with a ? " +
		"goes as COM_STMT_PREPARE + COM_STMT_EXECUTE, rows in the binary protocol), maxAllowedPacket and the " +
		"server's max_allowed_packet raised for the row. **sandbox** is the `--mode transparent` proxy, logged " +
		"in as `<user>+bench`: the sandbox whose sbtest1…4 were forked before the sysbench runs, so its " +
		"statements, which read sbtest1, are planned and rewritten to read sbtest1's fork (and their column " +
		"definitions pass the name relabelling). The multi-statement input is split by the proxy: SANDBOX STATUS " +
		"answered by the proxy, the SELECT sent alone and its answer relayed between them (renumbered, its last " +
		"EOF marked more-results). The hop's VmRSS is sampled every 50 ms; bytes are the column bytes of the " +
		"load's result set (SANDBOX STATUS's rows not counted).\n\n")
	for _, l := range r.loads() {
		p("- %s: %s\n", l.name, statementsLegend(l))
	}
	p("\n| load | path | bytes | time | MB/s | RSS before MiB | peak RSS MiB (sampled) | VmHWM after MiB | < %d MiB |\n", targetRSSMiB)
	p("|---|---|---:|---:|---:|---:|---:|---:|---|\n")
	for _, s := range r.streams {
		p("| %s | %s | %s | %s | %.0f | %s |\n", s.load.name, s.path.name(), fmtBytes(s.bytes),
			s.elapsed.Round(10*time.Millisecond), s.mbps(), rssCells(s))
	}
	p("\nVmHWM is the process's lifetime peak, so it includes the sysbench runs and the streams before.\n")
	return b.String()
}

// loads are the loads of the memory test, in the order streamed.
func (r *report) loads() []memLoad {
	var out []memLoad
	for _, s := range r.streams {
		if len(out) == 0 || out[len(out)-1] != s.load {
			out = append(out, s.load)
		}
	}
	return out
}

// rssCells are a stream's RSS before, peak, VmHWM and verdict cells.
func rssCells(s streamResult) string {
	if !s.sampledHop {
		return "– | – | – | –"
	}
	v := "–"
	if s.path.judged() {
		v = verdict(kbToMiB(s.rssPeakKB) < targetRSSMiB)
	}
	return fmt.Sprintf("%.1f | %.1f | %.1f | %s", kbToMiB(s.rssBaseKB), kbToMiB(s.rssPeakKB), kbToMiB(s.hwmKB), v)
}

// fmtBytes is n bytes with its size in GiB or MiB.
func fmtBytes(n int64) string { return fmt.Sprintf("%d (%s)", n, fmtSize(n)) }

// fmtSize is n bytes in GiB (from 1 GiB) or MiB.
func fmtSize(n int64) string {
	if n >= 1<<30 {
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	}
	return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
}

// rssTargets are the Targets lines of the memory test: per load, the
// highest peak RSS of the proxy's paths.
func (r *report) rssTargets() string {
	loads := r.loads()
	if len(loads) == 0 {
		return fmt.Sprintf("- proxy peak RSS < %d MiB while streaming ~1 GiB and a 200 MiB row: not measured in this run\n", targetRSSMiB)
	}
	var b strings.Builder
	for _, l := range loads {
		var worst *streamResult
		var parts []string
		for i, s := range r.streams {
			if s.load != l || !s.path.judged() {
				continue
			}
			parts = append(parts, fmt.Sprintf("%s: %.1f", s.path.name(), kbToMiB(s.rssPeakKB)))
			if worst == nil || s.rssPeakKB > worst.rssPeakKB {
				worst = &r.streams[i]
			}
		}
		if worst == nil {
			continue
		}
		peak := kbToMiB(worst.rssPeakKB)
		fmt.Fprintf(&b, "- proxy peak RSS < %d MiB streaming the %s (%s) on every path: highest %.1f MiB (%s) — %s. Peak MiB per path: %s\n",
			targetRSSMiB, l.name, fmtSize(worst.bytes), peak, worst.path.name(), verdict(peak < targetRSSMiB), strings.Join(parts, "; "))
	}
	return b.String()
}

// prodRatios writes the sandbox-prod target's QPS against the relay's and
// the sandbox's (tables forked), when it was measured.
func (r *report) prodRatios(p func(string, ...any), cs map[string]*cell) {
	if !r.opts.sandboxProd {
		return
	}
	p("\n| workload | threads | sandbox-prod/relay QPS | sandbox-prod/sandbox QPS |\n")
	p("|---|---:|---:|---:|\n")
	for _, wl := range r.opts.workloads {
		for _, th := range r.opts.threads {
			rl, sx, sp := cs[cellKey(wl, th, "relay")], cs[cellKey(wl, th, "sandbox")], cs[cellKey(wl, th, "sandbox-prod")]
			if rl == nil || sx == nil || sp == nil {
				continue
			}
			p("| %s | %d | %.2f | %.2f |\n", wl, th, ratio(median(sp.qps), median(rl.qps)), ratio(median(sp.qps), median(sx.qps)))
		}
	}
}
