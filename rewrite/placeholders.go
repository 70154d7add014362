package rewrite

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/sqlfork/sqlfork-proxy/rewrite/recovery"
)

// namesPlaceholder reports whether a placeholder recovery read a word as
// (recovery.Masked.Placeholders) names, in stmts, a table, a database, a
// qualifier or a common table expression: the word was then a table's
// name, which the reading must not lose.
func namesPlaceholder(stmts []ast.StmtNode, ps []recovery.Placeholder) bool {
	if len(ps) == 0 {
		return false
	}
	v := &placeholderVisitor{names: map[string]bool{}}
	for _, p := range ps {
		v.names[p.Name] = true
	}
	for _, s := range stmts {
		s.Accept(v)
		if v.found {
			return true
		}
	}
	return false
}

// placeholderVisitor looks for placeholders where a table's name stands.
type placeholderVisitor struct {
	names map[string]bool
	found bool
}

func (v *placeholderVisitor) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.TableName:
		v.found = v.found || v.names[x.Schema.L] || v.names[x.Name.L]
	case *ast.ColumnName:
		v.found = v.found || v.names[x.Schema.L] || v.names[x.Table.L]
	case *ast.WildCardField:
		v.found = v.found || v.names[x.Schema.L] || v.names[x.Table.L]
	case *ast.CommonTableExpression:
		v.found = v.found || v.names[x.Name.L]
	case *ast.TableSource:
		v.found = v.found || v.names[x.AsName.L]
	}
	return n, v.found
}

func (v *placeholderVisitor) Leave(n ast.Node) (ast.Node, bool) { return n, !v.found }
