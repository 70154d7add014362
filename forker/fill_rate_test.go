package forker

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
)

// Red team of the live fill rate: a fill's rate changed while a chunk
// runs and while it waits.

// rtFillConn is a snapshot connection whose fill function answers from
// script, one answer per chunk; the first chunk waits for release.
type rtFillConn struct {
	mu      sync.Mutex
	calls   []string
	entered chan struct{}
	release chan struct{}
	answers []string
}

func (c *rtFillConn) Exec(context.Context, string) (uint64, error) { return 0, nil }
func (c *rtFillConn) Close() error                                 { return nil }
func (c *rtFillConn) Query(ctx context.Context, q string) ([][]*string, error) {
	c.mu.Lock()
	n := len(c.calls)
	c.calls = append(c.calls, q)
	c.mu.Unlock()
	if n == 0 {
		close(c.entered)
		<-c.release
	}
	a := c.answers[min(n, len(c.answers)-1)]
	return [][]*string{{&a}}, nil
}

func (c *rtFillConn) callsCopy() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.calls...)
}

func (c *rtFillConn) chunks() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.calls)
}

// rtSlowedThenLifted runs a fill at rate from, sets rate mid to it while
// its first chunk (copying rows rows) runs, then lifts the rate (0) and
// wants the fill to end.
func rtSlowedThenLifted(t *testing.T, from, mid int64, rows string) {
	snap := &rtFillConn{entered: make(chan struct{}), release: make(chan struct{}),
		answers: []string{"0 " + rows + " " + rows, "1 0 " + rows}}
	f := &Filler{snap: snap, w: snap, gate: newSnapGate(), done: make(chan struct{}), claimed: map[string]uint64{}, started: time.Now()}
	rate := NewRate(from)
	f.SetRate(rate)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.Run(ctx)
	<-snap.entered
	rate.Set(mid, 0) // an operator slows the fill (SIGHUP) while a chunk runs
	close(snap.release)
	time.Sleep(200 * time.Millisecond) // ordering only: the chunk has ended
	rate.Set(0, 0)                     // ...and lets it go again
	select {
	case <-f.Done():
	case <-time.After(testkit.WaitLimit): // a hang guard: the bug slept for rows/rate seconds (50 s to 83 min)
		t.Fatalf("the rate lifted to 0, but the fill still sleeps after its first chunk (%s rows, throttled at %d rows/s); chunk calls: %s",
			rows, mid, strings.Join(snap.callsCopy(), "; "))
	}
}

// TestRTFillRateLoweredMidChunkThenLifted: a fill copying unbounded
// (lazy-fork-rate 0) is slowed to 1 row/s by a reload while a chunk runs
// (an unbounded fill nearly always has one running), then let go: it
// ends. (The throttle charged that whole unbounded chunk, 5,000 rows, at
// the new rate, a timer of 5,000 s a later reload back to 0 did not
// wake.)
func TestRTFillRateLoweredMidChunkThenLifted(t *testing.T) {
	rtSlowedThenLifted(t, 0, 1, "5000")
}

// TestRTFillRateLoweredStepThenLifted: the same from a bounded rate:
// 100,000 rows/s (chunks of 5,000) lowered to 100 then lifted (it slept
// 50 s).
func TestRTFillRateLoweredStepThenLifted(t *testing.T) {
	rtSlowedThenLifted(t, 100000, 100, "5000")
}

// TestRTFillRateLiftedWhileWaiting: a fill waiting out its rate after a
// chunk (5,000 rows at 1 row/s: 83 min) wakes when the rate is lifted.
func TestRTFillRateLiftedWhileWaiting(t *testing.T) {
	rtSlowedThenLifted(t, 1, 1, "5000")
}
