package rewrite

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/sqlfork/sqlfork-proxy/wire"
)

// The placeholders of a prepared statement's Bounds. A value of Equal or
// Rows may be a placeholder's, written "?N": the statement's N-th
// placeholder (from 0) in the order of the text, as the server numbers the
// parameters of an execution. Bind gives them an execution's values.

// paramText is the value text of the i-th placeholder.
func paramText(i int) string { return "?" + strconv.Itoa(i) }

// paramOf is the place of the placeholder whose value text is v; false
// for a literal's text.
func paramOf(v string) (int, bool) {
	if !strings.HasPrefix(v, "?") {
		return 0, false
	}
	i, err := strconv.Atoi(v[1:])
	return i, err == nil
}

// placeholders are the places of s's placeholders in the order of the text.
func placeholders(s ast.StmtNode) map[ast.ParamMarkerExpr]int {
	v := &markerSeeker{}
	s.Accept(v)
	if len(v.found) == 0 {
		return nil
	}
	slices.SortFunc(v.found, func(a, b *test_driver.ParamMarkerExpr) int { return cmp.Compare(a.Offset, b.Offset) })
	out := make(map[ast.ParamMarkerExpr]int, len(v.found))
	for i, m := range v.found {
		out[m] = i
	}
	return out
}

// markerSeeker collects the placeholders of a statement.
type markerSeeker struct {
	found []*test_driver.ParamMarkerExpr
}

// Enter implements ast.Visitor.
func (v *markerSeeker) Enter(n ast.Node) (ast.Node, bool) {
	if m, ok := n.(*test_driver.ParamMarkerExpr); ok {
		v.found = append(v.found, m)
	}
	return n, false
}

// Leave implements ast.Visitor.
func (v *markerSeeker) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// Bind is b with its placeholders given vals: each an allowed literal's
// text (ParamLiteral), "NULL", or "" for a value the proxy does not read.
// With vals nil, or not one per placeholder, every placeholder's value is
// one the proxy does not read. A column of Equal that a value not read, or
// NULL, would pin pins nothing; a value of Rows not read is "" (as an
// expression's).
func (b *Bounds) Bind(vals []string) *Bounds {
	if b == nil || b.Params == 0 {
		return b
	}
	if len(vals) != b.Params {
		vals = nil
	}
	value := func(v string) string {
		if i, ok := paramOf(v); ok {
			if vals == nil || i >= len(vals) {
				return ""
			}
			return vals[i]
		}
		return v
	}
	out := *b
	out.Params, out.Equal, out.Rows = 0, nil, nil
	for col, vs := range b.Equal {
		bound := make([]string, 0, len(vs))
		for _, v := range vs {
			if v = value(v); v == "" || v == "NULL" {
				bound = nil
				break
			}
			bound = append(bound, v)
		}
		if bound != nil {
			if out.Equal == nil {
				out.Equal = map[string][]string{}
			}
			out.Equal[col] = bound
		}
	}
	for _, row := range b.Rows {
		r := make(map[string]string, len(row))
		for k, v := range row {
			r[k] = value(v)
		}
		out.Rows = append(out.Rows, r)
	}
	return &out
}

// ParamLiteral is the text of an allowed literal (see Bounds) with the
// value of an execution's parameter p: "NULL", an integer's digits, or a
// string of printable ASCII without ', " or \ in quotes; "" for any other
// value.
func ParamLiteral(p wire.Param) string {
	if p.Null {
		return "NULL"
	}
	if s, ok := p.Int(); ok {
		return s
	}
	if s, ok := p.String(); ok && plainString(s) {
		return "'" + s + "'"
	}
	return ""
}
