package infoschema

import (
	"cmp"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// A sandbox answers SHOW [FULL] TABLES, TABLE STATUS, DATABASES, PROCEDURE
// and FUNCTION STATUS and TRIGGERS from its own information_schema views:
// as a query of them with the columns of the server's own SHOW.

// showColumn is one column of a SHOW the sandbox answers from its
// information_schema views: the view's column and the SHOW's label.
type showColumn struct{ col, label string }

// showView is the information_schema view a SHOW of what lists, and the
// columns the server's own SHOW has when the proxy cannot ask it (see
// the session's showDefs, which asks the server for them).
func showView(what string, full bool, nameLabel string) (string, []showColumn) {
	switch what {
	case "DATABASES":
		return "SCHEMATA", []showColumn{{"SCHEMA_NAME", nameLabel}}
	case "PROCEDURE STATUS", "FUNCTION STATUS":
		return "ROUTINES", []showColumn{{"ROUTINE_SCHEMA", "Db"}, {"ROUTINE_NAME", "Name"}, {"ROUTINE_TYPE", "Type"},
			{"DEFINER", "Definer"}, {"LAST_ALTERED", "Modified"}, {"CREATED", "Created"}, {"SECURITY_TYPE", "Security_type"},
			{"ROUTINE_COMMENT", "Comment"}, {"CHARACTER_SET_CLIENT", "character_set_client"},
			{"COLLATION_CONNECTION", "collation_connection"}, {"DATABASE_COLLATION", "Database Collation"}}
	case "TRIGGERS":
		return "TRIGGERS", []showColumn{{"TRIGGER_NAME", "Trigger"}, {"EVENT_MANIPULATION", "Event"}, {"EVENT_OBJECT_TABLE", "Table"},
			{"ACTION_STATEMENT", "Statement"}, {"ACTION_TIMING", "Timing"}, {"CREATED", "Created"}, {"SQL_MODE", "sql_mode"},
			{"DEFINER", "Definer"}, {"CHARACTER_SET_CLIENT", "character_set_client"},
			{"COLLATION_CONNECTION", "collation_connection"}, {"DATABASE_COLLATION", "Database Collation"}}
	case "TABLES":
		cols := []showColumn{{"TABLE_NAME", nameLabel}}
		if full {
			cols = append(cols, showColumn{"TABLE_TYPE", "Table_type"})
		}
		return "TABLES", cols
	}
	return "TABLES", []showColumn{{"TABLE_NAME", "Name"}, {"ENGINE", "Engine"}, {"VERSION", "Version"},
		{"ROW_FORMAT", "Row_format"}, {"TABLE_ROWS", "Rows"}, {"AVG_ROW_LENGTH", "Avg_row_length"},
		{"DATA_LENGTH", "Data_length"}, {"MAX_DATA_LENGTH", "Max_data_length"}, {"INDEX_LENGTH", "Index_length"},
		{"DATA_FREE", "Data_free"}, {"AUTO_INCREMENT", "Auto_increment"}, {"CREATE_TIME", "Create_time"},
		{"UPDATE_TIME", "Update_time"}, {"CHECK_TIME", "Check_time"}, {"TABLE_COLLATION", "Collation"},
		{"CHECKSUM", "Checksum"}, {"CREATE_OPTIONS", "Create_options"}, {"TABLE_COMMENT", "Comment"}}
}

// ShowDB is the database a SHOW [FULL] TABLES / TABLE STATUS / TRIGGERS
// lists; "" for the SHOWs that list no database's tables. A missing
// database gives MariaDB's 1046.
func ShowDB(sh *rewrite.Show, currentDB string) (string, error) {
	switch sh.What {
	case "TABLES", "TABLE STATUS", "TRIGGERS":
	default:
		return "", nil
	}
	db := sh.DB
	if db == "" {
		db = currentDB
	}
	if db == "" {
		return "", rewrite.ServerRefusal(wire.ErNoDB, "No database selected")
	}
	return db, nil
}

// Shown reports whether a sandbox answers SHOW what (rewrite.Show.What)
// from its views, with a query of information_schema (ShowSQL).
func Shown(what string) bool {
	switch what {
	case "TABLES", "TABLE STATUS", "DATABASES", "PROCEDURE STATUS", "FUNCTION STATUS", "TRIGGERS":
		return true
	}
	return false
}

// ShowLabel is the label the server gives the name column of SHOW TABLES
// and SHOW DATABASES.
func ShowLabel(sh *rewrite.Show, db string) string {
	name := "Database"
	if sh.What == "TABLES" {
		name = "Tables_in_" + db
	}
	if sh.Like != nil {
		name += " (" + *sh.Like + ")"
	}
	return name
}

// ShowSQL turns SHOW [FULL] TABLES, SHOW TABLE STATUS, SHOW DATABASES,
// SHOW PROCEDURE / FUNCTION STATUS and SHOW TRIGGERS into a query of
// information_schema with
// the same columns (the server's, defs, when known: their org names are
// the columns of information_schema they show), which the sandbox then
// answers from its own view of the database. ok is false for other
// statements; a missing database gives MariaDB's 1046.
func ShowSQL(sh *rewrite.Show, currentDB, charset string, defs [][]byte) (string, bool, error) {
	lit := func(s string) string { return quote.StringIn(s, cmp.Or(charset, "utf8mb4")) } // sh's names are in the client's bytes
	if sh == nil || !Shown(sh.What) {
		return "", false, nil
	}
	db, err := ShowDB(sh, currentDB)
	if err != nil {
		return "", false, err
	}
	view, cols := showView(sh.What, sh.Full, ShowLabel(sh, db))
	if named, ok := defColumns(defs, cols[0].label); ok {
		cols = named
	}
	sel := make([]string, len(cols))
	for i, c := range cols {
		sel[i] = c.col + " AS " + quote.Ident(c.label)
	}
	if view == "TRIGGERS" {
		return triggersSQL(sh, db, cols, sel, lit), true, nil
	}
	q := "SELECT " + strings.Join(sel, ", ") + " FROM information_schema." + view
	var conds []string
	// The server lists tables and databases in the byte order of their
	// names ('B' before 'a'), not in the collation of information_schema.
	order := " ORDER BY BINARY " + quote.Ident(cols[0].label)
	switch view {
	case "TABLES":
		conds = append(conds, "TABLE_SCHEMA = "+lit(db))
		if sh.Like != nil {
			conds = append(conds, "TABLE_NAME LIKE "+lit(*sh.Like))
		}
	case "SCHEMATA":
		if sh.Like != nil {
			conds = append(conds, "SCHEMA_NAME LIKE "+lit(*sh.Like))
		}
	case "ROUTINES":
		conds = append(conds, "ROUTINE_TYPE = "+lit(strings.TrimSuffix(sh.What, " STATUS")))
		if sh.Like != nil {
			conds = append(conds, "ROUTINE_NAME LIKE "+lit(*sh.Like))
		}
		order = " ORDER BY 1, 2"
	}
	if len(conds) > 0 {
		q += " WHERE " + strings.Join(conds, " AND ")
	}
	if sh.Where != "" {
		q = "SELECT * FROM (" + q + ") AS `show` WHERE " + sh.Where
	}
	return q + order, true, nil
}

// triggersSQL is SHOW TRIGGERS [FROM db] [LIKE … | WHERE …] as a query of
// information_schema.TRIGGERS selecting sel (the columns cols): the
// triggers of db's tables (LIKE matches the table's name) in the server's
// order — by table name in byte order, then event, timing and the order
// the triggers of one event and timing run in (ACTION_ORDER, which the
// answer does not show).
func triggersSQL(sh *rewrite.Show, db string, cols []showColumn, sel []string, lit func(string) string) string {
	inner := "SELECT " + strings.Join(sel, ", ") + ", EVENT_OBJECT_TABLE AS `sqlfork_t`, EVENT_MANIPULATION AS `sqlfork_e`, " +
		"ACTION_TIMING AS `sqlfork_w`, ACTION_ORDER AS `sqlfork_o` FROM information_schema.TRIGGERS WHERE EVENT_OBJECT_SCHEMA = " +
		lit(db)
	if sh.Like != nil {
		inner += " AND EVENT_OBJECT_TABLE LIKE " + lit(*sh.Like)
	}
	labels := make([]string, len(cols))
	for i, c := range cols {
		labels[i] = "`show`." + quote.Ident(c.label)
	}
	q := "SELECT " + strings.Join(labels, ", ") + " FROM (" + inner + ") AS `show`"
	if sh.Where != "" {
		q += " WHERE " + sh.Where
	}
	return q + " ORDER BY BINARY `sqlfork_t`, FIELD(`sqlfork_e`, 'INSERT', 'UPDATE', 'DELETE'), FIELD(`sqlfork_w`, 'BEFORE', 'AFTER'), `sqlfork_o`"
}

// defColumns are the columns of the server's definitions defs: each
// definition's org name is the information_schema column it shows, its
// name the label (the first one's is first, which a probe of the server
// spells with another pattern). ok is false without definitions.
func defColumns(defs [][]byte, first string) ([]showColumn, bool) {
	if len(defs) == 0 {
		return nil, false
	}
	cols := make([]showColumn, len(defs))
	for i, d := range defs {
		n, _, ok := wire.ParseColumnDef(d)
		if !ok || n.OrgName == "" {
			return nil, false
		}
		cols[i] = showColumn{quote.Ident(n.OrgName), n.Name}
	}
	cols[0].label = first
	return cols, true
}

// noSuchName is a LIKE pattern no table, database or routine name
// matches (names have at most 64 characters), which the server looks up
// as a name: a SHOW with it costs nothing and returns only its column
// definitions.
var noSuchName = strings.Repeat("x", 65)

// ShowProbe is the SHOW the server answers with the column definitions
// (and no rows) of its own answer to sh, which lists db.
func ShowProbe(sh *rewrite.Show, db string) string {
	q := "SHOW "
	switch {
	case sh.What == "TABLES" && sh.Full:
		q += "FULL TABLES"
	default:
		q += sh.What
	}
	if db != "" {
		q += " FROM " + quote.Ident(db)
	}
	return q + " LIKE '" + noSuchName + "'"
}

// HasColumns reports whether defs, column definitions the server gave for
// a SHOW, name the information_schema columns they show (ShowSQL can use
// them).
func HasColumns(defs [][]byte) bool {
	_, ok := defColumns(defs, "")
	return ok
}
