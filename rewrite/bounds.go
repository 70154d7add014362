package rewrite

import (
	"slices"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
)

// Bounds are, for a statement that touches one table in one of the simple
// forms below, the literal values it pins that table's columns to. nil for
// every other statement.
//
// The forms: SELECT … FROM t [AS a] [WHERE …] [GROUP BY / HAVING / ORDER BY
// / LIMIT] [FOR UPDATE | LOCK IN SHARE MODE] with t alone in FROM (no join,
// derived table, UNION / INTERSECT / EXCEPT or WITH); single-table UPDATE
// [IGNORE] and DELETE [IGNORE] (no WITH); INSERT / REPLACE [IGNORE] …
// VALUES or … SET (not … SELECT or … TABLE). None may hold a subquery that
// names t.
//
// A literal is given only when the proxy reads it exactly as the server
// will whatever the session's character set and sql_mode: a decimal
// integer without leading zeros, with at most one unary minus (given
// normalized: -12), or a single-quoted string of printable ASCII without
// ', " or \, with no introducer, no COLLATE, and no string next to it (given
// as written, quotes included).
type Bounds struct {
	Table Table // the table (database resolved as for Reads/Writes)
	// Equal: for SELECT, UPDATE and DELETE, the conjuncts at the top level
	// of WHERE (AND only) of the form `col = lit`, `lit = col` or
	// `col IN (lit, …)`; column name in lower case → the literal texts. A
	// column with several such conjuncts keeps the first one's. Empty
	// (nil) when no conjunct pins a column: the statement may touch any
	// row. `col = NULL` pins nothing.
	Equal map[string][]string
	// Assigned: the columns (lower case) an UPDATE's SET or an INSERT's ON
	// DUPLICATE KEY UPDATE assigns, each once, in order.
	Assigned []string
	// Rows: for INSERT / REPLACE … VALUES (or … SET), one map per row:
	// column (lower case) → the literal text of its value, "NULL" for a
	// NULL literal, "" for a value that is not an allowed literal (an
	// expression, DEFAULT, a placeholder, a variable …). Columns the
	// statement omits are absent. Columns are the statement's column list
	// (or, without one, Positional is true and the maps are keyed "#0",
	// "#1", … by position: the session maps them to the table's columns).
	Rows       []map[string]string
	Positional bool
	// Upsert: the INSERT has ON DUPLICATE KEY UPDATE; Replace: it is a
	// REPLACE; Ignore: INSERT / UPDATE / DELETE IGNORE.
	Upsert, Replace, Ignore bool
	// Params: the statement's placeholders (a prepared statement's), all
	// of them, wherever they are. Values of Equal and Rows may then be
	// placeholders' (boundsparams.go), which Bind gives values.
	Params int
}

// boundsReading reads the Bounds of one statement: the current database,
// how names compare, the statement's literals, and its table.
type boundsReading struct {
	db            string
	caseSensitive bool
	lits          literals
	table         *ast.TableName
	alias         string
	b             *Bounds
}

// statementBounds is the Bounds of s (nil unless s is one of the forms
// Bounds lists), which runs in database db; text holds its literals.
func statementBounds(s ast.StmtNode, db string, caseSensitive bool, text literalText) *Bounds {
	tn, alias := singleTable(boundsForm(s))
	if tn == nil {
		return nil // most statements: nothing allocated
	}
	table := Table{DB: tn.Schema.O, Name: tn.Name.O}
	if table.DB == "" {
		table.DB = db
	}
	params := placeholders(s)
	br := &boundsReading{db: db, caseSensitive: caseSensitive, lits: literals{literalText: text, params: params}, table: tn,
		alias: alias, b: &Bounds{Table: table, Params: len(params)}}
	switch x := s.(type) {
	case *ast.SelectStmt:
		br.where(x.Where)
	case *ast.UpdateStmt:
		br.b.Ignore = x.IgnoreErr
		br.assigned(x.List)
		br.where(x.Where)
	case *ast.DeleteStmt:
		br.b.Ignore = x.IgnoreErr
		br.where(x.Where)
	case *ast.InsertStmt:
		if !br.rows(x) {
			return nil
		}
		br.b.Upsert, br.b.Replace, br.b.Ignore = len(x.OnDuplicate) > 0, x.IsReplace, x.IgnoreErr
		br.assigned(x.OnDuplicate)
	}
	if br.namedAgain(s) {
		return nil
	}
	return br.b
}

// boundsForm is the clause naming the tables of s when s is a SELECT (not
// TABLE or VALUES, no WITH), an UPDATE or DELETE of the single-table
// syntax (no WITH) or an INSERT / REPLACE without a query: nil otherwise.
func boundsForm(s ast.StmtNode) *ast.TableRefsClause {
	switch x := s.(type) {
	case *ast.SelectStmt:
		if x.Kind == ast.SelectStmtKindSelect && x.With == nil {
			return x.From
		}
	case *ast.UpdateStmt:
		if !x.MultipleTable && x.With == nil {
			return x.TableRefs
		}
	case *ast.DeleteStmt:
		if !x.IsMultiTable && x.Tables == nil && x.With == nil {
			return x.TableRefs
		}
	case *ast.InsertStmt:
		if x.Select == nil {
			return x.Table
		}
	}
	return nil
}

// singleTable is the table refs names, and its alias, when it names one
// table and nothing else (no join, no derived table): nil otherwise.
func singleTable(refs *ast.TableRefsClause) (*ast.TableName, string) {
	if refs == nil || refs.TableRefs == nil || refs.TableRefs.Right != nil {
		return nil, ""
	}
	ts, ok := refs.TableRefs.Left.(*ast.TableSource)
	if !ok {
		return nil, ""
	}
	if tn, ok := ts.Source.(*ast.TableName); ok && tn.Name.O != "" {
		return tn, ts.AsName.O
	}
	return nil, ""
}

// sameName compares two table or database names (or aliases) as the
// server does under the session's lower_case_table_names.
func (br *boundsReading) sameName(a, b string) bool {
	if br.caseSensitive {
		return a == b
	}
	return strings.EqualFold(a, b)
}

// names reports whether tn names the Bounds' table.
func (br *boundsReading) names(tn *ast.TableName) bool {
	db := tn.Schema.O
	if db == "" {
		db = br.db
	}
	return br.sameName(tn.Name.O, br.b.Table.Name) && br.sameName(db, br.b.Table.DB)
}

// namedAgain reports whether s names the Bounds' table anywhere but where
// it was read from (a subquery): its bounds would not be the statement's.
func (br *boundsReading) namedAgain(s ast.StmtNode) bool {
	v := &tableSeeker{br: br}
	s.Accept(v)
	return v.found
}

// tableSeeker finds a TableName other than the Bounds' own naming its
// table.
type tableSeeker struct {
	br    *boundsReading
	found bool
}

// Enter implements ast.Visitor.
func (v *tableSeeker) Enter(n ast.Node) (ast.Node, bool) {
	if tn, ok := n.(*ast.TableName); ok && tn != v.br.table && v.br.names(tn) {
		v.found = true
	}
	return n, v.found
}

// Leave implements ast.Visitor.
func (v *tableSeeker) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// assigned adds the columns list assigns to Assigned, each once.
func (br *boundsReading) assigned(list []*ast.Assignment) {
	for _, a := range list {
		if a.Column == nil {
			continue
		}
		if name := a.Column.Name.L; !slices.Contains(br.b.Assigned, name) {
			br.b.Assigned = append(br.b.Assigned, name)
		}
	}
}

// rows reads an INSERT's rows; false when a row's length is not its column
// list's (the server refuses the statement).
func (br *boundsReading) rows(x *ast.InsertStmt) bool {
	br.b.Positional = len(x.Columns) == 0
	br.b.Rows = make([]map[string]string, 0, len(x.Lists))
	for _, list := range x.Lists {
		if !br.b.Positional && len(list) != len(x.Columns) {
			return false
		}
		row := make(map[string]string, len(list))
		for i, e := range list {
			key := "#" + strconv.Itoa(i)
			if !br.b.Positional {
				key = x.Columns[i].Name.L
			}
			text, _ := br.lits.literal(e)
			row[key] = text
		}
		br.b.Rows = append(br.b.Rows, row)
	}
	return true
}

// where reads the top-level conjuncts of a WHERE clause (nil: none) into
// Equal.
func (br *boundsReading) where(e ast.ExprNode) {
	if e == nil {
		return
	}
	switch x := e.(type) {
	case *ast.ParenthesesExpr:
		br.where(x.Expr)
		return
	case *ast.BinaryOperationExpr:
		if x.Op == opcode.LogicAnd {
			br.where(x.L)
			br.where(x.R)
			return
		}
	}
	col, texts := br.equality(e)
	if col == "" {
		return
	}
	if _, seen := br.b.Equal[col]; seen {
		return
	}
	if br.b.Equal == nil {
		br.b.Equal = map[string][]string{}
	}
	br.b.Equal[col] = texts
}

// equality reads a conjunct `col = lit`, `lit = col` or `col IN (lit, …)`:
// the column (lower case) and the literals' texts; "" when it is none.
func (br *boundsReading) equality(e ast.ExprNode) (string, []string) {
	switch x := e.(type) {
	case *ast.BinaryOperationExpr:
		if x.Op != opcode.EQ {
			return "", nil
		}
		col, lit := br.column(x.L), x.R
		if col == "" {
			col, lit = br.column(x.R), x.L
		}
		if text, ok := br.lits.literal(lit); col != "" && ok && text != "NULL" {
			return col, []string{text}
		}
	case *ast.PatternInExpr:
		col := br.column(x.Expr)
		if x.Not || x.Sel != nil || col == "" || len(x.List) == 0 {
			return "", nil
		}
		texts := make([]string, 0, len(x.List))
		for _, item := range x.List {
			text, ok := br.lits.literal(item)
			if !ok || text == "NULL" {
				return "", nil
			}
			texts = append(texts, text)
		}
		return col, texts
	}
	return "", nil
}

// column is the name (lower case) of the Bounds' table's column e
// references: unqualified, or qualified by the table's name, its alias, or
// its database and name; "" for anything else.
func (br *boundsReading) column(e ast.ExprNode) string {
	c, ok := e.(*ast.ColumnNameExpr)
	if !ok || c.Name == nil {
		return ""
	}
	n := c.Name
	switch {
	case n.Schema.O != "":
		if !br.sameName(n.Schema.O, br.b.Table.DB) || !br.sameName(n.Table.O, br.b.Table.Name) {
			return ""
		}
	case n.Table.O != "":
		if !br.sameName(n.Table.O, br.b.Table.Name) && (br.alias == "" || !br.sameName(n.Table.O, br.alias)) {
			return ""
		}
	}
	return n.Name.L
}
