// Package infoschema says what information_schema holds for a sandbox: the
// views the proxy mirrors per sandbox (Views) and for production, the
// tables a sandboxing session may read as they are (Safe, Known), the ones
// that show the whole server (ServerWide), the process list a session may
// see (OwnOnly), and the SHOW statements a sandbox answers as queries of
// its views (Shown, ShowSQL).
package infoschema

import (
	"context"
	"fmt"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// View is one information_schema view the sandbox mirrors: pairs of
// (schema column, table column) naming a table, mapped through the
// registry; the first pair is the row's own table. schemaCols are further
// columns that hold the same database as the first pair's schema.
type View struct {
	Name       string
	Pairs      [][2]string
	SchemaCols []string
	// routineSchema is, for the views of stored routines, the column of
	// their database: a sandbox's own procedures are in its databases
	// (sandbox/objects), which it sees under their logical names; every other
	// database of the proxy is left out.
	RoutineSchema string
	// routineName is the column of their name: a production routine the
	// sandbox has its own of the same name and type (a copy made at its
	// CALL, sandbox/objects) is left out, the sandbox's stands for it.
	RoutineName string
	// order is the order of the view's rows, as the server lists its own
	// table's (columns by their position in their table); the view's
	// joins would otherwise list them in any order.
	Order []string
}

var Views = []View{
	{Name: "TABLES", Pairs: [][2]string{{"TABLE_SCHEMA", "TABLE_NAME"}}},
	{Name: "COLUMNS", Pairs: [][2]string{{"TABLE_SCHEMA", "TABLE_NAME"}}, Order: []string{"TABLE_SCHEMA", "TABLE_NAME", "ORDINAL_POSITION"}},
	{Name: "STATISTICS", Pairs: [][2]string{{"TABLE_SCHEMA", "TABLE_NAME"}}, SchemaCols: []string{"INDEX_SCHEMA"}},
	{Name: "TABLE_CONSTRAINTS", Pairs: [][2]string{{"TABLE_SCHEMA", "TABLE_NAME"}}, SchemaCols: []string{"CONSTRAINT_SCHEMA"}},
	{Name: "KEY_COLUMN_USAGE", Pairs: [][2]string{{"TABLE_SCHEMA", "TABLE_NAME"}, {"REFERENCED_TABLE_SCHEMA", "REFERENCED_TABLE_NAME"}},
		SchemaCols: []string{"CONSTRAINT_SCHEMA"}},
	{Name: "REFERENTIAL_CONSTRAINTS", Pairs: [][2]string{{"CONSTRAINT_SCHEMA", "TABLE_NAME"}, {"UNIQUE_CONSTRAINT_SCHEMA", "REFERENCED_TABLE_NAME"}}},
	{Name: "CHECK_CONSTRAINTS", Pairs: [][2]string{{"CONSTRAINT_SCHEMA", "TABLE_NAME"}}},
	{Name: "VIEWS", Pairs: [][2]string{{"TABLE_SCHEMA", "TABLE_NAME"}}},
	{Name: "PARTITIONS", Pairs: [][2]string{{"TABLE_SCHEMA", "TABLE_NAME"}}},
	// A trigger is in its table's database: forks carry production's,
	// and a sandbox makes its own (sandbox/objects/triggers.go).
	{Name: "TRIGGERS", Pairs: [][2]string{{"EVENT_OBJECT_SCHEMA", "EVENT_OBJECT_TABLE"}}, SchemaCols: []string{"TRIGGER_SCHEMA"}},
	// Its sandbox view computes SCHEMA_NAME (a database the sandbox made
	// is its schema's row, named as the sandbox named it).
	{Name: "SCHEMATA", SchemaCols: []string{"SCHEMA_NAME"}},
	{Name: "ROUTINES", RoutineSchema: "ROUTINE_SCHEMA", RoutineName: "ROUTINE_NAME"},
	{Name: "PARAMETERS", RoutineSchema: "SPECIFIC_SCHEMA", RoutineName: "SPECIFIC_NAME"},
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

// OwnConnView is the own-connection view standing for t, if any.
func OwnConnView(t rewrite.Table) (string, bool) {
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

// OwnConnSQL makes the own-connection table v in database db.
func OwnConnSQL(db, v string) string {
	return "CREATE OR REPLACE TEMPORARY TABLE " + quote.Ident(db) + "." + quote.Ident(v) +
		" AS SELECT * FROM performance_schema." + quote.Ident(v) + " WHERE PROCESSLIST_ID = CONNECTION_ID()"
}

// ViewName is the mirrored view called name (any case), if any.
func ViewName(name string) (string, bool) {
	for _, v := range Views {
		if strings.EqualFold(v.Name, name) {
			return v.Name, true
		}
	}
	return "", false
}

// ComputedColumn reports whether the sandbox's view name computes column
// col (it maps the names of tables and their databases).
func ComputedColumn(name, col string) bool {
	for _, v := range Views {
		if v.Name != name {
			continue
		}
		if strings.EqualFold(col, v.RoutineSchema) {
			return true
		}
		for _, pr := range v.Pairs {
			if strings.EqualFold(col, pr[0]) || strings.EqualFold(col, pr[1]) {
				return true
			}
		}
		for _, c := range v.SchemaCols {
			if strings.EqualFold(col, c) {
				return true
			}
		}
	}
	return false
}

// BinCol is an information_schema column comparable with registry columns.
func BinCol(alias, col string) string {
	return "CONVERT(" + alias + "." + col + " USING utf8mb4) COLLATE utf8mb4_bin"
}

// Col is a column of one of the server's information_schema views.
type Col struct {
	Name string
	// charset and collation are the column's ("" for other than
	// character columns).
	Charset, Collation string
}

// Mapped is the column a sandbox's view computes from reg, a registry
// column of the table's logical name (NULL for rows of production), and
// the server's column own: converted to col's character set and
// collation, so that it compares, sorts and is described as the server's
// own (the registry's names are utf8mb4_bin), and NOT NULL where own is.
func (col Col) Mapped(reg, own string) string {
	if col.Charset != "" && col.Collation != "" {
		reg = "CONVERT(" + reg + " USING " + col.Charset + ") COLLATE " + col.Collation
	}
	return "COALESCE(" + reg + ", " + own + ")"
}

// OrderBy is the ORDER BY clause of a view whose rows come in the order
// of the columns cols of its select list ("" for none): a query of the
// view without an ORDER BY of its own gets them so.
func OrderBy(cols []string) string {
	if len(cols) == 0 {
		return ""
	}
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = quote.Ident(c)
	}
	return " ORDER BY " + strings.Join(q, ", ")
}

// droppedRoutines is the table, in a sandbox's information_schema
// database, of production's routines the sandbox dropped: its views of
// routines leave them out.
const DroppedRoutines = "dropped_routines"

// Uses reports whether the analysis reads a mirrored view.
func Uses(a *rewrite.Analysis) bool {
	for _, st := range a.Statements {
		for _, t := range st.Reads {
			if _, ok := ViewName(t.Name); ok && strings.EqualFold(t.DB, "information_schema") {
				return true
			}
			if _, ok := OwnConnView(t); ok {
				return true
			}
		}
	}
	return false
}

// CreateViews creates, on c, a view for each of infoViews the server
// has, with the CREATE statement viewSQL makes from its columns; whose
// names the views in errors ("the sandbox's").
func CreateViews(ctx context.Context, c sideconn.Conn, whose string, viewSQL func(v View, cols []Col) string) error {
	for _, v := range Views {
		rows, err := c.Query(ctx, "SELECT COLUMN_NAME, CHARACTER_SET_NAME, COLLATION_NAME FROM information_schema.COLUMNS "+
			"WHERE TABLE_SCHEMA = 'information_schema' AND TABLE_NAME = "+quote.String(v.Name)+" ORDER BY ORDINAL_POSITION")
		if err != nil {
			return fmt.Errorf("columns of information_schema.%s: %w", v.Name, err)
		}
		if len(rows) == 0 {
			continue // the server has no such view
		}
		cols := make([]Col, len(rows))
		for i, r := range rows {
			cols[i] = Col{Name: strings.ToUpper(sideconn.Str(r[0]))}
			if len(r) == 3 {
				cols[i].Charset, cols[i].Collation = sideconn.Str(r[1]), sideconn.Str(r[2])
			}
		}
		if _, err := c.Exec(ctx, viewSQL(v, cols)); err != nil {
			return fmt.Errorf("create %s information_schema.%s: %w", whose, v.Name, err)
		}
	}
	return nil
}

// ProcessList asks the proxy to answer SHOW [FULL] PROCESSLIST itself: run
// SQL on the session's own upstream connection and keep only the rows of
// the connections of the same proxy user.
type ProcessList struct {
	// Full is SHOW FULL PROCESSLIST (Info not cut at 100 characters).
	Full bool
	// Text is the client's statement, run upstream as sent, so that the
	// caller's own row shows it in Info as a direct connection does
	// (PyMySQL's test_issue_36 finds its connection by Info = "show
	// processlist"); "" for COM_PROCESS_INFO.
	Text string
}

// SQL is the statement the proxy runs upstream to answer the process list;
// its rows are then filtered.
func (p *ProcessList) SQL() string {
	if p.Text != "" {
		return p.Text
	}
	if p.Full {
		return "SHOW FULL PROCESSLIST"
	}
	return "SHOW PROCESSLIST"
}

// OwnOnly keeps an input of a sandboxing session (in a sandbox or not) to
// what its proxy user may see: SHOW [FULL] PROCESSLIST is answered by the
// proxy (the returned ProcessList), statements that show the whole server
// are refused, and so is SHOW DATABASES among other statements (the proxy
// answers it from views without its own databases only when it comes
// alone).
func OwnOnly(a *rewrite.Analysis, prepared bool) (*ProcessList, error) {
	pl, err := processList(a, prepared)
	if err != nil || pl != nil {
		return pl, err
	}
	if why := a.ServerWide(); why != "" {
		return nil, RefuseShared(why)
	}
	if len(a.Statements) > 1 {
		for _, st := range a.Statements {
			if st.Show != nil && (st.Show.What == "DATABASES" || strings.HasSuffix(st.Show.What, " STATUS") && st.Show.What != "TABLE STATUS") {
				return nil, rewrite.Refuse(wire.ErOptionPreventsStatement, "the proxy answers SHOW %s without its own databases only "+
					"when it is sent alone; send it without other statements", st.Show.What)
			}
		}
	}
	return nil, nil
}

// processList finds SHOW [FULL] PROCESSLIST in a: the proxy answers it,
// alone and as a plain statement only.
func processList(a *rewrite.Analysis, prepared bool) (*ProcessList, error) {
	var pl *ProcessList
	for _, st := range a.Statements {
		if st.Kind == rewrite.KindShowProcesslist {
			pl = &ProcessList{Full: st.Show != nil && st.Show.Full}
		}
	}
	switch {
	case pl == nil:
		return nil, nil
	case len(a.Statements) > 1:
		return nil, rewrite.Refuse(wire.ErOptionPreventsStatement, "the proxy answers SHOW PROCESSLIST itself (with your own connections only) "+
			"and only when it is sent alone; send it without other statements")
	case prepared:
		return nil, rewrite.Refuse(wire.ErUnsupportedPS, "the proxy answers SHOW PROCESSLIST itself (with your own connections only), "+
			"which cannot be prepared; send it as a plain statement")
	}
	return pl, nil
}

// ProductionInfoSchema is the database holding information_schema views
// for sessions outside any sandbox: the server's views without the proxy's
// own databases.
func ProductionSchema(prefix string) string { return prefix + "_production" }

// ReadsViews reports whether the analysis names a mirrored
// information_schema view (read, or named by a statement the parser could
// not read).
func ReadsViews(a *rewrite.Analysis) bool {
	for _, st := range a.Statements {
		for _, t := range append(st.Reads, st.Names...) {
			if _, ok := ViewName(t.Name); ok && strings.EqualFold(t.DB, "information_schema") {
				return true
			}
		}
	}
	return false
}

// ProductionResolver maps information_schema's listings to the production views
// and leaves every other table where it is.
type ProductionResolver struct{ Prefix string }

// Resolve implements rewrite.Resolver.
func (r ProductionResolver) Resolve(t rewrite.Table, _ bool) (rewrite.Table, bool, error) {
	if strings.EqualFold(t.DB, "information_schema") {
		if v, ok := ViewName(t.Name); ok {
			return rewrite.Table{DB: ProductionSchema(r.Prefix), Name: v}, true, nil
		}
	}
	return t, false, nil
}

// ServerWide says why a statement reads what the whole server holds, every
// sandbox's tables and statements included: the binary and relay logs, the
// table cache, InnoDB's internal dictionary and statistics, the logs kept
// in tables, performance_schema ("" when it does not).
func ServerWide(st rewrite.Statement) string {
	switch st.Kind {
	case rewrite.KindShowBinlogEvents, rewrite.KindShowRelaylogEvents, rewrite.KindShowOpenTables, rewrite.KindShowProcesslist:
		return string(st.Kind) + " shows what the whole server holds, every sandbox's tables and statements included"
	}
	for _, t := range append(st.Reads, st.Names...) {
		db, name := strings.ToLower(t.DB), strings.ToLower(t.Name)
		switch {
		case db == "information_schema" && name == "processlist":
			return t.Quoted() + " lists every connection of the server, every sandbox's statements included " +
				"(SHOW PROCESSLIST lists your own)"
		case db == "performance_schema",
			db == "information_schema" && (strings.HasPrefix(name, "innodb_") || name == "table_statistics" ||
				name == "index_statistics" || name == "geometry_columns" || name == "metadata_lock_info" ||
				name == "query_cache_info" || name == "user_statistics" || name == "client_statistics"),
			db == "mysql" && serverWideTables[name]:
			return t.Quoted() + " holds what the whole server holds, every sandbox's tables and statements included"
		case db == "information_schema" && !Known(name):
			return t.Quoted() + " is not one of the information_schema tables the proxy knows to show only what " +
				"a sandbox may see (it may list every database or connection of the server)"
		}
	}
	return ""
}

// OwnConnOnly is st without the reads a sandbox makes through its
// own-connection views (ownConnViews), which show nothing of other
// connections.
func OwnConnOnly(st rewrite.Statement) rewrite.Statement {
	var reads []rewrite.Table
	for _, t := range st.Reads {
		if _, ok := OwnConnView(t); !ok {
			reads = append(reads, t)
		}
	}
	st.Reads = reads
	return st
}

// infoSchemaSafe are the information_schema tables (lower case) that name
// nothing of the proxy's databases nor of other connections: server-wide
// settings and counters, the account's own grants, its own session, and
// events, which the proxy's databases never hold (a sandbox's procedures
// and triggers are in its databases: ROUTINES, PARAMETERS and TRIGGERS are
// mirrored). Those that list
// tables are mirrored (infoViews); the others are refused (fail closed), so
// a table a newer server adds is refused until it is looked at.
var Safe = map[string]bool{
	"all_plugins": true, "applicable_roles": true, "character_sets": true, "collations": true,
	"collation_character_set_applicability": true, "column_privileges": true, "enabled_roles": true, "engines": true,
	"events": true, "files": true, "global_status": true, "global_variables": true, "keywords": true, "key_caches": true,
	"optimizer_trace": true, "plugins": true, "profiling": true,
	"schema_privileges": true, "session_status": true, "session_variables": true, "spatial_ref_sys": true,
	"sql_functions": true, "system_variables": true, "tablespaces": true, "table_privileges": true,
	"thread_pool_groups": true, "thread_pool_queues": true, "thread_pool_stats": true, "thread_pool_waits": true,
	"user_privileges": true, "user_variables": true,
}

// Known reports information_schema tables (any case) a sandboxing
// session may read: mirrored ones and infoSchemaSafe.
func Known(name string) bool {
	if _, ok := ViewName(name); ok {
		return true
	}
	return Safe[strings.ToLower(name)]
}

// serverWideTables are the tables of the mysql schema that describe or log
// every database of the server.
var serverWideTables = map[string]bool{
	"innodb_table_stats": true, "innodb_index_stats": true, "table_stats": true, "column_stats": true,
	"index_stats": true, "general_log": true, "slow_log": true,
	"proc": true, // every sandbox's procedures (sandbox/objects)
}

// Virtual reports databases whose tables the proxy never forks nor
// looks up: the server's own views, which read nothing of production's.
func Virtual(t rewrite.Table) bool {
	return strings.EqualFold(t.DB, "information_schema") || strings.EqualFold(t.DB, "performance_schema")
}

// RefuseShared is the error for a statement sharedState found.
func RefuseShared(why string) error {
	return rewrite.Refuse(wire.ErOptionPreventsStatement, "%s, which the sessions of every user of this proxy share; it is refused through the "+
		"proxy (run it on a direct connection)", why)
}
