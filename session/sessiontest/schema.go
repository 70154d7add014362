package sessiontest

import (
	"sort"
	"strconv"
	"strings"
)

// Table is what the fake knows of a table, view or sequence: what
// information_schema shows of it. Production tables hold no rows, only
// their count: a fork copies the count.
type Table struct {
	DB, Name string
	// Type is TABLE_TYPE: BASE TABLE, VIEW, SEQUENCE, SYSTEM VERSIONED.
	Type   string
	Engine string
	// Rows and Bytes are TABLE_ROWS and DATA_LENGTH + INDEX_LENGTH.
	Rows, Bytes int64
	// AutoIncrement is the next AUTO_INCREMENT value (0: NULL).
	AutoIncrement int64
	Columns       []Column
	// Triggers is how many triggers the table has.
	Triggers int
	// Definition is a view's VIEW_DEFINITION ("" shows as NULL: the
	// account may not see it).
	Definition string
	// Comment is TABLE_COMMENT.
	Comment string
}

// Column is a column of a Table.
type Column struct {
	Name string
	// Default is COLUMN_DEFAULT as MariaDB shows it ("" for NULL), e.g.
	// "nextval(`app`.`seq`)".
	Default string
	// Generated is GENERATION_EXPRESSION ("" for an ordinary column).
	Generated string
}

// columns makes plain columns.
func columns(names ...string) []Column {
	out := make([]Column, len(names))
	for i, n := range names {
		out[i] = Column{Name: n}
	}
	return out
}

// object is a table of the fake: its metadata and, for tables the fake
// stores rows of (the registry the manager creates, mysql.func), its rows
// by lower-case column name.
type object struct {
	Table
	stored   bool
	cols     []string
	keys     [][]string // unique keys, the primary key first
	primary  bool       // keys[0] is the primary key
	defaults map[string]*string
	rows     []map[string]*string
}

// objectKey keys u.objects.
func objectKey(db, name string) string { return db + "\x00" + name }

func (u *Upstream) putObject(o *object) { u.objects[objectKey(o.DB, o.Name)] = o }

// sortedObjects lists the objects by schema and name.
func (u *Upstream) sortedObjects() []*object {
	out := make([]*object, 0, len(u.objects))
	for _, o := range u.objects {
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].DB != out[j].DB {
			return out[i].DB < out[j].DB
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// infoSchemaColumns are the columns of the information_schema views the
// proxy mirrors (a subset of the server's, with every column the proxy
// maps), and of those the fake answers queries of.
var infoSchemaColumns = map[string][]string{
	"TABLES": {"TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME", "TABLE_TYPE", "ENGINE", "TABLE_ROWS", "DATA_LENGTH",
		"INDEX_LENGTH", "AUTO_INCREMENT", "TABLE_COMMENT"},
	"COLUMNS": {"TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME", "COLUMN_NAME", "ORDINAL_POSITION", "COLUMN_DEFAULT",
		"GENERATION_EXPRESSION"},
	"STATISTICS":              {"TABLE_SCHEMA", "TABLE_NAME", "INDEX_SCHEMA", "INDEX_NAME"},
	"TABLE_CONSTRAINTS":       {"CONSTRAINT_SCHEMA", "CONSTRAINT_NAME", "TABLE_SCHEMA", "TABLE_NAME"},
	"KEY_COLUMN_USAGE":        {"CONSTRAINT_SCHEMA", "TABLE_SCHEMA", "TABLE_NAME", "REFERENCED_TABLE_SCHEMA", "REFERENCED_TABLE_NAME"},
	"REFERENTIAL_CONSTRAINTS": {"CONSTRAINT_SCHEMA", "UNIQUE_CONSTRAINT_SCHEMA", "TABLE_NAME", "REFERENCED_TABLE_NAME"},
	"CHECK_CONSTRAINTS":       {"CONSTRAINT_SCHEMA", "TABLE_NAME", "CONSTRAINT_NAME"},
	"VIEWS":                   {"TABLE_SCHEMA", "TABLE_NAME", "VIEW_DEFINITION", "CHECK_OPTION", "ALGORITHM", "COLLATION_CONNECTION"},
	"PARTITIONS":              {"TABLE_SCHEMA", "TABLE_NAME", "PARTITION_NAME"},
	"SCHEMATA":                {"CATALOG_NAME", "SCHEMA_NAME"},
	"TRIGGERS":                {"EVENT_OBJECT_SCHEMA", "EVENT_OBJECT_TABLE", "TRIGGER_NAME"},
	"ROUTINES":                {"ROUTINE_SCHEMA", "ROUTINE_NAME", "ROUTINE_TYPE"},
}

// rowsOf returns the rows of db.name, by lower-case column name: an
// information_schema view computed from the state, or a stored table.
func (u *Upstream) rowsOf(db, name string) ([]map[string]*string, error) {
	if strings.EqualFold(db, "information_schema") {
		return u.infoRows(strings.ToUpper(name))
	}
	o := u.objects[objectKey(db, name)]
	if o == nil {
		return nil, errNoTable(db, name)
	}
	if !o.stored {
		return nil, nil // production tables hold no rows here
	}
	return o.rows, nil
}

func sp(s string) *string { return &s }

func nullIf(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func itoa(n int64) *string { return sp(strconv.FormatInt(n, 10)) }

// infoRows computes an information_schema view.
func (u *Upstream) infoRows(name string) ([]map[string]*string, error) {
	var out []map[string]*string
	switch name {
	case "TABLES":
		for _, o := range u.sortedObjects() {
			r := map[string]*string{"table_catalog": sp("def"), "table_schema": sp(o.DB), "table_name": sp(o.Name),
				"table_type": sp(o.Type), "engine": nullIf(o.Engine), "table_comment": sp(o.Comment),
				"table_rows": itoa(o.Rows), "data_length": itoa(o.Bytes), "index_length": itoa(0)}
			if o.stored {
				r["table_rows"] = itoa(int64(len(o.rows)))
			}
			if o.AutoIncrement > 0 {
				r["auto_increment"] = itoa(o.AutoIncrement)
			}
			out = append(out, r)
		}
	case "COLUMNS":
		for _, o := range u.sortedObjects() {
			for i, c := range o.Columns {
				out = append(out, map[string]*string{"table_schema": sp(o.DB), "table_name": sp(o.Name),
					"column_name": sp(c.Name), "ordinal_position": itoa(int64(i + 1)), "column_default": nullIf(c.Default),
					"generation_expression": nullIf(c.Generated)})
			}
		}
	case "VIEWS":
		for _, o := range u.sortedObjects() {
			if o.Type == "VIEW" {
				out = append(out, map[string]*string{"table_schema": sp(o.DB), "table_name": sp(o.Name),
					"view_definition": nullIf(o.Definition), "check_option": sp("NONE"), "algorithm": sp("UNDEFINED"),
					"collation_connection": sp("utf8mb4_general_ci")})
			}
		}
	case "TRIGGERS":
		for _, o := range u.sortedObjects() {
			for i := range o.Triggers {
				out = append(out, map[string]*string{"event_object_schema": sp(o.DB), "event_object_table": sp(o.Name),
					"trigger_name": sp(o.Name + "_trg" + strconv.Itoa(i))})
			}
		}
	case "ROUTINES":
		for _, r := range u.routines {
			out = append(out, map[string]*string{"routine_schema": sp(r[0]), "routine_name": sp(r[1]),
				"routine_type": sp("FUNCTION")})
		}
	case "SCHEMATA":
		var names []string
		for s := range u.schemas {
			names = append(names, s)
		}
		sort.Strings(names)
		for _, s := range names {
			out = append(out, map[string]*string{"catalog_name": sp("def"), "schema_name": sp(s)})
		}
	default:
		if _, ok := infoSchemaColumns[name]; ok {
			return nil, nil // known, and empty here
		}
		return nil, Err(1109, "42S02", "Unknown table '%s' in information_schema", name)
	}
	return out, nil
}

func errNoTable(db, name string) error {
	return Err(1146, "42S02", "Table '%s.%s' doesn't exist", db, name)
}
