package main

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
	"github.com/sqlfork/sqlfork-proxy/quote"
)

// How the CLI shows a diff's rows to a person: an update as the columns it
// changed (`price: 89.90 → 99.00`), an insert as its row, a delete as the
// row it removed, DDL as its statement; on a terminal in colour (a value
// replaced or a row deleted red, a value written or a row inserted green,
// DDL cyan, a conflict yellow); and sizes in binary units.

// changeText is what ch changed, for a person: the columns an update (or
// a conflict) changed, before → after; an insert's row; a deleted row;
// painted by p.
func changeText(ch adminapi.DiffChange, p painter) string {
	switch {
	case ch.Op == "ddl":
		return p.paint(schema, jsonCell(ch.After))
	case nullJSON(ch.Before):
		return p.paint(added, jsonCell(ch.After))
	case nullJSON(ch.After):
		return p.paint(removed, "deleted "+jsonCell(ch.Before))
	}
	names, before, okB := fields(ch.Before)
	afterNames, after, okA := fields(ch.After)
	if !okB || !okA {
		return p.paint(removed, jsonCell(ch.Before)) + " → " + p.paint(added, jsonCell(ch.After))
	}
	var parts []string
	for _, n := range afterNames {
		b, had := before[n]
		if had && b == after[n] {
			continue
		}
		from := "(none)"
		if had {
			from = p.paint(removed, valueText(b))
		}
		parts = append(parts, cell(n)+": "+from+" → "+p.paint(added, valueText(after[n])))
	}
	for _, n := range names {
		if _, ok := after[n]; !ok {
			parts = append(parts, cell(n)+": "+p.paint(removed, valueText(before[n]))+" → (dropped)")
		}
	}
	return orDash(strings.Join(parts, ", "))
}

// fields are a JSON object's names, in order, and their values compacted.
func fields(v json.RawMessage) (names []string, vals map[string]string, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(v))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, false
	}
	vals = map[string]string{}
	for dec.More() {
		t, err := dec.Token()
		name, isName := t.(string)
		if err != nil || !isName {
			return nil, nil, false
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, false
		}
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return nil, nil, false
		}
		names, vals[name] = append(names, name), b.String()
	}
	return names, vals, true
}

// valueText is a compact JSON value for a terminal: escaped so that it
// cannot act on it.
func valueText(v string) string { return quote.JSONSafe(v) }

// nullJSON reports an absent or null JSON value.
func nullJSON(v json.RawMessage) bool { return len(v) == 0 || string(v) == "null" }

// opStyle is the colour of a diff's op.
func opStyle(op string) style {
	switch op {
	case "insert":
		return added
	case "delete":
		return removed
	case "conflict":
		return conflict
	case "ddl":
		return schema
	}
	return plain
}

// changeStyle is the colour of a summary's change of a table.
func changeStyle(change string) style {
	switch change {
	case "created":
		return added
	case "dropped":
		return removed
	case "altered":
		return schema
	}
	return plain
}

// count is n, painted s when it is not 0.
func count(p painter, s style, n int64) string {
	text := strconv.FormatInt(n, 10)
	if n == 0 {
		return text
	}
	return p.paint(s, text)
}
