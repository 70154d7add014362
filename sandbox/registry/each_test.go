package registry

import (
	"testing"

	"github.com/sqlfork/sqlfork-proxy/sandbox"
)

// TestEachStops: Each yields every entry, and a loop that stops early
// leaves the sandbox unlocked.
func TestEachStops(t *testing.T) {
	sb := ForTest("id", map[string]*sandbox.Entry{"a": {}, "b": {}, "c": {}})
	n := 0
	for range sb.Each() {
		n++
	}
	if n != 3 {
		t.Errorf("Each yielded %d entries, want 3", n)
	}
	for range sb.Each() {
		break
	}
	if len(sb.Entries()) != 3 { // would deadlock if the early stop kept the lock
		t.Error("Entries after an early stop")
	}
}
