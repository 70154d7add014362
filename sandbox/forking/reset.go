package forking

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// SANDBOX RESET gives a sandbox's tables back to production as it is now:
// what the sandbox holds for them goes — forks, schema-only forks, tables
// and views it created (with the triggers it made on them), its marks of
// tables dropped or missing, copies of production's views, the change
// captures (side tables, triggers, registry rows) — so that its statements
// read production's tables and the next write forks afresh. The sandbox
// stays: its name, id, connections, keep and expiry.
//
// A reset of some tables takes with them every table the sandbox holds
// that its foreign keys or triggers link to them, transitively: a fork's
// keys and copied triggers name the sandbox's copies of the tables they
// reach, which must not go while it stays (they are forked as one
// component, too). The sandbox's views and stored routines that use a
// table that goes go with it, and a whole reset drops every one of them
// (resetobjects.go): they go first, before the tables. What goes is read
// from the sandbox's map and its
// schemas, never from the statement's text; nothing outside the sandbox's
// own databases is dropped.
//
// Order: the sandbox's fork lock (no fork of it in this process meanwhile),
// its promote lock (no PROMOTE reads the forks meanwhile) and each table's
// fork lock (no fork of them in another process) are taken; the entries
// leave the map, then the tables are dropped — in one statement, which
// waits a few seconds at most for a transaction of another connection
// using them: the reset is then refused and the entries put back —, then
// the registry rows go and the generation is bumped, so that other proxy
// processes reload the sandbox's map at their next check.

// resetLockWait bounds, in seconds, the wait of a reset's DROP for a
// transaction that uses a table it drops.
const resetLockWait = 5

// ResetResult is what a reset did.
type ResetResult struct {
	// Reset are the tables whose sandbox state went, sorted; Linked are
	// those of them not asked for, reset with a table that was because
	// keys or triggers link them to it.
	Reset, Linked []rewrite.Table
	// Production are tables asked for that the sandbox did not hold: they
	// were production's already.
	Production []rewrite.Table
	// Objects are the sandbox's views, procedures and functions that went
	// with the tables, as "view db.v", "procedure db.p", "function db.f",
	// sorted: those that used a table reset (every one, with All).
	Objects []string
	// All: every table of the sandbox was asked for.
	All bool
}

// Message is the OK message of the reset of the sandbox called name.
func (r ResetResult) Message(name string) string {
	msg := "sandbox " + name + " reset"
	objects := ""
	if len(r.Objects) > 0 {
		objects = "; its views and stored routines went too: " + strings.Join(r.Objects, ", ")
	}
	switch {
	case r.All && len(r.Reset) == 0 && len(r.Objects) == 0:
		return msg + ": it held no tables; it reads production as it is now"
	case r.All && len(r.Reset) == 0:
		return msg + ": it held no tables; its views and stored routines went: " + strings.Join(r.Objects, ", ") + "; it reads production as it is now"
	case r.All:
		return msg + ": " + plural(len(r.Reset), "table") + " (" + tableList(r.Reset) + ") read production as it is now; the next write forks afresh" + objects
	}
	var asked []rewrite.Table
	for _, t := range r.Reset {
		if !slices.Contains(r.Linked, t) {
			asked = append(asked, t)
		}
	}
	var parts []string
	if len(asked) > 0 {
		parts = append(parts, tableList(asked)+" read production as it is now; the next write forks afresh")
	}
	if len(r.Linked) > 0 {
		parts = append(parts, "reset with them, as foreign keys or triggers link them: "+tableList(r.Linked))
	}
	if len(r.Objects) > 0 {
		parts = append(parts, "reset with them, as they use those tables: "+strings.Join(r.Objects, ", "))
	}
	if len(r.Production) > 0 {
		parts = append(parts, "not in the sandbox (production's already): "+tableList(r.Production))
	}
	return msg + ": " + strings.Join(parts, "; ")
}

// plural is n things.
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// tableList is ts as db.t, comma-separated.
func tableList(ts []rewrite.Table) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.DB + "." + t.Name
	}
	return strings.Join(names, ", ")
}

// Reset gives the tables only (every table, when none) of sb back to
// production as it is now (see above). A table asked for that neither the
// sandbox nor production has is refused (1146), as SANDBOX DIFF FOR
// refuses it.
func (m *Forker) Reset(ctx context.Context, sb *registry.Sandbox, only []rewrite.Table) (ResetResult, error) {
	if sb.Shareable() {
		// Tables other processes forked since this one last looked.
		if err := m.reg.SyncTables(ctx, sb); err != nil {
			return ResetResult{}, err
		}
	}
	defer sb.LockForks()()
	if sb.IsDiscarded() {
		return ResetResult{}, rewrite.Refuse(wire.ErUnknown, "sandbox %q was discarded; SANDBOX CREATE or ATTACH another", sb.Name)
	}
	res := ResetResult{All: len(only) == 0}
	started := time.Now().UTC()
	err := m.reg.WithConn(ctx, func(c sideconn.Conn) error {
		release, err := m.lockPromote(ctx, c, sb)
		if err != nil {
			return err
		}
		defer release()
		if err := m.reg.PreparedXA(ctx, c, sb); err != nil {
			return err // its locks would hold the drops without end
		}
		plan, err := m.resetSet(ctx, c, sb, only, &res)
		if err != nil || len(plan.set) == 0 && !res.All {
			return err
		}
		for k, e := range plan.set {
			if shown(e) && !plan.views[k] {
				res.Reset = append(res.Reset, e.Logical)
			}
		}
		sortTables(res.Reset)
		unlock, err := m.lockResetForks(ctx, c, sb, plan.set)
		if err != nil {
			return err
		}
		defer unlock()
		// This process's statements in the sandbox finish first, and
		// those that come meanwhile wait and are planned again after.
		open, ok := sb.Drain(ctx, resetLockWait*time.Second)
		if !ok {
			return rewrite.Refuse(wire.ErLockWaitTimeout, "statements of sandbox %q are still running after %ds; "+
				"reset it once they are done", sb.Name, resetLockWait)
		}
		defer open()
		if err := m.dropSandboxObjects(ctx, c, sb, plan.objects); err != nil {
			return err
		}
		if err := m.resetTables(ctx, c, sb, plan.set, res.All); err != nil {
			return err
		}
		if res.All {
			if err := m.resetDatabases(ctx, c, sb); err != nil {
				return err
			}
		}
		return m.reg.RecordReset(ctx, c, sb, started)
	})
	if err != nil {
		return ResetResult{}, err
	}
	m.log.Info("sandbox reset", zap.String("sandbox", sb.Name), zap.Bool("all", res.All), zap.Stringer("tables", tablesText(res.Reset)))
	return res, nil
}

// tablesText logs tables as tableList writes them.
type tablesText []rewrite.Table

func (t tablesText) String() string { return tableList(t) }

// lockPromote takes sb's promote lock on c, waiting as PROMOTE waits for
// it, and returns what releases it.
func (m *Forker) lockPromote(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox) (release func(), err error) {
	lock := quote.String(m.reg.LockName(sb.ID, registry.PromoteLockKey))
	rows, err := c.Query(ctx, "SELECT GET_LOCK("+lock+", 10)")
	if err != nil {
		return nil, fmt.Errorf("lock sandbox %s against a promote: %w", sb.Name, err)
	}
	if len(rows) != 1 || sideconn.Str(rows[0][0]) != "1" {
		return nil, rewrite.Refuse(wire.ErLockWaitTimeout, "a PROMOTE of sandbox %q is running; reset it when the promote is done", sb.Name)
	}
	return func() { _, _ = c.Query(context.WithoutCancel(ctx), "SELECT RELEASE_LOCK("+lock+")") }, nil
}

// lockResetForks takes the upstream fork lock of each table of set (by
// key), so that no process forks one of them while they go, and returns
// what releases them.
func (m *Forker) lockResetForks(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox, set map[string]*sandbox.Entry) (func(), error) {
	var held []func()
	unlock := func() {
		for _, r := range held {
			r()
		}
	}
	keys := sortedKeys(set)
	for _, k := range keys {
		r, err := m.lockFork(ctx, c, sb, set[k].Logical, k)
		if err != nil {
			unlock()
			return nil, err
		}
		held = append(held, r)
	}
	return unlock, nil
}

// sortedKeys are set's keys in order.
func sortedKeys(set map[string]*sandbox.Entry) []string {
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// resetPlan is what a reset takes.
type resetPlan struct {
	// set are the entries of the tables (and views) reset, by key; views
	// those of them that are views res.Objects names, not tables.
	set   map[string]*sandbox.Entry
	views map[string]bool
	// objects are the routines and views without an entry that go.
	objects objectDrops
}

// resetSet is what a reset of only (every table, when empty) takes: the
// entries of the tables asked for that the sandbox holds, of those its
// keys and triggers link to them, and of the views that use them, and the
// routines that do (resetobjects.go). Tables asked for that it does not
// hold go to res.Production, or are refused when production has none
// either; res.Linked gets the linked tables and res.Objects the views and
// routines that go with them.
func (m *Forker) resetSet(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox, only []rewrite.Table, res *ResetResult) (resetPlan, error) {
	var plan resetPlan
	held := map[string]*sandbox.Entry{}
	for _, e := range sb.Entries() {
		held[m.names.Key(e.Logical)] = e
	}
	objs, err := m.sandboxObjects(ctx, c, sb)
	if err != nil {
		return plan, err
	}
	if len(only) == 0 {
		plan.set = held
		plan.views = m.resetObjects(sb, held, held, objs, nil, res)
		plan.objects, err = m.planObjectDrops(sb, held, objs, nil, true)
		return plan, err
	}
	set, asked := map[string]*sandbox.Entry{}, map[string]bool{}
	for _, t := range only {
		t = m.names.Norm(t)
		k := m.names.Key(t)
		if e, ok := held[k]; ok {
			set[k], asked[k] = e, true
			continue
		}
		switch _, _, err := forker.Size(ctx, c, t); {
		case errors.Is(err, forker.ErrNoSource):
			return plan, rewrite.Refuse(wire.ErNoSuchTable, "Table '%s.%s' doesn't exist", t.DB, t.Name)
		case err != nil:
			return plan, err
		}
		if !slices.Contains(res.Production, t) {
			res.Production = append(res.Production, t)
		}
	}
	taken, err := m.resetClosure(ctx, c, sb, held, set, objs)
	if err != nil {
		return plan, err
	}
	plan.set = set
	plan.views = m.resetObjects(sb, held, set, objs, taken, res)
	for k, e := range set {
		if !asked[k] && !plan.views[k] && shown(e) {
			res.Linked = append(res.Linked, e.Logical)
		}
	}
	sortTables(res.Linked)
	plan.objects, err = m.planObjectDrops(sb, set, objs, taken, false)
	return plan, err
}

// shown reports an entry a reset names: a table the sandbox forked, made
// or dropped (not a copy of a production view, nor a mark of a table
// found missing).
func shown(e *sandbox.Entry) bool {
	switch e.Kind {
	case sandbox.KindFork, sandbox.KindSchema, sandbox.KindCreated, sandbox.KindDropped:
		return true
	}
	return false
}

// sortTables sorts ts by database and name.
func sortTables(ts []rewrite.Table) {
	slices.SortFunc(ts, func(a, b rewrite.Table) int { return cmp.Or(cmp.Compare(a.DB, b.DB), cmp.Compare(a.Name, b.Name)) })
}

// resetDatabases gives the databases sb made or dropped back to production
// as it is now: the schemas of those it made go, and its marks of all.
func (m *Forker) resetDatabases(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox) error {
	for _, d := range sb.OwnDBs() {
		if d.Kind != sandbox.DBDropped && m.names.IsProxySchema(d.Phys) {
			if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+quote.Ident(d.Phys)); err != nil {
				return fmt.Errorf("drop the sandbox's database %s: %w", quote.Ident(d.Name), err)
			}
		}
		gone := d
		gone.Kind = ""
		if err := m.reg.SaveDB(ctx, c, sb, m.names.Norm(rewrite.Table{DB: d.Name}).DB, gone); err != nil {
			return err
		}
	}
	return nil
}
