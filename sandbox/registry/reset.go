package registry

import (
	"context"
	"fmt"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
)

// What SANDBOX RESET (forking.Forker.Reset) needs of the registry: the
// sandbox's map entries taken out (and put back when the reset cannot go
// on), the tables' rows deleted.

// PromoteLockKey is the key of a sandbox's promote lock (LockName(id,
// PromoteLockKey)): a PROMOTE holds it while it runs, and a RESET takes it
// so that it never drops forks a promote is reading.
const PromoteLockKey = "\x00promote"

// TakeEntries removes the entries of keys from sb's map, with the bytes
// they counted, and returns those it held, by key. The change is dated
// epoch: a transaction older than it restarts at its first write
// (ChangedSince).
func (sb *Sandbox) TakeEntries(keys []string, epoch uint64) map[string]*sandbox.Entry {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	out := make(map[string]*sandbox.Entry, len(keys))
	for _, k := range keys {
		e, ok := sb.tables[k]
		if !ok {
			continue
		}
		out[k] = e
		delete(sb.tables, k)
		sb.bytes -= e.Bytes
		if sb.removed == nil {
			sb.removed = map[string]uint64{}
		}
		sb.removed[k] = epoch
	}
	sb.version++
	sb.changed = max(sb.changed, epoch)
	return out
}

// PutBack puts back entries TakeEntries took, each unless its key has an
// entry again.
func (sb *Sandbox) PutBack(taken map[string]*sandbox.Entry) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	for k, e := range taken {
		if _, ok := sb.tables[k]; ok {
			continue
		}
		sb.tables[k] = e
		sb.bytes += e.Bytes
		delete(sb.removed, k)
	}
	sb.version++
}

// removedAfter reports whether a reset took the entry of k out after
// epoch.
func (sb *Sandbox) removedAfter(k string, epoch uint64) bool {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	e, ok := sb.removed[k]
	return ok && e > epoch
}

// DeleteEntries deletes the registry rows of the logical tables ts in sb
// (a fork's marker row too: the caller holds the tables' fork locks).
func (m *Registry) DeleteEntries(ctx context.Context, c sideconn.Conn, sb *Sandbox, ts []rewrite.Table) error {
	for _, where := range TableConditions(ts, 100) {
		if _, err := c.Exec(ctx, "DELETE FROM "+m.names.Q("tables")+" WHERE sandbox_id = "+quote.String(sb.ID)+" AND ("+where+")"); err != nil {
			return fmt.Errorf("forget tables of sandbox %s: %w", sb.Name, err)
		}
	}
	return nil
}

// TableConditions are SQL conditions on the columns db and tbl matching
// the tables ts, at most per tables each (none for no table).
func TableConditions(ts []rewrite.Table, per int) []string {
	var out []string
	for len(ts) > 0 {
		n := min(per, len(ts))
		var or []string
		for _, t := range ts[:n] {
			or = append(or, "(db = "+quote.String(t.DB)+" AND tbl = "+quote.String(t.Name)+")")
		}
		out = append(out, strings.Join(or, " OR "))
		ts = ts[n:]
	}
	return out
}
