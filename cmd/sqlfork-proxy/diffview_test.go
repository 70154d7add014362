package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
)

// TestChangeText: an update shows the columns it changed, in the row's
// order (a column added or dropped too), an insert its row, a delete the
// row it removed, DDL its statement; names and values reach the terminal
// escaped.
func TestChangeText(t *testing.T) {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	for _, c := range []struct {
		name string
		ch   adminapi.DiffChange
		want string
	}{
		{"update", adminapi.DiffChange{Op: "update", Before: raw(`{"id": 1, "price": 89.90, "name": "pen"}`),
			After: raw(`{"id": 1, "price": 99.00, "name": "pen"}`)}, "price: 89.90 → 99.00"},
		{"a column added and one dropped", adminapi.DiffChange{Op: "update", Before: raw(`{"id": 1, "legacy": 7}`),
			After: raw(`{"id": 1, "discontinued": 1}`)}, "discontinued: (none) → 1, legacy: 7 → (dropped)"},
		{"nothing it can name", adminapi.DiffChange{Op: "update", Before: raw(`{"id": 1}`), After: raw(`{"id": 1}`)}, "-"},
		{"insert", adminapi.DiffChange{Op: "insert", After: raw(`{"id": 4, "v": "x"}`)}, `{"id":4,"v":"x"}`},
		{"delete", adminapi.DiffChange{Op: "delete", Before: raw(`{"id": 2}`)}, `deleted {"id":2}`},
		{"ddl", adminapi.DiffChange{Op: "ddl", After: raw(`"ALTER TABLE t\nADD c INT"`)}, "ALTER TABLE t ADD c INT"},
		{"hostile", adminapi.DiffChange{Op: "update", Before: raw(`{"\u001b[2J": "a"}`), After: raw(`{"\u001b[2J": "\u001b]0;x\u0007"}`)},
			`\x1b[2J: "a" → "\u001b]0;x\u0007"`},
	} {
		got := changeText(c.ch, painter{})
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
		if strings.ContainsAny(got, "\x1b\x07\n\r") {
			t.Errorf("%s: %q holds what a terminal acts on", c.name, got)
		}
	}
}
