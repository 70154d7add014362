package operator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/sandbox/command"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
)

// ErrExists marks a Create of a name a sandbox already has.
var ErrExists = errors.New("sandbox exists")

// ErrBadName marks a Create whose sandbox name or owner cannot be one: a
// name other than 1 to 48 letters, digits, '_' or '-' (SANDBOX CREATE's),
// an owner that is empty, too long for the registry, or holds what a
// terminal would not show as it is.
var ErrBadName = errors.New("bad sandbox name or owner")

// maxOwner bounds an owner's length: the registry's owner column.
const maxOwner = 128

// Create makes a sandbox called name for the proxy user owner, kept for
// keep (nil: sandbox-ttl; 0: until discarded), as that user's SANDBOX
// CREATE name TTL would, but with no connection: the owner (or a sandbox
// admin) attaches it later by its login tag (owner+name) or SANDBOX
// ATTACH. It counts against max-sandboxes and the owner's own cap. A name
// taken is an ErrExists, a bad name or owner an ErrBadName, a TTL beyond
// max-sandbox-ttl an ErrTTL; a cap reached is an ErrRefused.
func (o *Operator) Create(ctx context.Context, name, owner string, keep *time.Duration) (registry.Info, error) {
	if err := checkCreate(name, owner); err != nil {
		return registry.Info{}, err
	}
	ttl := o.reg.Limits().DefaultTTL
	if keep != nil {
		ttl = *keep
	}
	if err := o.reg.Limits().CheckTTL(ttl); err != nil {
		return registry.Info{}, &refusedError{kind: ErrTTL, err: err, msg: ErrTTL.Error() + ": " + refusalText(err)}
	}
	if sb, err := o.reg.Lookup(ctx, name); err != nil {
		return registry.Info{}, err
	} else if sb != nil {
		return registry.Info{}, fmt.Errorf("%w: a sandbox named %q already exists (owner %s); discard it or choose another name",
			ErrExists, name, quote.Display(sb.Owner))
	}
	sb, err := o.reg.NewSandbox(name, owner)
	if err != nil {
		return registry.Info{}, adminRefusal(err)
	}
	// Attached while it is recorded, as SANDBOX CREATE's: the reaper lets
	// go of a recorded sandbox no connection uses, and a record that
	// waits for the life lock may outlast a reap interval. Kept, it
	// outlives the attach: the detach leaves it to the registry.
	if err := o.reg.Attach(sb); err != nil {
		return registry.Info{}, adminRefusal(err)
	}
	var exp time.Time
	if ttl > 0 {
		exp = time.Now().UTC().Add(ttl)
	}
	sb.KeepAs(exp)
	if err := o.reg.WithConn(ctx, func(c sideconn.Conn) error { return o.reg.PersistKeep(ctx, c, sb) }); err != nil {
		o.reg.Forget(sb)
		return registry.Info{}, adminRefusal(err)
	}
	o.reg.Detach(sb)
	return sb.Info(true), nil
}

// checkCreate refuses, as ErrBadName, a sandbox name SANDBOX CREATE would
// refuse and an owner no login could be.
func checkCreate(name, owner string) error {
	if err := command.ValidName(name); err != nil {
		return fmt.Errorf("%w: %w", ErrBadName, err)
	}
	switch {
	case owner == "":
		return fmt.Errorf("%w: the owner must be named: the proxy user who is to use the sandbox", ErrBadName)
	case len(owner) > maxOwner:
		return fmt.Errorf("%w: owner %q is longer than %d bytes", ErrBadName, quote.Display(owner[:maxOwner])+"…", maxOwner)
	case quote.Display(owner) != owner || strings.ContainsAny(owner, " \t"):
		return fmt.Errorf("%w: owner %s holds white space or characters no login name has", ErrBadName, quote.Display(owner))
	}
	return nil
}
