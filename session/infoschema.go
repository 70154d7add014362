package session

import (
	"context"
	"fmt"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/infoschema"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
)

// A sandbox's information_schema: for each view below the proxy keeps a
// view of the same name in the sandbox's own database sandbox.InfoSchema(prefix,
// id), and rewrites a sandboxed session's references to
// information_schema.<view> to it. Each view is the server's
// information_schema view with
//
//   - rows of this sandbox's tables (forks, schema-only forks, tables
//     created in the sandbox) under their logical database and table names;
//   - rows of production tables the sandbox has forked, created or dropped
//     left out (the sandbox's version, or nothing, stands in for them);
//   - rows of every other database of the proxy (other sandboxes, the
//     registry) left out.
//
// The views read the registry live, so they need no update as tables are
// forked; they are made once per sandbox (and process), on first use. They
// run with the reader's privileges (SQL SECURITY INVOKER), as
// information_schema itself does: a proxy user mapped to an upstream
// account that sees less than the proxy's own must not see more through
// them.

// readOwnConn fills, on the session's own connection, the own-connection
// tables a reads.
func (s *Session) readOwnConn(ctx context.Context, a *rewrite.Analysis) error {
	done := map[string]bool{}
	for _, st := range a.Statements {
		for _, t := range st.Reads {
			if v, ok := infoschema.OwnConnView(t); ok && !done[v] {
				done[v] = true
				if _, err := s.up.Query(ctx, infoschema.OwnConnSQL(sandbox.InfoSchema(s.m.cfg.Prefix, s.sb.ID), v)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// viewSQL is the definition of v for sandbox id; cols are the server's
// columns of information_schema.<v.name>, in order.
func (m *Manager) viewSQL(v infoschema.View, id string, cols []infoschema.Col) string {
	if v.RoutineSchema != "" {
		return m.routineViewSQL(v, id, cols)
	}
	reg := m.names.Q("tables")
	sid := quote.String(id)
	// A table the registry records absent or dropped whose physical table
	// exists is one being made, by the statement that reads the view (a
	// CREATE TABLE … SELECT FROM information_schema.TABLES lists its own
	// table, as on the server) or one not refreshed yet: it is there.
	live := "('" + string(sandbox.KindFork) + "', '" + string(sandbox.KindSchema) + "', '" + string(sandbox.KindCreated) + "', '" + string(sandbox.KindAbsent) + "', '" + string(sandbox.KindDropped) + "')"
	mapped := map[string][2]string{} // column: registry column, own column
	var joins []string
	for i, pr := range v.Pairs {
		r := fmt.Sprintf("r%d", i)
		joins = append(joins, fmt.Sprintf("LEFT JOIN %s %s ON %s.sandbox_id = %s AND %s.kind IN %s AND %s.phys_db = %s AND %s.phys_tbl = %s",
			reg, r, r, sid, r, live, r, infoschema.BinCol("i", pr[0]), r, infoschema.BinCol("i", pr[1])))
		mapped[pr[0]] = [2]string{r + ".db", "i." + pr[0]}
		mapped[pr[1]] = [2]string{r + ".tbl", "i." + pr[1]}
	}
	for _, c := range v.SchemaCols {
		mapped[c] = mapped[v.Pairs[0][0]]
	}
	sel := make([]string, len(cols))
	for i, c := range cols {
		if e, ok := mapped[c.Name]; ok {
			sel[i] = c.Mapped(e[0], e[1]) + " AS " + quote.Ident(c.Name)
		} else {
			sel[i] = "i." + quote.Ident(c.Name)
		}
	}
	internal := quote.LikePrefix(m.cfg.Prefix)
	var where string
	if len(v.Pairs) == 0 { // SCHEMATA
		where = "i.SCHEMA_NAME NOT LIKE " + internal
	} else {
		s, t := v.Pairs[0][0], v.Pairs[0][1]
		// Either a row of this sandbox's table, or a production row the
		// sandbox has not replaced or hidden.
		where = "r0.sandbox_id IS NOT NULL OR (i." + s + " NOT LIKE " + internal + " AND NOT EXISTS (SELECT 1 FROM " + reg +
			" h WHERE h.sandbox_id = " + sid + " AND h.kind IN ('" + string(sandbox.KindFork) + "', '" + string(sandbox.KindSchema) + "', '" + string(sandbox.KindCreated) + "', '" + string(sandbox.KindDropped) +
			"') AND h.db = " + infoschema.BinCol("i", s) + " AND h.tbl = " + infoschema.BinCol("i", t) + "))"
	}
	if v.Name == "TRIGGERS" {
		// The proxy's capture triggers (capture.go) are not the sandbox's.
		where = "(" + where + ") AND i.TRIGGER_NAME NOT LIKE " + internal
	}
	return "CREATE OR REPLACE SQL SECURITY INVOKER VIEW " + quote.Ident(sandbox.InfoSchema(m.cfg.Prefix, id)) + "." + quote.Ident(v.Name) +
		" AS SELECT " + strings.Join(sel, ", ") + " FROM information_schema." + v.Name + " i " + strings.Join(joins, " ") + " WHERE " + where +
		infoschema.OrderBy(v.Order)
}

// routineViewSQL is the definition of a view of stored routines for
// sandbox id: production's routines, and the sandbox's own with their
// database told back (prefix_<id>_<db> is <db>), nothing of other
// sandboxes.
func (m *Manager) routineViewSQL(v infoschema.View, id string, cols []infoschema.Col) string {
	own := sandbox.SchemaPrefix(m.cfg.Prefix, id)
	col := "i." + quote.Ident(v.RoutineSchema)
	mine := col + " LIKE " + quote.LikePrefix(own)
	sel := make([]string, len(cols))
	for i, c := range cols {
		if c.Name == v.RoutineSchema {
			sel[i] = "CASE WHEN " + mine + " THEN SUBSTRING(" + col + ", " + fmt.Sprint(len(own)+1) + ") ELSE " + col + " END AS " + quote.Ident(c.Name)
		} else {
			sel[i] = "i." + quote.Ident(c.Name)
		}
	}
	internal := quote.LikePrefix(m.cfg.Prefix)
	name := quote.Ident(v.RoutineName)
	shadowed := "EXISTS (SELECT 1 FROM information_schema." + v.Name + " j WHERE j." + quote.Ident(v.RoutineSchema) +
		" = CONCAT(" + quote.String(own) + ", " + col + ") AND j." + name + " = i." + name + " AND j.ROUTINE_TYPE = i.ROUTINE_TYPE)"
	dropped := "EXISTS (SELECT 1 FROM " + quote.Ident(sandbox.InfoSchema(m.cfg.Prefix, id)) + "." + quote.Ident(infoschema.DroppedRoutines) +
		" d WHERE d.db = " + col + " AND d.name = i." + name + " AND d.type = i.ROUTINE_TYPE)"
	return "CREATE OR REPLACE SQL SECURITY INVOKER VIEW " + quote.Ident(sandbox.InfoSchema(m.cfg.Prefix, id)) + "." + quote.Ident(v.Name) +
		" AS SELECT " + strings.Join(sel, ", ") + " FROM information_schema." + v.Name + " i WHERE (" + col + " NOT LIKE " + internal +
		" AND NOT " + shadowed + " AND NOT " + dropped + ") OR " + mine
}

// ensureInfoViews makes sb's information_schema views once.
func (m *Manager) ensureInfoViews(ctx context.Context, sb *Sandbox) error {
	if sb.HasInfoViews() {
		return nil
	}
	defer sb.LockForks()()
	err := m.reg.WithConn(ctx, func(c SideConn) error {
		if err := m.reg.Persist(ctx, c, sb); err != nil {
			return err
		}
		if _, err := c.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+quote.Ident(sandbox.InfoSchema(m.cfg.Prefix, sb.ID))); err != nil {
			return fmt.Errorf("create the sandbox's information_schema: %w", err)
		}
		// Names compare as information_schema's do.
		if _, err := c.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+quote.Ident(sandbox.InfoSchema(m.cfg.Prefix, sb.ID))+"."+
			quote.Ident(infoschema.DroppedRoutines)+" (db VARCHAR(64) NOT NULL, name VARCHAR(64) NOT NULL, type VARCHAR(13) NOT NULL, "+
			"PRIMARY KEY (db, name, type)) CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci"); err != nil {
			return fmt.Errorf("create the sandbox's table of dropped routines: %w", err)
		}
		return infoschema.CreateViews(ctx, c, "the sandbox's", func(v infoschema.View, cols []infoschema.Col) string { return m.viewSQL(v, sb.ID, cols) })
	})
	if err != nil {
		return err
	}
	sb.MarkInfoViews()
	return nil
}
