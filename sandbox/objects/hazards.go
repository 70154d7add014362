package objects

import (
	"context"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/catalog"
	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/infoschema"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
)

// Hazard checks what the statements of a reach through the objects
// they name, whatever the proxy's account may do: the functions they call,
// the views they read, the sources of CREATE TABLE … LIKE, and, in a
// sandbox (sb not nil), the tables that will be forked before them. It
// returns why a statement would reach production ("" when none does).
// Tables sb already holds are the sandbox's own and need no check.
func (o *Placer) Hazard(ctx context.Context, a *rewrite.Analysis, sb *registry.Sandbox) (string, error) {
	for _, st := range a.Statements {
		if why, err := o.statementHazard(ctx, st, sb); err != nil || why != "" {
			return why, err
		}
	}
	return "", nil
}

// statementHazard is Hazard for one statement.
func (o *Placer) statementHazard(ctx context.Context, st rewrite.Statement, sb *registry.Sandbox) (string, error) {
	for _, f := range st.Funcs {
		if sb != nil && st.Class != rewrite.ClassUnparseable {
			// The sandbox's copies run in its place (functions.go); in a
			// statement the parser rejects the proxy cannot place a call.
			if why, err := o.sandboxFuncHazard(ctx, f, st.DB); err != nil || why != "" {
				return why, err
			}
		} else if why, _, err := o.cat.FuncHazard(ctx, f, st.DB); err != nil || why != "" {
			return why, err
		}
	}
	if why, err := o.likeHazard(ctx, st, sb); err != nil || why != "" {
		return why, err
	}
	if sb != nil && st.Class == rewrite.ClassUnparseable {
		if why, err := o.unparseableHazard(ctx, st, sb); err != nil || why != "" {
			return why, err
		}
	}
	forks := map[rewrite.Table]string{}
	if sb != nil {
		for _, t := range st.Writes {
			forks[t] = "writes"
		}
		first, err := o.ForkFirst(ctx, st)
		if err != nil {
			return "", err
		}
		for _, t := range first {
			if _, ok := forks[t]; !ok {
				forks[t] = "reads under locks"
			}
		}
	}
	if why, err := o.readHazard(ctx, st, sb); err != nil || why != "" {
		return why, err
	}
	return o.forkHazard(ctx, st, sb, forks)
}

// holds reports whether sb (nil: none) holds t.
func (o *Placer) holds(sb *registry.Sandbox, t rewrite.Table) bool {
	if sb == nil {
		return false
	}
	_, ok := sb.Resolve(o.names.Key(t))
	return ok
}

// likeHazard checks the sources of CREATE TABLE … LIKE: the new table
// would copy an engine that reaches other tables, or a default that
// advances a production sequence.
func (o *Placer) likeHazard(ctx context.Context, st rewrite.Statement, sb *registry.Sandbox) (string, error) {
	for _, t := range st.Like {
		if o.holds(sb, t) {
			continue
		}
		obj, err := o.cat.Object(ctx, t)
		if err != nil {
			return "", err
		}
		if obj.Kind != "" && obj.Engine != "" && !rewrite.SafeEngine(obj.Engine) {
			return "CREATE TABLE … LIKE " + t.Quoted() + " would copy its " + obj.Engine + " engine, whose tables read " +
				"and write other tables", nil
		}
		var col, def string
		if err := o.reg.WithConn(ctx, func(c sideconn.Conn) error {
			var err error
			col, def, err = forker.SequenceDefault(ctx, c, t)
			return err
		}); err != nil {
			return "", err
		} else if col != "" {
			return "CREATE TABLE … LIKE " + t.Quoted() + " would copy the default of its column " + quote.Ident(col) +
				" (" + def + "), which advances a production sequence; give the new table its own definition", nil
		}
	}
	return "", nil
}

// unparseableHazard checks a statement the parser cannot read, in a
// sandbox: what it reads may have to be forked first, which needs it
// parsed.
func (o *Placer) unparseableHazard(ctx context.Context, st rewrite.Statement, sb *registry.Sandbox) (string, error) {
	if o.host.Serializable() && len(st.Names) > 0 {
		return "under SERIALIZABLE every read locks, so the proxy must fork what a statement reads first, and it " +
			"cannot parse this one; rewrite it in syntax MySQL 8 also accepts or leave SERIALIZABLE", nil
	}
	// A table whose engine locks it for every read must be forked
	// before it is read, which needs the statement parsed.
	for _, t := range st.Names {
		if o.holds(sb, t) || infoschema.Virtual(t) || t.DB == "" {
			continue
		}
		obj, err := o.cat.Object(ctx, t)
		if err != nil {
			return "", err
		}
		if (obj.Kind == "BASE TABLE" || obj.Kind == "SYSTEM VERSIONED") && !rowLocking(obj.Engine) {
			return t.Quoted() + " is a " + obj.Engine + " table, whose reads lock it, so the proxy must fork it " +
				"before it is read, and it cannot parse this statement; rewrite it in syntax MySQL 8 also accepts", nil
		}
	}
	return "", nil
}

// readHazard checks what reading the statement's tables reaches: a view
// that calls a function or advances a sequence, and, in a sandbox, one
// that shows the whole server.
func (o *Placer) readHazard(ctx context.Context, st rewrite.Statement, sb *registry.Sandbox) (string, error) {
	for _, t := range append(st.Reads, st.Names...) {
		if o.holds(sb, t) || infoschema.Virtual(t) || t.DB == "" {
			continue
		}
		obj, err := o.cat.Object(ctx, t)
		if err != nil {
			return "", err
		}
		if obj.Hazard != "" {
			return obj.Hazard, nil
		}
		if sb == nil && obj.Calls != "" {
			return obj.Calls, nil // a sandbox reads its copy of the view, calling its copy of the function
		}
		if sb != nil && obj.Wide != "" {
			return obj.Wide + ", which a sandbox must not see; run it on a direct connection", nil
		}
	}
	return "", nil
}

// forkHazard checks the tables a statement in sb would fork (forks: the
// role each plays, "writes" or "reads under locks"): tables of engines that
// reach other tables. (Production views are copied, views.go.)
func (o *Placer) forkHazard(ctx context.Context, st rewrite.Statement, sb *registry.Sandbox, forks map[rewrite.Table]string) (string, error) {
	for t := range forks {
		if o.holds(sb, t) || infoschema.Virtual(t) {
			continue
		}
		obj, err := o.cat.Object(ctx, t)
		if err != nil {
			return "", err
		}
		switch {
		case obj.Kind == "VIEW":
			// The sandbox copies it (views.go), after forking what it
			// reads.
		case virtualTable(obj):
			return t.Quoted() + " is a table of the Sequence engine, whose rows are made as it is read: it cannot be written", nil
		case obj.Kind != "" && obj.Engine != "" && !rewrite.SafeEngine(obj.Engine):
			return t.Quoted() + " is a " + obj.Engine + " table, which reads and writes other tables, so no fork " +
				"of it can be kept to the sandbox", nil
		}
	}
	return "", nil
}

// ForkFirst lists the tables a statement needs forked whole before it runs,
// besides those it writes: tables named by its FOREIGN KEY clauses (so the
// key points into the sandbox), tables it reads under locks (so the locks
// are taken on the sandbox's copy, never on production rows; under
// SERIALIZABLE every read locks, and so does any read of a table whose
// engine locks whole tables, MyISAM or Aria say), and the tables a CREATE
// VIEW reads (so the view, and writes through it, stay in the sandbox).
func (o *Placer) ForkFirst(ctx context.Context, st rewrite.Statement) ([]rewrite.Table, error) {
	out := append([]rewrite.Table(nil), st.References...)
	if st.Kind == rewrite.KindCreateView || o.host.Serializable() {
		for _, t := range st.Reads {
			if infoschema.Virtual(t) {
				continue
			}
			if virtual, err := o.virtual(ctx, t); err != nil {
				return nil, err
			} else if !virtual {
				out = append(out, t)
			}
		}
		return out, nil
	}
	locked := map[rewrite.Table]bool{}
	for _, t := range st.Locked {
		locked[t] = true
		if virtual, err := o.virtual(ctx, t); err != nil {
			return nil, err
		} else if !virtual {
			out = append(out, t)
		}
	}
	for _, t := range st.Reads {
		if locked[t] || infoschema.Virtual(t) || o.sb() != nil && o.own(t) {
			continue
		}
		obj, err := o.cat.Object(ctx, t)
		if err != nil {
			return nil, err
		}
		if (obj.Kind == "BASE TABLE" || obj.Kind == "SYSTEM VERSIONED") && !rowLocking(obj.Engine) {
			out = append(out, t)
		}
	}
	return out, nil
}

// own reports whether the session's sandbox holds t.
func (o *Placer) own(t rewrite.Table) bool {
	_, ok := o.sb().Resolve(o.names.Key(t))
	return ok
}

// rowLocking reports engines whose reads take no table lock: InnoDB (and
// XtraDB) and RocksDB read a snapshot, and the Sequence engine's tables
// are numbers made as they are read (virtualTable). Others (MyISAM, Aria,
// MEMORY, CSV, ARCHIVE, …) lock the table for the read, which blocks its
// writers.
func rowLocking(engine string) bool {
	switch strings.ToLower(engine) {
	case "innodb", "xtradb", "rocksdb", "sequence":
		return true
	}
	return false
}

// virtual reports whether t, which the sandbox does not hold, is a table
// of the Sequence engine (virtualTable): nothing to lock, nothing to fork.
func (o *Placer) virtual(ctx context.Context, t rewrite.Table) (bool, error) {
	if infoschema.Virtual(t) || t.DB == "" || o.holds(o.sb(), t) {
		return false, nil
	}
	obj, err := o.cat.Object(ctx, t)
	return virtualTable(obj), err
}

// virtualTable reports a table of MariaDB's Sequence engine (seq_1_to_10,
// seq_0_to_99_step_3), which every database has: its rows are numbers made
// as it is read, it holds and locks nothing, and it cannot be written. A
// sandbox reads production's.
func virtualTable(obj catalog.Object) bool {
	return obj.Kind == "BASE TABLE" && strings.EqualFold(obj.Engine, "SEQUENCE")
}
