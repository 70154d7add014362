package registry

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
)

// A sandbox's own databases: those it created (a name production does not
// have, or one of production's it dropped first) and production's it
// dropped. Every name in such a database is the sandbox's: its tables,
// views and routines live in the database's physical schema, which exists
// exactly while the database does in the sandbox. The registry keeps them
// in its databases table, one row per logical database (key: the name as
// the server compares it).

// DBState is what a sandbox holds of one of its own databases.
type DBState struct {
	// Name is the logical database as the sandbox wrote it; Phys its
	// physical schema.
	Name, Phys string
	Kind       sandbox.DBKind
	Created    time.Time
}

// OwnDB is the sandbox's own state of logical database key k (a
// database's name as the server compares it), if any.
func (sb *Sandbox) OwnDB(k string) (DBState, bool) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	d, ok := sb.dbs[k]
	return d, ok
}

// OwnDBs are the sandbox's own databases, by name.
func (sb *Sandbox) OwnDBs() []DBState {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	out := make([]DBState, 0, len(sb.dbs))
	for _, d := range sb.dbs {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// saves is the count of this process's saves of sb's databases and
// globals.
func (sb *Sandbox) saves() uint64 {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return sb.ownSaves
}

// setDBs replaces the sandbox's own databases with dbs, as the registry
// listed them, unless this process saved some since saves (then memory is
// newer than what was read).
func (sb *Sandbox) setDBs(dbs map[string]DBState, saves uint64) bool {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.ownSaves != saves {
		return false
	}
	sb.dbs = dbs
	sb.version++
	return true
}

// SaveDB records logical database k of sb as d, or forgets it when d's kind
// is "" (a database the sandbox created and dropped again), and counts the
// change in the sandbox's generation.
func (m *Registry) SaveDB(ctx context.Context, c sideconn.Conn, sb *Sandbox, k string, d DBState) error {
	if err := m.Persist(ctx, c, sb); err != nil {
		return err
	}
	q := "DELETE FROM " + m.names.Q("databases") + " WHERE sandbox_id = " + quote.String(sb.ID) + " AND db = " + quote.String(k)
	if d.Kind != "" {
		q = "REPLACE INTO " + m.names.Q("databases") + " (sandbox_id, db, name, phys_db, kind, created_at) VALUES (" +
			quote.String(sb.ID) + ", " + quote.String(k) + ", " + quote.String(d.Name) + ", " + quote.String(d.Phys) + ", " +
			quote.String(string(d.Kind)) + ", " + sideconn.SQLTime(d.Created) + ")"
	}
	if _, err := c.Exec(ctx, q); err != nil {
		return fmt.Errorf("record database %s of sandbox %s: %w", quote.Ident(d.Name), sb.Name, err)
	}
	sb.mu.Lock()
	if sb.dbs == nil {
		sb.dbs = map[string]DBState{}
	}
	if d.Kind == "" {
		delete(sb.dbs, k)
	} else {
		sb.dbs[k] = d
	}
	sb.version++
	sb.ownSaves++
	sb.mu.Unlock()
	return m.BumpGeneration(ctx, c, sb)
}

// loadDBs reads sb's own databases from the registry, and its global
// values (globals.go).
func (m *Registry) loadDBs(ctx context.Context, c sideconn.Conn, sb *Sandbox) error {
	saves := sb.saves()
	rows, err := c.Query(ctx, "SELECT db, name, phys_db, kind, created_at FROM "+m.names.Q("databases")+
		" WHERE sandbox_id = "+quote.String(sb.ID))
	if err != nil {
		return fmt.Errorf("read registry: %w", err)
	}
	dbs := make(map[string]DBState, len(rows))
	for _, r := range rows {
		dbs[sideconn.Str(r[0])] = DBState{Name: sideconn.Str(r[1]), Phys: sideconn.Str(r[2]), Kind: sandbox.DBKind(sideconn.Str(r[3])),
			Created: sideconn.ParseTime(r[4])}
	}
	if !sb.setDBs(dbs, saves) {
		return nil // saved here since the read: memory is newer
	}
	return m.loadGlobals(ctx, c, sb, saves)
}

// ForgetDBTables forgets every table entry and capture of sb in logical
// database key k (a database the sandbox dropped: its schema went with
// them), in the registry and in memory.
func (m *Registry) ForgetDBTables(ctx context.Context, c sideconn.Conn, sb *Sandbox, k string) error {
	for _, t := range []string{"tables", "captures"} {
		if _, err := c.Exec(ctx, "DELETE FROM "+m.names.Q(t)+" WHERE sandbox_id = "+quote.String(sb.ID)+" AND db = "+quote.String(k)); err != nil {
			return fmt.Errorf("forget the tables of database %s of sandbox %s: %w", quote.Ident(k), sb.Name, err)
		}
	}
	var keys []string
	for e := range sb.Each() {
		if m.names.Norm(e.Logical).DB == k {
			keys = append(keys, m.names.Key(e.Logical))
		}
	}
	sb.TakeEntries(keys, m.NextEpoch())
	return m.BumpGeneration(ctx, c, sb)
}

// shadowDBs marks, at each reconciliation, the databases a sandbox made
// whose name production has since (a DBA made one, or another sandbox's
// promote did) as made again over production's (recreated): a name in
// them the proxy leaves as written would otherwise reach production's, and
// DIFF, EXPORT and PROMOTE must drop production's before making the
// sandbox's.
func (m *Registry) shadowDBs(ctx context.Context, c sideconn.Conn) error {
	rows, err := c.Query(ctx, "SELECT sandbox_id, db, name FROM "+m.names.Q("databases")+" WHERE kind = "+quote.String(string(sandbox.DBCreated)))
	if err != nil {
		return fmt.Errorf("read registry: %w", err)
	}
	for _, r := range rows {
		id, k := sideconn.Str(r[0]), sideconn.Str(r[1])
		has, err := c.Query(ctx, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = "+quote.String(sideconn.Str(r[2])))
		if err != nil {
			return fmt.Errorf("look up database %s: %w", quote.Ident(sideconn.Str(r[2])), err)
		}
		if len(has) == 0 {
			continue
		}
		if _, err := c.Exec(ctx, "UPDATE "+m.names.Q("databases")+" SET kind = "+quote.String(string(sandbox.DBRecreated))+
			" WHERE sandbox_id = "+quote.String(id)+" AND db = "+quote.String(k)+" AND kind = "+quote.String(string(sandbox.DBCreated))); err != nil {
			return fmt.Errorf("record a database production made: %w", err)
		}
		if err := m.bumpGeneration(ctx, c, id, id); err != nil {
			return err
		}
		m.mu.Lock()
		sb := m.byID[id]
		m.mu.Unlock()
		if sb != nil {
			sb.mu.Lock()
			if d, ok := sb.dbs[k]; ok && d.Kind == sandbox.DBCreated {
				d.Kind = sandbox.DBRecreated
				sb.dbs[k] = d
				sb.version++
			}
			sb.mu.Unlock()
		}
	}
	return nil
}
