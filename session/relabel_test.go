package session

import (
	"testing"

	"github.com/sqlfork/sqlfork-proxy/wire"
)

// TestRelabelColumn: a column definition of a sandbox's table names the
// logical database; a column of the sandbox's information_schema views is
// named as the statement spelled it, and one the views compute (no schema)
// is information_schema's.
func TestRelabelColumn(t *testing.T) {
	logical := func(s string) (string, bool) {
		switch s {
		case "_sqlfork_0123abcd_app":
			return "app", true
		case "_sqlfork_0123abcd":
			return "information_schema", true
		}
		return "", false
	}
	spell := func(schema, name string) (string, bool) {
		if (schema == "_sqlfork_0123abcd" || schema == "") && name == "TABLE_NAME" {
			return "table_name", true
		}
		return "", false
	}
	col := func(schema, name, orgName string) wire.ColumnNames {
		return wire.ColumnNames{Catalog: "def", Schema: schema, Table: "t", OrgTable: "TABLES", Name: name, OrgName: orgName}
	}
	for _, c := range []struct {
		in, want wire.ColumnNames
		ok       bool
	}{
		{col("_sqlfork_0123abcd_app", "id", "id"), col("app", "id", "id"), true},
		{col("_sqlfork_0123abcd", "TABLE_NAME", "TABLE_NAME"), col("information_schema", "table_name", "TABLE_NAME"), true},
		{col("", "TABLE_NAME", "TABLE_NAME"), col("information_schema", "table_name", "TABLE_NAME"), true},
		{col("", "COUNT(*)", "COUNT(*)"), col("", "COUNT(*)", "COUNT(*)"), false},
		{col("app", "id", "id"), col("app", "id", "id"), false},
	} {
		got, ok := relabelColumn(c.in, logical, spell)
		if ok != c.ok || got != c.want {
			t.Errorf("relabelColumn(%+v) = %+v, %v; want %+v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
