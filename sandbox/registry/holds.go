package registry

import (
	"context"
	"errors"
	"sync"
)

// Transactions on a lazy fork while it fills. An open transaction that
// ran a statement on the fork holds the server's metadata lock on it until
// it ends, and may hold locks on its rows and on the gaps between them,
// which are wide in a fork that holds few rows yet: so the rows such a
// transaction needs are copied up inside it, on its own connection, and
// no other session may copy rows up or run a statement on the fork
// meanwhile. The transaction holds the fill (Fill.Hold), one at a time;
// the fill's end stops new holds and waits for the one taken
// (Fill.AwaitHolds), then drains the statements (Fill.Exclusive). A
// session refused a hold waits for the fill's end, as it waited for a
// copy; one that holds another fill must not wait while it does (the
// session rolls its transaction back first and replays it after).

// holds is who holds a fill.
type holds struct {
	mu     sync.Mutex
	owner  any           // the session holding it (nil: none)
	ending bool          // the fill's end waits: no new hold
	free   chan struct{} // closed when the owner lets go
	// change is the stamp of the last hold's end: the rows its
	// transaction copied up were committed by then, if at all.
	change uint64
}

// Hold makes owner's open transaction the fill's holder, when no other
// session holds it and its end does not wait (ok). It waits until no
// statement of another session runs on the fork (Use). release ends the
// hold once the transaction has ended, stamped after that end. busy, when
// another session holds it (its end waiting for that one, or not), is
// closed when that one lets go. ok is false with busy nil once the fill's
// end waits for no holder: owner must wait for the end, which waits for
// no session.
func (f *Fill) Hold(owner any) (release func(stamp uint64), busy <-chan struct{}, ok bool) {
	f.use.Lock()
	defer f.use.Unlock()
	h := &f.holds
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.owner != nil && h.owner != owner:
		return nil, h.busy(), false
	case h.ending:
		return nil, nil, false
	}
	h.owner = owner
	var once sync.Once
	return func(stamp uint64) { once.Do(func() { h.release(stamp) }) }, nil, true
}

// busy is closed when the holder lets go (h.mu held).
func (h *holds) busy() <-chan struct{} {
	if h.free == nil {
		h.free = make(chan struct{})
	}
	return h.free
}

// release ends the hold.
func (h *holds) release(stamp uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.owner = nil
	h.change = max(h.change, stamp)
	if h.free != nil {
		close(h.free)
		h.free = nil
	}
}

// waiting reports whether the fill's end waits for its holder.
func (f *Fill) waiting() bool {
	f.holds.mu.Lock()
	defer f.holds.mu.Unlock()
	return f.holds.ending && f.holds.owner != nil
}

// Ending reports whether the fill's end has begun with no transaction
// holding it: it comes without waiting for any session.
func (f *Fill) Ending() bool {
	f.holds.mu.Lock()
	defer f.holds.mu.Unlock()
	return f.holds.ending && f.holds.owner == nil
}

// holderKey keys the holder of a waiting context (WithHolder).
type holderKey struct{}

// WithHolder is ctx for waits of owner's, which holds fills: a wait for a
// fill owner holds fails with ErrHeldBySelf instead of waiting for ever.
func WithHolder(ctx context.Context, owner any) context.Context {
	return context.WithValue(ctx, holderKey{}, owner)
}

// ErrHeldBySelf says a wait was for a fill its own transaction holds: the
// caller must let its fills go first (the session rolls back and replays).
var ErrHeldBySelf = errors.New("the fill waited for is held by the waiting transaction")

// HeldBy reports whether ctx's holder (WithHolder) holds f.
func (f *Fill) HeldBy(ctx context.Context) bool {
	owner := ctx.Value(holderKey{})
	if owner == nil {
		return false
	}
	f.holds.mu.Lock()
	defer f.holds.mu.Unlock()
	return f.holds.owner == owner
}

// HeldElsewhere is, when a session other than owner holds the fill, a
// channel closed when it lets go (nil otherwise). A statement that uses
// the fork (Use) asks it and waits without its Use.
func (f *Fill) HeldElsewhere(owner any) <-chan struct{} {
	h := &f.holds
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.owner == nil || h.owner == owner {
		return nil
	}
	return h.busy()
}

// AwaitHolds refuses new holds and waits until the holder, if any, lets
// go, or ctx ends.
func (f *Fill) AwaitHolds(ctx context.Context) error {
	h := &f.holds
	h.mu.Lock()
	h.ending = true
	if h.owner == nil {
		h.mu.Unlock()
		return nil
	}
	free := h.busy()
	h.mu.Unlock()
	select {
	case <-free:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// LastChange is the stamp after which no row was committed into the fork
// by a copy-up or a holder's transaction: a read view taken after it sees
// them all.
func (f *Fill) LastChange() uint64 {
	f.holds.mu.Lock()
	defer f.holds.mu.Unlock()
	return max(f.holds.change, f.Filler.LastStamp())
}
