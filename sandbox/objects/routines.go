package objects

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/infoschema"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Stored procedures in a sandbox. A sandbox has procedures of its own: CREATE
// PROCEDURE in a sandbox makes the procedure in the sandbox's database for
// its logical database (sandbox.Schema), its body rewritten to the sandbox's
// copies of every table it names — all forked (or placed, for tables
// production does not have) when the procedure is made, reads too, since the
// body keeps the names it was made with while the sandbox forks more
// tables; CALL and DROP PROCEDURE name the sandbox's procedure. The body's
// statements are checked like any statement of the sandbox (rewrite reads
// them one by one, rewrite/routine.go). Production's procedures do not run in a
// sandbox: their statements would reach production.

// RoutineStatement reports routine statements a sandbox runs on its own
// procedures and functions.
func RoutineStatement(st rewrite.Statement) bool {
	if st.Routine == nil {
		return false
	}
	switch st.Kind {
	case rewrite.KindCreateProcedure, rewrite.KindDropProcedure, rewrite.KindCall, rewrite.KindCreateFunction, rewrite.KindDropFunction, rewrite.KindAlterProcedure, rewrite.KindAlterFunction:
		return true
	}
	return false
}

// ResolveRoutine is the session resolver's rewrite.RoutineResolver: a
// sandbox's procedures are in its database for their logical one. SHOW
// CREATE shows the sandbox's own routines there, production's otherwise.
func (o *Placer) ResolveRoutine(st *rewrite.Statement) (string, error) {
	db := st.Routine.DB(st.DB)
	if db == "" {
		return "", errNoDatabase()
	}
	phys := o.host.RoutineDB(db)
	if kind, ok := strings.CutPrefix(string(st.Kind), "SHOW CREATE "); ok {
		if _, own := o.sb().RoutineKnown(routineKey(kind, phys, st.Routine.Name)); !own {
			return "", nil
		}
	}
	return phys, nil
}

// errNoDatabase is the server's own error for a name without a database
// when no database is current.
func errNoDatabase() error {
	return rewrite.ServerRefusal(wire.ErNoDB, "No database selected")
}

// CheckCall makes ready CALL of a procedure production has and the sandbox
// has not: the sandbox gets its own copy first (copyRoutine), which the
// CALL then runs, as it runs a procedure the sandbox made. A procedure
// neither has is called in the sandbox, where the server says it does not
// exist, as it would directly.
func (o *Placer) CheckCall(ctx context.Context, st rewrite.Statement) error {
	db := st.Routine.DB(st.DB)
	if db == "" {
		return nil // the server's 1046
	}
	_, err := o.sandboxRoutine(ctx, "PROCEDURE", db, st.Routine.Name)
	return err
}

// ensureRoutine makes sure the sandbox has its copy of production's
// routine db.name of kind PROCEDURE or FUNCTION, when production has one
// and the sandbox has not (nor dropped it). here reports whether the name
// is the sandbox's then.
func (o *Placer) ensureRoutine(ctx context.Context, kind, db, name string) (routineState, error) {
	phys := o.host.RoutineDB(db)
	schemas, err := o.routineSchemas(ctx, kind, name, phys, db)
	switch {
	case err != nil:
		return routineNone, err
	case o.ownDB(db) && (schemas[phys] || schemas[db]):
		// Every name in it is the sandbox's: production's of the name is
		// not there (the call names the sandbox's, which the server
		// answers for, 1305 when it has none); no copy is made.
		return routineOwn, nil
	case o.ownDB(db):
		return routineNone, nil
	case schemas[phys]:
		return routineOwn, nil // the sandbox's (made there, or copied by another process)
	case !schemas[db]:
		return routineNone, nil
	}
	dropped, err := o.droppedRoutine(ctx, kind, db, name)
	if err != nil || dropped {
		return routineOwn, err // dropped in the sandbox (by another proxy process, say): gone there
	}
	return routineCopied, o.copyRoutine(ctx, kind, db, name)
}

// routineSchemas are the databases among dbs that have a routine name of
// kind.
func (o *Placer) routineSchemas(ctx context.Context, kind, name string, dbs ...string) (map[string]bool, error) {
	in := make([]string, len(dbs))
	for i, db := range dbs {
		in[i] = quote.String(db)
	}
	var rows [][]*string
	err := o.reg.WithConn(ctx, func(c sideconn.Conn) error {
		var err error
		rows, err = c.Query(ctx, "SELECT ROUTINE_SCHEMA FROM information_schema.ROUTINES WHERE ROUTINE_TYPE = "+quote.String(kind)+
			" AND ROUTINE_NAME = "+quote.String(name)+" AND ROUTINE_SCHEMA IN ("+strings.Join(in, ", ")+")")
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("look up %s %s: %w", strings.ToLower(kind), name, err)
	}
	out := map[string]bool{}
	for _, row := range rows {
		if len(row) > 0 && row[0] != nil {
			out[*row[0]] = true
		}
	}
	return out, nil
}

// inSandbox reports whether the sandbox's database phys has a routine name
// of kind.
func (o *Placer) inSandbox(ctx context.Context, kind, phys, name string) (bool, error) {
	schemas, err := o.routineSchemas(ctx, kind, name, phys)
	return schemas[phys], err
}

// ForkBody makes ready what CREATE PROCEDURE needs in the sandbox: every
// table its body names forked whole (or placed, when production does not
// have it) — so the body, rewritten once, names the sandbox's copies
// whatever the sandbox forks later —, the sandbox's information_schema
// views if the body reads them, and the database the procedure goes in,
// with the sandbox recorded in the registry (which keeps that database
// from the reaper).
func (o *Placer) ForkBody(ctx context.Context, st rewrite.Statement, ddl bool) error {
	for _, b := range st.Routine.Body {
		for _, bs := range b.Statements {
			first, err := o.BodyFirst(ctx, bs)
			if err != nil {
				return err
			}
			for _, t := range append(append(append([]rewrite.Table{}, bs.Writes...), bs.Reads...), first...) {
				if infoschema.Virtual(t) {
					continue
				}
				if _, _, err := o.host.Ensure(ctx, t, forker.Full); err != nil {
					return err
				}
			}
			// The body may change the tables' structure when it runs.
			if err := o.host.StopCapturesFor(ctx, bs, ddl); err != nil {
				return err
			}
		}
		if infoschema.Uses(b) {
			if err := o.host.EnsureInfoViews(ctx); err != nil {
				return err
			}
		}
	}
	db := st.Routine.DB(st.DB)
	phys := o.host.RoutineDB(db)
	return o.reg.WithConn(ctx, func(c sideconn.Conn) error {
		if err := o.reg.Persist(ctx, c, o.sb()); err != nil {
			return err
		}
		return o.schemas.CreateSchema(ctx, c, db, phys)
	})
}

// BodyFirst places the functions a statement of a stored program's body
// calls and lists the tables it needs forked whole first (ForkFirst).
func (o *Placer) BodyFirst(ctx context.Context, bs rewrite.Statement) ([]rewrite.Table, error) {
	if _, err := o.PlaceFunctions(ctx, bs); err != nil {
		return nil, err
	}
	return o.ForkFirst(ctx, bs)
}

// droppedRoutine reports whether the sandbox dropped production's routine db.name
// of kind (noteDroppedRoutine), as any proxy process recorded it.
func (o *Placer) droppedRoutine(ctx context.Context, kind, db, name string) (bool, error) {
	var dropped bool
	err := o.reg.WithConn(ctx, func(c sideconn.Conn) error {
		rows, err := c.Query(ctx, "SELECT 1 FROM "+quote.Ident(sandbox.InfoSchema(o.prefix, o.sb().ID))+"."+quote.Ident(infoschema.DroppedRoutines)+
			" WHERE db = "+quote.String(db)+" AND name = "+quote.String(name)+" AND type = "+quote.String(kind))
		var me *mysql.MyError
		if errors.As(err, &me) && (me.Code == mysql.ER_NO_SUCH_TABLE || me.Code == mysql.ER_BAD_DB_ERROR) {
			return nil // none recorded yet
		}
		dropped = len(rows) > 0
		return err
	})
	if err != nil {
		return false, fmt.Errorf("look up the dropped %s %s.%s: %w", strings.ToLower(kind), db, name, err)
	}
	return dropped, nil
}

// noteDroppedRoutine records in the sandbox's information_schema database
// that it dropped production's routine db.name of kind (PROCEDURE or
// FUNCTION).
func (o *Placer) noteDroppedRoutine(ctx context.Context, kind, db, name string) error {
	if err := o.host.EnsureInfoViews(ctx); err != nil {
		return err
	}
	return o.reg.WithConn(ctx, func(c sideconn.Conn) error {
		_, err := c.Exec(ctx, "INSERT IGNORE INTO "+quote.Ident(sandbox.InfoSchema(o.prefix, o.sb().ID))+"."+quote.Ident(infoschema.DroppedRoutines)+
			" VALUES ("+quote.String(db)+", "+quote.String(name)+", "+quote.String(kind)+")")
		if err != nil {
			return fmt.Errorf("record the dropped %s %s.%s: %w", strings.ToLower(kind), db, name, err)
		}
		return nil
	})
}

// ownDB reports whether logical database db is one the sandbox made or
// dropped (registry/databases.go): a routine named in it is the sandbox's,
// which the server answers for in the sandbox's schema (1305 for one it
// lacks), never production's of the same name.
func (o *Placer) ownDB(db string) bool {
	sb := o.sb()
	if sb == nil {
		return false
	}
	_, own := sb.OwnDB(o.names.Norm(rewrite.Table{DB: db}).DB)
	return own
}
