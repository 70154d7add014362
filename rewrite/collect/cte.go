package collect

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// Common table expressions, resolved as MariaDB resolves them
// (sql/sql_cte.cc): a table name without a database names a CTE when a WITH
// clause in scope defines one of that name, the innermost first. A WITH
// clause's scope is its own query expression, subqueries included; its
// non-recursive CTEs see only the CTEs defined before them (a CTE's own
// name in its body is the table of that name), a WITH RECURSIVE's see all of
// its CTEs. A name qualified with a database is never a CTE. MariaDB takes
// WITH only before SELECT (and its set operations): the parser's WITH
// before UPDATE or DELETE is not given scope, so its names stay tables.

// cteScope finds the TableName nodes that name a CTE.
type cteScope struct {
	scopes []map[string]bool
	refs   map[*ast.TableName]bool
	// key is the name a CTE or table name is compared by: the name as
	// written (a marker mapped back to its text), lower case unless names
	// are case-sensitive (then a CTE and a table differing in case stay
	// apart, which at worst reads a table where the server reads the
	// CTE, never the reverse).
	key func(string) string
}

// CTERefs returns the table references of stmts that name a CTE. orig maps
// a name of the parsed text to the name as the client wrote it.
func CTERefs(stmts []ast.StmtNode, orig func(string) string, caseSensitive bool) map[*ast.TableName]bool {
	v := &cteScope{key: func(s string) string {
		s = orig(s)
		if !caseSensitive {
			s = strings.ToLower(s)
		}
		return s
	}}
	for _, s := range stmts {
		s.Accept(v)
	}
	return v.refs
}

// Enter implements ast.Visitor.
func (v *cteScope) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.SelectStmt:
		if w := x.With; w != nil {
			v.with(w, func() { x.With = nil; x.Accept(v); x.With = w })
			return n, true
		}
	case *ast.SetOprStmt:
		if w := x.With; w != nil {
			v.with(w, func() { x.With = nil; x.Accept(v); x.With = w })
			return n, true
		}
	case *ast.TableName:
		if x.Schema.O == "" && v.visible(v.key(x.Name.O)) {
			if v.refs == nil {
				v.refs = map[*ast.TableName]bool{}
			}
			v.refs[x] = true
		}
	}
	return n, false
}

// Leave implements ast.Visitor.
func (v *cteScope) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// visible reports whether a CTE called name is in scope.
func (v *cteScope) visible(name string) bool {
	for i := len(v.scopes) - 1; i >= 0; i-- {
		if v.scopes[i][name] {
			return true
		}
	}
	return false
}

// with walks a WITH clause's CTE bodies, each with the CTEs it sees, then
// (rest) the query expression it belongs to, with all of them.
func (v *cteScope) with(w *ast.WithClause, rest func()) {
	names := make([]string, len(w.CTEs))
	for i, c := range w.CTEs {
		names[i] = v.key(c.Name.O)
	}
	scope := func(k int) map[string]bool {
		m := make(map[string]bool, k)
		for _, n := range names[:k] {
			m[n] = true
		}
		return m
	}
	for i, c := range w.CTEs {
		seen := i
		if w.IsRecursive {
			seen = len(names)
		}
		v.scopes = append(v.scopes, scope(seen))
		if c.Query != nil {
			c.Query.Accept(v)
		}
		v.scopes = v.scopes[:len(v.scopes)-1]
	}
	v.scopes = append(v.scopes, scope(len(names)))
	rest()
	v.scopes = v.scopes[:len(v.scopes)-1]
}
