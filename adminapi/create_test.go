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

// Create makes a kept sandbox of any name the fake has not, but "bad!"
// (a bad name, as the proxy would refuse it); its expiry is its creation
// (the fake's) plus ttl (none for 0), sandbox-ttl 24h by default.
func (f *fakeSandboxes) Create(_ context.Context, name, owner string, keep *time.Duration) (Sandbox, error) {
	if _, err := f.find(name); err == nil {
		return Sandbox{}, fmt.Errorf("%w: sandbox exists: a sandbox named %q already exists", ErrConflict, name)
	}
	if name == "bad!" {
		return Sandbox{}, fmt.Errorf("%w: sandbox name %q may hold only letters, digits, '_' and '-'", ErrBadRequest, name)
	}
	ttl := 24 * time.Hour
	if keep != nil {
		ttl = *keep
	}
	f.changes = append(f.changes, "create "+name+" "+owner+" "+ttl.String())
	b := Sandbox{ID: "9f50b5a8", Name: name, State: "kept", Owner: owner, Created: time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC),
		Changes: "none"}
	if ttl > 0 {
		e := b.Created.Add(ttl)
		b.Expires = &e
	}
	return b, nil
}

// createdJSON is the answer to creating "fix" for alice, kept 2h.
const createdJSON = `{
  "id": "9f50b5a8",
  "name": "fix",
  "state": "kept",
  "owner": "alice",
  "created": "2026-11-24T10:00:00Z",
  "expires": "2026-11-24T12:00:00Z",
  "connections": 0,
  "table_count": 0,
  "bytes": 0,
  "changes": "none"
}
`

// TestHandlerCreate: POST /api/v1/sandboxes needs the token (or tokenless
// changes), reads one JSON object of name, owner and ttl, refuses an owner
// holding the user separator and a body it cannot read (400), and answers
// 201 with the sandbox and its path, or the error of Sandboxes.
func TestHandlerCreate(t *testing.T) {
	const (
		needsToken = "creating a sandbox needs admin-token (or admin-tokenless-changes on a host whose local processes are all trusted)"
		fix        = `{"name": "fix", "owner": "alice", "ttl": "2h"}`
	)
	withToken := Options{Token: "s3cret", Proxy: Proxy{Listen: "127.0.0.1:3307", UserSeparator: "+"}}
	tests := []struct {
		name       string
		opts       Options
		auth, body string
		wantStatus int
		wantBody   string // the whole of it, or with wantPart a part
		wantPart   bool
		wantChange string
	}{
		{"created", withToken, "Bearer s3cret", fix, 201, createdJSON, false, "create fix alice 2h0m0s"},
		{"sandbox-ttl", withToken, "Bearer s3cret", `{"name": "fix", "owner": "alice"}`, 201, `"expires": "2026-11-25T10:00:00Z"`, true,
			"create fix alice 24h0m0s"},
		{"until discarded", withToken, "Bearer s3cret", `{"name": "fix", "owner": "alice", "ttl": "0"}`, 201, `"created": "2026-11-24T10:00:00Z",
  "connections"`, true, "create fix alice 0s"},
		{"ttl in days", withToken, "Bearer s3cret", `{"name": "fix", "owner": "alice", "ttl": "7d"}`, 201, `"expires": "2026-12-01T10:00:00Z"`, true,
			"create fix alice 168h0m0s"},
		{"tokenless", Options{}, "", fix, 403, errorJSON(needsToken), false, ""},
		{"token missing", withToken, "", fix, 401, errorJSON("missing or wrong bearer token"), false, ""},
		{"tokenless changes", Options{TokenlessChanges: true}, "", fix, 201, createdJSON, false, "create fix alice 2h0m0s"},
		{"name taken", withToken, "Bearer s3cret", `{"name": "box", "owner": "alice"}`, 409,
			errorJSON(`conflict: sandbox exists: a sandbox named "box" already exists`), false, ""},
		{"bad name", withToken, "Bearer s3cret", `{"name": "bad!", "owner": "alice"}`, 400,
			errorJSON(`bad request: sandbox name "bad!" may hold only letters, digits, '_' and '-'`), false, ""},
		{"owner with the separator", withToken, "Bearer s3cret", `{"name": "fix", "owner": "al+ice"}`, 400,
			errorJSON(`bad request: owner "al+ice" holds the user separator "+": the login al+ice+fix would name another user`), false, ""},
		{"owner with +, no separator", Options{Token: "s3cret"}, "Bearer s3cret", `{"name": "fix", "owner": "al+ice"}`, 201,
			`"owner": "al+ice"`, true, "create fix al+ice 24h0m0s"},
		{"bad ttl", withToken, "Bearer s3cret", `{"name": "fix", "owner": "alice", "ttl": "soon"}`, 400, `bad request: ttl: bad duration \"soon\"`, true, ""},
		{"ttl as a number", withToken, "Bearer s3cret", `{"name": "fix", "owner": "alice", "ttl": 7200}`, 400, `"error": "bad request: the body must be a JSON object`, true, ""},
		{"no body", withToken, "Bearer s3cret", "", 400, "bad request: the body must be a JSON object {", true, ""},
		{"not JSON", withToken, "Bearer s3cret", "name=fix", 400, "bad request: the body must be a JSON object {", true, ""},
		{"unknown field", withToken, "Bearer s3cret", `{"name": "fix", "owner": "alice", "tll": "2h"}`, 400, `unknown field \"tll\"`, true, ""},
		{"two objects", withToken, "Bearer s3cret", fix + fix, 400, errorJSON("bad request: the body must hold one JSON object"), false, ""},
		{"too large", withToken, "Bearer s3cret", `{"name": "fix", "owner": "` + strings.Repeat("a", maxCreateBody) + `"}`, 400,
			"request body too large", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			tt.opts.Sandboxes = f
			req := httptest.NewRequest(http.MethodPost, "/api/v1/sandboxes", strings.NewReader(tt.body))
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			rec := httptest.NewRecorder()
			NewHandler(tt.opts).ServeHTTP(rec, req)
			got := rec.Body.String()
			if rec.Code != tt.wantStatus || tt.wantPart && !strings.Contains(got, tt.wantBody) || !tt.wantPart && got != tt.wantBody {
				t.Errorf("HTTP %d, want %d; body:\n%s\nwant:\n%s", rec.Code, tt.wantStatus, got, tt.wantBody)
			}
			if loc := rec.Header().Get("Location"); (rec.Code == 201) != (loc == "/api/v1/sandboxes/fix") {
				t.Errorf("Location %q after HTTP %d", loc, rec.Code)
			}
			if c := strings.Join(f.changes, "; "); c != tt.wantChange {
				t.Errorf("changes %q, want %q", c, tt.wantChange)
			}
		})
	}
}

// TestHandlerProxy: GET /api/v1/proxy answers Options.Proxy, read as a
// list is (with the token when one is set).
func TestHandlerProxy(t *testing.T) {
	p := Proxy{Listen: "0.0.0.0:3307", UserSeparator: "+"}
	const want = "{\n  \"listen\": \"0.0.0.0:3307\",\n  \"user_separator\": \"+\"\n}\n"
	for _, tt := range []struct {
		name   string
		opts   Options
		auth   string
		status int
		body   string
	}{
		{"tokenless", Options{Proxy: p}, "", 200, want},
		{"with the token", Options{Token: "s3cret", Proxy: p}, "Bearer s3cret", 200, want},
		{"without it", Options{Token: "s3cret", Proxy: p}, "", 401, errorJSON("missing or wrong bearer token")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Sandboxes = newFake()
			req := httptest.NewRequest(http.MethodGet, "/api/v1/proxy", nil)
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			rec := httptest.NewRecorder()
			NewHandler(tt.opts).ServeHTTP(rec, req)
			if rec.Code != tt.status || rec.Body.String() != tt.body {
				t.Errorf("HTTP %d %q, want %d %q", rec.Code, rec.Body, tt.status, tt.body)
			}
		})
	}
}

// TestClientCreate: the Client's Create and Proxy reach the handler as
// asked and return what it answers; refusals are StatusErrors with their
// marks.
func TestClientCreate(t *testing.T) {
	f, url := serve(t, Options{Token: "s3cret", Proxy: Proxy{Listen: "127.0.0.1:3307", UserSeparator: "+"}})
	c := &Client{BaseURL: url, Token: "s3cret"}
	ctx := context.Background()
	b, err := c.Create(ctx, "fix", "alice", ttl(2*time.Hour))
	if err != nil || b.Name != "fix" || b.Owner != "alice" || b.State != "kept" || b.Expires == nil ||
		!b.Expires.Equal(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)) {
		t.Errorf("Create = %+v, %v", b, err)
	}
	if _, err := c.Create(ctx, "fix", "alice", nil); err != nil {
		t.Errorf("Create without ttl: %v", err)
	}
	if _, err := c.Create(ctx, "fix", "alice", ttl(0)); err != nil {
		t.Errorf("Create until discarded: %v", err)
	}
	if got := strings.Join(f.changes, "; "); got != "create fix alice 2h0m0s; create fix alice 24h0m0s; create fix alice 0s" {
		t.Errorf("asked %q", got)
	}
	var se *StatusError
	if _, err := c.Create(ctx, "box", "alice", nil); !errors.As(err, &se) || se.StatusCode != 409 || !errors.Is(err, ErrConflict) {
		t.Errorf("Create of a name taken: %v", err)
	}
	if _, err := c.Create(ctx, "x", "alice", ttl(-time.Hour)); !errors.Is(err, ErrBadRequest) {
		t.Errorf("Create with a negative ttl: %v", err)
	}
	p, err := c.Proxy(ctx)
	if err != nil || p != (Proxy{Listen: "127.0.0.1:3307", UserSeparator: "+"}) {
		t.Errorf("Proxy = %+v, %v", p, err)
	}
}
