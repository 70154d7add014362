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

// CopyUpWhere is the condition on a filling fork's columns that selects
// every production row st could read, change or collide with, from the
// literal key values st pins (rewrite.Bounds) and the table's unique keys
// (shape); ok is false when st's rows are not bounded so: then it waits
// for the whole fork. "" with ok: no row to copy up.
//
// The condition runs on the fill's snapshot connection, whose session
// settings are not the client's: it compares only columns whose
// comparison with the literals rewrite allows reads the same in every
// session (numbers, text, bytes; not times, whose literals read in the
// session's time zone and sql_mode). For an insert each value must be
// stored as written (storesExactly): a key is found by the value the
// row will hold.
func CopyUpWhere(st rewrite.Statement, shape forker.Shape) (where string, ok bool) {
	b := st.Bounds
	if b == nil {
		return "", false
	}
	if assignsKey(b.Assigned, shape) {
		return "", false // a key that moves may land on a row not there yet
	}
	switch st.Kind {
	case rewrite.KindSelect, rewrite.KindUpdate, rewrite.KindDelete:
		return pinnedKey(b.Equal, shape)
	case rewrite.KindInsert, rewrite.KindReplace:
		return insertedKeys(b, shape)
	}
	return "", false
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

// pinnedKey is the condition of the first unique key whose every column
// eq pins: one conjunction per combination of their values.
func pinnedKey(eq map[string][]string, shape forker.Shape) (string, bool) {
	for _, u := range shape.Uniques {
		combos := [][]string{nil}
		for _, c := range u.Columns {
			col, _ := shape.Column(c)
			vals := eq[strings.ToLower(c)]
			if !comparable(col) || len(vals) == 0 || len(combos)*len(vals) > maxCopyUpKeys {
				combos = nil
				break
			}
			var next [][]string
			for _, pre := range combos {
				for _, v := range vals {
					next = append(next, append(append([]string(nil), pre...), quote.Ident(c)+" = "+v))
				}
			}
			combos = next
		}
		if len(combos) > 0 {
			return orOf(combos), true
		}
	}
	return "", false
}

// insertedKeys is the condition of every row that shares a unique key's
// values with a row b inserts: a key with a NULL (or an AUTO_INCREMENT
// column left to the server) cannot be shared; a key with a value the
// proxy cannot read, or not stored as written, or a column left to its
// default, is not bounded.
func insertedKeys(b *rewrite.Bounds, shape forker.Shape) (string, bool) {
	if len(b.Rows) > maxCopyUpKeys {
		return "", false
	}
	var groups [][]string
	for _, row := range b.Rows {
		for _, u := range shape.Uniques {
			if u.Prefix {
				return "", false // unique in a prefix: = does not find the row it collides with
			}
			conj, free, ok := rowKey(row, b.Positional, u, shape)
			if !ok {
				return "", false
			}
			if !free {
				groups = append(groups, conj)
			}
		}
	}
	if len(groups) == 0 {
		return "", true // nothing to copy up
	}
	return orOf(groups), true
}

// rowKey is the conjunction of u's columns' values in row; free says the
// key cannot be shared (a NULL, or the server's AUTO_INCREMENT value).
func rowKey(row map[string]string, positional bool, u forker.Unique, shape forker.Shape) (conj []string, free, ok bool) {
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
		default:
			conj = append(conj, quote.Ident(name)+" = "+v)
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

// orOf joins conjunctions with OR.
func orOf(groups [][]string) string {
	parts := make([]string, len(groups))
	for i, g := range groups {
		parts[i] = "(" + strings.Join(g, " AND ") + ")"
	}
	return strings.Join(parts, " OR ")
}
