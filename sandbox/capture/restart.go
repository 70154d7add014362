package capture

import (
	"context"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
)

// Restart captures anew the changes of e's table in sb, once a promote
// made production's table what the sandbox's is (a table the sandbox
// created, or one compared whole that a promote overwrote): whatever
// capture it had is dropped (its triggers, those of its foreign keys'
// actions on its parents' forks) and one is started as for a fresh fork
// (Start, InstallCascades), with an empty side table — its fork-time image
// is the table as it is, which the caller amends with what was promoted.
// The triggers are made waiting a few seconds at most for the table (a
// client's open transaction may hold it); a table whose changes cannot be
// captured is recorded "full", with why. It returns how the table is
// captured now.
func (m *Tracker) Restart(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox, e *sandbox.Entry) (Info, error) {
	k := m.names.Key(e.Logical)
	caps, err := m.Load(ctx, c, sb.ID)
	if err != nil {
		return Info{}, err
	}
	if old, ok := caps[k]; ok {
		if old.Trigger != "" {
			if err := m.removeCapture(ctx, c, nil, forker.Capture{Fork: e.Phys, Trigger: old.Trigger}); err != nil {
				return Info{}, err
			}
		}
		m.dropCascades(ctx, c, sb, old)
	}
	err = withLockWait(ctx, c, func() error {
		if err := m.Start(ctx, c, sb, e.Logical, e.Phys, forker.Full); err != nil {
			return err
		}
		return m.InstallCascades(ctx, c, sb, map[string]*sandbox.Entry{k: e})
	})
	if err != nil {
		return Info{}, err
	}
	caps, err = m.Load(ctx, c, sb.ID)
	if err != nil {
		return Info{}, err
	}
	return caps[k], nil
}
