package objects

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/sqlfork/sqlfork-proxy/catalog"
	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/infoschema"
	"github.com/sqlfork/sqlfork-proxy/reply"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// A sandbox's copies of production views. A production view read in a
// sandbox must see the sandbox's tables — its forks, the tables it created
// or dropped — as the view would on a private copy of the database. So
// when a view a sandboxed statement names reads (directly or through other
// views) a table the sandbox holds, the sandbox gets its own copy of the
// view, in its database for the view's, under the view's name: production's
// definition (information_schema.VIEWS: names qualified) with every table
// and view rewritten as the sandbox resolves it, the view's algorithm and
// check option, SQL SECURITY INVOKER (whoever reads it reads with their own
// privileges, as on the proxy's other views). The statement is then
// rewritten to the copy like to a fork. A copy is remade whenever what its
// definition resolves to changes (a table it reads is forked later), and
// made whatever the view reads before a statement writes through it or
// reads it under locks — after every table it reads is forked, so writes
// and locks land on the sandbox's rows. A statement that drops, replaces or
// alters the view replaces a stand-in copy, which then is the sandbox's own
// view (created), as a view the sandbox made is. Copies are registry rows
// of kind "view": the sandbox's information_schema shows production's view
// for them (definition, definer, security), SHOW CREATE VIEW reads
// production's view, and discarding the sandbox drops them with its
// databases.

// viewMode says what a statement needs of a production view.
type viewMode int

const (
	// viewLazy: a copy only when the view reads something the sandbox
	// holds; production's view otherwise.
	viewLazy viewMode = iota
	// viewForce: every table the view reads forked, then a copy (writes
	// through the view, locking reads, a CREATE VIEW reading it).
	viewForce
	// viewAlways: a copy, whatever the view reads (RENAME TABLE of it).
	viewAlways
	// viewStandIn: the statement drops or replaces the view: any view of
	// its name will do.
	viewStandIn
)

// standIn is the definition of a copy a statement will drop or replace.
const standIn = "SELECT 1 AS `1`"

// Views is what PrepareViews made ready for a statement.
type Views struct {
	// Names are, by key, the names that are production views: they are
	// not forked as tables.
	Names map[string]bool
	// Adopt are the copies the statement drops or replaces: the
	// sandbox's own views once it ran (AdoptViews).
	Adopt []rewrite.Table
	// Calls reports a view read that calls a stored function, whose
	// statements the proxy does not check for a second run.
	Calls bool
}

// PrepareViews makes the sandbox's copies of the production views st
// names, as st needs them (first: the tables it would fork before it runs,
// besides those it writes). On an error, Names is nil and Adopt and Calls
// say what was done before it.
func (o *Placer) PrepareViews(ctx context.Context, st rewrite.Statement, first []rewrite.Table) (Views, error) {
	var out Views
	views := map[string]bool{}
	if st.Kind == rewrite.KindShowCreateView {
		out.Names = views
		return out, nil // production's definition (the resolver leaves copies out)
	}
	one := func(t rewrite.Table, mode viewMode) error {
		isView, err := o.ensureView(ctx, t, mode, 0)
		if isView {
			views[o.names.Key(t)] = true
			if err == nil && o.cat.Calls(ctx, t) {
				out.Calls = true
			}
		}
		return err
	}
	for _, t := range st.Writes {
		mode := viewForce
		switch st.Kind {
		case rewrite.KindDropView, rewrite.KindCreateView, rewrite.KindAlterView:
			mode = viewStandIn
		case rewrite.KindRenameTable:
			mode = viewAlways
		}
		if err := one(t, mode); err != nil {
			return out, err
		}
		if mode == viewStandIn && views[o.names.Key(t)] {
			out.Adopt = append(out.Adopt, t)
		}
	}
	for _, t := range first {
		if err := one(t, viewForce); err != nil {
			return out, err
		}
	}
	for _, t := range append(append([]rewrite.Table(nil), st.Reads...), st.Names...) {
		if err := one(t, viewLazy); err != nil {
			return out, err
		}
	}
	out.Names = views
	return out, nil
}

// ensureView gives the sandbox what mode asks of t when t is a production
// view (or the sandbox's copy of one), and reports whether it is; anything
// else is left to the caller.
func (o *Placer) ensureView(ctx context.Context, t rewrite.Table, mode viewMode, depth int) (bool, error) {
	if infoschema.Virtual(t) || t.DB == "" {
		return false, nil
	}
	t = o.names.Norm(t)
	e, held := o.sb().Resolve(o.names.Key(t))
	if held && e.Kind != sandbox.KindView {
		return false, nil // the sandbox's own table or view, or one it dropped
	}
	obj, err := o.cat.Object(ctx, t)
	if err != nil || obj.Kind != "VIEW" {
		return false, err
	}
	if depth >= catalog.MaxViewDepth {
		return true, rewrite.Refuse(wire.ErUnknown, "the view %s is built on views more than %d deep, which the sandbox "+
			"cannot copy", t, catalog.MaxViewDepth)
	}
	switch {
	case obj.Hazard != "":
		return true, rewrite.Refuse(wire.ErUnknown, "%s", obj.Hazard)
	case obj.Wide != "":
		return true, rewrite.Refuse(wire.ErUnknown, "%s, which a sandbox must not see; run it on a direct connection", obj.Wide)
	case obj.View == nil:
		return true, rewrite.Refuse(wire.ErUnknown, "the proxy cannot read the definition of the view %s (grant its "+
			"account SHOW VIEW), so the sandbox cannot copy it", t)
	}
	if mode == viewStandIn {
		if held {
			return true, nil
		}
		return true, o.placeView(ctx, o.sb(), t, standIn, obj.View)
	}
	def, changed, err := o.viewDefinition(ctx, t, obj.View, mode, depth)
	if err != nil {
		return true, err
	}
	switch {
	case !held && mode == viewLazy && !changed && obj.Calls == "":
		return true, nil // it reads and calls nothing the sandbox holds: production's view is the sandbox's
	case held && e.Def == def:
		return true, nil
	}
	return true, o.placeView(ctx, o.sb(), t, def, obj.View)
}

// viewDefinition is the definition of view t's copy in the sandbox: what it
// reads made ready as mode asks (forked, for viewForce; copies of the views
// it reads), then rewritten as the sandbox resolves it. changed reports a
// name the sandbox resolves elsewhere.
func (o *Placer) viewDefinition(ctx context.Context, t rewrite.Table, vd *catalog.ViewDef, mode viewMode, depth int) (def string, changed bool, err error) {
	a := o.engine.Analyze(vd.Def, rewrite.Options{DB: t.DB, CaseSensitiveNames: o.names.CaseSensitive, Server: o.server})
	inner := viewLazy
	if mode == viewForce {
		inner = viewForce
	}
	for _, st := range a.Statements {
		if st.Class == rewrite.ClassUnparseable && o.cat.Calls(ctx, t) {
			// What it reads that calls a stored function cannot be told
			// for sure: it would call production's.
			return "", false, rewrite.Refuse(wire.ErOptionPreventsStatement, "the view %s calls stored functions through a "+
				"definition the proxy cannot read, so the sandbox cannot copy it", t)
		}
		// The stored functions it calls are the sandbox's.
		if _, err := o.PlaceFunctions(ctx, st); err != nil {
			return "", false, err
		}
		for _, u := range st.Reads {
			isView, err := o.ensureView(ctx, u, inner, depth+1)
			var vi *viewInvalid
			if errors.As(err, &vi) {
				return "", false, invalidView(t, vi.cause) // the server names the view read
			}
			if err != nil {
				return "", false, err
			}
			if !isView && mode == viewForce && !infoschema.Virtual(u) {
				if _, _, err := o.host.Ensure(ctx, u, forker.Full); err != nil {
					return "", false, err
				}
			}
		}
	}
	res, err := a.Rewrite(o.host.Resolver())
	if err != nil {
		return "", false, fmt.Errorf("copy the view %s into the sandbox: %w", t, err)
	}
	return res.SQL, res.Changed, nil
}

// placeView makes (or remakes) sb's copy of the production view t with the
// definition def, and records it.
func (o *Placer) placeView(ctx context.Context, sb *registry.Sandbox, t rewrite.Table, def string, vd *catalog.ViewDef) error {
	phys := o.names.Physical(sb.ID, t)
	defer sb.LockForks()()
	if sb.IsDiscarded() {
		return rewrite.Refuse(wire.ErUnknown, "sandbox %q was discarded; SANDBOX CREATE or ATTACH another", sb.Name)
	}
	stmt := "CREATE OR REPLACE"
	if vd.Algorithm == "MERGE" || vd.Algorithm == "TEMPTABLE" {
		stmt += " ALGORITHM = " + vd.Algorithm
	}
	stmt += " SQL SECURITY INVOKER VIEW " + phys.Quoted() + " AS " + def
	if vd.CheckOption == "CASCADED" || vd.CheckOption == "LOCAL" {
		stmt += " WITH " + vd.CheckOption + " CHECK OPTION"
	}
	return o.reg.WithConn(ctx, func(c sideconn.Conn) error {
		if err := o.reg.Persist(ctx, c, sb); err != nil {
			return err
		}
		if err := o.schemas.CreateSchema(ctx, c, t.DB, phys.DB); err != nil {
			return err
		}
		if err := forker.ExecWith(ctx, c, forker.Modes{Collation: vd.Collation}, stmt); err != nil {
			var me *mysql.MyError
			if errors.As(err, &me) {
				// A table or column it reads is gone in the sandbox (dropped,
				// altered): reading the view fails as on the server, which
				// lists why among the statement's errors.
				return invalidView(t, &reply.Diag{Level: "Error", Code: me.Code, Message: me.Message})
			}
			return fmt.Errorf("copy the view %s into the sandbox: %w", t, err)
		}
		e := &sandbox.Entry{Logical: t, Phys: phys, Kind: sandbox.KindView, Def: def, Epoch: o.reg.NextEpoch(), Created: time.Now().UTC()}
		if err := o.reg.SaveEntry(ctx, c, sb, e); err != nil {
			return err
		}
		o.reg.SetEntry(sb, o.names.Key(t), e)
		return nil
	})
}

// viewInvalid is the server's error for reading a view whose tables or
// columns are gone (1356), with the error that says which (cause; its names
// physical): SHOW WARNINGS lists both, as the server does.
type viewInvalid struct {
	*rewrite.Refusal
	cause *reply.Diag
}

// Unwrap returns the refusal the client gets.
func (e *viewInvalid) Unwrap() error { return e.Refusal }

// Diagnostics is the diagnostics area reading the view leaves: the cause,
// then 1356.
func (e *viewInvalid) Diagnostics() []reply.Diag {
	d := []reply.Diag{{Level: "Error", Code: e.Code, Message: e.Message}}
	if e.cause != nil {
		d = append([]reply.Diag{*e.cause}, d...)
	}
	return d
}

// invalidView is 1356 for the view t, because of cause.
func invalidView(t rewrite.Table, cause *reply.Diag) *viewInvalid {
	return &viewInvalid{Refusal: rewrite.ServerRefusal(wire.ErViewInvalid, "View '%s.%s' references "+
		"invalid table(s) or column(s) or function(s) or definer/invoker of view lack rights to use them", t.DB, t.Name), cause: cause}
}

// AdoptViews makes the copies a successful statement replaced (CREATE OR
// REPLACE VIEW, ALTER VIEW of a production view's name) the sandbox's own
// views: their definition is the sandbox's now, never to be remade from
// production's.
func (o *Placer) AdoptViews(ctx context.Context, views []rewrite.Table) error {
	sb := o.sb()
	return o.reg.WithConn(ctx, func(c sideconn.Conn) error {
		for _, t := range views {
			t = o.names.Norm(t)
			k := o.names.Key(t)
			e, ok := sb.Resolve(k)
			if !ok || e.Kind != sandbox.KindView {
				continue // dropped meanwhile (refresh saw it gone)
			}
			n := *e
			n.Kind, n.Def, n.Epoch = sandbox.KindCreated, "", o.reg.NextEpoch()
			if err := o.reg.SaveEntry(ctx, c, sb, &n); err != nil {
				return err
			}
			o.reg.SetEntry(sb, k, &n)
		}
		return nil
	})
}
