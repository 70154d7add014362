package registry

import (
	"context"
	"testing"
	"time"
)

// TestGate: a drain waits for the statements past the gate and holds new
// ones until it ends; one that cannot drain in time gives up and opens the
// gate again.
func TestGate(t *testing.T) {
	ctx := context.Background()
	sb := &Sandbox{Name: "g"}
	leave, err := sb.Enter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := sb.Drain(ctx, time.Millisecond); ok {
		t.Fatal("a drain passed a statement in flight")
	}
	// The failed drain opened the gate again.
	second, err := sb.Enter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	second()
	drained := make(chan func())
	go func() {
		open, ok := sb.Drain(ctx, time.Hour)
		if !ok {
			t.Error("a drain gave up while its statement left")
		}
		drained <- open
	}()
	for {
		sb.gate.mu.Lock()
		closing := sb.gate.closed != nil
		sb.gate.mu.Unlock()
		if closing {
			break
		}
		time.Sleep(time.Millisecond)
	}
	// A statement that comes while the drain waits is held at the gate.
	entered := make(chan struct{})
	go func() {
		l, err := sb.Enter(ctx)
		if err == nil {
			l()
		}
		close(entered)
	}()
	leave()
	leave() // once only
	open := <-drained
	select {
	case <-entered:
		t.Fatal("a statement passed the gate during a reset")
	default:
	}
	open()
	<-entered
	if sb.gate.inflight != 0 {
		t.Errorf("%d statements in flight after all left", sb.gate.inflight)
	}
}

// TestEnterCancelled: a statement waiting at a closed gate stops with its
// context.
func TestEnterCancelled(t *testing.T) {
	sb := &Sandbox{Name: "g"}
	open, ok := sb.Drain(context.Background(), time.Second)
	if !ok {
		t.Fatal("an idle drain failed")
	}
	defer open()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := sb.Enter(ctx); err == nil {
		t.Error("Enter passed a closed gate with a cancelled context")
	}
}
