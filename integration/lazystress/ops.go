package lazystress

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// step runs one random point statement of the kinds a filling fork
// copies rows up for, and checks its answer against the model.
func (s *sandbox) step(ctx context.Context) error {
	switch s.rng.Intn(12) {
	case 0, 1:
		return s.update(ctx, s.owned(), false)
	case 2:
		return s.update(ctx, s.original(), true)
	case 3:
		return s.remove(ctx, s.owned())
	case 4:
		return s.remove(ctx, s.owned(), s.owned())
	case 5:
		return s.upsert(ctx, s.original())
	case 6:
		return s.replace(ctx, s.original())
	case 7:
		return s.insert(ctx, s.original())
	case 8:
		return s.insertAuto(ctx)
	case 9:
		return s.selectByU(ctx)
	}
	return s.selectIDs(ctx, s.owned(), s.stable(), s.production())
}

// update adds 1 to v of id's row and sets its s, by id or (an original
// row) by its unique u.
func (s *sandbox) update(ctx context.Context, id int64, byU bool) error {
	s.seq++
	tag := fmt.Sprintf("b%d_%d", s.j, s.seq)
	where := fmt.Sprintf("id = %d", id)
	if byU {
		where = fmt.Sprintf("u = 'u%d'", id)
	}
	q := fmt.Sprintf("UPDATE %s SET v = v + 1, s = '%s' WHERE %s", s.cfg.Table(), tag, where)
	o, err := s.exec(ctx, q)
	if err != nil {
		return err
	}
	r, ok := s.get(id)
	want := outcome{}
	if ok {
		want.affected = 1
		r.V, r.S = r.V+1, tag
		s.set(id, &r)
	}
	s.check(q, o, want)
	return nil
}

// remove deletes the rows of ids.
func (s *sandbox) remove(ctx context.Context, ids ...int64) error {
	ids = distinct(ids)
	q := fmt.Sprintf("DELETE FROM %s WHERE id IN (%s)", s.cfg.Table(), joinIDs(ids))
	o, err := s.exec(ctx, q)
	if err != nil {
		return err
	}
	var want outcome
	for _, id := range ids {
		if _, ok := s.get(id); ok {
			want.affected++
			s.set(id, nil)
		}
	}
	s.check(q, o, want)
	return nil
}

// upsert inserts id's original row, or adds 100 to its v when it is held.
func (s *sandbox) upsert(ctx context.Context, id int64) error {
	v := s.rng.Int63n(1000)
	q := fmt.Sprintf("INSERT INTO %s (id, v, s, u, w) VALUES (%d, %d, 'i%d', 'u%d', %d) ON DUPLICATE KEY UPDATE v = v + 100",
		s.cfg.Table(), id, v, s.j, id, 3*id)
	o, err := s.exec(ctx, q)
	if err != nil {
		return err
	}
	r, ok := s.get(id)
	want := outcome{affected: 1}
	if ok {
		want.affected, r.V = 2, r.V+100
	} else {
		r = Row{ID: id, V: v, S: fmt.Sprintf("i%d", s.j), U: fmt.Sprintf("u%d", id), W: 3 * id}
	}
	s.set(id, &r)
	s.check(q, o, want)
	return nil
}

// replace replaces (or inserts) id's original row.
func (s *sandbox) replace(ctx context.Context, id int64) error {
	r := Row{ID: id, V: s.rng.Int63n(1000), S: fmt.Sprintf("r%d", s.j), U: fmt.Sprintf("u%d", id), W: 3 * id}
	q := fmt.Sprintf("REPLACE INTO %s (id, v, s, u, w) VALUES (%d, %d, '%s', '%s', %d)", s.cfg.Table(), id, r.V, r.S, r.U, r.W)
	o, err := s.exec(ctx, q)
	if err != nil {
		return err
	}
	want := outcome{affected: 1}
	if _, ok := s.get(id); ok {
		want.affected = 2
	}
	s.set(id, &r)
	s.check(q, o, want)
	return nil
}

// insert inserts id's original row: a duplicate key (1062) when it is
// held.
func (s *sandbox) insert(ctx context.Context, id int64) error {
	r := Row{ID: id, V: s.rng.Int63n(1000), S: fmt.Sprintf("n%d", s.j), U: fmt.Sprintf("u%d", id), W: 3 * id}
	q := fmt.Sprintf("INSERT INTO %s (id, v, s, u, w) VALUES (%d, %d, '%s', '%s', %d)", s.cfg.Table(), id, r.V, r.S, r.U, r.W)
	o, err := s.exec(ctx, q)
	if err != nil {
		return err
	}
	want := outcome{code: 1062}
	if _, ok := s.get(id); !ok {
		want = outcome{affected: 1}
		s.set(id, &r)
	}
	s.check(q, o, want)
	return nil
}

// insertAuto inserts a new row, its id the fork's AUTO_INCREMENT's: above
// every row of production's as forked, and new to the sandbox.
func (s *sandbox) insertAuto(ctx context.Context) error {
	s.seq++
	r := Row{V: s.rng.Int63n(1000), S: "a", U: fmt.Sprintf("n%d_%d", s.j, s.seq), W: -(2_000_000_000_000 + int64(s.j)*1_000_000_000 + s.seq)}
	q := fmt.Sprintf("INSERT INTO %s (v, s, u, w) VALUES (%d, '%s', '%s', %d)", s.cfg.Table(), r.V, r.S, r.U, r.W)
	o, err := s.exec(ctx, q)
	if err != nil {
		return err
	}
	if o.code != 0 || o.affected != 1 {
		s.mismatch(q, "%s, want 1 row changed", o)
		return nil
	}
	r.ID = o.lastID
	if _, held := s.get(r.ID); held || r.ID <= s.cfg.Rows {
		s.mismatch(q, "new id %d is taken or not above the table's rows as made", r.ID)
		return nil
	}
	s.set(r.ID, &r)
	s.inserted = append(s.inserted, r.ID)
	return nil
}

// selectByU reads a stable or an original sandbox row by its unique u.
func (s *sandbox) selectByU(ctx context.Context) error {
	id := s.stable()
	if s.rng.Intn(2) == 0 {
		id = s.original()
	}
	q := fmt.Sprintf("SELECT id, v, s, u, w FROM %s WHERE u = 'u%d'", s.cfg.Table(), id)
	got, err := s.query(ctx, q)
	if err != nil {
		return err
	}
	s.compare(q, got, []int64{id}, false)
	return nil
}

// selectIDs reads ids' rows by key: every row but production's must be
// the model's, and a production row as made has its key columns still.
func (s *sandbox) selectIDs(ctx context.Context, ids ...int64) error {
	ids = distinct(ids)
	q := fmt.Sprintf("SELECT id, v, s, u, w FROM %s WHERE id IN (%s)", s.cfg.Table(), joinIDs(ids))
	got, err := s.query(ctx, q)
	if err != nil {
		return err
	}
	s.compare(q, got, ids, true)
	return nil
}

// compare checks rows read by key against the model; a u read names an
// original row, so an id read must be one of ids (a production row
// by id, when byID, may be there or not).
func (s *sandbox) compare(q string, got map[int64]Row, ids []int64, byID bool) {
	for id := range got {
		if !contains(ids, id) {
			s.mismatch(q, "read row %d, not asked for", id)
		}
	}
	for _, id := range ids {
		g, has := got[id]
		if s.cfg.ClassOf(id) == Production {
			if has && (g.U != fmt.Sprintf("u%d", id) || g.W != 3*id) {
				s.mismatch(q, "production row %d read as %+v", id, g)
			}
			continue
		}
		want, ok := s.get(id)
		if s.cfg.ClassOf(id) == Stable {
			want, ok = Initial(id), true
		}
		if !byID && ok && want.U != fmt.Sprintf("u%d", id) {
			ok = false // not found by u
		}
		switch {
		case ok && !has:
			s.mismatch(q, "row %d missing, want %+v", id, want)
		case !ok && has:
			s.mismatch(q, "row %d read as %+v, want none", id, g)
		case ok && g != want:
			s.mismatch(q, "row %d read as %+v, want %+v", id, g, want)
		}
	}
}

// check compares a write's answer with the model's.
func (s *sandbox) check(q string, got, want outcome) {
	if got.code != want.code || got.code == 0 && got.affected != want.affected {
		s.mismatch(q, "%s, want %s", got, want)
	}
}

func distinct(ids []int64) []int64 {
	var out []int64
	for _, id := range ids {
		if !contains(out, id) {
			out = append(out, id)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func contains(ids []int64, id int64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func joinIDs(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return strings.Join(s, ", ")
}
