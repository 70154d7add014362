package session

import (
	"context"
	"time"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// DiffSummaryColumns are SANDBOX DIFF SUMMARY's columns.
var DiffSummaryColumns = []string{"table_name", "change", "rows_inserted", "rows_updated", "rows_deleted", "conflicts", "key_kind", "method", "note"}

// DiffColumns are SANDBOX DIFF's columns (one row per changed row or DDL
// statement).
var DiffColumns = []string{"table_name", "op", "key", "before", "after", "production"}

// ExportColumns are SANDBOX EXPORT's.
var ExportColumns = []string{"statement"}

// sandboxNamed is the sandbox a DIFF, EXPORT or PROMOTE names for user:
// the session's own when name is "" (cur), else one user owns (any, for
// admins).
func (m *Manager) sandboxNamed(ctx context.Context, name, user string, cur *Sandbox) (*Sandbox, error) {
	if name == "" || cur != nil && cur.Name == name && !cur.IsRetired() {
		if cur == nil {
			return nil, rewrite.Refuse(wire.ErUnknown, "not in a sandbox; name one (SANDBOX LIST shows yours) or SANDBOX ATTACH first")
		}
		return cur, nil
	}
	sb, err := m.reg.Lookup(ctx, name)
	if err != nil {
		return nil, err
	}
	if sb == nil || sb.Owner != user && !m.reg.IsAdmin(user) {
		return nil, rewrite.Refuse(wire.ErUnknown, "no sandbox named %q; SANDBOX LIST shows yours", name)
	}
	return sb, nil
}

// withSnapshot runs f on a side connection in one consistent snapshot,
// read in UTC (the connection's time zone is set back after).
func (m *Manager) withSnapshot(ctx context.Context, sb *Sandbox, export bool, f func(d *differ) error) error {
	if sb.Shareable() {
		// Forks another process made since this one last looked.
		if err := m.reg.SyncTables(ctx, sb); err != nil {
			return err
		}
	}
	return m.reg.WithConn(ctx, func(c SideConn) error {
		rows, err := c.Query(ctx, "SELECT @@session.time_zone")
		if err != nil {
			return err
		}
		tz := "SYSTEM"
		if len(rows) == 1 {
			tz = sideconn.Str(rows[0][0])
		}
		if _, err := c.Exec(ctx, "SET time_zone = '+00:00'"); err != nil {
			return err
		}
		defer func() { _, _ = c.Exec(context.WithoutCancel(ctx), "SET time_zone = "+quote.String(tz)) }()
		if _, err := c.Exec(ctx, "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY"); err != nil {
			return err
		}
		defer func() { _, _ = c.Exec(context.WithoutCancel(ctx), "COMMIT") }()
		return f(&differ{m: m, c: c, sb: sb, export: export, budget: maxDiffRows})
	})
}

// Diff is the diff of sb: one row per table (summary), or per changed row
// and DDL statement; only restricts it to one table.
func (m *Manager) Diff(ctx context.Context, sb *Sandbox, summary bool, only *rewrite.Table) (*Reply, error) {
	r := &Reply{Columns: DiffColumns}
	kind := "detail"
	if summary {
		r.Columns, kind = DiffSummaryColumns, "summary"
	}
	defer func(t0 time.Time) { m.observer().Diffed(kind, time.Since(t0)) }(time.Now())
	err := m.withSnapshot(ctx, sb, false, func(d *differ) error {
		tables, err := d.diffTables(ctx, only)
		if err != nil {
			return err
		}
		for _, dt := range tables {
			td, err := d.diffOne(ctx, dt, !summary)
			if err != nil {
				return err
			}
			name := sp(dt.logical.DB + "." + dt.logical.Name)
			if summary {
				if dt.change == "forked" && td.ins+td.upd+td.del == 0 {
					continue
				}
				r.Rows = append(r.Rows, []*string{name, sp(dt.change), itoa(td.ins), itoa(td.upd), itoa(td.del), itoa(td.conflicts),
					sp(dt.keyKind), sp(dt.method), nilIfEmpty(dt.note)})
				continue
			}
			if dt.change != "forked" {
				ddl, err := d.ddl(ctx, dt)
				if err != nil {
					return err
				}
				if dt.change == "created" && dt.prodOK {
					ddl = "DROP TABLE IF EXISTS " + dt.logical.Quoted() + ";\n" + ddl // made again in the sandbox
				}
				if ddl != "" {
					r.Rows = append(r.Rows, []*string{name, sp("ddl"), nil, nil, sp(ddl), nil})
				}
			}
			for _, dr := range td.rows {
				op := dr.op
				if dr.conflictOp != "" {
					op = dr.conflictOp
				}
				for range max(dr.count, 1) {
					r.Rows = append(r.Rows, []*string{name, sp(op), dr.key, dr.before, dr.after, dr.production})
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Export is sb's export: one statement per row.
func (m *Manager) Export(ctx context.Context, sb *Sandbox) (*Reply, error) {
	r := &Reply{Columns: ExportColumns}
	defer func(t0 time.Time) { m.observer().Diffed("export", time.Since(t0)) }(time.Now())
	err := m.withSnapshot(ctx, sb, true, func(d *differ) error {
		tables, err := d.diffTables(ctx, nil)
		if err != nil {
			return err
		}
		stmts, err := d.exportStatements(ctx, tables)
		if err != nil {
			return err
		}
		for _, s := range stmts {
			r.Rows = append(r.Rows, []*string{sp(s)})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

func nilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// diffCmd is SANDBOX DIFF.
func (s *Session) diffCmd(ctx context.Context, c Command) (*Reply, error) {
	sb, err := s.m.sandboxNamed(ctx, c.Name, s.user, s.sb)
	if err != nil {
		return nil, err
	}
	if err := s.mayReadSandbox(ctx, sb); err != nil {
		return nil, err
	}
	var only *rewrite.Table
	if c.ForTable != "" {
		db := c.ForDB
		if db == "" {
			db = s.db
		}
		if db == "" {
			return nil, errNoDatabase()
		}
		only = &rewrite.Table{DB: db, Name: c.ForTable}
	}
	return s.m.Diff(ctx, sb, c.Summary, only)
}

// exportCmd is SANDBOX EXPORT.
func (s *Session) exportCmd(ctx context.Context, c Command) (*Reply, error) {
	sb, err := s.m.sandboxNamed(ctx, c.Name, s.user, s.sb)
	if err != nil {
		return nil, err
	}
	if err := s.mayReadSandbox(ctx, sb); err != nil {
		return nil, err
	}
	return s.m.Export(ctx, sb)
}

// promoteCmd is SANDBOX PROMOTE.
func (s *Session) promoteCmd(ctx context.Context, c Command) (*Reply, error) {
	sb, err := s.m.sandboxNamed(ctx, c.Name, s.user, s.sb)
	if err != nil {
		return nil, err
	}
	if err := s.mayReadSandbox(ctx, sb); err != nil {
		return nil, err
	}
	return s.m.Promote(ctx, sb, s.user, c.Strategy, "sql", s.promoteCheck())
}

// tableName is db.t as DIFF shows it.
func tableName(t rewrite.Table) string { return t.DB + "." + t.Name }
