package forking

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/sqlfork/sqlfork-proxy/infoschema"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// The views, stored procedures and functions of a sandbox, in a reset.
// Every one of them names the sandbox's copies of the tables, views and
// routines it uses — its own views and routines read forks only (CREATE
// VIEW and CREATE PROCEDURE fork what they name, so that reads and writes
// through them stay in the sandbox), and copies of production's are
// rewritten to the sandbox's names. So one that names an object a reset
// drops would be left broken (1356, 1146, 1305), and pointing it at
// production's instead would let writes through it reach production: it
// goes with the object, transitively, and a table whose trigger calls a
// routine that goes, goes too (with the tables keys and triggers link to
// it). A whole reset drops every one of them. Their names come from the
// server's catalog of the sandbox's own databases, never from a
// statement; a definition the proxy's account cannot read names
// everything.

// Object kinds of a sandbox (the server's names for them).
const (
	objView      = "VIEW"
	objProcedure = "PROCEDURE"
	objFunction  = "FUNCTION"
	objTrigger   = "TRIGGER"
)

// sbObject is a view, stored routine or trigger in a sandbox's databases.
type sbObject struct {
	// kind is objView, objProcedure, objFunction or objTrigger.
	kind string
	// at is the object's database and name; a trigger's is its table's.
	at rewrite.Table
	// def is its definition (a trigger's body); unreadable: the proxy's
	// account may not read it.
	def        string
	unreadable bool
}

// routine reports a stored procedure or function.
func (o sbObject) routine() bool { return o.kind == objProcedure || o.kind == objFunction }

// label is o as a reset's message names it: kind and logical name.
func (o sbObject) label(logical func(phys string) string) string {
	return strings.ToLower(o.kind) + " " + logical(o.at.DB) + "." + o.at.Name
}

// names reports whether def, a definition in database own, may name
// object t: t's name as a word, and its database too unless it is own's
// (an unqualified name is in the definition's own database). It may
// report more than the definition uses: a reset then takes more, never
// less.
func names(def, own string, t rewrite.Table) bool {
	return namesWord(def, t.Name) && (strings.EqualFold(t.DB, own) || namesWord(def, t.DB))
}

// dependents are the views and routines of objs that go with the objects
// gone (physical names: tables, views and routines a reset drops),
// transitively, by index in objs; and the tables whose triggers name one
// of them or of gone, which must go too.
func dependents(objs []sbObject, gone []rewrite.Table) (taken []int, tables []rewrite.Table) {
	gone = slices.Clone(gone)
	in := make([]bool, len(objs))
	for changed := true; changed; {
		changed = false
		for i, o := range objs {
			if in[i] || o.kind == objTrigger {
				continue
			}
			if o.unreadable || slices.ContainsFunc(gone, func(t rewrite.Table) bool { return names(o.def, o.at.DB, t) }) {
				in[i], changed = true, true
				taken = append(taken, i)
				gone = append(gone, o.at)
			}
		}
	}
	for _, o := range objs {
		if o.kind != objTrigger || slices.Contains(tables, o.at) {
			continue
		}
		if o.unreadable || slices.ContainsFunc(gone, func(t rewrite.Table) bool { return t != o.at && names(o.def, o.at.DB, t) }) {
			tables = append(tables, o.at)
		}
	}
	slices.Sort(taken)
	return taken, tables
}

// sandboxObjects reads the views, stored routines and triggers of sb's
// databases (the proxy's capture triggers aside), as the server has them
// now.
func (m *Forker) sandboxObjects(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox) ([]sbObject, error) {
	own := sandbox.SchemaPrefix(m.cfg.Prefix, sb.ID)
	rows, err := c.Query(ctx, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE LEFT(SCHEMA_NAME, "+
		fmt.Sprint(utf8.RuneCountInString(own))+") = "+quote.String(own))
	if err != nil {
		return nil, fmt.Errorf("list the databases of sandbox %s: %w", sb.Name, err)
	}
	var dbs []string
	for _, r := range rows {
		if db := sideconn.Str(r[0]); strings.HasPrefix(strings.ToLower(db), strings.ToLower(own)) {
			dbs = append(dbs, quote.String(db))
		}
	}
	if len(dbs) == 0 {
		return nil, nil
	}
	in := " IN (" + strings.Join(dbs, ", ") + ")"
	var out []sbObject
	for _, q := range []struct{ what, sql string }{
		{"views", "SELECT 'VIEW', TABLE_SCHEMA, TABLE_NAME, VIEW_DEFINITION, '' FROM information_schema.VIEWS WHERE TABLE_SCHEMA" + in},
		{"routines", "SELECT ROUTINE_TYPE, ROUTINE_SCHEMA, ROUTINE_NAME, ROUTINE_DEFINITION, '' FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA" + in},
		{"triggers", "SELECT 'TRIGGER', EVENT_OBJECT_SCHEMA, EVENT_OBJECT_TABLE, ACTION_STATEMENT, TRIGGER_NAME FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA" + in},
	} {
		rows, err := c.Query(ctx, q.sql)
		if err != nil {
			return nil, fmt.Errorf("read the %s of sandbox %s: %w", q.what, sb.Name, err)
		}
		for _, r := range rows {
			o := sbObject{kind: sideconn.Str(r[0]), at: rewrite.Table{DB: sideconn.Str(r[1]), Name: sideconn.Str(r[2])}, def: sideconn.Str(r[3])}
			if o.kind == objTrigger && strings.HasPrefix(strings.ToLower(sideconn.Str(r[4])), strings.ToLower(m.cfg.Prefix)+"_") {
				continue // a capture trigger: it writes a side table, which goes with its fork
			}
			switch o.kind {
			case objView, objProcedure, objFunction, objTrigger:
			default:
				continue // a package (Oracle mode), which no sandbox statement makes
			}
			o.unreadable = o.def == ""
			out = append(out, o)
		}
	}
	return out, nil
}

// resetClosure adds to set (by key) the tables of held linked to its
// tables (linkedTables) and the views of held that use them, and the
// tables whose triggers call a routine that goes, until nothing more
// joins; it returns the indexes of the objects of objs that go.
func (m *Forker) resetClosure(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox, held, set map[string]*sandbox.Entry, objs []sbObject) ([]int, error) {
	byPhys := map[string]string{} // the key of an entry's physical name → its logical key
	for k, e := range held {
		byPhys[m.names.Key(e.Phys)] = k
	}
	for {
		if err := m.linkedTables(ctx, c, sb, held, set); err != nil {
			return nil, err
		}
		if len(set) == 0 {
			return nil, nil
		}
		gone := make([]rewrite.Table, 0, len(set))
		for _, k := range sortedKeys(set) {
			gone = append(gone, set[k].Phys)
		}
		taken, tables := dependents(objs, gone)
		grew := false
		join := func(t rewrite.Table) {
			if k, ok := byPhys[m.names.Key(t)]; ok && set[k] == nil {
				set[k], grew = held[k], true
			}
		}
		for _, i := range taken {
			if objs[i].kind == objView {
				join(objs[i].at)
			}
		}
		for _, t := range tables {
			join(t)
		}
		if !grew {
			return taken, nil
		}
	}
}

// resetObjects names in res.Objects the views and routines of objs that
// go with the tables (taken, by index; every one, when res.All), copies
// of production's among them, and returns the keys of set that are among
// those views.
func (m *Forker) resetObjects(sb *registry.Sandbox, held, set map[string]*sandbox.Entry, objs []sbObject, taken []int, res *ResetResult) map[string]bool {
	if res.All {
		taken = nil
		for i, o := range objs {
			if o.kind != objTrigger {
				taken = append(taken, i)
			}
		}
	}
	byPhys := map[string]string{}
	logical := map[string]string{} // a sandbox database, lower-case → its logical one
	for k, e := range held {
		byPhys[m.names.Key(e.Phys)] = k
		logical[strings.ToLower(e.Phys.DB)] = e.Logical.DB
	}
	own := sandbox.SchemaPrefix(m.cfg.Prefix, sb.ID)
	name := func(phys string) string {
		if db, ok := logical[strings.ToLower(phys)]; ok {
			return db
		}
		return phys[min(len(own), len(phys)):]
	}
	views := map[string]bool{}
	for _, i := range taken {
		o := objs[i]
		if k, ok := byPhys[m.names.Key(o.at)]; o.kind == objView && ok && set[k] != nil {
			views[k] = true
		}
		res.Objects = append(res.Objects, o.label(name))
	}
	slices.Sort(res.Objects)
	res.Objects = slices.Compact(res.Objects)
	return views
}

// objectDrops are the views and stored routines a reset drops before the
// tables (besides the views among the tables' entries, which go with
// them); all: the whole sandbox, whose marks of production's routines it
// dropped go too (in the table droppedRoutines).
type objectDrops struct {
	views           []rewrite.Table
	routines        []sbObject
	all             bool
	droppedRoutines rewrite.Table
}

// planObjectDrops lists the objects of objs that go (taken, by index;
// every one, with all) that set (by key) does not hold: routines, and
// views without an entry. Every one must be in sb's own databases.
func (m *Forker) planObjectDrops(sb *registry.Sandbox, set map[string]*sandbox.Entry, objs []sbObject, taken []int, all bool) (objectDrops, error) {
	var out objectDrops
	if all {
		taken = nil
		for i, o := range objs {
			if o.kind != objTrigger {
				taken = append(taken, i)
			}
		}
		out.all = true
		out.droppedRoutines = rewrite.Table{DB: sandbox.InfoSchema(m.cfg.Prefix, sb.ID), Name: infoschema.DroppedRoutines}
	}
	entries := map[string]bool{}
	for _, e := range set {
		entries[m.names.Key(e.Phys)] = true
	}
	own := strings.ToLower(sandbox.SchemaPrefix(m.cfg.Prefix, sb.ID))
	for _, i := range taken {
		o := objs[i]
		if !strings.HasPrefix(strings.ToLower(o.at.DB), own) {
			return out, fmt.Errorf("reset sandbox %s: its %s %s is in %s, not in the sandbox's databases; nothing was dropped", sb.Name, strings.ToLower(o.kind), o.at.Name, o.at.DB)
		}
		switch {
		case o.kind == objView && !entries[m.names.Key(o.at)]:
			out.views = append(out.views, o.at)
		case o.routine():
			out.routines = append(out.routines, o)
		}
	}
	return out, nil
}

// dropSandboxObjects drops d's views and routines, and with d.all empties
// the table of the sandbox's marks of production's routines it dropped,
// waiting resetLockWait seconds at most for a statement that uses one;
// sb forgets the routines, so that their names are production's again
// (and the catalog forgets the functions it found). It runs before the
// tables go (resetTables), whose change of the sandbox's generation makes
// other proxy processes forget what they knew of its routines.
func (m *Forker) dropSandboxObjects(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox, d objectDrops) error {
	if len(d.views)+len(d.routines) == 0 && !d.all {
		return nil
	}
	restore, err := sideconn.LockWait(ctx, c, resetLockWait)
	if err != nil {
		return err
	}
	defer restore()
	for _, v := range d.views {
		if _, err := c.Exec(ctx, "DROP VIEW IF EXISTS "+v.Quoted()); err != nil {
			return fmt.Errorf("reset sandbox %s: drop its view %s: %w", sb.Name, v.Name, err)
		}
	}
	keys := make([]string, 0, len(d.routines))
	for _, r := range d.routines {
		if _, err := c.Exec(ctx, "DROP "+r.kind+" IF EXISTS "+r.at.Quoted()); err != nil {
			sb.ForgetRoutines(false, keys...)
			var me *mysql.MyError
			if errors.As(err, &me) && me.Code == wire.ErLockWaitTimeout {
				return rewrite.Refuse(wire.ErLockWaitTimeout, "a statement of another connection runs %s %s of sandbox %q; "+
					"reset it once that statement ends", strings.ToLower(r.kind), r.at.Name, sb.Name)
			}
			return fmt.Errorf("reset sandbox %s: drop its %s %s: %w", sb.Name, strings.ToLower(r.kind), r.at.Name, err)
		}
		keys = append(keys, registry.RoutineKey(r.kind, r.at.DB, r.at.Name))
		if r.kind == objFunction && m.catalog != nil {
			m.catalog.ForgetFunction(r.at.DB, r.at.Name)
		}
	}
	if d.all {
		_, err := c.Exec(ctx, "DELETE FROM "+d.droppedRoutines.Quoted())
		var me *mysql.MyError
		if err != nil && !(errors.As(err, &me) && (me.Code == mysql.ER_NO_SUCH_TABLE || me.Code == mysql.ER_BAD_DB_ERROR)) {
			sb.ForgetRoutines(false, keys...)
			return fmt.Errorf("reset sandbox %s: forget the routines it dropped: %w", sb.Name, err)
		}
	}
	sb.ForgetRoutines(d.all, keys...)
	return nil
}
