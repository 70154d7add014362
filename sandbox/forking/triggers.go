package forking

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/catalog"
	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/infoschema"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/capture"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Triggers in a sandbox. A fork carries its production table's triggers:
// each is made on the fork, in production's order, with production's
// timing, event, sql_mode and character set, and its body rewritten to the
// sandbox — every table the body names is forked with the table (and their
// triggers and keys in turn, connected), so the body, rewritten once, names
// the sandbox's copies whatever the sandbox forks later, and a write in the
// sandbox does there what it does in production, side effects included.
// A trigger runs with its definer's privileges: the copy's definer is the
// proxy's upstream account, which may write the sandbox's databases.
// A body is checked like a procedure body the sandbox makes: one that
// calls a stored procedure or a loadable function, reaches outside the
// database, or that the engine cannot read refuses the fork, with the
// reason. The stored functions it calls are the sandbox's: the trigger,
// made in the sandbox's database, calls that database's, where the session
// that forked the table copies production's (objects.Placer.PlaceNeeded).

// connectedSet is what forking a table takes (forkComponent): the tables,
// the table itself first, whether keys or triggers connect them, the
// server's foreign keys and the triggers of each table (by key).
type connectedSet struct {
	tables   []rewrite.Table
	linked   bool
	fks      []forker.ForeignKey
	triggers map[string][]catalog.TriggerCopy
	// routines are the stored routines the triggers call (triggerHazards).
	routines []registry.RoutineRef
}

// alone says whether the set is its one table, linked to no other by
// keys or triggers: such a table may be forked lazily. Foreign keys
// between other tables of the server do not count.
func (cp *connectedSet) alone() bool {
	if len(cp.tables) != 1 || cp.linked {
		return false
	}
	for _, trs := range cp.triggers {
		if len(trs) > 0 {
			return false
		}
	}
	return true
}

// connected finds the tables forking t takes, on a side connection of its
// own: foreign keys' components and the tables triggers name, until no more
// are found. Tables sb already holds bring nothing more: they were forked
// with theirs.
func (m *Forker) connected(ctx context.Context, sb *registry.Sandbox, t rewrite.Table) (*connectedSet, error) {
	cp := &connectedSet{tables: []rewrite.Table{t}, triggers: map[string][]catalog.TriggerCopy{}}
	err := m.reg.WithConn(ctx, func(c sideconn.Conn) error {
		var err error
		if cp.fks, err = forker.ForeignKeys(ctx, c, m.names.IsProxySchema); err != nil {
			return err
		}
		same := func(a, b rewrite.Table) bool { return m.names.Key(a) == m.names.Key(b) }
		seen := map[string]bool{m.names.Key(t): true}
		add := func(u rewrite.Table) {
			u = m.names.Norm(u)
			if k := m.names.Key(u); !seen[k] && !infoschema.Virtual(u) && !m.names.IsProxySchema(u.DB) {
				seen[k] = true
				cp.tables = append(cp.tables, u)
			}
		}
		for i := 0; i < len(cp.tables); i++ {
			u := cp.tables[i]
			if e, ok := sb.Resolve(m.names.Key(u)); i > 0 && ok && e.Kind != sandbox.KindAbsent {
				continue
			}
			comp, linked := forker.Component(cp.fks, u, same)
			cp.linked = cp.linked || linked
			for _, v := range comp[1:] {
				add(v)
			}
			trs, err := m.triggers.Read(ctx, c, u)
			if err != nil {
				return err
			}
			if len(trs) > 0 {
				cp.triggers[m.names.Key(u)] = trs
			}
			for _, tc := range trs {
				for _, v := range catalog.BodyTables(tc.Body) {
					add(v)
				}
			}
		}
		return nil
	})
	return cp, err
}

// triggerHazards refuses a set whose triggers the sandbox cannot hold, and
// lists in cp the stored functions they call.
func (m *Forker) triggerHazards(ctx context.Context, cp *connectedSet) error {
	for _, u := range cp.tables {
		for _, tc := range cp.triggers[m.names.Key(u)] {
			why, routines, err := m.triggerHazard(ctx, u, tc)
			if err != nil {
				return err
			}
			cp.routines = append(cp.routines, routines...)
			if why != "" {
				return rewrite.Refuse(wire.ErUnknown, "cannot fork %s: its trigger %s %s, so the fork cannot do what "+
					"the table does in production; test without the sandbox, or drop or simplify the trigger", u,
					quote.Ident(tc.Trigger.Name), why)
			}
		}
	}
	return nil
}

// triggerHazard says why the trigger tc of t cannot be copied ("" when it
// can).
func (m *Forker) triggerHazard(ctx context.Context, t rewrite.Table, tc catalog.TriggerCopy) (string, []registry.RoutineRef, error) {
	if len(tc.Body.Statements) != 1 || tc.Body.Statements[0].Routine == nil {
		return "cannot be read by the proxy", nil, nil
	}
	return m.BodyHazard(ctx, t.DB, tc.Body.Statements[0])
}

// BodyHazard says why the trigger whose body st holds (st.Routine.Body,
// run with db current) cannot be made in a sandbox ("" when it can): a
// body the proxy cannot read, a CALL, what reaches outside the database or
// reads information_schema, a loadable function. routines are the stored
// procedures and functions it calls, which the sandbox must have: the
// trigger, made in the sandbox's database, calls the sandbox's.
func (m *Forker) BodyHazard(ctx context.Context, db string, st rewrite.Statement) (why string, routines []registry.RoutineRef, err error) {
	if st.Unprovable != "" {
		return "has a body the proxy cannot read (" + st.Unprovable + ")", nil, nil
	}
	for _, b := range st.Routine.Body {
		for _, bs := range b.Statements {
			switch {
			case bs.Class == rewrite.ClassUnparseable:
				return "has a statement the proxy cannot read", nil, nil
			case bs.Kind == rewrite.KindCall && bs.Routine != nil:
				routines = append(routines, registry.RoutineRef{Kind: "PROCEDURE", DB: bs.Routine.DB(db), Name: bs.Routine.Name})
			case bs.Routine != nil:
				return "defines or drops a stored routine", nil, nil
			case bs.Outside != "":
				return "reaches outside the database (" + bs.Outside + ")", nil, nil
			case infoschema.ServerWide(bs) != "":
				return "reads what the whole server holds", nil, nil
			case infoschema.Uses(b):
				return "reads information_schema", nil, nil
			}
			for _, f := range bs.Funcs {
				why, stored, err := m.catalog.FuncHazard(ctx, f, db)
				switch {
				case err != nil:
					return "", nil, err
				case stored:
					routines = append(routines, registry.RoutineRef{Kind: "FUNCTION", DB: cmp.Or(f.Schema, db), Name: f.Name})
				case why != "":
					return why, nil, nil
				}
			}
		}
	}
	return "", routines, nil
}

// copyTriggers makes, on each fork in made (by key), its production
// table's triggers, their bodies rewritten to the sandbox.
func (m *Forker) copyTriggers(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox, cp *connectedSet, made map[string]*sandbox.Entry) error {
	for _, u := range cp.tables {
		k := m.names.Key(u)
		e, ok := made[k]
		if !ok {
			continue
		}
		trgs := cp.triggers[k]
		if len(trgs) == 0 {
			continue
		}
		captureTrg, err := m.caps.Trigger(ctx, c, sb.ID, u)
		if err != nil {
			return err
		}
		for _, tc := range trgs {
			body, err := m.triggerBody(sb, e.Phys.DB, tc)
			if err != nil {
				return err
			}
			trg := tc.Trigger
			if captureTrg != "" && strings.EqualFold(trg.Timing, "AFTER") {
				// The capture's trigger stays the last of its event: the
				// copies keep production's order (ACTION_ORDER).
				trg.Precedes = captureTrg + capture.Suffix(trg.Event)
			}
			if err := forker.CreateTrigger(ctx, c, trg, e.Phys, body); err != nil {
				return err
			}
		}
	}
	return nil
}

// triggerBody is tc's body with every table it names mapped to sb (all
// forked with the table, or placed when production has none).
func (m *Forker) triggerBody(sb *registry.Sandbox, db string, tc catalog.TriggerCopy) (string, error) {
	res, err := tc.Body.Rewrite(sandboxResolver{m: m, sb: sb, db: db})
	if err != nil {
		return "", fmt.Errorf("rewrite the trigger %s: %w", tc.Trigger.Name, err)
	}
	prefix := "CREATE PROCEDURE " + quote.Ident(db) + ".`sqlfork_trigger`() "
	body, ok := strings.CutPrefix(res.SQL, prefix)
	if !ok {
		return "", fmt.Errorf("rewrite the trigger %s: unexpected text %.80q", tc.Trigger.Name, res.SQL)
	}
	return body, nil
}

// sandboxResolver maps every table to sb's (a trigger body, whose tables
// are all forked before it is rewritten) and places the procedure the
// engine reads the body as in db.
type sandboxResolver struct {
	m  *Forker
	sb *registry.Sandbox
	db string
}

// Resolve implements rewrite.Resolver.
func (r sandboxResolver) Resolve(t rewrite.Table, _ bool) (rewrite.Table, bool, error) {
	if e, ok := r.sb.Resolve(r.m.names.Key(t)); ok {
		return e.Phys, true, nil
	}
	return t, false, rewrite.Refuse(wire.ErUnknown, "a trigger names %s, which is not in the sandbox", t)
}

// ResolveRoutine implements rewrite.RoutineResolver: the body (read as a
// procedure's) is placed in the trigger's sandbox database, and a CALL
// naming another database names the sandbox's for it (the session copies
// production's procedure there, objects.Placer.PlaceNeeded).
func (r sandboxResolver) ResolveRoutine(st *rewrite.Statement) (string, error) {
	if st.Kind == rewrite.KindCall && st.Routine != nil && st.Routine.Schema != "" {
		return sandbox.Schema(r.m.cfg.Prefix, r.sb.ID, r.m.names.Norm(rewrite.Table{DB: st.Routine.Schema}).DB), nil
	}
	return r.db, nil
}

// ResolveFunction implements rewrite.FunctionResolver: a call naming its
// function's database names the sandbox's (the session copies production's
// there, objects.Placer.PlaceNeeded); an unqualified one stays, for the trigger, made in
// the sandbox's database, calls that database's.
func (r sandboxResolver) ResolveFunction(f rewrite.Func, _ string) (string, bool, error) {
	if f.Schema == "" || catalog.PseudoSchema(f.Schema) {
		return "", false, nil
	}
	return sandbox.Schema(r.m.cfg.Prefix, r.sb.ID, r.m.names.Norm(rewrite.Table{DB: f.Schema}).DB), true, nil
}
