package registry

import (
	"context"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/forker"
)

// TestFillHolds: one transaction holds a fill at a time; another gets a
// channel closed at its release; the fill's end refuses new holds, waits
// for the holder, and once it waits for none a hold is refused with no
// channel (wait for the end); the release's stamp is the last change.
func TestFillHolds(t *testing.T) {
	f := NewFill(&forker.Filler{}, "lock", func() {})
	a, b := new(int), new(int)
	release, busy, ok := f.Hold(a)
	if !ok || busy != nil {
		t.Fatalf("first hold: ok %v busy %v", ok, busy)
	}
	if f.HeldElsewhere(a) != nil {
		t.Error("a's own hold is elsewhere for a")
	}
	_, busy, ok = f.Hold(b)
	if ok || busy == nil || f.HeldElsewhere(b) == nil {
		t.Fatalf("second hold: ok %v busy %v", ok, busy)
	}
	ended := make(chan error, 1)
	go func() { ended <- f.AwaitHolds(context.Background()) }()
	for !f.waitingForTest() {
		time.Sleep(time.Millisecond)
	}
	if f.Ending() {
		t.Error("Ending while a holds the fill")
	}
	if _, busy2, ok := f.Hold(b); ok || busy2 == nil {
		t.Errorf("a hold while the end waits for a: ok %v, busy %v (want busy: a holds it)", ok, busy2)
	}
	release(7)
	select {
	case <-busy:
	case <-time.After(time.Minute):
		t.Fatal("b's channel not closed at a's release")
	}
	if err := <-ended; err != nil {
		t.Fatal(err)
	}
	if !f.Ending() {
		t.Error("not Ending once the end waits for no holder")
	}
	if _, busy, ok := f.Hold(b); ok || busy != nil {
		t.Errorf("a hold once the end waits for none: ok %v busy %v", ok, busy)
	}
	if got := f.LastChange(); got != 7 {
		t.Errorf("LastChange %d, want the release's 7", got)
	}
	release(9) // once
	if got := f.LastChange(); got != 7 {
		t.Errorf("LastChange after a second release %d, want 7", got)
	}
}

// TestFillAwaitHoldsCancelled: the end's wait for a holder ends with its
// context (the fill stopped).
func TestFillAwaitHoldsCancelled(t *testing.T) {
	f := NewFill(&forker.Filler{}, "lock", func() {})
	if _, _, ok := f.Hold(new(int)); !ok {
		t.Fatal("no hold")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := f.AwaitHolds(ctx); err == nil {
		t.Error("AwaitHolds returned nil with its context ended and a holder")
	}
}

// waitingForTest says whether AwaitHolds has begun (ending set).
func (f *Fill) waitingForTest() bool {
	f.holds.mu.Lock()
	defer f.holds.mu.Unlock()
	return f.holds.ending
}
