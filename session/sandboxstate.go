package session

import (
	"sync"
	"time"

	"github.com/sqlfork/sqlfork-proxy/sandbox"
)

// Sandbox is one sandbox: a set of tables forked or created away from
// production.
type Sandbox struct {
	ID      string
	Name    string
	Owner   string
	Created time.Time

	mu         sync.Mutex
	kept       bool
	persisted  bool // has rows in the registry
	expires    time.Time
	lastActive time.Time
	attached   int
	// graceUntil is when an unkept named sandbox that no connection of
	// this process uses ends (zero: in use, kept, or no grace).
	graceUntil time.Time
	// graceMu orders the registry writes of the grace (recordGrace,
	// clearGrace), each made from what memory says under it.
	graceMu sync.Mutex
	// ending: its last connection here is discarding it (detach), so it
	// is not idle — the reaper letting go of it meanwhile made the discard
	// a no-op, and its forks lasted until its lease ran out.
	ending bool
	// held: this process has a row among the registry's holders, so no
	// other process discards the sandbox unless forced.
	held bool
	// retired: this process let go of the sandbox (discarded it, or left
	// it to other processes that hold it); gone is closed once it is
	// forgotten, for attaches that wait to look it up again.
	retired   bool
	gone      chan struct{}
	forgotten bool
	discarded bool
	tables    map[string]*sandbox.Entry
	bytes     int64
	version   uint64 // bumped by every change of tables
	changed   uint64 // the newest epoch of its tables' entries
	forkMu    sync.Mutex
	infoViews bool // its information_schema views exist
	// routines are the routines this process knows the sandbox has made,
	// copied or dropped (routineKey): production's are not copied for
	// them. The value is set for the sandbox's own (made, altered or
	// dropped there), unset for untouched copies of production's.
	routines map[string]bool
	// sideDB: this process made sure the sandbox's own database, where the
	// capture's side tables go, exists.
	sideDB bool
	// needed are the stored routines copies of triggers call, for a
	// session to copy into the sandbox (needRoutines).
	needed []routineRef
	// shared: another proxy process may use the sandbox (claimed from
	// the registry, or found held elsewhere); named and kept sandboxes
	// are shareable anyway (see shareable).
	shared bool
	// sync checks the registry for changes other processes made
	// (registrysync.go).
	sync regSync
}

// routineRef names a stored routine: kind PROCEDURE or FUNCTION, its
// database and name.
type routineRef struct{ kind, db, name string }

// needRoutines records stored routines the sandbox's copies of triggers
// call, which the next session to use the sandbox copies into it
// (Session.placeNeeded).
func (sb *Sandbox) needRoutines(rs []routineRef) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	sb.needed = append(sb.needed, rs...)
}

// takeNeeded returns and forgets the routines needRoutines recorded.
func (sb *Sandbox) takeNeeded() []routineRef {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	fs := sb.needed
	sb.needed = nil
	return fs
}

// routineKnown reports whether the routine key (routineKey) is the
// sandbox's, and whether it is its own (not an untouched copy).
func (sb *Sandbox) routineKnown(key string) (known, own bool) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	own, known = sb.routines[key]
	return known, own
}

// noteRoutine records that the routine key is the sandbox's (own: made,
// altered or dropped there).
func (sb *Sandbox) noteRoutine(key string, own bool) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.routines == nil {
		sb.routines = map[string]bool{}
	}
	sb.routines[key] = sb.routines[key] || own
}

// resolve maps t in sb: ok=false leaves it to production.
func (sb *Sandbox) resolve(k string) (*sandbox.Entry, bool) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	e, ok := sb.tables[k]
	return e, ok
}

// snapshot is the sandbox's table map version.
func (sb *Sandbox) snapshotVersion() uint64 {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return sb.version
}

// changedSince reports whether a table of sb changed after epoch.
func (sb *Sandbox) changedSince(epoch uint64) bool {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return sb.changed > epoch
}

func (sb *Sandbox) hasInfoViews() bool {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return sb.infoViews
}

func (sb *Sandbox) isDiscarded() bool {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return sb.discarded
}

// stateLocked names a sandbox's lifecycle state (sb.mu held): active,
// kept, grace (unkept, named, no connection here: it ends when its grace
// does unless one attaches) or discarded.
func (sb *Sandbox) stateLocked() string {
	switch {
	case sb.discarded:
		return "discarded"
	case sb.kept:
		return "kept"
	case sb.attached <= 0 && !sb.graceUntil.IsZero():
		return "grace"
	}
	return "active"
}
