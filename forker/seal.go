package forker

import (
	"context"
	"errors"
	"fmt"
)

// Seal ends the snapshot of a fill whose copy is complete (Done, no
// error): the snapshot's transaction commits the staging table, which
// copy-ups read from then on, as the snapshot's rows; then the keys left
// out of the fill are built (on c, a side connection), while statements
// still copy rows up. The fork is not whole yet: Finish makes it so, and
// seals first when the caller has not.
func (f *Filler) Seal(ctx context.Context, c Conn) error {
	select {
	case <-f.done:
	default:
		return errors.New("the fork's copy is still running")
	}
	if f.err != nil {
		return f.err
	}
	f.sealMu.Lock()
	defer f.sealMu.Unlock()
	if !f.isSealed() {
		f.gate.lockUp() // no snapshot read meanwhile
		_, err := f.snap.Exec(ctx, "COMMIT")
		if err == nil {
			f.sealed = true
		}
		f.gate.unlock()
		if err != nil {
			return fmt.Errorf("commit the copy of %s: %w", f.l.Src.Quoted(), err)
		}
	}
	if f.built {
		return nil
	}
	f.building.Store(true)
	err := f.keys.build(ctx, c, f.l.Staging, f.l.Capture.Fork, f.l.columns(), f.quiet)
	f.building.Store(false)
	if err != nil {
		return err
	}
	f.built = true
	return nil
}

// quiet stops copy-ups (and snapshot reads) until the function it
// returns is called.
func (f *Filler) quiet() func() {
	f.upMu.Lock()
	f.gate.lockUp()
	return func() {
		f.gate.unlock()
		f.upMu.Unlock()
	}
}

// isSealed says whether the staging table is committed (Seal). Read with
// the snapshot connection's gate held, or sealMu.
func (f *Filler) isSealed() bool { return f.sealed }
