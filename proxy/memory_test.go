package proxy

import (
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
)

// The trimmer frees memory once after the connection count halves from a
// peak (by at least trimMinDrop), not on small drops, and starts over from
// the count it finds.
func TestMemoryTrimmer(t *testing.T) {
	var conns atomic.Int64
	var frees atomic.Int32
	tr := newMemoryTrimmer(zap.NewNop(), func() int { return int(conns.Load()) })
	tr.free = func() { frees.Add(1) }

	open := func(n int) {
		conns.Store(int64(n))
		tr.opened(n)
	}
	closeTo := func(n int) {
		conns.Store(int64(n))
		tr.closed(n)
	}
	open(2000)
	closeTo(1500) // a quarter gone: nothing
	closeTo(1001)
	time.Sleep(2 * trimDelay)
	if n := frees.Load(); n != 0 {
		t.Fatalf("%d frees before the count halved", n)
	}
	for n := 1000; n >= 900; n-- { // a burst of closes: one trim
		closeTo(n)
	}
	waitFrees := func(want int32) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for frees.Load() < want {
			if time.Now().After(deadline) {
				t.Fatalf("%d frees, want %d", frees.Load(), want)
			}
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(2 * trimDelay)
		if n := frees.Load(); n != want {
			t.Fatalf("%d frees, want %d", n, want)
		}
	}
	waitFrees(1)
	// The peak is now 900: 450 left is the next trim, 600 is not.
	closeTo(600)
	time.Sleep(2 * trimDelay)
	if n := frees.Load(); n != 1 {
		t.Fatalf("%d frees after a drop to 600 from 900", n)
	}
	closeTo(450)
	waitFrees(2)
	// A small process: drops of fewer than trimMinDrop never trim.
	tr = newMemoryTrimmer(zap.NewNop(), func() int { return int(conns.Load()) })
	tr.free = func() { frees.Add(1) }
	open(trimMinDrop - 1)
	closeTo(0)
	time.Sleep(2 * trimDelay)
	if n := frees.Load(); n != 2 {
		t.Fatalf("%d frees after a drop of %d connections", n, trimMinDrop-1)
	}
}
