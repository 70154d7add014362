package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/sandbox/operator"
	"github.com/sqlfork/sqlfork-proxy/sandbox/review"
	"github.com/sqlfork/sqlfork-proxy/session"
)

// TestAPISandboxKeepsTheWireFormat: the admin API's JSON of a sandbox is,
// byte for byte, what it was when the API answered with session.Info
// itself, so no field is lost in the conversion.
func TestAPISandboxKeepsTheWireFormat(t *testing.T) {
	created := time.Date(2026, 11, 24, 10, 0, 0, 123456789, time.UTC)
	expires := created.Add(48 * time.Hour)
	tests := []struct {
		name string
		in   session.Info
	}{
		{"every field", session.Info{ID: "1a2b3c4d", Name: "box", State: "kept", Owner: "sbx", Created: created, Expires: &expires,
			Connections: 2, TableCount: 2, Bytes: 32768, Tables: []session.TableInfo{
				{Table: "app.orders", State: "schema"}, {Table: "app.users", State: "fork", Rows: 3, Bytes: 16384}}}},
		{"no expiry, no tables", session.Info{ID: "5e6f7a8b", Name: "other", State: "active", Owner: "app", Created: created}},
		{"no tables but a count (a list entry)", session.Info{ID: "5e6f7a8b", Name: "x", State: "active", Created: created, TableCount: 4, Bytes: 1}},
		{"zero", session.Info{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want, err := json.MarshalIndent(tc.in, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.MarshalIndent(apiSandbox(tc.in), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("admin API JSON:\n%s\nsession.Info JSON:\n%s", got, want)
			}
		})
	}
	// The conversion copies the expiry: the API's value does not alias the
	// manager's.
	in := session.Info{Expires: &expires}
	out := apiSandbox(in)
	*out.Expires = out.Expires.Add(time.Hour)
	if !in.Expires.Equal(expires) {
		t.Error("apiSandbox aliases Expires")
	}
}

// TestAPIError: the manager's errors get the admin API's status, their
// text and chain kept.
func TestAPIError(t *testing.T) {
	other := errors.New("registry unreachable")
	tests := []struct {
		name     string
		err      error
		want     string
		sentinel error
	}{
		{"missing", fmt.Errorf("%w: %q", operator.ErrNoSandbox, "x"), `not found: no such sandbox: "x"`, adminapi.ErrNotFound},
		{"ttl", fmt.Errorf("%w: a kept sandbox may live at most 720h0m0s", operator.ErrTTL),
			"bad request: TTL beyond max-sandbox-ttl: a kept sandbox may live at most 720h0m0s", adminapi.ErrBadRequest},
		{"strategy", fmt.Errorf("%w: %q (FAIL, OURS or THEIRS)", operator.ErrStrategy, "MINE"),
			`bad request: unknown PROMOTE strategy: "MINE" (FAIL, OURS or THEIRS)`, adminapi.ErrBadRequest},
		{"options", fmt.Errorf("%w: DRY RUN and MATCHING exclude each other", operator.ErrOptions),
			"bad request: bad PROMOTE options: DRY RUN and MATCHING exclude each other", adminapi.ErrBadRequest},
		{"no promote account", fmt.Errorf("%w: SANDBOX PROMOTE needs a promote account", operator.ErrForbidden),
			"forbidden: not allowed: SANDBOX PROMOTE needs a promote account", adminapi.ErrForbidden},
		{"conflicts", fmt.Errorf("%w: PROMOTE refused: 2 rows changed", operator.ErrRefused),
			"conflict: refused: PROMOTE refused: 2 rows changed", adminapi.ErrConflict},
		{"name taken", fmt.Errorf("%w: a sandbox named %q already exists", operator.ErrExists, "fix"),
			`conflict: sandbox exists: a sandbox named "fix" already exists`, adminapi.ErrConflict},
		{"bad name", fmt.Errorf("%w: the owner must be named", operator.ErrBadName),
			"bad request: bad sandbox name or owner: the owner must be named", adminapi.ErrBadRequest},
		{"other", other, "registry unreachable", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			testkit.WantMarked(t, apiError(tc.err), tc.err, tc.want,
				[]error{adminapi.ErrNotFound, adminapi.ErrBadRequest, adminapi.ErrForbidden, adminapi.ErrConflict}, tc.sentinel)
		})
	}
	if apiError(nil) != nil {
		t.Error("apiError(nil) != nil")
	}
}

// TestAPIDiff: SANDBOX DIFF's replies as the admin API shows them: counts
// as numbers, JSON columns embedded (null for NULL), a DDL statement as a
// JSON string, text that is not JSON as a string.
func TestAPIDiff(t *testing.T) {
	sp := func(s string) *string { return &s }
	summary := &session.Reply{Columns: review.DiffSummaryColumns, Rows: [][]*string{
		{sp("app.t"), sp("forked"), sp("3"), sp("2"), sp("1"), sp("1"), sp("primary"), sp("capture"), nil},
		{sp("app.k"), sp("forked"), sp("0"), sp("0"), sp("12"), sp("0"), sp("row"), sp("compare"), sp("no key")},
	}}
	got, err := apiDiffSummary(summary)
	want := []adminapi.DiffTable{
		{Table: "app.t", Change: "forked", Inserted: 3, Updated: 2, Deleted: 1, Conflicts: 1, KeyKind: "primary", Method: "capture"},
		{Table: "app.k", Change: "forked", Deleted: 12, KeyKind: "row", Method: "compare", Note: "no key"},
	}
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("apiDiffSummary = %+v, %v; want %+v", got, err, want)
	}
	summary.Rows[0][2] = sp("many")
	if _, err := apiDiffSummary(summary); err == nil || err.Error() != `diff of app.t: rows_inserted: strconv.ParseInt: parsing "many": invalid syntax` {
		t.Errorf("apiDiffSummary of a count that is not a number: %v", err)
	}

	detail := &session.Reply{Columns: review.DiffColumns, Rows: [][]*string{
		{sp("app.t"), sp("ddl"), nil, nil, sp("ALTER TABLE `app`.`t` ADD `c` int"), nil},
		{sp("app.t"), sp("update"), sp(`{"id": 1}`), sp(`{"id": 1, "a": "x"}`), sp(`{"id": 1, "a": "y"}`), nil},
		{sp("app.t"), sp("conflict"), sp(`{"id": 2}`), sp(`{"id": 2, "a": 1.50}`), nil, sp(`{"id": 2, "a": 2}`)},
		{sp("app.t"), sp("insert"), sp("not json"), nil, sp("{\"a\": \"\xff\"}"), nil},
	}}
	b, err := json.Marshal(apiDiffChanges(detail))
	wantJSON := `[{"table":"app.t","op":"ddl","key":null,"before":null,"after":"ALTER TABLE ` + "`app`.`t`" + ` ADD ` + "`c`" + ` int","production":null},` +
		`{"table":"app.t","op":"update","key":{"id":1},"before":{"id":1,"a":"x"},"after":{"id":1,"a":"y"},"production":null},` +
		`{"table":"app.t","op":"conflict","key":{"id":2},"before":{"id":2,"a":1.50},"after":null,"production":{"id":2,"a":2}},` +
		`{"table":"app.t","op":"insert","key":"not json","before":null,"after":"{\"a\": \"\ufffd\"}","production":null}]`
	if err != nil || string(b) != wantJSON {
		t.Errorf("apiDiffChanges JSON:\n%s (%v)\nwant:\n%s", b, err, wantJSON)
	}
	if got := apiDiffChanges(&session.Reply{Columns: review.DiffColumns}); got != nil {
		t.Errorf("apiDiffChanges of no rows = %#v, want nil (the handler answers [])", got)
	}
}
