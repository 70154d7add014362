package review

import (
	"slices"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/grants"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
)

// TestPromoteNeeds: each change asks for the privileges its statements
// need, and an account lacking one is refused by name.
func TestPromoteNeeds(t *testing.T) {
	cols := forker.Shape{Columns: []forker.Column{{Name: "id"}, {Name: "v"}}, Key: []string{"id"}}
	tbl := func(name, change, method string, rows ...diffRow) *exportTable {
		dt := &diffTable{logical: rewrite.Table{DB: "app", Name: name}, fork: cols, prod: cols, key: []string{"id"},
			change: change, method: method, prodOK: change != "created"}
		return &exportTable{td: &tableDiff{t: dt, rows: rows}}
	}
	p := &promotion{order: []*exportTable{
		tbl("ins", "forked", methodCapture, diffRow{op: "insert"}),
		tbl("upd", "forked", methodCapture, diffRow{op: "update", afterLits: []string{"1", "'b'"}, beforeLits: []string{"1", "'a'"}}),
		tbl("del", "forked", methodCompare, diffRow{op: "delete"}),
		tbl("new", "created", methodCreated, diffRow{op: "insert"}),
		tbl("alt", "altered", methodCompare),
		tbl("gone", "dropped", methodDropped),
		tbl("v", "created", methodView),
		tbl("same", "forked", methodCapture),
	}}
	var got []string
	for _, n := range p.needs() {
		got = append(got, n.String())
	}
	want := []string{
		"INSERT on `app`.`ins` (`id`, `v`)", "UPDATE on `app`.`ins` (`id`, `v`)", "SELECT on `app`.`ins` (`id`, `v`)",
		"UPDATE on `app`.`upd` (`v`)", "SELECT on `app`.`upd` (`id`)", "SELECT on `app`.`upd` (`id`, `v`)",
		"DELETE on `app`.`del`", "SELECT on `app`.`del` (`id`)",
		"CREATE on `app`.`new`", "INSERT on `app`.`new` (`id`, `v`)", "UPDATE on `app`.`new` (`id`, `v`)",
		"ALTER on `app`.`alt`",
		"DROP on `app`.`gone`",
		"CREATE VIEW on `app`.`v`",
	}
	if !slices.Equal(got, want) {
		t.Errorf("needs:\n %s\nwant\n %s", strings.Join(got, "\n "), strings.Join(want, "\n "))
	}
	gs := grants.NewSet([]string{"GRANT SELECT, INSERT, UPDATE ON `app`.* TO `bob`@`%`"}, true)
	err := MissingPrivileges(gs, "bob@%", p.needs())
	if err == nil || !strings.Contains(err.Error(), "DELETE on `app`.`del`, CREATE on `app`.`new`, ALTER on `app`.`alt`, DROP on `app`.`gone`, CREATE VIEW on `app`.`v`") {
		t.Errorf("refusal: %v", err)
	}
	if err := MissingPrivileges(grants.NewSet([]string{"GRANT ALL PRIVILEGES ON `app`.* TO `bob`@`%`"}, true), "bob@%", p.needs()); err != nil {
		t.Errorf("ALL PRIVILEGES ON app.*: %v", err)
	}
}
