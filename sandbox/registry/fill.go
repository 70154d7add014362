package registry

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
)

// Fill is a lazy fork this process fills (sandbox/forking starts and ends
// it): its filler, the upstream lock its snapshot connection holds while
// it runs (other processes wait on it), and its end.
type Fill struct {
	Filler *forker.Filler
	Lock   string
	// Cancel stops the background copy.
	Cancel context.CancelFunc

	endOnce sync.Once
	ended   chan struct{}
	err     error
	// use orders the statements running on the fork while it fills (read
	// side: Use) with the fill's end and a reset of the table (write
	// side: Exclusive).
	use sync.RWMutex
	// holds are the open transactions that used the fork (Hold), which
	// the fill's end waits for (AwaitHolds).
	holds holds
}

// Use marks a statement running on the fork while it fills; done ends
// it. The fill's end waits for such statements, and they for it.
func (f *Fill) Use() (done func()) {
	f.use.RLock()
	return f.use.RUnlock
}

// Exclusive waits until no statement uses the fork (Use) and keeps new
// ones out until release.
func (f *Fill) Exclusive() (release func()) {
	f.use.Lock()
	return f.use.Unlock
}

// NewFill is a fill that has not ended.
func NewFill(f *forker.Filler, lock string, cancel context.CancelFunc) *Fill {
	return &Fill{Filler: f, Lock: lock, Cancel: cancel, ended: make(chan struct{})}
}

// Ended is closed when the fill has ended: its fork whole and recorded
// so, or the fill failed (Err).
func (f *Fill) Ended() <-chan struct{} { return f.ended }

// Err is why the fill failed (nil while it runs or when it succeeded).
func (f *Fill) Err() error {
	select {
	case <-f.ended:
		return f.err
	default:
		return nil
	}
}

// End ends the fill (once) with err (nil: the fork is whole).
func (f *Fill) End(err error) {
	f.endOnce.Do(func() {
		f.err = err
		close(f.ended)
	})
}

// AddFill records f as the fill of sb's table k.
func (sb *Sandbox) AddFill(k string, f *Fill) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.fills == nil {
		sb.fills = map[string]*Fill{}
	}
	sb.fills[k] = f
}

// FillOf is the fill of sb's table k this process runs, if any.
func (sb *Sandbox) FillOf(k string) (*Fill, bool) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	f, ok := sb.fills[k]
	return f, ok
}

// fillingHereLocked says whether a fill of sb this process runs has not
// ended (sb.mu held): memory keeps such a sandbox (Registry's idle
// release), whose fills a reset, a discard or the process's end stop.
func (sb *Sandbox) fillingHereLocked() bool {
	for _, f := range sb.fills {
		select {
		case <-f.Ended():
		default:
			return true
		}
	}
	return false
}

// Fills are the fills of sb this process runs, by key.
func (sb *Sandbox) Fills() map[string]*Fill {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	out := make(map[string]*Fill, len(sb.fills))
	for k, f := range sb.fills {
		out[k] = f
	}
	return out
}

// DropFill forgets f, the fill of sb's table k (not a later one's).
func (sb *Sandbox) DropFill(k string, f *Fill) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.fills[k] == f {
		delete(sb.fills, k)
	}
}

// ErrFillStopped ends a fill its sandbox or table left.
var ErrFillStopped = errors.New("the fill was stopped")

// Stop ends the fill: its background copy stopped, its connections closed
// (the snapshot's transaction rolled back).
func (f *Fill) Stop() {
	f.Cancel()
	f.Filler.Close()
	f.End(ErrFillStopped)
}

// StopFills stops and forgets every fill of sb this process runs.
func (sb *Sandbox) StopFills() {
	for k, f := range sb.Fills() {
		f.Stop()
		sb.DropFill(k, f)
	}
}

// stopFills stops every fill this process runs (it is closing), each
// once the end it may be making has been made (Fill.Exclusive). Their
// forks stay filling in the registry: the next process that needs one
// whole fills it again (sandbox/forking resume.go).
func (m *Registry) stopFills() {
	for _, sb := range m.Sandboxes() {
		for k, f := range sb.Fills() {
			release := f.Exclusive()
			f.Stop()
			release()
			sb.DropFill(k, f)
		}
	}
}

// DialOwn opens a side connection outside the pool, for a caller that
// keeps it (a lazy fork's filler): READ COMMITTED and plain text modes, as
// the pool's are.
func (m *Registry) DialOwn(ctx context.Context) (sideconn.Conn, error) {
	c, err := m.dial(ctx)
	if err != nil {
		return nil, &sideconn.DialError{Err: err, Size: m.Limits().SideConnections}
	}
	if _, err := c.Exec(ctx, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("ready a side connection: %w", err)
	}
	if err := sideconn.PlainTextMode(ctx, c); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("ready a side connection: %w", err)
	}
	return c, nil
}

// Filling are the keys of sb's tables whose lazy fork is still filling
// (in this process or another).
func (sb *Sandbox) Filling() []string {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	var out []string
	for k, e := range sb.tables {
		if e.Filling {
			out = append(out, k)
		}
	}
	return out
}

// AnyFilling says whether a lazy fork of sb still fills (Filling is not
// empty), without making the list: statements ask it before each run.
func (sb *Sandbox) AnyFilling() bool {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	for _, e := range sb.tables {
		if e.Filling {
			return true
		}
	}
	return false
}

// tableInfoLocked describes e (sb.mu held): a lazy fork still filling
// with its progress when this process fills it.
func (sb *Sandbox) tableInfoLocked(e *sandbox.Entry) TableInfo {
	t := TableInfo{Table: e.Logical.DB + "." + e.Logical.Name, State: string(e.Kind), Rows: e.Rows, Bytes: e.Bytes}
	if !e.Filling {
		return t
	}
	t.State = StateFilling
	for k, f := range sb.fills {
		if sb.tables[k] != e {
			continue
		}
		p := f.Filler.Progress()
		t.Fill = &FillInfo{Copied: p.Filled, Total: p.Total, Started: p.Started,
			CopiedUp: map[string]int64{"staging": p.UpStaged, "snapshot": p.UpSnapshot, "transaction": p.UpTx,
				"transaction_staging": p.UpTxStaged}, Waiting: p.Done && f.waiting(), BuildingKeys: p.BuildingKeys}
		if err := f.Err(); err != nil {
			t.Fill.Error = err.Error()
		}
	}
	return t
}

// FillStats are the lazy forks' copies this process runs.
type FillStats struct {
	Running       int
	Copied, Total int64
	Oldest        time.Duration
}

// FillStats counts the fills of the process's sandboxes still copying.
func (m *Registry) FillStats() FillStats {
	var st FillStats
	for _, sb := range m.Sandboxes() {
		for _, f := range sb.Fills() {
			p := f.Filler.Progress()
			if p.Done {
				continue
			}
			st.Running++
			st.Copied += p.Filled
			st.Total += p.Total
			st.Oldest = max(st.Oldest, time.Since(p.Started))
		}
	}
	return st
}

// MarkFilled records sb's lazy fork old (key k), whose fill has ended,
// as whole: n, its registry row and its place in memory, only while old
// is still the table's entry in both (a reset may have taken it); ok says
// it was.
func (m *Registry) MarkFilled(ctx context.Context, c sideconn.Conn, sb *Sandbox, k string, old, n *sandbox.Entry) (ok bool, err error) {
	sb.mu.Lock()
	cur := sb.tables[k]
	sb.mu.Unlock()
	if cur != old {
		return false, nil
	}
	done, err := c.Exec(ctx, "UPDATE "+m.names.Q("tables")+" SET fill = '', row_count = "+strconv.FormatInt(n.Rows, 10)+
		", bytes = "+strconv.FormatInt(n.Bytes, 10)+" WHERE sandbox_id = "+quote.String(sb.ID)+" AND db = "+
		quote.String(old.Logical.DB)+" AND tbl = "+quote.String(old.Logical.Name)+" AND fill = 'filling'")
	if err != nil || done != 1 {
		return false, err
	}
	sb.mu.Lock()
	if sb.tables[k] == old {
		sb.bytes += n.Bytes - old.Bytes
		sb.tables[k] = n
		sb.version++
		sb.changed = max(sb.changed, n.Epoch)
		ok = true
	}
	sb.mu.Unlock()
	if ok {
		err = m.BumpGeneration(ctx, c, sb)
	}
	return ok, err
}
