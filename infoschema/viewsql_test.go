package infoschema

import (
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
)

func TestProductionInfoViews(t *testing.T) {
	for _, v := range Views {
		sql := ProductionViewSQL("_sqlfork", v, []Col{{Name: "TABLE_SCHEMA"}, {Name: "TABLE_NAME"}})
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
	r := ProductionResolver{Prefix: "_sqlfork"}
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

// TestSandboxViewSQL: a sandbox's view of information_schema joins each
// pair of (schema, table) columns to the registry's rows of the sandbox
// and tells their names back, keeps production's rows the sandbox has not
// replaced or hidden, and leaves out the proxy's own databases (and its
// capture triggers); a view of routines tells the sandbox's own back and
// hides production's it replaced or dropped.
func TestSandboxViewSQL(t *testing.T) {
	const reg = "`_sqlfork_meta`.tables"
	own := "`" + sandbox.InfoSchema("_sqlfork", "0badcafe") + "`."
	internal := " NOT LIKE '!_sqlfork%' ESCAPE '!'"
	ownDB := "EXISTS (SELECT 1 FROM `_sqlfork_meta`.`databases` o WHERE o.sandbox_id = '0badcafe' AND o.db = CONVERT(i."
	cols := func(names ...string) []Col {
		out := make([]Col, len(names))
		for i, n := range names {
			out[i] = Col{Name: n}
		}
		return out
	}
	for _, tt := range []struct {
		view string
		cols []Col
		want []string
		not  []string
	}{
		{"TABLES", cols("TABLE_SCHEMA", "TABLE_NAME", "ENGINE"), []string{
			"CREATE OR REPLACE SQL SECURITY INVOKER VIEW " + own + "`TABLES` AS SELECT ",
			"LEFT JOIN " + reg + " r0 ON r0.sandbox_id = '0badcafe' AND r0.kind IN ('fork', 'schema', 'created', 'absent', 'dropped')",
			"AS `TABLE_SCHEMA`", "AS `TABLE_NAME`", ", i.`ENGINE` FROM information_schema.TABLES i ",
			"WHERE r0.sandbox_id IS NOT NULL OR (i.TABLE_SCHEMA" + internal,
			"h.kind IN ('fork', 'schema', 'created', 'dropped')", ") AND NOT " + ownDB},
			[]string{"r1", "ORDER BY", "TRIGGER_NAME"}},
		{"KEY_COLUMN_USAGE", cols("CONSTRAINT_SCHEMA", "REFERENCED_TABLE_NAME"), []string{" r0 ON ", " r1 ON ", "AS `CONSTRAINT_SCHEMA`",
			"AS `REFERENCED_TABLE_NAME`"}, nil},
		{"COLUMNS", cols("TABLE_NAME"), []string{" ORDER BY `TABLE_SCHEMA`, `TABLE_NAME`, `ORDINAL_POSITION`"}, nil},
		{"TRIGGERS", cols("TRIGGER_NAME"), []string{") AND i.TRIGGER_NAME" + internal}, nil},
		{"SCHEMATA", cols("SCHEMA_NAME"), []string{"COALESCE(d.name, i.SCHEMA_NAME) AS `SCHEMA_NAME`",
			"LEFT JOIN `_sqlfork_meta`.`databases` d ON d.sandbox_id = '0badcafe' AND d.kind IN ('created', 'recreated')",
			" WHERE d.sandbox_id IS NOT NULL OR (i.SCHEMA_NAME" + internal, "AND NOT " + ownDB}, []string{"r0"}},
		{"ROUTINES", cols("ROUTINE_SCHEMA", "ROUTINE_NAME"), []string{
			"CASE WHEN i.`ROUTINE_SCHEMA` LIKE '!_sqlfork!_0badcafe!_%' ESCAPE '!' THEN SUBSTRING(i.`ROUTINE_SCHEMA`, 19) ELSE i.`ROUTINE_SCHEMA` END",
			", i.`ROUTINE_NAME` FROM information_schema.ROUTINES i WHERE (i.`ROUTINE_SCHEMA`" + internal,
			"j.`ROUTINE_SCHEMA` = CONCAT('_sqlfork_0badcafe_', i.`ROUTINE_SCHEMA`)",
			"AND NOT (EXISTS (SELECT 1 FROM " + own + "`dropped_routines` d WHERE d.db = i.`ROUTINE_SCHEMA`", ")) OR i.`ROUTINE_SCHEMA` LIKE ",
			"ROUTINE_TYPE) OR EXISTS (SELECT 1 FROM `_sqlfork_meta`.`databases` o WHERE o.sandbox_id = '0badcafe' AND o.db = CONVERT(i.`ROUTINE_SCHEMA`"},
			[]string{"LEFT JOIN"}},
	} {
		var v View
		for _, w := range Views {
			if w.Name == tt.view {
				v = w
			}
		}
		sql := SandboxViewSQL("_sqlfork", reg, "0badcafe", v, tt.cols)
		for _, w := range tt.want {
			if !strings.Contains(sql, w) {
				t.Errorf("%s lacks %q:\n%s", tt.view, w, sql)
			}
		}
		for _, w := range tt.not {
			if strings.Contains(sql, w) {
				t.Errorf("%s holds %q:\n%s", tt.view, w, sql)
			}
		}
	}
}
