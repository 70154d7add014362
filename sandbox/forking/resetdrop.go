package forking

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// resetTables drops what sb holds for the tables of set (by key; all:
// every table of sb) and forgets them. Other processes hear of it first:
// the tables' registry rows go and the sandbox's generation moves, and
// the reset waits out their sync leases, so that their statements read
// production again before a fork goes; then this process's map gives the
// tables back to production (with the gate closed: no statement is in
// flight, see Reset), and the objects are dropped. A drop that fails
// (another connection's transaction holds a table) puts the tables back,
// in the registry too.
func (m *Forker) resetTables(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox, set map[string]*sandbox.Entry, all bool) error {
	drop, err := m.resetDrops(ctx, c, sb, set, all)
	if err != nil {
		return err
	}
	keys := sortedKeys(set)
	var logical []rewrite.Table
	for _, k := range keys {
		logical = append(logical, set[k].Logical)
	}
	if err := m.reg.DeleteEntries(ctx, c, sb, logical); err != nil {
		return err
	}
	taken := sb.TakeEntries(keys, m.reg.NextEpoch())
	err = m.reg.BumpGeneration(ctx, c, sb)
	if err == nil {
		err = m.reg.AwaitReaders(ctx, c, sb)
	}
	if err == nil {
		m.stopFills(ctx, c, sb, keys)
		err = dropObjects(ctx, c, drop)
	}
	if err != nil {
		return m.resetFailed(ctx, c, sb, taken, err)
	}
	return m.caps.Forget(ctx, c, sb.ID, logical, all)
}

// resetFailed puts back, in memory and in the registry, the entries a
// reset took before err stopped it, and returns err as the client gets
// it.
func (m *Forker) resetFailed(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox, taken map[string]*sandbox.Entry, err error) error {
	sb.PutBack(taken)
	for _, k := range sortedKeys(taken) {
		if serr := m.reg.SaveEntry(context.WithoutCancel(ctx), c, sb, taken[k]); serr != nil {
			m.log.Warn("put a table back in the registry after a failed reset", zap.String("sandbox", sb.Name), zap.Error(serr))
		}
	}
	if berr := m.reg.BumpGeneration(context.WithoutCancel(ctx), c, sb); berr != nil {
		m.log.Warn("count a failed reset in the registry", zap.String("sandbox", sb.Name), zap.Error(berr))
	}
	var me *mysql.MyError
	if errors.As(err, &me) && me.Code == wire.ErLockWaitTimeout {
		return rewrite.Refuse(wire.ErLockWaitTimeout, "a transaction of another connection uses tables of sandbox %q; "+
			"reset it once that transaction commits or rolls back", sb.Name)
	}
	return fmt.Errorf("reset sandbox %s: %w", sb.Name, err)
}

// dropList is what a reset drops: tables (forks, the sandbox's tables and
// sequences, capture side tables) and views.
type dropList struct{ tables, views []rewrite.Table }

// resetDrops lists what the tables of set (by key) leave behind in sb's
// databases, each as the server has it now, and the capture side tables of
// their forks (of every fork, when all). Every name comes from the
// sandbox's map and the registry, and must be in the sandbox's own
// databases: anything else is refused, never dropped.
func (m *Forker) resetDrops(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox, set map[string]*sandbox.Entry, all bool) (dropList, error) {
	var out dropList
	own, sideDB := sandbox.SchemaPrefix(m.cfg.Prefix, sb.ID), sandbox.InfoSchema(m.cfg.Prefix, sb.ID)
	types, err := m.objectTypes(ctx, c, set)
	if err != nil {
		return out, err
	}
	for _, k := range sortedKeys(set) {
		e := set[k]
		if !strings.HasPrefix(strings.ToLower(e.Phys.DB), strings.ToLower(own)) {
			return out, fmt.Errorf("reset sandbox %s: %s is recorded in %s, not in the sandbox's databases; nothing was dropped", sb.Name, e.Logical, e.Phys.DB)
		}
		switch types[m.names.Key(e.Phys)] {
		case "":
			// Not there: a table the sandbox dropped, or found missing.
		case "VIEW", "SYSTEM VIEW":
			out.views = append(out.views, e.Phys)
		default:
			out.tables = append(out.tables, e.Phys)
		}
	}
	caps, err := m.caps.Load(ctx, c, sb.ID)
	if err != nil {
		return out, err
	}
	for k, info := range caps {
		if _, in := set[k]; !in && !all || info.Side.Name == "" {
			continue
		}
		if !strings.EqualFold(info.Side.DB, sideDB) {
			return out, fmt.Errorf("reset sandbox %s: a capture's side table is recorded in %s, not in the sandbox's database; nothing was dropped", sb.Name, info.Side.DB)
		}
		out.tables = append(out.tables, info.Side)
	}
	return out, nil
}

// objectTypes are the TABLE_TYPE of the physical tables of set that exist,
// by the key of their physical name.
func (m *Forker) objectTypes(ctx context.Context, c sideconn.Conn, set map[string]*sandbox.Entry) (map[string]string, error) {
	out := map[string]string{}
	seen := map[string]bool{}
	var dbs []string
	for _, e := range set {
		if !seen[e.Phys.DB] {
			seen[e.Phys.DB] = true
			dbs = append(dbs, quote.String(e.Phys.DB))
		}
	}
	if len(dbs) == 0 {
		return out, nil
	}
	rows, err := c.Query(ctx, "SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_SCHEMA IN ("+strings.Join(dbs, ", ")+")")
	if err != nil {
		return nil, fmt.Errorf("read the sandbox's tables: %w", err)
	}
	for _, r := range rows {
		out[m.names.Key(rewrite.Table{DB: sideconn.Str(r[0]), Name: sideconn.Str(r[1])})] = sideconn.Str(r[2])
	}
	return out, nil
}

// dropObjects drops d's views, then its tables in one statement (which
// takes every table's lock before it drops any), without foreign key
// checks — a reset drops whole components — and waiting resetLockWait
// seconds at most for a transaction that uses one.
func dropObjects(ctx context.Context, c sideconn.Conn, d dropList) error {
	if len(d.tables)+len(d.views) == 0 {
		return nil
	}
	rows, err := c.Query(ctx, "SELECT @@session.lock_wait_timeout, @@session.foreign_key_checks")
	if err != nil {
		return err
	}
	if len(rows) != 1 || !digits(sideconn.Str(rows[0][0])) || !digits(sideconn.Str(rows[0][1])) {
		return fmt.Errorf("read the side connection's lock_wait_timeout and foreign_key_checks: %d rows", len(rows))
	}
	if _, err := c.Exec(ctx, fmt.Sprintf("SET SESSION lock_wait_timeout = %d, foreign_key_checks = 0", resetLockWait)); err != nil {
		return err
	}
	defer func() {
		_, _ = c.Exec(context.WithoutCancel(ctx), "SET SESSION lock_wait_timeout = "+sideconn.Str(rows[0][0])+
			", foreign_key_checks = "+sideconn.Str(rows[0][1]))
	}()
	for _, s := range []struct {
		stmt string
		ts   []rewrite.Table
	}{{"DROP VIEW IF EXISTS ", d.views}, {"DROP TABLE IF EXISTS ", d.tables}} {
		if len(s.ts) == 0 {
			continue
		}
		names := make([]string, len(s.ts))
		for i, t := range s.ts {
			names[i] = t.Quoted()
		}
		if _, err := c.Exec(ctx, s.stmt+strings.Join(names, ", ")); err != nil {
			return err
		}
	}
	return nil
}

// digits reports a non-empty string of decimal digits.
func digits(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }
