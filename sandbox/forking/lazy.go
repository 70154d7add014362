package forking

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"github.com/sqlfork/sqlfork-proxy/wire"
	"go.uber.org/zap"
)

// Lazy forks (forker.Filler): a table of at least Config.LazyRows rows,
// linked to no other by keys or triggers, is forked empty and usable at
// once; this process fills it in the background from a snapshot taken at
// the fork, and statements copy up the rows they need meanwhile
// (session's fill step). Its registry row says "filling" until the fork
// is whole; other processes wait for that on the fill's upstream lock,
// which the snapshot connection holds.

// FillLock is the upstream lock a fill of table key k in sandbox id
// holds while it runs.
func (m *Forker) FillLock(id, k string) string { return m.reg.LockName(id, k+"\x00fill") }

// lazyWanted says whether t (its production table) is forked lazily, and
// its estimated rows: asked for (lazy), and big enough.
func (m *Forker) lazyWanted(ctx context.Context, c sideconn.Conn, t rewrite.Table, mode forker.Mode, lazy bool) (bool, int64) {
	if !lazy || mode != forker.Full || m.cfg.LazyRows < 0 || m.strategy.Name() != "copy" {
		return false, 0
	}
	rows, _, err := forker.Size(ctx, c, t)
	if err != nil || rows < m.cfg.LazyRows && m.cfg.LazyRows > 1 { // 1: every table, whatever its estimate
		return false, 0
	}
	if col, _, err := forker.SequenceDefault(ctx, c, t); err != nil || col != "" {
		return false, 0 // the copy refuses it, saying why
	}
	return true, rows
}

// runLazy forks t (key k) lazily to phys; ok is false when it cannot be
// (the caller copies it), with nothing left of the attempt. Two chains
// of DDL run at once: the fork and its capture on c; the fill's
// connections, staging table and function on the fill's own.
func (m *Forker) runLazy(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox, t rewrite.Table, k string, phys rewrite.Table, rows int64) (e *sandbox.Entry, ok bool, err error) {
	shape, err := forker.ReadShape(ctx, c, t)
	if err != nil || forker.LazyOK(shape) != "" {
		return nil, false, nil
	}
	start := time.Now()
	cp := m.caps.Of(sb.ID, phys, shape)
	l := m.lazyOf(sb, k, t, cp)
	lock := m.FillLock(sb.ID, k)
	type conns struct {
		snap, w sideconn.Conn
		err     error
	}
	fill := make(chan conns, 1)
	lf := l // the capture's shape as read above: l.Capture is set below meanwhile
	go func() {
		snap, w, err := m.fillConns(ctx, lock)
		if err == nil {
			if err = m.prepareFill(ctx, w, lf); err != nil {
				_, _ = snap.Close(), w.Close()
			}
		}
		fill <- conns{snap, w, err}
	}()
	l.Capture, err = m.prepareLazy(ctx, c, sb, t, phys)
	fc := <-fill
	var f *forker.Filler
	if err == nil {
		err = fc.err
	}
	if err == nil {
		f, err = m.startFill(ctx, c, fc.snap, fc.w, l, rows)
	} else if fc.err == nil {
		_, _ = fc.snap.Close(), fc.w.Close()
	}
	if err == nil {
		e, err = m.recordLazy(ctx, c, sb, t, k, phys, rows, f, lock)
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		m.undoLazy(context.WithoutCancel(ctx), c, sb, t, l)
		if errors.Is(err, forker.ErrLazyUnavailable) {
			m.log.Info("table copied whole, not forked lazily", zap.String("table", t.String()), zap.Error(err))
			return nil, false, nil
		}
		return nil, true, fmt.Errorf("fork %s: %w", t, err)
	}
	m.observer().Forked("lazy", false, time.Since(start), 0, 0)
	m.log.Info("forked table lazily", zap.String("sandbox", sb.Name), zap.String("table", t.String()),
		zap.String("fork", phys.String()), zap.Int64("rows", rows), zap.Duration("took", time.Since(start)))
	return e, true, nil
}

// lazyOf is the lazy fork of production table t (key k) in sb with
// capture cp: its staging table, fill function and copy-up procedure
// beside the capture's side table, its yield lock.
func (m *Forker) lazyOf(sb *registry.Sandbox, k string, t rewrite.Table, cp forker.Capture) forker.Lazy {
	return forker.Lazy{Src: t, Capture: cp, Staging: rewrite.Table{DB: cp.Side.DB, Name: "f" + cp.Side.Name},
		Fn: rewrite.Table{DB: cp.Side.DB, Name: "fill" + cp.Side.Name}, Up: rewrite.Table{DB: cp.Side.DB, Name: "up" + cp.Side.Name},
		Yield: m.reg.LockName(sb.ID, k+"\x00yield")}
}

// startFill starts the snapshot of l's fill and gives the fork the
// AUTO_INCREMENT production had then (on c).
func (m *Forker) startFill(ctx context.Context, c, snap, w sideconn.Conn, l forker.Lazy, rows int64) (*forker.Filler, error) {
	f, autoInc, err := forker.StartFill(ctx, snap, w, l, rows)
	if err != nil {
		return nil, err
	}
	if autoInc != "" {
		if _, err := c.Exec(ctx, "ALTER TABLE "+l.Capture.Fork.Quoted()+" AUTO_INCREMENT = "+autoInc); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// errFillLocked says another connection holds a fill's lock.
var errFillLocked = errors.New("another connection holds the fill's lock")

// fillConns opens a fill's two connections; the first takes its lock.
func (m *Forker) fillConns(ctx context.Context, lock string) (snap, w sideconn.Conn, err error) {
	if snap, err = m.reg.DialOwn(ctx); err != nil {
		return nil, nil, err
	}
	if w, err = m.reg.DialOwn(ctx); err != nil {
		_ = snap.Close()
		return nil, nil, err
	}
	rows, err := snap.Query(ctx, "SELECT GET_LOCK("+quote.String(lock)+", 0)")
	if err == nil && (len(rows) != 1 || sideconn.Str(rows[0][0]) != "1") {
		err = errFillLocked
	}
	if err != nil {
		_, _ = snap.Close(), w.Close()
		return nil, nil, fmt.Errorf("lock the fill: %w", err)
	}
	return snap, w, nil
}

// prepareFill makes the staging table and fill function of l on w (in
// the sandbox's own database, made if missing).
func (m *Forker) prepareFill(ctx context.Context, w sideconn.Conn, l forker.Lazy) error {
	if _, err := w.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+quote.Ident(l.Staging.DB)); err != nil {
		return fmt.Errorf("create the sandbox's own database: %w", err)
	}
	return forker.PrepareLazy(ctx, w, l)
}

// prepareLazy makes the empty fork phys of t and its capture.
func (m *Forker) prepareLazy(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox, t, phys rewrite.Table) (forker.Capture, error) {
	if _, err := c.Exec(ctx, "CREATE TABLE "+phys.Quoted()+" LIKE "+t.Quoted()); err != nil {
		return forker.Capture{}, fmt.Errorf("create %s like %s: %w", phys.Quoted(), t.Quoted(), err)
	}
	return m.caps.StartLazy(ctx, c, sb, t, phys)
}

// undoLazy removes what an attempt at a lazy fork of t left (best effort).
func (m *Forker) undoLazy(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox, t rewrite.Table, l forker.Lazy) {
	if l.Staging.Name != "" {
		forker.DropLazy(ctx, c, l)
	}
	_, _ = c.Exec(ctx, "DROP TABLE IF EXISTS "+m.names.Physical(sb.ID, t).Quoted())
}

// recordLazy records the lazy fork phys of t as filling, and starts its
// fill in the background.
func (m *Forker) recordLazy(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox, t rewrite.Table, k string, phys rewrite.Table,
	rows int64, f *forker.Filler, lock string) (*sandbox.Entry, error) {
	e := &sandbox.Entry{Logical: t, Phys: phys, Kind: sandbox.KindFork, Filling: true, Rows: rows, Epoch: m.reg.NextEpoch(), Created: time.Now().UTC()}
	if err := m.reg.SaveEntry(ctx, c, sb, e); err != nil {
		return nil, err
	}
	fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	f.SetRate(m.reg.FillRate())
	fill := registry.NewFill(f, lock, cancel)
	sb.AddFill(k, fill)
	if err := m.publish(ctx, c, sb, k, e, true); err != nil {
		cancel()
		sb.DropFill(k, fill)
		return nil, err
	}
	m.forks.Add(1)
	go m.runFill(fctx, sb, k, fill)
	return e, nil
}

// runFill copies the rest of a lazy fork, then makes it whole (finishFill).
// A fill that fails stays in the sandbox with its error: statements that
// need the whole table get it, and SANDBOX RESET FOR the table ends it.
func (m *Forker) runFill(ctx context.Context, sb *registry.Sandbox, k string, fill *registry.Fill) {
	fill.Filler.Run(ctx)
	err := fill.Filler.Progress().Err
	copied := time.Now()
	if err == nil {
		// The keys left out of the copy are built while statements still
		// copy rows up: only the end below drains them.
		err = m.reg.WithConn(ctx, func(c sideconn.Conn) error { return fill.Filler.Seal(ctx, c) })
	}
	if err == nil {
		err = m.finishFill(ctx, sb, k, fill)
	}
	fill.Filler.Close()
	if err != nil {
		if ctx.Err() != nil {
			err = registry.ErrFillStopped // Stop ends it so too: statements waiting are planned again
		} else {
			m.log.Warn("the fill of a lazy fork failed", zap.String("sandbox", sb.Name), zap.String("table", k), zap.Error(err))
		}
		fill.End(err)
		return
	}
	sb.DropFill(k, fill)
	fill.End(nil)
	p := fill.Filler.Progress()
	m.log.Info("lazy fork filled", zap.String("sandbox", sb.Name), zap.String("table", k), zap.Int64("rows", p.Filled),
		zap.Duration("took", time.Since(p.Started)), zap.Duration("finish", time.Since(copied)))
}

// finishFill puts the whole table in the fork's place (Filler.Finish),
// once no open transaction holds the fork (Fill.AwaitHolds) and with no
// statement running on it (Fill.Exclusive: only statements that copy rows
// up run on a fork while it fills, each briefly), and records it whole.
func (m *Forker) finishFill(ctx context.Context, sb *registry.Sandbox, k string, fill *registry.Fill) error {
	if err := fill.AwaitHolds(ctx); err != nil {
		return err
	}
	defer fill.Exclusive()()
	if fill.Err() != nil {
		return fill.Err() // stopped (a reset) while it waited
	}
	return m.reg.WithConn(ctx, func(c sideconn.Conn) error {
		if err := fill.Filler.Finish(ctx, c); err != nil {
			return err
		}
		e, ok := sb.Resolve(k)
		if !ok || !e.Filling {
			return fmt.Errorf("the fork of %s left the sandbox while it filled", k)
		}
		n := *e
		n.Filling, n.Epoch = false, m.reg.NextEpoch()
		if rows, bytes, err := forker.Size(ctx, c, n.Phys); err == nil {
			n.Rows, n.Bytes = rows, bytes
		}
		ok, err := m.reg.MarkFilled(ctx, c, sb, k, e, &n)
		if err == nil && !ok {
			err = fmt.Errorf("the fork of %s left the sandbox while it filled", k)
		}
		if err == nil {
			m.observer().Filled(n.Rows, n.Bytes)
		}
		return err
	})
}

// AwaitFill waits until the fill of sb's table k has ended: this
// process's, or another process's (its upstream lock free, and the
// registry's row reloaded). The error is the fill's failure, or the wait's.
func (m *Forker) AwaitFill(ctx context.Context, sb *registry.Sandbox, k string) error {
	e, ok := sb.Resolve(k)
	if !ok || !e.Filling {
		return nil
	}
	if f, ok := sb.FillOf(k); ok {
		if f.HeldBy(ctx) {
			return registry.ErrHeldBySelf
		}
		select {
		case <-f.Ended():
			if err := f.Err(); err != nil && !errors.Is(err, registry.ErrFillStopped) {
				// A stopped fill's table left the sandbox (a reset): the
				// statement is planned again at the gate.
				return rewrite.Refuse(wire.ErUnknown, "the fork of %s could not be filled (%v); SANDBOX RESET FOR it and try again", e.Logical, err)
			}
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return m.awaitFillElsewhere(ctx, sb, k, e)
}

// awaitFillElsewhere waits for another process's fill of e (key k) on its
// lock, then reads its registry row again.
func (m *Forker) awaitFillElsewhere(ctx context.Context, sb *registry.Sandbox, k string, e *sandbox.Entry) error {
	lock := m.FillLock(sb.ID, k)
	err := m.reg.WithConn(ctx, func(c sideconn.Conn) error {
		rows, err := c.Query(ctx, "SELECT GET_LOCK("+quote.String(lock)+", "+fmt.Sprint(int(m.cfg.ForkTimeout.Seconds()))+")")
		if err != nil {
			return fmt.Errorf("wait for the fill of %s: %w", e.Logical, err)
		}
		if len(rows) != 1 || sideconn.Str(rows[0][0]) != "1" {
			return rewrite.Refuse(wire.ErLockWaitTimeout, "timed out waiting for another proxy to fill the fork of %s; retry", e.Logical)
		}
		_, _ = c.Query(context.WithoutCancel(ctx), "SELECT RELEASE_LOCK("+quote.String(lock)+")")
		n, err := m.reg.LoadEntry(ctx, c, sb, e.Logical)
		if err != nil {
			return err
		}
		if n == nil {
			return rewrite.Refuse(wire.ErUnknown, "the fork of %s left the sandbox; try again", e.Logical)
		}
		if !n.Filling {
			m.reg.SetEntry(sb, k, n)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if n, ok := sb.Resolve(k); ok && n.Filling {
		// Left unfilled by a process that stopped: filled again here.
		if err := m.resumeFill(ctx, sb, k, e); err != nil {
			return err
		}
		return m.AwaitFill(ctx, sb, k)
	}
	return nil
}

// awaitLinkedFills waits for the fills of the tables of cp, and of those
// its keys link, when it is more than one table alone: keys and triggers
// made now would check or write a lazy fork that does not hold its rows
// yet.
func (m *Forker) awaitLinkedFills(ctx context.Context, sb *registry.Sandbox, cp *connectedSet) error {
	if cp.alone() {
		return nil
	}
	keys := map[string]bool{}
	for _, t := range cp.tables {
		keys[m.names.Key(t)] = true
	}
	for _, fk := range cp.fks {
		if p, c := m.names.Key(fk.Parent), m.names.Key(fk.Child); keys[p] || keys[c] {
			keys[p], keys[c] = true, true
		}
	}
	for k := range keys {
		if e, ok := sb.Resolve(k); ok && e.Filling {
			if err := m.AwaitFill(ctx, sb, k); err != nil {
				return err
			}
		}
	}
	return nil
}

// stopFills stops the fills of sb's tables keys (a reset takes them) and
// drops what they made beside the forks.
func (m *Forker) stopFills(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox, keys []string) {
	for _, k := range keys {
		if f, ok := sb.FillOf(k); ok {
			release := f.Exclusive() // a fill ending now ends first
			f.Stop()
			release()
			sb.DropFill(k, f)
			forker.DropLazy(ctx, c, f.Filler.Lazy())
		}
	}
}

// AwaitFills waits until every lazy fork of sb is whole (AwaitFill).
func (m *Forker) AwaitFills(ctx context.Context, sb *registry.Sandbox) error {
	for _, k := range sb.Filling() {
		if err := m.AwaitFill(ctx, sb, k); err != nil {
			return err
		}
	}
	return nil
}
