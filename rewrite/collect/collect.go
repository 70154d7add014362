// Package collect walks a parsed statement's tree and collects what the
// proxy needs of it: the table names it reads, writes and defines, the
// functions it calls, the variables it reads or sets.
package collect

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/sqlfork/sqlfork-proxy/sqlname"
)

// RefKind is what an AST name reference is.
type RefKind uint8

// Reference kinds.
const (
	RefTable     RefKind = iota // a table: FROM t, INTO db.t, ALTER TABLE t, ...
	RefQualifier                // the table part of a column: t.col, db.t.col, t.*
	RefTarget                   // a table or alias named in DELETE t FROM / FOR UPDATE OF t
)

// Ref is one table-ish name the parser saw. Names are as written.
type Ref struct {
	Kind    RefKind
	Schema  string
	Name    string
	Write   bool
	Aliased bool // a table given an alias where it is named (FROM t AS x)
	CTE     bool // a table name that names a common table expression in scope
	// DefaultDB is the database of an unqualified name that the statement
	// does not take from the current one: a FOREIGN KEY's REFERENCES
	// table is in the constrained table's database.
	DefaultDB string
}

// Collector walks statements and records table references.
type Collector struct {
	Refs    []Ref
	writes  map[*ast.TableName]bool
	targets map[*ast.TableName]bool // value: the target is written (DELETE) or not (FOR UPDATE OF)
	// aliased is the table of the TableSource being entered when it has
	// an alias: the parser visits a TableSource's table right after it.
	aliased *ast.TableName
	skip    map[*ast.TableName]bool
	// Unlocatable are tables named in a way the text cannot show as one
	// identifier chain (SHOW COLUMNS FROM t FROM db).
	Unlocatable []sqlname.Table
	CTEs        map[string]bool // lower-cased CTE names
	// CTERefs are the table names that name a CTE in scope (cte.go).
	CTERefs map[*ast.TableName]bool
	Aliases map[string]bool // lower-cased table aliases
	// funcs are the functions the statement calls by name.
	Funcs []Func
	// locking is set by SELECT … FOR UPDATE / LOCK IN SHARE MODE and
	// LOCK TABLES … READ: the tables read are read under locks.
	Locking bool
	// outside says why the statement reaches beyond the database's
	// tables ("" when it does not).
	Outside string
	// namedEngine is set when the CREATE or ALTER TABLE being read names
	// an engine whose tables keep to their own data: CONNECTION=… is
	// inert then.
	namedEngine bool
	// like are the sources of CREATE TABLE … LIKE.
	Like []sqlname.Table
	// set summarises a SET statement's variables.
	Set SetFlags
	// references are the tables FOREIGN KEY … REFERENCES clauses name.
	References []sqlname.Table
	// columns are column names the statement defines or names (lower
	// case), collected for DDL and "other" statements only, so their
	// safety net does not mistake them for tables.
	Columns map[string]bool
	// vars are the variables the statement reads and sets (replay.go).
	Vars []Var
	// labels are the select list expressions the server labels with
	// their text (those without an alias): offset and text.
	Labels []Label
	// aliased columns are the select list's columns given an alias:
	// alias, column.
	AliasedColumns [][2]string
	// refDB is the database the CREATE or ALTER TABLE being walked names
	// its table in ("" for the current one), refTables the tables of its
	// REFERENCES clauses, which are in that database unless qualified.
	refDB     string
	refTables map[*ast.TableName]bool
}

// Label is a select list expression's offset and text; column is
// whether the expression is a column reference.
type Label struct {
	Offset int
	Text   string
	Column bool
}

// New returns an empty collector.
func New() *Collector {
	// Maps are made on first write: most statements need few of them.
	return &Collector{Refs: make([]Ref, 0, 8)}
}

// setTable writes to a lazily made map.
func setTable(m *map[*ast.TableName]bool, t *ast.TableName, v bool) {
	if *m == nil {
		*m = map[*ast.TableName]bool{}
	}
	(*m)[t] = v
}

// SetName sets n in a lazily made map.
func SetName(m *map[string]bool, n string) {
	if *m == nil {
		*m = map[string]bool{}
	}
	(*m)[n] = true
}

// markTables marks every TableName under n as written.
func (c *Collector) markTables(n ast.Node) {
	if n == nil {
		return
	}
	if c.writes == nil {
		c.writes = map[*ast.TableName]bool{}
	}
	n.Accept(&tableMarker{set: c.writes})
}

// tableMarker marks the tables under a node, but those of its
// subqueries, as written.
type tableMarker struct{ set map[*ast.TableName]bool }

// Enter implements ast.Visitor.
func (m *tableMarker) Enter(n ast.Node) (ast.Node, bool) {
	switch t := n.(type) {
	case *ast.TableName:
		m.set[t] = true
	case *ast.SelectStmt, *ast.SetOprStmt, *ast.SubqueryExpr:
		return n, true // subqueries are read
	}
	return n, false
}

// Leave implements ast.Visitor.
func (m *tableMarker) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// Enter implements ast.Visitor.
func (c *Collector) Enter(n ast.Node) (ast.Node, bool) {
	if x, ok := n.(*ast.CallStmt); ok {
		// The procedure's name is no function call: only its arguments
		// are expressions.
		if x.Procedure != nil {
			for _, arg := range x.Procedure.Args {
				arg.Accept(c)
			}
		}
		return n, true
	}
	_ = c.enterWrite(n) || c.enterRead(n) || c.enterDefinition(n) || c.enterName(n)
	return n, false
}

// enterWrite notes the tables a writing statement (or DDL) names as written. It reports whether n is one of the nodes it reads.
func (c *Collector) enterWrite(n ast.Node) bool {
	switch x := n.(type) {
	case *ast.InsertStmt:
		if x.Table != nil {
			c.markTables(x.Table.TableRefs)
		}
	case *ast.UpdateStmt:
		// Every table an UPDATE joins may be assigned: treat all as
		// written (a fork too many is safe, a write to production is not).
		if x.TableRefs != nil {
			c.markTables(x.TableRefs.TableRefs)
		}
	case *ast.DeleteStmt:
		if x.IsMultiTable && x.Tables != nil {
			for _, t := range x.Tables.Tables {
				setTable(&c.targets, t, true) // DELETE targets are written
			}
			// Written tables are those the target list names; resolved
			// by name or alias when sites are bound, so mark all here.
			if x.TableRefs != nil {
				c.markTables(x.TableRefs.TableRefs)
			}
		} else if x.TableRefs != nil {
			c.markTables(x.TableRefs.TableRefs)
		}
	case *ast.LoadDataStmt:
		setTable(&c.writes, x.Table, true)
		if x.FileLocRef != ast.FileLocClient {
			c.outsideBecause("LOAD DATA INFILE reads a file on the database server, outside any sandbox; send the file from the client with LOAD DATA LOCAL INFILE instead")
		}
	case *ast.CreateTableStmt:
		setTable(&c.writes, x.Table, true)
		c.refDB = x.Table.Schema.O
		c.namedEngine = namesSafeEngine(x.Options)
		if x.ReferTable != nil {
			c.Like = append(c.Like, sqlname.Table{DB: x.ReferTable.Schema.O, Name: x.ReferTable.Name.O})
		}
	case *ast.AlterTableStmt:
		c.markTables(x)
		c.refDB = x.Table.Schema.O
		c.namedEngine = false
		for _, spec := range x.Specs {
			c.namedEngine = c.namedEngine || namesSafeEngine(spec.Options)
		}
	case *ast.DropTableStmt:
		c.markTables(x)
	case *ast.RenameTableStmt:
		c.markTables(x)
	case *ast.TruncateTableStmt:
		setTable(&c.writes, x.Table, true)
	case *ast.CreateIndexStmt:
		setTable(&c.writes, x.Table, true)
		c.declare(x)
	case *ast.DropIndexStmt:
		setTable(&c.writes, x.Table, true)
		c.declare(x)
	case *ast.CreateViewStmt:
		setTable(&c.writes, x.ViewName, true)
		c.declare(x)
	case *ast.LockTablesStmt:
		for _, l := range x.TableLocks {
			if l.Type >= ast.TableLockWrite {
				setTable(&c.writes, l.Table, true)
			} else {
				c.Locking = true // a READ lock blocks writers of the table
			}
		}
	case *ast.CreateSequenceStmt, *ast.DropSequenceStmt, *ast.AlterSequenceStmt:
		c.markTables(x)
	default:
		return false
	}
	return true
}

// enterRead notes what a read, a SHOW, a SET and a call name: locks, files,
// variables, functions. It reports whether n is one of the nodes it reads.
func (c *Collector) enterRead(n ast.Node) bool {
	switch x := n.(type) {
	case *ast.SelectStmt:
		if x.LockInfo != nil {
			for _, t := range x.LockInfo.Tables {
				setTable(&c.targets, t, false) // FOR UPDATE OF t locks, it does not write
			}
			if x.LockInfo.LockType != ast.SelectLockNone {
				c.Locking = true
			}
		}
		if x.SelectIntoOpt != nil && x.SelectIntoOpt.Tp != ast.SelectIntoVars {
			c.outsideBecause("SELECT … INTO OUTFILE writes a file on the database server, outside any sandbox; fetch the rows and write the file on the client instead")
		}
	case *ast.SetStmt:
		for _, v := range x.Variables {
			c.Set.add(v, c)
		}
		if len(x.Variables) != 1 {
			c.Set.Engine = "" // the server may reject another value first
		}
		c.setVars(x)
	case *ast.VariableExpr:
		c.variable(x)
	case *ast.ShowStmt:
		if x.DBName != "" && x.Table != nil && x.Table.Schema.O == "" {
			c.Unlocatable = append(c.Unlocatable, sqlname.Table{DB: x.DBName, Name: x.Table.Name.O})
			setTable(&c.skip, x.Table, true)
		}
	case *ast.FuncCallExpr:
		c.call(x)
	case *ast.AggregateFuncExpr:
		// COUNT (1) or `count`(1) calls a stored function called count
		// if there is one: aggregates are calls by name too.
		c.Funcs = append(c.Funcs, Func{Name: x.F})
	case *ast.WindowFuncExpr:
		c.Funcs = append(c.Funcs, Func{Name: x.Name})
	default:
		return false
	}
	return true
}

// enterDefinition notes what a table's, a column's or a partition's definition
// names (options, references, declared names). It reports whether n is one of the nodes it reads.
func (c *Collector) enterDefinition(n ast.Node) bool {
	switch x := n.(type) {
	case *ast.TableOption:
		c.tableOption(x)
	case *ast.PartitionOptions:
		// The parser's walk does not reach partitions' own options.
		c.partitionOptions(x.Definitions)
	case *ast.AlterTableSpec:
		c.declare(x)
		// ALTER TABLE … ORDER BY [t.]col: the parser's walk does not
		// reach its columns; a qualifier names the table.
		for _, o := range x.OrderByList {
			if o.Column != nil && o.Column.Table.O != "" {
				c.Refs = append(c.Refs, Ref{Kind: RefQualifier, Schema: o.Column.Schema.O, Name: o.Column.Table.O})
			}
		}
		c.partitionOptions(x.PartDefinitions)
		if x.Partition != nil {
			c.partitionOptions(x.Partition.Definitions)
		}
	case *ast.ColumnOption:
		// The parser's visitor does not descend into a column's
		// REFERENCES clause; visit it here.
		if x.Refer != nil {
			x.Refer.Accept(c)
		}
	case *ast.DefaultExpr:
		// Nor into DEFAULT(col)'s column, whose qualifier names a table
		// of the statement (DEFAULT(t.pk)): visit it here.
		if x.Name != nil {
			x.Name.Accept(c)
		}
	case *ast.ReferenceDef:
		if x.Table != nil {
			db := x.Table.Schema.O
			if db == "" {
				db = c.refDB
			}
			c.References = append(c.References, sqlname.Table{DB: db, Name: x.Table.Name.O})
			setTable(&c.refTables, x.Table, true)
		}
	case *ast.CommonTableExpression:
		SetName(&c.CTEs, x.Name.L)
		c.declare(x)
	case *ast.ColumnDef:
		if x.Name != nil && c.Columns != nil {
			c.Columns[x.Name.Name.L] = true
		}
	case *ast.Constraint, *ast.WindowSpec, *ast.CreateDatabaseStmt, *ast.DropDatabaseStmt, *ast.AlterDatabaseStmt:
		c.declare(n)
	default:
		return false
	}
	return true
}

// enterName notes a table, column or alias name. It reports whether n is one of the nodes it reads.
func (c *Collector) enterName(n ast.Node) bool {
	switch x := n.(type) {
	case *ast.TableSource:
		if x.AsName.L != "" {
			SetName(&c.Aliases, x.AsName.L)
			if tn, ok := x.Source.(*ast.TableName); ok {
				c.aliased = tn
			}
		}
	case *ast.TableName:
		if c.skip[x] {
			return true
		}
		kind, write := RefTable, c.writes[x]
		if w, ok := c.targets[x]; ok {
			kind, write = RefTarget, write || w
		}
		aliased := c.aliased == x
		c.aliased = nil
		r := Ref{Kind: kind, Schema: x.Schema.O, Name: x.Name.O, Write: write, Aliased: aliased, CTE: c.CTERefs[x]}
		if c.refTables[x] {
			r.DefaultDB = c.refDB
		}
		c.Refs = append(c.Refs, r)
	case *ast.ColumnName:
		if c.Columns != nil {
			c.Columns[x.Name.L] = true
		}
		if x.Table.O != "" {
			c.Refs = append(c.Refs, Ref{Kind: RefQualifier, Schema: x.Schema.O, Name: x.Table.O})
		}
	case *ast.SelectField:
		if c.Columns != nil && x.AsName.L != "" {
			c.Columns[x.AsName.L] = true
		}
		if x.WildCard != nil && x.WildCard.Table.O != "" {
			c.Refs = append(c.Refs, Ref{Kind: RefQualifier, Schema: x.WildCard.Schema.O, Name: x.WildCard.Table.O})
		}
		if x.AsName.L == "" && x.WildCard == nil && x.Expr != nil {
			_, column := x.Expr.(*ast.ColumnNameExpr)
			c.Labels = append(c.Labels, Label{x.Offset, x.OriginalText(), column})
		}
		if col, ok := x.Expr.(*ast.ColumnNameExpr); ok && x.AsName.L != "" && col.Name != nil {
			c.AliasedColumns = append(c.AliasedColumns, [2]string{x.AsName.O, col.Name.Name.O})
		}
	default:
		return false
	}
	return true
}

// call records a function call. Sequence functions name their sequence
// as a table: NEXTVAL and SETVAL change it (they write), LASTVAL reads it.
func (c *Collector) call(x *ast.FuncCallExpr) {
	name := x.FnName.L
	if x.Schema.O == "" {
		switch name {
		case ast.NextVal, ast.SetVal:
			if len(x.Args) > 0 {
				if tn, ok := x.Args[0].(*ast.TableNameExpr); ok && tn.Name != nil {
					setTable(&c.writes, tn.Name, true)
				}
			}
		case "load_file":
			c.outsideBecause("LOAD_FILE() reads a file on the database server, outside any sandbox; send the file's contents from the client instead")
		}
	}
	c.Funcs = append(c.Funcs, Func{Schema: x.Schema.O, Name: x.FnName.O, Args: len(x.Args)})
}

// outsideBecause notes the first reason the statement reaches beyond the
// database's tables.
func (c *Collector) outsideBecause(why string) {
	if c.Outside == "" {
		c.Outside = why
	}
}

// tableOption refuses table options that make a table reach beyond its
// own storage: engines that read or write other tables or servers, and
// files placed outside the data directory.
func (c *Collector) tableOption(o *ast.TableOption) {
	switch o.Tp {
	case ast.TableOptionEngine:
		if !SafeEngine(o.StrValue) {
			c.outsideBecause("ENGINE=" + o.StrValue + " is not an engine the proxy can confine to the sandbox " +
				"(MERGE, FEDERATED, CONNECT and SPIDER tables read and write other tables or servers); use InnoDB, Aria or MyISAM")
		}
	case ast.TableOptionUnion:
		c.outsideBecause("UNION=(…) makes the table read and write other tables, outside the sandbox; copy their rows into one table instead")
	case ast.TableOptionConnection:
		// Only FEDERATED, CONNECT and SPIDER tables (refused above)
		// reach the server CONNECTION names; the engines that keep to
		// their own data keep it as an inert string.
		if !c.namedEngine {
			c.outsideBecause("CONNECTION=… makes a FEDERATED, CONNECT or SPIDER table read and write another server's tables, " +
				"outside the sandbox; name the table's engine (ENGINE=InnoDB, Aria, MyISAM, MEMORY, …) in the same statement, or copy their rows instead")
		}
	case ast.TableOptionDataDirectory, ast.TableOptionIndexDirectory:
		c.outsideBecause("DATA DIRECTORY / INDEX DIRECTORY place files outside the server's data directory and the sandbox; leave them out")
	}
}

// namesSafeEngine reports whether opts name an engine whose tables keep to
// their own data (the last ENGINE= is the table's; an unsafe one is
// refused by tableOption).
func namesSafeEngine(opts []*ast.TableOption) bool {
	named := false
	for _, o := range opts {
		if o.Tp == ast.TableOptionEngine {
			named = SafeEngine(o.StrValue)
		}
	}
	return named
}

// partitionOptions checks the options of partitions and subpartitions
// (DATA DIRECTORY, ENGINE) like a table's.
func (c *Collector) partitionOptions(defs []*ast.PartitionDefinition) {
	for _, d := range defs {
		for _, o := range d.Options {
			c.tableOption(o)
		}
		for _, sub := range d.Sub {
			for _, o := range sub.Options {
				c.tableOption(o)
			}
		}
	}
}

// safeEngines are storage engines whose tables keep to their own data
// (EXAMPLE, MariaDB's sample engine, keeps none: its tables are always
// empty).
var safeEngines = map[string]bool{
	"innodb": true, "xtradb": true, "myisam": true, "aria": true, "memory": true, "heap": true, "csv": true,
	"archive": true, "blackhole": true, "rocksdb": true, "mroonga": true, "columnstore": true, "example": true,
}

// SafeEngine reports whether tables of the storage engine keep to their own
// data: not MERGE, FEDERATED, CONNECT, SPIDER or anything the proxy does
// not know.
func SafeEngine(name string) bool { return safeEngines[strings.ToLower(strings.Trim(name, "`'\" "))] }

// SetFlags summarises the variables of a SET statement that matter to the
// proxy.
type SetFlags struct {
	Lexing, Isolation, Serializable bool
	// Engine is the storage engine, written as a literal or a bare name,
	// a SET of an engine variable names that the proxy refuses
	// (Statement.Engine).
	Engine string
}

// add notes what the assignment v of a SET statement changes.
func (f *SetFlags) add(v *ast.VariableAssignment, c *Collector) {
	name := strings.ToLower(v.Name)
	switch name {
	case ast.SetNames, ast.SetCharset, "setnames", "setcharset", "character_set_client":
		f.Lexing = true
	case "sql_mode":
		f.Lexing = true
		for _, m := range strings.Split(strings.ToUpper(ExprText(v.Value)), ",") {
			if m == "ORACLE" || m == "MSSQL" {
				c.outsideBecause("sql_mode " + m + " changes how the server reads statements in ways the proxy does not " +
					"follow, so it could not keep them in the sandbox; leave " + m + " out of sql_mode")
			}
		}
	case "tx_isolation", "transaction_isolation", "tx_isolation_one_shot":
		f.Isolation = true
		if !weakIsolation(v.Value) {
			f.Serializable = true
		}
	case "default_storage_engine", "storage_engine", "default_tmp_storage_engine", "enforce_storage_engine":
		if _, isDefault := v.Value.(*ast.DefaultExpr); !isDefault && !SafeEngine(ExprText(v.Value)) {
			c.outsideBecause("@@" + name + " may only name an engine the proxy can confine to the sandbox; use InnoDB, Aria or MyISAM")
			if col, ok := v.Value.(*ast.ColumnNameExpr); !ok || col.Name.Table.O == "" && col.Name.Schema.O == "" {
				f.Engine = ExprText(v.Value)
			}
		}
	}
}

// weakIsolation reports whether an isolation level's value is one that
// does not make plain reads lock: a literal naming (or numbering) READ
// UNCOMMITTED, READ COMMITTED or REPEATABLE READ. Anything else (an
// expression, a variable, DEFAULT, which may be SERIALIZABLE) counts as
// SERIALIZABLE.
func weakIsolation(e ast.ExprNode) bool {
	if x, ok := e.(ast.ValueExpr); ok {
		switch v := x.GetValue().(type) {
		case int64:
			return v >= 0 && v <= 2
		case uint64:
			return v <= 2
		}
	}
	switch strings.ToUpper(strings.NewReplacer(" ", "-", "_", "-").Replace(strings.TrimSpace(ExprText(e)))) {
	case "READ-UNCOMMITTED", "READ-COMMITTED", "REPEATABLE-READ":
		return true
	}
	return false
}

// ExprText is the text of a constant or a bare name; "" for anything else.
func ExprText(e ast.ExprNode) string {
	switch x := e.(type) {
	case *ast.ColumnNameExpr:
		return x.Name.Name.O
	case ast.ValueExpr:
		if s, ok := x.GetValue().(string); ok {
			return s
		}
	}
	return ""
}

// Leave implements ast.Visitor.
func (c *Collector) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// declare records, for the safety net of DDL and "other" statements, the
// names the statement gives indexes, constraints, windows and partitions:
// no table.
func (c *Collector) declare(n ast.Node) {
	if c.Columns == nil {
		return
	}
	switch x := n.(type) {
	case *ast.Constraint:
		c.Columns[strings.ToLower(x.Name)] = true
	case *ast.CreateIndexStmt:
		c.Columns[strings.ToLower(x.IndexName)] = true
	case *ast.DropIndexStmt:
		c.Columns[strings.ToLower(x.IndexName)] = true
	case *ast.WindowSpec:
		c.Columns[x.Name.L] = true
	case *ast.AlterTableSpec:
		for _, name := range []string{strings.ToLower(x.Name), x.IndexName.L, x.FromKey.L, x.ToKey.L} {
			c.Columns[name] = true
		}
		for _, p := range x.PartitionNames {
			c.Columns[p.L] = true
		}
		for _, col := range []*ast.ColumnName{x.OldColumnName, x.NewColumnName} {
			if col != nil {
				c.Columns[col.Name.L] = true
			}
		}
		for _, o := range x.OrderByList {
			if o.Column != nil {
				c.Columns[o.Column.Name.L] = true
			}
		}
	case *ast.CreateViewStmt:
		for _, col := range x.Cols {
			c.Columns[col.L] = true
		}
	case *ast.CommonTableExpression:
		for _, col := range x.ColNameList {
			c.Columns[col.L] = true
		}
	case *ast.CreateDatabaseStmt:
		c.Columns[strings.ToLower(x.Name.O)] = true
	case *ast.DropDatabaseStmt:
		c.Columns[strings.ToLower(x.Name.O)] = true
	case *ast.AlterDatabaseStmt:
		c.Columns[strings.ToLower(x.Name.O)] = true
	}
}
