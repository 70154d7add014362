package proxy

import (
	"testing"
	"time"

	"go.uber.org/zap"
)

// The trimmer frees memory once after the connection count halves from a
// peak (by at least trimMinDrop), not on small drops, and starts over from
// the count it finds. Its delayed trims are run by the test.
func TestMemoryTrimmer(t *testing.T) {
	conns, frees := 0, 0
	var scheduled []func()
	newTrimmer := func() *memoryTrimmer {
		tr := newMemoryTrimmer(zap.NewNop(), func() int { return conns })
		tr.free = func() { frees++ }
		tr.after = func(d time.Duration, f func()) {
			if d != trimDelay {
				t.Errorf("trim scheduled after %s, want %s", d, trimDelay)
			}
			scheduled = append(scheduled, f)
		}
		return tr
	}
	tr := newTrimmer()
	open := func(n int) { conns = n; tr.opened(n) }
	closeTo := func(n int) { conns = n; tr.closed(n) }
	// runTrims runs the trims scheduled, which must be want, and checks
	// the frees so far.
	runTrims := func(want, freed int) {
		t.Helper()
		if len(scheduled) != want {
			t.Fatalf("%d trims scheduled, want %d", len(scheduled), want)
		}
		for _, f := range scheduled {
			f()
		}
		scheduled = nil
		if frees != freed {
			t.Fatalf("%d frees, want %d", frees, freed)
		}
	}
	open(2000)
	closeTo(1500) // a quarter gone: nothing
	closeTo(1001)
	runTrims(0, 0)
	for n := 1000; n >= 900; n-- { // a burst of closes: one trim
		closeTo(n)
	}
	runTrims(1, 1)
	// The peak is now 900: 450 left is the next trim, 600 is not.
	closeTo(600)
	runTrims(0, 1)
	closeTo(450)
	runTrims(1, 2)
	// A small process: drops of fewer than trimMinDrop never trim.
	tr = newTrimmer()
	open(trimMinDrop - 1)
	closeTo(0)
	runTrims(0, 2)
}
