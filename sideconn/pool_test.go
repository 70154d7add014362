package sideconn

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
)

// These tests drive the pool's bookkeeping with in-memory connections: the
// pool never looks inside a connection, and the integration suite
// (integration/load_test.go) runs it against MariaDB.

type countingDialer struct {
	open, peak, dials atomic.Int64
	fail              atomic.Int64 // dials left to fail
}

type memConn struct {
	d      *countingDialer
	closed atomic.Bool
}

func (c *memConn) Exec(context.Context, string) (uint64, error)       { return 0, nil }
func (c *memConn) Query(context.Context, string) ([][]*string, error) { return nil, nil }
func (c *memConn) Close() error {
	if c.closed.CompareAndSwap(false, true) {
		c.d.open.Add(-1)
	}
	return nil
}

func (d *countingDialer) dial(ctx context.Context) (Conn, error) {
	if d.fail.Add(-1) >= 0 {
		return nil, errors.New("refused")
	}
	d.dials.Add(1)
	n := d.open.Add(1)
	for {
		p := d.peak.Load()
		if n <= p || d.peak.CompareAndSwap(p, n) {
			break
		}
	}
	return &memConn{d: d}, nil
}

// newPool makes a pool of size over a fresh countingDialer.
func newPool(size int, timeout time.Duration) (*countingDialer, *Pool) {
	d := &countingDialer{}
	return d, NewPool(size, timeout, d.dial)
}

// getAsync asks p for a connection from another goroutine: the channel
// gives what it got (an error fails the test).
func getAsync(t *testing.T, p *Pool) <-chan Conn {
	got := make(chan Conn)
	go func() {
		c, err := p.Get(context.Background())
		if err != nil {
			t.Error(err)
		}
		got <- c
	}()
	return got
}

// waitQueued waits until n callers wait in p's queue.
func waitQueued(t *testing.T, p *Pool, n int, who string) {
	t.Helper()
	testkit.Eventually(t, who+" to queue", func() bool { return p.Stats().Waiting == n })
}

// wantStats wants p's stats to be want.
func wantStats(t *testing.T, p *Pool, when string, want Stats) {
	t.Helper()
	if st := p.Stats(); st != want {
		t.Errorf("%s: stats %+v, want %+v", when, st, want)
	}
}

// The pool never has more than size connections open, however many callers
// want one, and ends with every slot accounted for.
func TestPoolBoundUnderConcurrency(t *testing.T) {
	d, p := newPool(3, time.Minute)
	var wg sync.WaitGroup
	var held, peakHeld atomic.Int64
	for g := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				c, err := p.Get(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				n := held.Add(1)
				for {
					pk := peakHeld.Load()
					if n <= pk || peakHeld.CompareAndSwap(pk, n) {
						break
					}
				}
				if i%3 == 0 {
					time.Sleep(50 * time.Microsecond)
				}
				held.Add(-1)
				if (g+i)%7 == 0 {
					p.Drop(c) // a failed connection: its slot is dialled again
				} else {
					p.Put(c)
				}
			}
		}()
	}
	wg.Wait()
	if pk := d.peak.Load(); pk > 3 || pk < 1 {
		t.Errorf("peak open connections %d, want 1..3", pk)
	}
	if pk := peakHeld.Load(); pk > 3 {
		t.Errorf("peak connections handed out %d, want at most 3", pk)
	}
	st := p.Stats()
	if st.InUse != 0 || st.Waiting != 0 || int64(st.Idle) != d.open.Load() || st.Idle > 3 {
		t.Errorf("after the run: %+v with %d open", st, d.open.Load())
	}
	if d.dials.Load() <= 3 {
		t.Errorf("only %d dials: dropped connections were not replaced", d.dials.Load())
	}
	p.Close()
	if n := d.open.Load(); n != 0 {
		t.Errorf("%d connections open after close", n)
	}
}

// Waiters are served in the order they queued.
func TestPoolServesWaitersInOrder(t *testing.T) {
	d, p := newPool(1, time.Minute)
	first, err := p.Get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	order := make(chan int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := p.Get(context.Background())
			if err != nil {
				t.Error(err)
				return
			}
			order <- i
			p.Put(c)
		}()
		// The next waiter starts only once this one is queued.
		waitQueued(t, p, i+1, fmt.Sprintf("waiter %d", i))
	}
	p.Put(first)
	wg.Wait()
	close(order)
	want := 0
	for got := range order {
		if got != want {
			t.Fatalf("waiter %d served in place %d", got, want)
		}
		want++
	}
	if want != n {
		t.Fatalf("%d waiters served, want %d", want, n)
	}
	if d.dials.Load() != 1 {
		t.Errorf("%d dials, want 1 (every waiter reuses the one connection)", d.dials.Load())
	}
}

// A wait past the timeout fails with the 1205 error naming the pool size and
// what to do, leaves the queue, and the pool works on.
func TestPoolTimeout(t *testing.T) {
	d, p := newPool(2, 30*time.Millisecond)
	a, _ := p.Get(context.Background())
	b, _ := p.Get(context.Background())
	start := time.Now()
	c, err := p.Get(context.Background())
	if c != nil || err == nil {
		t.Fatalf("got %v, %v; want a timeout", c, err)
	}
	if waited := time.Since(start); waited < 30*time.Millisecond {
		t.Errorf("gave up after %s, before the 30ms timeout", waited)
	}
	var te *TimeoutError
	if !errors.As(err, &te) || !errors.Is(err, ErrTimeout) || te.Size != 2 {
		t.Fatalf("error %v (%T), want a *TimeoutError of size 2", err, err)
	}
	code, state, msg := te.MySQLError()
	if code != 1205 || state != "HY000" || !strings.Contains(msg, "2 side connections") ||
		!strings.Contains(msg, "retry") || !strings.Contains(msg, "--side-connections") {
		t.Errorf("client error %d %s %q", code, state, msg)
	}
	wantStats(t, p, "after the timeout", Stats{Size: 2, InUse: 2})
	p.Put(a)
	got, err := p.Get(context.Background())
	if err != nil || got != a {
		t.Fatalf("after a put: %v, %v; want the connection given back", got, err)
	}
	p.Put(got)
	p.Put(b)
	if d.dials.Load() != 2 {
		t.Errorf("%d dials, want 2", d.dials.Load())
	}
}

// A cancelled context ends the wait with its error.
func TestPoolContextCancel(t *testing.T) {
	_, p := newPool(1, time.Minute)
	a, _ := p.Get(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := p.Get(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the context's error", err)
	}
	p.Put(a)
	wantStats(t, p, "after the cancelled wait", Stats{Size: 1, Idle: 1})
}

// A failed dial frees its slot: the next caller (here a queued one) dials
// in it.
func TestPoolDialFailureFreesSlot(t *testing.T) {
	d, p := newPool(1, time.Minute)
	d.fail.Store(1)
	if _, err := p.Get(context.Background()); err == nil {
		t.Fatal("the first dial should fail")
	}
	c, err := p.Get(context.Background())
	if err != nil {
		t.Fatalf("after a failed dial: %v", err)
	}
	p.Put(c)
	wantStats(t, p, "after a failed dial and a put", Stats{Size: 1, Idle: 1})
}

// Growing the pool serves a waiter at once; shrinking it closes connections
// past the new size as they come back.
func TestPoolResize(t *testing.T) {
	d, p := newPool(1, time.Minute)
	a, _ := p.Get(context.Background())
	got := getAsync(t, p)
	waitQueued(t, p, 1, "the waiter")
	p.Resize(2, time.Minute)
	b := <-got
	if b == nil || b == a || d.open.Load() != 2 {
		t.Fatalf("after growing: got %v with %d open", b, d.open.Load())
	}
	p.Resize(1, time.Minute)
	p.Put(a)
	p.Put(b)
	if n := d.open.Load(); n != 1 {
		t.Errorf("%d connections open after shrinking to 1", n)
	}
}

// Close ends every wait.
func TestPoolCloseEndsWaits(t *testing.T) {
	d, p := newPool(1, time.Minute)
	a, _ := p.Get(context.Background())
	errc := make(chan error)
	go func() {
		_, err := p.Get(context.Background())
		errc <- err
	}()
	waitQueued(t, p, 1, "the waiter")
	p.Close()
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Fatalf("waiter got %v, want ErrClosed", err)
	}
	p.Put(a)
	if n := d.open.Load(); n != 0 {
		t.Errorf("%d connections open after close", n)
	}
}

// A dial refused while another connection is open (the upstream full)
// does not fail the caller: it waits at the head of the queue for that
// connection, and no other dial is tried meanwhile.
func TestPoolDialFailureWaitsForOpenConnection(t *testing.T) {
	d, p := newPool(4, time.Minute)
	p.backoff = time.Hour // not over before the second caller queues, however slow
	a, _ := p.Get(context.Background())
	d.fail.Store(1)
	got := getAsync(t, p)
	waitQueued(t, p, 1, "the refused caller")
	// A later caller queues behind it rather than dialling again.
	got2 := getAsync(t, p)
	waitQueued(t, p, 2, "the second caller")
	if n := d.dials.Load(); n != 1 {
		t.Fatalf("%d successful dials, want 1 (no dial while backing off)", n)
	}
	p.Put(a)
	if c := <-got; c != a {
		t.Fatalf("the refused caller got %v, want the open connection", c)
	}
	p.Put(a)
	if c := <-got2; c != a {
		t.Fatalf("the second caller got %v, want the open connection", c)
	}
	p.Put(a)
}

// A wait that runs out after a refused dial says why the pool did not grow.
func TestPoolTimeoutAfterRefusedDial(t *testing.T) {
	d, p := newPool(4, 50*time.Millisecond)
	p.backoff = time.Hour // the wait runs out first, however late its timer fires
	a, _ := p.Get(context.Background())
	d.fail.Store(1)
	_, err := p.Get(context.Background())
	var te *TimeoutError
	if !errors.As(err, &te) || te.DialErr == nil {
		t.Fatalf("got %v, want a timeout naming the refused dial", err)
	}
	if _, _, msg := te.MySQLError(); !strings.Contains(msg, "the upstream refused more: refused") {
		t.Errorf("message %q", msg)
	}
	p.Put(a)
}

// When the connections a refused caller waits for are dropped, it dials
// again at once rather than wait out the back-off.
func TestPoolDropDuringBackoffDials(t *testing.T) {
	d, p := newPool(2, time.Minute)
	p.backoff = time.Hour // only the drop can end the wait within the test
	a, _ := p.Get(context.Background())
	d.fail.Store(1)
	got := getAsync(t, p)
	waitQueued(t, p, 1, "the refused caller")
	p.Drop(a) // the upstream killed it: nothing left to wait for
	select {
	case c := <-got:
		if c == nil || c == a {
			t.Fatalf("got %v", c)
		}
		p.Put(c)
	case <-time.After(testkit.WaitLimit):
		t.Fatal("the caller still waits after the last open connection was dropped")
	}
}

// TestPoolRetriesAfterBackoff: a dial refused while another connection is
// held (a transient 1040) is retried once the back-off ends, though no
// connection comes back meanwhile (it may be held by a fork for minutes).
func TestPoolRetriesAfterBackoff(t *testing.T) {
	// The wait outlasts the back-off many times over: only a retry that
	// never comes runs it out.
	d, p := newPool(4, testkit.WaitLimit)
	p.backoff = 10 * time.Millisecond
	held, err := p.Get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Put(held)
	d.fail.Store(1) // the next dial is refused, later ones succeed
	start := time.Now()
	c, err := p.Get(context.Background())
	if err != nil {
		t.Fatalf("waited %s for a side connection with 3 free slots and the upstream accepting again: %v", time.Since(start), err)
	}
	p.Put(c)
}

// TestPoolTryGet: TryGet takes an idle connection only, never dials, and
// never goes before a caller queued for one.
func TestPoolTryGet(t *testing.T) {
	d, p := newPool(1, time.Minute)
	if _, ok := p.TryGet(); ok || d.dials.Load() != 0 {
		t.Fatalf("TryGet on an empty pool: ok %v, %d dials", ok, d.dials.Load())
	}
	c, err := p.Get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.TryGet(); ok {
		t.Fatal("TryGet while the only connection is handed out")
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		w, err := p.Get(context.Background())
		if err == nil {
			p.Put(w)
		}
	}()
	waitQueued(t, p, 1, "a waiter")
	p.Put(c) // to the waiter
	<-done
	idle, ok := p.TryGet()
	if !ok || d.dials.Load() != 1 {
		t.Fatalf("TryGet with an idle connection: ok %v, %d dials", ok, d.dials.Load())
	}
	p.Put(idle)
}
