package admin

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox/operator"
	"github.com/sqlfork/sqlfork-proxy/sandbox/review"
	"github.com/sqlfork/sqlfork-proxy/session"
)

// Promote implements adminapi.Sandboxes: the operator's PROMOTE with o's
// options, its answer — a dry run's plan too — in the API's types.
func (a adminSandboxes) Promote(ctx context.Context, name string, o adminapi.PromoteOptions) (adminapi.Promoted, error) {
	ro, err := reviewOptions(o)
	if err != nil {
		return adminapi.Promoted{}, err
	}
	return managed(ctx, a, func(op *operator.Operator) (adminapi.Promoted, error) {
		r, err := op.PromoteWith(ctx, name, ro)
		if err != nil {
			return adminapi.Promoted{}, err
		}
		return apiPromoted(name, o, r), nil
	})
}

// reviewOptions are o as the reviewer takes them: each table split into
// its database and name (both required, else ErrBadRequest).
func reviewOptions(o adminapi.PromoteOptions) (review.PromoteOptions, error) {
	ro := review.PromoteOptions{Strategy: o.Strategy, DryRun: o.DryRun, Matching: o.Matching}
	var err error
	if ro.Tables, err = splitTables("table", o.Tables); err != nil {
		return review.PromoteOptions{}, err
	}
	if ro.Overwrite, err = splitTables("overwrite", o.Overwrite); err != nil {
		return review.PromoteOptions{}, err
	}
	return ro, nil
}

// splitTables are names, each db.table, as tables; one that is not is an
// ErrBadRequest naming param.
func splitTables(param string, names []string) ([]rewrite.Table, error) {
	var out []rewrite.Table
	for _, n := range names {
		db, table, ok := adminapi.SplitTable(n)
		if !ok {
			return nil, fmt.Errorf("%w: %s: %q is not db.table", adminapi.ErrBadRequest, param, n)
		}
		out = append(out, rewrite.Table{DB: db, Name: table})
	}
	return out, nil
}

// apiPromoted is the answer to PROMOTE of the sandbox called name as o
// asked, r its reply: a dry run's rows (review.DryRunColumns) as the plan,
// but for the digest's, which is the Digest.
func apiPromoted(name string, o adminapi.PromoteOptions, r *session.Reply) adminapi.Promoted {
	p := adminapi.Promoted{Sandbox: name, Strategy: cmp.Or(strings.ToLower(o.Strategy), adminapi.StrategyFail), Outcome: "committed",
		Info: r.Info, Rows: int64(r.Affected)}
	if !o.DryRun {
		return p
	}
	p.Outcome, p.DryRun, p.Rows = adminapi.OutcomeDryRun, true, 0
	for _, row := range rowsOf(r) {
		step, text := row.text("step"), row.text("statement")
		if step == "digest" {
			p.Digest = text
			continue
		}
		p.Plan = append(p.Plan, adminapi.PlanStep{Step: step, Statement: text})
	}
	return p
}
