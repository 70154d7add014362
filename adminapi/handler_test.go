package adminapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
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
	return &fakeSandboxes{boxes: []Sandbox{
		{ID: "1a2b3c4d", Name: "box", State: "kept", Owner: "sbx", Created: created, Expires: &expires,
			Connections: 1, TableCount: 2, Bytes: 32768},
		{ID: "5e6f7a8b", Name: "other", State: "active", Owner: "app", Created: created},
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

// The answers of the fake, as the wire format has them (session.Info's
// JSON before the admin API had types of its own).
const (
	listJSON = `[
  {
    "id": "1a2b3c4d",
    "name": "box",
    "state": "kept",
    "owner": "sbx",
    "created": "2026-11-24T10:00:00Z",
    "expires": "2026-11-24T12:00:00Z",
    "connections": 1,
    "table_count": 2,
    "bytes": 32768
  },
  {
    "id": "5e6f7a8b",
    "name": "other",
    "state": "active",
    "owner": "app",
    "created": "2026-11-24T10:00:00Z",
    "connections": 0,
    "table_count": 0,
    "bytes": 0
  }
]
`
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
	showJSON = `{
  "id": "1a2b3c4d",
  "name": "box",
  "state": "kept",
  "owner": "sbx",
  "created": "2026-11-24T10:00:00Z",
  "expires": "2026-11-24T12:00:00Z",
  "connections": 1,
` + tablesJSON + `  "table_count": 2,
  "bytes": 32768
}
`
	discardJSON = "{\n  \"discarded\": \"box\"\n}\n"
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
	tests := []struct {
		name       string
		opts       Options
		method     string
		path       string
		auth       string // Authorization header
		wantStatus int
		wantBody   string
		wantChange string // "" for none
	}{
		// Without a token the API reads, and changes nothing...
		{"tokenless list", tokenless, "GET", "/api/v1/sandboxes", "", 200, listJSON, ""},
		{"tokenless show", tokenless, "GET", "/api/v1/sandboxes/box", "", 200, showJSON, ""},
		{"tokenless keep", tokenless, "POST", "/api/v1/sandboxes/box/keep?ttl=1000000h", "", 403, errorJSON(readOnly), ""},
		{"tokenless keep, bad ttl", tokenless, "POST", "/api/v1/sandboxes/box/keep?ttl=soon", "", 403, errorJSON(readOnly), ""},
		{"tokenless discard", tokenless, "DELETE", "/api/v1/sandboxes/box", "", 403, errorJSON(readOnly), ""},
		{"tokenless discard of a missing one", tokenless, "DELETE", "/api/v1/sandboxes/nosuch", "", 403, errorJSON(readOnly), ""},
		{"tokenless ignores a bearer", tokenless, "DELETE", "/api/v1/sandboxes/box", "Bearer s3cret", 403, errorJSON(readOnly), ""},
		// ...unless admin-tokenless-changes.
		{"tokenless keep allowed", tokenlessChanges, "POST", "/api/v1/sandboxes/box/keep?ttl=2h", "", 200, keptJSON(2 * time.Hour), "keep box 2h0m0s"},
		{"tokenless discard allowed", tokenlessChanges, "DELETE", "/api/v1/sandboxes/box", "", 200, discardJSON, "discard box"},
		// With a token, every request needs it.
		{"token missing", withToken, "GET", "/api/v1/sandboxes", "", 401, errorJSON(badToken), ""},
		{"token missing on show", withToken, "GET", "/api/v1/sandboxes/box", "", 401, errorJSON(badToken), ""},
		{"token wrong", withToken, "POST", "/api/v1/sandboxes/box/keep", "Bearer nope", 401, errorJSON(badToken), ""},
		{"token without Bearer", withToken, "GET", "/api/v1/sandboxes", "s3cret", 401, errorJSON(badToken), ""},
		{"token as basic auth", withToken, "GET", "/api/v1/sandboxes", "Basic s3cret", 401, errorJSON(badToken), ""},
		{"token prefix", withToken, "GET", "/api/v1/sandboxes", "Bearer s3cre", 401, errorJSON(badToken), ""},
		{"token missing on discard", withToken, "DELETE", "/api/v1/sandboxes/box", "", 401, errorJSON(badToken), ""},
		{"token missing, tokenless changes", Options{Token: "s3cret", TokenlessChanges: true}, "DELETE", "/api/v1/sandboxes/box", "", 401, errorJSON(badToken), ""},
		{"token list", withToken, "GET", "/api/v1/sandboxes", "Bearer s3cret", 200, listJSON, ""},
		{"token show", withToken, "GET", "/api/v1/sandboxes/box", "Bearer s3cret", 200, showJSON, ""},
		{"token keep", withToken, "POST", "/api/v1/sandboxes/box/keep?ttl=3h", "Bearer s3cret", 200, keptJSON(3 * time.Hour), "keep box 3h0m0s"},
		{"token discard", withToken, "DELETE", "/api/v1/sandboxes/box", "Bearer s3cret", 200, discardJSON, "discard box"},
		// The ttl is read as SANDBOX KEEP TTL reads it.
		{"ttl in days", withToken, "POST", "/api/v1/sandboxes/box/keep?ttl=7d", "Bearer s3cret", 200, keptJSON(7 * 24 * time.Hour), "keep box 168h0m0s"},
		{"ttl in seconds", withToken, "POST", "/api/v1/sandboxes/box/keep?ttl=90", "Bearer s3cret", 200, keptJSON(90 * time.Second), "keep box 1m30s"},
		{"ttl that does not parse", withToken, "POST", "/api/v1/sandboxes/box/keep?ttl=soon", "Bearer s3cret", 400, errorJSON(badTTL), ""},
		{"negative ttl", withToken, "POST", "/api/v1/sandboxes/box/keep?ttl=-1h", "Bearer s3cret", 400,
			errorJSON(`bad request: ttl: bad duration "-1h": use forms like 500ms, 90s, 30m, 2h, 1h30m, 7d or a number of seconds`), ""},
		{"ttl beyond the bound", withToken, "POST", "/api/v1/sandboxes/box/keep?ttl=1000000h", "Bearer s3cret", 400, errorJSON(tooLong), ""},
		{"ttl 0 is until discarded", withToken, "POST", "/api/v1/sandboxes/box/keep?ttl=0", "Bearer s3cret", 400, errorJSON(tooLong), ""},
		{"no ttl is sandbox-ttl", withToken, "POST", "/api/v1/sandboxes/box/keep", "Bearer s3cret", 200, keptJSON(24 * time.Hour), "keep box 24h0m0s"},
		// Errors of Sandboxes.
		{"show missing", withToken, "GET", "/api/v1/sandboxes/nosuch", "Bearer s3cret", 404, errorJSON(`not found: no such sandbox: "nosuch"`), ""},
		{"keep missing", withToken, "POST", "/api/v1/sandboxes/nosuch/keep?ttl=1h", "Bearer s3cret", 404, errorJSON(`not found: no such sandbox: "nosuch"`), ""},
		{"discard missing", withToken, "DELETE", "/api/v1/sandboxes/nosuch", "Bearer s3cret", 404, errorJSON(`not found: no such sandbox: "nosuch"`), ""},
		{"show failing", withToken, "GET", "/api/v1/sandboxes/broken", "Bearer s3cret", 500, errorJSON(errBroken.Error()), ""},
		{"discard failing", withToken, "DELETE", "/api/v1/sandboxes/broken", "Bearer s3cret", 500, errorJSON(errBroken.Error()), ""},
	}
	for _, tt := range tests {
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
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q, want application/json", ct)
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

// TestHandlerRoutes: only the four routes are served; other methods get
// 405 and other paths 404, as from any mux.
func TestHandlerRoutes(t *testing.T) {
	tests := []struct {
		method, path string
		want         int
	}{
		{"PUT", "/api/v1/sandboxes/box", 405},
		{"POST", "/api/v1/sandboxes", 405},
		{"GET", "/api/v1/sandboxes/box/keep", 405},
		{"DELETE", "/api/v1/sandboxes", 405},
		{"GET", "/api/v1/sandboxes/", 404},
		{"GET", "/api/v1/sandboxes/box/tables", 404},
		{"GET", "/api/v2/sandboxes", 404},
		{"GET", "/metrics", 404},
		{"HEAD", "/api/v1/sandboxes", 200},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			f := newFake()
			rec := httptest.NewRecorder()
			NewHandler(Options{Sandboxes: f, TokenlessChanges: true}).ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
			if rec.Code != tt.want {
				t.Errorf("HTTP %d, want %d", rec.Code, tt.want)
			}
			if len(f.changes) > 0 {
				t.Errorf("changes made: %v", f.changes)
			}
		})
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
