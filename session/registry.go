package session

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// The registry lives in the upstream, in MetaSchema(prefix):
//
//	sandboxes: one row per sandbox that has forked a table or was kept
//	tables:    one row per table a sandbox forked, created or dropped
//
// Unkept sandboxes hold a lease their process renews every ReapInterval;
// one whose lease ran out belongs to a process that is gone, and is
// dropped by whichever process reaps next.
const timeLayout = "2006-01-02 15:04:05.000000"

func sqlTime(t time.Time) string {
	if t.IsZero() {
		return "NULL"
	}
	return "'" + t.UTC().Format(timeLayout) + "'"
}

func parseTime(v *string) time.Time {
	if v == nil {
		return time.Time{}
	}
	t, _ := time.Parse(timeLayout, *v)
	return t
}

func str(v *string) string {
	if v == nil {
		return ""
	}
	return *v
}

func num(v *string) int64 {
	n, _ := strconv.ParseInt(str(v), 10, 64)
	return n
}

func (m *Manager) q(name string) string { return rewrite.QuoteIdent(m.meta) + "." + name }

// initRegistry creates the metadata schema and tables.
func (m *Manager) initRegistry(ctx context.Context, c SideConn) error {
	stmts := []string{
		"CREATE DATABASE IF NOT EXISTS " + rewrite.QuoteIdent(m.meta),
		"CREATE TABLE IF NOT EXISTS " + m.q("sandboxes") + ` (
  id VARCHAR(16) NOT NULL PRIMARY KEY,
  name VARCHAR(64) NOT NULL UNIQUE,
  owner VARCHAR(128) NOT NULL,
  kept TINYINT NOT NULL DEFAULT 0,
  created_at DATETIME(6) NOT NULL,
  expires_at DATETIME(6) NULL,
  last_active DATETIME(6) NOT NULL,
  lease_until DATETIME(6) NULL,
  proxy_id VARCHAR(32) NOT NULL
) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
		"CREATE TABLE IF NOT EXISTS " + m.q("tables") + ` (
  sandbox_id VARCHAR(16) NOT NULL,
  db VARCHAR(64) NOT NULL,
  tbl VARCHAR(64) NOT NULL,
  kind VARCHAR(16) NOT NULL,
  phys_db VARCHAR(64) NOT NULL,
  phys_tbl VARCHAR(64) NOT NULL,
  row_count BIGINT NOT NULL DEFAULT 0,
  bytes BIGINT NOT NULL DEFAULT 0,
  created_at DATETIME(6) NOT NULL,
  PRIMARY KEY (sandbox_id, db, tbl)
) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
		"CREATE TABLE IF NOT EXISTS " + m.q("holders") + ` (
  sandbox_id VARCHAR(16) NOT NULL,
  proxy_id VARCHAR(32) NOT NULL,
  lease_until DATETIME(6) NOT NULL,
  PRIMARY KEY (sandbox_id, proxy_id)
) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
		"CREATE TABLE IF NOT EXISTS " + m.q("settings") + ` (
  name VARCHAR(64) NOT NULL PRIMARY KEY,
  value VARCHAR(255) NOT NULL
) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
		// The first process to start makes the secret of the upstream
		// lock names (see lockName); the others read it.
		"INSERT IGNORE INTO " + m.q("settings") + " (name, value) VALUES ('lock_secret', " +
			rewrite.QuoteString(randomID(32)) + ")",
	}
	for _, s := range stmts {
		if _, err := c.Exec(ctx, s); err != nil {
			return fmt.Errorf("create sandbox registry in %s (the upstream account needs all privileges on `%s%%`): %q: %w",
				m.meta, strings.ReplaceAll(m.cfg.Prefix, "_", `\_`), s, err)
		}
	}
	rows, err := c.Query(ctx, "SELECT value FROM "+m.q("settings")+" WHERE name = 'lock_secret'")
	if err != nil {
		return fmt.Errorf("read the registry's lock secret: %w", err)
	}
	if len(rows) != 1 || str(rows[0][0]) == "" {
		return fmt.Errorf("the registry's lock secret is missing from %s", m.q("settings"))
	}
	m.lockSecret = str(rows[0][0])
	return nil
}

// persist writes sb's row (once; later calls update kept/expiry/lease).
func (m *Manager) persist(ctx context.Context, c SideConn, sb *Sandbox) error {
	sb.mu.Lock()
	kept, expires, last, done := sb.kept, sb.expires, sb.lastActive, sb.persisted
	sb.mu.Unlock()
	lease := time.Now().Add(m.cfg.Lease)
	keptN := "0"
	if kept {
		keptN = "1"
	}
	var err error
	if !done {
		_, err = c.Exec(ctx, "INSERT INTO "+m.q("sandboxes")+" (id, name, owner, kept, created_at, expires_at, last_active, lease_until, proxy_id) VALUES ("+
			strings.Join([]string{rewrite.QuoteString(sb.ID), rewrite.QuoteString(sb.Name), rewrite.QuoteString(sb.Owner), keptN,
				sqlTime(sb.Created), sqlTime(expires), sqlTime(last), sqlTime(lease), rewrite.QuoteString(m.proxyID)}, ", ")+")")
		var me *mysql.MyError
		if errors.As(err, &me) && me.Code == wire.ErDupEntry {
			// Another process recorded it first: the same sandbox if the
			// name matches (ids of named sandboxes derive from the name).
			rows, qerr := c.Query(ctx, "SELECT name, owner FROM "+m.q("sandboxes")+" WHERE id = "+rewrite.QuoteString(sb.ID))
			if qerr != nil {
				return fmt.Errorf("record sandbox %s: %w", sb.Name, qerr)
			}
			if len(rows) != 1 || str(rows[0][0]) != sb.Name || str(rows[0][1]) != sb.Owner {
				return refusal(wire.ErUnknown, "HY000", "sandbox name %q clashes with another sandbox (of this or another user); choose another name", sb.Name)
			}
			sb.mu.Lock()
			sb.persisted = true
			sb.mu.Unlock()
			return m.persist(ctx, c, sb)
		}
	} else {
		_, err = c.Exec(ctx, "UPDATE "+m.q("sandboxes")+" SET kept = "+keptN+", expires_at = "+sqlTime(expires)+
			", last_active = "+sqlTime(last)+", lease_until = "+sqlTime(lease)+" WHERE id = "+rewrite.QuoteString(sb.ID))
	}
	if err != nil {
		return fmt.Errorf("record sandbox %s: %w", sb.Name, err)
	}
	sb.mu.Lock()
	sb.persisted = true
	attached := sb.attached > 0
	sb.mu.Unlock()
	if attached {
		return m.hold(ctx, c, sb)
	}
	return nil
}

// hold records that this process has connections in sb, until its lease
// runs out (renewed every reap interval).
func (m *Manager) hold(ctx context.Context, c SideConn, sb *Sandbox) error {
	_, err := c.Exec(ctx, "REPLACE INTO "+m.q("holders")+" (sandbox_id, proxy_id, lease_until) VALUES ("+
		rewrite.QuoteString(sb.ID)+", "+rewrite.QuoteString(m.proxyID)+", "+sqlTime(time.Now().Add(m.cfg.Lease))+")")
	if err != nil {
		return fmt.Errorf("record holder of sandbox %s: %w", sb.Name, err)
	}
	return nil
}

// release forgets this process as a holder of sb.
func (m *Manager) release(ctx context.Context, c SideConn, sb *Sandbox) error {
	_, err := c.Exec(ctx, "DELETE FROM "+m.q("holders")+" WHERE sandbox_id = "+rewrite.QuoteString(sb.ID)+
		" AND proxy_id = "+rewrite.QuoteString(m.proxyID))
	return err
}

// heldElsewhere reports whether another live proxy process holds sb.
func (m *Manager) heldElsewhere(ctx context.Context, c SideConn, sb *Sandbox) (bool, error) {
	rows, err := c.Query(ctx, "SELECT COUNT(*) FROM "+m.q("holders")+" WHERE sandbox_id = "+rewrite.QuoteString(sb.ID)+
		" AND proxy_id <> "+rewrite.QuoteString(m.proxyID)+" AND lease_until > "+sqlTime(time.Now()))
	if err != nil {
		return false, fmt.Errorf("read registry: %w", err)
	}
	return len(rows) == 1 && str(rows[0][0]) != "0", nil
}

// saveEntry writes a table row.
func (m *Manager) saveEntry(ctx context.Context, c SideConn, sb *Sandbox, e *entry) error {
	_, err := c.Exec(ctx, "REPLACE INTO "+m.q("tables")+" (sandbox_id, db, tbl, kind, phys_db, phys_tbl, row_count, bytes, created_at) VALUES ("+
		strings.Join([]string{rewrite.QuoteString(sb.ID), rewrite.QuoteString(e.logical.DB), rewrite.QuoteString(e.logical.Name),
			rewrite.QuoteString(e.kind), rewrite.QuoteString(e.phys.DB), rewrite.QuoteString(e.phys.Name),
			strconv.FormatInt(e.rows, 10), strconv.FormatInt(e.bytes, 10), sqlTime(e.created)}, ", ")+")")
	if err != nil {
		return fmt.Errorf("record table %s of sandbox %s: %w", e.logical, sb.Name, err)
	}
	return nil
}

// deleteEntry removes the registry row of t in sb (best effort).
func (m *Manager) deleteEntry(ctx context.Context, c SideConn, sb *Sandbox, t rewrite.Table) {
	_, _ = c.Exec(ctx, "DELETE FROM "+m.q("tables")+" WHERE sandbox_id = "+rewrite.QuoteString(sb.ID)+
		" AND db = "+rewrite.QuoteString(t.DB)+" AND tbl = "+rewrite.QuoteString(t.Name))
}

const entryCols = "db, tbl, kind, phys_db, phys_tbl, row_count, bytes, created_at"

// usable is the registry filter for rows that describe a table in place
// (not a fork in progress).
const usable = " AND kind <> 'forking'"

func (m *Manager) rowEntry(r []*string) *entry {
	return &entry{logical: rewrite.Table{DB: str(r[0]), Name: str(r[1])}, kind: str(r[2]),
		phys: rewrite.Table{DB: str(r[3]), Name: str(r[4])}, rows: num(r[5]), bytes: num(r[6]),
		created: parseTime(r[7]), epoch: m.epoch.Add(1)}
}

// loadEntry reads the registry row of t in sb, if any.
func (m *Manager) loadEntry(ctx context.Context, c SideConn, sb *Sandbox, t rewrite.Table) (*entry, error) {
	rows, err := c.Query(ctx, "SELECT "+entryCols+" FROM "+m.q("tables")+" WHERE sandbox_id = "+rewrite.QuoteString(sb.ID)+
		" AND db = "+rewrite.QuoteString(t.DB)+" AND tbl = "+rewrite.QuoteString(t.Name))
	if err != nil {
		return nil, fmt.Errorf("read registry: %w", err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	return m.rowEntry(rows[0]), nil
}

const sandboxCols = "id, name, owner, kept, created_at, expires_at, last_active"

// load reads a sandbox by name from the registry. It is not kept in
// memory until remember: a lookup that turns out not to be allowed (another
// user's sandbox) leaves no trace, in memory or in the registry.
func (m *Manager) load(ctx context.Context, name string) (*Sandbox, error) {
	var sb *Sandbox
	err := m.withConn(ctx, func(c SideConn) error {
		rows, err := c.Query(ctx, "SELECT "+sandboxCols+" FROM "+m.q("sandboxes")+" WHERE name = "+rewrite.QuoteString(name))
		if err != nil {
			return fmt.Errorf("read registry: %w", err)
		}
		if len(rows) == 0 {
			return nil
		}
		r := rows[0]
		sb = &Sandbox{ID: str(r[0]), Name: str(r[1]), Owner: str(r[2]), kept: str(r[3]) == "1", Created: parseTime(r[4]),
			expires: parseTime(r[5]), lastActive: parseTime(r[6]), persisted: true, tables: map[string]*entry{}}
		trows, err := c.Query(ctx, "SELECT "+entryCols+" FROM "+m.q("tables")+" WHERE sandbox_id = "+rewrite.QuoteString(sb.ID)+usable)
		if err != nil {
			return fmt.Errorf("read registry: %w", err)
		}
		for _, tr := range trows {
			e := m.rowEntry(tr)
			sb.tables[m.key(e.logical)] = e
			sb.bytes += e.bytes
		}
		return nil
	})
	if err != nil || sb == nil {
		return nil, err
	}
	return sb, nil
}

// remember keeps a sandbox found by lookup in memory, once the caller is
// allowed to use it, and returns the one to use (another caller may have
// loaded it meanwhile). lastActive is now: the reaper must not forget it
// before the caller attaches.
func (m *Manager) remember(sb *Sandbox) *Sandbox {
	m.mu.Lock()
	defer m.mu.Unlock()
	if cur := m.byName[sb.Name]; cur != nil {
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
func (m *Manager) dropSandbox(ctx context.Context, c SideConn, id string) error {
	for _, t := range []string{"sandboxes", "tables", "holders"} {
		col := "sandbox_id"
		if t == "sandboxes" {
			col = "id"
		}
		if _, err := c.Exec(ctx, "DELETE FROM "+m.q(t)+" WHERE "+col+" = "+rewrite.QuoteString(id)); err != nil {
			return fmt.Errorf("forget sandbox %s: %w", id, err)
		}
	}
	schemas, err := m.schemasOf(ctx, c, id)
	if err != nil {
		return err
	}
	for _, s := range append(schemas, InfoSchema(m.cfg.Prefix, id)) {
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+rewrite.QuoteIdent(s)); err != nil {
			return fmt.Errorf("drop sandbox schema %s: %w", s, err)
		}
	}
	return nil
}

// likeEscape escapes s for a LIKE pattern.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// schemasOf lists the databases of sandbox id.
func (m *Manager) schemasOf(ctx context.Context, c SideConn, id string) ([]string, error) {
	rows, err := c.Query(ctx, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE "+
		rewrite.QuoteString(likeEscape(sandboxSchemaPrefix(m.cfg.Prefix, id))+"%"))
	if err != nil {
		return nil, fmt.Errorf("list sandbox schemas: %w", err)
	}
	var out []string
	for _, r := range rows {
		out = append(out, str(r[0]))
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
func (m *Manager) dropInterruptedFork(ctx context.Context, c SideConn, id, db, tbl string, phys rewrite.Table, stale bool) error {
	where := " WHERE sandbox_id = " + rewrite.QuoteString(id) + " AND db = " + rewrite.QuoteString(db) +
		" AND tbl = " + rewrite.QuoteString(tbl) + " AND kind = 'forking'"
	if !stale {
		lock := rewrite.QuoteString(m.lockName(id, m.key(rewrite.Table{DB: db, Name: tbl})))
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
		rows, err = c.Query(ctx, "SELECT COUNT(*) FROM "+m.q("tables")+where)
		if err != nil {
			return fmt.Errorf("read registry: %w", err)
		}
		if len(rows) != 1 || str(rows[0][0]) != "1" {
			return nil
		}
	}
	m.log.Info("dropping a fork a crash interrupted", zap.String("table", phys.Quoted()))
	if _, err := c.Exec(ctx, "DROP TABLE IF EXISTS "+phys.Quoted()); err != nil {
		return fmt.Errorf("drop interrupted fork %s: %w", phys.Quoted(), err)
	}
	if _, err := c.Exec(ctx, "DELETE FROM "+m.q("tables")+where); err != nil {
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
func (m *Manager) reconcile(ctx context.Context) error {
	if err := m.expire(ctx); err != nil {
		return err
	}
	return m.withConn(ctx, func(c SideConn) error {
		rows, err := c.Query(ctx, "SELECT id FROM "+m.q("sandboxes"))
		if err != nil {
			return fmt.Errorf("read registry: %w", err)
		}
		known := map[string]bool{}
		for _, r := range rows {
			known[str(r[0])] = true
		}
		srows, err := c.Query(ctx, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE "+
			rewrite.QuoteString(likeEscape(m.cfg.Prefix+"_")+"%"))
		if err != nil {
			return fmt.Errorf("list sandbox schemas: %w", err)
		}
		for _, r := range srows {
			s := str(r[0])
			rest := strings.TrimPrefix(s, m.cfg.Prefix+"_")
			id, _, _ := strings.Cut(rest, "_") // prefix_<id>_<db>, or prefix_<id> (its information_schema)
			if !isSandboxID(id) || known[id] {
				continue
			}
			m.log.Info("dropping orphaned sandbox schema", zap.String("schema", s))
			if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+rewrite.QuoteIdent(s)); err != nil {
				return fmt.Errorf("drop orphaned schema %s: %w", s, err)
			}
		}
		// Forks a crash interrupted after writing their marker row. A fork
		// holds its upstream lock (lockName) from before it writes the
		// marker until after it replaces it, so a marker whose lock this
		// connection can take at once was left by a process that is gone
		// (locks die with their connection); one older than any fork may
		// take is gone too.
		stale := time.Now().UTC().Add(-m.cfg.ForkTimeout - time.Minute)
		frows, err := c.Query(ctx, "SELECT sandbox_id, db, tbl, phys_db, phys_tbl, created_at < "+sqlTime(stale)+" FROM "+
			m.q("tables")+" WHERE kind = 'forking'")
		if err != nil {
			return fmt.Errorf("read registry: %w", err)
		}
		for _, r := range frows {
			if err := m.dropInterruptedFork(ctx, c, str(r[0]), str(r[1]), str(r[2]),
				rewrite.Table{DB: str(r[3]), Name: str(r[4])}, str(r[5]) == "1"); err != nil {
				return err
			}
		}
		// Tables no registry row explains: left by a crash (or by hand).
		trows, err := c.Query(ctx, "SELECT t.TABLE_SCHEMA, t.TABLE_NAME FROM information_schema.TABLES t LEFT JOIN "+
			m.q("tables")+" r ON r.phys_db = t.TABLE_SCHEMA AND r.phys_tbl = t.TABLE_NAME WHERE t.TABLE_SCHEMA LIKE "+
			rewrite.QuoteString(likeEscape(m.cfg.Prefix+"_")+"%")+" AND t.TABLE_SCHEMA <> "+rewrite.QuoteString(m.meta)+
			" AND r.sandbox_id IS NULL")
		if err != nil {
			return fmt.Errorf("list sandbox tables: %w", err)
		}
		for _, r := range trows {
			s := str(r[0])
			id, _, tables := strings.Cut(strings.TrimPrefix(s, m.cfg.Prefix+"_"), "_")
			if !isSandboxID(id) || !tables {
				continue // not a sandbox's table database (prefix_<id> holds its information_schema views)
			}
			t := rewrite.Table{DB: s, Name: str(r[1])}
			m.log.Info("dropping orphaned fork", zap.String("table", t.Quoted()))
			if _, err := c.Exec(ctx, "DROP TABLE IF EXISTS "+t.Quoted()); err != nil {
				return fmt.Errorf("drop orphaned fork %s: %w", t.Quoted(), err)
			}
		}
		return nil
	})
}

// expire drops sandboxes past their TTL, idle limit or lease.
func (m *Manager) expire(ctx context.Context) error {
	var victims []string
	now := time.Now().UTC()
	idle := m.limits().IdleTTL
	err := m.withConn(ctx, func(c SideConn) error {
		rows, err := c.Query(ctx, "SELECT s.id, s.name, s.kept, s.expires_at, s.last_active, s.lease_until, "+
			"(SELECT COUNT(*) FROM "+m.q("holders")+" h WHERE h.sandbox_id = s.id AND h.lease_until > "+sqlTime(now)+") FROM "+m.q("sandboxes")+" s")
		if err != nil {
			return fmt.Errorf("read registry: %w", err)
		}
		for _, r := range rows {
			id, kept := str(r[0]), str(r[2]) == "1"
			expires, last, lease, holders := parseTime(r[3]), parseTime(r[4]), parseTime(r[5]), num(r[6])
			m.mu.Lock()
			local := m.byID[id]
			m.mu.Unlock()
			attachedHere := false
			if local != nil {
				local.mu.Lock()
				attachedHere = local.attached > 0
				local.mu.Unlock()
			}
			switch {
			case !expires.IsZero() && now.After(expires):
			case kept && idle > 0 && !attachedHere && holders == 0 && now.Sub(last) > idle:
			case !kept && local == nil && holders == 0 && !lease.IsZero() && now.After(lease):
			default:
				continue
			}
			victims = append(victims, id)
			m.log.Info("sandbox expired", zap.String("sandbox", str(r[1])), zap.Bool("kept", kept))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, id := range victims {
		m.mu.Lock()
		local := m.byID[id]
		m.mu.Unlock()
		if local != nil {
			if err := m.discard(ctx, local, true, true, "expired"); err != nil {
				return err
			}
			continue
		}
		if err := m.withConn(ctx, func(c SideConn) error { return m.dropSandbox(ctx, c, id) }); err != nil {
			return err
		}
		m.observer().Discarded("expired")
	}
	return nil
}

// renew extends the leases of this process's unkept sandboxes and records
// activity of attached kept ones.
func (m *Manager) renew(ctx context.Context) error {
	m.mu.Lock()
	var live []*Sandbox
	for _, sb := range m.byID {
		live = append(live, sb)
	}
	m.mu.Unlock()
	return m.withConn(ctx, func(c SideConn) error {
		for _, sb := range live {
			sb.mu.Lock()
			persisted, attached := sb.persisted, sb.attached > 0
			if attached {
				sb.lastActive = time.Now().UTC()
			}
			sb.mu.Unlock()
			if !persisted {
				// Another process may have recorded it since (a named
				// sandbox has the same id everywhere): then its forks
				// there are merged here too.
				if recorded, err := m.recordedElsewhere(ctx, c, sb); err != nil {
					return err
				} else if !recorded {
					continue
				}
			}
			rows, err := c.Query(ctx, "SELECT kept, expires_at FROM "+m.q("sandboxes")+" WHERE id = "+rewrite.QuoteString(sb.ID))
			if err != nil {
				return fmt.Errorf("read registry: %w", err)
			}
			if len(rows) == 0 {
				// Discarded (or expired) through another process: its
				// sessions here get "sandbox was discarded" next.
				sb.mu.Lock()
				sb.discarded = true
				sb.version++
				sb.mu.Unlock()
				m.forget(sb)
				m.log.Info("sandbox discarded elsewhere", zap.String("sandbox", sb.Name))
				continue
			}
			// KEEP may have been run through another process: the
			// registry is the truth for kept and expiry.
			sb.mu.Lock()
			sb.kept, sb.expires = str(rows[0][0]) == "1", parseTime(rows[0][1])
			idle := sb.attached == 0 && time.Since(sb.lastActive) > m.cfg.ReapInterval
			sb.mu.Unlock()
			if idle {
				// Nobody here uses it (kept, or loaded to be looked at):
				// the registry keeps it; memory need not.
				if err := m.release(ctx, c, sb); err != nil {
					return err
				}
				m.forget(sb)
				continue
			}
			if err := m.persist(ctx, c, sb); err != nil {
				return err
			}
			if err := m.adopt(ctx, c, sb); err != nil {
				return err
			}
		}
		return nil
	})
}

// recordedElsewhere reports whether another proxy process has recorded
// the named sandbox sb, which this one has not: a registry row of its id
// with its name and owner is the same sandbox (as persist takes it), and
// sb is marked recorded here too. Anonymous sandboxes are never shared.
func (m *Manager) recordedElsewhere(ctx context.Context, c SideConn, sb *Sandbox) (bool, error) {
	if sb.Name == "sb-"+sb.ID {
		return false, nil
	}
	rows, err := c.Query(ctx, "SELECT name, owner FROM "+m.q("sandboxes")+" WHERE id = "+rewrite.QuoteString(sb.ID))
	if err != nil {
		return false, fmt.Errorf("read registry: %w", err)
	}
	if len(rows) != 1 || str(rows[0][0]) != sb.Name || str(rows[0][1]) != sb.Owner {
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
func (m *Manager) adopt(ctx context.Context, c SideConn, sb *Sandbox) error {
	rows, err := c.Query(ctx, "SELECT "+entryCols+" FROM "+m.q("tables")+" WHERE sandbox_id = "+rewrite.QuoteString(sb.ID)+usable)
	if err != nil {
		return fmt.Errorf("read registry: %w", err)
	}
	for _, r := range rows {
		e := m.rowEntry(r)
		k := m.key(e.logical)
		if cur, ok := sb.resolve(k); ok && cur.kind == e.kind {
			continue
		}
		m.setEntry(sb, k, e)
	}
	return nil
}

// reaper renews leases and expires sandboxes until Close.
func (m *Manager) reaper() {
	defer close(m.done)
	t := time.NewTicker(m.cfg.ReapInterval)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), m.cfg.ReapInterval*3)
		if err := m.renew(ctx); err != nil {
			m.log.Warn("renew sandbox leases", zap.Error(err))
		}
		if err := m.reconcile(ctx); err != nil && !errors.Is(err, context.Canceled) {
			m.log.Warn("expire sandboxes and drop orphaned forks", zap.Error(err))
		}
		cancel()
	}
}
