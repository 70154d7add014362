package registry

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"go.uber.org/zap"
)

// Read-your-writes across proxy processes (docs/SANDBOXES.md, "Several
// proxy processes"). Each process keeps a sandbox's table map in memory; a
// process that forks, creates or drops a table of a sandbox records it in
// the registry's tables and then bumps the sandbox's generation
// (<prefix>_meta.generations). Before a statement of a sandbox another
// process may share reads or writes a table its map leaves to production,
// the session reads that generation (one primary-key lookup on a side
// connection) and, when it moved, reloads the sandbox's tables. A write
// that returned to its client was recorded and counted before it ran, so
// the next statement on any process sees the fork it went to.
//
// The check costs nothing where it cannot matter: statements that name no
// table need none, and neither do anonymous sandboxes no other process has
// claimed. Without sync leases a table the map holds keeps its physical
// name whatever another process does; with them (the default), a SANDBOX
// RESET elsewhere takes forks out of the map — it removes their rows,
// moves the generation and waits out the leases before it drops them —,
// so statements naming held tables check too, once per lease. Callers that arrive
// while a check of the same sandbox runs share the next one, so a sandbox
// has at most one check in flight per process however many statements
// wait for it. A check that fails fails the statement: the proxy cannot
// tell whether the table is still production's.
//
// With a sync lease (Config.SyncLease), a check also records in the
// registry's readers table, before it reads the generation, until when
// this process will trust its map without checking again; the statements
// of the lease need no check. A process that changes where a table of the
// sandbox resolves (a fork, a table recorded missing, a fork undone) bumps
// the generation and then waits, before the change is used by any
// statement, until every other process's lease has run out: whatever
// lease a process took before the bump ends before the change is used,
// and every check after the bump sees it. Reads then cost one check per
// lease and sandbox, and a first write of a table costs at most one lease
// of waiting, only while another process reads the sandbox.

// syncTimeout bounds one registry check: it serves every caller of its
// round, so no single caller's context ends it.
const syncTimeout = time.Minute

// regSync runs the registry checks of one sandbox in this process, one
// round at a time.
type regSync struct {
	mu sync.Mutex
	// running: a round is in flight; pending is the round callers join
	// meanwhile, run when it ends.
	running bool
	pending *syncRound
	// seen is the registry's state the table map was last brought up to:
	// the sandbox row's creation time (a sandbox discarded and made again
	// under its name starts counting afresh) and the generation ("": none
	// yet).
	seen string
	// until is when the lease this process last took on the sandbox's
	// map (takeLease) stops being trusted: a little before it ends on the
	// server's clock.
	until time.Time
}

// trusted reports whether the map may be used without a check: a lease
// taken after the last change this process has not seen is running.
func (rs *regSync) trusted(now time.Time) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return now.Before(rs.until)
}

// trust records that the map may be used without a check until until.
func (rs *regSync) trust(until time.Time) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.until = until
}

// syncRound is one registry check and the callers waiting for it.
type syncRound struct {
	start   chan struct{} // closed when the round may run (its leader runs it)
	done    chan struct{} // closed when it ran, with err set
	err     error
	callers int // who joined it (its leader included)
}

// join adds a caller to the round that has not started yet, or starts one:
// leader reports that the caller runs it (once start is closed).
func (rs *regSync) join() (r *syncRound, leader bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.pending != nil {
		rs.pending.callers++
		return rs.pending, false
	}
	r = &syncRound{start: make(chan struct{}), done: make(chan struct{}), callers: 1}
	if rs.running {
		rs.pending = r // starts when the round in flight ends
	} else {
		rs.running = true
		close(r.start)
	}
	return r, true
}

// finish ends the round in flight and starts the pending one, if any.
func (rs *regSync) finish() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if p := rs.pending; p != nil {
		rs.pending = nil
		close(p.start)
		return
	}
	rs.running = false
}

// moved reports whether state differs from the one the map reflects.
func (rs *regSync) moved(state string) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.seen != state
}

// saw records that the map reflects state.
func (rs *regSync) saw(state string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.seen = state
}

// Shareable reports whether another proxy process may use sb, so its table
// map may lag the registry: a named or kept sandbox, or one this process
// claimed from the registry or found held elsewhere.
func (sb *Sandbox) Shareable() bool {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return sb.shared || sb.kept || !sb.anonymous()
}

// markShared records that another process may use sb.
func (sb *Sandbox) markShared() {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	sb.shared = true
}

// SyncTables brings sb's table map up to the registry: a round that
// starts after the call, shared with the callers that join it.
func (m *Registry) SyncTables(ctx context.Context, sb *Sandbox) error {
	if m.cfg.SyncLease > 0 && sb.sync.trusted(time.Now()) {
		return nil
	}
	r, leader := sb.sync.join()
	if leader {
		<-r.start // bounded: the round before it ends within syncTimeout
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), syncTimeout)
		r.err = m.syncOnce(rctx, sb)
		cancel()
		close(r.done)
		sb.sync.finish()
		return r.err
	}
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return fmt.Errorf("wait for the sandbox registry: %w", ctx.Err())
	}
}

// syncOnce reads sb's generation and, when it moved, reloads its tables. A
// sandbox this process recorded and the registry no longer has was
// discarded through another process.
func (m *Registry) syncOnce(ctx context.Context, sb *Sandbox) error {
	return m.WithConn(ctx, func(c sideconn.Conn) error {
		// Recorded before the query was sent (persisted is set once the
		// row is in): a row missing then was deleted.
		start, recorded := m.epoch.Load(), sb.isPersisted()
		taken, err := m.takeLease(ctx, c, sb)
		if err != nil {
			return err
		}
		rows, err := c.Query(ctx, "SELECT s.name, s.owner, s.created_at, g.generation FROM "+m.names.Q("sandboxes")+" s LEFT JOIN "+
			m.names.Q("generations")+" g ON g.sandbox_id = s.id WHERE s.id = "+quote.String(sb.ID))
		switch {
		case err != nil:
			return fmt.Errorf("read the generation of sandbox %s: %w", sb.Name, err)
		case len(rows) == 0:
			if recorded {
				m.Observer().RegistryChecked("discarded")
				m.discardedElsewhere(sb)
				return nil
			}
			// Not recorded yet: whoever records it and forks first
			// waits out the lease.
			m.Observer().RegistryChecked("unchanged")
			sb.sync.trust(taken)
			return nil
		case sideconn.Str(rows[0][0]) != sb.Name || sideconn.Str(rows[0][1]) != sb.Owner:
			return nil // another sandbox's id (see sameSandbox)
		}
		state := sideconn.Str(rows[0][2]) + "/" + strconv.FormatInt(sideconn.Num(rows[0][3]), 10)
		result := "unchanged"
		if sb.sync.moved(state) {
			if err := m.reloadTables(ctx, c, sb, start); err != nil {
				return err
			}
			sb.sync.saw(state)
			result = "reloaded"
		}
		m.Observer().RegistryChecked(result)
		sb.sync.trust(taken)
		return nil
	})
}

// leaseMargin is the part of a sync lease a process gives up (a tenth), so
// that it stops trusting its map before the lease ends on the server's
// clock even when the two clocks run at slightly different rates.
const leaseMargin = 10

// takeLease records in the registry that this process will use sb's map
// without checking for the sync lease from now (on the server's clock), and
// returns when it stops trusting it on its own clock; the zero time without
// a lease.
func (m *Registry) takeLease(ctx context.Context, c sideconn.Conn, sb *Sandbox) (time.Time, error) {
	l := m.cfg.SyncLease
	if l <= 0 {
		return time.Time{}, nil
	}
	sent := time.Now() // the server's UTC_TIMESTAMP below is no earlier
	if _, err := c.Exec(ctx, "REPLACE INTO "+m.names.Q("readers")+" (sandbox_id, proxy_id, valid_until) VALUES ("+
		quote.String(sb.ID)+", "+quote.String(m.proxyID)+", UTC_TIMESTAMP(6) + INTERVAL "+
		strconv.FormatInt(l.Microseconds(), 10)+" MICROSECOND)"); err != nil {
		return time.Time{}, fmt.Errorf("record a sync lease on sandbox %s: %w", sb.Name, err)
	}
	return sent.Add(l - l/leaseMargin), nil
}

// Leased reports whether processes take sync leases (Config.SyncLease):
// then a table change that takes a table out of a sandbox's map (a reset)
// reaches them too, at their next statement past their lease.
func (m *Registry) Leased() bool { return m.cfg.SyncLease > 0 }

// AwaitReaders waits, after a change of sb's tables was counted in its
// generation and before anything uses it, until the sync leases other
// processes took on sb have run out: they check the registry before their
// next statement that reads production, and see the change.
func (m *Registry) AwaitReaders(ctx context.Context, c sideconn.Conn, sb *Sandbox) error {
	l := m.cfg.SyncLease
	if l <= 0 {
		return nil
	}
	rows, err := c.Query(ctx, "SELECT TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), MAX(valid_until)) FROM "+m.names.Q("readers")+
		" WHERE sandbox_id = "+quote.String(sb.ID)+" AND proxy_id <> "+quote.String(m.proxyID))
	if err != nil {
		return fmt.Errorf("read the sync leases of sandbox %s: %w", sb.Name, err)
	}
	if len(rows) != 1 || rows[0][0] == nil {
		return nil
	}
	left := time.Duration(sideconn.Num(rows[0][0])) * time.Microsecond
	if left <= 0 {
		return nil
	}
	left += l / leaseMargin // the clocks' rates may differ a little
	m.log.Debug("waiting for other proxy processes' sync leases", zap.String("sandbox", sb.Name), zap.Duration("wait", left))
	t := time.NewTimer(left)
	defer t.Stop()
	select {
	case <-t.C:
		m.Observer().LeasesAwaited(left)
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait for other proxy processes' sync leases on sandbox %s: %w", sb.Name, ctx.Err())
	}
}

// reloadTables brings sb's table map in line with the registry's rows,
// read after start (the manager's epoch then): tables forked, created or
// dropped elsewhere come in (with a new epoch, so transactions whose read
// view is older restart past them), and tables the registry no longer
// lists (a schema-only fork undone elsewhere) go, unless this process
// changed them since start.
func (m *Registry) reloadTables(ctx context.Context, c sideconn.Conn, sb *Sandbox, start uint64) error {
	rows, err := c.Query(ctx, "SELECT "+entryCols+" FROM "+m.names.Q("tables")+" WHERE sandbox_id = "+quote.String(sb.ID)+usable)
	if err != nil {
		return fmt.Errorf("read registry: %w", err)
	}
	seen := make(map[string]bool, len(rows))
	for _, r := range rows {
		e := m.rowEntry(r)
		k := m.names.Key(e.Logical)
		seen[k] = true
		if cur, ok := sb.Resolve(k); ok && (cur.Kind == e.Kind && cur.Filling == e.Filling || cur.Epoch > start) {
			continue
		}
		if sb.removedAfter(k, start) {
			continue // read before a reset here took it out
		}
		m.SetEntry(sb, k, e)
	}
	sb.forgetMissing(seen, start)
	if err := m.loadDBs(ctx, c, sb); err != nil {
		return err
	}
	// What it knew of the sandbox's routines may be stale too (a RESET
	// elsewhere drops them): looked up again at their next use.
	sb.ForgetRoutines(true)
	sb.mu.Lock()
	sb.persisted = true // recorded, here or elsewhere
	sb.mu.Unlock()
	return nil
}

// forgetMissing removes the tables of sb not in seen whose entry is not
// newer than start.
func (sb *Sandbox) forgetMissing(seen map[string]bool, start uint64) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	for k, e := range sb.tables {
		if !seen[k] && e.Epoch <= start {
			sb.bytes -= e.Bytes
			delete(sb.tables, k)
			sb.version++
		}
	}
}

// BumpGeneration counts a change of sb's tables in the registry, after the
// change is recorded there: a process that then reads the new generation
// reloads the tables with it.
func (m *Registry) BumpGeneration(ctx context.Context, c sideconn.Conn, sb *Sandbox) error {
	return m.bumpGeneration(ctx, c, sb.ID, sb.Name)
}

// bumpGeneration is BumpGeneration of sandbox id, called name in errors.
func (m *Registry) bumpGeneration(ctx context.Context, c sideconn.Conn, id, name string) error {
	_, err := c.Exec(ctx, "INSERT INTO "+m.names.Q("generations")+" (sandbox_id, generation) VALUES ("+quote.String(id)+
		", 1) ON DUPLICATE KEY UPDATE generation = generation + 1")
	if err != nil {
		return fmt.Errorf("count a change of sandbox %s: %w", name, err)
	}
	return nil
}
