package registry

import (
	"testing"
)

// TestPhaseMoves: a sandbox's phase only moves forward — live to let go
// or discarded, let go to discarded — and never back.
func TestPhaseMoves(t *testing.T) {
	all := []phase{phaseLive, phaseLetGo, phaseDiscarded}
	allowed := map[[2]phase]bool{
		{phaseLive, phaseLetGo}: true, {phaseLive, phaseDiscarded}: true, {phaseLetGo, phaseDiscarded}: true,
	}
	for _, from := range all {
		for _, to := range all {
			sb := &Sandbox{phase: from}
			if got := sb.moveLocked(to); got != allowed[[2]phase{from, to}] {
				t.Errorf("%s -> %s: moved %v", from, to, got)
			}
			if want := from; !allowed[[2]phase{from, to}] && sb.phase != want {
				t.Errorf("%s -> %s refused, yet the phase is %s", from, to, sb.phase)
			}
		}
	}
}

// TestEndAndLetGo: letGo leaves a live sandbox nobody here uses to others;
// end discards it unless, without force, it is in use, kept or let go of;
// with force even then, but never twice.
func TestEndAndLetGo(t *testing.T) {
	for _, c := range []struct {
		name            string
		sb              func() *Sandbox
		force, end, let bool
	}{
		{"live, unused", func() *Sandbox { return &Sandbox{} }, false, true, true},
		{"live, attached", func() *Sandbox { return &Sandbox{attached: 1} }, false, false, false},
		{"live, attached, forced", func() *Sandbox { return &Sandbox{attached: 1} }, true, true, false},
		{"kept", func() *Sandbox { return &Sandbox{kept: true} }, false, false, true},
		{"let go", func() *Sandbox { return &Sandbox{phase: phaseLetGo} }, false, false, false},
		{"let go, forced", func() *Sandbox { return &Sandbox{phase: phaseLetGo} }, true, true, false},
		{"discarded, forced", func() *Sandbox { return &Sandbox{phase: phaseDiscarded} }, true, false, false},
	} {
		if got := c.sb().end(c.force); got != c.end {
			t.Errorf("%s: end(%v) = %v", c.name, c.force, got)
		}
		if got := c.sb().letGo(); got != c.let {
			t.Errorf("%s: letGo() = %v", c.name, got)
		}
	}
}
