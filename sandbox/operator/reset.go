package operator

import (
	"context"
	"errors"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox/forking"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
)

// Resetter gives a sandbox's tables back to production (forking.Forker).
type Resetter interface {
	Reset(ctx context.Context, sb *registry.Sandbox, only []rewrite.Table) (forking.ResetResult, error)
}

// SetResetter installs what Reset resets with; call it before the first
// Reset.
func (o *Operator) SetResetter(r Resetter) { o.resetter = r }

// ErrNoResetter is Reset's error before SetResetter.
var ErrNoResetter = errors.New("sandbox reset is not set up")

// Reset is SANDBOX RESET [FOR only] of the sandbox called name, whoever
// owns it (the admin API's): the tables only (every table, when empty)
// read production as it is now, and the next write forks them afresh.
// Refusals are ErrRefused (see adminRefusal): a table that exists nowhere,
// a promote of the sandbox running, a transaction using its tables.
func (o *Operator) Reset(ctx context.Context, name string, only []rewrite.Table) (forking.ResetResult, error) {
	if o.resetter == nil {
		return forking.ResetResult{}, ErrNoResetter
	}
	sb, err := o.named(ctx, name)
	if err != nil {
		return forking.ResetResult{}, err
	}
	res, err := o.resetter.Reset(ctx, o.reg.Remember(sb), only)
	if err != nil {
		return forking.ResetResult{}, adminRefusal(err)
	}
	return res, nil
}
