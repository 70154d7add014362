package registry

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// gate orders the statements this process runs in a sandbox with a
// SANDBOX RESET of it: a reset closes the gate and waits until the
// statements already past it are done (Drain), and a statement that comes
// meanwhile waits at it (Enter) until the reset has ended, then finds its
// plan stale (the sandbox's version moved) and plans again. So no
// statement is sent to a fork the reset dropped after it was planned.
type gate struct {
	mu       sync.Mutex
	inflight int
	// closed is non-nil while a reset drains: closed when the reset ends.
	closed chan struct{}
	// drained is closed when the last statement in flight leaves while a
	// reset drains.
	drained chan struct{}
}

// Enter passes the gate of sb for one statement, waiting while a reset
// runs; leave ends the statement's passage (once).
func (sb *Sandbox) Enter(ctx context.Context) (leave func(), err error) {
	g := &sb.gate
	for {
		g.mu.Lock()
		if g.closed == nil {
			g.inflight++
			g.mu.Unlock()
			var once sync.Once
			return func() { once.Do(g.leave) }, nil
		}
		wait := g.closed
		g.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for a reset of sandbox %s: %w", sb.Name, ctx.Err())
		}
	}
}

// leave counts a statement out.
func (g *gate) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inflight--
	if g.inflight == 0 && g.drained != nil {
		close(g.drained)
		g.drained = nil
	}
}

// Drain closes sb's gate and waits, at most wait, until the statements
// in flight are done; release opens it again. ok is false (the gate open
// again) when they were not done in time: a statement waiting on a lock
// that a transaction of another connection of the sandbox holds, whose
// next statement waits at the gate, is let go rather than stuck.
func (sb *Sandbox) Drain(ctx context.Context, wait time.Duration) (release func(), ok bool) {
	g := &sb.gate
	g.mu.Lock()
	for g.closed != nil { // another drain (the caller holds the fork lock: none)
		c := g.closed
		g.mu.Unlock()
		<-c
		g.mu.Lock()
	}
	closed := make(chan struct{})
	g.closed = closed
	var drained chan struct{}
	if g.inflight > 0 {
		drained = make(chan struct{})
		g.drained = drained
	}
	g.mu.Unlock()
	release = func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.closed, g.drained = nil, nil
		close(closed)
	}
	if drained == nil {
		return release, true
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-drained:
		return release, true
	case <-t.C:
	case <-ctx.Done():
	}
	release()
	return nil, false
}
