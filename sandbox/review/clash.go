package review

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
)

// The rows of an altered table compared whole are upserted (INSERT … ON
// DUPLICATE KEY UPDATE) by the key they are matched by. A row whose values
// of another unique key changed may take values another row holds in
// production until that row's own upsert (two rows swapped their emails):
// whichever comes first fails (1062). Such rows — production has their key
// and its row differs from the sandbox's in a column of one of its unique
// keys — are deleted first, with foreign_key_checks off for that statement
// only (a deleted parent row would cascade to its children, or be refused
// for them, though it gets its key back at once), then upserted with the
// others: the unique values they leave are free when the upserts come.

// clashing reads the keys of et's rows (an altered table compared whole,
// by key) to delete before the upserts.
func (d *differ) clashing(ctx context.Context, et *exportTable) error {
	dt := et.td.t
	ucols, err := d.uniqueColumns(ctx, dt)
	if err != nil || len(ucols) == 0 {
		return err
	}
	rows, err := d.literalRows(ctx, dt, "f", keyColumns(dt.fork, dt.key), " FROM "+dt.e.Phys.Quoted()+" f JOIN "+dt.logical.Quoted()+
		" r ON "+onSQL("f", "r", dt.key)+" WHERE NOT "+eqSQL("f", "r", ucols))
	if err != nil {
		return err
	}
	for _, lits := range rows {
		et.clash = append(et.clash, diffRow{op: "delete", count: 1, keyLits: lits})
	}
	return nil
}

// uniqueColumns are the columns of production's unique keys (but the one
// rows are matched by) that the sandbox's table has too.
func (d *differ) uniqueColumns(ctx context.Context, dt *diffTable) ([]forker.Column, error) {
	rows, err := d.c.Query(ctx, "SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = "+
		quote.String(dt.logical.DB)+" AND TABLE_NAME = "+quote.String(dt.logical.Name)+" AND NON_UNIQUE = 0 AND COLUMN_NAME IS NOT NULL "+
		"ORDER BY INDEX_NAME, SEQ_IN_INDEX")
	if err != nil {
		return nil, fmt.Errorf("read the unique keys of %s: %w", dt.logical, err)
	}
	byIndex := map[string][]string{}
	for _, r := range rows {
		n := sideconn.Str(r[0])
		byIndex[n] = append(byIndex[n], sideconn.Str(r[1]))
	}
	var names []string
	for _, cols := range byIndex {
		if slices.EqualFunc(cols, dt.key, strings.EqualFold) {
			continue
		}
		names = append(names, cols...)
	}
	var out []forker.Column
	for _, c := range shared(dt.fork, dt.prod) {
		if slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, c.Name) }) {
			out = append(out, c)
		}
	}
	return out, nil
}

// clashDeletes delete, with foreign_key_checks off, the rows of et that
// clashing found.
func (et *exportTable) clashDeletes() []string {
	if len(et.clash) == 0 {
		return nil
	}
	keys := make([]string, len(et.clash))
	for i, r := range et.clash {
		keys[i] = keyTuple(r.keyLits)
	}
	out := []string{"SET @sqlfork_fk_checks = @@foreign_key_checks, foreign_key_checks = 0"}
	for _, b := range batches(keys) {
		out = append(out, "DELETE FROM "+et.td.t.logical.Quoted()+" WHERE "+keyList(et.td.t.key)+" IN ("+strings.Join(b, ", ")+")")
	}
	return append(out, "SET foreign_key_checks = @sqlfork_fk_checks")
}
