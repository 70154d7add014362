package review

import (
	"slices"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
)

// TestPromotedRows: the images a new capture gets after a promote are the
// rows it wrote, keyed by the new capture's key (taken from the rows'
// values); they are all the table's rows for a created table and an
// altered one compared whole, not for one compared by changed rows.
func TestPromotedRows(t *testing.T) {
	shape := forker.Shape{Columns: []forker.Column{tName, tID}, Key: []string{"id"}}
	ins := diffRow{op: "insert", keyLits: []string{"1"}, afterLits: []string{"'a'", "1"}}
	upd := diffRow{op: "update", keyLits: []string{"2"}, afterLits: []string{"'b'", "2"}}
	del := diffRow{op: "delete", keyLits: []string{"3"}, afterLits: []string{"NULL", "NULL"}}
	shared := diffRow{op: "insert", afterLits: []string{"'c'"}} // a table compared by the columns it shares
	for _, c := range []struct {
		name   string
		et     *exportTable
		keys   []string
		allOut bool
	}{
		{"created", &exportTable{td: &tableDiff{t: &diffTable{method: methodCreated}, rows: []diffRow{ins}}}, []string{"1"}, true},
		{"compared by key", &exportTable{td: &tableDiff{t: &diffTable{method: methodCompare, change: "forked"}, rows: []diffRow{ins, upd, del}}},
			[]string{"1", "2"}, false},
		{"altered, compared whole", &exportTable{td: &tableDiff{t: &diffTable{method: methodCompare, change: "altered"}},
			all: []diffRow{{op: "insert", afterLits: []string{"'a'", "1"}}}, gone: []diffRow{del}}, []string{"1"}, true},
		{"values of other columns", &exportTable{td: &tableDiff{t: &diffTable{method: methodCreated}, rows: []diffRow{ins, shared}}}, []string{"1"}, false},
	} {
		rows, all := promotedRows(c.et, shape)
		var keys []string
		for _, r := range rows {
			if r.op != "insert" || len(r.afterLits) != 2 {
				t.Errorf("%s: image %+v, want an insert of the row's values", c.name, r)
			}
			keys = append(keys, strings.Join(r.keyLits, ","))
		}
		if !slices.Equal(keys, c.keys) || all != c.allOut {
			t.Errorf("%s: keys %v (all %v), want %v (all %v)", c.name, keys, all, c.keys, c.allOut)
		}
	}
	if rows, all := promotedRows(&exportTable{td: &tableDiff{t: &diffTable{method: methodCreated}, rows: []diffRow{ins}}},
		forker.Shape{Columns: shape.Columns, Key: []string{"gone"}}); rows != nil || all {
		t.Errorf("a key the columns lack: %v, %v; want no image", rows, all)
	}
}

// TestUnwrittenKeys: a key the fork has that no image holds is marked as
// one the fork had not (0).
func TestUnwrittenKeys(t *testing.T) {
	p := &promotion{m: &Reviewer{cfg: Config{Prefix: "_sqlfork"}}}
	got := p.unwrittenKeys(rewrite.Table{DB: "s", Name: "c_1"}, rewrite.Table{DB: "f", Name: "t"}, []string{"a", "b"})
	want := "INSERT IGNORE INTO `s`.`c_1` (`a`, `b`, `_sqlfork_existed`) SELECT f.`a`, f.`b`, 0 FROM `f`.`t` f LEFT JOIN `s`.`c_1` s " +
		"ON s.`a` = f.`a` AND s.`b` = f.`b` WHERE s.`a` IS NULL"
	if got != want {
		t.Errorf("got\n %s\nwant\n %s", got, want)
	}
}
