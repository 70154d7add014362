package infoschema

import (
	"fmt"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
)

// SandboxViewSQL is the definition of v for sandbox id of the proxy's
// prefix, whose registry records its tables in reg (a quoted name);
// cols are the server's columns of information_schema.<v.name>, in order.
func SandboxViewSQL(prefix, reg, id string, v View, cols []Col) string {
	switch {
	case v.RoutineSchema != "":
		return routineViewSQL(prefix, id, v, cols)
	case len(v.Pairs) == 0: // SCHEMATA
		return schemataViewSQL(prefix, id, v, cols)
	}
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
			reg, r, r, sid, r, live, r, BinCol("i", pr[0]), r, BinCol("i", pr[1])))
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
	internal := quote.LikePrefix(prefix)
	s, t := v.Pairs[0][0], v.Pairs[0][1]
	// Either a row of this sandbox's table, or a production row the
	// sandbox has not replaced or hidden, in a database it did not make
	// or drop.
	where := "r0.sandbox_id IS NOT NULL OR (i." + s + " NOT LIKE " + internal + " AND NOT EXISTS (SELECT 1 FROM " + reg +
		" h WHERE h.sandbox_id = " + sid + " AND h.kind IN ('" + string(sandbox.KindFork) + "', '" + string(sandbox.KindSchema) + "', '" + string(sandbox.KindCreated) + "', '" + string(sandbox.KindDropped) +
		"') AND h.db = " + BinCol("i", s) + " AND h.tbl = " + BinCol("i", t) + ") AND NOT " + ownDB(prefix, id, BinCol("i", s)) + ")"
	if v.Name == "TRIGGERS" {
		// The proxy's capture triggers (capture.go) are not the sandbox's.
		where = "(" + where + ") AND i.TRIGGER_NAME NOT LIKE " + internal
	}
	return "CREATE OR REPLACE SQL SECURITY INVOKER VIEW " + quote.Ident(sandbox.InfoSchema(prefix, id)) + "." + quote.Ident(v.Name) +
		" AS SELECT " + strings.Join(sel, ", ") + " FROM information_schema." + v.Name + " i " + strings.Join(joins, " ") + " WHERE " + where +
		OrderBy(v.Order)
}

// routineViewSQL is the definition of a view of stored routines for
// sandbox id: production's routines, and the sandbox's own with their
// database told back (prefix_<id>_<db> is <db>), nothing of other
// sandboxes.
func routineViewSQL(prefix, id string, v View, cols []Col) string {
	own := sandbox.SchemaPrefix(prefix, id)
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
	internal := quote.LikePrefix(prefix)
	name := quote.Ident(v.RoutineName)
	shadowed := "EXISTS (SELECT 1 FROM information_schema." + v.Name + " j WHERE j." + quote.Ident(v.RoutineSchema) +
		" = CONCAT(" + quote.String(own) + ", " + col + ") AND j." + name + " = i." + name + " AND j.ROUTINE_TYPE = i.ROUTINE_TYPE)"
	dropped := "(EXISTS (SELECT 1 FROM " + quote.Ident(sandbox.InfoSchema(prefix, id)) + "." + quote.Ident(DroppedRoutines) +
		" d WHERE d.db = " + col + " AND d.name = i." + name + " AND d.type = i.ROUTINE_TYPE) OR " + ownDB(prefix, id, BinCol("i", quote.Ident(v.RoutineSchema))) + ")"
	return "CREATE OR REPLACE SQL SECURITY INVOKER VIEW " + quote.Ident(sandbox.InfoSchema(prefix, id)) + "." + quote.Ident(v.Name) +
		" AS SELECT " + strings.Join(sel, ", ") + " FROM information_schema." + v.Name + " i WHERE (" + col + " NOT LIKE " + internal +
		" AND NOT " + shadowed + " AND NOT " + dropped + ") OR " + mine
}

// DatabasesTable is the registry's table of the databases sandboxes made
// or dropped (sandbox/registry/databases.go), quoted.
func DatabasesTable(prefix string) string {
	return quote.Ident(sandbox.MetaSchema(prefix)) + ".`databases`"
}

// ownDB is the condition that database db (an expression in utf8mb4_bin)
// is one sandbox id made or dropped: production's of that name is not in
// the sandbox.
func ownDB(prefix, id, db string) string {
	return "EXISTS (SELECT 1 FROM " + DatabasesTable(prefix) + " o WHERE o.sandbox_id = " + quote.String(id) + " AND o.db = " + db + ")"
}

// schemataViewSQL is the definition of the view of databases for sandbox
// id: production's, but those the sandbox dropped or made again, and the
// databases it made (their schemas' rows, with the logical name).
func schemataViewSQL(prefix, id string, v View, cols []Col) string {
	sel := make([]string, len(cols))
	for i, c := range cols {
		if c.Name == "SCHEMA_NAME" {
			sel[i] = c.Mapped("d.name", "i.SCHEMA_NAME") + " AS " + quote.Ident(c.Name)
		} else {
			sel[i] = "i." + quote.Ident(c.Name)
		}
	}
	made := "'" + string(sandbox.DBCreated) + "', '" + string(sandbox.DBRecreated) + "'"
	return "CREATE OR REPLACE SQL SECURITY INVOKER VIEW " + quote.Ident(sandbox.InfoSchema(prefix, id)) + "." + quote.Ident(v.Name) +
		" AS SELECT " + strings.Join(sel, ", ") + " FROM information_schema." + v.Name + " i LEFT JOIN " + DatabasesTable(prefix) +
		" d ON d.sandbox_id = " + quote.String(id) + " AND d.kind IN (" + made + ") AND d.phys_db = " + BinCol("i", "SCHEMA_NAME") +
		" WHERE d.sandbox_id IS NOT NULL OR (i.SCHEMA_NAME NOT LIKE " + quote.LikePrefix(prefix) + " AND NOT " +
		ownDB(prefix, id, BinCol("i", "SCHEMA_NAME")) + ")"
}

// ProductionViewSQL is the definition of the production view of v; cols are the
// server's columns of information_schema.<v.name>, in order. The views run
// with the reader's privileges (SQL SECURITY INVOKER): information_schema
// shows each account what it may see, and a user whose upstream account
// sees less than the proxy's must not see more through them.
func ProductionViewSQL(prefix string, v View, cols []Col) string {
	sel := make([]string, len(cols))
	for i, c := range cols {
		sel[i] = "i." + quote.Ident(c.Name)
	}
	internal := quote.LikePrefix(prefix)
	var conds []string
	switch {
	case v.RoutineSchema != "":
		conds = append(conds, "i."+v.RoutineSchema+" NOT LIKE "+internal)
	case len(v.Pairs) == 0: // SCHEMATA
		conds = append(conds, "i.SCHEMA_NAME NOT LIKE "+internal)
	}
	for _, pr := range v.Pairs {
		conds = append(conds, "(i."+pr[0]+" IS NULL OR i."+pr[0]+" NOT LIKE "+internal+")")
	}
	for _, c := range v.SchemaCols {
		conds = append(conds, "(i."+c+" IS NULL OR i."+c+" NOT LIKE "+internal+")")
	}
	return "CREATE OR REPLACE SQL SECURITY INVOKER VIEW " + quote.Ident(ProductionSchema(prefix)) + "." +
		quote.Ident(v.Name) + " AS SELECT " + strings.Join(sel, ", ") + " FROM information_schema." + v.Name +
		" i WHERE " + strings.Join(conds, " AND ")
}
