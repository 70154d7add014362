package session

import (
	"context"
	"fmt"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/infoschema"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
)

// Stored procedures in a sandbox. A sandbox has procedures of its own: CREATE
// PROCEDURE in a sandbox makes the procedure in the sandbox's database for
// its logical database (SandboxSchema), its body rewritten to the sandbox's
// copies of every table it names — all forked (or placed, for tables
// production does not have) when the procedure is made, reads too, since the
// body keeps the names it was made with while the sandbox forks more
// tables; CALL and DROP PROCEDURE name the sandbox's procedure. The body's
// statements are checked like any statement of the sandbox (rewrite reads
// them one by one, routine.go). Production's procedures do not run in a
// sandbox: their statements would reach production.

// sandboxRoutine reports routine statements a sandbox runs on its own
// procedures.
func sandboxRoutine(st rewrite.Statement) bool {
	if st.Routine == nil {
		return false
	}
	switch st.Kind {
	case rewrite.KindCreateProcedure, rewrite.KindDropProcedure, rewrite.KindCall, rewrite.KindCreateFunction, rewrite.KindDropFunction, rewrite.KindAlterProcedure, rewrite.KindAlterFunction:
		return true
	}
	return false
}

// routineDB is the sandbox database holding the procedures of logical
// database db; it is recorded for telling its name back in messages.
func (s *Session) routineDB(db string) string {
	phys := sandbox.Schema(s.m.cfg.Prefix, s.sb.ID, s.m.names.Norm(rewrite.Table{DB: db}).DB)
	if s.schemas == nil {
		s.schemas = map[string]string{}
	}
	s.schemas[phys] = db
	return phys
}

// ResolveRoutine implements rewrite.RoutineResolver: a sandbox's
// procedures are in its database for their logical one. SHOW CREATE shows
// the sandbox's own routines there, production's otherwise.
func (r resolver) ResolveRoutine(st *rewrite.Statement) (string, error) {
	db := st.Routine.DB(st.DB)
	if db == "" {
		return "", errNoDatabase()
	}
	phys := r.s.routineDB(db)
	if kind, ok := strings.CutPrefix(string(st.Kind), "SHOW CREATE "); ok {
		if _, own := r.s.sb.RoutineKnown(routineKey(kind, phys, st.Routine.Name)); !own {
			return "", nil
		}
	}
	return phys, nil
}

// checkCall makes ready CALL of a procedure production has and the sandbox
// has not: the sandbox gets its own copy first (copyRoutine), which the
// CALL then runs, as it runs a procedure the sandbox made. A procedure
// neither has is called in the sandbox, where the server says it does not
// exist, as it would directly.
func (s *Session) checkCall(ctx context.Context, st rewrite.Statement) error {
	db := st.Routine.DB(st.DB)
	if db == "" {
		return nil // the server's 1046
	}
	_, err := s.sandboxRoutine(ctx, "PROCEDURE", db, st.Routine.Name)
	return err
}

// ensureRoutine makes sure the sandbox has its copy of production's
// routine db.name of kind PROCEDURE or FUNCTION, when production has one
// and the sandbox has not (nor dropped it). here reports whether the name
// is the sandbox's then.
func (s *Session) ensureRoutine(ctx context.Context, kind, db, name string) (routineState, error) {
	phys := s.routineDB(db)
	schemas, err := s.routineSchemas(ctx, kind, name, phys, db)
	switch {
	case err != nil:
		return routineNone, err
	case schemas[phys]:
		return routineOwn, nil // the sandbox's (made there, or copied by another process)
	case !schemas[db]:
		return routineNone, nil
	}
	dropped, err := s.m.droppedRoutine(ctx, s.sb, kind, db, name)
	if err != nil || dropped {
		return routineOwn, err // dropped in the sandbox (by another proxy process, say): gone there
	}
	return routineCopied, s.copyRoutine(ctx, kind, db, name)
}

// routineSchemas are the databases among dbs that have a routine name of
// kind.
func (s *Session) routineSchemas(ctx context.Context, kind, name string, dbs ...string) (map[string]bool, error) {
	in := make([]string, len(dbs))
	for i, db := range dbs {
		in[i] = quote.String(db)
	}
	var rows [][]*string
	err := s.m.reg.WithConn(ctx, func(c SideConn) error {
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
func (s *Session) inSandbox(ctx context.Context, kind, phys, name string) (bool, error) {
	schemas, err := s.routineSchemas(ctx, kind, name, phys)
	return schemas[phys], err
}

// forkBody makes ready what CREATE PROCEDURE needs in the sandbox: every
// table its body names forked whole (or placed, when production does not
// have it) — so the body, rewritten once, names the sandbox's copies
// whatever the sandbox forks later —, the sandbox's information_schema
// views if the body reads them, and the database the procedure goes in,
// with the sandbox recorded in the registry (which keeps that database
// from the reaper).
func (s *Session) forkBody(ctx context.Context, st rewrite.Statement, ddl bool) error {
	for _, b := range st.Routine.Body {
		for _, bs := range b.Statements {
			first, err := s.bodyFirst(ctx, bs)
			if err != nil {
				return err
			}
			for _, t := range append(append(append([]rewrite.Table{}, bs.Writes...), bs.Reads...), first...) {
				if infoschema.Virtual(t) {
					continue
				}
				if _, _, err := s.ensure(ctx, t, forker.Full); err != nil {
					return err
				}
			}
			// The body may change the tables' structure when it runs.
			if err := s.stopCapturesFor(ctx, bs, ddl); err != nil {
				return err
			}
		}
		if infoschema.Uses(b) {
			if err := s.m.ensureInfoViews(ctx, s.sb); err != nil {
				return err
			}
		}
	}
	db := st.Routine.DB(st.DB)
	phys := s.routineDB(db)
	return s.m.reg.WithConn(ctx, func(c SideConn) error {
		if err := s.m.reg.Persist(ctx, c, s.sb); err != nil {
			return err
		}
		return s.m.fk.CreateSchema(ctx, c, db, phys)
	})
}

// bodyFirst places the functions a statement of a stored program's body
// calls and lists the tables it needs forked whole first (forkFirst).
func (s *Session) bodyFirst(ctx context.Context, bs rewrite.Statement) ([]rewrite.Table, error) {
	if _, err := s.placeFunctions(ctx, bs); err != nil {
		return nil, err
	}
	return s.forkFirst(ctx, bs)
}
