// Package operator is what the operator does with sandboxes by name,
// whoever owns them — the admin API's and the CLI's list, show, keep,
// discard, diff, export, promote and reset — over the registry, the reviewer
// and the forker.
// It holds no connection's state: the SANDBOX statements a session runs
// are session's.
package operator

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sqlfork/sqlfork-proxy/reply"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/sandbox/review"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Operator acts on the sandboxes of a registry by name.
type Operator struct {
	reg   *registry.Registry
	rev   *review.Reviewer
	names sandbox.Names
	// resetter resets sandboxes (SetResetter).
	resetter Resetter
}

// New is the operator of reg's sandboxes, reviewing them with rev; names
// are the proxy's schema names (the registry's tables).
func New(reg *registry.Registry, rev *review.Reviewer, names sandbox.Names) *Operator {
	return &Operator{reg: reg, rev: rev, names: names}
}

// ErrNoSandbox is returned for a sandbox name that does not exist.
var ErrNoSandbox = fmt.Errorf("no such sandbox")

// ErrTTL marks a lifetime beyond max-sandbox-ttl asked of Keep.
var ErrTTL = fmt.Errorf("TTL beyond max-sandbox-ttl")

// ErrForbidden marks a request of the admin API the proxy may not carry
// out: a PROMOTE without a promote account (or by a user who may not
// promote the sandbox).
var ErrForbidden = errors.New("not allowed")

// ErrRefused marks a request of the admin API refused as the sandbox or
// production stand: a PROMOTE's conflicts (its message starts "PROMOTE
// refused:"), a table PROMOTE cannot check under its strategy, another
// PROMOTE of the sandbox running, a diff too large to answer.
var ErrRefused = errors.New("refused")

// ErrStrategy marks a PROMOTE strategy other than FAIL, OURS and THEIRS.
var ErrStrategy = errors.New("unknown PROMOTE strategy")

// ErrOptions marks PROMOTE options that do not hold: DRY RUN with
// MATCHING, a MATCHING that is not a plan's digest.
var ErrOptions = errors.New("bad PROMOTE options")

// AdminUser is who the admin API acts as: a sandbox admin, named in
// PROMOTE's audit (via "api").
const AdminUser = "admin-api"

// List returns every sandbox: those of this process and those in the
// registry (kept, or held by other processes), sorted by name.
func (o *Operator) List(ctx context.Context) ([]registry.Info, error) {
	local := map[string]*registry.Sandbox{}
	for _, sb := range o.reg.Sandboxes() {
		local[sb.ID] = sb
	}
	byID := map[string]registry.Info{}
	err := o.reg.WithConn(ctx, func(c sideconn.Conn) error {
		listed, err := o.reg.Listed(ctx, c)
		for _, l := range listed {
			if sb, ok := local[l.Info.ID]; ok {
				sb.NoteListed(l) // its writes and promotes through other processes
			} else {
				byID[l.Info.ID] = l.Info
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	for id, sb := range local {
		byID[id] = sb.Info(false)
	}
	out := make([]registry.Info, 0, len(byID))
	for _, in := range byID {
		out = append(out, in)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Show describes the sandbox called name with its tables.
func (o *Operator) Show(ctx context.Context, name string) (registry.Info, error) {
	sb, err := o.named(ctx, name)
	if err != nil {
		return registry.Info{}, err
	}
	return o.reg.InfoNow(ctx, sb)
}

// Keep keeps the sandbox called name for ttl (0: until discarded).
func (o *Operator) Keep(ctx context.Context, name string, keep *time.Duration) (registry.Info, error) {
	ttl := o.reg.Limits().DefaultTTL
	if keep != nil {
		ttl = *keep
	}
	if err := o.reg.Limits().CheckTTL(ttl); err != nil {
		return registry.Info{}, &refusedError{kind: ErrTTL, err: err, msg: ErrTTL.Error() + ": " + refusalText(err)}
	}
	sb, err := o.named(ctx, name)
	if err != nil {
		return registry.Info{}, err
	}
	sb = o.reg.Remember(sb)
	var exp time.Time
	if ttl > 0 {
		exp = time.Now().UTC().Add(ttl)
	}
	sb.KeepAs(exp)
	sb.Touch()
	if err := o.reg.WithConn(ctx, func(c sideconn.Conn) error { return o.reg.PersistKeep(ctx, c, sb) }); err != nil {
		return registry.Info{}, err
	}
	return sb.Info(true), nil
}

// Discard drops the sandbox called name and its forks; connections in it
// get "sandbox was discarded" on their next statement.
func (o *Operator) Discard(ctx context.Context, name string) error {
	sb, err := o.named(ctx, name)
	if err != nil {
		return err
	}
	return o.reg.Discard(ctx, o.reg.Remember(sb), true, false, "discarded")
}

// named is the sandbox called name, in memory or in the registry; an
// ErrNoSandbox when there is none.
func (o *Operator) named(ctx context.Context, name string) (*registry.Sandbox, error) {
	sb, err := o.reg.Lookup(ctx, name)
	if err != nil {
		return nil, err
	}
	if sb == nil {
		return nil, fmt.Errorf("%w: %q", ErrNoSandbox, name)
	}
	return sb, nil
}

// Diff is SANDBOX DIFF [SUMMARY] [FOR only] of the sandbox called
// name, whoever owns it (the admin API's): a Reply with DiffSummaryColumns
// or DiffColumns. Refusals are ErrRefused (see adminRefusal).
func (o *Operator) Diff(ctx context.Context, name string, summary bool, only *rewrite.Table) (*reply.Reply, error) {
	return o.DiffRows(ctx, name, summary, only, 0)
}

// DiffRows is Diff with at most rowsPerTable changed rows of each table
// (0: all; review.Reviewer.DiffRows).
func (o *Operator) DiffRows(ctx context.Context, name string, summary bool, only *rewrite.Table, rowsPerTable int) (*reply.Reply, error) {
	sb, err := o.named(ctx, name)
	if err != nil {
		return nil, err
	}
	r, err := o.rev.DiffRows(ctx, sb, summary, only, rowsPerTable)
	if err != nil {
		return nil, adminRefusal(err)
	}
	return r, nil
}

// Export is SANDBOX EXPORT of the sandbox called name, whoever owns it
// (the admin API's): its statements, without semicolons, comments ("-- …")
// among them.
func (o *Operator) Export(ctx context.Context, name string) ([]string, error) {
	sb, err := o.named(ctx, name)
	if err != nil {
		return nil, err
	}
	r, err := o.rev.Export(ctx, sb)
	if err != nil {
		return nil, adminRefusal(err)
	}
	out := make([]string, 0, len(r.Rows))
	for _, row := range r.Rows {
		out = append(out, sideconn.Str(row[0]))
	}
	return out, nil
}

// Promote is SANDBOX PROMOTE of the sandbox called name by strategy
// (FAIL, OURS or THEIRS in any case; "" is FAIL) by the admin API: as
// PromoteWith with that strategy alone.
func (o *Operator) Promote(ctx context.Context, name, strategy string) (*reply.Reply, error) {
	return o.PromoteWith(ctx, name, review.PromoteOptions{Strategy: strategy})
}

// PromoteWith is SANDBOX PROMOTE of the sandbox called name as po asks (its
// strategy, FOR tables, OVERWRITE tables, DRY RUN or MATCHING digest) by
// the admin API: as AdminUser, a sandbox admin, via "api". A dry run
// answers a Reply with review.DryRunColumns. Refusals are ErrForbidden or
// ErrRefused (see adminRefusal); a strategy it does not know an
// ErrStrategy, options that do not hold together an ErrOptions — both
// before anything is read.
func (o *Operator) PromoteWith(ctx context.Context, name string, po review.PromoteOptions) (*reply.Reply, error) {
	po.Strategy = strings.ToUpper(cmp.Or(po.Strategy, "FAIL"))
	if !slices.Contains([]string{"FAIL", "OURS", "THEIRS"}, po.Strategy) {
		return nil, fmt.Errorf("%w: %q (FAIL, OURS or THEIRS)", ErrStrategy, po.Strategy)
	}
	if err := checkPlanOptions(po); err != nil {
		return nil, err
	}
	sb, err := o.named(ctx, name)
	if err != nil {
		return nil, err
	}
	r, err := o.promoteAsAdmin(ctx, sb, po)
	if err != nil {
		return nil, adminRefusal(err)
	}
	return r, nil
}

// checkPlanOptions refuses, as ErrOptions, a DRY RUN with MATCHING and a
// MATCHING that is not a plan's digest ("sha256:" and 64 hexadecimal
// digits).
func checkPlanOptions(po review.PromoteOptions) error {
	if po.DryRun && po.Matching != "" {
		return fmt.Errorf("%w: DRY RUN and MATCHING exclude each other", ErrOptions)
	}
	hex, ok := strings.CutPrefix(strings.ToLower(po.Matching), "sha256:")
	if po.Matching != "" && (!ok || len(hex) != 64 || strings.Trim(hex, "0123456789abcdef") != "") {
		return fmt.Errorf("%w: MATCHING %q is not a plan's digest (sha256: and 64 hexadecimal digits, as DRY RUN gives it)", ErrOptions, po.Matching)
	}
	return nil
}

// promoteAsAdmin is Promote by AdminUser via "api": the admin API, behind
// its bearer token, is a sandbox admin whatever the sandbox — the operator,
// who reviews and applies with the promote account's rights, not a
// sandbox's user, whose own grants bound SANDBOX PROMOTE.
func (o *Operator) promoteAsAdmin(ctx context.Context, sb *registry.Sandbox, po review.PromoteOptions) (*reply.Reply, error) {
	return o.rev.PromoteAs(ctx, sb, AdminUser, "api", true, po, nil)
}

// adminRefusal marks err, if it is a refusal (*rewrite.Refusal), for the
// admin API: ErrForbidden for those of who may promote (no promote account,
// not the owner), ErrRefused for the others. A refusal's text is its
// message without the "sqlfork-proxy: " a client's error starts with; the
// refusal stays in the chain. Other errors are returned as they are.
func adminRefusal(err error) error {
	var r *rewrite.Refusal
	if !errors.As(err, &r) {
		return err
	}
	kind := ErrRefused
	if r.Code == wire.ErOptionPreventsStatement || r.Code == wire.ErSpecificAccessDenied {
		kind = ErrForbidden
	}
	return &refusedError{kind: kind, err: err, msg: refusalText(err)}
}

// refusalText is err's text for the admin API: a refusal's message without
// the "sqlfork-proxy: " a client's error starts with; a wrapped one's (or
// any other error's) whole text.
func refusalText(err error) string {
	if r, ok := err.(*rewrite.Refusal); ok {
		return r.Plain()
	}
	return err.Error()
}

// refusedError is a refusal marked for the admin API (adminRefusal).
type refusedError struct {
	kind, err error
	msg       string
}

func (e *refusedError) Error() string   { return e.msg }
func (e *refusedError) Unwrap() []error { return []error{e.kind, e.err} }
