package forking

import (
	"strconv"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
)

// maxCopyUpKeys bounds the keys one statement copies up; past it the
// statement waits for the whole fork.
const maxCopyUpKeys = 256

// CopyUp is what a statement copies up into a filling fork: the rows
// Where selects (a condition on the table's columns; "": none). Keys,
// when not empty, are the values of the table's one-column key that Where
// pins each of those rows to.
type CopyUp struct {
	Where string
	Keys  []string
}

// CopyUpWhere is the condition on a filling fork's columns that selects
// every production row st could read, change or collide with, from the
// literal key values st pins (rewrite.Bounds) and the table's unique keys
// (shape); ok is false when st's rows are not bounded so: then it waits
// for the whole fork. An empty Where with ok: no row to copy up.
//
// The condition runs on the fill's snapshot connection, whose session
// settings are not the client's: it compares only columns whose
// comparison with the literals rewrite allows reads the same in every
// session (numbers, text, bytes; not times, whose literals read in the
// session's time zone and sql_mode). For an insert each value must be
// stored as written (storesExactly): a key is found by the value the
// row will hold.
func CopyUpWhere(st rewrite.Statement, shape forker.Shape) (CopyUp, bool) {
	b := st.Bounds.Bind(nil) // placeholders without an execution's values pin nothing
	if b == nil {
		return CopyUp{}, false
	}
	if assignsKey(b.Assigned, shape) {
		return CopyUp{}, false // a key that moves may land on a row not there yet
	}
	var groups [][]term
	ok := false
	switch st.Kind {
	case rewrite.KindSelect, rewrite.KindUpdate, rewrite.KindDelete:
		groups, ok = pinnedKey(b.Equal, shape)
	case rewrite.KindInsert, rewrite.KindReplace:
		groups, ok = insertedKeys(b, shape)
	}
	if !ok || len(groups) == 0 {
		return CopyUp{}, ok
	}
	return CopyUp{Where: orOf(groups), Keys: keyValues(groups, shape)}, true
}

// term is one column's literal value in a condition.
type term struct{ col, val string }

// keyValues are the values groups give the table's one-column key, when
// each group gives it one (nil otherwise).
func keyValues(groups [][]term, shape forker.Shape) []string {
	if len(shape.Key) != 1 {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, g := range groups {
		found := false
		for _, t := range g {
			if strings.EqualFold(t.col, shape.Key[0]) {
				found = true
				if !seen[t.val] {
					seen[t.val] = true
					out = append(out, t.val)
				}
			}
		}
		if !found {
			return nil
		}
	}
	return out
}

// assignsKey says whether cols (lower case) hold a column of a unique key;
// any column counts when a unique key holds a generated column (computed
// from columns the proxy does not trace).
func assignsKey(cols []string, shape forker.Shape) bool {
	for _, u := range shape.Uniques {
		for _, c := range u.Columns {
			if col, _ := shape.Column(c); col.Generated && len(cols) > 0 {
				return true
			}
			for _, a := range cols {
				if strings.EqualFold(a, c) {
					return true
				}
			}
		}
	}
	return false
}

// comparable says whether a column's comparison with an allowed literal
// reads the same in every session.
func comparable(c forker.Column) bool {
	switch c.DataType {
	case "tinyint", "smallint", "mediumint", "int", "integer", "bigint", "decimal", "numeric", "float", "double", "real",
		"char", "varchar", "tinytext", "text", "mediumtext", "longtext", "binary", "varbinary":
		return !c.Generated
	}
	return false
}

// textual says whether c holds strings.
func textual(c forker.Column) bool {
	switch c.DataType {
	case "char", "varchar", "tinytext", "text", "mediumtext", "longtext", "binary", "varbinary":
		return true
	}
	return false
}

// numberToString says whether vals compare a number with the strings of
// column c: the server compares them as numbers, where many strings equal
// one number ('x', 'y' and '0' all equal 0), so a unique key does not
// bound the rows.
func numberToString(c forker.Column, vals []string) bool {
	if !textual(c) {
		return false
	}
	for _, v := range vals {
		if !strings.HasPrefix(v, "'") {
			return true
		}
	}
	return false
}

// pinnedKey is the condition of the first unique key whose every column
// eq pins: one conjunction per combination of their values.
func pinnedKey(eq map[string][]string, shape forker.Shape) ([][]term, bool) {
	for _, u := range shape.Uniques {
		combos := [][]term{nil}
		for _, c := range u.Columns {
			col, _ := shape.Column(c)
			vals := eq[strings.ToLower(c)]
			if !comparable(col) || len(vals) == 0 || len(combos)*len(vals) > maxCopyUpKeys || numberToString(col, vals) {
				combos = nil
				break
			}
			var next [][]term
			for _, pre := range combos {
				for _, v := range vals {
					next = append(next, append(append([]term(nil), pre...), term{c, v}))
				}
			}
			combos = next
		}
		if len(combos) > 0 {
			return combos, true
		}
	}
	return nil, false
}

// insertedKeys is the condition of every row that shares a unique key's
// values with a row b inserts: a key with a NULL (or an AUTO_INCREMENT
// column left to the server) cannot be shared; a key with a value the
// proxy cannot read, or not stored as written, or a column left to its
// default, is not bounded.
func insertedKeys(b *rewrite.Bounds, shape forker.Shape) ([][]term, bool) {
	if len(b.Rows) > maxCopyUpKeys {
		return nil, false
	}
	var groups [][]term
	for _, row := range b.Rows {
		for _, u := range shape.Uniques {
			if u.Prefix {
				return nil, false // unique in a prefix: = does not find the row it collides with
			}
			conj, free, ok := rowKey(row, b.Positional, u, shape)
			if !ok {
				return nil, false
			}
			if !free {
				groups = append(groups, conj)
			}
		}
	}
	return groups, true // none: nothing to copy up
}

// rowKey is the conjunction of u's columns' values in row; free says the
// key cannot be shared (a NULL, or the server's AUTO_INCREMENT value).
func rowKey(row map[string]string, positional bool, u forker.Unique, shape forker.Shape) (conj []term, free, ok bool) {
	for _, name := range u.Columns {
		col, _ := shape.Column(name)
		v, given := row[strings.ToLower(name)]
		if positional {
			v, given = row["#"+strconv.Itoa(positionOf(shape, name))]
		}
		switch {
		case col.Generated:
			return nil, false, false
		case !given && (col.Auto || col.DefaultNull), given && v == "NULL" && (col.Auto || col.Nullable):
			free = true
		case !given, v == "", !storesExactly(col, v):
			return nil, false, false
		case textual(col) && !strings.HasPrefix(v, "'"):
			conj = append(conj, term{name, "'" + v + "'"}) // the string it stores: compared as a number, many rows equal it
		default:
			conj = append(conj, term{name, v})
		}
	}
	return conj, free, true
}

// positionOf is the position of column name among the columns an INSERT
// without a column list gives values to: all but invisible ones (-1 if
// none).
func positionOf(shape forker.Shape, name string) int {
	i := 0
	for _, c := range shape.Columns {
		if c.Invisible {
			continue
		}
		if strings.EqualFold(c.Name, name) {
			return i
		}
		i++
	}
	return -1
}

// orOf is the condition of conjunctions joined with OR.
func orOf(groups [][]term) string {
	parts := make([]string, len(groups))
	for i, g := range groups {
		conj := make([]string, len(g))
		for j, t := range g {
			conj[j] = quote.Ident(t.col) + " = " + t.val
		}
		parts[i] = "(" + strings.Join(conj, " AND ") + ")"
	}
	return strings.Join(parts, " OR ")
}
