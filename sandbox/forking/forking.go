// Package forking makes a sandbox's copies of production's tables: each
// fork with the foreign keys and triggers that connect it, its change
// capture, under the sandbox's and the upstream's locks, recorded in the
// registry; and undoes them.
package forking

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/sqlfork/sqlfork-proxy/catalog"
	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/grants"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/capture"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"github.com/sqlfork/sqlfork-proxy/wire"
	"go.uber.org/zap"
)

// Ensure makes sure t has a place in sb for a statement of the given kind:
// a fork (full or schema only) of the production table, or, for a table
// production does not have, a name in the sandbox schema. It returns the
// entry and whether this call made it.
func (m *Forker) Ensure(ctx context.Context, sb *registry.Sandbox, t rewrite.Table, mode forker.Mode, rd grants.ReadCheck) (e *sandbox.Entry, made bool, err error) {
	lazy := mode == forker.FullOrLazy
	if lazy {
		mode = forker.Full
	}
	t = m.names.Norm(t)
	k := m.names.Key(t)
	// Any state but "absent" is final: a schema-only fork is the table as
	// TRUNCATE left it, a dropped one stays dropped until created again.
	if e, ok := sb.Resolve(k); ok && e.Kind != sandbox.KindAbsent {
		return e, false, nil
	}
	defer sb.LockForks()()
	if e, ok := sb.Resolve(k); ok && e.Kind != sandbox.KindAbsent {
		return e, false, nil // forked by another connection while we waited
	}
	if sb.IsDiscarded() {
		return nil, false, rewrite.Refuse(wire.ErUnknown, "sandbox %q was discarded; SANDBOX CREATE or ATTACH another", sb.Name)
	}
	ctx, cancel := context.WithTimeout(ctx, m.cfg.ForkTimeout)
	defer cancel()
	out, err := m.forkComponent(ctx, sb, t, mode, lazy, rd)
	if err != nil {
		m.forkFailed(sb, t, err)
		return nil, false, err
	}
	return out, true, nil
}

// forkFailed counts and logs a fork of t in sb that did not happen.
func (m *Forker) forkFailed(sb *registry.Sandbox, t rewrite.Table, err error) {
	cause := forkFailureCause(err)
	m.observer().ForkFailed(m.strategy.Name(), cause)
	m.log.Warn("fork failed", zap.String("sandbox", sb.Name), zap.String("table", t.String()),
		zap.String("cause", cause), zap.Error(err))
}

// forkFailureCause classifies a fork error for the fork failure counter.
func forkFailureCause(err error) string {
	var te *sideconn.TimeoutError
	var de *sideconn.DialError
	var r *rewrite.Refusal
	switch {
	case errors.As(err, &te):
		return "queue_timeout"
	case errors.As(err, &de):
		return "connect"
	case errors.As(err, &r):
		return "refused"
	}
	return "error"
}

// forkComponent forks t (already normalized) with every production table
// its fork needs to behave as t does in production (connected): the tables
// foreign keys connect to it, either way and transitively — the keys of a
// fork must point at the sandbox's copies, so that the sandbox refuses and
// cascades on its own rows what production would on its rows —, and the
// tables its triggers name, with theirs in turn (triggers.go). Then each
// table this call forked gets the keys and triggers its production table
// has. A table with keys is always forked whole: a schema-only fork would
// lose the rows its keys check. Each table it would copy must pass rd
// first (the session's account may read it). It returns t's entry.
func (m *Forker) forkComponent(ctx context.Context, sb *registry.Sandbox, t rewrite.Table, mode forker.Mode, lazy bool, rd grants.ReadCheck) (*sandbox.Entry, error) {
	cp, err := m.connected(ctx, sb, t)
	if err != nil {
		return nil, err
	}
	if err := m.triggerHazards(ctx, cp); err != nil {
		return nil, err
	}
	if err := m.awaitLinkedFills(ctx, sb, cp); err != nil {
		return nil, err
	}
	var rg *grants.Reader
	if rd != nil {
		g, err := rd(ctx)
		if err != nil {
			return nil, err
		}
		rg = &g
	}
	if cp.linked {
		mode = forker.Full
	}
	var out *sandbox.Entry
	err = m.reg.WithConn(ctx, func(c sideconn.Conn) error {
		if rg != nil {
			var todo []rewrite.Table
			for i, u := range cp.tables {
				if e, ok := sb.Resolve(m.names.Key(u)); i == 0 || !ok || e.Kind == sandbox.KindAbsent {
					todo = append(todo, u)
				}
			}
			if err := grants.MayRead(ctx, c, *rg, t, todo, m.names.Key); err != nil {
				return err
			}
		}
		var made map[string]*sandbox.Entry
		out, made, err = m.forkAll(ctx, c, sb, t, cp, mode, lazy && cp.alone())
		if err == nil {
			err = m.linkForks(ctx, c, sb, cp.fks, made)
		}
		if err == nil {
			err = m.copyTriggers(ctx, c, sb, cp, made)
		}
		if err == nil {
			err = m.caps.InstallCascades(ctx, c, sb, made)
		}
		if err == nil && len(made) > 0 {
			sb.NeedRoutines(cp.routines)
		}
		if err != nil {
			// A fork without its keys or triggers would not do what its
			// table does: none stays, also when a later table's fork
			// failed.
			m.dropForks(context.WithoutCancel(ctx), c, sb, made)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// forkAll forks the tables of cp that are not in sb yet (t, the first,
// whatever it is there): out is t's entry, made the forks this call made
// (by key), also when a later fork failed.
func (m *Forker) forkAll(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox, t rewrite.Table, cp *connectedSet,
	mode forker.Mode, lazy bool) (out *sandbox.Entry, made map[string]*sandbox.Entry, err error) {
	made = map[string]*sandbox.Entry{}
	for i, u := range cp.tables {
		k := m.names.Key(u)
		if e, ok := sb.Resolve(k); i > 0 && ok && e.Kind != sandbox.KindAbsent {
			continue // in the sandbox already, with its keys and triggers
		}
		e, fresh, err := m.forkLocked(ctx, c, sb, u, k, mode, lazy)
		if err != nil {
			if i > 0 {
				err = fmt.Errorf("fork %s, which %s needs: %w", u, t, err)
			}
			return nil, made, err
		}
		if i == 0 {
			out = e
		}
		if fresh && (e.Kind == sandbox.KindFork || e.Kind == sandbox.KindSchema) {
			made[k] = e
		}
	}
	return out, made, nil
}

// dropForks undoes the forks in made (by key): registry rows, tables and
// map entries.
func (m *Forker) dropForks(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox, made map[string]*sandbox.Entry) {
	for k, e := range made {
		m.reg.DeleteEntry(ctx, c, sb, e.Logical)
		if _, err := c.Exec(ctx, "DROP TABLE IF EXISTS "+e.Phys.Quoted()); err != nil {
			m.log.Warn("drop a fork left without its keys or triggers", zap.String("fork", e.Phys.String()), zap.Error(err))
		}
		sb.DropEntry(k, e)
	}
	if err := m.reg.BumpGeneration(ctx, c, sb); err != nil {
		m.log.Warn("count undone forks in the registry", zap.Error(err))
	}
}

// linkForks gives each fork in made (by key) the foreign keys of its
// production table, referencing the sandbox's table of each parent.
func (m *Forker) linkForks(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox, fks []forker.ForeignKey, made map[string]*sandbox.Entry) error {
	linked := map[string]*sandbox.Entry{}
	for _, fk := range fks {
		k := m.names.Key(fk.Child)
		child, ok := made[k]
		if !ok {
			continue
		}
		parent, ok := sb.Resolve(m.names.Key(fk.Parent))
		if !ok || parent.Kind == sandbox.KindAbsent || parent.Kind == sandbox.KindDropped || parent.Kind == sandbox.KindForking {
			continue // a parent the sandbox dropped: production could not have the key either
		}
		if err := forker.AddForeignKey(ctx, c, fk, child.Phys, parent.Phys); err != nil {
			return err
		}
		linked[k] = child
	}
	for _, e := range linked {
		if err := forker.RestoreIndexNames(ctx, c, e.Logical, e.Phys); err != nil {
			return err
		}
	}
	return nil
}

// forkLocked forks t under the sandbox's fork mutex and an upstream lock,
// so one fork per (sandbox, table) happens across proxy processes too;
// fresh says this call made it.
func (m *Forker) forkLocked(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox, t rewrite.Table, k string, mode forker.Mode, lazy bool) (e *sandbox.Entry, fresh bool, err error) {
	if err := m.reg.Persist(ctx, c, sb); err != nil {
		return nil, false, err
	}
	release, err := m.lockFork(ctx, c, sb, t, k)
	if err != nil {
		return nil, false, err
	}
	defer release()
	// Another process may have forked it meanwhile.
	if e, err := m.forkedElsewhere(ctx, c, sb, t, k); err != nil || e != nil {
		return e, false, err
	}
	phys := m.names.Physical(sb.ID, t)
	if _, own := sb.OwnDB(m.names.Norm(rewrite.Table{DB: t.DB}).DB); own {
		// A database the sandbox made or dropped: nothing of production's
		// is in it, and its schema exists only while the database does.
		e, err := m.recordAbsent(ctx, c, sb, t, k, phys)
		return e, false, err
	}
	if err := m.prepareFork(ctx, c, sb, t, phys, mode); err != nil {
		return nil, false, err
	}
	e, err = m.runFork(ctx, c, sb, t, k, phys, mode, lazy)
	return e, err == nil, err
}

// lockFork takes the upstream lock for forking t (key k) in sb, waiting
// up to the fork timeout, and returns what releases it.
func (m *Forker) lockFork(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox, t rewrite.Table, k string) (release func(), err error) {
	lock := m.reg.LockName(sb.ID, k)
	rows, err := c.Query(ctx, "SELECT GET_LOCK("+quote.String(lock)+", "+fmt.Sprint(int(m.cfg.ForkTimeout.Seconds()))+")")
	if err != nil {
		return nil, fmt.Errorf("lock fork of %s: %w", t, err)
	}
	if len(rows) != 1 || rows[0][0] == nil || *rows[0][0] != "1" {
		return nil, rewrite.Refuse(wire.ErLockWaitTimeout, "timed out waiting for another proxy to fork %s; retry", t)
	}
	return func() {
		_, _ = c.Query(context.WithoutCancel(ctx), "SELECT RELEASE_LOCK("+quote.String(lock)+")")
	}, nil
}

// forkedElsewhere returns the entry of t (key k) in sb when the registry
// has one in place, made by another connection or process before this one
// took the lock; nil when t is still to be forked (no row, or the marker
// of a fork a crash interrupted).
func (m *Forker) forkedElsewhere(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox, t rewrite.Table, k string) (*sandbox.Entry, error) {
	e, err := m.reg.LoadEntry(ctx, c, sb, t)
	switch {
	case err != nil:
		return nil, err
	case e != nil && e.Kind == sandbox.KindAbsent:
		// Recorded as not in production: a statement of this sandbox (in
		// this process or another) may have created it since.
		if _, _, err := forker.Size(ctx, c, e.Phys); err == nil {
			e.Kind = sandbox.KindCreated
			if err := m.reg.SaveEntry(ctx, c, sb, e); err != nil {
				return nil, err
			}
		}
		m.reg.SetEntry(sb, k, e)
		return e, nil
	case e != nil && e.Kind != sandbox.KindForking:
		m.reg.SetEntry(sb, k, e)
		return e, nil
	}
	return nil, nil
}

// prepareFork makes the place of t's fork phys in sb ready: its database
// exists, leftovers of a crash are gone, and a full fork stays within the
// owner's max-fork-bytes.
func (m *Forker) prepareFork(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox, t, phys rewrite.Table, mode forker.Mode) error {
	created, err := m.createSchema(ctx, c, t.DB, phys.DB)
	if err != nil {
		return err
	}
	// Leftovers of a crash between creating and recording: start from
	// nothing (a database this call made has none).
	if !created {
		if _, err := c.Exec(ctx, "DROP TABLE IF EXISTS "+phys.Quoted()); err != nil {
			return fmt.Errorf("clear %s: %w", phys, err)
		}
	}
	if maxBytes := m.maxForkBytes(sb.Owner); maxBytes > 0 && mode == forker.Full {
		_, size, err := forker.Size(ctx, c, t)
		if err == nil {
			used := sb.ForkedBytes()
			if used+size > maxBytes {
				r := rewrite.Refuse(wire.ErRecordFileFull, "forking %s (%d bytes) would take sandbox %q past its limit of %d forked bytes (%d used); "+
					"discard the sandbox or ask the operator to raise --max-fork-bytes", t, size, sb.Name, maxBytes, used)
				r.Reason = ReasonMaxForkBytes
				return r
			}
		}
	}
	return nil
}

// CreateSchema makes phys, the sandbox's database for the logical
// database db, when it is missing, with db's default character set and
// collation, so that what the sandbox creates there gets the defaults it
// would get in db (a new table's, a new column's).
func (m *Forker) CreateSchema(ctx context.Context, c sideconn.Conn, db, phys string) error {
	_, err := m.createSchema(ctx, c, db, phys)
	return err
}

// createSchema is CreateSchema; created says the server made phys now
// (CREATE DATABASE affected a row), so it holds no table yet.
func (m *Forker) createSchema(ctx context.Context, c sideconn.Conn, db, phys string) (created bool, err error) {
	// Two lookups by name: MariaDB reads every database's directory for an
	// IN list (measured: 56 ms a fork beside 4,000 sandbox databases).
	const q = "SELECT SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = "
	rows, err := c.Query(ctx, q+quote.String(db)+" UNION ALL "+q+quote.String(phys))
	if err != nil {
		return false, fmt.Errorf("read the defaults of database %s: %w", db, err)
	}
	stmt := "CREATE DATABASE IF NOT EXISTS " + quote.Ident(phys)
	for _, r := range rows {
		switch {
		case r[0] != nil && *r[0] == phys:
			return false, nil
		case r[1] != nil && r[2] != nil:
			stmt += " CHARACTER SET " + quote.Ident(*r[1]) + " COLLATE " + quote.Ident(*r[2])
		}
	}
	n, err := c.Exec(ctx, stmt)
	if err != nil {
		return false, fmt.Errorf("create sandbox schema %s: %w", phys, err)
	}
	return n == 1, nil
}

// runFork forks t (key k) to phys with the strategy, under a marker row in
// the registry, and records what came of it: the fork, or t missing from
// production.
func (m *Forker) runFork(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox, t rewrite.Table, k string, phys rewrite.Table, mode forker.Mode, lazy bool) (*sandbox.Entry, error) {
	marker := &sandbox.Entry{Logical: t, Phys: phys, Kind: sandbox.KindForking, Created: time.Now().UTC()}
	if err := m.reg.SaveEntry(ctx, c, sb, marker); err != nil {
		return nil, err
	}
	if lazy, rows := m.lazyWanted(ctx, c, t, mode, lazy); lazy {
		e, ok, err := m.runLazy(ctx, c, sb, t, k, phys, rows)
		if err != nil {
			m.reg.DeleteEntry(context.WithoutCancel(ctx), c, sb, t)
		}
		if ok || err != nil {
			return e, err
		}
	}
	st, err := m.strategy.Fork(ctx, c, t, phys, mode)
	if err != nil && !errors.Is(err, forker.ErrNoSource) {
		m.reg.DeleteEntry(context.WithoutCancel(ctx), c, sb, t)
	}
	var refused *forker.Refused
	switch {
	case errors.Is(err, forker.ErrNoSource):
		// Not in production: the sandbox sees it missing until it creates
		// it. Recorded (replacing the marker), so that a table the
		// statement creates is never taken for an orphan.
		return m.recordAbsent(ctx, c, sb, t, k, phys)
	case errors.As(err, &refused):
		return nil, rewrite.Refuse(wire.ErUnknown, "%s", refused.Error())
	case err != nil:
		_, _ = c.Exec(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+phys.Quoted())
		return nil, fmt.Errorf("fork %s: %w", t, err)
	}
	// Before the fork is recorded, so no statement of the sandbox can
	// change a row of it uncaptured.
	if err := m.caps.Start(ctx, c, sb, t, phys, mode); err != nil {
		m.reg.DeleteEntry(context.WithoutCancel(ctx), c, sb, t)
		_, _ = c.Exec(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+phys.Quoted())
		return nil, fmt.Errorf("fork %s: %w", t, err)
	}
	return m.recordFork(ctx, c, sb, t, k, phys, mode, st)
}

// recordAbsent records t (key k) as not in production: phys, where the
// sandbox would create it, is what its statements name.
func (m *Forker) recordAbsent(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox, t rewrite.Table, k string, phys rewrite.Table) (*sandbox.Entry, error) {
	e := &sandbox.Entry{Logical: t, Phys: phys, Kind: sandbox.KindAbsent, Epoch: m.reg.NextEpoch(), Created: time.Now().UTC()}
	if _, _, err := forker.Size(ctx, c, phys); err == nil {
		e.Kind = sandbox.KindCreated // made by a statement of the sandbox meanwhile
	}
	if err := m.reg.SaveEntry(ctx, c, sb, e); err != nil {
		return nil, err
	}
	if err := m.publish(ctx, c, sb, k, e, false); err != nil {
		return nil, err
	}
	return e, nil
}

// recordFork records a finished fork phys of t (key k) in the registry and
// in memory, or drops it when it cannot be recorded.
func (m *Forker) recordFork(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox, t rewrite.Table, k string, phys rewrite.Table, mode forker.Mode, st forker.Stats) (*sandbox.Entry, error) {
	kind := sandbox.KindFork
	if mode == forker.SchemaOnly {
		kind = sandbox.KindSchema
	}
	e := &sandbox.Entry{Logical: t, Phys: phys, Kind: kind, Rows: st.Rows, Bytes: st.Bytes, Epoch: m.reg.NextEpoch(), Created: time.Now().UTC()}
	if err := m.reg.SaveEntry(ctx, c, sb, e); err != nil {
		m.reg.DeleteEntry(context.WithoutCancel(ctx), c, sb, t) // it may be recorded, uncounted
		_, _ = c.Exec(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+phys.Quoted())
		return nil, err
	}
	if err := m.publish(ctx, c, sb, k, e, true); err != nil {
		return nil, err
	}
	if mode == forker.Full {
		m.forks.Add(1)
	}
	m.observer().Forked(m.strategy.Name(), mode == forker.SchemaOnly, st.Duration, st.Rows, st.Bytes)
	m.log.Info("forked table", zap.String("sandbox", sb.Name), zap.String("table", t.String()),
		zap.String("fork", phys.String()), zap.String("strategy", m.strategy.Name()), zap.String("kind", string(kind)),
		zap.Int64("rows", st.Rows), zap.Int64("bytes", st.Bytes), zap.Duration("took", st.Duration))
	return e, nil
}

// publish makes the entry e (key k), its row saved, the sandbox's: once
// the registry still holds its row and the sandbox's (StillRecorded;
// forked: e is a fork, undone otherwise) and the other processes' sync
// leases ran out (AwaitReaders), it is set in memory.
func (m *Forker) publish(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox, k string, e *sandbox.Entry, forked bool) error {
	if err := m.reg.StillRecorded(ctx, c, sb, e, forked); err != nil {
		return err
	}
	if err := m.reg.AwaitReaders(ctx, c, sb); err != nil {
		return err
	}
	m.reg.SetEntry(sb, k, e)
	return nil
}

// Refresh re-reads the physical state of tables a DDL statement touched:
// whether each exists in the sandbox decides created/dropped.
func (m *Forker) Refresh(ctx context.Context, sb *registry.Sandbox, tables []rewrite.Table) error {
	return m.reg.WithConn(ctx, func(c sideconn.Conn) error {
		for _, t := range tables {
			t = m.names.Norm(t)
			k := m.names.Key(t)
			e, ok := sb.Resolve(k)
			if !ok {
				continue
			}
			rows, bytes, err := forker.Size(ctx, c, e.Phys)
			n := *e
			switch {
			case errors.Is(err, forker.ErrNoSource):
				if e.Kind == sandbox.KindAbsent {
					continue
				}
				n.Kind, n.Rows, n.Bytes = sandbox.KindDropped, 0, 0
			case err != nil:
				return err
			default:
				if e.Kind == sandbox.KindAbsent || e.Kind == sandbox.KindDropped {
					n.Kind = sandbox.KindCreated
				}
				n.Rows, n.Bytes = rows, bytes
			}
			n.Epoch = m.reg.NextEpoch()
			if err := m.reg.Persist(ctx, c, sb); err != nil {
				return err
			}
			if err := m.reg.SaveEntry(ctx, c, sb, &n); err != nil {
				return err
			}
			m.reg.SetEntry(sb, k, &n)
		}
		return nil
	})
}

// Unfork removes a schema-only fork made for a DROP that then failed, so
// the sandbox sees the production table again rather than an empty one.
func (m *Forker) Unfork(ctx context.Context, sb *registry.Sandbox, t rewrite.Table) error {
	t = m.names.Norm(t)
	k := m.names.Key(t)
	e, ok := sb.Resolve(k)
	if !ok || e.Kind != sandbox.KindSchema {
		return nil
	}
	defer sb.LockForks()()
	gone := false
	err := m.reg.WithConn(ctx, func(c sideconn.Conn) error {
		if _, _, err := forker.Size(ctx, c, e.Phys); errors.Is(err, forker.ErrNoSource) {
			gone = true // the DROP took it despite the error: refresh marks it dropped
			return nil
		} else if err != nil {
			return err
		}
		if _, err := c.Exec(ctx, "DELETE FROM "+m.names.Q("tables")+" WHERE sandbox_id = "+quote.String(sb.ID)+
			" AND db = "+quote.String(t.DB)+" AND tbl = "+quote.String(t.Name)); err != nil {
			return err
		}
		if err := m.reg.BumpGeneration(ctx, c, sb); err != nil {
			return err
		}
		if err := m.reg.AwaitReaders(ctx, c, sb); err != nil {
			return err
		}
		_, err := c.Exec(ctx, "DROP TABLE IF EXISTS "+e.Phys.Quoted())
		return err
	})
	if err != nil || gone {
		return err
	}
	sb.ForgetEntry(k)
	return nil
}

// Forker makes a sandbox's copies of production's tables: the forks,
// with their keys, triggers and captures, as one component under the
// sandbox's and the upstream's locks, recorded in the registry.
type Forker struct {
	cfg      Config
	log      *zap.Logger
	names    sandbox.Names
	reg      *registry.Registry
	strategy forker.Strategy
	caps     *capture.Tracker
	catalog  *catalog.Objects
	triggers catalog.Triggers
	// maxForkBytes is the owner's max-fork-bytes guardrail (0: none).
	maxForkBytes func(owner string) int64
	obs          atomic.Pointer[Observer]
	// forks counts forks made, for tests and metrics.
	forks atomic.Int64
}

// Config is what forking needs of the settings.
type Config struct {
	// Prefix starts every database the proxy makes.
	Prefix string
	// ForkTimeout bounds one fork.
	ForkTimeout time.Duration
	// LazyRows: a table of at least this many rows (production's
	// estimate) is forked lazily when it can be (lazy.go); negative: never.
	LazyRows int64
}

// Observer is told about forks, for metrics.
type Observer interface {
	// Forked reports one finished fork (a lazy one once usable, with no
	// rows copied yet).
	Forked(strategy string, schemaOnly bool, took time.Duration, rows, bytes int64)
	// Filled reports the rows and bytes a lazy fork's copy took once whole.
	Filled(rows, bytes int64)
	// ForkFailed reports a fork that did not happen, by cause: refused
	// (the table cannot be forked faithfully or past a limit),
	// queue_timeout (no side connection free in time), connect (a side
	// connection could not be opened) or error.
	ForkFailed(strategy, cause string)
}

// ReasonMaxForkBytes is the guardrail a fork past max-fork-bytes is
// refused by.
const ReasonMaxForkBytes = "max_fork_bytes"

// observer is the installed observer.
func (m *Forker) observer() Observer { return *m.obs.Load() }

// SetObserver installs o.
func (m *Forker) SetObserver(o Observer) { m.obs.Store(&o) }

// Forks is the number of forks this process made.
func (m *Forker) Forks() int64 { return m.forks.Load() }

// New is the Forker of the sandboxes in reg, with the strategy, captures,
// production catalog and trigger reader given; maxForkBytes is an owner's
// max-fork-bytes guardrail (0: none).
func New(cfg Config, log *zap.Logger, names sandbox.Names, reg *registry.Registry, strategy forker.Strategy,
	caps *capture.Tracker, cat *catalog.Objects, triggers catalog.Triggers, maxForkBytes func(owner string) int64) *Forker {
	f := &Forker{cfg: cfg, log: log, names: names, reg: reg, strategy: strategy, caps: caps, catalog: cat,
		triggers: triggers, maxForkBytes: maxForkBytes}
	f.SetObserver(nop{})
	return f
}

// nop is the Observer until SetObserver.
type nop struct{}

func (nop) Forked(string, bool, time.Duration, int64, int64) {}
func (nop) Filled(int64, int64)                              {}
func (nop) ForkFailed(string, string)                        {}
