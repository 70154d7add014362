package review

import (
	"slices"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/forker"
)

// The rows of a table whose foreign keys reference the table itself (a
// tree) are written in an order the server's checks accept, never with the
// checks turned off (which would let rows production no longer has a parent
// for in too): inserts parents first, deletes children first, a DELETE per
// row (InnoDB checks each row as the statement reaches it).

// addSelfFK records fk, a foreign key from et's table to itself.
func (et *exportTable) addSelfFK(fk forker.ForeignKey) { et.selfFKs = addFK(et.selfFKs, fk) }

// addFK adds fk to fks once per pair of column lists (production's and the
// sandbox's table both have it).
func addFK(fks []forker.ForeignKey, fk forker.ForeignKey) []forker.ForeignKey {
	for _, have := range fks {
		if slices.EqualFunc(have.Columns, fk.Columns, strings.EqualFold) && slices.EqualFunc(have.RefColumns, fk.RefColumns, strings.EqualFold) {
			return fks
		}
	}
	return append(fks, fk)
}

// deferCycles defers, for rows of a table referencing itself that
// reference each other in a cycle (no order puts every parent first), its
// self-referencing foreign keys as a cycle between tables defers its keys.
func (et *exportTable) deferCycles() {
	if len(et.selfFKs) == 0 || !et.writesRows() {
		return
	}
	cols, _, rows := et.rowShape("insert")
	var inserted []diffRow
	for _, r := range rows {
		if et.inserts(r) {
			inserted = append(inserted, r)
		}
	}
	if _, cyclic := parentsFirst(inserted, cols, et.selfFKs, func(r diffRow) []string { return r.afterLits }); cyclic {
		for _, fk := range et.selfFKs {
			et.deferFKs = addFK(et.deferFKs, fk)
		}
	}
}

// deferredColumns are the positions in cols of et's deferred foreign key
// columns.
func (et *exportTable) deferredColumns(cols []forker.Column) []int {
	var out []int
	for _, fk := range et.deferFKs {
		for _, n := range fk.Columns {
			if i := slices.IndexFunc(cols, func(c forker.Column) bool { return strings.EqualFold(c.Name, n) }); i >= 0 && !slices.Contains(out, i) {
				out = append(out, i)
			}
		}
	}
	return out
}

// withoutDeferred is lits with the deferred columns (at idx) NULL.
func withoutDeferred(lits []string, idx []int) []string {
	if len(idx) == 0 {
		return lits
	}
	out := slices.Clone(lits)
	for _, i := range idx {
		out[i] = "NULL"
	}
	return out
}

// deferredUpdates give the rows et inserted with their deferred foreign
// key columns NULL the values of those columns, by key, once the rows of
// the tables they reference are in.
func (et *exportTable) deferredUpdates(cols []forker.Column, names []string, rows []diffRow) []string {
	idx := et.deferredColumns(cols)
	dt := et.td.t
	if len(idx) == 0 || dt.key == nil {
		return nil
	}
	var keyIdx []int
	for _, k := range dt.key {
		keyIdx = append(keyIdx, slices.IndexFunc(cols, func(c forker.Column) bool { return strings.EqualFold(c.Name, k) }))
	}
	var out []string
	for _, r := range rows {
		if !et.inserts(r) || slices.Contains(keyIdx, -1) {
			continue
		}
		var set, where []string
		for _, i := range idx {
			if r.afterLits[i] != "NULL" {
				set = append(set, names[i]+" = "+r.afterLits[i])
			}
		}
		for _, i := range keyIdx {
			where = append(where, names[i]+" = "+r.afterLits[i])
		}
		if len(set) > 0 {
			out = append(out, "UPDATE "+dt.logical.Quoted()+" SET "+strings.Join(set, ", ")+" WHERE "+strings.Join(where, " AND "))
		}
	}
	return out
}

// parentsFirst orders rows so that each comes after the row of the set its
// self-referencing foreign keys name, matching the literals lits gives of
// each row (in the order of cols). Rows in a cycle keep their order, after
// the others; cyclic says there were some. Rows without literals are left
// as they are.
func parentsFirst(rows []diffRow, cols []forker.Column, fks []forker.ForeignKey, lits func(diffRow) []string) (out []diffRow, cyclic bool) {
	if len(fks) == 0 || len(rows) < 2 {
		return rows, false
	}
	pos := map[string]int{}
	for i, c := range cols {
		pos[strings.ToLower(c.Name)] = i
	}
	for _, r := range rows {
		if len(lits(r)) != len(cols) {
			return rows, false
		}
	}
	children := make([][]int, len(rows))
	waiting := make([]int, len(rows))
	for _, fk := range fks {
		byRef := map[string]int{}
		for i, r := range rows {
			if k, ok := tuple(lits(r), fk.RefColumns, pos); ok {
				byRef[k] = i
			}
		}
		for i, r := range rows {
			k, ok := tuple(lits(r), fk.Columns, pos)
			if p, found := byRef[k]; ok && found && p != i {
				children[p] = append(children[p], i)
				waiting[i]++
			}
		}
	}
	var queue []int
	for i := range rows {
		if waiting[i] == 0 {
			queue = append(queue, i)
		}
	}
	done := make([]bool, len(rows))
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		out, done[i] = append(out, rows[i]), true
		for _, c := range children[i] {
			if waiting[c]--; waiting[c] == 0 {
				queue = append(queue, c)
			}
		}
	}
	for i, r := range rows {
		if !done[i] {
			out, cyclic = append(out, r), true
		}
	}
	return out, cyclic
}

// tuple is the literals of names in lits (by pos), as one key; ok is false
// when a column is missing or a value is NULL (which references nothing).
func tuple(lits, names []string, pos map[string]int) (string, bool) {
	parts := make([]string, len(names))
	for i, n := range names {
		p, ok := pos[strings.ToLower(n)]
		if !ok || lits[p] == "NULL" {
			return "", false
		}
		parts[i] = lits[p]
	}
	return strings.Join(parts, "\x00"), true
}
