package lazystress

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Sample is one production statement: when it started, how long it
// took, and its text.
type Sample struct {
	At   time.Time
	Took time.Duration
	Stmt string
}

// writer is one production writer: the rows it owns (the production rows
// of ids whose stride block is its, and those it inserted) and their v.
// Its transactions keep the count of its rows and the sum of their v.
type writer struct {
	cfg     Config
	n       int
	c       *sql.Conn
	rng     *rand.Rand
	live    []int64
	v       map[int64]int64
	seq     int64
	samples []Sample
}

// newWriter is writer n of cfg on c.
func newWriter(cfg Config, n int, c *sql.Conn, seed int64) *writer {
	w := &writer{cfg: cfg, n: n, c: c, rng: rand.New(rand.NewSource(seed)), v: map[int64]int64{}}
	for id := int64(stride); id <= cfg.Rows; id += stride {
		if int((id/stride)%int64(cfg.Writers)) == n {
			w.live = append(w.live, id)
			w.v[id] = Initial(id).V
		}
	}
	return w
}

// run changes production until stop, pause between changes.
func (w *writer) run(ctx context.Context, stop <-chan struct{}, pause time.Duration) error {
	if len(w.live) < 2 {
		return fmt.Errorf("production writer %d owns %d rows: make the table bigger", w.n, len(w.live))
	}
	for {
		select {
		case <-stop:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		var err error
		switch r := w.rng.Intn(10); {
		case r < 4:
			err = w.transfer(ctx)
		case r < 7:
			err = w.move(ctx)
		default:
			err = w.touch(ctx)
		}
		if err != nil {
			return fmt.Errorf("production writer %d: %w", w.n, err)
		}
		if pause > 0 {
			time.Sleep(pause)
		}
	}
}

// exec runs q, timed, and checks it changed want rows (want < 0: any).
func (w *writer) exec(ctx context.Context, q string, want int64) error {
	start := time.Now()
	r, err := w.c.ExecContext(ctx, q)
	w.samples = append(w.samples, Sample{At: start, Took: time.Since(start), Stmt: q})
	if err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	if n, _ := r.RowsAffected(); want >= 0 && n != want {
		return fmt.Errorf("%s: %d rows changed, want %d (a production writer's model is off)", q, n, want)
	}
	return nil
}

// tx runs stmts in one transaction; ok is false when the server rolled
// it back for a deadlock or lock wait timeout (nothing changed).
func (w *writer) tx(ctx context.Context, stmts []string, affected []int64) (ok bool, err error) {
	if err := w.exec(ctx, "BEGIN", -1); err != nil {
		return false, err
	}
	for i, q := range stmts {
		if err := w.exec(ctx, q, affected[i]); err != nil {
			_, _ = w.c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
			if lockFailure(err) {
				return false, nil
			}
			return false, err
		}
	}
	return true, w.exec(ctx, "COMMIT", -1)
}

// pick is the index of a random row the writer owns.
func (w *writer) pick() int { return w.rng.Intn(len(w.live)) }

// transfer moves some v from one of its rows to another.
func (w *writer) transfer(ctx context.Context) error {
	i, j := w.pick(), w.pick()
	if i == j {
		return nil
	}
	x, y, d := w.live[i], w.live[j], 1+w.rng.Int63n(50)
	ok, err := w.tx(ctx, []string{
		fmt.Sprintf("UPDATE %s SET v = v - %d WHERE id = %d", w.cfg.Table(), d, x),
		fmt.Sprintf("UPDATE %s SET v = v + %d WHERE id = %d", w.cfg.Table(), d, y),
	}, []int64{1, 1})
	if ok && err == nil {
		w.v[x] -= d
		w.v[y] += d
	}
	return err
}

// move deletes one of its rows and inserts its v under a new key (a
// negative id: production's AUTO_INCREMENT stays where the sandboxes'
// forks start theirs).
func (w *writer) move(ctx context.Context) error {
	i := w.pick()
	x := w.live[i]
	w.seq++
	id := -(int64(w.n)*1_000_000_000 + w.seq)
	ok, err := w.tx(ctx, []string{
		fmt.Sprintf("DELETE FROM %s WHERE id = %d", w.cfg.Table(), x),
		fmt.Sprintf("INSERT INTO %s (id, v, s, u, w) VALUES (%d, %d, 'p', 'p%d_%d', %d)", w.cfg.Table(), id, w.v[x], w.n, w.seq,
			-(1_000_000_000_000 + int64(w.n)*1_000_000_000 + w.seq)),
	}, []int64{1, 1})
	if ok && err == nil {
		w.live[i] = id
		w.v[id] = w.v[x]
		delete(w.v, x)
	}
	return err
}

// touch changes one of its rows' s, alone (autocommit).
func (w *writer) touch(ctx context.Context) error {
	w.seq++
	err := w.exec(ctx, fmt.Sprintf("UPDATE %s SET s = 'p%d' WHERE id = %d", w.cfg.Table(), w.seq, w.live[w.pick()]), 1)
	if lockFailure(err) {
		return nil
	}
	return err
}

// lockFailure says whether err is a deadlock or a lock wait timeout.
func lockFailure(err error) bool {
	code := errCode(err)
	return code == 1213 || code == 1205
}

// errCode is err's server error number (0 when none).
func errCode(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}
