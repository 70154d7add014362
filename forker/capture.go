package forker

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/sqlname"
)

// Change capture. A fork keeps, for every row its sandbox changes, the row
// as it was when the table was forked: three triggers on the fork write
// the first pre-image of each key into a side table (a key the fork did not
// have is written with its marker 0 and no columns), and later changes of
// the key leave it (INSERT … ON DUPLICATE KEY UPDATE of nothing). What a
// sandbox changed is then the side table joined with the fork, and with
// production for what production changed meanwhile: as many rows as were
// changed, whatever the table's size.

// Column is a table column as a capture copies it.
type Column struct {
	Name string
	// Type is the column's full type (COLUMN_TYPE), with its character
	// set and collation for character types.
	Type string
	// DataType is information_schema's DATA_TYPE (lower case).
	DataType string
	// Charset and Collation are a character column's character set and
	// collation ("" for other columns). Read them here, not from Type,
	// whose ENUM and SET values may hold any text.
	Charset, Collation string
	// Generated columns are computed by the server: never copied.
	Generated bool
	// Computed: the value a row gets when the column is added is not one
	// constant for every row (AUTO_INCREMENT, or a DEFAULT expression).
	Computed bool
	// Auto: the AUTO_INCREMENT column; Nullable: it takes NULL;
	// DefaultNull: a row that leaves it out gets NULL; Invisible: SELECT *
	// and an INSERT without a column list leave it out.
	Auto, Nullable, DefaultNull, Invisible bool
	// JSON: a JSON column (MariaDB's LONGTEXT with its json_valid check),
	// shown as JSON, not as text, whatever holds its values.
	JSON bool
}

// Binary reports a column whose values are bytes, not text: JSON shows
// them in base64, and literals write them in hexadecimal.
func (c Column) Binary() bool {
	switch c.DataType {
	case "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob", "bit", "geometry", "point", "linestring",
		"polygon", "multipoint", "multilinestring", "multipolygon", "geometrycollection":
		return true
	}
	return strings.EqualFold(c.Charset, "binary")
}

// Float reports a FLOAT column, whose text form does not give its value
// back (it is compared and written as a DOUBLE).
func (c Column) Float() bool { return c.DataType == "float" }

// Shape is what a capture needs of a table: its columns in order, the key
// it captures rows by and whether its engine is transactional.
type Shape struct {
	Columns []Column
	// Key are the capture key's columns: the primary key, else the first
	// unique key (by name) whose columns are all NOT NULL, whole and not
	// generated; nil when the table has none (keyless: compared by whole
	// rows).
	Key []string
	// KeyKind is "primary", "unique:<index name>" or "row".
	KeyKind       string
	Transactional bool
	// Engine is the table's storage engine.
	Engine string
	// View: the name is a view's, with no rows of its own; Sequence: a
	// sequence's (MariaDB).
	View, Sequence bool
	// Versioned: a system-versioned table.
	Versioned bool
	// Uniques are the table's unique keys (the primary key first), each
	// with its columns, nullable or not.
	Uniques []Unique
}

// Unique is a unique key: its columns, and whether some column is
// indexed by a prefix only (its values are unique in their prefix).
type Unique struct {
	Columns []string
	Prefix  bool
}

// Stored are the columns that are not generated.
func (s Shape) Stored() []Column {
	out := make([]Column, 0, len(s.Columns))
	for _, c := range s.Columns {
		if !c.Generated {
			out = append(out, c)
		}
	}
	return out
}

// Column returns the column called name (names compare case-insensitively).
func (s Shape) Column(name string) (Column, bool) {
	for _, c := range s.Columns {
		if strings.EqualFold(c.Name, name) {
			return c, true
		}
	}
	return Column{}, false
}

// ReadShape reads t's shape from information_schema (ErrNoSource when t
// does not exist).
func ReadShape(ctx context.Context, c Conn, t sqlname.Table) (Shape, error) {
	var s Shape
	where := " WHERE TABLE_SCHEMA = " + quote.String(t.DB) + " AND TABLE_NAME = " + quote.String(t.Name)
	rows, err := c.Query(ctx, "SELECT t.ENGINE, e.TRANSACTIONS, t.TABLE_TYPE FROM information_schema.TABLES t LEFT JOIN information_schema.ENGINES e "+
		"ON e.ENGINE = t.ENGINE"+strings.Replace(where, "TABLE_", "t.TABLE_", 2))
	if err != nil {
		return s, fmt.Errorf("read the engine of %s: %w", t.Quoted(), err)
	}
	if len(rows) == 0 {
		return s, ErrNoSource
	}
	s.Engine, s.Transactional = str(rows[0][0]), str(rows[0][1]) == "YES"
	s.View, s.Sequence, s.Versioned = str(rows[0][2]) == "VIEW", str(rows[0][2]) == "SEQUENCE", str(rows[0][2]) == "SYSTEM VERSIONED"
	rows, err = c.Query(ctx, "SELECT COLUMN_NAME, COLUMN_TYPE, LOWER(DATA_TYPE), CHARACTER_SET_NAME, COLLATION_NAME, EXTRA, IS_NULLABLE, "+
		"COLUMN_DEFAULT FROM information_schema.COLUMNS"+where+" ORDER BY ORDINAL_POSITION")
	if err != nil {
		return s, fmt.Errorf("read the columns of %s: %w", t.Quoted(), err)
	}
	nullable := map[string]bool{}
	for _, r := range rows {
		col := Column{Name: str(r[0]), Type: str(r[1]), DataType: str(r[2]),
			Generated: strings.Contains(strings.ToUpper(str(r[5])), "GENERATED"),
			Computed:  strings.Contains(strings.ToUpper(str(r[5])), "AUTO_INCREMENT"),
			Auto:      strings.Contains(strings.ToUpper(str(r[5])), "AUTO_INCREMENT")}
		if len(r) > 7 && r[7] != nil && !constantDefault.MatchString(*r[7]) {
			col.Computed = true
		}
		if cs, co := str(r[3]), str(r[4]); cs != "" && co != "" {
			col.Type += " CHARACTER SET " + cs + " COLLATE " + co
			col.Charset, col.Collation = cs, co
		}
		nullable[strings.ToLower(col.Name)] = str(r[6]) == "YES"
		col.Nullable = str(r[6]) == "YES"
		col.DefaultNull = col.Nullable && !col.Generated && (len(r) < 8 || r[7] == nil || *r[7] == "NULL")
		col.Invisible = strings.Contains(strings.ToUpper(str(r[5])), "INVISIBLE")
		s.Columns = append(s.Columns, col)
	}
	if err := readKeys(ctx, c, t, where, nullable, &s); err != nil {
		return s, err
	}
	return s, nil
}

// readKeys reads t's unique keys into s: Uniques, and the capture Key.
func readKeys(ctx context.Context, c Conn, t sqlname.Table, where string, nullable map[string]bool, s *Shape) error {
	rows, err := c.Query(ctx, "SELECT INDEX_NAME, NON_UNIQUE, COLUMN_NAME, SUB_PART FROM information_schema.STATISTICS"+where+
		" ORDER BY INDEX_NAME <> 'PRIMARY', INDEX_NAME, SEQ_IN_INDEX")
	if err != nil {
		return fmt.Errorf("read the keys of %s: %w", t.Quoted(), err)
	}
	type index struct {
		name   string
		cols   []string
		ok     bool
		prefix bool
	}
	var idx []*index
	for _, r := range rows {
		name := str(r[0])
		if str(r[1]) != "0" {
			continue
		}
		if len(idx) == 0 || idx[len(idx)-1].name != name {
			idx = append(idx, &index{name: name, ok: true})
		}
		in := idx[len(idx)-1]
		col := str(r[2])
		cc, found := s.Column(col)
		if !found || cc.Generated || r[3] != nil || nullable[strings.ToLower(col)] {
			in.ok = false
		}
		in.prefix = in.prefix || r[3] != nil
		in.cols = append(in.cols, col)
	}
	s.KeyKind = "row"
	for _, in := range idx {
		s.Uniques = append(s.Uniques, Unique{Columns: in.cols, Prefix: in.prefix})
	}
	for _, in := range idx {
		if in.ok {
			s.Key = in.cols
			s.KeyKind = "unique:" + in.name
			if in.name == "PRIMARY" {
				s.KeyKind = "primary"
			}
			break
		}
	}
	return nil
}

// constantDefault matches the COLUMN_DEFAULT of a constant default: NULL,
// a number or a quoted string (MariaDB writes an expression as it is).
var constantDefault = regexp.MustCompile(`^(NULL|-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?|'([^'\\]|''|\\.)*')$`)

// Capture is how the changes of one fork are captured.
type Capture struct {
	// Fork is the captured table; Side the table its pre-images go to.
	Fork, Side sqlname.Table
	// Trigger starts the names of the capture triggers (Trigger+"_ai",
	// "_au", "_ad"), made in Fork's database.
	Trigger string
	// Marker is the side table's column that says whether the key was in
	// the fork when it was made (1, with its row) or not (0).
	Marker string
	Shape
}

// Triggers are the names of the capture triggers.
func (cp Capture) Triggers() []string {
	return []string{cp.Trigger + "_ai", cp.Trigger + "_au", cp.Trigger + "_ad"}
}

// SideDDL creates the side table: the key's columns (NOT NULL, its
// primary key), the marker, then every stored column of the fork with its
// type, NULL allowed, and nothing else (no defaults, AUTO_INCREMENT or
// checks), in the engine class of the fork so that a rollback keeps both
// in step.
func (cp Capture) SideDDL() string {
	var defs []string
	for _, k := range cp.Key {
		c, _ := cp.Column(k)
		def := quote.Ident(c.Name) + " " + c.Type + " NOT NULL"
		if strings.HasPrefix(strings.ToLower(c.Type), "timestamp") {
			def += " DEFAULT 0" // no implicit ON UPDATE CURRENT_TIMESTAMP
		}
		defs = append(defs, def)
	}
	defs = append(defs, quote.Ident(cp.Marker)+" TINYINT NOT NULL")
	for _, c := range cp.Stored() {
		if cp.IsKey(c.Name) {
			continue
		}
		defs = append(defs, quote.Ident(c.Name)+" "+c.Type+" NULL DEFAULT NULL")
	}
	defs = append(defs, "PRIMARY KEY ("+quoteList(cp.Key)+")")
	engine := "InnoDB"
	if !cp.Transactional {
		engine = "MyISAM"
	}
	return "CREATE TABLE " + cp.Side.Quoted() + " (" + strings.Join(defs, ", ") + ") ENGINE=" + engine
}

// IsKey reports whether name is one of the capture key's columns.
func (cp Capture) IsKey(name string) bool {
	return slices.ContainsFunc(cp.Key, func(k string) bool { return strings.EqualFold(k, name) })
}

// ImageColumns are the side table's columns of a row image, quoted: the
// key's, the marker, the other stored columns.
func (cp Capture) ImageColumns() []string {
	cols, _ := cp.imageColumns("")
	return cols
}

// imageColumns are the side table's columns of a row image (the key, the
// marker, the other stored columns) and the values that copy them from row
// (a row of the fork: NEW, OLD or an alias), the marker's 1.
func (cp Capture) imageColumns(row string) (cols, vals []string) {
	for _, k := range cp.Key {
		cols = append(cols, quote.Ident(k))
		vals = append(vals, row+"."+quote.Ident(k))
	}
	cols = append(cols, quote.Ident(cp.Marker))
	vals = append(vals, "1")
	for _, c := range cp.Stored() {
		if cp.IsKey(c.Name) {
			continue
		}
		cols = append(cols, quote.Ident(c.Name))
		vals = append(vals, row+"."+quote.Ident(c.Name))
	}
	return cols, vals
}

// TriggerDDL creates the capture triggers on the fork. They are made with
// an empty sql_mode (InstallCapture), so any value the fork holds copies.
func (cp Capture) TriggerDDL() []string {
	odku := " ON DUPLICATE KEY UPDATE " + quote.Ident(cp.Marker) + " = " + quote.Ident(cp.Marker)
	image := func(row string) string {
		cols, vals := cp.imageColumns(row)
		return "INSERT INTO " + cp.Side.Quoted() + " (" + strings.Join(cols, ", ") + ") VALUES (" + strings.Join(vals, ", ") + ")" + odku
	}
	absent := func(row string) string {
		vals := []string{}
		for _, k := range cp.Key {
			vals = append(vals, row+"."+quote.Ident(k))
		}
		return "INSERT INTO " + cp.Side.Quoted() + " (" + quoteList(cp.Key) + ", " + quote.Ident(cp.Marker) + ") VALUES (" +
			strings.Join(vals, ", ") + ", 0)" + odku
	}
	var same []string
	for _, k := range cp.Key {
		same = append(same, "NEW."+quote.Ident(k)+" <=> OLD."+quote.Ident(k))
	}
	// No lookup of the side table before the insert: in a trigger of a
	// write a read locks (next-key), and would make transactions changing
	// other rows wait on each other; a duplicate key's insert locks its
	// row only.
	names := cp.Triggers()
	head := func(name, event string) string {
		return "CREATE TRIGGER " + quote.Ident(cp.Fork.DB) + "." + quote.Ident(name) + " AFTER " + event + " ON " +
			cp.Fork.Quoted() + " FOR EACH ROW "
	}
	return []string{
		head(names[0], "INSERT") + cp.insertBody(absent("NEW")),
		head(names[1], "UPDATE") + "BEGIN " + image("OLD") + "; IF NOT (" + strings.Join(same, " AND ") + ") THEN " + absent("NEW") +
			"; END IF; END",
		head(names[2], "DELETE") + image("OLD"),
	}
}

// DropTriggersDDL drops the capture triggers (each if it exists).
func (cp Capture) DropTriggersDDL() []string {
	var out []string
	for _, n := range cp.Triggers() {
		out = append(out, "DROP TRIGGER IF EXISTS "+quote.Ident(cp.Fork.DB)+"."+quote.Ident(n))
	}
	return out
}

// InstallCapture makes cp's side table and triggers (the side table's
// database must exist; fresh: it was made just now, so no side table of
// an earlier fork is left to drop); on error nothing of it is left.
func InstallCapture(ctx context.Context, c Conn, cp Capture, fresh bool) error {
	stmts := append([]string{"DROP TABLE IF EXISTS " + cp.Side.Quoted(), cp.SideDDL()}, cp.TriggerDDL()...)
	if fresh {
		stmts = stmts[1:]
	}
	if _, err := ExecAllWith(ctx, c, captureModes(), stmts...); err != nil {
		_ = RemoveCapture(context.WithoutCancel(ctx), c, cp)
		return fmt.Errorf("capture the changes of %s: %w", cp.Fork.Quoted(), err)
	}
	return nil
}

// RemoveCapture drops cp's triggers, best effort; the side table stays
// (its pre-images still tell what the fork was).
func RemoveCapture(ctx context.Context, c Conn, cp Capture) error {
	if _, err := ExecAllWith(ctx, c, captureModes(), cp.DropTriggersDDL()...); err != nil {
		return fmt.Errorf("drop the capture triggers of %s: %w", cp.Fork.Quoted(), err)
	}
	return nil
}

// ReplaceTriggerAs makes trg (its name, timing, event and body) again on
// table in one CREATE OR REPLACE TRIGGER, which puts it last among its
// event's triggers.
func ReplaceTriggerAs(ctx context.Context, c Conn, trg Trigger, table sqlname.Table) error {
	stmt := "CREATE OR REPLACE TRIGGER " + quote.Ident(table.DB) + "." + quote.Ident(trg.Name) + " " + trg.Timing + " " +
		trg.Event + " ON " + table.Quoted() + " FOR EACH ROW " + trg.Body
	if _, err := ExecAllWith(ctx, c, captureModes(), stmt); err != nil {
		return fmt.Errorf("make the trigger %s on %s last: %w", trg.Name, table.Quoted(), err)
	}
	return nil
}

// captureModes are the settings the capture's statements run with: its
// triggers copy any value the fork holds (no strict mode), and its text,
// names included, is UTF-8 whatever the connection (a client's) reads.
func captureModes() Modes {
	return Modes{SQLMode: "NO_ENGINE_SUBSTITUTION", Charset: "utf8mb4", Collation: "utf8mb4_general_ci"}
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quote.Ident(n)
	}
	return strings.Join(q, ", ")
}

// Modifies reports a foreign key action that changes the child's rows
// (CASCADE, SET NULL, SET DEFAULT), which fires no trigger.
func Modifies(action string) bool {
	switch strings.ToUpper(action) {
	case "CASCADE", "SET NULL", "SET DEFAULT":
		return true
	}
	return false
}

// CascadeDDL creates, on parent (the fork of fk's parent table), the
// triggers that keep in cp's side table the images of cp's rows (cp's table
// is fk's child) that fk's actions are about to change, before the parent's
// row is deleted or its referenced columns updated: the cascade itself
// fires no trigger on the child. name starts the triggers' names ("_bd",
// "_bu"); they are BEFORE triggers, so they see the child's rows as they
// are.
func (cp Capture) CascadeDDL(parent sqlname.Table, fk ForeignKey, name string) (names, stmts []string) {
	var match, same []string
	cols, vals := cp.imageColumns("c")
	for i, col := range fk.Columns {
		match = append(match, "c."+quote.Ident(col)+" = OLD."+quote.Ident(fk.RefColumns[i]))
		same = append(same, "NEW."+quote.Ident(fk.RefColumns[i])+" <=> OLD."+quote.Ident(fk.RefColumns[i]))
	}
	images := "INSERT INTO " + cp.Side.Quoted() + " (" + strings.Join(cols, ", ") + ") SELECT " + strings.Join(vals, ", ") + " FROM " +
		cp.Fork.Quoted() + " c WHERE " + strings.Join(match, " AND ") + " ON DUPLICATE KEY UPDATE " + quote.Ident(cp.Marker) +
		" = " + quote.Ident(cp.Marker)
	head := func(n, event string) string {
		return "CREATE TRIGGER " + quote.Ident(parent.DB) + "." + quote.Ident(n) + " BEFORE " + event + " ON " + parent.Quoted() +
			" FOR EACH ROW "
	}
	if Modifies(fk.OnDelete) {
		names = append(names, name+"_bd")
		stmts = append(stmts, head(name+"_bd", "DELETE")+images)
	}
	if Modifies(fk.OnUpdate) {
		names = append(names, name+"_bu")
		stmts = append(stmts, head(name+"_bu", "UPDATE")+"BEGIN IF NOT ("+strings.Join(same, " AND ")+") THEN "+images+"; END IF; END")
	}
	return names, stmts
}

// InstallCascade makes the triggers of CascadeDDL; on error none is left.
func InstallCascade(ctx context.Context, c Conn, parent sqlname.Table, names, stmts []string) error {
	if _, err := ExecAllWith(ctx, c, captureModes(), stmts...); err != nil {
		_ = DropTriggers(context.WithoutCancel(ctx), c, parent.DB, names)
		return fmt.Errorf("capture the changes %s's foreign keys make: %w", parent.Quoted(), err)
	}
	return nil
}

// DropTriggers drops the triggers names of database db (each if it exists).
func DropTriggers(ctx context.Context, c Conn, db string, names []string) error {
	var stmts []string
	for _, n := range names {
		stmts = append(stmts, "DROP TRIGGER IF EXISTS "+quote.Ident(db)+"."+quote.Ident(n))
	}
	if _, err := ExecAllWith(ctx, c, captureModes(), stmts...); err != nil {
		return fmt.Errorf("drop the triggers %s of %s: %w", strings.Join(names, ", "), db, err)
	}
	return nil
}

// CarryDDL are the statements that let cp's capture go on after the
// sandbox's ALTER TABLE of its fork (cp.Shape is the fork's shape now,
// before its shape when the ALTER began, side the side table's): the
// columns the ALTER added are added to the side table (NULL, no default)
// and filled, for the rows captured already, with the values the ALTER
// gave the fork's rows — one constant, which production's rows get too
// when the ALTER is promoted; then the triggers are made again for the
// new columns. A row captured already that the fork no longer has (the
// sandbox deleted it before the ALTER) gets the constant too, from any
// row of the fork (NULL when it has none left). A column made wider
// (Widens) is made so in the side table too. ok is false when the capture
// cannot follow: the capture key, a column's type (but to a wider one) or
// the engine's transactions changed, a column
// turned generated or stored, the ALTER both dropped and added columns (a
// rename, maybe: the images of the old column would not follow it), added
// one whose value is not one constant (AUTO_INCREMENT, a DEFAULT
// expression: the images would take the sandbox's rows' values), or one
// the side table has from before.
func (cp Capture) CarryDDL(before, side Shape) (stmts []string, ok bool) {
	if !slices.EqualFunc(before.Key, cp.Key, strings.EqualFold) || before.Transactional != cp.Transactional {
		return nil, false
	}
	var specs []string
	var fill []Column
	added, dropped := false, false
	for _, c := range cp.Columns {
		old, had := before.Column(c.Name)
		switch {
		case had && old.Generated != c.Generated:
			return nil, false
		case c.Generated:
		case !had:
			if _, ok := side.Column(c.Name); ok || c.Computed {
				return nil, false
			}
			added = true
			specs = append(specs, "ADD COLUMN "+quote.Ident(c.Name)+" "+c.Type+" NULL DEFAULT NULL")
			fill = append(fill, c)
		case old.Type != c.Type && !Widens(old, c):
			// Production's values, read as the new type before the ALTER
			// is promoted, would not compare with the images.
			return nil, false
		case old.Type != c.Type:
			// A wider type: the images take it too (a key the sandbox
			// inserts may need it).
			null := " NULL DEFAULT NULL"
			if cp.IsKey(c.Name) {
				null = " NOT NULL"
			}
			specs = append(specs, "MODIFY COLUMN "+quote.Ident(c.Name)+" "+c.Type+null)
		}
	}
	for _, c := range before.Stored() {
		if _, ok := cp.Column(c.Name); !ok {
			dropped = true
		}
	}
	if added && dropped {
		return nil, false
	}
	if len(specs) > 0 {
		stmts = append(stmts, "ALTER TABLE "+cp.Side.Quoted()+" "+strings.Join(specs, ", "))
	}
	if len(fill) > 0 {
		stmts = append(stmts, cp.fillDDL(fill))
	}
	for _, t := range cp.TriggerDDL() {
		stmts = append(stmts, "CREATE OR REPLACE TRIGGER "+strings.TrimPrefix(t, "CREATE TRIGGER "))
	}
	return stmts, true
}

// fillDDL fills the columns cols the sandbox's ALTER added in the images
// captured already (marker 1) with the value the ALTER gave the fork's
// rows, one constant: the fork's row's, or, for a row the fork no longer
// has, any fork row's. (Not DEFAULT(col): it fails for a NOT NULL column
// without a DEFAULT, 1364, and reads NULL, depending on the join's plan,
// in a row a LEFT JOIN did not find.)
func (cp Capture) fillDDL(cols []Column) string {
	on := make([]string, len(cp.Key))
	for i, k := range cp.Key {
		on[i] = "f." + quote.Ident(k) + " = c." + quote.Ident(k)
	}
	set := make([]string, len(cols))
	for i, c := range cols {
		name := quote.Ident(c.Name)
		set[i] = "c." + name + " = IF(f." + quote.Ident(cp.Key[0]) + " IS NULL, (SELECT x." + name + " FROM " + cp.Fork.Quoted() +
			" x LIMIT 1), f." + name + ")"
	}
	return "UPDATE " + cp.Side.Quoted() + " c LEFT JOIN " + cp.Fork.Quoted() + " f ON " + strings.Join(on, " AND ") +
		" SET " + strings.Join(set, ", ") + " WHERE c." + quote.Ident(cp.Marker) + " = 1"
}

// CarryCapture runs cp.CarryDDL(before, side) on c; ok is false when the
// capture cannot follow the ALTER (nothing is run then).
func CarryCapture(ctx context.Context, c Conn, cp Capture, before, side Shape) (ok bool, err error) {
	stmts, ok := cp.CarryDDL(before, side)
	if !ok {
		return false, nil
	}
	if _, err := ExecAllWith(ctx, c, captureModes(), stmts...); err != nil {
		return false, fmt.Errorf("carry the capture of %s across its ALTER TABLE: %w", cp.Fork.Quoted(), err)
	}
	return true, nil
}
