package rewrite

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// refKind is what an AST name reference is.
type refKind uint8

const (
	refTable     refKind = iota // a table: FROM t, INTO db.t, ALTER TABLE t, ...
	refQualifier                // the table part of a column: t.col, db.t.col, t.*
	refTarget                   // a table or alias named in DELETE t FROM / FOR UPDATE OF t
)

// astRef is one table-ish name the parser saw. Names are as written.
type astRef struct {
	kind    refKind
	schema  string
	name    string
	write   bool
	aliased bool // a table given an alias where it is named (FROM t AS x)
	cte     bool // a table name that names a common table expression in scope
	// defaultDB is the database of an unqualified name that the statement
	// does not take from the current one: a FOREIGN KEY's REFERENCES
	// table is in the constrained table's database.
	defaultDB string
}

// collector walks statements and records table references.
type collector struct {
	refs    []astRef
	writes  map[*ast.TableName]bool
	targets map[*ast.TableName]bool // value: the target is written (DELETE) or not (FOR UPDATE OF)
	// aliased is the table of the TableSource being entered when it has
	// an alias: the parser visits a TableSource's table right after it.
	aliased *ast.TableName
	skip    map[*ast.TableName]bool
	// unlocatable are tables named in a way the text cannot show as one
	// identifier chain (SHOW COLUMNS FROM t FROM db).
	unlocatable []Table
	ctes        map[string]bool // lower-cased CTE names
	// cteRefs are the table names that name a CTE in scope (cte.go).
	cteRefs map[*ast.TableName]bool
	aliases map[string]bool // lower-cased table aliases
	// funcs are the functions the statement calls by name.
	funcs []Func
	// locking is set by SELECT … FOR UPDATE / LOCK IN SHARE MODE and
	// LOCK TABLES … READ: the tables read are read under locks.
	locking bool
	// outside says why the statement reaches beyond the database's
	// tables ("" when it does not).
	outside string
	// like are the sources of CREATE TABLE … LIKE.
	like []Table
	// set summarises a SET statement's variables.
	set setFlags
	// references are the tables FOREIGN KEY … REFERENCES clauses name.
	references []Table
	// columns are column names the statement defines or names (lower
	// case), collected for DDL and "other" statements only, so their
	// safety net does not mistake them for tables.
	columns map[string]bool
	// vars are the variables the statement reads and sets (replay.go).
	vars []Var
	// labels are the select list expressions the server labels with
	// their text (those without an alias): offset and text.
	labels []labelText
	// aliased columns are the select list's columns given an alias:
	// alias, column.
	aliasedColumns [][2]string
	// refDB is the database the CREATE or ALTER TABLE being walked names
	// its table in ("" for the current one), refTables the tables of its
	// REFERENCES clauses, which are in that database unless qualified.
	refDB     string
	refTables map[*ast.TableName]bool
}

// labelText is a select list expression's offset and text; column is
// whether the expression is a column reference.
type labelText struct {
	offset int
	text   string
	column bool
}

func newCollector() *collector {
	// Maps are made on first write: most statements need few of them.
	return &collector{refs: make([]astRef, 0, 8)}
}

// setTable and setName write to a lazily made map.
func setTable(m *map[*ast.TableName]bool, t *ast.TableName, v bool) {
	if *m == nil {
		*m = map[*ast.TableName]bool{}
	}
	(*m)[t] = v
}

func setName(m *map[string]bool, n string) {
	if *m == nil {
		*m = map[string]bool{}
	}
	(*m)[n] = true
}

// markTables marks every TableName under n as written.
func (c *collector) markTables(n ast.Node) {
	if n == nil {
		return
	}
	if c.writes == nil {
		c.writes = map[*ast.TableName]bool{}
	}
	n.Accept(&tableMarker{set: c.writes})
}

type tableMarker struct{ set map[*ast.TableName]bool }

func (m *tableMarker) Enter(n ast.Node) (ast.Node, bool) {
	switch t := n.(type) {
	case *ast.TableName:
		m.set[t] = true
	case *ast.SelectStmt, *ast.SetOprStmt, *ast.SubqueryExpr:
		return n, true // subqueries are read
	}
	return n, false
}

func (m *tableMarker) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// Enter implements ast.Visitor.
func (c *collector) Enter(n ast.Node) (ast.Node, bool) {
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
func (c *collector) enterWrite(n ast.Node) bool {
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
		if x.ReferTable != nil {
			c.like = append(c.like, Table{DB: x.ReferTable.Schema.O, Name: x.ReferTable.Name.O})
		}
	case *ast.AlterTableStmt:
		c.markTables(x)
		c.refDB = x.Table.Schema.O
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
				c.locking = true // a READ lock blocks writers of the table
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
func (c *collector) enterRead(n ast.Node) bool {
	switch x := n.(type) {
	case *ast.SelectStmt:
		if x.LockInfo != nil {
			for _, t := range x.LockInfo.Tables {
				setTable(&c.targets, t, false) // FOR UPDATE OF t locks, it does not write
			}
			if x.LockInfo.LockType != ast.SelectLockNone {
				c.locking = true
			}
		}
		if x.SelectIntoOpt != nil && x.SelectIntoOpt.Tp != ast.SelectIntoVars {
			c.outsideBecause("SELECT … INTO OUTFILE writes a file on the database server, outside any sandbox; fetch the rows and write the file on the client instead")
		}
	case *ast.SetStmt:
		for _, v := range x.Variables {
			c.set.add(v, c)
		}
		if len(x.Variables) != 1 {
			c.set.engine = "" // the server may reject another value first
		}
		c.setVars(x)
	case *ast.VariableExpr:
		c.variable(x)
	case *ast.ShowStmt:
		if x.DBName != "" && x.Table != nil && x.Table.Schema.O == "" {
			c.unlocatable = append(c.unlocatable, Table{DB: x.DBName, Name: x.Table.Name.O})
			setTable(&c.skip, x.Table, true)
		}
	case *ast.FuncCallExpr:
		c.call(x)
	case *ast.AggregateFuncExpr:
		// COUNT (1) or `count`(1) calls a stored function called count
		// if there is one: aggregates are calls by name too.
		c.funcs = append(c.funcs, Func{Name: x.F})
	case *ast.WindowFuncExpr:
		c.funcs = append(c.funcs, Func{Name: x.Name})
	default:
		return false
	}
	return true
}

// enterDefinition notes what a table's, a column's or a partition's definition
// names (options, references, declared names). It reports whether n is one of the nodes it reads.
func (c *collector) enterDefinition(n ast.Node) bool {
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
				c.refs = append(c.refs, astRef{kind: refQualifier, schema: o.Column.Schema.O, name: o.Column.Table.O})
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
	case *ast.ReferenceDef:
		if x.Table != nil {
			db := x.Table.Schema.O
			if db == "" {
				db = c.refDB
			}
			c.references = append(c.references, Table{DB: db, Name: x.Table.Name.O})
			setTable(&c.refTables, x.Table, true)
		}
	case *ast.CommonTableExpression:
		setName(&c.ctes, x.Name.L)
		c.declare(x)
	case *ast.ColumnDef:
		if x.Name != nil && c.columns != nil {
			c.columns[x.Name.Name.L] = true
		}
	case *ast.Constraint, *ast.WindowSpec, *ast.CreateDatabaseStmt, *ast.DropDatabaseStmt, *ast.AlterDatabaseStmt:
		c.declare(n)
	default:
		return false
	}
	return true
}

// enterName notes a table, column or alias name. It reports whether n is one of the nodes it reads.
func (c *collector) enterName(n ast.Node) bool {
	switch x := n.(type) {
	case *ast.TableSource:
		if x.AsName.L != "" {
			setName(&c.aliases, x.AsName.L)
			if tn, ok := x.Source.(*ast.TableName); ok {
				c.aliased = tn
			}
		}
	case *ast.TableName:
		if c.skip[x] {
			return true
		}
		kind, write := refTable, c.writes[x]
		if w, ok := c.targets[x]; ok {
			kind, write = refTarget, write || w
		}
		aliased := c.aliased == x
		c.aliased = nil
		r := astRef{kind: kind, schema: x.Schema.O, name: x.Name.O, write: write, aliased: aliased, cte: c.cteRefs[x]}
		if c.refTables[x] {
			r.defaultDB = c.refDB
		}
		c.refs = append(c.refs, r)
	case *ast.ColumnName:
		if c.columns != nil {
			c.columns[x.Name.L] = true
		}
		if x.Table.O != "" {
			c.refs = append(c.refs, astRef{kind: refQualifier, schema: x.Schema.O, name: x.Table.O})
		}
	case *ast.SelectField:
		if c.columns != nil && x.AsName.L != "" {
			c.columns[x.AsName.L] = true
		}
		if x.WildCard != nil && x.WildCard.Table.O != "" {
			c.refs = append(c.refs, astRef{kind: refQualifier, schema: x.WildCard.Schema.O, name: x.WildCard.Table.O})
		}
		if x.AsName.L == "" && x.WildCard == nil && x.Expr != nil {
			_, column := x.Expr.(*ast.ColumnNameExpr)
			c.labels = append(c.labels, labelText{x.Offset, x.OriginalText(), column})
		}
		if col, ok := x.Expr.(*ast.ColumnNameExpr); ok && x.AsName.L != "" && col.Name != nil {
			c.aliasedColumns = append(c.aliasedColumns, [2]string{x.AsName.O, col.Name.Name.O})
		}
	default:
		return false
	}
	return true
}

// call records a function call. Sequence functions name their sequence
// as a table: NEXTVAL and SETVAL change it (they write), LASTVAL reads it.
func (c *collector) call(x *ast.FuncCallExpr) {
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
	c.funcs = append(c.funcs, Func{Schema: x.Schema.O, Name: x.FnName.O, Args: len(x.Args)})
}

func (c *collector) outsideBecause(why string) {
	if c.outside == "" {
		c.outside = why
	}
}

// tableOption refuses table options that make a table reach beyond its
// own storage: engines that read or write other tables or servers, and
// files placed outside the data directory.
func (c *collector) tableOption(o *ast.TableOption) {
	switch o.Tp {
	case ast.TableOptionEngine:
		if !SafeEngine(o.StrValue) {
			c.outsideBecause("ENGINE=" + o.StrValue + " is not an engine the proxy can confine to the sandbox " +
				"(MERGE, FEDERATED, CONNECT and SPIDER tables read and write other tables or servers); use InnoDB, Aria or MyISAM")
		}
	case ast.TableOptionUnion:
		c.outsideBecause("UNION=(…) makes the table read and write other tables, outside the sandbox; copy their rows into one table instead")
	case ast.TableOptionConnection:
		c.outsideBecause("CONNECTION=… makes the table read and write another server's tables, outside the sandbox; copy their rows instead")
	case ast.TableOptionDataDirectory, ast.TableOptionIndexDirectory:
		c.outsideBecause("DATA DIRECTORY / INDEX DIRECTORY place files outside the server's data directory and the sandbox; leave them out")
	}
}

// partitionOptions checks the options of partitions and subpartitions
// (DATA DIRECTORY, ENGINE) like a table's.
func (c *collector) partitionOptions(defs []*ast.PartitionDefinition) {
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

// safeEngines are storage engines whose tables keep to their own data.
var safeEngines = map[string]bool{
	"innodb": true, "xtradb": true, "myisam": true, "aria": true, "memory": true, "heap": true, "csv": true,
	"archive": true, "blackhole": true, "rocksdb": true, "mroonga": true, "columnstore": true,
}

// SafeEngine reports whether tables of the storage engine keep to their own
// data: not MERGE, FEDERATED, CONNECT, SPIDER or anything the proxy does
// not know.
func SafeEngine(name string) bool { return safeEngines[strings.ToLower(strings.Trim(name, "`'\" "))] }

// setFlags summarises the variables of a SET statement that matter to the
// proxy.
type setFlags struct {
	lexing, isolation, serializable bool
	// engine is the storage engine, written as a literal or a bare name,
	// a SET of an engine variable names that the proxy refuses
	// (Statement.Engine).
	engine string
}

func (f *setFlags) add(v *ast.VariableAssignment, c *collector) {
	name := strings.ToLower(v.Name)
	switch name {
	case ast.SetNames, ast.SetCharset, "setnames", "setcharset", "character_set_client":
		f.lexing = true
	case "sql_mode":
		f.lexing = true
		for _, m := range strings.Split(strings.ToUpper(exprText(v.Value)), ",") {
			if m == "ORACLE" || m == "MSSQL" {
				c.outsideBecause("sql_mode " + m + " changes how the server reads statements in ways the proxy does not " +
					"follow, so it could not keep them in the sandbox; leave " + m + " out of sql_mode")
			}
		}
	case "tx_isolation", "transaction_isolation", "tx_isolation_one_shot":
		f.isolation = true
		if !weakIsolation(v.Value) {
			f.serializable = true
		}
	case "default_storage_engine", "storage_engine", "default_tmp_storage_engine", "enforce_storage_engine":
		if _, isDefault := v.Value.(*ast.DefaultExpr); !isDefault && !SafeEngine(exprText(v.Value)) {
			c.outsideBecause("@@" + name + " may only name an engine the proxy can confine to the sandbox; use InnoDB, Aria or MyISAM")
			if col, ok := v.Value.(*ast.ColumnNameExpr); !ok || col.Name.Table.O == "" && col.Name.Schema.O == "" {
				f.engine = exprText(v.Value)
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
	switch strings.ToUpper(strings.NewReplacer(" ", "-", "_", "-").Replace(strings.TrimSpace(exprText(e)))) {
	case "READ-UNCOMMITTED", "READ-COMMITTED", "REPEATABLE-READ":
		return true
	}
	return false
}

// exprText is the text of a constant or a bare name; "" for anything else.
func exprText(e ast.ExprNode) string {
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
func (c *collector) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// declare records, for the safety net of DDL and "other" statements, the
// names the statement gives indexes, constraints, windows and partitions:
// no table.
func (c *collector) declare(n ast.Node) {
	if c.columns == nil {
		return
	}
	switch x := n.(type) {
	case *ast.Constraint:
		c.columns[strings.ToLower(x.Name)] = true
	case *ast.CreateIndexStmt:
		c.columns[strings.ToLower(x.IndexName)] = true
	case *ast.DropIndexStmt:
		c.columns[strings.ToLower(x.IndexName)] = true
	case *ast.WindowSpec:
		c.columns[x.Name.L] = true
	case *ast.AlterTableSpec:
		for _, name := range []string{strings.ToLower(x.Name), x.IndexName.L, x.FromKey.L, x.ToKey.L} {
			c.columns[name] = true
		}
		for _, p := range x.PartitionNames {
			c.columns[p.L] = true
		}
		for _, col := range []*ast.ColumnName{x.OldColumnName, x.NewColumnName} {
			if col != nil {
				c.columns[col.Name.L] = true
			}
		}
		for _, o := range x.OrderByList {
			if o.Column != nil {
				c.columns[o.Column.Name.L] = true
			}
		}
	case *ast.CreateViewStmt:
		for _, col := range x.Cols {
			c.columns[col.L] = true
		}
	case *ast.CommonTableExpression:
		for _, col := range x.ColNameList {
			c.columns[col.L] = true
		}
	case *ast.CreateDatabaseStmt:
		c.columns[strings.ToLower(x.Name.O)] = true
	case *ast.DropDatabaseStmt:
		c.columns[strings.ToLower(x.Name.O)] = true
	case *ast.AlterDatabaseStmt:
		c.columns[strings.ToLower(x.Name.O)] = true
	}
}
