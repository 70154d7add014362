package lazystress

import (
	"context"
	"database/sql"
	"fmt"
)

// Check is a whole fork's content against what it must hold: the stable
// rows as made, production's rows of one consistent state (their count
// and sum of v), and the sandbox's rows as its model has them.
type Check struct {
	// Rows and the distinct values of each unique key (COUNT(*),
	// COUNT(DISTINCT id), …), which must agree.
	Rows, IDs, Us, Ws int64
	// Lost are rows it must hold and does not; Back rows the sandbox
	// deleted that it holds again; Unknown rows it holds that nobody
	// made; Wrong rows it holds with other values.
	Lost, Back, Unknown, Wrong int64
	// ProdRows and ProdV are production's rows held and the sum of
	// their v, against every consistent state's.
	ProdRows, WantProdRows, ProdV, WantProdV int64
	// Sum is the checksum of the other rows (SUM(CRC32(…))), against
	// the model's.
	Sum, WantSum uint64
	// Diff is SANDBOX DIFF SUMMARY's inserted/updated/deleted/conflicts
	// of the table, against the model's.
	Diff, WantDiff string
}

// Duplicated are rows held twice under one of the unique keys.
func (c Check) Duplicated() int64 { return c.Rows - min(c.IDs, c.Us, c.Ws) }

// Problems describes what is wrong (none: the fork is right).
func (c Check) Problems() []string {
	var out []string
	add := func(bad bool, format string, args ...any) {
		if bad {
			out = append(out, fmt.Sprintf(format, args...))
		}
	}
	add(c.Duplicated() != 0, "%d rows but %d distinct ids, %d distinct u, %d distinct w", c.Rows, c.IDs, c.Us, c.Ws)
	add(c.Lost != 0, "%d rows lost", c.Lost)
	add(c.Back != 0, "%d deleted rows back", c.Back)
	add(c.Unknown != 0, "%d rows nobody made", c.Unknown)
	add(c.Wrong != 0, "%d rows with other values", c.Wrong)
	add(c.ProdRows != c.WantProdRows || c.ProdV != c.WantProdV, "production's rows: %d, sum of v %d; every consistent state has %d, %d",
		c.ProdRows, c.ProdV, c.WantProdRows, c.WantProdV)
	add(c.Sum != c.WantSum, "checksum of the stable and sandbox rows %d, want %d", c.Sum, c.WantSum)
	add(c.Diff != c.WantDiff, "DIFF SUMMARY inserted/updated/deleted/conflicts %s, want %s", c.Diff, c.WantDiff)
	return out
}

// verify checks the sandbox's fork, whole, against the model.
func (s *sandbox) verify(ctx context.Context, e expected) (Check, error) {
	var c Check
	t, prod := s.cfg.Table(), s.cfg.prodWhere()
	q := "SELECT COUNT(*), COUNT(DISTINCT id), COUNT(DISTINCT u), COUNT(DISTINCT w), COALESCE(SUM(IF(" + prod + ", 0, " + rowSum + ")), 0), " +
		"COALESCE(SUM(" + prod + "), 0), COALESCE(SUM(IF(" + prod + ", v, 0)), 0) FROM " + t
	if err := s.c.QueryRowContext(ctx, q).Scan(&c.Rows, &c.IDs, &c.Us, &c.Ws, &c.Sum, &c.ProdRows, &c.ProdV); err != nil {
		return c, fmt.Errorf("sandbox %d: %s: %w", s.j, q, err)
	}
	c.WantProdRows, c.WantProdV = e.prodRows, e.prodV
	var stable, wrong int64
	q = "SELECT COUNT(*), COALESCE(SUM(NOT (v = id % 1000 AND s = CONCAT('s', id) AND u = CONCAT('u', id) AND w = id * 3)), 0) FROM " +
		t + " WHERE " + s.cfg.stableWhere()
	if err := s.c.QueryRowContext(ctx, q).Scan(&stable, &wrong); err != nil {
		return c, fmt.Errorf("sandbox %d: %s: %w", s.j, q, err)
	}
	c.Lost, c.Wrong, c.WantSum = int64(e.stableRows)-stable, wrong, e.stableSum
	got, err := s.query(ctx, "SELECT id, v, s, u, w FROM "+t+" WHERE "+s.cfg.sandboxWhere())
	if err != nil {
		return c, err
	}
	s.compareAll(&c, got)
	c.WantDiff = s.wantDiff()
	c.Diff, err = s.diffSummary(ctx)
	return c, err
}

// compareAll counts the sandbox rows held against the model's.
func (s *sandbox) compareAll(c *Check, got map[int64]Row) {
	ids := append([]int64(nil), s.inserted...)
	for id := int64(1); id <= s.cfg.Rows; id++ {
		if s.cfg.ClassOf(id) == Sandbox {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		want, ok := s.get(id)
		g, has := got[id]
		delete(got, id)
		switch {
		case ok && !has:
			c.Lost++
		case !ok && has:
			c.Back++
		case ok && g != want:
			c.Wrong++
		}
		if ok {
			c.WantSum += want.sum()
		}
	}
	c.Unknown += int64(len(got))
}

// wantDiff is the DIFF SUMMARY the model makes: the rows as made it
// changed or deleted, the rows it inserted and holds; no conflict
// (production never changes them).
func (s *sandbox) wantDiff() string {
	var ins, upd, del int
	for id := range s.rows {
		now, held := s.get(id)
		switch {
		case id > s.cfg.Rows && held:
			ins++
		case id > s.cfg.Rows:
		case !held:
			del++
		case now != Initial(id):
			upd++
		}
	}
	return fmt.Sprintf("%d/%d/%d/0", ins, upd, del)
}

// diffSummary is SANDBOX DIFF SUMMARY's inserted/updated/deleted/
// conflicts of the table ("none" without a row for it).
func (s *sandbox) diffSummary(ctx context.Context) (string, error) {
	rows, err := s.c.QueryContext(ctx, "SANDBOX DIFF SUMMARY")
	if err != nil {
		return "", fmt.Errorf("sandbox %d: SANDBOX DIFF SUMMARY: %w", s.j, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", err
	}
	out := "none"
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return "", err
		}
		if len(vals) >= 6 && (vals[0].String == s.cfg.DB+".t" || vals[0].String == "t") {
			out = vals[2].String + "/" + vals[3].String + "/" + vals[4].String + "/" + vals[5].String
		}
	}
	return out, rows.Err()
}

// verifyProduction checks production after the run: its rows of one
// consistent state (count and sum of v) and every other row as made, none
// of the sandboxes' changes.
func verifyProduction(ctx context.Context, db *sql.DB, cfg Config, e expected) []string {
	prod := cfg.prodWhere()
	var rows, v, other, otherSum int64
	q := "SELECT COALESCE(SUM(" + prod + "), 0), COALESCE(SUM(IF(" + prod + ", v, 0)), 0), COALESCE(SUM(NOT " + prod + "), 0), " +
		"COALESCE(SUM(IF(" + prod + ", 0, " + rowSum + ")), 0) FROM " + cfg.Table()
	if err := db.QueryRowContext(ctx, q).Scan(&rows, &v, &other, &otherSum); err != nil {
		return []string{fmt.Sprintf("%s: %v", q, err)}
	}
	var out []string
	if rows != e.prodRows || v != e.prodV {
		out = append(out, fmt.Sprintf("production's own rows: %d, sum of v %d; want %d, %d (the writers' model is off)", rows, v, e.prodRows, e.prodV))
	}
	if other != int64(e.stableRows+e.sandboxRows) || uint64(otherSum) != e.stableSum+e.sandboxSum {
		out = append(out, fmt.Sprintf("production's other rows: %d, checksum %d; want %d, %d as made (a sandbox's change reached production)",
			other, otherSum, e.stableRows+e.sandboxRows, e.stableSum+e.sandboxSum))
	}
	return out
}
