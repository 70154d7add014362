package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The lazy-fork benchmark (issue 27): for each -lazy-sizes table, a first
// write through a proxy that forks it lazily and through one that copies
// it whole, the time until the lazy fork is whole, point reads and writes
// in the sandbox while it fills against a whole copy's, and production's
// point-select latency while it fills against before.

// lazyResult is one table size's measurements (medians over -lazy-reps).
type lazyResult struct {
	rows int
	// firstLazy, firstCopy: the first write (the fork) through each proxy.
	firstLazy, firstCopy []time.Duration
	// filled: first write until SANDBOX STATUS shows the fork whole, with
	// point statements meanwhile; filledIdle, with none.
	filled, filledIdle []time.Duration
	// Point SELECT and UPDATE by key in the sandbox: the first -lazy-ops
	// during the fill, and on the whole copy; every pair during the fill.
	selFill, updFill, selCopy, updCopy []time.Duration
	allFill                            []time.Duration
	// Every point SELECT and UPDATE during the fill, and those of keys the
	// fill had staged (copied up from the staging table) and not (read
	// from the snapshot).
	selAll, updAll, selStaged, selCold, updStaged, updCold []time.Duration
	// Production's point SELECT on a direct connection, sampled in every
	// run alike: before it (2 s with nothing else running), and during
	// the whole copy (prodCopying), the point statements on it
	// (prodCopyStmts), a fill with statements (prodDuring) and one left
	// alone (prodIdle).
	prodBefore, prodCopying, prodCopyStmts, prodDuring, prodIdle []time.Duration
	// sampled says a run was sampled: "before" is the first run's only
	// (later ones may overlap the drops of the sandboxes before them).
	sampled bool
}

// measureLazy runs the benchmark for every size.
func measureLazy(ctx context.Context, o options, e env) ([]lazyResult, error) {
	lazy, lazyAddr, _, err := startProxy(ctx, e.proxyBin, e.tmp, e.db.Addr, e.db.User, e.db.Password, "lazy", "transparent",
		"--lazy-fork-rows=100000", "--log-level=info") // the log says each fill's time, and its end's ("finish")
	if err != nil {
		return nil, err
	}
	defer lazy.stop(5 * time.Second)
	whole, copyAddr, _, err := startProxy(ctx, e.proxyBin, e.tmp, e.db.Addr, e.db.User, e.db.Password, "copy", "transparent",
		"--lazy-fork-rows=0")
	if err != nil {
		return nil, err
	}
	defer whole.stop(5 * time.Second)
	sb := sbConfig{bin: e.sbBin, user: e.db.User, password: e.db.Password}
	var out []lazyResult
	for _, n := range o.lazySizes {
		if err := execDirect(ctx, e.direct, "DROP DATABASE IF EXISTS forkbench", "CREATE DATABASE forkbench"); err != nil {
			return nil, err
		}
		if _, _, err := prepareForkTables(ctx, sb, e.db, e.direct, n, false); err != nil {
			return nil, err
		}
		if err := execDirect(ctx, e.direct, "ANALYZE TABLE forkbench.sbtest1"); err != nil {
			return nil, err
		}
		r := lazyResult{rows: n}
		for i := 0; i < o.lazyReps; i++ {
			if err := r.copyRun(ctx, o, e, copyAddr, n); err != nil {
				return nil, err
			}
			if err := r.lazyRun(ctx, o, e, lazyAddr, n); err != nil {
				return nil, err
			}
			if err := r.idleRun(ctx, o, e, lazyAddr, n); err != nil {
				return nil, err
			}
			logf("lazy: %d rows, run %d: first write lazy %s, copy %s; filled in %s (%s with no statements)", n, i+1,
				r.firstLazy[i].Round(time.Millisecond), r.firstCopy[i].Round(time.Millisecond), r.filled[i].Round(time.Millisecond),
				r.filledIdle[i].Round(time.Millisecond))
			time.Sleep(time.Second) // the discarded sandboxes' drops
		}
		out = append(out, r)
	}
	_, _ = e.direct.ExecContext(context.WithoutCancel(ctx), "DROP DATABASE IF EXISTS forkbench")
	return out, nil
}

// lazySandboxConn is a new connection (a new sandbox) through the proxy on addr.
func lazySandboxConn(ctx context.Context, e env, addr string) (*sql.DB, *sql.Conn, error) {
	p, err := openMySQL(addr, e.db.User, e.db.Password, "forkbench")
	if err != nil {
		return nil, nil, err
	}
	c, err := p.Conn(ctx)
	if err != nil {
		p.Close()
		return nil, nil, err
	}
	return p, c, nil
}

// timed runs q on c and returns how long it took.
func timed(ctx context.Context, c *sql.Conn, q string, args ...any) (time.Duration, error) {
	t0 := time.Now()
	if strings.HasPrefix(q, "SELECT") {
		var s sql.NullString
		err := c.QueryRowContext(ctx, q, args...).Scan(&s)
		if err == sql.ErrNoRows {
			err = nil
		}
		return time.Since(t0), err
	}
	_, err := c.ExecContext(ctx, q, args...)
	return time.Since(t0), err
}

// timedKey runs q, whose key is a placeholder, for key: as a text with
// the key written in, or prepared (-lazy-prepared: go-sql-driver prepares,
// executes and closes it, three commands).
func timedKey(ctx context.Context, o options, c *sql.Conn, q string, key int) (time.Duration, error) {
	if o.lazyTx {
		return timedTx(ctx, c, func() (time.Duration, error) { return timedKey(ctx, options{lazyPrepared: o.lazyPrepared}, c, q, key) })
	}
	if o.lazyPrepared {
		return timed(ctx, c, q, key)
	}
	return timed(ctx, c, strings.Replace(q, "?", strconv.Itoa(key), 1))
}

// timedTx runs run in a transaction (-lazy-tx): BEGIN, run, COMMIT, timed
// together.
func timedTx(ctx context.Context, c *sql.Conn, run func() (time.Duration, error)) (time.Duration, error) {
	t0 := time.Now()
	if _, err := c.ExecContext(ctx, "BEGIN"); err != nil {
		return 0, err
	}
	if _, err := run(); err != nil {
		_, _ = c.ExecContext(ctx, "ROLLBACK")
		return 0, err
	}
	_, err := c.ExecContext(ctx, "COMMIT")
	return time.Since(t0), err
}

// firstWrite is the statement that forks the table; with -lazy-tx, an
// ORM's transaction: BEGIN, the row read by its key, updated, COMMIT.
func firstWrite(ctx context.Context, o options, c *sql.Conn) (time.Duration, error) {
	if o.lazyTx {
		one := options{lazyPrepared: o.lazyPrepared}
		return timedTx(ctx, c, func() (time.Duration, error) {
			if _, err := timedKey(ctx, one, c, "SELECT c FROM sbtest1 WHERE id = ?", 1); err != nil {
				return 0, err
			}
			return timedKey(ctx, one, c, "UPDATE sbtest1 SET k = k + 1 WHERE id = ?", 1)
		})
	}
	return timedKey(ctx, o, c, "UPDATE sbtest1 SET k = k + 1 WHERE id = ?", 1)
}

// copyRun is one run through the copying proxy: the first write, then
// point statements on the whole copy, production sampled all along.
func (r *lazyResult) copyRun(ctx context.Context, o options, e env, addr string, n int) error {
	p, c, err := lazySandboxConn(ctx, e, addr)
	if err != nil {
		return err
	}
	defer p.Close()
	defer c.Close()
	s := r.sample(ctx, e, n, &r.prodCopying)
	d, err := firstWrite(ctx, o, c)
	if err != nil {
		return errors.Join(fmt.Errorf("first write through the copying proxy: %w", err), s.stop())
	}
	r.firstCopy = append(r.firstCopy, d)
	s.into(&r.prodCopyStmts)
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < o.lazyOps && err == nil; i++ {
		var sel, upd time.Duration
		if sel, upd, err = pointPair(ctx, o, c, 1+rng.Intn(n), 1+rng.Intn(n)); err == nil {
			r.selCopy, r.updCopy = append(r.selCopy, sel), append(r.updCopy, upd)
		}
	}
	return errors.Join(err, s.stop())
}

// pointPair is one point SELECT of key ks and one point UPDATE of key ku.
func pointPair(ctx context.Context, o options, c *sql.Conn, ks, ku int) (sel, upd time.Duration, err error) {
	if sel, err = timedKey(ctx, o, c, "SELECT c FROM sbtest1 WHERE id = ?", ks); err != nil {
		return 0, 0, err
	}
	if upd, err = timedKey(ctx, o, c, "UPDATE sbtest1 SET k = k + 1 WHERE id = ?", ku); err != nil {
		return 0, 0, err
	}
	return sel, upd, nil
}

// lazyRun is one run through the lazy proxy: the first write, point
// statements while the fork fills, until it is whole, production sampled
// all along.
func (r *lazyResult) lazyRun(ctx context.Context, o options, e env, addr string, n int) error {
	p, c, err := lazySandboxConn(ctx, e, addr)
	if err != nil {
		return err
	}
	defer p.Close()
	defer c.Close()
	s := r.sample(ctx, e, n, &r.prodDuring)
	start := time.Now()
	d, err := firstWrite(ctx, o, c)
	if err == nil {
		r.firstLazy = append(r.firstLazy, d)
		err = r.whileFilling(ctx, o, c, n, start)
	}
	return errors.Join(err, s.stop())
}

// idleRun is a lazy fork left to fill with no statement meanwhile: the
// first write, then SANDBOX STATUS every 100 ms until it is whole,
// production sampled all along.
func (r *lazyResult) idleRun(ctx context.Context, o options, e env, addr string, n int) error {
	p, c, err := lazySandboxConn(ctx, e, addr)
	if err != nil {
		return err
	}
	defer p.Close()
	defer c.Close()
	s := r.sample(ctx, e, n, &r.prodIdle)
	start := time.Now()
	if _, err := firstWrite(ctx, o, c); err != nil {
		return errors.Join(err, s.stop())
	}
	for {
		whole, err := forkWhole(ctx, c)
		if err != nil || whole {
			r.filledIdle = append(r.filledIdle, time.Since(start))
			return errors.Join(err, s.stop())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// whileFilling runs point statements on c until its fork is whole.
// Each is also recorded by whether the fill had staged its key: the rows
// are keyed 1..n in order, so a key well below the copy's progress (as
// SANDBOX STATUS shows it, every 10 pairs) is staged, one well above not.
func (r *lazyResult) whileFilling(ctx context.Context, o options, c *sql.Conn, n int, start time.Time) error {
	rng := rand.New(rand.NewSource(2))
	pct := 0
	for i := 0; ; i++ {
		if i%10 == 0 {
			whole, at, err := fillStatus(ctx, c)
			if err != nil {
				return err
			}
			if whole {
				r.filled = append(r.filled, time.Since(start))
				return nil
			}
			pct = at
		}
		ks, ku := 1+rng.Intn(n), 1+rng.Intn(n)
		s, u, err := pointPair(ctx, o, c, ks, ku)
		if err != nil {
			return err
		}
		if i < o.lazyOps {
			r.selFill, r.updFill = append(r.selFill, s), append(r.updFill, u)
		}
		r.allFill = append(r.allFill, s, u)
		r.selAll, r.updAll = append(r.selAll, s), append(r.updAll, u)
		r.byStage(ks, pct, n, s, &r.selStaged, &r.selCold)
		r.byStage(ku, pct, n, u, &r.updStaged, &r.updCold)
	}
}

// byStage records d in staged or cold when key is 3 % of n or more below
// or above the fill's progress pct (else in neither).
func (r *lazyResult) byStage(key, pct, n int, d time.Duration, staged, cold *[]time.Duration) {
	switch at := key * 100 / n; {
	case at+3 <= pct:
		*staged = append(*staged, d)
	case at >= pct+3:
		*cold = append(*cold, d)
	}
}

// forkWhole says whether SANDBOX STATUS shows no table filling.
func forkWhole(ctx context.Context, c *sql.Conn) (bool, error) {
	whole, _, err := fillStatus(ctx, c)
	return whole, err
}

// fillStatus reads SANDBOX STATUS: whether no table is filling, and how
// far the (last) filling one is, in percent.
func fillStatus(ctx context.Context, c *sql.Conn) (whole bool, pct int, err error) {
	rows, err := c.QueryContext(ctx, "SANDBOX STATUS")
	if err != nil {
		return false, 0, err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	whole = true
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return false, 0, err
		}
		if st := vals[11].String; strings.HasPrefix(st, "filling") {
			whole = false
			_, _ = fmt.Sscanf(st, "filling %d%%", &pct)
		}
	}
	return whole, pct, rows.Err()
}

// sampler samples production's point SELECT on a direct connection into
// a slice the run names (into), until stop.
type sampler struct {
	mu   sync.Mutex
	to   *[]time.Duration
	quit chan struct{}
	done chan error
}

// sample starts a sampler: 2 s with nothing else running (into
// r.prodBefore for the first run), then into during until the caller
// names another slice.
func (r *lazyResult) sample(ctx context.Context, e env, n int, during *[]time.Duration) *sampler {
	before := &r.prodBefore
	if r.sampled {
		before = new([]time.Duration)
	}
	r.sampled = true
	s := &sampler{to: before, quit: make(chan struct{}), done: make(chan error, 1)}
	go func() { s.done <- s.run(ctx, e, n) }()
	time.Sleep(2 * time.Second)
	s.into(during)
	return s
}

// into has the next samples go to to.
func (s *sampler) into(to *[]time.Duration) {
	s.mu.Lock()
	s.to = to
	s.mu.Unlock()
}

// stop ends the sampling and says why it ended early, if it did.
func (s *sampler) stop() error {
	close(s.quit)
	return <-s.done
}

// run samples until stop, a point SELECT every 2 ms.
func (s *sampler) run(ctx context.Context, e env, n int) error {
	c, err := e.direct.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	rng := rand.New(rand.NewSource(3))
	for {
		select {
		case <-s.quit:
			return nil
		default:
		}
		d, err := timed(ctx, c, fmt.Sprintf("SELECT c FROM forkbench.sbtest1 WHERE id = %d", 1+rng.Intn(n)))
		if err != nil {
			return err
		}
		s.mu.Lock()
		*s.to = append(*s.to, d)
		s.mu.Unlock()
		time.Sleep(2 * time.Millisecond)
	}
}

// pct is the p-th percentile of ds.
func pct(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

// lazySection is the report's part for the lazy-fork benchmark.
func lazySection(rs []lazyResult, o options) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }
	ratio := func(a, b time.Duration) string {
		if b <= 0 {
			return "–"
		}
		return fmt.Sprintf("%.2f×", float64(a)/float64(b))
	}
	p("### Lazy forks (issue 27)\n\n")
	if o.lazyPrepared {
		p("The sandbox's statements, and the copy's, as prepared statements with the key a parameter (`-lazy-prepared`).\n\n")
	}
	if o.lazyTx {
		p("The first write is an ORM's transaction (BEGIN, SELECT and UPDATE by key, COMMIT), and each point statement runs in a " +
			"transaction of its own, BEGIN and COMMIT timed with it (`-lazy-tx`).\n\n")
	}
	p("| rows | first write, lazy | first write, copy | lazy fork whole after (with statements / none) | point SELECT while filling / on a copy | point UPDATE while filling / on a copy | production point SELECT p95 before → while filling |\n")
	p("|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		p("| %d | %s | %s | %s / %s | %s / %s (%s) | %s / %s (%s) | %s → %s (%s) |\n", r.rows,
			ms(medianDur(r.firstLazy)), ms(medianDur(r.firstCopy)), ms(medianDur(r.filled)), ms(medianDur(r.filledIdle)),
			ms(medianDur(r.selFill)), ms(medianDur(r.selCopy)), ratio(medianDur(r.selFill), medianDur(r.selCopy)),
			ms(medianDur(r.updFill)), ms(medianDur(r.updCopy)), ratio(medianDur(r.updFill), medianDur(r.updCopy)),
			ms(pct(r.prodBefore, 0.95)), ms(pct(r.prodDuring, 0.95)), ratio(pct(r.prodDuring, 0.95), pct(r.prodBefore, 0.95)))
	}
	p("\nEvery point statement during the fill, not only the first -lazy-ops of each run: median (and its ratio to the copy's), " +
		"and split by whether the fill had staged the key (copied up from the staging table) or not (read from the snapshot; " +
		"keys within 3 %% of the fill's progress are in neither).\n\n")
	p("| rows | SELECT, all | SELECT, staged key | SELECT, key not staged | UPDATE, all | UPDATE, staged key | UPDATE, key not staged |\n|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		sc, uc := medianDur(r.selCopy), medianDur(r.updCopy)
		cell := func(ds []time.Duration, base time.Duration) string {
			return fmt.Sprintf("%s (%s, %d)", ms(medianDur(ds)), ratio(medianDur(ds), base), len(ds))
		}
		p("| %d | %s | %s | %s | %s | %s | %s |\n", r.rows, cell(r.selAll, sc), cell(r.selStaged, sc), cell(r.selCold, sc),
			cell(r.updAll, uc), cell(r.updStaged, uc), cell(r.updCold, uc))
	}
	p("\nProduction's point SELECT p95 (and its ratio to before) in each part of every run: before it, nothing else running; " +
		"during today's whole copy (the copying proxy's first write); during the point statements on that copy; during a lazy fill " +
		"left alone; during a lazy fill with the point statements.\n\n")
	p("| rows | before | during a whole copy | statements on the copy | lazy fill alone | lazy fill with statements |\n|---|---|---|---|---|---|\n")
	for _, r := range rs {
		b := pct(r.prodBefore, 0.95)
		cell := func(ds []time.Duration) string { return ms(pct(ds, 0.95)) + " (" + ratio(pct(ds, 0.95), b) + ")" }
		p("| %d | %s | %s | %s | %s | %s |\n", r.rows, ms(b), cell(r.prodCopying), cell(r.prodCopyStmts), cell(r.prodIdle), cell(r.prodDuring))
	}
	p("\nMedians over the runs (first write, fill) and over every statement of every run (point statements); " +
		"the copy's first write is today's whole copy (`--lazy-fork-rows=0`), the lazy proxy's `--lazy-fork-rows=100000`.\n\n")
	for _, r := range rs {
		p("- %d rows: first writes lazy %v, copy %v; whole after %v, with no statements %v; production samples %d before, %d during fills with statements; "+
			"every point statement while filling (%d): median %s, p95 %s.\n",
			r.rows, roundAll(r.firstLazy), roundAll(r.firstCopy), roundAll(r.filled), roundAll(r.filledIdle), len(r.prodBefore), len(r.prodDuring),
			len(r.allFill), ms(medianDur(r.allFill)), ms(pct(r.allFill, 0.95)))
	}
	return b.String()
}

// roundAll rounds ds to the millisecond, for the report.
func roundAll(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(time.Millisecond)
	}
	return out
}
