package registry

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
)

// What a sandbox changed that production does not have yet, for STATUS,
// LIST and the admin API (Info.Changes): a sandbox records when it last
// wrote (changed), when a promote of it last committed (promoted), and
// when a promote last left its diff empty (clean). Each process keeps
// them in memory and in the registry's sandboxes row, where the newest of
// every process's wins (GREATEST), so a write through one process after a
// promote through another shows.

// Changes values: what a sandbox holds that production does not.
const (
	// ChangesNone: it changed nothing (no table forked, made or dropped).
	ChangesNone = "none"
	// ChangesUnpromoted: it wrote since it was made or last promoted whole;
	// a discard loses that.
	ChangesUnpromoted = "unpromoted"
	// ChangesPromoted: a promote applied everything it changed (its diff
	// was empty after it), and it has not written since.
	ChangesPromoted = "promoted"
)

// changeMarks are a sandbox's times of its last write, last committed
// promote and last promote or reset that left it nothing to promote
// (zero: never).
type changeMarks struct {
	changed, promoted, clean time.Time
	// saved: the registry has a write after clean (or the sandbox has no
	// row yet, which Persist then writes with changed).
	saved bool
}

// newest merges o into mk: the later of each time. The registry has the
// last write if one of them had it saved and it is still after clean.
func (mk *changeMarks) newest(o changeMarks) {
	mk.changed = later(mk.changed, o.changed)
	mk.promoted = later(mk.promoted, o.promoted)
	mk.clean = later(mk.clean, o.clean)
	mk.saved = (mk.saved || o.saved) && mk.changed.After(mk.clean)
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// changes names what mk says, for a sandbox with or without tables it
// forked, made or dropped (which, without a recorded write, it may have
// written before writes were recorded).
func (mk changeMarks) changes(tables bool) string {
	switch {
	case !mk.clean.IsZero() && !mk.changed.After(mk.clean) && mk.promoted.Before(mk.clean):
		return ChangesNone // a reset gave everything back since
	case !mk.clean.IsZero() && !mk.changed.After(mk.clean):
		return ChangesPromoted
	case !mk.changed.IsZero() || tables:
		return ChangesUnpromoted
	}
	return ChangesNone
}

// Changes names what a sandbox with these registry times holds that
// production does not (see the Changes values); tables says it has tables
// it forked, made or dropped.
func Changes(changed, clean time.Time, tables bool) string {
	return changeMarks{changed: changed, clean: clean}.changes(tables)
}

// holdsChanges reports whether an entry's kind is a change of the
// sandbox's: a fork, a table it made or dropped.
func holdsChanges(k sandbox.Kind) bool {
	switch k {
	case sandbox.KindFork, sandbox.KindSchema, sandbox.KindCreated, sandbox.KindDropped:
		return true
	}
	return false
}

// NoteWrite records that a statement wrote sb at now; save says the
// registry does not know of a write since sb was last promoted whole, and
// SaveWrite should tell it.
func (sb *Sandbox) NoteWrite(now time.Time) (save bool) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	sb.marks.changed = later(sb.marks.changed, now)
	return !sb.marks.saved
}

// SaveWrite records sb's last write in the registry (a sandbox without a
// row gets it with its first Persist).
func (m *Registry) SaveWrite(ctx context.Context, c sideconn.Conn, sb *Sandbox) error {
	sb.mu.Lock()
	changed, persisted := sb.marks.changed, sb.persisted
	sb.mu.Unlock()
	if persisted {
		if _, err := c.Exec(ctx, "UPDATE "+m.names.Q("sandboxes")+" SET "+changedSet(changed)+" WHERE id = "+quote.String(sb.ID)); err != nil {
			return fmt.Errorf("record a write of sandbox %s: %w", sb.Name, err)
		}
	}
	sb.mu.Lock()
	sb.marks.saved = true
	sb.mu.Unlock()
	return nil
}

// laterSet is the assignment that records time t in the column col,
// unless the registry has a later one.
func laterSet(col string, t time.Time) string {
	v := sideconn.SQLTime(t)
	return col + " = GREATEST(COALESCE(" + col + ", " + v + "), " + v + ")"
}

// changedSet is the assignment that records a write at t, unless the
// registry has a later one.
func changedSet(t time.Time) string { return laterSet("changed_at", t) }

// RecordPromote records a committed promote of sb that started at at;
// clean says the sandbox's diff was empty after it: everything it wrote
// before at is production's.
func (m *Registry) RecordPromote(ctx context.Context, c sideconn.Conn, sb *Sandbox, at time.Time, clean bool) error {
	return m.recordMarks(ctx, c, sb, "promote", at, true, clean)
}

// RecordReset records a SANDBOX RESET of sb that started at at: when sb
// holds no fork, table it made or dropped any more, it has nothing to
// promote (ChangesNone until it writes again).
func (m *Registry) RecordReset(ctx context.Context, c sideconn.Conn, sb *Sandbox, at time.Time) error {
	for e := range sb.Each() {
		if holdsChanges(e.Kind) {
			return nil
		}
	}
	return m.recordMarks(ctx, c, sb, "reset", at, false, true)
}

// recordMarks records, in memory and in sb's registry row, a promote
// (promoted) or reset of what (named for errors) at at; clean: nothing
// written before at is left to promote. A write during it is recorded
// with it; the next write after a clean one is news to the registry.
func (m *Registry) recordMarks(ctx context.Context, c sideconn.Conn, sb *Sandbox, what string, at time.Time, promoted, clean bool) error {
	var set []string
	sb.mu.Lock()
	if promoted {
		sb.marks.promoted = later(sb.marks.promoted, at)
		set = append(set, laterSet("promoted_at", at))
	}
	if clean {
		sb.marks.clean = later(sb.marks.clean, at)
		set = append(set, laterSet("clean_at", at))
		if sb.marks.saved = sb.marks.changed.After(sb.marks.clean); sb.marks.saved {
			set = append(set, changedSet(sb.marks.changed))
		}
	}
	persisted := sb.persisted
	sb.mu.Unlock()
	if !persisted {
		return nil
	}
	if _, err := c.Exec(ctx, "UPDATE "+m.names.Q("sandboxes")+" SET "+strings.Join(set, ", ")+" WHERE id = "+quote.String(sb.ID)); err != nil {
		return fmt.Errorf("record a %s of sandbox %s: %w", what, sb.Name, err)
	}
	return nil
}

// ReadMarks merges into sb's marks those the registry holds (other
// processes' writes and promotes of it).
func (m *Registry) ReadMarks(ctx context.Context, sb *Sandbox) error {
	return m.WithConn(ctx, func(c sideconn.Conn) error {
		rows, err := c.Query(ctx, "SELECT "+marksCols+" FROM "+m.names.Q("sandboxes")+" WHERE id = "+quote.String(sb.ID))
		if err != nil {
			return fmt.Errorf("read registry: %w", err)
		}
		if len(rows) == 1 {
			mk := parseMarks(rows[0])
			sb.mu.Lock()
			sb.marks.newest(mk)
			sb.mu.Unlock()
		}
		return nil
	})
}

// marksCols are the sandboxes row's columns of its change marks, in
// parseMarks's order.
const marksCols = "changed_at, promoted_at, clean_at"

// parseMarks reads the marks from r (marksCols's columns), a registry
// row's: its last write is saved.
func parseMarks(r []*string) changeMarks {
	mk := changeMarks{changed: sideconn.ParseTime(r[0]), promoted: sideconn.ParseTime(r[1]), clean: sideconn.ParseTime(r[2])}
	mk.saved = mk.changed.After(mk.clean)
	return mk
}
