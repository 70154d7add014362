package forker

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
)

// boundedFillConn is a snapshot connection whose fill function copies one
// row per chunk held to a rate, and completes the copy in one chunk of no
// bound: the fill ends only once the rate lets it go.
type boundedFillConn struct {
	mu     sync.Mutex
	chunks []string
}

func (c *boundedFillConn) Exec(context.Context, string) (uint64, error) { return 0, nil }
func (c *boundedFillConn) Close() error                                 { return nil }
func (c *boundedFillConn) Query(_ context.Context, q string) ([][]*string, error) {
	c.mu.Lock()
	c.chunks = append(c.chunks, q)
	n := len(c.chunks)
	c.mu.Unlock()
	a := "0 1 " + strings.Repeat("1", min(n, 18))
	if strings.Contains(q, "(1073741824,") {
		a = "1 0 9"
	}
	return [][]*string{{&a}}, nil
}

func (c *boundedFillConn) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.chunks)
}

// runBounded runs a fill at 20 rows/s held for limit, and returns it with
// its connection.
func runBounded(ctx context.Context, limit time.Duration) (*Filler, *boundedFillConn) {
	snap := &boundedFillConn{}
	f := &Filler{snap: snap, w: snap, gate: newSnapGate(), done: make(chan struct{}), claimed: map[string]uint64{}, started: time.Now()}
	rate := NewRate(0)
	rate.Set(20, limit)
	f.SetRate(rate)
	go f.Run(ctx)
	return f, snap
}

// TestFillRateFor: a fill held to lazy-fork-rate for a while copies as
// fast as it goes after it, and ends; with no such bound (0) it keeps to
// the rate.
func TestFillRateFor(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f, snap := runBounded(ctx, 300*time.Millisecond)
	select {
	case <-f.Done():
	case <-time.After(testkit.WaitLimit): // a hang guard: held to the rate, the fill never ends
		t.Fatalf("the fill still keeps to its rate after the time it was held to it (%d chunks)", snap.count())
	}
	if f.Progress().Err != nil {
		t.Fatal(f.Progress().Err)
	}

	held, snap := runBounded(ctx, 0)
	for snap.count() < 3 {
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case <-held.Done():
		t.Fatal("a fill held to its rate all along went unbounded")
	default:
	}
	cancel()
	<-held.Done()
}

// TestRateFor: the rate a fill copies at, by its age.
func TestRateFor(t *testing.T) {
	r := NewRate(0)
	r.Set(100, time.Hour)
	if got := r.Rows(time.Now()); got != 100 {
		t.Errorf("a new fill: %d rows/s, want 100", got)
	}
	if got := r.Rows(time.Now().Add(-2 * time.Hour)); got != 0 {
		t.Errorf("a fill two hours old: %d rows/s, want 0 (let go)", got)
	}
	r.Set(100, 0)
	if got := r.Rows(time.Now().Add(-2 * time.Hour)); got != 100 {
		t.Errorf("no bound on the time: %d rows/s, want 100", got)
	}
	var none *Rate
	if got := none.Rows(time.Now()); got != 0 {
		t.Errorf("no rate: %d", got)
	}
}
