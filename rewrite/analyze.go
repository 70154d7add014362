package rewrite

import (
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
	aliases     map[string]bool // lower-cased table aliases
	// funcs are calls of schema-qualified (stored) functions.
	funcs []string
	// references are the tables FOREIGN KEY … REFERENCES clauses name.
	references []Table
	// columns are column names the statement defines or names (lower
	// case), collected for DDL and "other" statements only, so their
	// safety net does not mistake them for tables.
	columns map[string]bool
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
	case *ast.SelectStmt:
		if x.LockInfo != nil {
			for _, t := range x.LockInfo.Tables {
				setTable(&c.targets, t, false) // FOR UPDATE OF t locks, it does not write
			}
		}
	case *ast.CreateTableStmt:
		setTable(&c.writes, x.Table, true)
	case *ast.AlterTableStmt:
		c.markTables(x)
	case *ast.DropTableStmt:
		c.markTables(x)
	case *ast.RenameTableStmt:
		c.markTables(x)
	case *ast.TruncateTableStmt:
		setTable(&c.writes, x.Table, true)
	case *ast.CreateIndexStmt:
		setTable(&c.writes, x.Table, true)
	case *ast.DropIndexStmt:
		setTable(&c.writes, x.Table, true)
	case *ast.CreateViewStmt:
		setTable(&c.writes, x.ViewName, true)
	case *ast.LockTablesStmt:
		for _, l := range x.TableLocks {
			if l.Type >= ast.TableLockWrite {
				setTable(&c.writes, l.Table, true)
			}
		}
	case *ast.CreateSequenceStmt, *ast.DropSequenceStmt, *ast.AlterSequenceStmt:
		c.markTables(x)
	case *ast.ColumnOption:
		// The parser's visitor does not descend into a column's
		// REFERENCES clause; visit it here.
		if x.Refer != nil {
			x.Refer.Accept(c)
		}
	case *ast.ShowStmt:
		if x.DBName != "" && x.Table != nil && x.Table.Schema.O == "" {
			c.unlocatable = append(c.unlocatable, Table{DB: x.DBName, Name: x.Table.Name.O})
			setTable(&c.skip, x.Table, true)
		}
	case *ast.ReferenceDef:
		if x.Table != nil {
			c.references = append(c.references, Table{DB: x.Table.Schema.O, Name: x.Table.Name.O})
		}
	case *ast.CommonTableExpression:
		setName(&c.ctes, x.Name.L)
	case *ast.TableSource:
		if x.AsName.L != "" {
			setName(&c.aliases, x.AsName.L)
			if tn, ok := x.Source.(*ast.TableName); ok {
				c.aliased = tn
			}
		}
	case *ast.TableName:
		if c.skip[x] {
			return n, false
		}
		kind, write := refTable, c.writes[x]
		if w, ok := c.targets[x]; ok {
			kind, write = refTarget, write || w
		}
		aliased := c.aliased == x
		c.aliased = nil
		c.refs = append(c.refs, astRef{kind: kind, schema: x.Schema.O, name: x.Name.O, write: write, aliased: aliased})
	case *ast.ColumnDef:
		if x.Name != nil && c.columns != nil {
			c.columns[x.Name.Name.L] = true
		}
	case *ast.ColumnName:
		if c.columns != nil {
			c.columns[x.Name.L] = true
		}
		if x.Table.O != "" {
			c.refs = append(c.refs, astRef{kind: refQualifier, schema: x.Schema.O, name: x.Table.O})
		}
	case *ast.SelectField:
		if x.WildCard != nil && x.WildCard.Table.O != "" {
			c.refs = append(c.refs, astRef{kind: refQualifier, schema: x.WildCard.Schema.O, name: x.WildCard.Table.O})
		}
	case *ast.FuncCallExpr:
		// db.f() is a stored function for sure; unqualified stored
		// functions cannot be told from built-ins without a catalog.
		if x.Schema.O != "" {
			c.funcs = append(c.funcs, x.Schema.O+"."+x.FnName.O)
		}
	}
	return n, false
}

// Leave implements ast.Visitor.
func (c *collector) Leave(n ast.Node) (ast.Node, bool) { return n, true }
