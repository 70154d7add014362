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
	targetRSSMiB   = 64   // proxy peak RSS while streaming ~1 GiB
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

var targetNames = []string{"direct", "relay", "proxy", "sandbox"}

// targetSandboxRatio is issue 4's target: sandbox mode (tables forked)
// oltp_point_select QPS against the raw relay at 32 threads.
const targetSandboxRatio = 0.8

func (r *report) markdown() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	o := r.opts
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

	p("### Parameters\n\n")
	p("- Command: `go run ./integration/bench %s`\n", strings.Join(r.opts.args, " "))
	p("- Rounds: %d, each run %s; workloads %s; threads %s; medians over rounds\n",
		o.rounds, o.duration, strings.Join(o.workloads, ", "), joinInts(o.threads))
	p("- Order: for each workload × threads, rounds of (direct, relay, proxy, sandbox), interleaved\n")
	p("- sandbox: a second proxy process in `--mode transparent`; sysbench logs in as `<user>+bench`, so every thread shares one sandbox whose tables were all forked before measuring\n")
	if o.warmup > 0 {
		p("- Warm-up (not recorded): oltp_read_only, 4 threads, %s, against each target once\n", o.warmup)
	}
	p("- sysbench: `%s`; data: `sysbench oltp_read_only prepare` with %d tables × %d rows\n", r.sbArgsSample, o.tables, o.tableSize)
	p("- MariaDB: throwaway server from integration/testdb with %s\n", strings.Join(r.mariadbArgs, " "))
	p("- Proxy: `sqlfork-proxy serve --metrics-listen= --log-level=warn` (separate process, default GOMAXPROCS)\n")
	p("- Relay: this harness re-executed with `-relay` (separate process, default GOMAXPROCS): io.Copy both ways per connection\n")
	p("- CPU µs/query: (utime+stime of the hop process after − before the run) / CLK_TCK (%d) / queries sysbench reported\n\n", r.clkTck)

	cs := r.cells()
	p("### Results\n\n")
	p("| workload | threads | target | QPS (median) | p95 ms (median) | CPU µs/query |\n")
	p("|---|---:|---|---:|---:|---:|\n")
	var errNotes []string
	for _, wl := range o.workloads {
		for _, th := range o.threads {
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
	p("\n| workload | threads | proxy/relay QPS | sandbox/relay QPS | proxy/direct QPS | relay/direct QPS |\n")
	p("|---|---:|---:|---:|---:|---:|\n")
	for _, wl := range o.workloads {
		for _, th := range o.threads {
			d, rl, px, sx := cs[cellKey(wl, th, "direct")], cs[cellKey(wl, th, "relay")], cs[cellKey(wl, th, "proxy")], cs[cellKey(wl, th, "sandbox")]
			if d == nil || rl == nil || px == nil || sx == nil {
				continue
			}
			p("| %s | %d | %.2f | %.2f | %.2f | %.2f |\n", wl, th,
				ratio(median(px.qps), median(rl.qps)), ratio(median(sx.qps), median(rl.qps)),
				ratio(median(px.qps), median(d.qps)), ratio(median(rl.qps), median(d.qps)))
		}
	}
	if len(r.forks) > 0 {
		p("\n### Fork time (copy strategy)\n\n")
		p("`forkbench.sbtest1` (sysbench schema: id, k, c CHAR(120), pad CHAR(60), index on k). **proxy**: time of the first write "+
			"(`UPDATE sbtest1 SET k = k WHERE id = 0`) through the sandbox-mode proxy in a new sandbox — the fork "+
			"(information_schema checks, CREATE TABLE … LIKE, INSERT … SELECT, AUTO_INCREMENT, registry rows) plus the "+
			"no-op UPDATE; **by hand**: `CREATE TABLE … LIKE` + `INSERT … SELECT` on a direct connection. Medians of %d.\n\n", r.forks[0].reps)
		p("| rows | table MB | proxy fork | by hand | proxy/hand | proxy rows/s | proxy MB/s |\n")
		p("|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, f := range r.forks {
			p("| %d | %.1f | %s | %s | %.2f | %s | %s |\n", f.rows, float64(f.bytes)/1e6, f.proxy.Round(time.Millisecond),
				f.hand.Round(time.Millisecond), ratio(float64(f.proxy), float64(f.hand)),
				fmtRate(float64(f.rows), f.proxy), fmtRate(float64(f.bytes)/1e6, f.proxy))
		}
	}
	if len(errNotes) > 0 {
		p("\nsysbench reported errors: %s\n", strings.Join(errNotes, "; "))
	}

	var proxyStream *streamResult
	if len(r.streams) > 0 {
		p("\n### Memory: streaming a large result set\n\n")
		s0 := r.streams[0]
		p("`%s` in database sbtest, read with go-sql-driver/mysql (text protocol, one connection, rows discarded); "+
			"%d rows, %.2f GB (%.2f GiB) of column data. The hop's VmRSS is sampled every 50 ms.\n\n",
			s0.streamQuery, s0.rows, float64(s0.bytes)/1e9, float64(s0.bytes)/(1<<30))
		p("| target | MB/s | time | RSS before MiB | peak RSS MiB (sampled) | VmHWM after MiB |\n")
		p("|---|---:|---:|---:|---:|---:|\n")
		for i, s := range r.streams {
			if s.target == "proxy" {
				proxyStream = &r.streams[i]
			}
			if s.sampledHop {
				p("| %s | %.0f | %s | %.1f | %.1f | %.1f |\n", s.target, s.mbps(), s.elapsed.Round(10*time.Millisecond),
					kbToMiB(s.rssBaseKB), kbToMiB(s.rssPeakKB), kbToMiB(s.hwmKB))
			} else {
				p("| %s | %.0f | %s | – | – | – |\n", s.target, s.mbps(), s.elapsed.Round(10*time.Millisecond))
			}
		}
		if proxyStream != nil {
			p("\nMemory: proxy peak RSS %.1f MiB while streaming %.2f GiB (%d bytes) at %.0f MB/s",
				kbToMiB(proxyStream.rssPeakKB), float64(proxyStream.bytes)/(1<<30), proxyStream.bytes, proxyStream.mbps())
			for _, s := range r.streams {
				if s.target != "proxy" {
					p("; %s %.0f MB/s", s.target, s.mbps())
				}
			}
			p(".\n")
		}
		p("\nVmHWM is the lifetime peak, so it includes the sysbench runs above.\n")
	}

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
	if proxyStream != nil {
		peak := kbToMiB(proxyStream.rssPeakKB)
		p("- proxy peak RSS < %d MiB while streaming ~1 GiB: %.1f MiB — %s\n", targetRSSMiB, peak, verdict(peak < targetRSSMiB))
	} else {
		p("- proxy peak RSS < %d MiB while streaming ~1 GiB: not measured in this run\n", targetRSSMiB)
	}

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
	return b.String()
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
