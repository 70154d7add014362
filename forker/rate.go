package forker

import (
	"sync"
	"time"
)

// Rate is the rows per second fills may copy (0: no bound), shared by
// every filler of a process and changed while they run (a reloaded
// lazy-fork-rate): each reads it before each chunk, and one that waits
// for it wakes when it changes. A fill is held to it for a while only
// (For; 0: as long as it fills): past that it copies as fast as it goes,
// so that the read view its snapshot keeps on production ends.
type Rate struct {
	mu      sync.Mutex
	rows    int64
	limit   time.Duration // how long a fill is held to rows (0: for ever)
	changed chan struct{} // closed when the rate changes
}

// NewRate is a rate of rows per second (0: no bound).
func NewRate(rows int64) *Rate { return &Rate{rows: rows, changed: make(chan struct{})} }

// Set changes the rate, and how long a fill is held to it (0: as long as
// it fills); fillers waiting for the old one wake.
func (r *Rate) Set(rows int64, limit time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rows == r.rows && limit == r.limit {
		return
	}
	r.rows, r.limit = rows, limit
	close(r.changed)
	r.changed = make(chan struct{})
}

// Rows is the rate a fill started at started copies at now (0: no bound).
func (r *Rate) Rows(started time.Time) int64 {
	rows, _, _ := r.get(started)
	return rows
}

// get is the rate a fill started at started copies at now, a channel
// closed when the rate next changes, and when the fill is let go (zero:
// never, or no rate).
func (r *Rate) get(started time.Time) (rows int64, changed <-chan struct{}, free time.Time) {
	if r == nil {
		return 0, nil, time.Time{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rows <= 0 || r.limit <= 0 {
		return r.rows, r.changed, time.Time{}
	}
	free = started.Add(r.limit)
	if !time.Now().Before(free) {
		return 0, r.changed, time.Time{}
	}
	return r.rows, r.changed, free
}
