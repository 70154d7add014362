package testkit

import (
	"testing"
	"time"
)

// WaitLimit is how long Eventually polls before it fails the test: a hang
// guard, far above what any condition takes on a loaded machine, never a
// measure of speed.
const WaitLimit = time.Minute

// Eventually polls cond until it holds, and fails the test (naming what)
// when it has not within WaitLimit.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	EventuallyWithin(t, what, WaitLimit, cond)
}

// EventuallyWithin is Eventually with its own limit. It polls often at
// first and less often later (1 ms doubling to 100 ms).
func EventuallyWithin(t testing.TB, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	pause := time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", limit, what)
		}
		time.Sleep(pause)
		pause = min(2*pause, 100*time.Millisecond)
	}
}
