package session

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
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

// infoView is one information_schema view the sandbox mirrors: pairs of
// (schema column, table column) naming a table, mapped through the
// registry; the first pair is the row's own table. schemaCols are further
// columns that hold the same database as the first pair's schema.
type infoView struct {
	name       string
	pairs      [][2]string
	schemaCols []string
	// routineSchema is, for the views of stored routines, the column of
	// their database: a sandbox's own procedures are in its databases
	// (routines.go), which it sees under their logical names; every other
	// database of the proxy is left out.
	routineSchema string
	// routineName is the column of their name: a production routine the
	// sandbox has its own of the same name and type (a copy made at its
	// CALL, procedures.go) is left out, the sandbox's stands for it.
	routineName string
	// order is the order of the view's rows, as the server lists its own
	// table's (columns by their position in their table); the view's
	// joins would otherwise list them in any order.
	order []string
}

var infoViews = []infoView{
	{name: "TABLES", pairs: [][2]string{{"TABLE_SCHEMA", "TABLE_NAME"}}},
	{name: "COLUMNS", pairs: [][2]string{{"TABLE_SCHEMA", "TABLE_NAME"}}, order: []string{"TABLE_SCHEMA", "TABLE_NAME", "ORDINAL_POSITION"}},
	{name: "STATISTICS", pairs: [][2]string{{"TABLE_SCHEMA", "TABLE_NAME"}}, schemaCols: []string{"INDEX_SCHEMA"}},
	{name: "TABLE_CONSTRAINTS", pairs: [][2]string{{"TABLE_SCHEMA", "TABLE_NAME"}}, schemaCols: []string{"CONSTRAINT_SCHEMA"}},
	{name: "KEY_COLUMN_USAGE", pairs: [][2]string{{"TABLE_SCHEMA", "TABLE_NAME"}, {"REFERENCED_TABLE_SCHEMA", "REFERENCED_TABLE_NAME"}},
		schemaCols: []string{"CONSTRAINT_SCHEMA"}},
	{name: "REFERENTIAL_CONSTRAINTS", pairs: [][2]string{{"CONSTRAINT_SCHEMA", "TABLE_NAME"}, {"UNIQUE_CONSTRAINT_SCHEMA", "REFERENCED_TABLE_NAME"}}},
	{name: "CHECK_CONSTRAINTS", pairs: [][2]string{{"CONSTRAINT_SCHEMA", "TABLE_NAME"}}},
	{name: "VIEWS", pairs: [][2]string{{"TABLE_SCHEMA", "TABLE_NAME"}}},
	{name: "PARTITIONS", pairs: [][2]string{{"TABLE_SCHEMA", "TABLE_NAME"}}},
	// A trigger is in its table's database: forks carry production's,
	// and a sandbox makes its own (triggerddl.go).
	{name: "TRIGGERS", pairs: [][2]string{{"EVENT_OBJECT_SCHEMA", "EVENT_OBJECT_TABLE"}}, schemaCols: []string{"TRIGGER_SCHEMA"}},
	{name: "SCHEMATA"},
	{name: "ROUTINES", routineSchema: "ROUTINE_SCHEMA", routineName: "ROUTINE_NAME"},
	{name: "PARAMETERS", routineSchema: "SPECIFIC_SCHEMA", routineName: "SPECIFIC_NAME"},
}

// ownConnViews are performance_schema tables a sandbox reads through a
// temporary table of the same name in its information_schema database,
// holding only the reader's own connection's rows (PROCESSLIST_ID =
// CONNECTION_ID()), made on the session's own connection before each
// statement that reads it: the rows of every other connection of the
// upstream account — other proxy users', the proxy's own — stay out.
// session_account_connect_attrs is what drivers read their connection
// attributes back from (go-sql-driver's TestConnectionAttributes); any
// account may read it. (MariaDB refuses views of performance_schema to an
// account without privileges on it, and temporary tables are the session's
// own.)
var ownConnViews = []string{"session_account_connect_attrs"}

// ownConnView is the own-connection view standing for t, if any.
func ownConnView(t rewrite.Table) (string, bool) {
	if !strings.EqualFold(t.DB, "performance_schema") {
		return "", false
	}
	for _, v := range ownConnViews {
		if strings.EqualFold(v, t.Name) {
			return v, true
		}
	}
	return "", false
}

// ownConnSQL makes the own-connection table v in database db.
func ownConnSQL(db, v string) string {
	return "CREATE OR REPLACE TEMPORARY TABLE " + quote.Ident(db) + "." + quote.Ident(v) +
		" AS SELECT * FROM performance_schema." + quote.Ident(v) + " WHERE PROCESSLIST_ID = CONNECTION_ID()"
}

// readOwnConn fills, on the session's own connection, the own-connection
// tables a reads.
func (s *Session) readOwnConn(ctx context.Context, a *rewrite.Analysis) error {
	done := map[string]bool{}
	for _, st := range a.Statements {
		for _, t := range st.Reads {
			if v, ok := ownConnView(t); ok && !done[v] {
				done[v] = true
				if _, err := s.up.Query(ctx, ownConnSQL(sandbox.InfoSchema(s.m.cfg.Prefix, s.sb.ID), v)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// infoViewName is the mirrored view called name (any case), if any.
func infoViewName(name string) (string, bool) {
	for _, v := range infoViews {
		if strings.EqualFold(v.name, name) {
			return v.name, true
		}
	}
	return "", false
}

// computedColumn reports whether the sandbox's view name computes column
// col (it maps the names of tables and their databases).
func computedColumn(name, col string) bool {
	for _, v := range infoViews {
		if v.name != name {
			continue
		}
		if strings.EqualFold(col, v.routineSchema) {
			return true
		}
		for _, pr := range v.pairs {
			if strings.EqualFold(col, pr[0]) || strings.EqualFold(col, pr[1]) {
				return true
			}
		}
		for _, c := range v.schemaCols {
			if strings.EqualFold(col, c) {
				return true
			}
		}
	}
	return false
}

// binCol is an information_schema column comparable with registry columns.
func binCol(alias, col string) string {
	return "CONVERT(" + alias + "." + col + " USING utf8mb4) COLLATE utf8mb4_bin"
}

// infoCol is a column of one of the server's information_schema views.
type infoCol struct {
	name string
	// charset and collation are the column's ("" for other than
	// character columns).
	charset, collation string
}

// mapped is the column a sandbox's view computes from reg, a registry
// column of the table's logical name (NULL for rows of production), and
// the server's column own: converted to col's character set and
// collation, so that it compares, sorts and is described as the server's
// own (the registry's names are utf8mb4_bin), and NOT NULL where own is.
func (col infoCol) mapped(reg, own string) string {
	if col.charset != "" && col.collation != "" {
		reg = "CONVERT(" + reg + " USING " + col.charset + ") COLLATE " + col.collation
	}
	return "COALESCE(" + reg + ", " + own + ")"
}

// viewSQL is the definition of v for sandbox id; cols are the server's
// columns of information_schema.<v.name>, in order.
func (m *Manager) viewSQL(v infoView, id string, cols []infoCol) string {
	if v.routineSchema != "" {
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
	for i, pr := range v.pairs {
		r := fmt.Sprintf("r%d", i)
		joins = append(joins, fmt.Sprintf("LEFT JOIN %s %s ON %s.sandbox_id = %s AND %s.kind IN %s AND %s.phys_db = %s AND %s.phys_tbl = %s",
			reg, r, r, sid, r, live, r, binCol("i", pr[0]), r, binCol("i", pr[1])))
		mapped[pr[0]] = [2]string{r + ".db", "i." + pr[0]}
		mapped[pr[1]] = [2]string{r + ".tbl", "i." + pr[1]}
	}
	for _, c := range v.schemaCols {
		mapped[c] = mapped[v.pairs[0][0]]
	}
	sel := make([]string, len(cols))
	for i, c := range cols {
		if e, ok := mapped[c.name]; ok {
			sel[i] = c.mapped(e[0], e[1]) + " AS " + quote.Ident(c.name)
		} else {
			sel[i] = "i." + quote.Ident(c.name)
		}
	}
	internal := quote.LikePrefix(m.cfg.Prefix)
	var where string
	if len(v.pairs) == 0 { // SCHEMATA
		where = "i.SCHEMA_NAME NOT LIKE " + internal
	} else {
		s, t := v.pairs[0][0], v.pairs[0][1]
		// Either a row of this sandbox's table, or a production row the
		// sandbox has not replaced or hidden.
		where = "r0.sandbox_id IS NOT NULL OR (i." + s + " NOT LIKE " + internal + " AND NOT EXISTS (SELECT 1 FROM " + reg +
			" h WHERE h.sandbox_id = " + sid + " AND h.kind IN ('" + string(sandbox.KindFork) + "', '" + string(sandbox.KindSchema) + "', '" + string(sandbox.KindCreated) + "', '" + string(sandbox.KindDropped) +
			"') AND h.db = " + binCol("i", s) + " AND h.tbl = " + binCol("i", t) + "))"
	}
	if v.name == "TRIGGERS" {
		// The proxy's capture triggers (capture.go) are not the sandbox's.
		where = "(" + where + ") AND i.TRIGGER_NAME NOT LIKE " + internal
	}
	return "CREATE OR REPLACE SQL SECURITY INVOKER VIEW " + quote.Ident(sandbox.InfoSchema(m.cfg.Prefix, id)) + "." + quote.Ident(v.name) +
		" AS SELECT " + strings.Join(sel, ", ") + " FROM information_schema." + v.name + " i " + strings.Join(joins, " ") + " WHERE " + where +
		orderBy(v.order)
}

// orderBy is the ORDER BY clause of a view whose rows come in the order
// of the columns cols of its select list ("" for none): a query of the
// view without an ORDER BY of its own gets them so.
func orderBy(cols []string) string {
	if len(cols) == 0 {
		return ""
	}
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = quote.Ident(c)
	}
	return " ORDER BY " + strings.Join(q, ", ")
}

// routineViewSQL is the definition of a view of stored routines for
// sandbox id: production's routines, and the sandbox's own with their
// database told back (prefix_<id>_<db> is <db>), nothing of other
// sandboxes.
func (m *Manager) routineViewSQL(v infoView, id string, cols []infoCol) string {
	own := sandbox.SchemaPrefix(m.cfg.Prefix, id)
	col := "i." + quote.Ident(v.routineSchema)
	mine := col + " LIKE " + quote.LikePrefix(own)
	sel := make([]string, len(cols))
	for i, c := range cols {
		if c.name == v.routineSchema {
			sel[i] = "CASE WHEN " + mine + " THEN SUBSTRING(" + col + ", " + fmt.Sprint(len(own)+1) + ") ELSE " + col + " END AS " + quote.Ident(c.name)
		} else {
			sel[i] = "i." + quote.Ident(c.name)
		}
	}
	internal := quote.LikePrefix(m.cfg.Prefix)
	name := quote.Ident(v.routineName)
	shadowed := "EXISTS (SELECT 1 FROM information_schema." + v.name + " j WHERE j." + quote.Ident(v.routineSchema) +
		" = CONCAT(" + quote.String(own) + ", " + col + ") AND j." + name + " = i." + name + " AND j.ROUTINE_TYPE = i.ROUTINE_TYPE)"
	dropped := "EXISTS (SELECT 1 FROM " + quote.Ident(sandbox.InfoSchema(m.cfg.Prefix, id)) + "." + quote.Ident(droppedRoutines) +
		" d WHERE d.db = " + col + " AND d.name = i." + name + " AND d.type = i.ROUTINE_TYPE)"
	return "CREATE OR REPLACE SQL SECURITY INVOKER VIEW " + quote.Ident(sandbox.InfoSchema(m.cfg.Prefix, id)) + "." + quote.Ident(v.name) +
		" AS SELECT " + strings.Join(sel, ", ") + " FROM information_schema." + v.name + " i WHERE (" + col + " NOT LIKE " + internal +
		" AND NOT " + shadowed + " AND NOT " + dropped + ") OR " + mine
}

// droppedRoutines is the table, in a sandbox's information_schema
// database, of production's routines the sandbox dropped: its views of
// routines leave them out.
const droppedRoutines = "dropped_routines"

// droppedRoutine reports whether sb dropped production's routine db.name
// of kind (noteDroppedRoutine), as any proxy process recorded it.
func (m *Manager) droppedRoutine(ctx context.Context, sb *Sandbox, kind, db, name string) (bool, error) {
	var dropped bool
	err := m.reg.WithConn(ctx, func(c SideConn) error {
		rows, err := c.Query(ctx, "SELECT 1 FROM "+quote.Ident(sandbox.InfoSchema(m.cfg.Prefix, sb.ID))+"."+quote.Ident(droppedRoutines)+
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
func (m *Manager) noteDroppedRoutine(ctx context.Context, sb *Sandbox, kind, db, name string) error {
	if err := m.ensureInfoViews(ctx, sb); err != nil {
		return err
	}
	return m.reg.WithConn(ctx, func(c SideConn) error {
		_, err := c.Exec(ctx, "INSERT IGNORE INTO "+quote.Ident(sandbox.InfoSchema(m.cfg.Prefix, sb.ID))+"."+quote.Ident(droppedRoutines)+
			" VALUES ("+quote.String(db)+", "+quote.String(name)+", "+quote.String(kind)+")")
		if err != nil {
			return fmt.Errorf("record the dropped %s %s.%s: %w", strings.ToLower(kind), db, name, err)
		}
		return nil
	})
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
			quote.Ident(droppedRoutines)+" (db VARCHAR(64) NOT NULL, name VARCHAR(64) NOT NULL, type VARCHAR(13) NOT NULL, "+
			"PRIMARY KEY (db, name, type)) CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci"); err != nil {
			return fmt.Errorf("create the sandbox's table of dropped routines: %w", err)
		}
		return createInfoViews(ctx, c, "the sandbox's", func(v infoView, cols []infoCol) string { return m.viewSQL(v, sb.ID, cols) })
	})
	if err != nil {
		return err
	}
	sb.MarkInfoViews()
	return nil
}

// usesInfoSchema reports whether the analysis reads a mirrored view.
func usesInfoSchema(a *rewrite.Analysis) bool {
	for _, st := range a.Statements {
		for _, t := range st.Reads {
			if _, ok := infoViewName(t.Name); ok && strings.EqualFold(t.DB, "information_schema") {
				return true
			}
			if _, ok := ownConnView(t); ok {
				return true
			}
		}
	}
	return false
}

// createInfoViews creates, on c, a view for each of infoViews the server
// has, with the CREATE statement viewSQL makes from its columns; whose
// names the views in errors ("the sandbox's").
func createInfoViews(ctx context.Context, c SideConn, whose string, viewSQL func(v infoView, cols []infoCol) string) error {
	for _, v := range infoViews {
		rows, err := c.Query(ctx, "SELECT COLUMN_NAME, CHARACTER_SET_NAME, COLLATION_NAME FROM information_schema.COLUMNS "+
			"WHERE TABLE_SCHEMA = 'information_schema' AND TABLE_NAME = "+quote.String(v.name)+" ORDER BY ORDINAL_POSITION")
		if err != nil {
			return fmt.Errorf("columns of information_schema.%s: %w", v.name, err)
		}
		if len(rows) == 0 {
			continue // the server has no such view
		}
		cols := make([]infoCol, len(rows))
		for i, r := range rows {
			cols[i] = infoCol{name: strings.ToUpper(sideconn.Str(r[0]))}
			if len(r) == 3 {
				cols[i].charset, cols[i].collation = sideconn.Str(r[1]), sideconn.Str(r[2])
			}
		}
		if _, err := c.Exec(ctx, viewSQL(v, cols)); err != nil {
			return fmt.Errorf("create %s information_schema.%s: %w", whose, v.name, err)
		}
	}
	return nil
}
