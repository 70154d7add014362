package forking

import (
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
)

// boundsShape is a table with a primary key, a unique string, a unique
// TIMESTAMP, a unique DECIMAL, a composite unique key and an invisible
// column before them.
func boundsShape() forker.Shape {
	return forker.Shape{
		Columns: []forker.Column{
			{Name: "id", Type: "int(11)", DataType: "int", Auto: true},
			{Name: "h", Type: "int(11)", DataType: "int", Invisible: true, Nullable: true, DefaultNull: true},
			{Name: "u", Type: "varchar(8) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci", DataType: "varchar", Nullable: true, DefaultNull: true},
			{Name: "ts", Type: "timestamp", DataType: "timestamp", Nullable: true, DefaultNull: true},
			{Name: "d", Type: "decimal(6,2)", DataType: "decimal", Nullable: true, DefaultNull: true},
			{Name: "a", Type: "tinyint(3) unsigned", DataType: "tinyint", Nullable: true, DefaultNull: true},
			{Name: "b", Type: "int(11)", DataType: "int", Nullable: true, DefaultNull: true},
			{Name: "v", Type: "int(11)", DataType: "int"},
		},
		Key:     []string{"id"},
		Uniques: []forker.Unique{{Columns: []string{"id"}}, {Columns: []string{"u"}}, {Columns: []string{"ts"}}, {Columns: []string{"d"}}, {Columns: []string{"a", "b"}}},
	}
}

func TestCopyUpWhere(t *testing.T) {
	e := rewrite.NewEngine(0)
	for _, tc := range []struct {
		sql, want string
		ok        bool
		keys      string   // CopyUp.Keys, joined with ","
		vals      []string // an execution's parameters (rewrite.Bounds.Bind)
	}{
		{"SELECT * FROM t WHERE id = 5", "(`id` = 5)", true, "5", nil},
		{"UPDATE t SET v = 1 WHERE id IN (1, 2, 1)", "(`id` = 1) OR (`id` = 2) OR (`id` = 1)", true, "1,2", nil},
		{"DELETE FROM t WHERE u = 'ab' AND v = 3", "(`u` = 'ab')", true, "", nil},
		{"SELECT * FROM t WHERE a = 1 AND b IN (2, 3)", "(`a` = 1 AND `b` = 2) OR (`a` = 1 AND `b` = 3)", true, "", nil},
		{"SELECT * FROM t WHERE v = 5", "", false, "", nil},                                         // no unique key pinned
		{"SELECT * FROM t WHERE ts = '2020-01-01 00:00:00'", "", false, "", nil},                    // read in the session's time zone
		{"UPDATE t SET u = 'x' WHERE id = 5", "", false, "", nil},                                   // moves a key
		{"INSERT INTO t (id, u, v) VALUES (7, 'q', 1)", "(`id` = 7) OR (`u` = 'q')", true, "", nil}, // u may collide with another id
		{"INSERT INTO t (id, v) VALUES (7, 1), (9, 2)", "(`id` = 7) OR (`id` = 9)", true, "7,9", nil},
		{"REPLACE INTO t (id, v) VALUES (-3, 1)", "(`id` = -3)", true, "-3", nil},
		{"INSERT INTO t (v) VALUES (1)", "", true, "", nil},                         // the server's id, NULL keys: nothing to copy
		{"INSERT INTO t (id, u, v) VALUES (7, 'abcdefghi', 1)", "", false, "", nil}, // longer than varchar(8)
		{"INSERT INTO t (id, u, v) VALUES (7, 'ab ', 1)", "", false, "", nil},       // trailing blank
		{"INSERT INTO t (id, d, v) VALUES (7, 12, 1)", "(`id` = 7) OR (`d` = 12)", true, "", nil},
		{"INSERT INTO t (id, d, v) VALUES (7, '12.345', 1)", "", false, "", nil},  // rounded
		{"INSERT INTO t (id, d, v) VALUES (7, 12345, 1)", "", false, "", nil},     // past decimal(6,2)
		{"INSERT INTO t (id, a, b, v) VALUES (7, 300, 1, 1)", "", false, "", nil}, // clipped in a TINYINT UNSIGNED
		{"INSERT INTO t (id, a, b, v) VALUES (7, 3, 1, 1)", "(`id` = 7) OR (`a` = 3 AND `b` = 1)", true, "", nil},
		{"INSERT INTO t (id, v) VALUES ('7', 1)", "", false, "", nil}, // a string to an INT
		{"INSERT INTO t (id, ts, v) VALUES (7, '2020-01-01', 1)", "", false, "", nil},
		{"INSERT INTO t VALUES (7, 'q', NULL, NULL, NULL, NULL, 1)", "(`id` = 7) OR (`u` = 'q')", true, "", nil}, // h invisible
		{"INSERT INTO t (id, v) VALUES (7, 1) ON DUPLICATE KEY UPDATE u = 'z'", "", false, "", nil},
		{"REPLACE INTO t (id, u, v) VALUES (8, 'r', 1)", "(`id` = 8) OR (`u` = 'r')", true, "", nil},
		{"SELECT * FROM t JOIN s ON s.id = t.id WHERE t.id = 1", "", false, "", nil},
		// Placeholders pin only when bound to an execution's values.
		{"SELECT * FROM t WHERE id = ?", "", false, "", nil},
		{"SELECT * FROM t WHERE id = ?", "(`id` = 5)", true, "5", []string{"5"}},
		{"SELECT * FROM t WHERE id = ?", "", false, "", []string{"NULL"}},
		{"UPDATE t SET v = ? WHERE id IN (?, ?)", "(`id` = 6) OR (`id` = -1)", true, "6,-1", []string{"1", "6", "-1"}},
		{"INSERT INTO t (id, u, v) VALUES (?, ?, ?)", "(`id` = 7) OR (`u` = 'q')", true, "", []string{"7", "'q'", "1"}},
		{"INSERT INTO t (id, u, v) VALUES (?, ?, ?)", "(`id` = 7)", true, "7", []string{"7", "NULL", "1"}},
		{"INSERT INTO t (id, u, v) VALUES (?, ?, ?)", "", false, "", []string{"", "'q'", "1"}},
		{"INSERT INTO t (id, v) VALUES (?, 1)", "", false, "", []string{"'7'"}}, // a string to an INT
		// A number against a string key: many strings equal it.
		{"SELECT * FROM t WHERE u = ?", "", false, "", []string{"0"}},
		{"SELECT * FROM t WHERE u = 0", "", false, "", nil},
		{"SELECT * FROM t WHERE u IN ('a', 5)", "", false, "", nil},
		{"SELECT * FROM t WHERE u = 0 AND id = 3", "(`id` = 3)", true, "3", nil},
		{"INSERT INTO t (id, u, v) VALUES (7, 12, 1)", "(`id` = 7) OR (`u` = '12')", true, "", nil}, // stores '12'
		{"INSERT INTO t (id, u, v) VALUES (7, -1, 1)", "(`id` = 7) OR (`u` = '-1')", true, "", nil},
	} {
		a := e.Analyze(tc.sql, rewrite.Options{DB: "app"})
		if len(a.Statements) != 1 {
			t.Fatalf("%s: %d statements", tc.sql, len(a.Statements))
		}
		st := a.Statements[0]
		if tc.vals != nil {
			st.Bounds = st.Bounds.Bind(tc.vals)
		}
		got, ok := CopyUpWhere(st, boundsShape())
		if got.Where != tc.want || ok != tc.ok {
			t.Errorf("%s: %q, %v; want %q, %v", tc.sql, got.Where, ok, tc.want, tc.ok)
		}
		if keys := strings.Join(got.Keys, ","); keys != tc.keys {
			t.Errorf("%s: keys %q; want %q", tc.sql, keys, tc.keys)
		}
	}
}

func TestStoresExactly(t *testing.T) {
	for _, tc := range []struct {
		col  forker.Column
		lit  string
		want bool
	}{
		{forker.Column{DataType: "bigint", Type: "bigint(20) unsigned"}, "18446744073709551615", true},
		{forker.Column{DataType: "bigint", Type: "bigint(20) unsigned"}, "-1", false},
		{forker.Column{DataType: "bigint", Type: "bigint(20)"}, "-9223372036854775808", true},
		{forker.Column{DataType: "bigint", Type: "bigint(20)"}, "9223372036854775808", false},
		{forker.Column{DataType: "int", Type: "int(11)"}, "'5'", false},
		{forker.Column{DataType: "varchar", Type: "varchar(3)"}, "123", true},
		{forker.Column{DataType: "varchar", Type: "varchar(3)"}, "1234", false},
		{forker.Column{DataType: "binary", Type: "binary(2)"}, "'ab'", true},
		{forker.Column{DataType: "binary", Type: "binary(3)"}, "'ab'", false},
		{forker.Column{DataType: "decimal", Type: "decimal(5,2) unsigned"}, "-1", false},
		{forker.Column{DataType: "double", Type: "double"}, "1", false},
		{forker.Column{DataType: "date", Type: "date"}, "'2020-01-01'", false},
	} {
		if got := storesExactly(tc.col, tc.lit); got != tc.want {
			t.Errorf("%s ← %s: %v, want %v", tc.col.Type, tc.lit, got, tc.want)
		}
	}
}
