package main

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// sbTarget is where sysbench connects.
type sbTarget struct {
	name string // direct, relay, proxy, sandbox, sandbox-prod
	addr string // host:port
	proc *child // the hop's process, nil for direct
	user string // login name if not the default (sandbox: user+tag)
}

type sbConfig struct {
	bin            string
	user, password string
	tables         int
	tableSize      int
	db             string // database; "" means sbtest
}

// sbResult is what one `sysbench ... run` reported.
type sbResult struct {
	queries       int64
	qps           float64
	p95ms         float64
	ignoredErrors int64
	reconnects    int64
}

var (
	reQueries = regexp.MustCompile(`(?m)^\s*queries:\s+(\d+)\s+\(([\d.]+) per sec\.\)`)
	reP95     = regexp.MustCompile(`(?m)^\s*95th percentile:\s+([\d.]+)`)
	reIgnored = regexp.MustCompile(`(?m)^\s*ignored errors:\s+(\d+)`)
	reReconn  = regexp.MustCompile(`(?m)^\s*reconnects:\s+(\d+)`)
)

func parseSysbench(out string) (sbResult, error) {
	var r sbResult
	m := reQueries.FindStringSubmatch(out)
	if m == nil {
		return r, fmt.Errorf("no \"queries:\" line in sysbench output")
	}
	r.queries, _ = strconv.ParseInt(m[1], 10, 64)
	r.qps, _ = strconv.ParseFloat(m[2], 64)
	m = reP95.FindStringSubmatch(out)
	if m == nil {
		return r, fmt.Errorf("no \"95th percentile:\" line in sysbench output")
	}
	r.p95ms, _ = strconv.ParseFloat(m[1], 64)
	if m = reIgnored.FindStringSubmatch(out); m != nil {
		r.ignoredErrors, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if m = reReconn.FindStringSubmatch(out); m != nil {
		r.reconnects, _ = strconv.ParseInt(m[1], 10, 64)
	}
	return r, nil
}

func (c sbConfig) args(workload, addr string, extra ...string) ([]string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	args := []string{workload,
		"--db-driver=mysql",
		"--mysql-host=" + host, "--mysql-port=" + port,
		"--mysql-user=" + c.user, "--mysql-password=" + c.password,
		"--mysql-db=" + cmp.Or(c.db, "sbtest"), "--mysql-ssl=off",
		"--tables=" + strconv.Itoa(c.tables),
		"--table-size=" + strconv.Itoa(c.tableSize),
	}
	return append(args, extra...), nil
}

// sysbench runs one sysbench command and returns its output.
func (c sbConfig) sysbench(ctx context.Context, timeout time.Duration, args []string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.CombinedOutput()
	s := string(out)
	if ctx.Err() != nil {
		return s, fmt.Errorf("sysbench %s: %w", strings.Join(redact(args, c.password), " "), ctx.Err())
	}
	if err == nil && (strings.Contains(s, "FATAL") || strings.Contains(s, "ALERT")) {
		err = fmt.Errorf("reported FATAL/ALERT")
	}
	if err != nil {
		return s, fmt.Errorf("sysbench %s: %v\n%s", strings.Join(redact(args, c.password), " "), err, s)
	}
	return s, nil
}

func redact(args []string, password string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, password, "***")
	}
	return out
}

func (c sbConfig) prepare(ctx context.Context, addr string) error {
	threads := min(c.tables, 8)
	args, err := c.args("oltp_read_only", addr, "--threads="+strconv.Itoa(threads), "prepare")
	if err != nil {
		return err
	}
	_, err = c.sysbench(ctx, 30*time.Minute, args)
	return err
}

// runMeasured is one sysbench run against t, with the hop's CPU time read
// from /proc before and after.
type runMeasured struct {
	sbResult
	cpuTicks int64   // hop process utime+stime delta, -1 for direct
	hostBusy float64 // % of all CPUs busy during the run
	wall     time.Duration
}

func (c sbConfig) run(ctx context.Context, workload string, threads int, dur time.Duration, t sbTarget) (runMeasured, error) {
	secs := int(dur.Round(time.Second) / time.Second)
	if t.user != "" {
		c.user = t.user
	}
	args, err := c.args(workload, t.addr,
		"--threads="+strconv.Itoa(threads),
		"--time="+strconv.Itoa(secs),
		"--events=0",
		"--report-interval=0",
		"--db-ps-mode=auto",
		"--rand-type=uniform",
		"--percentile=95",
		"run")
	if err != nil {
		return runMeasured{}, err
	}
	m := runMeasured{cpuTicks: -1}
	var before int64
	if t.proc != nil {
		if t.proc.exited() {
			return m, fmt.Errorf("%s process has exited: %v", t.name, t.proc.err)
		}
		if before, err = cpuTicks(t.proc.pid()); err != nil {
			return m, err
		}
	}
	h0, t0 := readHostCPU(), time.Now()
	out, err := c.sysbench(ctx, dur+2*time.Minute, args)
	m.wall, m.hostBusy = time.Since(t0), busyPct(h0, readHostCPU())
	if err != nil {
		return m, err
	}
	if t.proc != nil {
		after, err := cpuTicks(t.proc.pid())
		if err != nil {
			return m, err
		}
		m.cpuTicks = after - before
	}
	if m.sbResult, err = parseSysbench(out); err != nil {
		return m, fmt.Errorf("%v:\n%s", err, out)
	}
	if m.queries <= 0 {
		return m, fmt.Errorf("sysbench did no work:\n%s", out)
	}
	return m, nil
}
