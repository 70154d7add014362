package admin

import (
	"context"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox/operator"
)

// Reset implements adminapi.Sandboxes: the operator's SANDBOX RESET of
// the tables named (each db.table; none: every table).
func (a adminSandboxes) Reset(ctx context.Context, name string, tables []string) (adminapi.ResetResult, error) {
	ts, err := splitTables("table", tables)
	if err != nil {
		return adminapi.ResetResult{}, err
	}
	return managed(ctx, a, func(op *operator.Operator) (adminapi.ResetResult, error) {
		res, err := op.Reset(ctx, name, ts)
		if err != nil {
			return adminapi.ResetResult{}, err
		}
		return adminapi.ResetResult{Sandbox: name, Tables: orNone(dbTables(res.Reset)), Linked: dbTables(res.Linked),
			Production: dbTables(res.Production), Info: res.Message(name)}, nil
	})
}

// dbTables are ts as db.table.
func dbTables(ts []rewrite.Table) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.DB+"."+t.Name)
	}
	return out
}

// orNone is s, or an empty list for nil (JSON [] rather than null).
func orNone(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
