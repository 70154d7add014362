package registry

import (
	"context"
	"fmt"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/sideconn"
)

// Census counts the sandboxes the registry records — every process's
// sharing the upstream, those no process holds included — by state (kept
// or unkept) and changes (ChangesNone, ChangesUnpromoted,
// ChangesPromoted), as of the reaper's last round.
type Census map[CensusKey]int

// CensusKey is one cell of a Census.
type CensusKey struct{ State, Changes string }

// Census is the count the reaper last took (nil before its first).
func (m *Registry) Census() Census {
	if p := m.census.Load(); p != nil {
		return *p
	}
	return nil
}

// takeCensus counts the registry's sandboxes (Census).
func (m *Registry) takeCensus(ctx context.Context, c sideconn.Conn) error {
	listed, err := m.Listed(ctx, c)
	if err != nil {
		return fmt.Errorf("count the registry's sandboxes: %w", err)
	}
	out := Census{}
	for _, st := range []string{"kept", "unkept"} {
		for _, ch := range []string{ChangesNone, ChangesUnpromoted, ChangesPromoted} {
			out[CensusKey{st, ch}] = 0
		}
	}
	for _, l := range listed {
		k := CensusKey{State: "unkept", Changes: l.Info.Changes}
		if l.Info.State == "kept" {
			k.State = "kept"
		}
		out[k]++
	}
	m.census.Store(&out)
	return nil
}

// Listed is a sandbox as the registry records it (Listed).
type Listed struct {
	// Info has no tables, no connections; its State is kept, grace (an
	// unkept one whose recorded grace has an end) or active.
	Info  Info
	marks changeMarks
}

// Listed reads every sandbox the registry records, with its count and
// bytes of tables and its change marks.
func (m *Registry) Listed(ctx context.Context, c sideconn.Conn) ([]Listed, error) {
	marks := "s." + strings.ReplaceAll(marksCols, ", ", ", s.")
	rows, err := c.Query(ctx, "SELECT s.id, s.name, s.kept, s.owner, s.created_at, s.expires_at, COUNT(CASE WHEN t.kind <> 'dropped' THEN 1 END), "+
		"COALESCE(SUM(CASE WHEN t.kind <> 'dropped' THEN t.bytes END), 0), COUNT(t.tbl), "+marks+
		" FROM "+m.names.Q("sandboxes")+" s LEFT JOIN "+m.names.Q("tables")+" t ON t.sandbox_id = s.id AND t.kind IN ('fork', 'schema', 'created', 'dropped')"+
		" GROUP BY s.id, s.name, s.kept, s.owner, s.created_at, s.expires_at, "+marks)
	if err != nil {
		return nil, fmt.Errorf("read registry: %w", err)
	}
	out := make([]Listed, 0, len(rows))
	for _, r := range rows {
		l := Listed{Info: Info{ID: sideconn.Str(r[0]), Name: sideconn.Str(r[1]), State: "active", Owner: sideconn.Str(r[3]),
			Created: sideconn.ParseTime(r[4]), TableCount: int(sideconn.Num(r[6])), Bytes: sideconn.Num(r[7])}, marks: parseMarks(r[9:12])}
		if e := sideconn.ParseTime(r[5]); !e.IsZero() {
			// An unkept sandbox's expiry is the end of its grace.
			l.Info.Expires, l.Info.State = &e, "grace"
		}
		if sideconn.Str(r[2]) == "1" {
			l.Info.State = "kept"
		}
		l.Info.Changes = l.marks.changes(sideconn.Num(r[8]) > 0)
		if p := l.marks.promoted; !p.IsZero() {
			l.Info.Promoted = &p
		}
		out = append(out, l)
	}
	return out, nil
}

// NoteListed merges into sb's marks those the registry lists for it.
func (sb *Sandbox) NoteListed(l Listed) {
	sb.mu.Lock()
	sb.marks.newest(l.marks)
	sb.mu.Unlock()
}
