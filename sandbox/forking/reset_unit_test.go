package forking

import (
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
)

func TestResetMessage(t *testing.T) {
	a, b, c := rewrite.Table{DB: "app", Name: "a"}, rewrite.Table{DB: "app", Name: "b"}, rewrite.Table{DB: "app", Name: "c"}
	for _, tc := range []struct {
		r    ResetResult
		want string
	}{
		{ResetResult{All: true}, "sandbox x reset: it held no tables; it reads production as it is now"},
		{ResetResult{All: true, Reset: []rewrite.Table{a, b}}, "sandbox x reset: 2 tables (app.a, app.b) read production as it is now; the next write forks afresh"},
		{ResetResult{Reset: []rewrite.Table{a}}, "sandbox x reset: app.a read production as it is now; the next write forks afresh"},
		{ResetResult{Reset: []rewrite.Table{a, b}, Linked: []rewrite.Table{b}, Production: []rewrite.Table{c}},
			"sandbox x reset: app.a read production as it is now; the next write forks afresh; " +
				"reset with them, as foreign keys or triggers link them: app.b; not in the sandbox (production's already): app.c"},
		{ResetResult{Production: []rewrite.Table{c}}, "sandbox x reset: not in the sandbox (production's already): app.c"},
		{ResetResult{Reset: []rewrite.Table{a}, Objects: []string{"procedure app.p", "view app.v"}},
			"sandbox x reset: app.a read production as it is now; the next write forks afresh; " +
				"reset with them, as they use those tables: procedure app.p, view app.v"},
		{ResetResult{All: true, Reset: []rewrite.Table{a}, Objects: []string{"view app.v"}},
			"sandbox x reset: 1 table (app.a) read production as it is now; the next write forks afresh; " +
				"its views and stored routines went too: view app.v"},
		{ResetResult{All: true, Objects: []string{"function app.f"}},
			"sandbox x reset: it held no tables; its views and stored routines went: function app.f; it reads production as it is now"},
	} {
		if got := tc.r.Message("x"); got != tc.want {
			t.Errorf("%+v:\n got %s\nwant %s", tc.r, got, tc.want)
		}
	}
}

func TestNamesWord(t *testing.T) {
	for _, tc := range []struct {
		body, word string
		want       bool
	}{
		{"insert into `_sqlfork_ab_app`.`log` values (1)", "log", true},
		{"insert into `_sqlfork_ab_app`.`log` values (1)", "_sqlfork_ab_app", true},
		{"insert into logbook values (1)", "log", false},
		{"update t set v = 1", "t", true},
		{"update tt set v = 1", "t", false},
		{"set @x = 1", "t", false},
		{"insert into Log2 values (1)", "log2", true},
		{"", "t", false},
	} {
		if got := namesWord(tc.body, tc.word); got != tc.want {
			t.Errorf("namesWord(%q, %q) = %v, want %v", tc.body, tc.word, got, tc.want)
		}
	}
}
