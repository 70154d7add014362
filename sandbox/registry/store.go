package registry

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// The registry lives in the upstream, in sandbox.MetaSchema(prefix):
//
//	sandboxes: one row per sandbox that has forked a table or was kept
//	tables:    one row per table a sandbox forked, created or dropped
//
// Unkept sandboxes hold a lease their process renews every ReapInterval;
// one whose lease ran out belongs to a process that is gone, and is
// dropped by whichever process reaps next.

// Init creates the metadata schema and tables.
func (m *Registry) Init(ctx context.Context, c sideconn.Conn) error {
	stmts := []string{"CREATE DATABASE IF NOT EXISTS " + quote.Ident(m.names.Meta())}
	for _, t := range registryTables {
		stmts = append(stmts, "CREATE TABLE IF NOT EXISTS "+m.names.Q(t.name)+" ("+t.cols+") DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin")
	}
	// Columns added since a registry was first made.
	stmts = append(stmts, "ALTER TABLE "+m.names.Q("captures")+" ADD COLUMN IF NOT EXISTS base_cols TEXT NULL",
		"ALTER TABLE "+m.names.Q("sandboxes")+" ADD COLUMN IF NOT EXISTS changed_at DATETIME(6) NULL, ADD COLUMN IF NOT EXISTS promoted_at DATETIME(6) NULL, "+
			"ADD COLUMN IF NOT EXISTS clean_at DATETIME(6) NULL",
		"ALTER TABLE "+m.names.Q("tables")+" ADD COLUMN IF NOT EXISTS fill VARCHAR(16) NOT NULL DEFAULT ''")
	// The first process to start makes the secret of the upstream lock
	// names (see lockName); the others read it.
	stmts = append(stmts, "INSERT IGNORE INTO "+m.names.Q("settings")+" (name, value) VALUES ('lock_secret', "+
		quote.String(randomID(32))+")")
	for _, s := range stmts {
		if _, err := c.Exec(ctx, s); err != nil {
			return fmt.Errorf("create sandbox registry in %s (the upstream account needs all privileges on `%s%%`): %q: %w",
				m.names.Meta(), strings.ReplaceAll(m.cfg.Prefix, "_", `\_`), s, err)
		}
	}
	rows, err := c.Query(ctx, "SELECT value FROM "+m.names.Q("settings")+" WHERE name = 'lock_secret'")
	if err != nil {
		return fmt.Errorf("read the registry's lock secret: %w", err)
	}
	if len(rows) != 1 || sideconn.Str(rows[0][0]) == "" {
		return fmt.Errorf("the registry's lock secret is missing from %s", m.names.Q("settings"))
	}
	m.lockSecret = sideconn.Str(rows[0][0])
	return nil
}

// Persist writes sb's row: the first time under its life lock (record),
// so that a discard of the same name in flight in any process is done
// first; later calls renew its lease and activity and, while a connection
// uses it, record that it is in no grace. While this process uses the
// sandbox (connections, or its grace) it is recorded among its holders
// too. Kept and expiry are a keep's to write (persistKeep): written here
// from memory, they would undo a keep or expiry another process recorded
// since this one last read the registry.
func (m *Registry) Persist(ctx context.Context, c sideconn.Conn, sb *Sandbox) error {
	sb.mu.Lock()
	kept, last, done, changed := sb.kept, sb.lastActive, sb.persisted, sb.marks.changed
	using := sb.attached > 0 || !sb.graceUntil.IsZero()
	sb.mu.Unlock()
	if !done {
		return m.record(ctx, c, sb)
	}
	id := quote.String(sb.ID)
	set := ""
	if !changed.IsZero() {
		set = ", " + changedSet(changed)
	}
	_, err := c.Exec(ctx, "UPDATE "+m.names.Q("sandboxes")+" SET last_active = "+sideconn.SQLTime(last)+
		", lease_until = "+sideconn.SQLTime(time.Now().Add(m.cfg.Lease))+set+" WHERE id = "+id)
	if err == nil && !kept {
		// In use: in no grace, whatever a process recorded.
		err = m.clearGrace(ctx, c, sb, "")
	}
	if err != nil {
		return fmt.Errorf("record sandbox %s: %w", sb.Name, err)
	}
	if using {
		return m.hold(ctx, c, sb)
	}
	return nil
}

// PersistKeep is persist for a keep of sb (SANDBOX KEEP, CREATE … TTL, the
// admin API): it records sb kept until its expiry too. Never kept = 0: no
// sandbox is unkept, and another process may have kept it since this one
// last read the registry.
func (m *Registry) PersistKeep(ctx context.Context, c sideconn.Conn, sb *Sandbox) error {
	if err := m.Persist(ctx, c, sb); err != nil {
		return err
	}
	sb.mu.Lock()
	kept, expires := sb.kept, sb.expires
	sb.mu.Unlock()
	if !kept {
		return nil
	}
	if _, err := c.Exec(ctx, "UPDATE "+m.names.Q("sandboxes")+" SET kept = 1, expires_at = "+sideconn.SQLTime(expires)+
		" WHERE id = "+quote.String(sb.ID)); err != nil {
		return fmt.Errorf("record sandbox %s kept: %w", sb.Name, err)
	}
	return nil
}

// clearGrace records in the registry that the unkept sandbox sb is in no
// grace (with the assignments set, ", col = value…", besides), if a
// connection here uses it. Under sb.graceMu, as recordGrace: whichever of
// the two writes second decides from what memory says then, so a renewal
// that saw sb in use does not clear a grace its last connection, closing
// meanwhile, recorded — after a crash of this process the registry would
// say the sandbox ends with the lease, not the grace.
func (m *Registry) clearGrace(ctx context.Context, c sideconn.Conn, sb *Sandbox, set string) error {
	sb.graceMu.Lock()
	defer sb.graceMu.Unlock()
	if !sb.isAttached() {
		return nil // its grace was recorded, or will be
	}
	_, err := c.Exec(ctx, "UPDATE "+m.names.Q("sandboxes")+" SET expires_at = NULL"+set+" WHERE id = "+quote.String(sb.ID)+" AND kept = 0")
	return err
}

// record writes sb's first row under its life lock, or, when another
// process recorded it first, takes that row as sb's (ids of named
// sandboxes derive from the name); then persist records the rest.
func (m *Registry) record(ctx context.Context, c sideconn.Conn, sb *Sandbox) error {
	release, _, err := m.lockLife(ctx, c, sb.Name, false)
	if err != nil {
		return err
	}
	defer release()
	// The schemas' lock keeps the reaper from dropping the schemas of an
	// id a name gives again; an anonymous sandbox's id is random, never
	// reused, and its schemas come only after its row.
	if !sb.anonymous() {
		unlock, _, err := m.lockSchemas(ctx, c, sb.ID, false)
		if err != nil {
			return err
		}
		defer unlock()
	}
	sb.mu.Lock()
	kept, expires, last, changed := sb.kept, sb.expires, sb.lastActive, sb.marks.changed
	sb.mu.Unlock()
	keptN := "0"
	if kept {
		keptN = "1"
	}
	if err := m.clearLeftovers(ctx, c, sb); err != nil {
		return err
	}
	_, err = c.Exec(ctx, "INSERT INTO "+m.names.Q("sandboxes")+" (id, name, owner, kept, created_at, expires_at, last_active, lease_until, proxy_id) VALUES ("+
		strings.Join([]string{quote.String(sb.ID), quote.String(sb.Name), quote.String(sb.Owner), keptN,
			sideconn.SQLTime(sb.Created), sideconn.SQLTime(expires), sideconn.SQLTime(last), sideconn.SQLTime(time.Now().Add(m.cfg.Lease)), quote.String(m.proxyID)}, ", ")+")")
	var me *mysql.MyError
	dup := errors.As(err, &me) && me.Code == wire.ErDupEntry
	if dup {
		err = m.sameSandbox(ctx, c, sb)
	}
	if err != nil {
		return fmt.Errorf("record sandbox %s: %w", sb.Name, err)
	}
	sb.mu.Lock()
	sb.persisted = true
	sb.mu.Unlock()
	if !dup && insertedWhole(kept, expires, changed) {
		return m.holdIfUsed(ctx, c, sb)
	}
	return m.Persist(ctx, c, sb)
}

// insertedWhole says whether the row record inserted says all that
// Persist would write next (so it need not): an unkept sandbox's row has
// no expiry (in no grace) and no change mark is to be written.
func insertedWhole(kept bool, expires, changed time.Time) bool {
	return changed.IsZero() && (kept || expires.IsZero())
}

// holdIfUsed records this process as a holder of sb when a connection
// here uses it or it is in its grace here, as Persist does.
func (m *Registry) holdIfUsed(ctx context.Context, c sideconn.Conn, sb *Sandbox) error {
	sb.mu.Lock()
	using := sb.attached > 0 || !sb.graceUntil.IsZero()
	sb.mu.Unlock()
	if using {
		return m.hold(ctx, c, sb)
	}
	return nil
}

// clearLeftovers removes, before a named sandbox is recorded, what an
// earlier sandbox of the same name (so the same id) left in the registry:
// rows a process wrote for it while another discarded it (see
// stillRecorded), which the new one must not take for its own. Under the
// sandbox's life lock: only when no sandbox row of the id exists.
func (m *Registry) clearLeftovers(ctx context.Context, c sideconn.Conn, sb *Sandbox) error {
	if sb.anonymous() {
		return nil // a random id, never reused
	}
	id := quote.String(sb.ID)
	rows, err := c.Query(ctx, "SELECT COUNT(*) FROM "+m.names.Q("sandboxes")+" WHERE id = "+id)
	if err != nil {
		return fmt.Errorf("read registry: %w", err)
	}
	if len(rows) != 1 || sideconn.Num(rows[0][0]) != 0 {
		return nil
	}
	// Not the readers' sync leases: another process may have taken one on
	// the name before anything was recorded (it is then waited for).
	if err := m.deleteRows(ctx, c, sb.ID, "tables", "captures", "holders", "generations"); err != nil {
		return fmt.Errorf("clear what an earlier sandbox %s left: %w", sb.Name, err)
	}
	return nil
}

// deleteRows deletes sandbox id's rows from the registry tables named, in
// that order.
func (m *Registry) deleteRows(ctx context.Context, c sideconn.Conn, id string, tables ...string) error {
	for _, t := range tables {
		col := "sandbox_id"
		if t == "sandboxes" {
			col = "id"
		}
		if _, err := c.Exec(ctx, "DELETE FROM "+m.names.Q(t)+" WHERE "+col+" = "+quote.String(id)); err != nil {
			return err
		}
	}
	return nil
}

// StillRecorded checks, once the row of e (a fork, or a table found
// missing) is written, that sb's row and e's row are both in the registry:
// a discard through another process may have deleted them meanwhile (this
// process had not noticed it yet). If not, e is undone — its row and its
// fork phys (when forked) — and sb is discarded here too, so that no row
// of a discarded sandbox is left for a later sandbox of its name.
func (m *Registry) StillRecorded(ctx context.Context, c sideconn.Conn, sb *Sandbox, e *sandbox.Entry, forked bool) error {
	id := quote.String(sb.ID)
	for _, q := range []string{
		"SELECT COUNT(*) FROM " + m.names.Q("sandboxes") + " WHERE id = " + id,
		"SELECT COUNT(*) FROM " + m.names.Q("tables") + " WHERE sandbox_id = " + id + " AND db = " + quote.String(e.Logical.DB) +
			" AND tbl = " + quote.String(e.Logical.Name),
	} {
		rows, err := c.Query(ctx, q)
		if err != nil {
			return fmt.Errorf("read registry: %w", err)
		}
		if len(rows) == 1 && sideconn.Num(rows[0][0]) == 1 {
			continue
		}
		wctx := context.WithoutCancel(ctx)
		m.DeleteEntry(wctx, c, sb, e.Logical)
		if forked {
			_, _ = c.Exec(wctx, "DROP TABLE IF EXISTS "+e.Phys.Quoted())
		}
		m.discardedElsewhere(sb)
		return rewrite.Refuse(wire.ErUnknown, "sandbox %q was discarded through another connection; SANDBOX CREATE or ATTACH another", sb.Name)
	}
	return nil
}

// sameSandbox checks that the registry row of sb's id, which another
// process recorded first, is sb: the same name and owner. It takes its
// kept flag and expiry (a KEEP through the other process).
func (m *Registry) sameSandbox(ctx context.Context, c sideconn.Conn, sb *Sandbox) error {
	rows, err := c.Query(ctx, "SELECT name, owner, kept, expires_at FROM "+m.names.Q("sandboxes")+" WHERE id = "+quote.String(sb.ID))
	if err != nil {
		return err
	}
	if len(rows) != 1 || sideconn.Str(rows[0][0]) != sb.Name || sideconn.Str(rows[0][1]) != sb.Owner {
		return rewrite.Refuse(wire.ErUnknown, "sandbox name %q clashes with another sandbox (of this or another user); choose another name", sb.Name)
	}
	if sideconn.Str(rows[0][2]) == "1" {
		sb.KeepAs(sideconn.ParseTime(rows[0][3]))
	}
	return nil
}

// hold records that this process uses sb, until its lease runs out
// (renewed every reap interval): no other process discards it without
// force meanwhile.
func (m *Registry) hold(ctx context.Context, c sideconn.Conn, sb *Sandbox) error {
	if sb.IsRetired() {
		return nil
	}
	_, err := c.Exec(ctx, "REPLACE INTO "+m.names.Q("holders")+" (sandbox_id, proxy_id, lease_until) VALUES ("+
		quote.String(sb.ID)+", "+quote.String(m.proxyID)+", "+sideconn.SQLTime(time.Now().Add(m.cfg.Lease))+")")
	if err != nil {
		return fmt.Errorf("record holder of sandbox %s: %w", sb.Name, err)
	}
	sb.mu.Lock()
	sb.held = !sb.retiredLocked()
	sb.mu.Unlock()
	return nil
}

// release forgets this process as a holder of sb.
func (m *Registry) release(ctx context.Context, c sideconn.Conn, sb *Sandbox) error {
	sb.mu.Lock()
	sb.held = false
	sb.mu.Unlock()
	_, err := c.Exec(ctx, "DELETE FROM "+m.names.Q("holders")+" WHERE sandbox_id = "+quote.String(sb.ID)+
		" AND proxy_id = "+quote.String(m.proxyID))
	if err != nil {
		return fmt.Errorf("forget holder of sandbox %s: %w", sb.Name, err)
	}
	return nil
}

// heldElsewhere reports whether another live proxy process holds sb.
func (m *Registry) heldElsewhere(ctx context.Context, c sideconn.Conn, sb *Sandbox) (bool, error) {
	rows, err := c.Query(ctx, "SELECT COUNT(*) FROM "+m.names.Q("holders")+" WHERE sandbox_id = "+quote.String(sb.ID)+
		" AND proxy_id <> "+quote.String(m.proxyID)+" AND lease_until > "+sideconn.SQLTime(time.Now()))
	if err != nil {
		return false, fmt.Errorf("read registry: %w", err)
	}
	return len(rows) == 1 && sideconn.Str(rows[0][0]) != "0", nil
}

// SaveEntry writes a table row and, for a table in place (not a fork's
// marker), then counts the change in the sandbox's generation.
func (m *Registry) SaveEntry(ctx context.Context, c sideconn.Conn, sb *Sandbox, e *sandbox.Entry) error {
	fill := ""
	if e.Filling {
		fill = "filling"
	}
	_, err := c.Exec(ctx, "REPLACE INTO "+m.names.Q("tables")+" (sandbox_id, db, tbl, kind, phys_db, phys_tbl, row_count, bytes, created_at, fill) VALUES ("+
		strings.Join([]string{quote.String(sb.ID), quote.String(e.Logical.DB), quote.String(e.Logical.Name),
			quote.String(string(e.Kind)), quote.String(e.Phys.DB), quote.String(e.Phys.Name),
			strconv.FormatInt(e.Rows, 10), strconv.FormatInt(e.Bytes, 10), sideconn.SQLTime(e.Created), quote.String(fill)}, ", ")+")")
	if err != nil {
		return fmt.Errorf("record table %s of sandbox %s: %w", e.Logical, sb.Name, err)
	}
	if e.Kind == sandbox.KindForking {
		return nil
	}
	return m.BumpGeneration(ctx, c, sb)
}

// DeleteEntry removes the registry row of t in sb (best effort).
func (m *Registry) DeleteEntry(ctx context.Context, c sideconn.Conn, sb *Sandbox, t rewrite.Table) {
	_, _ = c.Exec(ctx, "DELETE FROM "+m.names.Q("tables")+" WHERE sandbox_id = "+quote.String(sb.ID)+
		" AND db = "+quote.String(t.DB)+" AND tbl = "+quote.String(t.Name))
}

const entryCols = "db, tbl, kind, phys_db, phys_tbl, row_count, bytes, created_at, fill"

// usable is the registry filter for rows that describe a table in place
// (not a fork in progress).
const usable = " AND kind <> 'forking'"

func (m *Registry) rowEntry(r []*string) *sandbox.Entry {
	return &sandbox.Entry{Logical: rewrite.Table{DB: sideconn.Str(r[0]), Name: sideconn.Str(r[1])}, Kind: sandbox.Kind(sideconn.Str(r[2])),
		Phys: rewrite.Table{DB: sideconn.Str(r[3]), Name: sideconn.Str(r[4])}, Rows: sideconn.Num(r[5]), Bytes: sideconn.Num(r[6]),
		Created: sideconn.ParseTime(r[7]), Epoch: m.epoch.Add(1), Filling: len(r) > 8 && sideconn.Str(r[8]) == "filling"}
}

// LoadEntry reads the registry row of t in sb, if any.
func (m *Registry) LoadEntry(ctx context.Context, c sideconn.Conn, sb *Sandbox, t rewrite.Table) (*sandbox.Entry, error) {
	rows, err := c.Query(ctx, "SELECT "+entryCols+" FROM "+m.names.Q("tables")+" WHERE sandbox_id = "+quote.String(sb.ID)+
		" AND db = "+quote.String(t.DB)+" AND tbl = "+quote.String(t.Name))
	if err != nil {
		return nil, fmt.Errorf("read registry: %w", err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	return m.rowEntry(rows[0]), nil
}

const sandboxCols = "id, name, owner, kept, created_at, expires_at, last_active, " + marksCols

// load reads a sandbox by name from the registry. It is not kept in
// memory until remember: a lookup that turns out not to be allowed (another
// user's sandbox) leaves no trace, in memory or in the registry.
func (m *Registry) load(ctx context.Context, name string) (*Sandbox, error) {
	var sb *Sandbox
	err := m.WithConn(ctx, func(c sideconn.Conn) error {
		var err error
		sb, err = m.loadOn(ctx, c, name)
		return err
	})
	return sb, err
}

// loadOn is load on c: the sandbox called name with its tables, or nil.
// An unkept one's expiry is the end of its grace in the process that last
// used it.
func (m *Registry) loadOn(ctx context.Context, c sideconn.Conn, name string) (*Sandbox, error) {
	rows, err := c.Query(ctx, "SELECT "+sandboxCols+" FROM "+m.names.Q("sandboxes")+" WHERE name = "+quote.String(name))
	if err != nil {
		return nil, fmt.Errorf("read registry: %w", err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	r := rows[0]
	sb := &Sandbox{ID: sideconn.Str(r[0]), Name: sideconn.Str(r[1]), Owner: sideconn.Str(r[2]), kept: sideconn.Str(r[3]) == "1", Created: sideconn.ParseTime(r[4]),
		lastActive: sideconn.ParseTime(r[6]), persisted: true, tables: map[string]*sandbox.Entry{}, gone: make(chan struct{}), marks: parseMarks(r[7:10])}
	if sb.kept {
		sb.expires = sideconn.ParseTime(r[5])
	} else {
		sb.graceUntil = sideconn.ParseTime(r[5])
	}
	trows, err := c.Query(ctx, "SELECT "+entryCols+" FROM "+m.names.Q("tables")+" WHERE sandbox_id = "+quote.String(sb.ID)+usable)
	if err != nil {
		return nil, fmt.Errorf("read registry: %w", err)
	}
	for _, tr := range trows {
		e := m.rowEntry(tr)
		sb.tables[m.names.Key(e.Logical)] = e
		sb.bytes += e.Bytes
	}
	if err := m.loadDBs(ctx, c, sb); err != nil {
		return nil, err
	}
	return sb, nil
}

// Remember keeps a sandbox found by lookup in memory, once the caller is
// allowed to use it, and returns the one to use (another caller may have
// loaded it meanwhile). lastActive is now: the reaper must not forget it
// before the caller is done with it.
func (m *Registry) Remember(sb *Sandbox) *Sandbox {
	m.mu.Lock()
	defer m.mu.Unlock()
	if cur := m.byName[sb.Name]; cur != nil && !cur.IsRetired() {
		return cur
	}
	sb.mu.Lock()
	sb.lastActive = time.Now().UTC()
	sb.mu.Unlock()
	m.byID[sb.ID], m.byName[sb.Name] = sb, sb
	return sb
}

// dropSandbox forgets sandbox id in the registry, then drops its schemas.
// Registry rows go first, so a half-done discard never leaves a sandbox
// that can be attached with its tables gone; schemas a failure leaves
// behind are orphans, which the reaper's reconciliation drops.
func (m *Registry) dropSandbox(ctx context.Context, c sideconn.Conn, id string) error {
	if err := m.deleteRows(ctx, c, id, "sandboxes", "tables", "databases", "globals", "captures", "holders", "generations", "readers"); err != nil {
		return fmt.Errorf("forget sandbox %s: %w", id, err)
	}
	schemas, err := m.schemasOf(ctx, c, id)
	if err != nil {
		return err
	}
	// A drop behind a lock (a transaction of a connection that is going, a
	// fill's key build that has not seen its cancel yet) gives up within
	// seconds: the schema is an orphan then, which the reaper drops once
	// the lock is gone, rather than a discard that waits for it (a proxy's
	// stop waited minutes) or fails (the sandbox is gone already).
	restore, err := sideconn.LockWait(ctx, c, reconcileLockWait)
	if err != nil {
		return err
	}
	defer restore()
	if _, err := c.Exec(ctx, "SET SESSION innodb_lock_wait_timeout = "+strconv.Itoa(reconcileLockWait)); err != nil {
		return fmt.Errorf("bound the drop's lock wait: %w", err)
	}
	defer func() { _, _ = c.Exec(context.WithoutCancel(ctx), "SET SESSION innodb_lock_wait_timeout = DEFAULT") }()
	for _, s := range append(schemas, sandbox.InfoSchema(m.cfg.Prefix, id)) {
		_, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+quote.Ident(s))
		var me *mysql.MyError
		switch {
		case errors.As(err, &me) && me.Code == wire.ErLockWaitTimeout:
			m.log.Info("a discarded sandbox's schema is locked: the reaper drops it once the lock is gone",
				zap.String("schema", s), zap.Error(err))
		case err != nil:
			return fmt.Errorf("drop sandbox schema %s: %w", s, err)
		}
	}
	return nil
}

// dropOrphan drops schemas, those of sandbox id, which the registry did
// not know, unless the registry knows id under the schemas' lock: a named
// sandbox's id comes back when the name is used again, and its new
// schemas must not go with the old ones (a busy lock: the next reap).
func (m *Registry) dropOrphan(ctx context.Context, c sideconn.Conn, id string, schemas []string) error {
	release, ok, err := m.lockSchemas(ctx, c, id, true)
	if err != nil || !ok {
		return err
	}
	defer release()
	rows, err := c.Query(ctx, "SELECT COUNT(*) FROM "+m.names.Q("sandboxes")+" WHERE id = "+quote.String(id))
	if err != nil {
		return fmt.Errorf("read registry: %w", err)
	}
	if len(rows) != 1 || sideconn.Str(rows[0][0]) != "0" {
		return nil
	}
	if left, err := m.settleXA(ctx, c, id, 1); err != nil || left > 0 {
		return err // the next reap: a DROP would wait for the transaction's locks
	}
	for _, s := range schemas {
		m.log.Info("dropping orphaned sandbox schema", zap.String("schema", s))
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+quote.Ident(s)); err != nil {
			return fmt.Errorf("drop orphaned schema %s: %w", s, err)
		}
	}
	return nil
}

// schemasOf lists the databases of sandbox id.
func (m *Registry) schemasOf(ctx context.Context, c sideconn.Conn, id string) ([]string, error) {
	rows, err := c.Query(ctx, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE "+
		quote.LikePrefix(sandbox.SchemaPrefix(m.cfg.Prefix, id)))
	if err != nil {
		return nil, fmt.Errorf("list sandbox schemas: %w", err)
	}
	var out []string
	for _, r := range rows {
		out = append(out, sideconn.Str(r[0]))
	}
	return out, nil
}

// isSandboxID reports whether s looks like an id this code makes.
func isSandboxID(s string) bool {
	if len(s) != 8 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// dropInterruptedFork drops the fork phys of db.tbl in sandbox id, whose
// registry row is still the 'forking' marker, and the marker, unless a
// live fork holds its lock (a marker older than any fork may take, stale,
// goes regardless).
func (m *Registry) dropInterruptedFork(ctx context.Context, c sideconn.Conn, id, db, tbl string, phys rewrite.Table, stale bool) error {
	where := " WHERE sandbox_id = " + quote.String(id) + " AND db = " + quote.String(db) +
		" AND tbl = " + quote.String(tbl) + " AND kind = 'forking'"
	if !stale {
		lock := quote.String(m.LockName(id, m.names.Key(rewrite.Table{DB: db, Name: tbl})))
		rows, err := c.Query(ctx, "SELECT GET_LOCK("+lock+", 0)")
		if err != nil {
			return fmt.Errorf("lock interrupted fork %s: %w", phys.Quoted(), err)
		}
		if len(rows) != 1 || rows[0][0] == nil || *rows[0][0] != "1" {
			return nil // a fork is running
		}
		defer func() { _, _ = c.Query(context.WithoutCancel(ctx), "SELECT RELEASE_LOCK("+lock+")") }()
		// Under the lock: the fork may have finished since the marker
		// was read.
		rows, err = c.Query(ctx, "SELECT COUNT(*) FROM "+m.names.Q("tables")+where)
		if err != nil {
			return fmt.Errorf("read registry: %w", err)
		}
		if len(rows) != 1 || sideconn.Str(rows[0][0]) != "1" {
			return nil
		}
	}
	m.log.Info("dropping a fork a crash interrupted", zap.String("table", phys.Quoted()))
	if _, err := c.Exec(ctx, "DROP TABLE IF EXISTS "+phys.Quoted()); err != nil {
		return fmt.Errorf("drop interrupted fork %s: %w", phys.Quoted(), err)
	}
	if _, err := c.Exec(ctx, "DELETE FROM "+m.names.Q("tables")+where); err != nil {
		return fmt.Errorf("forget interrupted fork %s: %w", phys.Quoted(), err)
	}
	return nil
}

// reconcile brings registry and schemas in line at start: sandboxes whose
// lease or TTL ran out are dropped, schemas of sandboxes the registry does
// not know (a crash between creating and recording) are dropped, and so
// are tables in known sandboxes that the registry does not list. Only
// databases named prefix_<8 hex digits>_… are ever dropped: never a
// production table.
func (m *Registry) reconcile(ctx context.Context) error {
	if err := m.expire(ctx); err != nil {
		return err
	}
	return m.WithConn(ctx, func(c sideconn.Conn) error {
		// A drop that waits for a transaction's locks (a prepared XA
		// transaction's, a reset's) gives up and is tried at the next
		// reconciliation, rather than queue one more connection each.
		restore, err := sideconn.LockWait(ctx, c, reconcileLockWait)
		if err != nil {
			return err
		}
		defer restore()
		if err := m.dropOrphanSchemas(ctx, c); err != nil {
			return err
		}
		if err := m.dropInterruptedForks(ctx, c); err != nil {
			return err
		}
		if err := m.dropOrphanTables(ctx, c); err != nil {
			return err
		}
		if err := m.shadowDBs(ctx, c); err != nil {
			return err
		}
		return m.takeCensus(ctx, c)
	})
}

// reconcileLockWait is how many seconds a reconciliation's drop waits for
// a table's lock.
const reconcileLockWait = 5

// dropOrphanSchemas drops the schemas of sandbox ids the registry does
// not know (dropOrphan).
func (m *Registry) dropOrphanSchemas(ctx context.Context, c sideconn.Conn) error {
	rows, err := c.Query(ctx, "SELECT id FROM "+m.names.Q("sandboxes"))
	if err != nil {
		return fmt.Errorf("read registry: %w", err)
	}
	known := map[string]bool{}
	for _, r := range rows {
		known[sideconn.Str(r[0])] = true
	}
	srows, err := c.Query(ctx, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE "+
		quote.LikePrefix(m.cfg.Prefix+"_"))
	if err != nil {
		return fmt.Errorf("list sandbox schemas: %w", err)
	}
	orphans := map[string][]string{}
	var ids []string
	for _, r := range srows {
		s := sideconn.Str(r[0])
		rest := strings.TrimPrefix(s, m.cfg.Prefix+"_")
		id, _, _ := strings.Cut(rest, "_") // prefix_<id>_<db>, or prefix_<id> (its information_schema)
		if !isSandboxID(id) || known[id] {
			continue
		}
		if orphans[id] == nil {
			ids = append(ids, id)
		}
		orphans[id] = append(orphans[id], s)
	}
	for _, id := range ids {
		if err := m.dropOrphan(ctx, c, id, orphans[id]); err != nil {
			var se interface{ ServerError() bool }
			if !errors.As(err, &se) || !se.ServerError() {
				return err
			}
			// A schema the server cannot drop (a file a killed DDL left
			// in its directory: 1010) must not stop the manager; the
			// next reap tries again.
			m.warnOrphan(orphans[id], err)
		}
	}
	return nil
}

// dropInterruptedForks drops forks a crash interrupted after writing their
// marker row. A fork holds its upstream lock (lockName) from before it
// writes the marker until after it replaces it, so a marker whose lock
// this connection can take at once was left by a process that is gone
// (locks die with their connection); one older than any fork may take is
// gone too.
func (m *Registry) dropInterruptedForks(ctx context.Context, c sideconn.Conn) error {
	stale := time.Now().UTC().Add(-m.cfg.ForkTimeout - time.Minute)
	frows, err := c.Query(ctx, "SELECT sandbox_id, db, tbl, phys_db, phys_tbl, created_at < "+sideconn.SQLTime(stale)+" FROM "+
		m.names.Q("tables")+" WHERE kind = 'forking'")
	if err != nil {
		return fmt.Errorf("read registry: %w", err)
	}
	for _, r := range frows {
		if err := m.dropInterruptedFork(ctx, c, sideconn.Str(r[0]), sideconn.Str(r[1]), sideconn.Str(r[2]),
			rewrite.Table{DB: sideconn.Str(r[3]), Name: sideconn.Str(r[4])}, sideconn.Str(r[5]) == "1"); err != nil {
			return err
		}
	}
	return nil
}

// dropOrphanTables drops the tables in sandbox databases that no registry
// row explains: left by a crash (or by hand).
func (m *Registry) dropOrphanTables(ctx context.Context, c sideconn.Conn) error {
	trows, err := c.Query(ctx, "SELECT t.TABLE_SCHEMA, t.TABLE_NAME FROM information_schema.TABLES t LEFT JOIN "+
		m.names.Q("tables")+" r ON r.phys_db = t.TABLE_SCHEMA AND r.phys_tbl = t.TABLE_NAME WHERE t.TABLE_SCHEMA LIKE "+
		quote.LikePrefix(m.cfg.Prefix+"_")+" AND t.TABLE_SCHEMA <> "+quote.String(m.names.Meta())+
		" AND r.sandbox_id IS NULL")
	if err != nil {
		return fmt.Errorf("list sandbox tables: %w", err)
	}
	for _, r := range trows {
		s := sideconn.Str(r[0])
		id, _, tables := strings.Cut(strings.TrimPrefix(s, m.cfg.Prefix+"_"), "_")
		if !isSandboxID(id) || !tables {
			continue // not a sandbox's table database (prefix_<id> holds its information_schema views)
		}
		t := rewrite.Table{DB: s, Name: sideconn.Str(r[1])}
		m.log.Info("dropping orphaned fork", zap.String("table", t.Quoted()))
		if _, err := c.Exec(ctx, "DROP TABLE IF EXISTS "+t.Quoted()); err != nil {
			return fmt.Errorf("drop orphaned fork %s: %w", t.Quoted(), err)
		}
	}
	return nil
}

// expiryRow is a sandbox as the reaper reads it, with its live holders,
// and why it is due to go (reason "" when it is not).
type expiryRow struct {
	id, name             string
	kept                 bool
	expires, last, lease time.Time
	holders              int64
	reason               string
	force                bool
}

func parseExpiryRow(r []*string) expiryRow {
	return expiryRow{id: sideconn.Str(r[0]), name: sideconn.Str(r[1]), kept: sideconn.Str(r[2]) == "1", expires: sideconn.ParseTime(r[3]),
		last: sideconn.ParseTime(r[4]), lease: sideconn.ParseTime(r[5]), holders: sideconn.Num(r[6])}
}

// due says why r must be discarded now ("" when it need not), and whether
// by force (whatever holds it):
//   - kept and past its TTL: expired, forced (its connections get "sandbox
//     was discarded");
//   - kept, unused here, held by no process and idle for idleTTL: expired;
//   - unkept, not in this process's memory, held by no process and its
//     lease run out: grace when the end of a grace is recorded and has
//     passed (the process that started it is gone), expired when none is
//     (the process that used it is gone).
//
// Unkept sandboxes in memory here end by this process's own grace timer or
// at their last connection.
func (r expiryRow) due(now time.Time, idleTTL time.Duration, local *Sandbox) (reason string, force bool) {
	attachedHere := local != nil && local.isAttached()
	switch {
	case r.kept && !r.expires.IsZero() && now.After(r.expires):
		return "expired", true
	case r.kept && idleTTL > 0 && !attachedHere && r.holders == 0 && now.Sub(r.last) > idleTTL:
		return "expired", true
	case r.kept || local != nil || r.holders > 0 || r.lease.IsZero() || !now.After(r.lease):
		return "", false
	case r.expires.IsZero():
		return "expired", false
	case now.After(r.expires):
		return "grace", false
	}
	return "", false
}

// expire drops sandboxes past their TTL, idle limit, grace or lease.
func (m *Registry) expire(ctx context.Context) error {
	var due []expiryRow
	now := time.Now().UTC()
	idle := m.Limits().IdleTTL
	err := m.WithConn(ctx, func(c sideconn.Conn) error {
		rows, err := c.Query(ctx, "SELECT s.id, s.name, s.kept, s.expires_at, s.last_active, s.lease_until, "+
			"(SELECT COUNT(*) FROM "+m.names.Q("holders")+" h WHERE h.sandbox_id = s.id AND h.lease_until > "+sideconn.SQLTime(now)+") FROM "+m.names.Q("sandboxes")+" s")
		if err != nil {
			return fmt.Errorf("read registry: %w", err)
		}
		for _, r := range rows {
			row := parseExpiryRow(r)
			if row.reason, row.force = row.due(now, idle, m.local(row.id)); row.reason != "" {
				due = append(due, row)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, row := range due {
		if err := m.expireOne(ctx, row, now, idle); err != nil {
			return err
		}
	}
	return nil
}

// local is the sandbox of id in this process's memory, if any.
func (m *Registry) local(id string) *Sandbox {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.byID[id]
}

// expireOne discards a sandbox that is due: by its discard when this
// process has it in memory, else under its life lock once it is still due
// (a claim may have come in since it was read). It does not wait for the
// lock: the next reap tries again.
func (m *Registry) expireOne(ctx context.Context, row expiryRow, now time.Time, idle time.Duration) error {
	if local := m.local(row.id); local != nil {
		return m.Discard(ctx, local, row.force, true, row.reason)
	}
	reason := ""
	err := m.WithConn(ctx, func(c sideconn.Conn) error {
		release, ok, err := m.lockLife(ctx, c, row.name, true)
		if err != nil || !ok {
			return err
		}
		defer release()
		cur, err := m.readExpiry(ctx, c, row.id, now)
		if err != nil || cur == nil {
			return err
		}
		var force bool
		if reason, force = cur.due(now, idle, nil); reason == "" {
			return nil
		}
		if !force {
			// Its leases lapsed: gone, unless a holder is alive and only
			// late renewing them (liveness.go).
			alive, err := m.holderAlive(ctx, c, row.id)
			if err != nil || alive {
				reason = ""
				return err
			}
		}
		err = m.clearXA(ctx, c, row.id, row.name, 1)
		if err == nil {
			err = m.dropSandbox(ctx, c, row.id)
		}
		if err != nil {
			reason = "" // not discarded: the next reap tries again
		}
		return err
	})
	if reason != "" {
		m.discarded(row.name, reason)
	}
	return err
}

// readExpiry reads sandbox id as expire does, or nil when it is gone.
func (m *Registry) readExpiry(ctx context.Context, c sideconn.Conn, id string, now time.Time) (*expiryRow, error) {
	rows, err := c.Query(ctx, "SELECT id, name, kept, expires_at, last_active, lease_until FROM "+m.names.Q("sandboxes")+
		" WHERE id = "+quote.String(id))
	if err != nil {
		return nil, fmt.Errorf("read registry: %w", err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	holders, err := c.Query(ctx, "SELECT COUNT(*) FROM "+m.names.Q("holders")+" WHERE sandbox_id = "+quote.String(id)+
		" AND lease_until > "+sideconn.SQLTime(now))
	if err != nil {
		return nil, fmt.Errorf("read registry: %w", err)
	}
	if len(holders) != 1 {
		return nil, fmt.Errorf("read registry: %d rows counting the holders of sandbox %s", len(holders), id)
	}
	row := parseExpiryRow(append(rows[0], holders[0][0]))
	return &row, nil
}

// renew extends the leases of this process's sandboxes and its rows among
// their holders, records activity, merges tables other processes forked,
// notices sandboxes discarded or kept through another process, lets go of
// those nobody here uses, and discards those whose grace is over.
func (m *Registry) renew(ctx context.Context) error {
	live := m.Sandboxes()
	var over []*Sandbox
	err := m.WithConn(ctx, func(c sideconn.Conn) error {
		for _, sb := range live {
			ended, err := m.renewOne(ctx, c, sb)
			if err != nil {
				return err
			}
			if ended {
				over = append(over, sb)
			}
		}
		return nil
	})
	// Discarded once the side connection is back: a discard takes one.
	for _, sb := range over {
		if derr := m.Discard(ctx, sb, false, true, "grace"); derr != nil {
			err = errors.Join(err, derr)
		}
	}
	return err
}

// renewOne is renew for sb; it reports whether sb's grace is over (the
// caller discards it).
func (m *Registry) renewOne(ctx context.Context, c sideconn.Conn, sb *Sandbox) (graceOver bool, err error) {
	now := time.Now().UTC()
	sb.mu.Lock()
	retired, persisted := sb.retiredLocked(), sb.persisted
	if sb.attached > 0 {
		sb.lastActive = now
	}
	sb.mu.Unlock()
	if retired {
		return false, nil
	}
	if !persisted {
		// Another process may have recorded it since (a named sandbox has
		// the same id everywhere): then its forks there are merged here.
		recorded, err := m.recordedElsewhere(ctx, c, sb)
		if err != nil || !recorded {
			return err == nil && sb.graceOver(now), err
		}
	}
	rows, err := c.Query(ctx, "SELECT kept, expires_at FROM "+m.names.Q("sandboxes")+" WHERE id = "+quote.String(sb.ID))
	if err != nil {
		return false, fmt.Errorf("read registry: %w", err)
	}
	if len(rows) == 0 {
		// Discarded (or expired) through another process: its sessions
		// here get "sandbox was discarded" next.
		m.discardedElsewhere(sb)
		return false, nil
	}
	if sideconn.Str(rows[0][0]) == "1" {
		// KEEP may have been run through another process: the registry
		// is the truth for kept and expiry.
		sb.KeepAs(sideconn.ParseTime(rows[0][1]))
	}
	switch {
	case sb.graceOver(now):
		return true, nil
	case sb.idle(now, m.cfg.ReapInterval):
		// Nobody here uses it (kept, or loaded to be looked at): the
		// registry keeps it; memory need not.
		if !sb.letGo() {
			return false, nil
		}
		err := m.release(ctx, c, sb)
		m.Forget(sb)
		return false, err
	}
	if err := m.noticeSharing(ctx, c, sb); err != nil {
		return false, err
	}
	if err := m.Persist(ctx, c, sb); err != nil {
		return false, err
	}
	return false, m.adopt(ctx, c, sb)
}

// noticeSharing marks an anonymous sandbox another live process holds (one
// attached by its name through that process) as shared: from then on its
// statements check the registry for what that process changes.
func (m *Registry) noticeSharing(ctx context.Context, c sideconn.Conn, sb *Sandbox) error {
	if sb.Shareable() {
		return nil
	}
	held, err := m.heldElsewhere(ctx, c, sb)
	if held {
		sb.markShared()
	}
	return err
}

// recordedElsewhere reports whether another proxy process has recorded
// the named sandbox sb, which this one has not: a registry row of its id
// with its name and owner is the same sandbox (as persist takes it), and
// sb is marked recorded here too. Anonymous sandboxes are never shared.
func (m *Registry) recordedElsewhere(ctx context.Context, c sideconn.Conn, sb *Sandbox) (bool, error) {
	if sb.anonymous() {
		return false, nil
	}
	rows, err := c.Query(ctx, "SELECT name, owner FROM "+m.names.Q("sandboxes")+" WHERE id = "+quote.String(sb.ID))
	if err != nil {
		return false, fmt.Errorf("read registry: %w", err)
	}
	if len(rows) != 1 || sideconn.Str(rows[0][0]) != sb.Name || sideconn.Str(rows[0][1]) != sb.Owner {
		return false, nil
	}
	sb.mu.Lock()
	sb.persisted = true
	sb.mu.Unlock()
	return true, nil
}

// adopt merges into sb the tables other proxy processes recorded for it
// (a sandbox attached through several processes), so reads here go to
// forks made there within one reap interval.
func (m *Registry) adopt(ctx context.Context, c sideconn.Conn, sb *Sandbox) error {
	start := m.epoch.Load()
	rows, err := c.Query(ctx, "SELECT "+entryCols+" FROM "+m.names.Q("tables")+" WHERE sandbox_id = "+quote.String(sb.ID)+usable)
	if err != nil {
		return fmt.Errorf("read registry: %w", err)
	}
	for _, r := range rows {
		e := m.rowEntry(r)
		k := m.names.Key(e.Logical)
		if cur, ok := sb.Resolve(k); ok && cur.Kind == e.Kind || !ok && sb.removedAfter(k, start) {
			continue // the same; or read before a reset here took it out
		}
		m.SetEntry(sb, k, e)
	}
	return m.loadDBs(ctx, c, sb)
}

// reaper renews leases and expires sandboxes until Close.
func (m *Registry) reaper() {
	defer close(m.done)
	t := time.NewTicker(m.cfg.ReapInterval)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
		// A reap has a lease's time: past it, the leases it renews lapse.
		ctx, cancel := context.WithTimeout(context.Background(), m.cfg.Lease)
		m.keepAlive(ctx)
		if err := m.renew(ctx); err != nil {
			m.log.Warn("renew sandbox leases", zap.Error(err))
		}
		if err := m.reconcile(ctx); err != nil && !errors.Is(err, context.Canceled) {
			m.log.Warn("expire sandboxes and drop orphaned forks", zap.Error(err))
		}
		cancel()
		m.reaps.Add(1)
	}
}

// registryTables are the registry's tables, by name, with their columns.
var registryTables = []struct{ name, cols string }{
	{"sandboxes", `
  id VARCHAR(16) NOT NULL PRIMARY KEY,
  name VARCHAR(64) NOT NULL UNIQUE,
  owner VARCHAR(128) NOT NULL,
  kept TINYINT NOT NULL DEFAULT 0,
  created_at DATETIME(6) NOT NULL,
  expires_at DATETIME(6) NULL,
  last_active DATETIME(6) NOT NULL,
  lease_until DATETIME(6) NULL,
  proxy_id VARCHAR(32) NOT NULL
`},
	{"tables", `
  sandbox_id VARCHAR(16) NOT NULL,
  db VARCHAR(64) NOT NULL,
  tbl VARCHAR(64) NOT NULL,
  kind VARCHAR(16) NOT NULL,
  phys_db VARCHAR(64) NOT NULL,
  phys_tbl VARCHAR(64) NOT NULL,
  row_count BIGINT NOT NULL DEFAULT 0,
  bytes BIGINT NOT NULL DEFAULT 0,
  created_at DATETIME(6) NOT NULL,
  fill VARCHAR(16) NOT NULL DEFAULT '',
  PRIMARY KEY (sandbox_id, db, tbl)
`},
	{"holders", `
  sandbox_id VARCHAR(16) NOT NULL,
  proxy_id VARCHAR(32) NOT NULL,
  lease_until DATETIME(6) NOT NULL,
  PRIMARY KEY (sandbox_id, proxy_id)
`},
	// The databases a sandbox created or dropped (databases.go).
	{"databases", `
  sandbox_id VARCHAR(16) NOT NULL,
  db VARCHAR(64) NOT NULL,
  name VARCHAR(64) NOT NULL,
  phys_db VARCHAR(64) NOT NULL,
  kind VARCHAR(16) NOT NULL,
  created_at DATETIME(6) NOT NULL,
  PRIMARY KEY (sandbox_id, db)
`},
	// The global variables a sandbox set (globals.go).
	{"globals", `
  sandbox_id VARCHAR(16) NOT NULL,
  name VARCHAR(64) NOT NULL,
  type VARCHAR(32) NOT NULL,
  value LONGTEXT NULL,
  PRIMARY KEY (sandbox_id, name)
`},
	// Counts the changes of each sandbox's tables (sync.go).
	{"generations", `
  sandbox_id VARCHAR(16) NOT NULL PRIMARY KEY,
  generation BIGINT NOT NULL DEFAULT 0
`},
	// Until when each process may read a sandbox's table map without
	// checking its generation (sync.go).
	{"readers", `
  sandbox_id VARCHAR(16) NOT NULL,
  proxy_id VARCHAR(32) NOT NULL,
  valid_until DATETIME(6) NOT NULL,
  PRIMARY KEY (sandbox_id, proxy_id)
`},
	// How each fork's changes are captured (capture.go).
	{"captures", `
  sandbox_id VARCHAR(16) NOT NULL,
  db VARCHAR(64) NOT NULL,
  tbl VARCHAR(64) NOT NULL,
  state VARCHAR(16) NOT NULL,
  reason VARCHAR(1024) NOT NULL DEFAULT '',
  key_kind VARCHAR(80) NOT NULL,
  key_cols TEXT NOT NULL,
  side_db VARCHAR(64) NOT NULL,
  side_tbl VARCHAR(64) NOT NULL,
  trg VARCHAR(64) NOT NULL,
  cascades TEXT NULL,
  base_cols TEXT NULL,
  created_at DATETIME(6) NOT NULL,
  PRIMARY KEY (sandbox_id, db, tbl)
`},
	// Every SANDBOX PROMOTE, with its outcome (promote.go).
	{"promotes", `
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  sandbox_id VARCHAR(16) NOT NULL,
  name VARCHAR(64) NOT NULL,
  owner VARCHAR(128) NOT NULL,
  user VARCHAR(128) NOT NULL,
  via VARCHAR(16) NOT NULL,
  strategy VARCHAR(8) NOT NULL,
  started_at DATETIME(6) NOT NULL,
  finished_at DATETIME(6) NULL,
  outcome VARCHAR(16) NOT NULL,
  tables INT NOT NULL DEFAULT 0,
  inserted BIGINT NOT NULL DEFAULT 0,
  updated BIGINT NOT NULL DEFAULT 0,
  deleted BIGINT NOT NULL DEFAULT 0,
  conflicts BIGINT NOT NULL DEFAULT 0,
  export_sha256 VARCHAR(64) NOT NULL DEFAULT '',
  error TEXT NULL,
  KEY (sandbox_id)
`},
	{"settings", `
  name VARCHAR(64) NOT NULL PRIMARY KEY,
  value VARCHAR(255) NOT NULL
`},
}
