package registry

import "slices"

// phase is where a sandbox is in its life in this process. It moves along
// phaseMoves, forward but for one step back:
//
//	live ──Detach of its last connection──▶ ending ──end──▶ discarded
//	  ▲                                        │               ▲
//	  └──────the discard did not happen────────┘               │
//	live, ending ──letGo, Forget──▶ letGo ──end(force)─────────┤
//	live ──────────────────────────end─────────────────────────┘
//
// A live sandbox is this process's to use and renew. An ending one is
// being discarded by its last connection here: it is still live to
// attaches (one that comes first keeps it), but not idle, so the reaper
// does not let go of it meanwhile (that would make the discard a no-op and
// leave its forks until its lease ran out). One let go of is carried on by
// other processes or the registry (kept, held elsewhere): a connection
// here that wants it looks it up again. A discarded one is gone
// everywhere; attaches wait until it is forgotten, then find it missing.
//
// Three facts of a sandbox are not phases but what a live one carries
// beside its phase, each set and cleared on its own: kept (a user chose
// to keep it: connections ending do not end it, its TTL does), graceUntil
// (the deadline a named unkept sandbox gets when its last connection here
// leaves, cleared when one attaches) and held (this process has a row
// among the registry's holders). The state users see (active, kept,
// grace, discarded: stateLocked) is read from the phase and those.
type phase uint8

const (
	phaseLive phase = iota
	phaseEnding
	phaseLetGo
	phaseDiscarded
)

// phaseMoves are the phases a sandbox may move to from each phase.
var phaseMoves = [...][]phase{
	phaseLive:      {phaseEnding, phaseLetGo, phaseDiscarded},
	phaseEnding:    {phaseLive, phaseLetGo, phaseDiscarded},
	phaseLetGo:     {phaseDiscarded},
	phaseDiscarded: nil,
}

// String names the phase.
func (p phase) String() string {
	return [...]string{phaseLive: "live", phaseEnding: "ending", phaseLetGo: "let go", phaseDiscarded: "discarded"}[p]
}

// moveLocked moves sb to phase to (sb.mu held) when phaseMoves allows it,
// and reports whether it did.
func (sb *Sandbox) moveLocked(to phase) bool {
	if !slices.Contains(phaseMoves[sb.phase], to) {
		return false
	}
	sb.phase = to
	return true
}

// retiredLocked reports whether this process let go of sb or discarded it
// (sb.mu held).
func (sb *Sandbox) retiredLocked() bool { return sb.phase == phaseLetGo || sb.phase == phaseDiscarded }
