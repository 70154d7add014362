package console

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
	"github.com/sqlfork/sqlfork-proxy/internal/human"
	"github.com/sqlfork/sqlfork-proxy/quote"
)

// How a sandbox's page shows its diff: per table, its DDL as SQL, then
// its changed rows in a table of its columns, where an update's changed
// cells read `before → after`, an insert's row is added and a delete's
// removed, and a conflict's cells production changed too carry
// production's value. Values are compact JSON, as the CLI shows them (a
// string quoted, NULL as null), with control, invisible and
// bidirectional characters escaped (quote.JSONSafe).

// maxRowsShown bounds the rows shown per table; maxCellShown the bytes of
// a value a cell shows (cut, and said so); maxShown the bytes of the
// values a page shows in all, past which the rows of every table are
// counted, not shown. EXPORT has them all, whole. Without the last two a
// sandbox's values make its page, and the proxy's memory as it renders it,
// as large as they are.
const (
	maxRowsShown = 500
	maxCellShown = 1 << 10
	maxShown     = 2 << 20
)

// tableDiff is one table's changes.
type tableDiff struct {
	Anchor  string
	Table   string
	DDL     []string
	Columns []string
	Rows    []rowDiff
	// Hidden counts the rows past maxRowsShown or maxShown.
	Hidden int
}

// rowDiff is one changed row.
type rowDiff struct {
	Op, Key string
	Cells   []cellDiff
	// ProductionGone: a conflict whose row production deleted.
	ProductionGone bool
}

// cellDiff is one cell of a changed row.
type cellDiff struct {
	// Kind is same (as before), changed (Before → After), added (a new
	// row's), removed (a deleted row's), dropped (a column the sandbox's
	// row no longer has) or absent (a column this row has not).
	Kind          string
	Before, After string
	// Production is production's value of a conflict's cell that it
	// changed since the fork (ProductionSet).
	Production    string
	ProductionSet bool
}

// row is a JSON object's columns in order and their values, compact.
type row struct {
	names []string
	vals  map[string]string
}

// tableDiffs groups changes by table, in their order.
func tableDiffs(changes []adminapi.DiffChange) []tableDiff {
	var out []tableDiff
	index := map[string]int{}
	shown := 0
	for _, ch := range changes {
		i, ok := index[ch.Table]
		if !ok {
			i = len(out)
			index[ch.Table] = i
			out = append(out, tableDiff{Anchor: "table-" + strconv.Itoa(i+1), Table: quote.Display(ch.Table)})
		}
		t := &out[i]
		if ch.Op == "ddl" {
			t.DDL = append(t.DDL, ddlText(ch.After))
			continue
		}
		if len(t.Rows) >= maxRowsShown || shown >= maxShown {
			t.Hidden++
			continue
		}
		shown += t.addRow(ch)
	}
	return out
}

// clip is v as a cell shows it: its first maxCellShown bytes (cut where a
// character starts), then how long it is in all.
func clip(v string) string {
	if len(v) <= maxCellShown {
		return v
	}
	cut := maxCellShown
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return v[:cut] + "… (" + human.Bytes(int64(len(v))) + " in all: EXPORT has it whole)"
}

// ddlText is the statement of a ddl change, a JSON string.
func ddlText(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) != nil {
		return quote.JSONSafe(string(v))
	}
	return displayLines(s)
}

// displayLines is SQL text for a <pre>: each line as quote.Display shows
// it, the line ends kept.
func displayLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = quote.Display(l)
	}
	return strings.Join(lines, "\n")
}

// addRow adds ch's row to t, and its columns t has not yet: the bytes of
// the values it shows.
func (t *tableDiff) addRow(ch adminapi.DiffChange) int {
	before, after, prod := readRow(ch.Before), readRow(ch.After), readRow(ch.Production)
	for _, r := range []row{after, before, prod} {
		for _, n := range r.names {
			if !slices.Contains(t.Columns, n) {
				t.Columns = append(t.Columns, n)
			}
		}
	}
	rd := rowDiff{Op: quote.Display(ch.Op), Key: clip(compact(ch.Key)),
		ProductionGone: ch.Op == "conflict" && nullJSON(ch.Production)}
	for i := range t.Rows {
		// Earlier rows get the columns this one brought.
		for len(t.Rows[i].Cells) < len(t.Columns) {
			t.Rows[i].Cells = append(t.Rows[i].Cells, cellDiff{Kind: "absent"})
		}
	}
	size := len(rd.Key)
	for _, col := range t.Columns {
		c := diffCell(col, before, after, prod, ch.Op == "conflict")
		c.Before, c.After, c.Production = clip(c.Before), clip(c.After), clip(c.Production)
		size += len(c.Before) + len(c.After) + len(c.Production)
		rd.Cells = append(rd.Cells, c)
	}
	t.Rows = append(t.Rows, rd)
	return size
}

// diffCell is column col of a change from before to after, with
// production's row prod for a conflict.
func diffCell(col string, before, after, prod row, conflict bool) cellDiff {
	b, hadB := before.vals[col]
	a, hasA := after.vals[col]
	var c cellDiff
	switch {
	case before.vals == nil && hasA:
		c = cellDiff{Kind: "added", After: a}
	case after.vals == nil && hadB:
		c = cellDiff{Kind: "removed", Before: b}
	case hadB && !hasA:
		c = cellDiff{Kind: "dropped", Before: b}
	case !hasA:
		c = cellDiff{Kind: "absent"}
	case hadB && b == a:
		c = cellDiff{Kind: "same", After: a}
	default:
		c = cellDiff{Kind: "changed", Before: b, After: a}
		if !hadB {
			c.Before = "(none)"
		}
	}
	if p, ok := prod.vals[col]; conflict && ok && p != b {
		c.Production, c.ProductionSet = p, true
	}
	return c
}

// readRow reads a JSON object; a zero row for null, or for what is not an
// object.
func readRow(v json.RawMessage) row {
	if nullJSON(v) {
		return row{}
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return row{}
	}
	r := row{vals: map[string]string{}}
	for dec.More() {
		t, err := dec.Token()
		name, ok := t.(string)
		if err != nil || !ok {
			return row{}
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return row{}
		}
		name = quote.Display(name)
		r.names, r.vals[name] = append(r.names, name), compact(raw)
	}
	return r
}

// compact is JSON value v compact, for a person: a string with the
// characters JSON may write as \u escapes (<, >, &) as themselves, and
// with control, invisible and bidirectional characters escaped
// (quote.JSONSafe).
func compact(v json.RawMessage) string {
	if len(v) == 0 {
		return ""
	}
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return quote.JSONSafe(string(v))
	}
	out := b.Bytes()
	var s string
	if out[0] == '"' && json.Unmarshal(out, &s) == nil {
		var e bytes.Buffer
		enc := json.NewEncoder(&e)
		enc.SetEscapeHTML(false)
		if enc.Encode(s) == nil {
			out = bytes.TrimSuffix(e.Bytes(), []byte("\n"))
		}
	}
	return quote.JSONSafe(string(out))
}

// nullJSON reports an absent or null JSON value.
func nullJSON(v json.RawMessage) bool { return len(v) == 0 || string(v) == "null" }
