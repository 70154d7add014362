package forking

import (
	"slices"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
)

func TestResetDependents(t *testing.T) {
	sb := func(name string) rewrite.Table { return rewrite.Table{DB: "_sqlfork_ab_app", Name: name} }
	objs := []sbObject{
		{kind: objView, at: sb("tv"), def: "select `_sqlfork_ab_app`.`t`.`id` AS `id` from `_sqlfork_ab_app`.`t`"},
		{kind: objView, at: sb("tv2"), def: "select `_sqlfork_ab_app`.`tv`.`id` AS `id` from `_sqlfork_ab_app`.`tv`"},
		{kind: objFunction, at: sb("rf"), def: "RETURN (SELECT v FROM t WHERE id = 1)"},
		{kind: objProcedure, at: sb("rp"), def: "SELECT `_sqlfork_ab_app`.`rf`()"},
		{kind: objView, at: sb("uv"), def: "select `_sqlfork_ab_app`.`u`.`v` AS `v` from `_sqlfork_ab_app`.`u`"},
		{kind: objProcedure, at: rewrite.Table{DB: "_sqlfork_ab_other", Name: "op"}, def: "SELECT v FROM t"},
		{kind: objProcedure, at: sb("hidden"), unreadable: true},
		{kind: objTrigger, at: sb("w"), def: "SET NEW.v = `_sqlfork_ab_app`.`rf`()"},
		{kind: objTrigger, at: sb("x"), def: "SET NEW.v = 1"},
		{kind: objView, at: sb("tt"), def: "select `_sqlfork_ab_app`.`tt2`.`v` AS `v` from `_sqlfork_ab_app`.`tt2`"},
		{kind: objTrigger, at: sb("t"), def: "SET NEW.v = NEW.v + 1"},
	}
	taken, tables := dependents(objs, []rewrite.Table{sb("t")})
	if want := []int{0, 1, 2, 3, 6}; !slices.Equal(taken, want) {
		t.Errorf("dependents of t: %v, want %v", taken, want)
	}
	if want := []rewrite.Table{sb("w")}; !slices.Equal(tables, want) {
		t.Errorf("tables whose triggers use what goes with t: %v, want %v", tables, want)
	}
	if taken, tables := dependents(objs, []rewrite.Table{sb("u")}); !slices.Equal(taken, []int{4, 6}) || len(tables) != 0 {
		t.Errorf("dependents of u: %v, tables %v; want uv and the unreadable one", taken, tables)
	}
	if taken, tables := dependents(objs, nil); !slices.Equal(taken, []int{6}) || len(tables) != 0 {
		t.Errorf("dependents of nothing: %v, tables %v; want only the unreadable one", taken, tables)
	}
}

func TestResetObjectLabel(t *testing.T) {
	o := sbObject{kind: objProcedure, at: rewrite.Table{DB: "_sqlfork_ab_app", Name: "rp"}}
	if got := o.label(func(string) string { return "app" }); got != "procedure app.rp" {
		t.Errorf("label: %q", got)
	}
}
