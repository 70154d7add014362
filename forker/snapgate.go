package forker

import "sync"

// snapGate orders the uses of a fill's snapshot connection: one at a
// time, and a copy-up (a statement waits for it) before the next chunk of
// the background copy, however the goroutines are scheduled.
type snapGate struct {
	mu    sync.Mutex
	cond  *sync.Cond
	busy  bool
	chunk bool // what holds it is a chunk
	ups   int  // copy-ups waiting
}

func newSnapGate() *snapGate {
	g := &snapGate{}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// lockUp takes the connection for a copy-up (or the fill's end): next,
// before any chunk.
func (g *snapGate) lockUp() {
	g.queueUp()
	g.takeUp()
}

// queueUp puts a copy-up in line (takeUp takes the connection): no chunk
// starts from then on. It says whether a chunk holds the connection.
func (g *snapGate) queueUp() (chunk bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ups++
	return g.busy && g.chunk
}

// takeUp takes the connection for a copy-up queueUp put in line.
func (g *snapGate) takeUp() {
	g.mu.Lock()
	for g.busy {
		g.cond.Wait()
	}
	g.ups--
	g.busy = true
	g.mu.Unlock()
}

// lockChunk takes the connection for a chunk once no copy-up waits.
func (g *snapGate) lockChunk() {
	g.mu.Lock()
	for g.busy || g.ups > 0 {
		g.cond.Wait()
	}
	g.busy, g.chunk = true, true
	g.mu.Unlock()
}

// unlock gives the connection back.
func (g *snapGate) unlock() {
	g.mu.Lock()
	g.busy, g.chunk = false, false
	g.mu.Unlock()
	g.cond.Broadcast()
}
