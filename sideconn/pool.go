package sideconn

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sqlfork/sqlfork-proxy/wire"
)

// ErrTimeout is wrapped by the error of a side connection wait that
// ran out (see TimeoutError).
var ErrTimeout = errors.New("no side connection free in time")

// ErrClosed is returned by a pool that was closed.
var ErrClosed = errors.New("side connection pool closed")

// TimeoutError is a side connection wait that ran out: every one of
// the Size connections was busy for Waited.
type TimeoutError struct {
	Size   int
	Waited time.Duration
	// DialErr is why the pool could not open more connections than it
	// had, if a dial failed (the upstream full: 1040).
	DialErr error
}

// Error describes the timeout.
func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%v: all %d side connections (side-connections) stayed busy for %s%s", ErrTimeout, e.Size, e.Waited, e.refused())
}

// refused says why fewer than Size connections were open, if a dial failed.
func (e *TimeoutError) refused() string {
	if e.DialErr == nil {
		return ""
	}
	return " (the upstream refused more: " + e.DialErr.Error() + ")"
}

// Unwrap makes errors.Is(err, ErrTimeout) hold.
func (e *TimeoutError) Unwrap() error { return ErrTimeout }

// MySQLError is the error a client gets: 1205 (as for a lock wait
// timeout, which drivers and ORMs retry), saying what to do.
func (e *TimeoutError) MySQLError() (uint16, string, string) {
	return wire.ErLockWaitTimeout, wire.State(wire.ErLockWaitTimeout), fmt.Sprintf("sqlfork-proxy: timed out after %s waiting for one of the proxy's %d side connections "+
		"(used for forks and the sandbox registry; all busy)%s; retry the statement, or ask the operator to raise "+
		"--side-connections (and the upstream's max_connections with it) or --fork-queue-timeout", e.Waited, e.Size, e.refused())
}

// Stats is a snapshot of a side connection pool.
type Stats struct {
	Size    int // most connections open at once
	InUse   int // handed out
	Idle    int // open, not handed out
	Waiting int // callers queued for one
}

// Pool bounds the proxy's side connections: at most size are open at
// once (idle or in use, dials in progress included); callers beyond that
// queue and are served in arrival order, each for at most the wait timeout.
type Pool struct {
	dial Dialer

	mu      sync.Mutex
	size    int
	timeout time.Duration
	open    int // connections open or being dialled
	idle    []Conn
	queue   []*waiter
	closed  bool
	// backoffUntil: no dial until then (a dial failed while others were
	// open); dialErr is that dial's error.
	backoffUntil time.Time
	dialErr      error
	// backoff is dialBackoff (tests that must see a back-off last set
	// a longer one: theirs may not end while a loaded machine runs them).
	backoff time.Duration
}

// grant is what a waiter is handed: a connection, a slot to dial one in
// (conn and err nil), or the error ending its wait.
type grant struct {
	conn Conn
	err  error
}

type waiter struct{ ch chan grant }

// NewPool is a pool of at most size connections that dial opens, whose
// callers wait at most timeout for one.
func NewPool(size int, timeout time.Duration, dial Dialer) *Pool {
	return &Pool{dial: dial, size: max(size, 1), timeout: timeout, backoff: dialBackoff}
}

// Resize changes the bound and the wait timeout. A larger bound serves
// waiters at once; with a smaller one, connections past it are closed as
// they come back.
func (p *Pool) Resize(size int, timeout time.Duration) {
	p.mu.Lock()
	p.size, p.timeout = max(size, 1), timeout
	var extra []Conn
	for p.open > p.size && len(p.idle) > 0 {
		extra = append(extra, p.idle[len(p.idle)-1])
		p.idle = p.idle[:len(p.idle)-1]
		p.open--
	}
	p.handSlotsLocked()
	p.mu.Unlock()
	for _, c := range extra {
		_ = c.Close()
	}
}

// handSlotsLocked gives free slots to waiters, first come first served.
func (p *Pool) handSlotsLocked() {
	if p.backingOffLocked() {
		return
	}
	for !p.closed && len(p.queue) > 0 && p.open < p.size {
		w := p.queue[0]
		p.queue = p.queue[1:]
		p.open++
		w.ch <- grant{}
	}
}

// Get returns a connection: an idle one, a new one if fewer than size are
// open, or else the first one given back after every caller queued before.
// When a dial fails while other side connections are open (the upstream
// is full: 1040), the caller keeps its place at the head of the queue and
// waits for one of them, and no new dial is tried for dialBackoff; with
// none open, the dial's error is returned. It gives up with a
// *TimeoutError once the wait timeout has passed since the call, or
// with ctx's error.
func (p *Pool) Get(ctx context.Context) (Conn, error) {
	start := time.Now()
	retry := false // a dial of ours failed: wait at the head of the queue
	for {
		c, dial, err := p.take(ctx, start, retry)
		if !dial {
			return c, err
		}
		c, err = p.dialSlot(ctx)
		if err == nil || !errors.Is(err, errWaitForOthers) {
			return c, err
		}
		retry = true
	}
}

// TryGet returns an idle connection when one is free now and no caller is
// queued for one; it never dials and never waits (ok false then).
func (p *Pool) TryGet() (c Conn, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.idle)
	if p.closed || len(p.queue) > 0 || n == 0 {
		return nil, false
	}
	c = p.idle[n-1]
	p.idle = p.idle[:n-1]
	return c, true
}

// take is Get's one try: an idle connection, or a slot to dial one in
// (dial), taken at once if no one is queued (or retry), else waited for in
// the queue, at its head with retry; ErrClosed, or the error ending the
// wait (await).
func (p *Pool) take(ctx context.Context, start time.Time, retry bool) (c Conn, dial bool, err error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, false, ErrClosed
	}
	if retry || len(p.queue) == 0 {
		if n := len(p.idle); n > 0 {
			c := p.idle[n-1]
			p.idle = p.idle[:n-1]
			p.mu.Unlock()
			return c, false, nil
		}
		if p.open < p.size && !p.backingOffLocked() {
			p.open++
			p.mu.Unlock()
			return nil, true, nil
		}
	}
	w := &waiter{ch: make(chan grant, 1)}
	if retry {
		p.queue = append([]*waiter{w}, p.queue...)
	} else {
		p.queue = append(p.queue, w)
	}
	timeout := p.timeout
	p.mu.Unlock()

	g, err := p.await(ctx, w, start, timeout)
	if err != nil {
		return nil, false, err
	}
	if g.err != nil || g.conn != nil {
		return g.conn, false, g.err
	}
	return nil, true, nil
}

// await is the grant queued w is handed, waited for until timeout (if
// positive) has passed since start or ctx ends; then a *TimeoutError or
// ctx's error, unless w was served as it gave up.
func (p *Pool) await(ctx context.Context, w *waiter, start time.Time, timeout time.Duration) (grant, error) {
	var expired <-chan time.Time
	var timer *time.Timer
	if timeout > 0 {
		timer = time.NewTimer(timeout - time.Since(start))
		expired = timer.C
	}
	var g grant
	var cause error
	select {
	case g = <-w.ch:
	case <-expired:
		cause = &TimeoutError{Waited: time.Since(start).Round(time.Millisecond)}
	case <-ctx.Done():
		cause = fmt.Errorf("wait for a side connection: %w", ctx.Err())
	}
	if timer != nil {
		timer.Stop()
	}
	if cause == nil {
		return g, nil
	}
	if p.leaveQueue(w, cause) {
		return grant{}, cause
	}
	return <-w.ch, nil // served as it gave up
}

// leaveQueue takes w, giving up with cause, out of the queue, filling in a
// *TimeoutError's pool size and last dial error; false if w was no longer
// queued (a grant is on its way).
func (p *Pool) leaveQueue(w *waiter, cause error) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if te, ok := cause.(*TimeoutError); ok {
		te.Size, te.DialErr = p.size, p.dialErr
	}
	for i, q := range p.queue {
		if q == w {
			p.queue = append(p.queue[:i], p.queue[i+1:]...)
			return true
		}
	}
	return false
}

// errWaitForOthers marks a failed dial made while other connections are
// open: the caller waits for one of them instead.
var errWaitForOthers = errors.New("wait for an open side connection")

// dialBackoff is how long after a failed dial no new one is tried while
// other side connections are open.
const dialBackoff = time.Second

// backingOffLocked reports whether no dial should be tried now: a dial
// failed less than dialBackoff ago and other connections are open to wait
// for (with none open there is nothing else to wait for).
func (p *Pool) backingOffLocked() bool {
	return p.open > 0 && !p.backoffUntil.IsZero() && time.Now().Before(p.backoffUntil)
}

// dialSlot dials in a slot already counted in open. A failed dial frees
// the slot; with other connections open it returns errWaitForOthers (and
// backs off), else the dial's error, and hands the slot to the next waiter.
func (p *Pool) dialSlot(ctx context.Context) (Conn, error) {
	c, err := p.dial(ctx)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err == nil {
		p.backoffUntil, p.dialErr = time.Time{}, nil
		return c, nil
	}
	p.open--
	if p.open > 0 && ctx.Err() == nil && !p.closed {
		p.backoffUntil, p.dialErr = time.Now().Add(p.backoff), err
		// When the back-off ends, free slots go to the waiters again
		// (nothing else may come to hand them out: the open connections
		// can be held for as long as a fork runs).
		time.AfterFunc(p.backoff, func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.handSlotsLocked()
		})
		return nil, fmt.Errorf("%w: %w", errWaitForOthers, err)
	}
	p.handSlotsLocked()
	return nil, err
}

// Put gives back a healthy connection: to the first waiter, else to the
// idle list (or closes it when the pool shrank or closed).
func (p *Pool) Put(c Conn) {
	p.mu.Lock()
	if p.closed || p.open > p.size {
		p.open--
		p.handSlotsLocked()
		p.mu.Unlock()
		_ = c.Close()
		return
	}
	if len(p.queue) > 0 {
		w := p.queue[0]
		p.queue = p.queue[1:]
		p.mu.Unlock()
		w.ch <- grant{conn: c}
		return
	}
	p.idle = append(p.idle, c)
	p.mu.Unlock()
}

// Drop closes a connection that failed and frees its slot.
func (p *Pool) Drop(c Conn) {
	_ = c.Close()
	p.mu.Lock()
	p.open--
	p.handSlotsLocked()
	p.mu.Unlock()
}

// Close closes the idle connections and ends every wait with
// ErrClosed; connections in use are closed as they come back.
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	idle := p.idle
	p.idle = nil
	p.open -= len(idle)
	for _, w := range p.queue {
		w.ch <- grant{err: ErrClosed}
	}
	p.queue = nil
	p.mu.Unlock()
	for _, c := range idle {
		_ = c.Close()
	}
}

// Stats reports the pool's state.
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Stats{Size: p.size, InUse: p.open - len(p.idle), Idle: len(p.idle), Waiting: len(p.queue)}
}
