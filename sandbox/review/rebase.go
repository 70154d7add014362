package review

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/capture"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
)

// After a committed promote, what it wrote is production's: the
// fork-time image of each captured row it wrote moves to the sandbox's row
// (rebase) — the common ancestor of the sandbox and of production as the
// promote merged them — so the sandbox's diff no longer shows what was
// promoted, what production changed in other columns stays production's
// change, and a later promote never writes it again over production. A
// row a promote wrote in part (THEIRS kept production's value in some
// columns) keeps its fork-time image in those columns: their conflict
// stands; a row it left out keeps its image whole. The capture of a table
// the promote altered records production's new columns as its fork-time
// ones.
//
// Every other kind of table a promote applied is rebased too, as if the
// sandbox had forked it at the moment of the promote:
//
//   - a table the sandbox created (production now has it as the sandbox
//     made it) and one compared whole that OVERWRITE gave production (its
//     rows are the sandbox's) are captured anew (capture.Restart), the
//     images of the rows promoted written to the side table; a table
//     the sandbox created becomes a fork of production's (its registry
//     row's kind too, for other processes and a restart). Rows the sandbox
//     changed between the promote's snapshot and the capture are told from
//     what was promoted by those images: an update or a delete of a
//     promoted row shows, and so does, for a table whose every row the
//     promote wrote (created, or altered and compared whole), a row it
//     inserted meanwhile;
//   - a table the sandbox dropped is absent from production too
//     (KindAbsent): no diff is left, whatever production makes of that
//     name later.
//
// A view the sandbox made or replaced keeps showing its definition.

// rebase rebases the tables p applied, table by table; a table it could
// not rebase is logged (its diff then still shows what was promoted).
func (p *promotion) rebase(ctx context.Context) {
	p.rebaseDatabases(ctx)
	for _, et := range p.order {
		dt := et.td.t
		if !et.changes() || et.skip != "" {
			continue
		}
		if p.m.changed != nil {
			p.m.changed(dt.logical)
		}
		var err error
		switch {
		case dt.method == methodCapture && len(et.td.rows) > 0:
			err = p.rebaseTable(ctx, et)
		case dt.method == methodCreated, dt.method == methodCompare:
			err = p.recapture(ctx, et)
		case dt.change == "dropped":
			err = p.rekind(ctx, dt, sandbox.KindAbsent)
		case dt.method == methodView:
			// Production's view is the sandbox's now: the sandbox's is
			// a copy of it, as for a production view it reads.
			err = p.rekind(ctx, dt, sandbox.KindView)
		}
		if err != nil {
			p.m.log.Warn("after a promote, the sandbox's diff still shows what it promoted", zap.String("sandbox", p.sb.Name),
				zap.String("table", dt.logical.String()), zap.Error(err))
		}
	}
}

// rebaseTable rebases et's rows the promote wrote.
func (p *promotion) rebaseTable(ctx context.Context, et *exportTable) error {
	dt := et.td.t
	stmts := p.imageStatements(dt.capture.Side, forker.Shape{Columns: dt.fork.Columns, Key: dt.key}, et.td.rows)
	return p.m.reg.WithConn(ctx, func(c sideconn.Conn) error {
		if err := execUTC(ctx, c, stmts); err != nil {
			return err
		}
		if dt.change == "altered" {
			return p.m.caps.Rebased(ctx, c, p.sb.ID, dt.logical, dt.fork.Columns)
		}
		return nil
	})
}

// recapture captures anew et's table, which the promote made production's
// as the sandbox has it: the images of the rows it wrote, then, when it
// wrote every row, a marker for each key the fork has that it did not
// write; a table the sandbox created is then a fork.
func (p *promotion) recapture(ctx context.Context, et *exportTable) error {
	dt := et.td.t
	err := p.m.reg.WithConn(ctx, func(c sideconn.Conn) error {
		info, err := p.m.caps.Restart(ctx, c, p.sb, dt.e)
		if err != nil || info.State != capture.Rows {
			return err
		}
		shape := forker.Shape{Columns: dt.fork.Columns, Key: info.Key}
		rows, all := promotedRows(et, shape)
		stmts := p.imageStatements(info.Side, shape, rows)
		if all {
			stmts = append(stmts, p.unwrittenKeys(info.Side, dt.e.Phys, info.Key))
		}
		return execUTC(ctx, c, stmts)
	})
	if err != nil || dt.e.Kind != sandbox.KindCreated {
		return err
	}
	return p.rekind(ctx, dt, sandbox.KindFork)
}

// rekind records dt's table in the sandbox as of kind now.
func (p *promotion) rekind(ctx context.Context, dt *diffTable, kind sandbox.Kind) error {
	return p.m.reg.WithConn(ctx, func(c sideconn.Conn) error {
		ok, err := p.m.reg.Rekind(ctx, c, p.sb, p.m.names.Key(dt.logical), dt.e, kind)
		if err == nil && !ok {
			err = fmt.Errorf("the sandbox's %s changed since the promote read it", dt.logical)
		}
		return err
	})
}

// promotedRows are the rows of et the promote wrote, as images by shape's
// key (the new capture's), and whether they are all the table's rows: a
// created table's, or an altered one's compared whole. Rows whose values
// are not the fork's columns (a table compared by the columns it shares
// with production's) and deleted rows (the new capture needs no image of
// a key neither has) are left out.
func promotedRows(et *exportTable, shape forker.Shape) (rows []diffRow, all bool) {
	dt := et.td.t
	src, all := et.td.rows, dt.method == methodCreated
	if dt.whole() {
		src, all = et.all, true
	}
	cols := shape.Stored()
	idx := make([]int, 0, len(shape.Key))
	for _, k := range shape.Key {
		for j, c := range cols {
			if strings.EqualFold(c.Name, k) {
				idx = append(idx, j)
			}
		}
	}
	if len(idx) != len(shape.Key) {
		return nil, false
	}
	for _, dr := range src {
		switch {
		case dr.op == "delete":
			continue
		case len(dr.afterLits) != len(cols):
			all = false
			continue
		}
		keyLits := make([]string, len(idx))
		for i, j := range idx {
			keyLits[i] = dr.afterLits[j]
		}
		rows = append(rows, diffRow{op: "insert", keyLits: keyLits, afterLits: dr.afterLits})
	}
	return rows, all
}

// unwrittenKeys marks in side (the capture of fork, by key) each key the
// fork has that no image holds: a row the sandbox inserted after the
// promote's snapshot, which production does not have.
func (p *promotion) unwrittenKeys(side, fork rewrite.Table, key []string) string {
	cols := make([]string, len(key))
	sel := make([]string, len(key))
	for i, k := range key {
		cols[i], sel[i] = quote.Ident(k), col("f", k)
	}
	marker := quote.Ident(p.m.cfg.Prefix + "_existed")
	return "INSERT IGNORE INTO " + side.Quoted() + " (" + strings.Join(cols, ", ") + ", " + marker + ") SELECT " + strings.Join(sel, ", ") +
		", 0 FROM " + fork.Quoted() + " f LEFT JOIN " + side.Quoted() + " s ON " + onSQL("f", "s", key) + " WHERE " + col("s", key[0]) + " IS NULL"
}

// imageStatements write, into the side table of a capture of shape, the
// new images of rows: the sandbox's row (marker 1), or for a row it
// deleted a key the fork had not (marker 0); the columns a promote left as
// production has them keep their fork-time image.
func (p *promotion) imageStatements(side rewrite.Table, shape forker.Shape, rows []diffRow) []string {
	cp := forker.Capture{Marker: p.m.cfg.Prefix + "_existed", Shape: shape}
	names := cp.ImageColumns()
	vals := make([]string, len(rows))
	for i, dr := range rows {
		vals[i] = "(" + strings.Join(imageValues(dr, cp), ", ") + ")"
	}
	upd := make([]string, 0, len(names))
	for _, n := range names[len(shape.Key):] {
		upd = append(upd, n+" = VALUES("+n+")")
	}
	var out []string
	for _, b := range batches(vals) {
		out = append(out, "INSERT INTO "+side.Quoted()+" ("+strings.Join(names, ", ")+") VALUES "+strings.Join(b, ", ")+
			" ON DUPLICATE KEY UPDATE "+strings.Join(upd, ", "))
	}
	return out
}

// imageValues are the side table's values of dr's new image, in the order
// of cp's image columns: its key, the marker, and the other columns'
// values (cp's stored columns are the fork's, as dr's literals).
func imageValues(dr diffRow, cp forker.Capture) []string {
	vals := append([]string(nil), dr.keyLits...)
	if dr.op == "delete" {
		vals = append(vals, "0")
	} else {
		vals = append(vals, "1")
	}
	for j, c := range cp.Stored() {
		switch {
		case cp.IsKey(c.Name):
		case dr.op == "delete":
			vals = append(vals, "NULL")
		case slices.Contains(dr.theirs, j):
			vals = append(vals, dr.beforeLits[j])
		default:
			vals = append(vals, dr.afterLits[j])
		}
	}
	return vals
}

// execUTC runs stmts on c as an export's statements run: UTC, and a
// sql_mode that takes every value back; c's own settings are set back.
func execUTC(ctx context.Context, c sideconn.Conn, stmts []string) error {
	rows, err := c.Query(ctx, "SELECT @@session.time_zone, @@session.sql_mode")
	switch {
	case err != nil:
		return fmt.Errorf("read the side connection's settings: %w", err)
	case len(rows) != 1:
		return fmt.Errorf("read the side connection's settings: %d rows", len(rows))
	}
	defer func() {
		_, _ = c.Exec(context.WithoutCancel(ctx), "SET time_zone = "+quote.String(sideconn.Str(rows[0][0]))+", sql_mode = "+
			quote.String(sideconn.Str(rows[0][1])))
	}()
	for _, s := range append([]string{"SET time_zone = '+00:00', sql_mode = 'NO_AUTO_VALUE_ON_ZERO,NO_ENGINE_SUBSTITUTION,ALLOW_INVALID_DATES'"},
		stmts...) {
		if _, err := c.Exec(ctx, s); err != nil {
			return err
		}
	}
	return nil
}
