package proxy

import (
	"testing"

	"github.com/sqlfork/sqlfork-proxy/wire"
)

// defNamed is a column definition with distinct name and org_name.
func defNamed(schema, name, orgName string) []byte {
	var p []byte
	for _, f := range []string{"def", schema, "t", "TABLES", name, orgName} {
		p = wire.AppendLenEnc(p, uint64(len(f)))
		p = append(p, f...)
	}
	return append(p, 0x0C, 1, 2)
}

// TestRelabelColumnDef: the relay re-encodes a column definition with the
// names the session gives back (its rules: session/relabel_test.go), keeps
// the fixed fields after them, and leaves malformed or unchanged ones.
func TestRelabelColumnDef(t *testing.T) {
	def := func(schema, name string) []byte { return defNamed(schema, name, name) }
	// As the session tells back a sandbox's names.
	column := func(n wire.ColumnNames, rest []byte) (wire.ColumnNames, []byte, bool) {
		switch {
		case n.Schema == "_sqlfork_0123abcd_app":
			n.Schema = "app"
		case n.Schema == "_sqlfork_0123abcd" && n.Name == "TABLE_NAME", n.Schema == "" && n.Name == "TABLE_NAME":
			n.Schema, n.Name = "information_schema", "table_name"
		default:
			return n, rest, false
		}
		return n, rest, true
	}
	for _, c := range []struct {
		in, want []byte
		ok       bool
	}{
		{def("_sqlfork_0123abcd_app", "id"), def("app", "id"), true},
		{def("_sqlfork_0123abcd", "TABLE_NAME"), defNamed("information_schema", "table_name", "TABLE_NAME"), true},
		{def("", "TABLE_NAME"), defNamed("information_schema", "table_name", "TABLE_NAME"), true},
		{def("", "COUNT(*)"), nil, false},
		{def("app", "id"), nil, false},
		{nil, nil, false},
		{[]byte{0xFC}, nil, false},
		{[]byte{3, 'd'}, nil, false},
	} {
		out, ok := relabelColumnDef(c.in, column)
		if ok != c.ok || string(out) != string(c.want) {
			t.Errorf("relabelColumnDef(%q) = %q, %v; want %q, %v", c.in, out, ok, c.want, c.ok)
		}
	}
}
