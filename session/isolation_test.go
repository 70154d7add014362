package session

import (
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/infoschema"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
)

func TestProductionInfoViews(t *testing.T) {
	m := &Manager{cfg: Config{Prefix: "_sqlfork"}}
	for _, v := range infoschema.Views {
		sql := m.prodViewSQL(v, []infoschema.Col{{Name: "TABLE_SCHEMA"}, {Name: "TABLE_NAME"}})
		if !strings.HasPrefix(sql, "CREATE OR REPLACE SQL SECURITY INVOKER VIEW `_sqlfork_production`.`"+v.Name+"` AS SELECT ") {
			t.Errorf("%s: %s", v.Name, sql)
		}
		var cols []string
		switch {
		case v.RoutineSchema != "":
			cols = append(cols, v.RoutineSchema)
		case len(v.Pairs) == 0:
			cols = append(cols, "SCHEMA_NAME")
		}
		for _, p := range v.Pairs {
			cols = append(cols, p[0])
		}
		for _, c := range append(cols, v.SchemaCols...) {
			if !strings.Contains(sql, "i."+c+" NOT LIKE '!_sqlfork%' ESCAPE '!'") {
				t.Errorf("%s does not leave out the proxy's databases by %s: %s", v.Name, c, sql)
			}
		}
	}
	r := infoschema.ProductionResolver{Prefix: "_sqlfork"}
	for in, want := range map[rewrite.Table]rewrite.Table{
		{DB: "information_schema", Name: "tables"}:      {DB: "_sqlfork_production", Name: "TABLES"},
		{DB: "INFORMATION_SCHEMA", Name: "SCHEMATA"}:    {DB: "_sqlfork_production", Name: "SCHEMATA"},
		{DB: "information_schema", Name: "PROCESSLIST"}: {DB: "information_schema", Name: "PROCESSLIST"},
		{DB: "app", Name: "tables"}:                     {DB: "app", Name: "tables"},
	} {
		if got, _, err := r.Resolve(in, false); err != nil || got != want {
			t.Errorf("Resolve(%v) = %v, %v; want %v", in, got, err, want)
		}
	}
}
