package review

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/sqlfork/sqlfork-proxy/catalog"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/reply"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/capture"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"go.uber.org/zap"
)

// withSnapshot runs f on a side connection in one consistent snapshot,
// read in UTC (the connection's time zone is set back after).
func (m *Reviewer) withSnapshot(ctx context.Context, sb *registry.Sandbox, export bool, f func(d *differ) error) error {
	if sb.Shareable() {
		// Forks another process made since this one last looked.
		if err := m.reg.SyncTables(ctx, sb); err != nil {
			return err
		}
	}
	if err := m.settle(ctx, sb); err != nil {
		return err
	}
	return m.reg.WithConn(ctx, func(c sideconn.Conn) error {
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
func (m *Reviewer) Diff(ctx context.Context, sb *registry.Sandbox, summary bool, only *rewrite.Table) (*reply.Reply, error) {
	return m.DiffRows(ctx, sb, summary, only, 0)
}

// DiffRows is Diff with at most rowsPerTable changed rows of each table
// (the first by key; 0: all of them), for a page that shows a sample and
// counts the rest from the summary: the server sends no more than that.
func (m *Reviewer) DiffRows(ctx context.Context, sb *registry.Sandbox, summary bool, only *rewrite.Table, rowsPerTable int) (*reply.Reply, error) {
	r := &reply.Reply{Columns: DiffColumns}
	kind := "detail"
	if summary {
		r.Columns, kind = DiffSummaryColumns, "summary"
	}
	defer func(t0 time.Time) { m.observer().Diffed(kind, time.Since(t0)) }(time.Now())
	err := m.withSnapshot(ctx, sb, false, func(d *differ) error {
		d.perTable = rowsPerTable
		tables, err := d.diffTables(ctx, only)
		if err != nil {
			return err
		}
		if len(tables) == 0 && only != nil {
			if err := d.exists(ctx, *only); err != nil {
				return err
			}
		}
		if only == nil {
			dbs, err := d.databases(ctx)
			if err != nil {
				return err
			}
			r.Rows = append(r.Rows, databaseRows(dbs, summary)...)
		}
		for _, dt := range tables {
			td, err := d.diffOne(ctx, dt, !summary)
			if err != nil {
				return err
			}
			name := reply.Str(dt.logical.DB + "." + dt.logical.Name)
			if summary {
				if dt.change == "forked" && td.ins+td.upd+td.del == 0 {
					continue
				}
				r.Rows = append(r.Rows, []*string{name, reply.Str(dt.change), reply.Int(td.ins), reply.Int(td.upd), reply.Int(td.del), reply.Int(td.conflicts),
					reply.Str(dt.keyKind), reply.Str(dt.method), reply.OrNull(dt.note)})
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
					r.Rows = append(r.Rows, []*string{name, reply.Str("ddl"), nil, nil, reply.Str(ddl), nil})
				}
			}
			for _, dr := range td.rows {
				op := dr.op
				if dr.conflictOp != "" {
					op = dr.conflictOp
				}
				for range max(dr.count, 1) {
					r.Rows = append(r.Rows, []*string{name, reply.Str(op), dr.key, dr.before, dr.after, dr.production})
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
func (m *Reviewer) Export(ctx context.Context, sb *registry.Sandbox) (*reply.Reply, error) {
	r := &reply.Reply{Columns: ExportColumns}
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
			r.Rows = append(r.Rows, []*string{reply.Str(s)})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// tableName is db.t as DIFF shows it.
func tableName(t rewrite.Table) string { return t.DB + "." + t.Name }

// Reviewer reads a sandbox's changes (DIFF, EXPORT) and applies them to
// production (PROMOTE).
type Reviewer struct {
	cfg         Config
	log         *zap.Logger
	names       sandbox.Names
	engine      *rewrite.Engine
	server      rewrite.Server
	reg         *registry.Registry
	caps        *capture.Tracker
	triggers    catalog.Triggers
	obs         atomic.Pointer[Observer]
	promoteDial sideconn.Dialer
	// changed is told the production tables and views a committed
	// promote changed (SetChanged), for caches of production's objects.
	changed func(rewrite.Table)
	// settled waits until the sandbox's lazy forks are whole (SetSettled):
	// a review reads and a promote rebases whole tables.
	settled func(context.Context, *registry.Sandbox) error
}

// Config is what the reviewer needs of the settings.
type Config struct {
	// Prefix starts every database the proxy makes.
	Prefix string
}

// Observer is told about diffs and promotes, for metrics.
type Observer interface {
	// Diffed reports a diff read, by kind (summary, detail, export,
	// promote), and how long it took.
	Diffed(kind string, took time.Duration)
	// Promoted reports a SANDBOX PROMOTE, by strategy and outcome
	// (committed, refused, failed, partial), with the conflicts it met.
	Promoted(strategy, outcome string, conflicts int)
}

// New is the reviewer of the sandboxes in reg: names as names says, SQL
// read by engine as server reads it, captures from caps, production's
// triggers from triggers. PROMOTE is refused until SetPromoteDialer.
func New(cfg Config, log *zap.Logger, names sandbox.Names, engine *rewrite.Engine, server rewrite.Server,
	reg *registry.Registry, caps *capture.Tracker, triggers catalog.Triggers) *Reviewer {
	r := &Reviewer{cfg: cfg, log: log, names: names, engine: engine, server: server, reg: reg, caps: caps,
		triggers: triggers}
	r.SetObserver(nop{})
	return r
}

// SetPromoteDialer installs what opens connections with the promote
// account; call it before the first PROMOTE.
func (m *Reviewer) SetPromoteDialer(d sideconn.Dialer) { m.promoteDial = d }

// SetChanged installs what is told each production table or view a
// committed promote changed (the catalog forgets what it cached of it);
// call it before the first promote.
func (m *Reviewer) SetChanged(f func(rewrite.Table)) { m.changed = f }

// SetSettled installs what waits for a sandbox's lazy forks to be whole
// before a DIFF, EXPORT or PROMOTE of it.
func (m *Reviewer) SetSettled(f func(context.Context, *registry.Sandbox) error) { m.settled = f }

// settle waits for sb's lazy forks (SetSettled), if anything does.
func (m *Reviewer) settle(ctx context.Context, sb *registry.Sandbox) error {
	if m.settled == nil {
		return nil
	}
	return m.settled(ctx, sb)
}

// observer is the installed observer.
func (m *Reviewer) observer() Observer { return *m.obs.Load() }

// SetObserver installs o.
func (m *Reviewer) SetObserver(o Observer) { m.obs.Store(&o) }

// nop is the Observer until SetObserver.
type nop struct{}

func (nop) Diffed(string, time.Duration) {}
func (nop) Promoted(string, string, int) {}
