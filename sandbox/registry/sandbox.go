package registry

import (
	"iter"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/globals"
)

// Sandbox is one sandbox: a set of tables forked or created away from
// production.
type Sandbox struct {
	ID      string
	Name    string
	Owner   string
	Created time.Time

	mu   sync.Mutex
	kept bool
	// globals are its SET GLOBAL values (globals.go).
	globals   globals.Set
	persisted bool // has rows in the registry
	// xa is set once a connection started an XA transaction in it: its
	// discard then rolls back the prepared ones (xa.go), registry rows or
	// not.
	xa         bool
	expires    time.Time
	lastActive time.Time
	attached   int
	// graceUntil is when an unkept named sandbox that no connection of
	// this process uses ends (zero: in use, kept, or no grace).
	graceUntil time.Time
	// graceMu orders the registry writes of the grace (recordGrace,
	// clearGrace), each made from what memory says under it.
	graceMu sync.Mutex
	// held: this process has a row among the registry's holders, so no
	// other process discards the sandbox unless forced.
	held bool
	// phase: live, ending (its last connection here discards it), let go
	// of (left to other processes that hold it) or discarded (phase.go); gone is closed once it is forgotten, for
	// attaches that wait to look it up again.
	phase     phase
	gone      chan struct{}
	forgotten bool
	tables    map[string]*sandbox.Entry
	// dbs are its own databases, by key (databases.go); ownSaves counts
	// this process's saves of them and of its globals, so that a reload
	// that read the registry before one does not undo it.
	dbs       map[string]DBState
	ownSaves  uint64
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
	needed []RoutineRef
	// shared: another proxy process may use the sandbox (claimed from
	// the registry, or found held elsewhere); named and kept sandboxes
	// are shareable anyway (see shareable).
	shared bool
	// sync checks the registry for changes other processes made
	// (sync.go).
	sync regSync
	// marks are its last write's and promotes' times (changes.go).
	marks changeMarks
	// gate orders this process's statements with a reset (gate.go).
	gate gate
	// removed are the keys of entries a reset took out, with the epoch
	// of the reset: a registry reload that read the registry before
	// then does not bring them back (reloadTables).
	removed map[string]uint64
	// fills are the lazy forks this process fills, by key (fill.go).
	fills map[string]*Fill
}

// RoutineRef names a stored routine: kind PROCEDURE or FUNCTION, its
// database and name.
type RoutineRef struct{ Kind, DB, Name string }

// NeedRoutines records stored routines the sandbox's copies of triggers
// call, which the next session to use the sandbox copies into it
// (objects.Placer.PlaceNeeded).
func (sb *Sandbox) NeedRoutines(rs []RoutineRef) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	sb.needed = append(sb.needed, rs...)
}

// TakeNeeded returns and forgets the routines needRoutines recorded.
func (sb *Sandbox) TakeNeeded() []RoutineRef {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	fs := sb.needed
	sb.needed = nil
	return fs
}

// RoutineKnown reports whether the routine key (routineKey) is the
// sandbox's, and whether it is its own (not an untouched copy).
func (sb *Sandbox) RoutineKnown(key string) (known, own bool) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	own, known = sb.routines[key]
	return known, own
}

// NoteRoutine records that the routine key is the sandbox's (own: made,
// altered or dropped there).
func (sb *Sandbox) NoteRoutine(key string, own bool) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.routines == nil {
		sb.routines = map[string]bool{}
	}
	sb.routines[key] = sb.routines[key] || own
}

// Resolve maps t in sb: ok=false leaves it to production.
func (sb *Sandbox) Resolve(k string) (*sandbox.Entry, bool) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	e, ok := sb.tables[k]
	return e, ok
}

// snapshot is the sandbox's table map version.
func (sb *Sandbox) SnapshotVersion() uint64 {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return sb.version
}

// ChangedSince reports whether a table of sb changed after epoch.
func (sb *Sandbox) ChangedSince(epoch uint64) bool {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return sb.changed > epoch
}

// HasInfoViews reports whether the sandbox's information_schema views
// exist.
func (sb *Sandbox) HasInfoViews() bool {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return sb.infoViews
}

// IsDiscarded reports whether the sandbox was discarded.
func (sb *Sandbox) IsDiscarded() bool {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return sb.phase == phaseDiscarded
}

// stateLocked names a sandbox's lifecycle state (sb.mu held): active,
// kept, grace (unkept, named, no connection here: it ends when its grace
// does unless one attaches) or discarded.
func (sb *Sandbox) stateLocked() string {
	switch {
	case sb.phase == phaseDiscarded:
		return "discarded"
	case sb.kept:
		return "kept"
	case sb.attached <= 0 && !sb.graceUntil.IsZero():
		return "grace"
	}
	return "active"
}

// Info describes sb; with tables, its tables too.
func (sb *Sandbox) Info(tables bool) Info {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	in := Info{ID: sb.ID, Name: sb.Name, State: sb.stateLocked(), Owner: sb.Owner, Created: sb.Created,
		Connections: sb.attached, Bytes: sb.bytes}
	switch e := sb.expires; {
	case in.State == "grace":
		e = sb.graceUntil
		in.Expires = &e
	case !e.IsZero():
		in.Expires = &e
	}
	changed := false
	for _, e := range sb.tables {
		changed = changed || holdsChanges(e.Kind)
		if e.Kind == sandbox.KindAbsent || e.Kind == sandbox.KindView {
			continue
		}
		if e.Kind != sandbox.KindDropped {
			in.TableCount++
		}
		if tables {
			in.Tables = append(in.Tables, sb.tableInfoLocked(e))
		}
	}
	in.Changes = sb.marks.changes(changed)
	if p := sb.marks.promoted; !p.IsZero() {
		in.Promoted = &p
	}
	sort.Slice(in.Tables, func(i, j int) bool { return in.Tables[i].Table < in.Tables[j].Table })
	return in
}

// Entries are the sandbox's table entries as of now.
func (sb *Sandbox) Entries() []*sandbox.Entry {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	out := make([]*sandbox.Entry, 0, len(sb.tables))
	for _, e := range sb.tables {
		out = append(out, e)
	}
	return out
}

// Each yields the sandbox's table entries under its lock, without copying
// them (for loops on a statement's answer: an error, each row, each
// column): the loop's body must not call the sandbox.
func (sb *Sandbox) Each() iter.Seq[*sandbox.Entry] {
	return func(yield func(*sandbox.Entry) bool) {
		sb.mu.Lock()
		defer sb.mu.Unlock()
		for _, e := range sb.tables {
			if !yield(e) {
				return
			}
		}
	}
}

// LogicalDBs maps each of the sandbox's databases to the logical database
// it stands for.
func (sb *Sandbox) LogicalDBs() map[string]string {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	dbs := map[string]string{}
	for _, e := range sb.tables {
		dbs[e.Phys.DB] = e.Logical.DB
	}
	return dbs
}

// DropEntry forgets the entry of key k if it still is e (an undone fork),
// with the bytes it counted.
func (sb *Sandbox) DropEntry(k string, e *sandbox.Entry) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.tables[k] == e {
		delete(sb.tables, k)
		sb.bytes -= e.Bytes
		sb.version++
	}
}

// ForgetEntry forgets the entry of key k, whatever it is.
func (sb *Sandbox) ForgetEntry(k string) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	delete(sb.tables, k)
	sb.version++
}

// ForkedBytes is what the sandbox's forks hold, as counted when made.
func (sb *Sandbox) ForkedBytes() int64 {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return sb.bytes
}

// Touch records activity now.
func (sb *Sandbox) Touch() {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	sb.lastActive = time.Now().UTC()
}

// SideDBMade reports whether this process made sure the sandbox's own
// database (where captures keep their side tables) exists; markSideDB
// records that it did.
func (sb *Sandbox) SideDBMade() bool {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return sb.sideDB
}

// MarkSideDB: see sideDBMade.
func (sb *Sandbox) MarkSideDB() {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	sb.sideDB = true
}

// MarkInfoViews records that the sandbox's information_schema views
// exist (hasInfoViews).
func (sb *Sandbox) MarkInfoViews() {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	sb.infoViews = true
}

// LockForks takes the sandbox's fork lock, which orders the forks (and
// other changes of its tables) this process makes; it returns the unlock.
func (sb *Sandbox) LockForks() (unlock func()) {
	sb.forkMu.Lock()
	return sb.forkMu.Unlock
}

// SyncWaiters is how many callers wait for the next registry check of the
// sandbox (sync.go). For tests.
func (sb *Sandbox) SyncWaiters() int {
	rs := &sb.sync
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.pending == nil {
		return 0
	}
	return rs.pending.callers
}

// ForTest is a sandbox of id holding entries (by key), in no registry:
// for tests of what reads a sandbox's tables.
func ForTest(id string, entries map[string]*sandbox.Entry) *Sandbox {
	return &Sandbox{ID: id, Name: "sb-" + id, tables: entries, gone: make(chan struct{})}
}

// RoutineKey is the key of the sandbox's routine name of kind PROCEDURE
// or FUNCTION in sandbox database phys (RoutineKnown, NoteRoutine).
func RoutineKey(kind, phys, name string) string {
	return kind + "\x00" + phys + "\x00" + strings.ToLower(name)
}

// ForgetRoutines forgets what NoteRoutine recorded of the routine keys
// (of every routine, with all): a reset dropped them, so their names are
// production's again until the sandbox makes, copies or drops them anew.
func (sb *Sandbox) ForgetRoutines(all bool, keys ...string) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if all {
		sb.routines = nil
		return
	}
	for _, k := range keys {
		delete(sb.routines, k)
	}
}

// NoteXA records that a connection started an XA transaction in sb.
func (sb *Sandbox) NoteXA() {
	sb.mu.Lock()
	sb.xa = true
	sb.mu.Unlock()
}

// usedXA reports whether a connection started an XA transaction in sb.
func (sb *Sandbox) usedXA() bool {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return sb.xa
}
