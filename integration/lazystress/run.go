package lazystress

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// Slow is a slow production statement: when it started, after the
// forks' start, how long it took, and its text.
type Slow struct {
	At, Took time.Duration
	Stmt     string
}

// slowest is how many slow statements a result keeps.
const slowest = 10

// Options are how a run paces itself.
type Options struct {
	// Warm is how long production writers run before the sandboxes
	// fork (their latencies then are the "before").
	Warm time.Duration
	// Pause is the pause after each production change and each sandbox
	// statement.
	Pause time.Duration
	// After is how many statements each sandbox runs once its fork is
	// whole, before the checks.
	After int
	// Seed seeds every random choice.
	Seed int64
}

// Dialer opens sandbox i's connection: a new sandbox, its current
// database the stress table's.
type Dialer func(ctx context.Context, i int) (*sql.Conn, error)

// Result is what a run saw.
type Result struct {
	Sandboxes []SandboxResult
	// Before and During are production's statement latencies before
	// the forks and from the forks until the last fork was whole.
	Before, During []time.Duration
	// Probe are the latencies of a SELECT 1 on another direct
	// connection every 10 ms from the forks until the last was whole:
	// a stall it shares is the server's or the machine's, not one
	// table's.
	Probe []time.Duration
	// Slowest are the slowest production statements from the forks on
	// (at most slowest of them), At relative to the forks' start.
	Slowest []Slow
	// LockWaits and LockWaitTime are the server's row lock waits (and
	// their total time) from the forks until the last was whole
	// (Innodb_row_lock_waits, _time): the writers' rows are their own,
	// so a wait is one on the sandboxes' machinery.
	LockWaits    int64
	LockWaitTime time.Duration
	// Production describes what is wrong with production afterwards.
	Production []string
}

// Run runs the stress test on the table Setup made: cfg.Writers
// production writers on prod, then cfg.Sandboxes sandboxes that fork the
// table at once (their first writes) and write to it until their forks
// are whole; then it checks every fork and production. An error is a
// failure to run it; what the checks found is in the result.
func Run(ctx context.Context, cfg Config, o Options, prod *sql.DB, dial Dialer) (*Result, error) {
	e := cfg.expect()
	var sbs []*sandbox
	defer func() {
		for _, s := range sbs {
			_ = s.c.Close()
		}
	}()
	for i := 0; i < cfg.Sandboxes; i++ {
		c, err := dial(ctx, i)
		if err != nil {
			return nil, fmt.Errorf("open sandbox %d: %w", i, err)
		}
		sbs = append(sbs, newSandbox(cfg, i, c, o.Seed+int64(i)))
	}
	ws, err := startWriters(ctx, cfg, o, prod)
	if err != nil {
		return nil, err
	}
	res := &Result{Sandboxes: make([]SandboxResult, len(sbs))}
	t0, t1, err := forkAll(ctx, o, sbs, ws, res, prod)
	samples, werr := ws.stop()
	if err = errors.Join(err, werr); err != nil {
		return nil, err
	}
	for _, sm := range samples {
		switch {
		case sm.At.Before(t0):
			res.Before = append(res.Before, sm.Took)
		case !sm.At.After(t1):
			res.During = append(res.During, sm.Took)
			res.Slowest = append(res.Slowest, Slow{At: sm.At.Sub(t0), Took: sm.Took, Stmt: sm.Stmt})
		}
	}
	slices.SortFunc(res.Slowest, func(a, b Slow) int { return cmp.Compare(b.Took, a.Took) })
	res.Slowest = res.Slowest[:min(len(res.Slowest), slowest)]
	for i, s := range sbs {
		if res.Sandboxes[i].Check, err = s.verify(ctx, e); err != nil {
			return nil, err
		}
		res.Sandboxes[i].Mismatches, res.Sandboxes[i].Notes = s.mismatches, s.notes
	}
	res.Production = verifyProduction(ctx, prod, cfg, e)
	return res, nil
}

// forkAll waits o.Warm, then has every sandbox fork and write until its
// fork is whole; t0 is when they started, t1 when the last fork was
// whole.
func forkAll(ctx context.Context, o Options, sbs []*sandbox, ws *writers, res *Result, prod *sql.DB) (t0, t1 time.Time, err error) {
	select {
	case <-time.After(o.Warm):
	case <-ctx.Done():
		return t0, t1, ctx.Err()
	case err := <-ws.failed:
		return t0, t1, err
	}
	waits, wait, err := lockWaits(ctx, prod)
	if err != nil {
		return t0, t1, err
	}
	start := make(chan struct{})
	stopProbe := probe(ctx, prod)
	errs := make([]error, len(sbs))
	var wg sync.WaitGroup
	for i, s := range sbs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res.Sandboxes[i], errs[i] = s.run(ctx, start, o.Pause, o.After)
		}()
	}
	t0 = time.Now()
	close(start)
	wg.Wait()
	t1 = t0
	for _, r := range res.Sandboxes {
		if end := t0.Add(r.Filled); end.After(t1) {
			t1 = end
		}
	}
	var perr error
	res.Probe, perr = stopProbe()
	errs = append(errs, perr)
	waits2, wait2, err := lockWaits(ctx, prod)
	res.LockWaits, res.LockWaitTime = waits2-waits, wait2-wait
	return t0, t1, errors.Join(append(errs, err)...)
}

// probe runs SELECT 1 on a connection of db every 10 ms until stop,
// which returns the latencies.
func probe(ctx context.Context, db *sql.DB) (stop func() ([]time.Duration, error)) {
	halt, done := make(chan struct{}), make(chan error, 1)
	var ds []time.Duration
	go func() {
		c, err := db.Conn(ctx)
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-halt:
				done <- nil
				return
			case <-tick.C:
			}
			t := time.Now()
			if _, err := c.ExecContext(ctx, "SELECT 1"); err != nil {
				done <- fmt.Errorf("probe: %w", err)
				return
			}
			ds = append(ds, time.Since(t))
		}
	}()
	return func() ([]time.Duration, error) {
		close(halt)
		err := <-done
		return ds, err
	}
}

// lockWaits are the server's row lock waits so far and their time.
func lockWaits(ctx context.Context, db *sql.DB) (n int64, took time.Duration, err error) {
	rows, err := db.QueryContext(ctx, "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_row_lock_waits', 'Innodb_row_lock_time')")
	if err != nil {
		return 0, 0, fmt.Errorf("read the row lock waits: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var v int64
		if err := rows.Scan(&name, &v); err != nil {
			return 0, 0, err
		}
		if strings.EqualFold(name, "Innodb_row_lock_time") {
			took = time.Duration(v) * time.Millisecond
		} else {
			n = v
		}
	}
	return n, took, rows.Err()
}

// writers are the production writers running.
type writers struct {
	ws     []*writer
	halt   chan struct{}
	wg     sync.WaitGroup
	errs   []error
	failed chan error // the first writer's failure
}

// startWriters starts cfg.Writers writers on connections of prod.
func startWriters(ctx context.Context, cfg Config, o Options, prod *sql.DB) (*writers, error) {
	w := &writers{halt: make(chan struct{}), failed: make(chan error, 1), errs: make([]error, cfg.Writers)}
	for n := 0; n < cfg.Writers; n++ {
		c, err := prod.Conn(ctx)
		if err != nil {
			close(w.halt)
			w.wg.Wait()
			return nil, err
		}
		wr := newWriter(cfg, n, c, o.Seed+1000+int64(n))
		w.ws = append(w.ws, wr)
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			defer c.Close()
			if err := wr.run(ctx, w.halt, o.Pause); err != nil {
				w.errs[n] = err
				select {
				case w.failed <- err:
				default:
				}
			}
		}()
	}
	return w, nil
}

// stop stops the writers and returns every statement they ran, by start.
func (w *writers) stop() ([]Sample, error) {
	close(w.halt)
	w.wg.Wait()
	var all []Sample
	for _, wr := range w.ws {
		all = append(all, wr.samples...)
	}
	slices.SortFunc(all, func(a, b Sample) int { return a.At.Compare(b.At) })
	return all, errors.Join(w.errs...)
}
