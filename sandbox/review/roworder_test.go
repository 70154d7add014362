package review

import (
	"slices"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/forker"
)

// TestParentsFirst: the rows of a tree are put parents first, by the
// literals of their foreign key and key; rows in a cycle come last, said.
func TestParentsFirst(t *testing.T) {
	cols := []forker.Column{{Name: "id"}, {Name: "parent"}}
	fks := []forker.ForeignKey{{Columns: []string{"parent"}, RefColumns: []string{"id"}}}
	row := func(id, parent string) diffRow { return diffRow{afterLits: []string{id, parent}} }
	ids := func(rows []diffRow) []string {
		var out []string
		for _, r := range rows {
			out = append(out, r.afterLits[0])
		}
		return out
	}
	lits := func(r diffRow) []string { return r.afterLits }
	got, cyclic := parentsFirst([]diffRow{row("1", "3"), row("2", "NULL"), row("3", "2"), row("4", "9")}, cols, fks, lits)
	if want := []string{"2", "4", "3", "1"}; !slices.Equal(ids(got), want) || cyclic {
		t.Errorf("tree: %v (cyclic %v), want %v", ids(got), cyclic, want)
	}
	got, cyclic = parentsFirst([]diffRow{row("20", "22"), row("21", "20"), row("22", "21"), row("5", "NULL")}, cols, fks, lits)
	if want := []string{"5", "20", "21", "22"}; !slices.Equal(ids(got), want) || !cyclic {
		t.Errorf("cycle: %v (cyclic %v), want %v, cyclic", ids(got), cyclic, want)
	}
	et := &exportTable{td: &tableDiff{t: &diffTable{fork: forker.Shape{Columns: cols}, key: []string{"id"}, change: "forked"},
		rows: []diffRow{{op: "insert", afterLits: []string{"20", "22"}}, {op: "insert", afterLits: []string{"21", "20"}},
			{op: "insert", afterLits: []string{"22", "21"}}}}, selfFKs: fks}
	et.deferCycles()
	if len(et.deferFKs) != 1 {
		t.Fatalf("a cycle of rows does not defer the foreign key: %v", et.deferFKs)
	}
	ups := et.deferredUpdates(cols, []string{"`id`", "`parent`"}, et.td.rows)
	if want := []string{"UPDATE ``.`` SET `parent` = 22 WHERE `id` = 20", "UPDATE ``.`` SET `parent` = 20 WHERE `id` = 21",
		"UPDATE ``.`` SET `parent` = 21 WHERE `id` = 22"}; !slices.Equal(ups, want) {
		t.Errorf("deferred updates %q, want %q", ups, want)
	}
}
