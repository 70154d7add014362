package registry

import (
	"context"

	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
)

// Rekind records that the table of key k in sb, whose entry is e (its
// kind and physical table), is now of kind: after a promote gave
// production a table the sandbox created, it is a fork of production's
// (KindFork); after one dropped a table, it is absent from production too
// (KindAbsent). Where the table resolves does not change (the same
// physical table), so no other process's reads wait for it; the registry's
// row is written and the sandbox's generation bumped, so other processes
// and a restart read the new kind. It reports false, changing nothing,
// when the entry is no longer e's kind and table (a statement changed it
// meanwhile).
func (m *Registry) Rekind(ctx context.Context, c sideconn.Conn, sb *Sandbox, k string, e *sandbox.Entry, kind sandbox.Kind) (bool, error) {
	cur, ok := sb.Resolve(k)
	if !ok || cur.Kind != e.Kind || cur.Phys != e.Phys {
		return false, nil
	}
	n := *cur
	n.Kind, n.Epoch = kind, m.NextEpoch()
	if kind == sandbox.KindAbsent {
		n.Rows, n.Bytes = 0, 0
	}
	if err := m.SaveEntry(ctx, c, sb, &n); err != nil {
		return false, err
	}
	m.SetEntry(sb, k, &n)
	return true, nil
}
