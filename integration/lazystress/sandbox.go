package lazystress

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"strings"
	"time"
)

// sandbox is one sandbox's connection and the model of the rows it may
// change: the sandbox rows as made (ids 1..Rows of class Sandbox), as
// its statements leave them, and the rows it inserted.
type sandbox struct {
	cfg Config
	j   int
	c   *sql.Conn
	rng *rand.Rand
	// rows are the rows its statements changed: nil for one deleted.
	// A sandbox row not in rows is as made.
	rows     map[int64]*Row
	inserted []int64 // ids it inserted (AUTO_INCREMENT)
	hot      []int64 // sandbox rows it picks often: their copy-ups repeat
	seq      int64

	mismatches int
	notes      []string // the first mismatches, described
}

// maxNotes bounds the mismatches described.
const maxNotes = 20

// newSandbox is sandbox j of cfg on c.
func newSandbox(cfg Config, j int, c *sql.Conn, seed int64) *sandbox {
	s := &sandbox{cfg: cfg, j: j, c: c, rng: rand.New(rand.NewSource(seed)), rows: map[int64]*Row{}}
	for i := 0; i < 40; i++ {
		s.hot = append(s.hot, s.uniformOwned())
	}
	return s
}

// get is the row id as the sandbox should hold it (ok false: none).
func (s *sandbox) get(id int64) (Row, bool) {
	if r, ok := s.rows[id]; ok {
		if r == nil {
			return Row{}, false
		}
		return *r, true
	}
	if id >= 1 && id <= s.cfg.Rows && s.cfg.ClassOf(id) == Sandbox {
		return Initial(id), true
	}
	return Row{}, false
}

// set records id's row (nil: deleted).
func (s *sandbox) set(id int64, r *Row) { s.rows[id] = r }

// blocks is how many whole stride blocks the table has.
func (s *sandbox) blocks() int64 { return s.cfg.Rows / stride }

// uniformOwned is a random sandbox row as made.
func (s *sandbox) uniformOwned() int64 {
	return s.rng.Int63n(s.blocks())*stride + 1 + s.rng.Int63n(2)
}

// owned is a sandbox row the sandbox may change: often a hot one, now
// and then one it inserted.
func (s *sandbox) owned() int64 {
	switch r := s.rng.Intn(10); {
	case r < 4:
		return s.hot[s.rng.Intn(len(s.hot))]
	case r < 5 && len(s.inserted) > 0:
		return s.inserted[s.rng.Intn(len(s.inserted))]
	}
	return s.uniformOwned()
}

// original is a sandbox row as made (its u is u<id> for good).
func (s *sandbox) original() int64 {
	if s.rng.Intn(2) == 0 {
		return s.hot[s.rng.Intn(len(s.hot))]
	}
	return s.uniformOwned()
}

// stable is a random stable row; production a random production row as
// made.
func (s *sandbox) stable() int64 { return s.rng.Int63n(s.blocks())*stride + 3 + s.rng.Int63n(stride-3) }

func (s *sandbox) production() int64 { return (1 + s.rng.Int63n(s.blocks())) * stride }

// mismatch records an answer other than the model's.
func (s *sandbox) mismatch(q, format string, args ...any) {
	s.mismatches++
	if len(s.notes) < maxNotes {
		s.notes = append(s.notes, fmt.Sprintf("sandbox %d: %s: %s", s.j, q, fmt.Sprintf(format, args...)))
	}
}

// outcome is a write's answer: rows changed and the insert id, or the
// server's error number.
type outcome struct {
	affected, lastID int64
	code             uint16
}

func (o outcome) String() string {
	if o.code != 0 {
		return fmt.Sprintf("error %d", o.code)
	}
	return fmt.Sprintf("%d rows changed", o.affected)
}

// exec runs a write; err is a failure other than the server's refusal.
func (s *sandbox) exec(ctx context.Context, q string) (outcome, error) {
	r, err := s.c.ExecContext(ctx, q)
	if err != nil {
		if code := errCode(err); code != 0 {
			return outcome{code: code}, nil
		}
		return outcome{}, fmt.Errorf("sandbox %d: %s: %w", s.j, q, err)
	}
	var o outcome
	o.affected, _ = r.RowsAffected()
	o.lastID, _ = r.LastInsertId()
	return o, nil
}

// query reads the rows of q (columns id, v, s, u, w) by id.
func (s *sandbox) query(ctx context.Context, q string) (map[int64]Row, error) {
	rows, err := s.c.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("sandbox %d: %s: %w", s.j, q, err)
	}
	defer rows.Close()
	out := map[int64]Row{}
	for rows.Next() {
		var r Row
		if err := rows.Scan(&r.ID, &r.V, &r.S, &r.U, &r.W); err != nil {
			return nil, err
		}
		if _, dup := out[r.ID]; dup {
			s.mismatch(q, "id %d read twice", r.ID)
		}
		out[r.ID] = r
	}
	return out, rows.Err()
}

// filling says whether the sandbox's fork of the table is still filling
// (SANDBOX STATUS); a fill that failed is an error.
func (s *sandbox) filling(ctx context.Context) (bool, error) {
	rows, err := s.c.QueryContext(ctx, "SANDBOX STATUS")
	if err != nil {
		return false, fmt.Errorf("sandbox %d: SANDBOX STATUS: %w", s.j, err)
	}
	defer rows.Close()
	table, filling := s.cfg.DB+".t", false
	for rows.Next() {
		vals := make([]sql.NullString, 14)
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return false, err
		}
		if vals[10].String != table {
			continue
		}
		if strings.Contains(vals[11].String, "failed") {
			return false, fmt.Errorf("sandbox %d: the fill of %s: %s", s.j, table, vals[11].String)
		}
		filling = filling || strings.HasPrefix(vals[11].String, "filling")
	}
	return filling, rows.Err()
}

// SandboxResult is what one sandbox saw.
type SandboxResult struct {
	// FirstWrite is the first write's latency (the fork); Filled the
	// time from the first write until SANDBOX STATUS showed the fork
	// whole (to the poll: up to one poll late).
	FirstWrite, Filled time.Duration
	// Lazy says the fork was filling right after the first write (a
	// lazy fork, not a whole copy).
	Lazy bool
	// Steps are the statements it ran after the first write; Filling
	// those of them that ran while its fork filled.
	Steps, Filling int
	// Mismatches are the answers other than the model's; Notes
	// describe the first ones.
	Mismatches int
	Notes      []string
	Check      Check
}

// pollEvery is how many steps run between two SANDBOX STATUS polls.
const pollEvery = 10

// run makes the first write (the fork) at start, then random statements
// until the fork is whole, and after more.
func (s *sandbox) run(ctx context.Context, start <-chan struct{}, pause time.Duration, after int) (SandboxResult, error) {
	var res SandboxResult
	select {
	case <-start:
	case <-ctx.Done():
		return res, ctx.Err()
	}
	t0 := time.Now()
	if err := s.update(ctx, s.original(), false); err != nil {
		return res, err
	}
	res.FirstWrite = time.Since(t0)
	filling, left := true, after
	for i := 0; ; i++ {
		if filling && i%pollEvery == 0 {
			f, err := s.filling(ctx)
			if err != nil {
				return res, err
			}
			if i == 0 {
				res.Lazy = f
			}
			if !f {
				filling, res.Filled = false, time.Since(t0)
			}
		}
		if !filling {
			if left == 0 {
				return res, nil
			}
			left--
		}
		if err := s.step(ctx); err != nil {
			return res, err
		}
		res.Steps++
		if filling {
			res.Filling++
		}
		if pause > 0 {
			time.Sleep(pause)
		}
	}
}
