package review

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/quote"
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

// rebase moves the images of the rows p wrote, table by table; a table it
// could not rebase is logged (its diff then still shows what was
// promoted).
func (p *promotion) rebase(ctx context.Context) {
	for _, et := range p.order {
		dt := et.td.t
		if dt.method != methodCapture || len(et.td.rows) == 0 {
			continue
		}
		if err := p.rebaseTable(ctx, et); err != nil {
			p.m.log.Warn("after a promote, the sandbox's diff still shows what it promoted", zap.String("sandbox", p.sb.Name),
				zap.String("table", dt.logical.String()), zap.Error(err))
		}
	}
}

// rebaseTable rebases et's rows the promote wrote.
func (p *promotion) rebaseTable(ctx context.Context, et *exportTable) error {
	dt := et.td.t
	stmts := p.imageStatements(dt, et.td.rows)
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

// imageStatements write, into dt's side table, the new images of rows:
// the sandbox's row (marker 1), or for a row it deleted a key the fork
// had not (marker 0); the columns a promote left as production has them
// keep their fork-time image.
func (p *promotion) imageStatements(dt *diffTable, rows []diffRow) []string {
	cp := forker.Capture{Marker: p.m.cfg.Prefix + "_existed", Shape: forker.Shape{Columns: dt.fork.Columns, Key: dt.key}}
	names := cp.ImageColumns()
	vals := make([]string, len(rows))
	for i, dr := range rows {
		vals[i] = "(" + strings.Join(imageValues(dr, cp), ", ") + ")"
	}
	upd := make([]string, 0, len(names))
	for _, n := range names[len(dt.key):] {
		upd = append(upd, n+" = VALUES("+n+")")
	}
	var out []string
	for _, b := range batches(vals) {
		out = append(out, "INSERT INTO "+dt.capture.Side.Quoted()+" ("+strings.Join(names, ", ")+") VALUES "+strings.Join(b, ", ")+
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
