package registry

import (
	"testing"
	"time"
)

// TestPhaseMoves: a sandbox's phase moves forward — live to ending, let
// go or discarded, ending to let go or discarded, let go to discarded —
// and back only from ending to live (the discard did not happen).
func TestPhaseMoves(t *testing.T) {
	all := []phase{phaseLive, phaseEnding, phaseLetGo, phaseDiscarded}
	allowed := map[[2]phase]bool{
		{phaseLive, phaseEnding}: true, {phaseLive, phaseLetGo}: true, {phaseLive, phaseDiscarded}: true,
		{phaseEnding, phaseLive}: true, {phaseEnding, phaseLetGo}: true, {phaseEnding, phaseDiscarded}: true,
		{phaseLetGo, phaseDiscarded}: true,
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
		{"ending", func() *Sandbox { return &Sandbox{phase: phaseEnding} }, false, true, true},
		{"ending, attached again", func() *Sandbox { return &Sandbox{phase: phaseEnding, attached: 1} }, false, false, false},
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

// TestEndingIsLiveNotIdle: a sandbox its last connection here is
// discarding still takes attaches (one that comes first keeps it) and is
// not retired, but is never idle, so the reaper leaves it to the discard.
func TestEndingIsLiveNotIdle(t *testing.T) {
	long := time.Now().Add(-time.Hour)
	for _, c := range []struct {
		phase          phase
		retired, idle  bool
		attachAccepted bool
	}{
		{phaseLive, false, true, true},
		{phaseEnding, false, false, true},
		{phaseLetGo, true, true, false},
		{phaseDiscarded, true, true, false},
	} {
		sb := &Sandbox{phase: c.phase, lastActive: long}
		if got := sb.retiredLocked(); got != c.retired {
			t.Errorf("%s: retired %v", c.phase, got)
		}
		if got := sb.idle(time.Now(), time.Minute); got != c.idle {
			t.Errorf("%s: idle %v", c.phase, got)
		}
		if got := sb.attachIfLive(); got != c.attachAccepted {
			t.Errorf("%s: attachIfLive %v", c.phase, got)
		}
	}
}
