// Package admin is what the admin API manages (adminapi.Sandboxes): the
// proxy's sandboxes, through the sandbox manager, in the API's types.
package admin

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox/operator"
	"github.com/sqlfork/sqlfork-proxy/session"
)

// New is what the admin API manages: the sandboxes of the manager that
// manager gives (starting it, if need be).
func New(manager func(context.Context) (*session.Manager, error)) adminapi.Sandboxes {
	return adminSandboxes{manager}
}

// adminSandboxes implements adminapi.Sandboxes with the sandbox manager.
type adminSandboxes struct {
	manager func(context.Context) (*session.Manager, error)
}

// List implements adminapi.Sandboxes.
func (a adminSandboxes) List(ctx context.Context) ([]adminapi.Sandbox, error) {
	m, err := a.manager(ctx)
	if err != nil {
		return nil, err
	}
	infos, err := m.Operator().List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]adminapi.Sandbox, 0, len(infos))
	for _, in := range infos {
		out = append(out, apiSandbox(in))
	}
	return out, nil
}

// Show implements adminapi.Sandboxes.
func (a adminSandboxes) Show(ctx context.Context, name string) (adminapi.Sandbox, error) {
	return managed(ctx, a, func(o *operator.Operator) (adminapi.Sandbox, error) {
		in, err := o.Show(ctx, name)
		return apiSandbox(in), err
	})
}

// Create implements adminapi.Sandboxes.
func (a adminSandboxes) Create(ctx context.Context, name, owner string, ttl *time.Duration) (adminapi.Sandbox, error) {
	return managed(ctx, a, func(o *operator.Operator) (adminapi.Sandbox, error) {
		in, err := o.Create(ctx, name, owner, ttl)
		return apiSandbox(in), err
	})
}

// Keep implements adminapi.Sandboxes.
func (a adminSandboxes) Keep(ctx context.Context, name string, ttl *time.Duration) (adminapi.Sandbox, error) {
	return managed(ctx, a, func(o *operator.Operator) (adminapi.Sandbox, error) {
		in, err := o.Keep(ctx, name, ttl)
		return apiSandbox(in), err
	})
}

// Discard implements adminapi.Sandboxes.
func (a adminSandboxes) Discard(ctx context.Context, name string) error {
	_, err := managed(ctx, a, func(o *operator.Operator) (struct{}, error) { return struct{}{}, o.Discard(ctx, name) })
	return err
}

// Diff implements adminapi.Sandboxes.
func (a adminSandboxes) Diff(ctx context.Context, name string, o adminapi.DiffOptions) (adminapi.Diff, error) {
	m, err := a.manager(ctx)
	if err != nil {
		return adminapi.Diff{}, err
	}
	var only *rewrite.Table
	if o.Table != "" {
		db, table, ok := o.TableName()
		if !ok {
			return adminapi.Diff{}, fmt.Errorf("%w: table: %q is not db.table", adminapi.ErrBadRequest, o.Table)
		}
		only = &rewrite.Table{DB: db, Name: table}
	}
	r, err := m.Operator().DiffRows(ctx, name, o.Summary, only, o.RowsPerTable)
	if err != nil {
		return adminapi.Diff{}, apiError(err)
	}
	if o.Summary {
		s, err := apiDiffSummary(r)
		return adminapi.Diff{Summary: s}, err
	}
	return adminapi.Diff{Changes: apiDiffChanges(r)}, nil
}

// Export implements adminapi.Sandboxes.
func (a adminSandboxes) Export(ctx context.Context, name string) (string, error) {
	return managed(ctx, a, func(o *operator.Operator) (string, error) {
		stmts, err := o.Export(ctx, name)
		return adminapi.ExportText(stmts), err
	})
}

// managed is what f answers on the manager's operator, an error of f's marked for the
// admin API (apiError); a manager that cannot start answers its own error.
func managed[T any](ctx context.Context, a adminSandboxes, f func(*operator.Operator) (T, error)) (T, error) {
	var zero T
	m, err := a.manager(ctx)
	if err != nil {
		return zero, err
	}
	v, err := f(m.Operator())
	if err != nil {
		return zero, apiError(err)
	}
	return v, nil
}

// apiError marks the manager's errors the admin API answers with their own
// status: a missing sandbox (404), a TTL beyond max-sandbox-ttl, an
// unknown strategy or promote options that do not hold, a bad name or owner
// of a sandbox to create (400), a promote the proxy may not do (403) and a
// refusal as things stand, such as a promote's conflicts or a name taken (409).
func apiError(err error) error {
	switch {
	case errors.Is(err, operator.ErrNoSandbox):
		return fmt.Errorf("%w: %w", adminapi.ErrNotFound, err)
	case errors.Is(err, operator.ErrTTL), errors.Is(err, operator.ErrStrategy), errors.Is(err, operator.ErrOptions),
		errors.Is(err, operator.ErrBadName):
		return fmt.Errorf("%w: %w", adminapi.ErrBadRequest, err)
	case errors.Is(err, operator.ErrForbidden):
		return fmt.Errorf("%w: %w", adminapi.ErrForbidden, err)
	case errors.Is(err, operator.ErrRefused), errors.Is(err, operator.ErrExists):
		return fmt.Errorf("%w: %w", adminapi.ErrConflict, err)
	}
	return err
}

// replyRow is one row of a reply, read by column name.
type replyRow struct {
	idx map[string]int
	row []*string
}

// rowsOf are r's rows, read by column name.
func rowsOf(r *session.Reply) []replyRow {
	idx := make(map[string]int, len(r.Columns))
	for i, c := range r.Columns {
		idx[c] = i
	}
	out := make([]replyRow, 0, len(r.Rows))
	for _, row := range r.Rows {
		out = append(out, replyRow{idx: idx, row: row})
	}
	return out
}

// value is column c (nil for NULL, or a column the reply lacks).
func (r replyRow) value(c string) *string {
	if i, ok := r.idx[c]; ok && i < len(r.row) {
		return r.row[i]
	}
	return nil
}

// text is column c ("" for NULL).
func (r replyRow) text(c string) string {
	if v := r.value(c); v != nil {
		return *v
	}
	return ""
}

// number is column c as an integer (NULL is 0).
func (r replyRow) number(c string) (int64, error) {
	n, err := strconv.ParseInt(cmp.Or(r.text(c), "0"), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("diff of %s: %s: %w", r.text("table_name"), c, err)
	}
	return n, nil
}

// apiDiffSummary is the rows of SANDBOX DIFF SUMMARY's reply r as the admin
// API shows them.
func apiDiffSummary(r *session.Reply) ([]adminapi.DiffTable, error) {
	var out []adminapi.DiffTable
	for _, row := range rowsOf(r) {
		t := adminapi.DiffTable{Table: row.text("table_name"), Change: row.text("change"),
			KeyKind: row.text("key_kind"), Method: row.text("method"), Note: row.text("note")}
		for _, f := range []struct {
			col string
			n   *int64
		}{{"rows_inserted", &t.Inserted}, {"rows_updated", &t.Updated}, {"rows_deleted", &t.Deleted}, {"conflicts", &t.Conflicts}} {
			v, err := row.number(f.col)
			if err != nil {
				return nil, err
			}
			*f.n = v
		}
		out = append(out, t)
	}
	return out, nil
}

// apiDiffChanges is the rows of SANDBOX DIFF's reply r as the admin API
// shows them: the JSON columns embedded, a DDL statement as a JSON string.
func apiDiffChanges(r *session.Reply) []adminapi.DiffChange {
	var out []adminapi.DiffChange
	for _, row := range rowsOf(r) {
		ch := adminapi.DiffChange{Table: row.text("table_name"), Op: row.text("op"),
			Key: rawJSON(row.value("key")), Before: rawJSON(row.value("before")), After: rawJSON(row.value("after")),
			Production: rawJSON(row.value("production"))}
		if ch.Op == "ddl" {
			ch.After = jsonString(row.value("after"))
		}
		out = append(out, ch)
	}
	return out
}

// rawJSON embeds JSON text v: nil (null) for NULL; text that is not valid
// JSON in UTF-8 goes in as a JSON string (the encoder would fail on it,
// cutting the answer short).
func rawJSON(v *string) json.RawMessage {
	if v == nil {
		return nil
	}
	if utf8.ValidString(*v) && json.Valid([]byte(*v)) {
		return json.RawMessage(*v)
	}
	return jsonString(v)
}

// jsonString is v as a JSON string (nil: null).
func jsonString(v *string) json.RawMessage {
	if v == nil {
		return nil
	}
	b, _ := json.Marshal(*v) // a string always marshals
	return b
}

// apiSandbox is in as the admin API shows it.
func apiSandbox(in session.Info) adminapi.Sandbox {
	out := adminapi.Sandbox{ID: in.ID, Name: in.Name, State: in.State, Owner: in.Owner, Created: in.Created,
		Connections: in.Connections, TableCount: in.TableCount, Bytes: in.Bytes, Changes: in.Changes}
	if in.Promoted != nil {
		p := *in.Promoted
		out.Promoted = &p
	}
	if in.Expires != nil {
		e := *in.Expires
		out.Expires = &e
	}
	for _, t := range in.Tables {
		at := adminapi.Table{Table: t.Table, State: t.State, Rows: t.Rows, Bytes: t.Bytes}
		if f := t.Fill; f != nil {
			at.Fill = &adminapi.Fill{Copied: f.Copied, Total: f.Total, Started: f.Started, Error: f.Error, CopiedUp: f.CopiedUp, Waiting: f.Waiting,
				BuildingKeys: f.BuildingKeys}
		}
		out.Tables = append(out.Tables, at)
	}
	return out
}
