package adminapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// fakeSandboxes holds sandboxes by name and records the changes asked of
// it. Like the proxy with max-sandbox-ttl 720h, it refuses a keep beyond
// 720h or until discarded (ttl 0).
type fakeSandboxes struct {
	boxes   []Sandbox
	changes []string
}

func newFake() *fakeSandboxes {
	created := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	expires := created.Add(2 * time.Hour)
	promoted := created.Add(time.Hour)
	return &fakeSandboxes{boxes: []Sandbox{
		{ID: "1a2b3c4d", Name: "box", State: "kept", Owner: "sbx", Created: created, Expires: &expires,
			Connections: 1, TableCount: 2, Bytes: 32768, Changes: "unpromoted", Promoted: &promoted},
		{ID: "5e6f7a8b", Name: "other", State: "active", Owner: "app", Created: created, Changes: "none"},
	}}
}

// errBroken is what the fake answers for the sandbox "broken".
var errBroken = errors.New("upstream 127.0.0.1:3306 unreachable")

func (f *fakeSandboxes) find(name string) (Sandbox, error) {
	if name == "broken" {
		return Sandbox{}, errBroken
	}
	for _, b := range f.boxes {
		if b.Name == name {
			b.Tables = []Table{{Table: "app.orders", State: "schema"}, {Table: "app.users", State: "fork", Rows: 3, Bytes: 16384}}
			return b, nil
		}
	}
	return Sandbox{}, fmt.Errorf("%w: no such sandbox: %q", ErrNotFound, name)
}

func (f *fakeSandboxes) List(context.Context) ([]Sandbox, error) { return f.boxes, nil }

func (f *fakeSandboxes) Show(_ context.Context, name string) (Sandbox, error) { return f.find(name) }

func (f *fakeSandboxes) Keep(_ context.Context, name string, keep *time.Duration) (Sandbox, error) {
	b, err := f.find(name)
	if err != nil {
		return Sandbox{}, err
	}
	ttl := 24 * time.Hour // its sandbox-ttl
	if keep != nil {
		ttl = *keep
	}
	if ttl == 0 || ttl > 720*time.Hour {
		return Sandbox{}, fmt.Errorf("%w: a kept sandbox may live at most 720h", ErrBadRequest)
	}
	f.changes = append(f.changes, "keep "+name+" "+ttl.String())
	e := b.Created.Add(ttl)
	b.State, b.Expires = "kept", &e
	return b, nil
}

func (f *fakeSandboxes) Discard(_ context.Context, name string) error {
	if _, err := f.find(name); err != nil {
		return err
	}
	f.changes = append(f.changes, "discard "+name)
	return nil
}

// fakeSummary and fakeChanges are the diff of "box" (of any sandbox the
// fake has).
var (
	fakeSummary = []DiffTable{
		{Table: "app.orders", Change: "altered", KeyKind: "primary", Method: "compare", Note: "the sandbox altered it"},
		{Table: "app.users", Change: "forked", Inserted: 1, Updated: 1, Conflicts: 1, KeyKind: "primary", Method: "capture"},
	}
	fakeChanges = []DiffChange{
		{Table: "app.orders", Op: "ddl", After: json.RawMessage(`"ALTER TABLE app.orders ADD note TEXT"`)},
		{Table: "app.users", Op: "conflict", Key: json.RawMessage(`{"id": 1}`), Before: json.RawMessage(`{"id": 1, "score": 5}`),
			After: json.RawMessage(`{"id": 1, "score": 0}`), Production: json.RawMessage(`{"id": 1, "score": 7}`)},
		{Table: "app.users", Op: "insert", Key: json.RawMessage(`{"id": 4}`), After: json.RawMessage(`{"id": 4, "score": 1}`)},
	}
	fakeExport = []string{"SET NAMES utf8mb4", "-- app.orders was compared whole with production",
		"ALTER TABLE `app`.`orders` ADD COLUMN `note` text", "INSERT INTO `app`.`users` (`id`, `score`) VALUES (4, 1)"}
)

// Diff answers fakeSummary or fakeChanges, those of o.Table alone if set.
func (f *fakeSandboxes) Diff(_ context.Context, name string, o DiffOptions) (Diff, error) {
	if _, err := f.find(name); err != nil {
		return Diff{}, err
	}
	var d Diff
	for _, t := range fakeSummary {
		if o.Summary && (o.Table == "" || o.Table == t.Table) {
			d.Summary = append(d.Summary, t)
		}
	}
	for _, c := range fakeChanges {
		if !o.Summary && (o.Table == "" || o.Table == c.Table) {
			d.Changes = append(d.Changes, c)
		}
	}
	return d, nil
}

// Export answers fakeExport.
func (f *fakeSandboxes) Export(_ context.Context, name string) (string, error) {
	if _, err := f.find(name); err != nil {
		return "", err
	}
	return ExportText(fakeExport), nil
}

// fakeDigest is the digest of the fake's plan, fakePlan; fakeDryRunInfo
// its message.
const (
	fakeDigest     = "sha256:abababababababababababababababababababababababababababababababab"
	fakeDryRunInfo = "dry run: PROMOTE STRATEGY OURS of sandbox box would apply 2 statements (1 conflicts resolved); nothing was applied"
)

// fakePlan is the plan of a dry run of the fake's.
var fakePlan = []PlanStep{
	{Step: "conflict", Statement: `app.users {"id": 1}: score`},
	{Step: "ddl", Statement: "ALTER TABLE `app`.`orders` ADD COLUMN `note` text"},
	{Step: "rows", Statement: "UPDATE `app`.`users` SET `score` = 0 WHERE `id` = 1"},
}

// Promote promotes "box" with ours or theirs; with fail, it has conflicts.
// A dry run (of any strategy) answers fakePlan; a plan other than
// fakeDigest is refused. For "other" it has no promote account. What it
// promotes, or plans, is recorded with the options asked.
func (f *fakeSandboxes) Promote(_ context.Context, name string, o PromoteOptions) (Promoted, error) {
	if _, err := f.find(name); err != nil {
		return Promoted{}, err
	}
	switch {
	case name == "other":
		return Promoted{}, fmt.Errorf("%w: SANDBOX PROMOTE needs a promote account", ErrForbidden)
	case o.DryRun:
		f.changes = append(f.changes, "dry run "+name+" "+o.Strategy+asked(o))
		return Promoted{Sandbox: name, Strategy: o.Strategy, Outcome: OutcomeDryRun, Info: fakeDryRunInfo, DryRun: true,
			Plan: fakePlan, Digest: fakeDigest}, nil
	case o.Matching != "" && o.Matching != fakeDigest:
		return Promoted{}, fmt.Errorf("%w: PROMOTE refused: its plan is now %s, not the %s that was reviewed", ErrConflict, fakeDigest, o.Matching)
	case o.Strategy == StrategyFail:
		return Promoted{}, fmt.Errorf("%w: PROMOTE refused: 1 rows changed in production since the fork and differently in the sandbox: app.users {\"id\": 1}", ErrConflict)
	}
	f.changes = append(f.changes, "promote "+name+" "+o.Strategy+asked(o))
	return Promoted{Sandbox: name, Strategy: o.Strategy, Outcome: "committed", Rows: 2,
		Info: "promoted sandbox " + name + ": 1 rows inserted, 1 updated, 0 deleted in 1 tables"}, nil
}

// asked is what o asks besides a strategy and a dry run ("" for nothing).
func asked(o PromoteOptions) string {
	var b strings.Builder
	if len(o.Tables) > 0 {
		b.WriteString(" for " + strings.Join(o.Tables, ","))
	}
	if len(o.Overwrite) > 0 {
		b.WriteString(" overwrite " + strings.Join(o.Overwrite, ","))
	}
	if o.Matching != "" {
		b.WriteString(" matching " + o.Matching)
	}
	return b.String()
}

// The answers of the fake, as the wire format has them (session.Info's
// JSON before the admin API had types of its own).
const (
	// boxJSON is "box" without its tables, boxTablesAt where show has
	// them.
	boxJSON = `{
  "id": "1a2b3c4d",
  "name": "box",
  "state": "kept",
  "owner": "sbx",
  "created": "2026-11-24T10:00:00Z",
  "expires": "2026-11-24T12:00:00Z",
  "connections": 1,
  "table_count": 2,
  "bytes": 32768,
  "changes": "unpromoted",
  "promoted": "2026-11-24T11:00:00Z"
}`
	boxTablesAt = `  "table_count"`
	otherJSON   = `{
  "id": "5e6f7a8b",
  "name": "other",
  "state": "active",
  "owner": "app",
  "created": "2026-11-24T10:00:00Z",
  "connections": 0,
  "table_count": 0,
  "bytes": 0,
  "changes": "none"
}`
	tablesJSON = `  "tables": [
    {
      "table": "app.orders",
      "state": "schema",
      "rows": 0,
      "bytes": 0
    },
    {
      "table": "app.users",
      "state": "fork",
      "rows": 3,
      "bytes": 16384
    }
  ],
`
	discardJSON = "{\n  \"discarded\": \"box\"\n}\n"
)

var (
	// listJSON lists box and other, each indented as an element.
	listJSON = "[\n  " + strings.ReplaceAll(boxJSON, "\n", "\n  ") + ",\n  " + strings.ReplaceAll(otherJSON, "\n", "\n  ") + "\n]\n"
	// showJSON is box with its tables.
	showJSON = strings.Replace(boxJSON, boxTablesAt, tablesJSON+boxTablesAt, 1) + "\n"
)

// keptJSON is the answer to keeping "box" for ttl.
func keptJSON(ttl time.Duration) string {
	return strings.Replace(showJSON, "2026-11-24T12:00:00Z",
		time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC).Add(ttl).Format(time.RFC3339), 1)
}

func errorJSON(msg string) string {
	return "{\n  \"error\": \"" + strings.ReplaceAll(msg, `"`, `\"`) + "\"\n}\n"
}

// TestHandler: bearer-token auth, the tokenless read-only rule, status
// codes and the exact JSON of every answer.
func TestHandler(t *testing.T) {
	const (
		readOnly = "keeping and discarding sandboxes needs admin-token " +
			"(or admin-tokenless-changes on a host whose local processes are all trusted)"
		badToken = "missing or wrong bearer token"
		badTTL   = `bad request: ttl: bad duration "soon": use forms like 500ms, 90s, 30m, 2h, 1h30m, 7d or a number of seconds`
		tooLong  = "bad request: a kept sandbox may live at most 720h"
	)
	tokenless, tokenlessChanges, withToken := Options{}, Options{TokenlessChanges: true}, Options{Token: "s3cret"}
	const jsonType = "application/json"
	tests := []apiCase{
		// Without a token the API reads, and changes nothing...
		{"tokenless list", tokenless, "GET", "/api/v1/sandboxes", "", 200, jsonType, listJSON, ""},
		{"tokenless show", tokenless, "GET", "/api/v1/sandboxes/box", "", 200, jsonType, showJSON, ""},
		{"tokenless keep", tokenless, "POST", "/api/v1/sandboxes/box/keep?ttl=1000000h", "", 403, jsonType, errorJSON(readOnly), ""},
		{"tokenless keep, bad ttl", tokenless, "POST", "/api/v1/sandboxes/box/keep?ttl=soon", "", 403, jsonType, errorJSON(readOnly), ""},
		{"tokenless discard", tokenless, "DELETE", "/api/v1/sandboxes/box", "", 403, jsonType, errorJSON(readOnly), ""},
		{"tokenless discard of a missing one", tokenless, "DELETE", "/api/v1/sandboxes/nosuch", "", 403, jsonType, errorJSON(readOnly), ""},
		{"tokenless ignores a bearer", tokenless, "DELETE", "/api/v1/sandboxes/box", "Bearer s3cret", 403, jsonType, errorJSON(readOnly), ""},
		// ...unless admin-tokenless-changes.
		{"tokenless keep allowed", tokenlessChanges, "POST", "/api/v1/sandboxes/box/keep?ttl=2h", "", 200, jsonType, keptJSON(2 * time.Hour), "keep box 2h0m0s"},
		{"tokenless discard allowed", tokenlessChanges, "DELETE", "/api/v1/sandboxes/box", "", 200, jsonType, discardJSON, "discard box"},
		// With a token, every request needs it.
		{"token missing", withToken, "GET", "/api/v1/sandboxes", "", 401, jsonType, errorJSON(badToken), ""},
		{"token missing on show", withToken, "GET", "/api/v1/sandboxes/box", "", 401, jsonType, errorJSON(badToken), ""},
		{"token wrong", withToken, "POST", "/api/v1/sandboxes/box/keep", "Bearer nope", 401, jsonType, errorJSON(badToken), ""},
		{"token without Bearer", withToken, "GET", "/api/v1/sandboxes", "s3cret", 401, jsonType, errorJSON(badToken), ""},
		{"token as basic auth", withToken, "GET", "/api/v1/sandboxes", "Basic s3cret", 401, jsonType, errorJSON(badToken), ""},
		{"token prefix", withToken, "GET", "/api/v1/sandboxes", "Bearer s3cre", 401, jsonType, errorJSON(badToken), ""},
		{"token missing on discard", withToken, "DELETE", "/api/v1/sandboxes/box", "", 401, jsonType, errorJSON(badToken), ""},
		{"token missing, tokenless changes", Options{Token: "s3cret", TokenlessChanges: true}, "DELETE", "/api/v1/sandboxes/box", "", 401, jsonType, errorJSON(badToken), ""},
		{"token list", withToken, "GET", "/api/v1/sandboxes", "Bearer s3cret", 200, jsonType, listJSON, ""},
		{"scheme in lower case", withToken, "GET", "/api/v1/sandboxes", "bearer s3cret", 200, jsonType, listJSON, ""},
		{"scheme in any case, spaces", withToken, "GET", "/api/v1/sandboxes", "BeArEr   s3cret ", 200, jsonType, listJSON, ""},
		{"scheme alone", withToken, "GET", "/api/v1/sandboxes", "bearer ", 401, jsonType, errorJSON(badToken), ""},
		{"token show", withToken, "GET", "/api/v1/sandboxes/box", "Bearer s3cret", 200, jsonType, showJSON, ""},
		{"token keep", withToken, "POST", "/api/v1/sandboxes/box/keep?ttl=3h", "Bearer s3cret", 200, jsonType, keptJSON(3 * time.Hour), "keep box 3h0m0s"},
		{"token discard", withToken, "DELETE", "/api/v1/sandboxes/box", "Bearer s3cret", 200, jsonType, discardJSON, "discard box"},
		// The ttl is read as SANDBOX KEEP TTL reads it.
		{"ttl in days", withToken, "POST", "/api/v1/sandboxes/box/keep?ttl=7d", "Bearer s3cret", 200, jsonType, keptJSON(7 * 24 * time.Hour), "keep box 168h0m0s"},
		{"ttl in seconds", withToken, "POST", "/api/v1/sandboxes/box/keep?ttl=90", "Bearer s3cret", 200, jsonType, keptJSON(90 * time.Second), "keep box 1m30s"},
		{"ttl that does not parse", withToken, "POST", "/api/v1/sandboxes/box/keep?ttl=soon", "Bearer s3cret", 400, jsonType, errorJSON(badTTL), ""},
		{"negative ttl", withToken, "POST", "/api/v1/sandboxes/box/keep?ttl=-1h", "Bearer s3cret", 400, jsonType,
			errorJSON(`bad request: ttl: bad duration "-1h": use forms like 500ms, 90s, 30m, 2h, 1h30m, 7d or a number of seconds`), ""},
		{"ttl beyond the bound", withToken, "POST", "/api/v1/sandboxes/box/keep?ttl=1000000h", "Bearer s3cret", 400, jsonType, errorJSON(tooLong), ""},
		{"ttl 0 is until discarded", withToken, "POST", "/api/v1/sandboxes/box/keep?ttl=0", "Bearer s3cret", 400, jsonType, errorJSON(tooLong), ""},
		{"no ttl is sandbox-ttl", withToken, "POST", "/api/v1/sandboxes/box/keep", "Bearer s3cret", 200, jsonType, keptJSON(24 * time.Hour), "keep box 24h0m0s"},
		// Errors of Sandboxes.
		{"show missing", withToken, "GET", "/api/v1/sandboxes/nosuch", "Bearer s3cret", 404, jsonType, errorJSON(`not found: no such sandbox: "nosuch"`), ""},
		{"keep missing", withToken, "POST", "/api/v1/sandboxes/nosuch/keep?ttl=1h", "Bearer s3cret", 404, jsonType, errorJSON(`not found: no such sandbox: "nosuch"`), ""},
		{"discard missing", withToken, "DELETE", "/api/v1/sandboxes/nosuch", "Bearer s3cret", 404, jsonType, errorJSON(`not found: no such sandbox: "nosuch"`), ""},
		{"show failing", withToken, "GET", "/api/v1/sandboxes/broken", "Bearer s3cret", 500, jsonType, errorJSON(errBroken.Error()), ""},
		{"discard failing", withToken, "DELETE", "/api/v1/sandboxes/broken", "Bearer s3cret", 500, jsonType, errorJSON(errBroken.Error()), ""},
	}
	for _, tt := range tests {
		tt.run(t)
	}
}

// apiCase is one request to the handler and the answer it must get.
type apiCase struct {
	name       string
	opts       Options
	method     string
	path       string
	auth       string // Authorization header
	wantStatus int
	wantType   string
	wantBody   string
	wantChange string // "" for none
}

// run sends the request to a handler on a fresh fake and checks the
// status, the exact body, its type, the challenge a 401 carries (and only
// a 401) and the changes the fake was asked to make.
func (tt apiCase) run(t *testing.T) {
	t.Run(tt.name, func(t *testing.T) {
		f := newFake()
		tt.opts.Sandboxes = f
		req := httptest.NewRequest(tt.method, tt.path, nil)
		if tt.auth != "" {
			req.Header.Set("Authorization", tt.auth)
		}
		rec := httptest.NewRecorder()
		NewHandler(tt.opts).ServeHTTP(rec, req)
		if rec.Code != tt.wantStatus {
			t.Errorf("HTTP %d, want %d: %s", rec.Code, tt.wantStatus, rec.Body)
		}
		if got := rec.Body.String(); got != tt.wantBody {
			t.Errorf("body:\n%s\nwant:\n%s", got, tt.wantBody)
		}
		if ct := rec.Header().Get("Content-Type"); ct != tt.wantType {
			t.Errorf("Content-Type %q, want %q", ct, tt.wantType)
		}
		wantAuth := ""
		if rec.Code == http.StatusUnauthorized {
			wantAuth = `Bearer realm="sqlfork-proxy"`
		}
		if got := rec.Header().Get("WWW-Authenticate"); got != wantAuth {
			t.Errorf("WWW-Authenticate %q, want %q", got, wantAuth)
		}
		if got := strings.Join(f.changes, "; "); got != tt.wantChange {
			t.Errorf("changes made: %q, want %q", got, tt.wantChange)
		}
	})
}

// emptySandboxes has none, and says so with a nil slice.
type emptySandboxes struct{ *fakeSandboxes }

func (emptySandboxes) List(context.Context) ([]Sandbox, error) { return nil, nil }

// TestHandlerEmptyList: no sandboxes is [], not null.
func TestHandlerEmptyList(t *testing.T) {
	rec := httptest.NewRecorder()
	NewHandler(Options{Sandboxes: emptySandboxes{newFake()}}).ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/sandboxes", nil))
	if rec.Code != 200 || rec.Body.String() != "[]\n" {
		t.Errorf("HTTP %d %q, want 200 \"[]\\n\"", rec.Code, rec.Body)
	}
}

// TestHandlerRoutes: only the API's routes are served; other methods get
// 405 and other paths 404, as from any mux.
func TestHandlerRoutes(t *testing.T) {
	for want, requests := range map[int][]string{
		405: {"PUT /api/v1/sandboxes/box", "PUT /api/v1/sandboxes", "GET /api/v1/sandboxes/box/keep", "DELETE /api/v1/sandboxes",
			"POST /api/v1/proxy",
			"GET /api/v1/sandboxes/box/promote", "POST /api/v1/sandboxes/box/diff", "DELETE /api/v1/sandboxes/box/export",
			"PUT /api/v1/sandboxes/box/promote"},
		404: {"GET /api/v1/sandboxes/", "GET /api/v1/sandboxes/box/tables", "GET /api/v2/sandboxes", "GET /metrics"},
		200: {"HEAD /api/v1/sandboxes", "GET /api/v1/proxy"},
	} {
		for _, request := range requests {
			t.Run(request, func(t *testing.T) {
				method, path, _ := strings.Cut(request, " ")
				f := newFake()
				rec := httptest.NewRecorder()
				NewHandler(Options{Sandboxes: f, TokenlessChanges: true}).ServeHTTP(rec, httptest.NewRequest(method, path, nil))
				if rec.Code != want {
					t.Errorf("HTTP %d, want %d", rec.Code, want)
				}
				if len(f.changes) > 0 {
					t.Errorf("changes made: %v", f.changes)
				}
			})
		}
	}
}

// TestRegister: Register adds the routes to a mux that serves others.
func TestRegister(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	Register(mux, Options{Sandboxes: newFake()})
	for path, want := range map[string]string{"/healthz": "ok", "/api/v1/sandboxes": listJSON} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != 200 || rec.Body.String() != want {
			t.Errorf("GET %s: HTTP %d %q", path, rec.Code, rec.Body)
		}
	}
}

// The answers of the fake's diff, export and promote.
const (
	summaryJSON = `[
  {
    "table_name": "app.orders",
    "change": "altered",
    "rows_inserted": 0,
    "rows_updated": 0,
    "rows_deleted": 0,
    "conflicts": 0,
    "key_kind": "primary",
    "method": "compare",
    "note": "the sandbox altered it"
  },
  {
    "table_name": "app.users",
    "change": "forked",
    "rows_inserted": 1,
    "rows_updated": 1,
    "rows_deleted": 0,
    "conflicts": 1,
    "key_kind": "primary",
    "method": "capture",
    "note": ""
  }
]
`
	ddlJSON = `  {
    "table": "app.orders",
    "op": "ddl",
    "key": null,
    "before": null,
    "after": "ALTER TABLE app.orders ADD note TEXT",
    "production": null
  }`
	changesJSON = "[\n" + ddlJSON + `,
  {
    "table": "app.users",
    "op": "conflict",
    "key": {
      "id": 1
    },
    "before": {
      "id": 1,
      "score": 5
    },
    "after": {
      "id": 1,
      "score": 0
    },
    "production": {
      "id": 1,
      "score": 7
    }
  },
  {
    "table": "app.users",
    "op": "insert",
    "key": {
      "id": 4
    },
    "before": null,
    "after": {
      "id": 4,
      "score": 1
    },
    "production": null
  }
]
`
	exportText = "SET NAMES utf8mb4;\n-- app.orders was compared whole with production\n" +
		"ALTER TABLE `app`.`orders` ADD COLUMN `note` text;\nINSERT INTO `app`.`users` (`id`, `score`) VALUES (4, 1);\n"
	promotedJSON = `{
  "sandbox": "box",
  "strategy": "ours",
  "outcome": "committed",
  "info": "promoted sandbox box: 1 rows inserted, 1 updated, 0 deleted in 1 tables",
  "rows": 2
}
`
	dryRunJSON = `{
  "sandbox": "box",
  "strategy": "ours",
  "outcome": "dry run",
  "info": "` + fakeDryRunInfo + `",
  "rows": 0,
  "dry_run": true,
  "plan": [
    {
      "step": "conflict",
      "statement": "app.users {\"id\": 1}: score"
    },
    {
      "step": "ddl",
      "statement": "ALTER TABLE ` + "`app`.`orders`" + ` ADD COLUMN ` + "`note`" + ` text"
    },
    {
      "step": "rows",
      "statement": "UPDATE ` + "`app`.`users`" + ` SET ` + "`score`" + ` = 0 WHERE ` + "`id`" + ` = 1"
    }
  ],
  "digest": "` + fakeDigest + `"
}
`
)

// TestHandlerDiffExportPromote: diff and export read as show does; promote
// needs the token whatever TokenlessChanges says; the parameters, the
// statuses and the exact answers.
func TestHandlerDiffExportPromote(t *testing.T) {
	const (
		tokenOnly     = "promoting a sandbox writes production: it needs admin-token (admin-tokenless-changes does not cover it)"
		rowsNeedToken = "a sandbox's diff and export show rows, production's too: they need admin-token " +
			"(or admin-tokenless-changes on a host whose local processes are all trusted)"
		badToken  = "missing or wrong bearer token"
		conflicts = `conflict: PROMOTE refused: 1 rows changed in production since the fork and differently in the sandbox: app.users {"id": 1}`
		missing   = `not found: no such sandbox: "nosuch"`
	)
	const (
		jsonType = "application/json"
		textType = "text/plain; charset=utf-8"
	)
	tokenless, tokenlessChanges, withToken := Options{}, Options{TokenlessChanges: true}, Options{Token: "s3cret"}
	bearer := "Bearer s3cret"
	tests := []apiCase{
		// Diff and export show rows: the token, or without one tokenless changes.
		{"tokenless diff", tokenless, "GET", "/api/v1/sandboxes/box/diff?summary=1", "", 403, jsonType, errorJSON(rowsNeedToken), ""},
		{"tokenless export", tokenless, "GET", "/api/v1/sandboxes/box/export", "", 403, jsonType, errorJSON(rowsNeedToken), ""},
		{"diff summary", tokenlessChanges, "GET", "/api/v1/sandboxes/box/diff?summary=1", "", 200, jsonType, summaryJSON, ""},
		{"diff summary=true", tokenlessChanges, "GET", "/api/v1/sandboxes/box/diff?summary=true", "", 200, jsonType, summaryJSON, ""},
		{"diff summary without a value", tokenlessChanges, "GET", "/api/v1/sandboxes/box/diff?summary", "", 200, jsonType, summaryJSON, ""},
		{"diff summary=0 is the detail", tokenlessChanges, "GET", "/api/v1/sandboxes/box/diff?summary=0", "", 200, jsonType, changesJSON, ""},
		{"diff detail", withToken, "GET", "/api/v1/sandboxes/box/diff", bearer, 200, jsonType, changesJSON, ""},
		{"diff of one table", withToken, "GET", "/api/v1/sandboxes/box/diff?table=app.orders", bearer, 200, jsonType, "[\n" + ddlJSON + "\n]\n", ""},
		{"diff summary of one table", withToken, "GET", "/api/v1/sandboxes/box/diff?summary=1&table=app.users", bearer, 200, jsonType,
			"[\n" + strings.SplitN(summaryJSON, "},\n", 2)[1], ""},
		{"diff of a table without changes", withToken, "GET", "/api/v1/sandboxes/box/diff?table=app.none", bearer, 200, jsonType, "[]\n", ""},
		{"diff summary without changes", withToken, "GET", "/api/v1/sandboxes/box/diff?summary=1&table=app.none", bearer, 200, jsonType, "[]\n", ""},
		{"diff of a table without its database", withToken, "GET", "/api/v1/sandboxes/box/diff?table=users", bearer, 400, jsonType,
			errorJSON(`bad request: table: "users" is not db.table`), ""},
		{"diff of a table without a name", withToken, "GET", "/api/v1/sandboxes/box/diff?table=app.", bearer, 400, jsonType,
			errorJSON(`bad request: table: "app." is not db.table`), ""},
		{"diff summary that does not parse", withToken, "GET", "/api/v1/sandboxes/box/diff?summary=maybe", bearer, 400, jsonType,
			errorJSON(`bad request: summary: "maybe" is not 1, 0, true or false`), ""},
		{"diff with rows=0", withToken, "GET", "/api/v1/sandboxes/box/diff?rows=0", bearer, 400, jsonType,
			errorJSON(`bad request: rows: "0" is not a count of rows above 0`), ""},
		{"diff with rows that do not parse", withToken, "GET", "/api/v1/sandboxes/box/diff?rows=ten", bearer, 400, jsonType,
			errorJSON(`bad request: rows: "ten" is not a count of rows above 0`), ""},
		{"diff without the token", withToken, "GET", "/api/v1/sandboxes/box/diff", "", 401, jsonType, errorJSON(badToken), ""},
		{"diff missing", withToken, "GET", "/api/v1/sandboxes/nosuch/diff", bearer, 404, jsonType, errorJSON(missing), ""},
		{"diff failing", withToken, "GET", "/api/v1/sandboxes/broken/diff?summary=1", bearer, 500, jsonType, errorJSON(errBroken.Error()), ""},
		{"export", tokenlessChanges, "GET", "/api/v1/sandboxes/box/export", "", 200, textType, exportText, ""},
		{"export with the token", withToken, "GET", "/api/v1/sandboxes/box/export", bearer, 200, textType, exportText, ""},
		{"export without the token", withToken, "GET", "/api/v1/sandboxes/box/export", "", 401, jsonType, errorJSON(badToken), ""},
		{"export missing", tokenlessChanges, "GET", "/api/v1/sandboxes/nosuch/export", "", 404, jsonType, errorJSON(missing), ""},
		{"export failing", tokenlessChanges, "GET", "/api/v1/sandboxes/broken/export", "", 500, jsonType, errorJSON(errBroken.Error()), ""},
		// Promote writes production: the token, always.
		{"tokenless promote", tokenless, "POST", "/api/v1/sandboxes/box/promote?strategy=ours", "", 403, jsonType, errorJSON(tokenOnly), ""},
		{"tokenless changes do not promote", tokenlessChanges, "POST", "/api/v1/sandboxes/box/promote?strategy=ours", "", 403, jsonType,
			errorJSON(tokenOnly), ""},
		{"tokenless promote ignores a bearer", tokenlessChanges, "POST", "/api/v1/sandboxes/box/promote?strategy=ours", bearer, 403, jsonType,
			errorJSON(tokenOnly), ""},
		{"tokenless promote of a missing one", tokenlessChanges, "POST", "/api/v1/sandboxes/nosuch/promote", "", 403, jsonType, errorJSON(tokenOnly), ""},
		{"promote without the token", withToken, "POST", "/api/v1/sandboxes/box/promote?strategy=ours", "", 401, jsonType, errorJSON(badToken), ""},
		{"promote with a wrong token", Options{Token: "s3cret", TokenlessChanges: true}, "POST", "/api/v1/sandboxes/box/promote?strategy=ours",
			"Bearer nope", 401, jsonType, errorJSON(badToken), ""},
		{"promote ours", withToken, "POST", "/api/v1/sandboxes/box/promote?strategy=ours", bearer, 200, jsonType, promotedJSON, "promote box ours"},
		{"promote OURS", withToken, "POST", "/api/v1/sandboxes/box/promote?strategy=OURS", bearer, 200, jsonType, promotedJSON, "promote box ours"},
		{"promote theirs", withToken, "POST", "/api/v1/sandboxes/box/promote?strategy=theirs", bearer, 200, jsonType,
			strings.Replace(promotedJSON, `"ours"`, `"theirs"`, 1), "promote box theirs"},
		{"promote with conflicts", withToken, "POST", "/api/v1/sandboxes/box/promote?strategy=fail", bearer, 409, jsonType, errorJSON(conflicts), ""},
		{"promote: fail by default", withToken, "POST", "/api/v1/sandboxes/box/promote", bearer, 409, jsonType, errorJSON(conflicts), ""},
		{"promote by a strategy it does not know", withToken, "POST", "/api/v1/sandboxes/box/promote?strategy=mine", bearer, 400, jsonType,
			errorJSON(`bad request: strategy: "mine" is not fail, ours or theirs`), ""},
		{"promote without a promote account", withToken, "POST", "/api/v1/sandboxes/other/promote?strategy=ours", bearer, 403, jsonType,
			errorJSON("forbidden: SANDBOX PROMOTE needs a promote account"), ""},
		{"promote missing", withToken, "POST", "/api/v1/sandboxes/nosuch/promote", bearer, 404, jsonType, errorJSON(missing), ""},
		{"promote failing", withToken, "POST", "/api/v1/sandboxes/broken/promote", bearer, 500, jsonType, errorJSON(errBroken.Error()), ""},
	}
	for _, tt := range tests {
		tt.run(t)
	}
}

// TestHandlerPromoteOptions: a promote's tables, overwrites, dry run and
// digest reach Sandboxes as asked (a strategy and digest in lower case); a
// dry run answers its plan and needs the token as any promote; options
// that do not hold are 400, before Sandboxes is asked.
func TestHandlerPromoteOptions(t *testing.T) {
	const (
		jsonType  = "application/json"
		tokenOnly = "promoting a sandbox writes production: it needs admin-token (admin-tokenless-changes does not cover it)"
		stale     = "conflict: PROMOTE refused: its plan is now " + fakeDigest + ", not the sha256:" +
			"0000000000000000000000000000000000000000000000000000000000000000 that was reviewed"
		notDigest = " is not a plan's digest (sha256: and 64 hexadecimal digits, as a dry run gives it)"
		exclusive = "bad request: dry_run and matching exclude each other: a dry run applies nothing, matching applies the plan a dry run gave"
	)
	withToken, bearer := Options{Token: "s3cret"}, "Bearer s3cret"
	promote := func(query string) string { return "/api/v1/sandboxes/box/promote?" + query }
	zeros := "sha256:" + strings.Repeat("0", 64)
	tests := []apiCase{
		{"dry run", withToken, "POST", promote("strategy=ours&dry_run=1"), bearer, 200, jsonType, dryRunJSON, "dry run box ours"},
		{"dry run=true", withToken, "POST", promote("dry_run=true&strategy=ours"), bearer, 200, jsonType, dryRunJSON, "dry run box ours"},
		{"dry run without a value", withToken, "POST", promote("strategy=ours&dry_run"), bearer, 200, jsonType, dryRunJSON, "dry run box ours"},
		{"dry run of fail", withToken, "POST", promote("dry_run=1"), bearer, 200, jsonType,
			strings.Replace(dryRunJSON, `"ours"`, `"fail"`, 1), "dry run box fail"},
		{"dry_run=0 promotes", withToken, "POST", promote("strategy=ours&dry_run=0"), bearer, 200, jsonType, promotedJSON, "promote box ours"},
		{"dry_run=false promotes", withToken, "POST", promote("strategy=ours&dry_run=false"), bearer, 200, jsonType, promotedJSON, "promote box ours"},
		{"dry run without the token", withToken, "POST", promote("dry_run=1"), "", 401, jsonType, errorJSON("missing or wrong bearer token"), ""},
		{"tokenless dry run", Options{TokenlessChanges: true}, "POST", promote("dry_run=1"), "", 403, jsonType, errorJSON(tokenOnly), ""},
		{"dry run of tables", withToken, "POST", promote("strategy=ours&dry_run=1&table=app.users&table=app.orders&overwrite=app.orders"), bearer,
			200, jsonType, dryRunJSON, "dry run box ours for app.users,app.orders overwrite app.orders"},
		{"tables", withToken, "POST", promote("strategy=theirs&table=app.users&table=app.my.t"), bearer, 200, jsonType,
			strings.Replace(promotedJSON, `"ours"`, `"theirs"`, 1), "promote box theirs for app.users,app.my.t"},
		{"matching", withToken, "POST", promote("strategy=ours&matching=" + fakeDigest), bearer, 200, jsonType, promotedJSON,
			"promote box ours matching " + fakeDigest},
		{"matching in upper case", withToken, "POST", promote("strategy=ours&matching=" + strings.ToUpper(fakeDigest)), bearer, 200, jsonType,
			promotedJSON, "promote box ours matching " + fakeDigest},
		{"matching another plan", withToken, "POST", promote("strategy=ours&matching=" + zeros), bearer, 409, jsonType, errorJSON(stale), ""},
		// What does not hold: 400.
		{"table without its database", withToken, "POST", promote("strategy=ours&table=users"), bearer, 400, jsonType,
			errorJSON(`bad request: table: "users" is not db.table`), ""},
		{"second table without a name", withToken, "POST", promote("table=app.users&table=app."), bearer, 400, jsonType,
			errorJSON(`bad request: table: "app." is not db.table`), ""},
		{"overwrite without its database", withToken, "POST", promote("overwrite=.t"), bearer, 400, jsonType,
			errorJSON(`bad request: overwrite: ".t" is not db.table`), ""},
		{"empty table", withToken, "POST", promote("table="), bearer, 400, jsonType, errorJSON(`bad request: table: "" is not db.table`), ""},
		{"dry_run that does not parse", withToken, "POST", promote("dry_run=maybe"), bearer, 400, jsonType,
			errorJSON(`bad request: dry_run: "maybe" is not 1, 0, true or false`), ""},
		{"digest too short", withToken, "POST", promote("matching=sha256:abab"), bearer, 400, jsonType,
			errorJSON(`bad request: matching: "sha256:abab"` + notDigest), ""},
		{"digest not hexadecimal", withToken, "POST", promote("matching=sha256:" + strings.Repeat("g", 64)), bearer, 400, jsonType,
			errorJSON(`bad request: matching: "sha256:` + strings.Repeat("g", 64) + `"` + notDigest), ""},
		{"digest of another hash", withToken, "POST", promote("matching=md5:" + strings.Repeat("0", 64)), bearer, 400, jsonType,
			errorJSON(`bad request: matching: "md5:` + strings.Repeat("0", 64) + `"` + notDigest), ""},
		{"dry run and matching", withToken, "POST", promote("dry_run=1&matching=" + fakeDigest), bearer, 400, jsonType, errorJSON(exclusive), ""},
		{"bad strategy before the rest", withToken, "POST", promote("strategy=mine&table=users"), bearer, 400, jsonType,
			errorJSON(`bad request: strategy: "mine" is not fail, ours or theirs`), ""},
	}
	for _, tt := range tests {
		tt.run(t)
	}
}

// TestExportText: statements end with ";" and a line, comments with a line.
func TestExportText(t *testing.T) {
	tests := []struct {
		name  string
		stmts []string
		want  string
	}{
		{"none", nil, ""},
		{"statements", []string{"SET NAMES utf8mb4", "DELETE FROM `a`.`t` WHERE `id` = 1"}, "SET NAMES utf8mb4;\nDELETE FROM `a`.`t` WHERE `id` = 1;\n"},
		{"comments", []string{"-- note", "SELECT 1", "-- last"}, "-- note\nSELECT 1;\n-- last\n"},
		{"multi-line statement", []string{"CREATE TABLE `a`.`t` (\n  `id` int\n)"}, "CREATE TABLE `a`.`t` (\n  `id` int\n);\n"},
		{"a statement starting with --", []string{"--x"}, "--x;\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ExportText(tt.stmts); got != tt.want {
				t.Errorf("ExportText = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestDiffOptionsTableName: db.table splits at the first dot.
func TestDiffOptionsTableName(t *testing.T) {
	tests := []struct {
		table, db, name string
		ok              bool
	}{
		{"app.users", "app", "users", true},
		{"app.my.table", "app", "my.table", true},
		{"users", "", "", false},
		{".users", "", "", false},
		{"app.", "", "", false},
		{"", "", "", false},
	}
	for _, tt := range tests {
		db, name, ok := DiffOptions{Table: tt.table}.TableName()
		if db != tt.db || name != tt.name || ok != tt.ok {
			t.Errorf("TableName(%q) = %q, %q, %v; want %q, %q, %v", tt.table, db, name, ok, tt.db, tt.name, tt.ok)
		}
	}
}

// Reset resets the tables asked (every table: app.users) of a sandbox the
// fake has, recording what it was asked.
func (f *fakeSandboxes) Reset(_ context.Context, name string, tables []string) (ResetResult, error) {
	if _, err := f.find(name); err != nil {
		return ResetResult{}, err
	}
	f.changes = append(f.changes, "reset "+name+" "+strings.Join(tables, ","))
	if len(tables) == 0 {
		tables = []string{"app.users"}
	}
	return ResetResult{Sandbox: name, Tables: tables, Info: "sandbox " + name + " reset"}, nil
}

// TestParseDiffRows: rows caps the changed rows of each table.
func TestParseDiffRows(t *testing.T) {
	for q, want := range map[string]int{"": 0, "rows=1": 1, "rows=500&summary=0": 500} {
		v, _ := url.ParseQuery(q)
		o, err := parseDiff(v)
		if err != nil || o.RowsPerTable != want {
			t.Errorf("%q: %d, %v; want %d", q, o.RowsPerTable, err, want)
		}
	}
	for _, q := range []string{"rows=", "rows=-1", "rows=1.5", "rows=99999999999999999999"} {
		v, _ := url.ParseQuery(q)
		if _, err := parseDiff(v); !errors.Is(err, ErrBadRequest) {
			t.Errorf("%q: %v, want ErrBadRequest", q, err)
		}
	}
}
