package review

// The conflict look of a PROMOTE: production's rows of the keys the
// sandbox changed, read (under lock, the second time) and merged by cell
// with the sandbox's and the fork-time image (mergeRow), as Dolt merges.

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// conflict is a row production changed since the fork, differently.
type conflict struct {
	et *exportTable
	i  int // index in et.td.rows
	// cells are, for an update of a row both changed, the columns (indexes
	// of the fork's stored columns) both changed to different values; nil
	// when the conflict is the whole row's.
	cells []int
}

// mergeRow merges by cell a captured row dr the sandbox changed with
// production's row now (theirs, its literals; ok false when production has
// no row of the key). The conflict is the whole row's when both inserted
// the key with other values, the sandbox deleted a row production changed,
// or changed a row production deleted; otherwise cells are the columns
// both changed to different values (none: the changes merge).
func mergeRow(dr diffRow, theirs []string, ok bool) (whole bool, cells []int) {
	switch {
	case dr.op == "insert":
		return ok && !slices.Equal(theirs, dr.afterLits), nil
	case dr.op == "delete":
		return ok && !slices.Equal(theirs, dr.beforeLits), nil
	case !ok:
		return true, nil
	}
	for i, before := range dr.beforeLits {
		if after := dr.afterLits[i]; after != before && theirs[i] != before && theirs[i] != after {
			cells = append(cells, i)
		}
	}
	return false, cells
}

// findConflicts reads production's rows of the keys captured tables
// changed (under lock: FOR UPDATE) and lists the conflicts.
func (p *promotion) findConflicts(ctx context.Context, pc sideconn.Conn, lock bool) ([]conflict, error) {
	var out []conflict
	p.conflictList = p.conflictList[:0]
	for _, et := range p.order {
		dt := et.td.t
		if dt.method != methodCapture || len(et.td.rows) == 0 {
			continue
		}
		theirs, added, err := productionRows(ctx, pc, et, lock)
		if err != nil {
			return nil, err
		}
		for i, dr := range et.td.rows {
			th, ok := theirs[i]
			et.td.rows[i].prodMissing = !ok // as production has it now (under lock, the last look)
			for _, j := range added {
				if ok && dr.op == "insert" {
					th[j] = dr.afterLits[j]
				} else if ok {
					th[j] = dr.beforeLits[j]
				}
			}
			whole, cells := mergeRow(dr, th, ok)
			if whole || len(cells) > 0 {
				out = append(out, conflict{et: et, i: i, cells: cells})
				if len(p.conflictList) < 20 {
					p.conflictList = append(p.conflictList, tableName(dt.logical)+" "+sideconn.Str(dr.key))
				}
			}
		}
	}
	return out, nil
}

// productionRows reads production's rows of the keys et's captured rows
// changed (under lock: FOR UPDATE), by the rows' index: the literals of
// the fork's stored columns. added are the indexes of the columns the
// sandbox added, which production has not yet (their literals are
// placeholders: production gets them from the ALTER promoted, as the
// fork-time image has them). Keys are matched as the server matches them
// (a key spelled in another case is the same key in a _ci collation): each
// is a row of a derived table, with its index, in the column's character
// set and collation.
func productionRows(ctx context.Context, pc sideconn.Conn, et *exportTable, lock bool) (theirs map[int][]string, added []int, err error) {
	dt := et.td.t
	keyCols := keyColumns(dt.fork, dt.key)
	pos := quote.Ident(freeAlias("sqlfork_i", keyCols)) // the row's index, named as no key column is
	sel := []string{"d." + pos}
	for j, c := range dt.fork.Stored() {
		if _, ok := dt.prod.Column(c.Name); !ok {
			sel, added = append(sel, "'NULL'"), append(added, j)
			continue
		}
		sel = append(sel, litSQL("r", c))
	}
	on := make([]string, len(keyCols))
	for j, c := range keyCols {
		on[j] = col("r", c.Name) + " = " + col("d", c.Name)
	}
	theirs = map[int][]string{}
	idx := make([]int, len(et.td.rows))
	for i := range idx {
		idx[i] = i
	}
	for b := range slices.Chunk(idx, 500) {
		parts := make([]string, len(b))
		for j, i := range b {
			vals := []string{fmt.Sprint(i) + " AS " + pos}
			for k, c := range keyCols {
				vals = append(vals, keyLiteral(c, et.td.rows[i].keyLits[k])+" AS "+quote.Ident(c.Name))
			}
			parts[j] = "SELECT " + strings.Join(vals, ", ")
		}
		q := "SELECT " + strings.Join(sel, ", ") + " FROM (" + strings.Join(parts, " UNION ALL ") + ") d JOIN " + dt.logical.Quoted() +
			" r ON " + strings.Join(on, " AND ")
		if lock {
			q += " FOR UPDATE"
		}
		if err := readTheirs(ctx, pc, dt, q, theirs); err != nil {
			return nil, nil, err
		}
	}
	return theirs, added, nil
}

// readTheirs runs q, a read of production's rows of dt by index (the
// first column), into theirs.
func readTheirs(ctx context.Context, pc sideconn.Conn, dt *diffTable, q string, theirs map[int][]string) error {
	rows, err := pc.Query(ctx, q)
	if err != nil {
		return fmt.Errorf("promote: read production's rows of %s: %w", dt.logical, err)
	}
	for _, r := range rows {
		lits := make([]string, len(r)-1)
		for j, v := range r[1:] {
			lits[j] = sideconn.Str(v)
		}
		if err := checkLiterals(dt.logical, lits); err != nil {
			return err
		}
		i, err := strconv.Atoi(sideconn.Str(r[0]))
		if err != nil {
			return fmt.Errorf("promote: read production's rows of %s: %w", dt.logical, err)
		}
		theirs[i] = lits
	}
	return nil
}

// conflictRefusal is FAIL's refusal, listing the conflicting keys.
func (p *promotion) conflictRefusal(found []conflict) error {
	p.conflicts = len(found)
	list := strings.Join(p.conflictList, ", ")
	if len(found) > len(p.conflictList) {
		list += fmt.Sprintf(" and %d more", len(found)-len(p.conflictList))
	}
	return rewrite.Refuse(wire.ErUnknown, "PROMOTE refused: %d rows changed in production since the fork and differently in the sandbox: %s; "+
		"SANDBOX DIFF shows them (op conflict); STRATEGY OURS takes the sandbox's rows, THEIRS keeps production's", len(found), list)
}

// dropConflicting leaves production's values where they conflict
// (THEIRS): a row whose conflict is the whole row's is left out; an update
// keeps the sandbox's changes to the other columns, and is left out when
// it has none.
func (p *promotion) dropConflicting(found []conflict) {
	skip := map[*exportTable][]int{}
	for _, c := range found {
		if c.cells != nil {
			dr := &c.et.td.rows[c.i]
			dr.theirs = c.cells
			if len(changedColumns(*dr)) > 0 {
				continue
			}
		}
		skip[c.et] = append(skip[c.et], c.i)
	}
	for et, idx := range skip {
		var keep []diffRow
		for i, dr := range et.td.rows {
			if !slices.Contains(idx, i) {
				keep = append(keep, dr)
			}
		}
		et.td.rows = keep
	}
}
