package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/sqlfork/sqlfork-proxy/integration/lazystress"
)

// The stress benchmark of lazy forks (issue 27, integration/lazystress):
// production writers on direct connections, and many sandboxes through
// two proxies that fork one big table at once (their first writes) and
// write to it while their forks fill. It reports each fork's first write
// and fill, production's statement latencies before and during the
// fills, and the checks of every fork (rows lost or duplicated: 0).

// stressOptions are the stress benchmark's flags.
type stressOptions struct {
	on                 bool
	rows               int64
	sandboxes, writers int
	rate               int64
	pause              time.Duration
	warm               time.Duration
}

// stressFlags defines the stress benchmark's flags.
func stressFlags(o *stressOptions) {
	flag.BoolVar(&o.on, "lazy-stress", false, "run only the stress benchmark of lazy forks (issue 27): production writers and many sandboxes forking one big table at once")
	flag.Int64Var(&o.rows, "stress-rows", 1000000, "rows of the stress benchmark's table")
	flag.IntVar(&o.sandboxes, "stress-sandboxes", 8, "sandboxes that fork the table at once (through two proxies)")
	flag.IntVar(&o.writers, "stress-writers", 4, "production writers (direct connections)")
	flag.Int64Var(&o.rate, "stress-rate", 0, "the proxies' --lazy-fork-rate (rows per second of each fill; 0: no bound)")
	flag.DurationVar(&o.pause, "stress-pause", 2*time.Millisecond, "pause after each production change and each sandbox statement")
	flag.DurationVar(&o.warm, "stress-warm", 5*time.Second, "how long production writers run before the forks (the \"before\" latencies)")
}

// check validates the flags.
func (o stressOptions) check() error {
	if o.rows < 1000 || o.sandboxes < 1 || o.writers < 1 || o.rate < 0 || o.pause < 0 || o.warm <= 0 {
		return fmt.Errorf("-stress-rows must be at least 1000, -stress-sandboxes, -stress-writers and -stress-warm positive")
	}
	return nil
}

// lazyRows is the proxies' --lazy-fork-rows: the default, or less for a
// table whose estimate could fall below it.
func (o stressOptions) lazyRows() int64 { return min(100000, o.rows/2) }

// stressResult is one stress run.
type stressResult struct {
	cfg  lazystress.Config
	opts stressOptions
	res  *lazystress.Result
}

// measureStress runs the stress benchmark.
func measureStress(ctx context.Context, o stressOptions, e env) (*stressResult, error) {
	cfg := lazystress.Config{DB: "stress27", Rows: o.rows, Sandboxes: o.sandboxes, Writers: o.writers}
	logf("stress: making a table of %d rows", o.rows)
	if err := lazystress.Setup(ctx, e.direct, cfg); err != nil {
		return nil, err
	}
	defer func() { _, _ = e.direct.ExecContext(context.WithoutCancel(ctx), "DROP DATABASE IF EXISTS stress27") }()
	var pools []*sql.DB
	defer func() {
		for _, p := range pools {
			p.Close()
		}
	}()
	for _, name := range []string{"stress-a", "stress-b"} {
		c, addr, _, err := startProxy(ctx, e.proxyBin, e.tmp, e.db.Addr, e.db.User, e.db.Password, name, "transparent",
			fmt.Sprintf("--lazy-fork-rows=%d", o.lazyRows()), fmt.Sprintf("--lazy-fork-rate=%d", o.rate), "--sandbox-grace=0")
		if err != nil {
			return nil, err
		}
		defer c.stop(10 * time.Second)
		p, err := openMySQL(addr, e.db.User, e.db.Password, cfg.DB)
		if err != nil {
			return nil, err
		}
		pools = append(pools, p)
	}
	dial := func(ctx context.Context, i int) (*sql.Conn, error) { return pools[i%len(pools)].Conn(ctx) }
	logf("stress: %d writers, then %d sandboxes forking at once", o.writers, o.sandboxes)
	res, err := lazystress.Run(ctx, cfg, lazystress.Options{Warm: o.warm, Pause: o.pause, After: 20, Seed: 1}, e.direct, dial)
	if err != nil {
		return nil, err
	}
	return &stressResult{cfg: cfg, opts: o, res: res}, nil
}

// problems are the checks that failed (none: every fork right).
func (r *stressResult) problems() []string {
	out := append([]string(nil), r.res.Production...)
	for i, s := range r.res.Sandboxes {
		out = append(out, s.Notes...)
		if !s.Lazy {
			out = append(out, fmt.Sprintf("sandbox %d: the table was copied whole, not forked lazily", i))
		}
		for _, p := range s.Check.Problems() {
			out = append(out, fmt.Sprintf("sandbox %d: %s", i, p))
		}
	}
	return out
}

// stressSection is the report's part for the stress benchmark.
func stressSection(r *stressResult) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
	p("### Lazy forks under production writers (issue 27 stress)\n\n")
	p("%d rows; %d production writers; %d sandboxes through two proxies (`--lazy-fork-rows=%d --lazy-fork-rate=%d`), "+
		"forking at once; a pause of %s after each statement.\n\n", r.cfg.Rows, r.cfg.Writers, r.cfg.Sandboxes, r.opts.lazyRows(), r.opts.rate, r.opts.pause)
	p("| sandbox | fork | first write | whole after | statements (while filling) | answers off the model | lost | duplicated | deleted, back | other values | production's rows (sum of v) | DIFF ins/upd/del/conflicts |\n")
	p("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for i, s := range r.res.Sandboxes {
		c := s.Check
		kind := "lazy"
		if !s.Lazy {
			kind = "whole copy"
		}
		p("| %d | %s | %s | %s | %d (%d) | %d | %d | %d | %d | %d | %d (%d), want %d (%d) | %s, want %s |\n", i, kind, ms(s.FirstWrite), ms(s.Filled),
			s.Steps, s.Filling, s.Mismatches, c.Lost, c.Duplicated(), c.Back, c.Wrong, c.ProdRows, c.ProdV, c.WantProdRows, c.WantProdV,
			c.Diff, c.WantDiff)
	}
	p("\n| production statements | count | p50 | p95 | p99 | max | over 100 ms |\n|---|---|---|---|---|---|---|\n")
	for _, row := range []struct {
		name string
		ds   []time.Duration
	}{{"before the forks", r.res.Before}, {"while the forks fill", r.res.During}, {"`SELECT 1` every 10 ms while the forks fill", r.res.Probe}} {
		l := lazystress.Summarize(row.ds)
		p("| %s | %d | %s | %s | %s | %s | %d |\n", row.name, l.N, ms(l.P50), ms(l.P95), ms(l.P99), ms(l.Max), lazystress.Over(row.ds, 100*time.Millisecond))
	}
	p("\nThe server's row lock waits while the forks fill (`Innodb_row_lock_waits`; the writers' rows are their own, so a wait is "+
		"one on the sandboxes' machinery): %d, %s in all.\n", r.res.LockWaits, r.res.LockWaitTime)
	p("\nSlowest production statements while the forks fill (time after the forks began):\n\n")
	for _, s := range r.res.Slowest {
		p("- %s at %s: `%s`\n", ms(s.Took), s.At.Round(time.Millisecond), s.Stmt)
	}
	if probs := r.problems(); len(probs) > 0 {
		p("\n**Checks failed:**\n\n")
		for _, s := range probs {
			p("- %s\n", s)
		}
	} else {
		p("\nChecks: every answer was the model's; every fork held each stable row once as made, production's rows of one consistent state, the sandbox's rows as its model, and the DIFF it makes; production held none of the sandboxes' changes.\n")
	}
	return b.String()
}
