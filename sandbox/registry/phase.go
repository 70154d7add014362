package registry

import "slices"

// phase is where a sandbox is in its life in this process. It only moves
// forward, along phaseMoves:
//
//	live ──letGo, Forget──▶ letGo ──end(force)──▶ discarded
//	  └───────────────end──────────────────────────▲
//
// A live sandbox is this process's to use and renew. One let go of is
// carried on by other processes or the registry (kept, held elsewhere): a
// connection here that wants it looks it up again. A discarded one is
// gone everywhere; attaches wait until it is forgotten, then find it
// missing.
type phase uint8

const (
	phaseLive phase = iota
	phaseLetGo
	phaseDiscarded
)

// phaseMoves are the phases a sandbox may move to from each phase.
var phaseMoves = [...][]phase{
	phaseLive:      {phaseLetGo, phaseDiscarded},
	phaseLetGo:     {phaseDiscarded},
	phaseDiscarded: nil,
}

// String names the phase.
func (p phase) String() string {
	return [...]string{phaseLive: "live", phaseLetGo: "let go", phaseDiscarded: "discarded"}[p]
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
func (sb *Sandbox) retiredLocked() bool { return sb.phase != phaseLive }
