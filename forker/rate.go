package forker

import "sync"

// Rate is the rows per second fills may copy (0: no bound), shared by
// every filler of a process and changed while they run (a reloaded
// lazy-fork-rate): each reads it before each chunk, and one that waits
// for it wakes when it changes.
type Rate struct {
	mu      sync.Mutex
	rows    int64
	changed chan struct{} // closed when the rate changes
}

// NewRate is a rate of rows per second (0: no bound).
func NewRate(rows int64) *Rate { return &Rate{rows: rows, changed: make(chan struct{})} }

// Set changes the rate; fillers waiting for the old one wake.
func (r *Rate) Set(rows int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rows == r.rows {
		return
	}
	r.rows = rows
	close(r.changed)
	r.changed = make(chan struct{})
}

// Rows is the rate (0: no bound).
func (r *Rate) Rows() int64 {
	rows, _ := r.get()
	return rows
}

// get is the rate and a channel closed when it next changes.
func (r *Rate) get() (int64, <-chan struct{}) {
	if r == nil {
		return 0, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rows, r.changed
}
