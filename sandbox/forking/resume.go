package forking

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"github.com/sqlfork/sqlfork-proxy/wire"
	"go.uber.org/zap"
)

// A fill whose process stopped (its snapshot went with it) starts again
// in the process that next needs the fork whole: a new snapshot of
// production fills the rows the sandbox does not hold. The rows it holds
// (in the fork: copied up, changed or inserted; in the capture's side
// table: changed or deleted) stay as the sandbox left them; the others
// are production's as of the new start, not as of the fork.

// resumeFill starts again, in this process, the fill of sb's fork e (key
// k) that a stopped process left. It returns once the fill runs here (or
// another process or session started it again, or it is whole).
func (m *Forker) resumeFill(ctx context.Context, sb *registry.Sandbox, k string, e *sandbox.Entry) error {
	defer sb.LockForks()()
	if _, ok := sb.FillOf(k); ok {
		return nil // another session of this process started it again
	}
	lock := m.FillLock(sb.ID, k)
	snap, w, err := m.fillConns(ctx, lock)
	if errors.Is(err, errFillLocked) {
		return rewrite.Refuse(wire.ErLockWaitTimeout, "another proxy is filling the fork of %s again; retry", e.Logical)
	}
	if err != nil {
		return fmt.Errorf("fill the fork of %s again: %w", e.Logical, err)
	}
	f, err := m.restartFill(ctx, snap, w, sb, k, e)
	if err != nil || f == nil {
		_, _ = snap.Close(), w.Close()
		return err
	}
	fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	f.SetRate(m.reg.FillRate())
	fill := registry.NewFill(f, lock, cancel)
	sb.AddFill(k, fill)
	go m.runFill(fctx, sb, k, fill)
	m.log.Warn("a lazy fork's fill left by a stopped proxy process starts again: the rows the sandbox has not touched are production's as of now",
		zap.String("sandbox", sb.Name), zap.String("table", e.Logical.String()))
	return nil
}

// restartFill readies the fill of e again on snap (holding its lock) and
// w: nil when the fork is no longer filling (made whole meanwhile).
func (m *Forker) restartFill(ctx context.Context, snap, w sideconn.Conn, sb *registry.Sandbox, k string, e *sandbox.Entry) (*forker.Filler, error) {
	var n *sandbox.Entry
	err := m.reg.WithConn(ctx, func(c sideconn.Conn) (err error) {
		n, err = m.reg.LoadEntry(ctx, c, sb, e.Logical)
		return err
	})
	if err != nil {
		return nil, err
	}
	if n == nil || !n.Filling {
		if n != nil {
			m.reg.SetEntry(sb, k, n)
		}
		return nil, nil
	}
	shape, err := forker.ReadShape(ctx, w, n.Phys)
	if err == nil {
		if why := forker.LazyOK(shape); why != "" {
			err = fmt.Errorf("its fork cannot be filled lazily: %s", why)
		}
	}
	if err == nil {
		var prod forker.Shape
		if prod, err = forker.ReadShape(ctx, w, n.Logical); err == nil {
			if why := shapeChange(shape, prod); why != "" {
				err = fmt.Errorf("production's table changed since the fork: %s", why)
			}
		}
	}
	if err != nil {
		return nil, rewrite.Refuse(wire.ErUnknown, "the fork of %s was left unfilled by a proxy process that stopped and cannot be filled again (%v); "+
			"SANDBOX RESET FOR it and try again", e.Logical, err)
	}
	l := m.lazyOf(sb, k, n.Logical, m.caps.Of(sb.ID, n.Phys, shape))
	l.Like = n.Phys
	if err := m.prepareFill(ctx, w, l); err != nil {
		return nil, err
	}
	rows, _, _ := forker.Size(ctx, w, n.Logical)
	start := time.Now()
	f, autoInc, err := forker.StartFill(ctx, snap, w, l, rows)
	if err != nil {
		return nil, fmt.Errorf("fill the fork of %s again: %w", e.Logical, err)
	}
	// The fork keeps its AUTO_INCREMENT (the ids its sandbox used), raised
	// past the ids production used since: the fill brings those rows in.
	if err := m.reg.WithConn(ctx, func(c sideconn.Conn) error {
		return forker.RaiseAutoIncrement(ctx, c, n.Phys, autoInc)
	}); err != nil {
		f.Close()
		return nil, fmt.Errorf("fill the fork of %s again: %w", e.Logical, err)
	}
	m.log.Info("fill started again", zap.String("table", k), zap.Duration("took", time.Since(start)))
	return f, nil
}
