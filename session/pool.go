package session

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrPoolTimeout is wrapped by the error of a side connection wait that
// ran out (see PoolTimeoutError).
var ErrPoolTimeout = errors.New("no side connection free in time")

// ErrPoolClosed is returned by a pool that was closed.
var ErrPoolClosed = errors.New("side connection pool closed")

// PoolTimeoutError is a side connection wait that ran out: every one of
// the Size connections was busy for Waited.
type PoolTimeoutError struct {
	Size   int
	Waited time.Duration
}

func (e *PoolTimeoutError) Error() string {
	return fmt.Sprintf("%v: all %d side connections (side-connections) stayed busy for %s", ErrPoolTimeout, e.Size, e.Waited)
}

// Unwrap makes errors.Is(err, ErrPoolTimeout) hold.
func (e *PoolTimeoutError) Unwrap() error { return ErrPoolTimeout }

// MySQLError is the error a client gets: 1205 (as for a lock wait
// timeout, which drivers and ORMs retry), saying what to do.
func (e *PoolTimeoutError) MySQLError() (uint16, string, string) {
	return 1205, "HY000", fmt.Sprintf("sqlfork-proxy: timed out after %s waiting for one of the proxy's %d side connections "+
		"(used for forks and the sandbox registry; all busy); retry the statement, or ask the operator to raise "+
		"--side-connections (and the upstream's max_connections with it) or --fork-queue-timeout", e.Waited, e.Size)
}

// PoolStats is a snapshot of a side connection pool.
type PoolStats struct {
	Size    int // most connections open at once
	InUse   int // handed out
	Idle    int // open, not handed out
	Waiting int // callers queued for one
}

// pool bounds the side connections of a Manager: at most size are open at
// once (idle or in use, dials in progress included); callers beyond that
// queue and are served in arrival order, each for at most the wait timeout.
type pool struct {
	dial func(ctx context.Context) (SideConn, error)

	mu      sync.Mutex
	size    int
	timeout time.Duration
	open    int // connections open or being dialled
	idle    []SideConn
	queue   []*waiter
	closed  bool
}

// grant is what a waiter is handed: a connection, a slot to dial one in
// (conn and err nil), or the error ending its wait.
type grant struct {
	conn SideConn
	err  error
}

type waiter struct{ ch chan grant }

func newPool(size int, timeout time.Duration, dial func(ctx context.Context) (SideConn, error)) *pool {
	return &pool{dial: dial, size: max(size, 1), timeout: timeout}
}

// resize changes the bound and the wait timeout. A larger bound serves
// waiters at once; with a smaller one, connections past it are closed as
// they come back.
func (p *pool) resize(size int, timeout time.Duration) {
	p.mu.Lock()
	p.size, p.timeout = max(size, 1), timeout
	var extra []SideConn
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
func (p *pool) handSlotsLocked() {
	for !p.closed && len(p.queue) > 0 && p.open < p.size {
		w := p.queue[0]
		p.queue = p.queue[1:]
		p.open++
		w.ch <- grant{}
	}
}

// get returns a connection: an idle one, a new one if fewer than size are
// open, or else the first one given back after every caller queued before.
// It gives up with a *PoolTimeoutError after the wait timeout, or with
// ctx's error.
func (p *pool) get(ctx context.Context) (SideConn, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrPoolClosed
	}
	if len(p.queue) == 0 {
		if n := len(p.idle); n > 0 {
			c := p.idle[n-1]
			p.idle = p.idle[:n-1]
			p.mu.Unlock()
			return c, nil
		}
		if p.open < p.size {
			p.open++
			p.mu.Unlock()
			return p.dialSlot(ctx)
		}
	}
	w := &waiter{ch: make(chan grant, 1)}
	p.queue = append(p.queue, w)
	size, timeout := p.size, p.timeout
	p.mu.Unlock()

	start := time.Now()
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	var cause error
	select {
	case g := <-w.ch:
		return p.take(ctx, g)
	case <-expired:
		cause = &PoolTimeoutError{Size: size, Waited: time.Since(start).Round(time.Millisecond)}
	case <-ctx.Done():
		cause = fmt.Errorf("wait for a side connection: %w", ctx.Err())
	}
	p.mu.Lock()
	for i, q := range p.queue {
		if q == w {
			p.queue = append(p.queue[:i], p.queue[i+1:]...)
			p.mu.Unlock()
			return nil, cause
		}
	}
	p.mu.Unlock()
	// Served as it gave up: the grant is in the channel.
	return p.take(ctx, <-w.ch)
}

// take turns a grant into a connection.
func (p *pool) take(ctx context.Context, g grant) (SideConn, error) {
	if g.err != nil || g.conn != nil {
		return g.conn, g.err
	}
	return p.dialSlot(ctx)
}

// dialSlot dials in a slot already counted in open; a failed dial frees
// the slot for the next waiter.
func (p *pool) dialSlot(ctx context.Context) (SideConn, error) {
	c, err := p.dial(ctx)
	if err != nil {
		p.mu.Lock()
		p.open--
		p.handSlotsLocked()
		p.mu.Unlock()
		return nil, err
	}
	return c, nil
}

// put gives back a healthy connection: to the first waiter, else to the
// idle list (or closes it when the pool shrank or closed).
func (p *pool) put(c SideConn) {
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

// drop closes a connection that failed and frees its slot.
func (p *pool) drop(c SideConn) {
	_ = c.Close()
	p.mu.Lock()
	p.open--
	p.handSlotsLocked()
	p.mu.Unlock()
}

// close closes the idle connections and ends every wait with
// ErrPoolClosed; connections in use are closed as they come back.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	idle := p.idle
	p.idle = nil
	p.open -= len(idle)
	for _, w := range p.queue {
		w.ch <- grant{err: ErrPoolClosed}
	}
	p.queue = nil
	p.mu.Unlock()
	for _, c := range idle {
		_ = c.Close()
	}
}

// stats reports the pool's state.
func (p *pool) stats() PoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return PoolStats{Size: p.size, InUse: p.open - len(p.idle), Idle: len(p.idle), Waiting: len(p.queue)}
}
