package capture

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
)

// A capture follows the sandbox's ALTER TABLE of a fork (the client's own
// statement, alone in its input) rather than stopping: the fork's shape is
// read before the ALTER (Before), and once the ALTER ran the side table
// and the triggers follow it (Carry, forker.CarryDDL). The capture is
// recorded "rows" still, its reason saying the sandbox altered the table:
// DIFF then gives the ALTER as DDL and the rows by key as for any
// captured fork. What the capture cannot follow stops it (Stop), as any
// other DDL does.

// AlteredReason is the reason of a capture that followed the sandbox's
// ALTER TABLE.
const AlteredReason = SandboxDDL + "ALTER TABLE in the sandbox"

// Before is the shape of the fork of t in sb before the sandbox's ALTER
// TABLE of it; ok is false when t has no fork whose changes are captured.
func (m *Tracker) Before(ctx context.Context, sb *registry.Sandbox, t rewrite.Table) (shape forker.Shape, ok bool, err error) {
	e, ok := m.forkOf(sb, t)
	if !ok {
		return shape, false, nil
	}
	err = m.reg.WithConn(ctx, func(c sideconn.Conn) error {
		caps, err := m.Load(ctx, c, sb.ID)
		if err != nil || caps[m.names.Key(e.Logical)].State != Rows {
			return err
		}
		shape, err = forker.ReadShape(ctx, c, e.Phys)
		ok = err == nil
		return err
	})
	return shape, ok, err
}

// Carry makes the capture of t's fork in sb follow the sandbox's ALTER
// TABLE of it, which ran (before is the fork's shape then): the side table
// and triggers follow the new columns on a side connection (waiting a few
// seconds at most for the table). A capture that cannot follow, or whose
// following failed, is stopped on on, the client's connection.
func (m *Tracker) Carry(ctx context.Context, sb *registry.Sandbox, t rewrite.Table, before forker.Shape, on forker.Conn) error {
	e, ok := m.forkOf(sb, t)
	if !ok {
		return nil
	}
	carried := false
	err := m.reg.WithConn(ctx, func(c sideconn.Conn) error {
		var err error
		carried, err = m.carry(ctx, c, sb, e, before)
		return err
	})
	if err != nil {
		m.log.Warn("a capture could not follow the sandbox's ALTER TABLE: its diff compares the table whole",
			zap.String("fork", e.Phys.String()), zap.Error(err))
	}
	if carried {
		return nil
	}
	return m.Stop(ctx, sb, []rewrite.Table{t}, AlteredReason, on)
}

// carry is Carry on the side connection c: false when the capture of e
// cannot follow the ALTER (it is not "rows", foreign key actions are
// captured with it, or forker.CarryDDL says so).
func (m *Tracker) carry(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox, e *sandbox.Entry, before forker.Shape) (bool, error) {
	caps, err := m.Load(ctx, c, sb.ID)
	if err != nil {
		return false, err
	}
	k := m.names.Key(e.Logical)
	info := caps[k]
	if info.State != Rows || len(info.Cascades) > 0 {
		return false, nil
	}
	for _, other := range caps {
		for _, cs := range other.Cascades {
			if m.names.Key(m.names.Norm(cs.FK.Parent)) == k {
				return false, nil // triggers on this fork capture a child's rows
			}
		}
	}
	now, err := forker.ReadShape(ctx, c, e.Phys)
	if err != nil {
		return false, err
	}
	side, err := forker.ReadShape(ctx, c, info.Side)
	if err != nil {
		return false, err
	}
	cp := m.captureOf(sb.ID, e.Phys, now)
	if _, clash := now.Column(cp.Marker); clash || cp.Side != info.Side || cp.Trigger != info.Trigger {
		return false, nil
	}
	var ok bool
	err = withLockWait(ctx, c, func() error {
		ok, err = forker.CarryCapture(ctx, c, cp, before, side)
		return err
	})
	if err != nil || !ok {
		return false, err
	}
	info.Reason = AlteredReason
	if err := m.saveCapture(ctx, c, sb.ID, e.Logical, info); err != nil {
		return false, fmt.Errorf("record the capture of %s: %w", e.Logical, err)
	}
	return true, nil
}

// forkOf is t's entry in sb when it is a fork of production's table.
func (m *Tracker) forkOf(sb *registry.Sandbox, t rewrite.Table) (*sandbox.Entry, bool) {
	e, ok := sb.Resolve(m.names.Key(m.names.Norm(t)))
	if !ok || e.Kind != sandbox.KindFork && e.Kind != sandbox.KindSchema {
		return nil, false
	}
	return e, true
}

// Rebased records, once a promote gave production a table the sandbox
// altered, production's new columns as the capture's fork-time ones: the
// table's diff is then against production as promoted.
func (m *Tracker) Rebased(ctx context.Context, c sideconn.Conn, sbID string, t rewrite.Table, base []forker.Column) error {
	caps, err := m.Load(ctx, c, sbID)
	if err != nil {
		return err
	}
	info, ok := caps[m.names.Key(t)]
	if !ok || info.State != Rows {
		return nil
	}
	info.Base = base
	return m.saveCapture(ctx, c, sbID, t, info)
}
