package console

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
)

// TestTableDiffs: changes grouped per table in their order, DDL apart;
// each row's cells read as the page shows them: an update's unchanged
// cell as is and its changed ones before → after, an insert's added, a
// delete's removed, a column dropped, a column a row lacks absent, and a
// conflict's cells production changed with production's value.
func TestTableDiffs(t *testing.T) {
	ch := func(table, op, before, after, prod string) adminapi.DiffChange {
		raw := func(s string) json.RawMessage {
			if s == "" {
				return nil
			}
			return json.RawMessage(s)
		}
		return adminapi.DiffChange{Table: table, Op: op, Key: raw(`{"id": 1}`), Before: raw(before), After: raw(after), Production: raw(prod)}
	}
	tests := []struct {
		name    string
		changes []adminapi.DiffChange
		want    string // per table: name, DDL, columns, then per row op: cells
	}{
		{"update", []adminapi.DiffChange{ch("a.t", "update", `{"id": 1, "v": "x", "n": 2}`, `{"id": 1, "v": "y", "n": 2}`, "")},
			`a.t [] [id v n] update: same(1) changed("x"→"y") same(2)`},
		{"insert and delete", []adminapi.DiffChange{ch("a.t", "insert", "", `{"id": 2, "v": null}`, ""),
			ch("a.t", "delete", `{"id": 3, "v": "<b>"}`, "null", "")},
			`a.t [] [id v] insert: added(2) added(null) | delete: removed(3) removed("<b>")`},
		{"conflict", []adminapi.DiffChange{ch("a.t", "conflict", `{"id": 1, "v": 1, "w": 1}`, `{"id": 1, "v": 2, "w": 1}`, `{"id": 1, "v": 3, "w": 5}`)},
			`a.t [] [id v w] conflict: same(1) changed(1→2 prod 3) same(1 prod 5)`},
		{"conflict with a row production deleted", []adminapi.DiffChange{ch("a.t", "conflict", `{"id": 1}`, `{"id": 1}`, "null")},
			`a.t [] [id] conflict gone: same(1)`},
		{"dropped and new columns", []adminapi.DiffChange{ch("a.t", "update", `{"id": 1, "old": 1}`, `{"id": 1, "new": 2}`, ""),
			ch("a.t", "update", `{"id": 1, "x": 1}`, `{"id": 1, "x": 2}`, "")},
			`a.t [] [id new old x] update: same(1) changed((none)→2) dropped(1) absent | update: same(1) absent absent changed(1→2)`},
		{"ddl and two tables", []adminapi.DiffChange{{Table: "a.u", Op: "ddl", After: json.RawMessage(`"ALTER TABLE a.u ADD c INT"`)},
			ch("a.t", "insert", "", `{"id": 1}`, ""), ch("a.u", "insert", "", `{"id": 1}`, "")},
			`a.u [ALTER TABLE a.u ADD c INT] [id] insert: added(1) / a.t [] [id] insert: added(1)`},
		{"multi-line ddl", []adminapi.DiffChange{{Table: "a.v", Op: "ddl", After: json.RawMessage(`"CREATE TABLE v (\n  c INT\u202e\n)"`)}},
			"a.v [CREATE TABLE v (\n  c INT\\u202e\n)] [] "},
		{"hidden characters", []adminapi.DiffChange{ch("a.t\u202e", "insert", "", `{"c\u0007": "x\u001b[2J\u200b"}`, "")},
			`a.t\u202e [] [c\x07] insert: added("x\u001b[2J\u200b")`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var tables []string
			for _, td := range tableDiffs(tc.changes) {
				var rows []string
				for _, r := range td.Rows {
					var cells []string
					for _, c := range r.Cells {
						cells = append(cells, cellText(c))
					}
					op := r.Op
					if r.ProductionGone {
						op += " gone"
					}
					rows = append(rows, op+": "+strings.Join(cells, " "))
				}
				tables = append(tables, fmt.Sprintf("%s %v %v %s", td.Table, td.DDL, td.Columns, strings.Join(rows, " | ")))
			}
			if got := strings.Join(tables, " / "); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// cellText is a cell as TestTableDiffs writes it.
func cellText(c cellDiff) string {
	prod := ""
	if c.ProductionSet {
		prod = " prod " + c.Production
	}
	switch c.Kind {
	case "changed":
		return "changed(" + c.Before + "→" + c.After + prod + ")"
	case "added", "same":
		return c.Kind + "(" + c.After + prod + ")"
	case "removed", "dropped":
		return c.Kind + "(" + c.Before + prod + ")"
	}
	return c.Kind
}

// TestTableDiffsBound: past maxRowsShown rows a table's rows are counted,
// not shown.
func TestTableDiffsBound(t *testing.T) {
	var changes []adminapi.DiffChange
	for i := 0; i < maxRowsShown+7; i++ {
		changes = append(changes, adminapi.DiffChange{Table: "a.t", Op: "insert", After: json.RawMessage(fmt.Sprintf(`{"id": %d}`, i))})
	}
	td := tableDiffs(changes)
	if len(td) != 1 || len(td[0].Rows) != maxRowsShown || td[0].Hidden != 7 {
		t.Fatalf("rows %d, hidden %d", len(td[0].Rows), td[0].Hidden)
	}
}

// TestTableDiffsLargeValues: a cell shows the first maxCellShown bytes of
// a value (never half a character) and how long it is; past maxShown bytes
// of values in all, rows are counted, not shown; an update whose values
// differ only past the cut is still a change.
func TestTableDiffsLargeValues(t *testing.T) {
	big := strings.Repeat("é", maxCellShown) // two bytes each
	row := func(id int, v string) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"id": id, "v": v})
		return b
	}
	changes := []adminapi.DiffChange{{Table: "a.t", Op: "update", Before: row(1, big+"x"), After: row(1, big+"y")}}
	for i := 2; i < 5000; i++ { // five large values a row: maxShown is reached before maxRowsShown
		b, _ := json.Marshal(map[string]any{"id": i, "v1": big, "v2": big, "v3": big, "v4": big, "v5": big})
		changes = append(changes, adminapi.DiffChange{Table: "a.u", Op: "insert", After: b})
	}
	td := tableDiffs(changes)
	c := td[0].Rows[0].Cells[1]
	if c.Kind != "changed" || len(c.Before) > maxCellShown+100 || !utf8.ValidString(c.Before) ||
		!strings.HasSuffix(c.After, "… (2.0 KiB in all: EXPORT has it whole)") {
		t.Errorf("a large value's cell: %s %.60q … %q", c.Kind, c.Before, c.After[len(c.After)-60:])
	}
	shown := len(td[1].Rows)
	if shown == 0 || shown >= maxRowsShown || td[1].Hidden != 4998-shown {
		t.Errorf("values of %d bytes: %d rows shown, %d hidden", maxCellShown, shown, td[1].Hidden)
	}
}
