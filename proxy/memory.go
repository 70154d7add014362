package proxy

import (
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"go.uber.org/zap"
)

// After a spike of client connections closes, the Go runtime keeps the
// memory their buffers and goroutine stacks used (the next GC frees it only
// when the heap grows again, or after 2 minutes; the scavenger then returns
// it slowly), so RSS stays near the peak. memoryTrimmer runs a GC and hands
// freed memory back to the system (debug.FreeOSMemory) once the number of
// connections has fallen to at most half of its peak, and by at least
// trimMinDrop: a handful of GCs per spike, none in steady state.
const (
	trimMinDrop = 256
	trimDelay   = 500 * time.Millisecond // lets a burst of closes finish first
)

type memoryTrimmer struct {
	log   *zap.Logger
	count func() int // connections now
	free  func()     // debug.FreeOSMemory
	// after runs f after d (time.AfterFunc).
	after func(d time.Duration, f func())

	mu      sync.Mutex
	peak    int
	pending bool
}

func newMemoryTrimmer(log *zap.Logger, count func() int) *memoryTrimmer {
	after := func(d time.Duration, f func()) { time.AfterFunc(d, f) }
	return &memoryTrimmer{log: log, count: count, free: debug.FreeOSMemory, after: after}
}

// opened notes n connections open.
func (t *memoryTrimmer) opened(n int) {
	t.mu.Lock()
	t.peak = max(t.peak, n)
	t.mu.Unlock()
}

// closed notes n connections left after one closed, and schedules a trim
// after a sharp drop.
func (t *memoryTrimmer) closed(n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pending || t.peak-n < trimMinDrop || n > t.peak/2 {
		return
	}
	t.pending = true
	t.after(trimDelay, t.trim)
}

func (t *memoryTrimmer) trim() {
	t.mu.Lock()
	from := t.peak
	t.mu.Unlock()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	t.free()
	runtime.ReadMemStats(&after)
	n := t.count()
	t.mu.Lock()
	t.peak, t.pending = n, false
	t.mu.Unlock()
	t.log.Info("returned freed memory to the system after connections closed", zap.Int("connections_peak", from),
		zap.Int("connections", n), zap.Uint64("released_bytes", after.HeapReleased-min(before.HeapReleased, after.HeapReleased)),
		zap.Uint64("heap_in_use_bytes", after.HeapInuse))
}
