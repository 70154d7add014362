package adminapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
)

// serve runs the real handler over a fake on an httptest server.
func serve(t *testing.T, o Options) (*fakeSandboxes, string) {
	t.Helper()
	f := newFake()
	o.Sandboxes = f
	srv := httptest.NewServer(NewHandler(o))
	t.Cleanup(srv.Close)
	return f, srv.URL
}

// TestClient: what a Client returns is what the Sandboxes behind the
// handler returned, and what it asks is what reaches them.
func TestClient(t *testing.T) {
	f, url := serve(t, Options{Token: "s3cret"})
	c := &Client{BaseURL: url + "/", Token: "s3cret"} // a trailing slash is fine
	ctx := context.Background()
	want := newFake()

	list, err := c.List(ctx)
	if err != nil || !reflect.DeepEqual(list, want.boxes) {
		t.Errorf("List = %+v, %v; want %+v", list, err, want.boxes)
	}
	box, err := c.Show(ctx, "box")
	wantBox, _ := want.find("box")
	if err != nil || !reflect.DeepEqual(box, wantBox) {
		t.Errorf("Show = %+v, %v; want %+v", box, err, wantBox)
	}
	kept, err := c.Keep(ctx, "box", ttl(7*24*time.Hour))
	if err != nil || kept.Expires == nil || !kept.Expires.Equal(wantBox.Created.Add(7*24*time.Hour)) || kept.State != "kept" {
		t.Errorf("Keep = %+v, %v", kept, err)
	}
	if err := c.Discard(ctx, "other"); err != nil {
		t.Errorf("Discard: %v", err)
	}
	summary, err := c.Diff(ctx, "box", DiffOptions{Summary: true})
	if err != nil || !reflect.DeepEqual(summary, Diff{Summary: fakeSummary}) {
		t.Errorf("Diff summary = %+v, %v; want %+v", summary, err, fakeSummary)
	}
	// The detail's JSON columns come back as the API wrote them (indented;
	// null for none): the same JSON.
	detail, err := c.Diff(ctx, "box", DiffOptions{})
	if got, want := mustJSON(t, detail.Changes), mustJSON(t, fakeChanges); err != nil || got != want || detail.Summary != nil {
		t.Errorf("Diff = %+v, %v:\n%s\nwant:\n%s", detail, err, got, want)
	}
	one, err := c.Diff(ctx, "box", DiffOptions{Table: "app.orders"})
	if err != nil || len(one.Changes) != 1 || one.Changes[0].Op != "ddl" || string(one.Changes[0].After) != `"ALTER TABLE app.orders ADD note TEXT"` {
		t.Errorf("Diff of app.orders = %+v, %v", one, err)
	}
	none, err := c.Diff(ctx, "box", DiffOptions{Summary: true, Table: "app.none"})
	if err != nil || none.Summary == nil || len(none.Summary) != 0 || none.Changes != nil {
		t.Errorf("Diff of a table without changes = %#v, %v; want an empty Summary", none, err)
	}
	text, err := c.Export(ctx, "box")
	if err != nil || text != ExportText(fakeExport) {
		t.Errorf("Export = %q, %v", text, err)
	}
	p, err := c.Promote(ctx, "box", PromoteOptions{Strategy: StrategyTheirs})
	wantP := Promoted{Sandbox: "box", Strategy: "theirs", Outcome: "committed", Rows: 2,
		Info: "promoted sandbox box: 1 rows inserted, 1 updated, 0 deleted in 1 tables"}
	if err != nil || !reflect.DeepEqual(p, wantP) {
		t.Errorf("Promote = %+v, %v; want %+v", p, err, wantP)
	}
	if got := strings.Join(f.changes, "; "); got != "keep box 168h0m0s; discard other; promote box theirs" {
		t.Errorf("changes made: %q", got)
	}
}

// TestClientPromote: a promote's options reach the Sandboxes behind the
// handler as asked, and a dry run's answer — its plan and digest — comes
// back whole.
func TestClientPromote(t *testing.T) {
	dryRun := Promoted{Sandbox: "box", Strategy: "ours", Outcome: OutcomeDryRun, Info: fakeDryRunInfo, DryRun: true, Plan: fakePlan, Digest: fakeDigest}
	committed := Promoted{Sandbox: "box", Strategy: "ours", Outcome: "committed", Rows: 2,
		Info: "promoted sandbox box: 1 rows inserted, 1 updated, 0 deleted in 1 tables"}
	tests := []struct {
		name      string
		o         PromoteOptions
		want      Promoted
		wantAsked string
	}{
		{"dry run", PromoteOptions{Strategy: "ours", DryRun: true}, dryRun, "dry run box ours"},
		{"dry run of tables", PromoteOptions{Strategy: "ours", Tables: []string{"app.users", "app.orders"}, Overwrite: []string{"app.orders"}, DryRun: true},
			dryRun, "dry run box ours for app.users,app.orders overwrite app.orders"},
		{"the plan reviewed", PromoteOptions{Strategy: "OURS", Tables: []string{"app.users"}, Matching: fakeDigest}, committed,
			"promote box ours for app.users matching " + fakeDigest},
		{"a table with odd characters", PromoteOptions{Strategy: "ours", Tables: []string{"app.a&table=b c"}}, committed,
			"promote box ours for app.a&table=b c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, url := serve(t, Options{Token: "s3cret"})
			p, err := (&Client{BaseURL: url, Token: "s3cret"}).Promote(context.Background(), "box", tt.o)
			if err != nil || !reflect.DeepEqual(p, tt.want) {
				t.Errorf("Promote = %+v, %v; want %+v", p, err, tt.want)
			}
			if got := strings.Join(f.changes, "; "); got != tt.wantAsked {
				t.Errorf("asked %q, want %q", got, tt.wantAsked)
			}
		})
	}
}

// mustJSON is v's JSON, compact.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestClientErrors: each refusal of the API is a StatusError with the
// API's message and status, wrapping ErrNotFound, ErrBadRequest,
// ErrForbidden and ErrConflict.
func TestClientErrors(t *testing.T) {
	_, tokenURL := serve(t, Options{Token: "s3cret"})
	_, tokenlessURL := serve(t, Options{})
	ctx := context.Background()
	tests := []struct {
		name    string
		c       *Client
		call    func(*Client) error
		want    string // the whole message
		status  int
		wrapped error // nil: wraps neither sentinel
	}{
		{"no token", &Client{BaseURL: tokenURL},
			func(c *Client) error { _, err := c.List(ctx); return err },
			"admin API: missing or wrong bearer token (HTTP 401)", 401, nil},
		{"wrong token", &Client{BaseURL: tokenURL, Token: "nope"},
			func(c *Client) error { return c.Discard(ctx, "box") },
			"admin API: missing or wrong bearer token (HTTP 401)", 401, nil},
		{"tokenless change", &Client{BaseURL: tokenlessURL},
			func(c *Client) error { _, err := c.Keep(ctx, "box", ttl(time.Hour)); return err },
			"admin API: keeping and discarding sandboxes needs admin-token (or admin-tokenless-changes on a host whose local processes are all trusted) (HTTP 403)",
			403, ErrForbidden},
		{"tokenless promote", &Client{BaseURL: tokenlessURL},
			func(c *Client) error {
				_, err := c.Promote(ctx, "box", PromoteOptions{Strategy: StrategyOurs})
				return err
			},
			"admin API: promoting a sandbox writes production: it needs admin-token (admin-tokenless-changes does not cover it) (HTTP 403)",
			403, ErrForbidden},
		{"promote with conflicts", &Client{BaseURL: tokenURL, Token: "s3cret"},
			func(c *Client) error { _, err := c.Promote(ctx, "box", PromoteOptions{}); return err },
			`admin API: conflict: PROMOTE refused: 1 rows changed in production since the fork and differently in the sandbox: app.users {"id": 1} (HTTP 409)`,
			409, ErrConflict},
		{"promote without a promote account", &Client{BaseURL: tokenURL, Token: "s3cret"},
			func(c *Client) error {
				_, err := c.Promote(ctx, "other", PromoteOptions{Strategy: StrategyFail})
				return err
			},
			"admin API: forbidden: SANDBOX PROMOTE needs a promote account (HTTP 403)", 403, ErrForbidden},
		{"promote by an unknown strategy", &Client{BaseURL: tokenURL, Token: "s3cret"},
			func(c *Client) error { _, err := c.Promote(ctx, "box", PromoteOptions{Strategy: "mine"}); return err },
			`admin API: bad request: strategy: "mine" is not fail, ours or theirs (HTTP 400)`, 400, ErrBadRequest},
		{"promote of a table without its database", &Client{BaseURL: tokenURL, Token: "s3cret"},
			func(c *Client) error {
				_, err := c.Promote(ctx, "box", PromoteOptions{Strategy: "ours", Tables: []string{"app.users", "orders"}})
				return err
			},
			`admin API: bad request: table: "orders" is not db.table (HTTP 400)`, 400, ErrBadRequest},
		{"promote matching what is not a digest", &Client{BaseURL: tokenURL, Token: "s3cret"},
			func(c *Client) error { _, err := c.Promote(ctx, "box", PromoteOptions{Matching: "abc"}); return err },
			`admin API: bad request: matching: "abc" is not a plan's digest (sha256: and 64 hexadecimal digits, as a dry run gives it) (HTTP 400)`,
			400, ErrBadRequest},
		{"promote dry run matching", &Client{BaseURL: tokenURL, Token: "s3cret"},
			func(c *Client) error {
				_, err := c.Promote(ctx, "box", PromoteOptions{DryRun: true, Matching: fakeDigest})
				return err
			},
			"admin API: bad request: dry_run and matching exclude each other: a dry run applies nothing, matching applies the plan a dry run gave (HTTP 400)",
			400, ErrBadRequest},
		{"promote matching another plan", &Client{BaseURL: tokenURL, Token: "s3cret"},
			func(c *Client) error {
				_, err := c.Promote(ctx, "box", PromoteOptions{Strategy: "ours", Matching: "sha256:" + strings.Repeat("0", 64)})
				return err
			},
			"admin API: conflict: PROMOTE refused: its plan is now " + fakeDigest + ", not the sha256:" + strings.Repeat("0", 64) +
				" that was reviewed (HTTP 409)", 409, ErrConflict},
		{"tokenless dry run", &Client{BaseURL: tokenlessURL},
			func(c *Client) error { _, err := c.Promote(ctx, "box", PromoteOptions{DryRun: true}); return err },
			"admin API: promoting a sandbox writes production: it needs admin-token (admin-tokenless-changes does not cover it) (HTTP 403)",
			403, ErrForbidden},
		{"diff of a missing sandbox", &Client{BaseURL: tokenURL, Token: "s3cret"},
			func(c *Client) error { _, err := c.Diff(ctx, "nosuch", DiffOptions{Summary: true}); return err },
			`admin API: not found: no such sandbox: "nosuch" (HTTP 404)`, 404, ErrNotFound},
		{"diff of a table without its database", &Client{BaseURL: tokenURL, Token: "s3cret"},
			func(c *Client) error { _, err := c.Diff(ctx, "box", DiffOptions{Table: "users"}); return err },
			`admin API: bad request: table: "users" is not db.table (HTTP 400)`, 400, ErrBadRequest},
		{"export failing", &Client{BaseURL: tokenURL, Token: "s3cret"},
			func(c *Client) error { _, err := c.Export(ctx, "broken"); return err },
			"admin API: upstream 127.0.0.1:3306 unreachable (HTTP 500)", 500, nil},
		{"export, not the API", &Client{BaseURL: tokenURL + "/elsewhere", Token: "s3cret"},
			func(c *Client) error { _, err := c.Export(ctx, "box"); return err },
			"admin API: HTTP 404", 404, nil},
		{"missing sandbox", &Client{BaseURL: tokenURL, Token: "s3cret"},
			func(c *Client) error { _, err := c.Show(ctx, "nosuch"); return err },
			`admin API: not found: no such sandbox: "nosuch" (HTTP 404)`, 404, ErrNotFound},
		{"ttl beyond the bound", &Client{BaseURL: tokenURL, Token: "s3cret"},
			func(c *Client) error { _, err := c.Keep(ctx, "box", ttl(1000*time.Hour)); return err },
			"admin API: bad request: a kept sandbox may live at most 720h (HTTP 400)", 400, ErrBadRequest},
		{"ttl 0: until discarded", &Client{BaseURL: tokenURL, Token: "s3cret"},
			func(c *Client) error { _, err := c.Keep(ctx, "box", ttl(0)); return err },
			"admin API: bad request: a kept sandbox may live at most 720h (HTTP 400)", 400, ErrBadRequest},
		{"failing", &Client{BaseURL: tokenURL, Token: "s3cret"},
			func(c *Client) error { return c.Discard(ctx, "broken") },
			"admin API: upstream 127.0.0.1:3306 unreachable (HTTP 500)", 500, nil},
		{"not the API", &Client{BaseURL: tokenURL + "/elsewhere", Token: "s3cret"},
			func(c *Client) error { _, err := c.List(ctx); return err },
			"admin API: HTTP 404", 404, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call(tt.c)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
			var se *StatusError
			if !errors.As(err, &se) || se.StatusCode != tt.status {
				t.Errorf("error %#v is not a StatusError with HTTP %d", err, tt.status)
			}
			for _, sentinel := range []error{ErrNotFound, ErrBadRequest, ErrForbidden, ErrConflict} {
				if got := errors.Is(err, sentinel); got != (sentinel == tt.wrapped) {
					t.Errorf("errors.Is(err, %v) = %v", sentinel, got)
				}
			}
		})
	}
}

// TestClientRequests: the requests a Client sends, as the server sees them.
func TestClientRequests(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Method+" "+r.URL.RequestURI()+" "+r.Header.Get("Authorization"))
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/api/v1/sandboxes":
			_, _ = w.Write([]byte("[]"))
		case r.Method == http.MethodDelete:
			_, _ = w.Write([]byte(`{"discarded": "x"}`))
		case strings.HasSuffix(r.URL.Path, "/diff"):
			_, _ = w.Write([]byte("[]"))
		case strings.HasSuffix(r.URL.Path, "/export"):
			_, _ = w.Write([]byte("SELECT 1;\n"))
		default:
			_, _ = w.Write([]byte("{}"))
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	c := &Client{BaseURL: srv.URL, Token: "t0k"}
	_, _ = c.List(ctx)
	_, _ = c.Show(ctx, "a b")
	_, _ = c.Keep(ctx, "box", nil)
	_, _ = c.Keep(ctx, "box", ttl(36*time.Hour))
	_, _ = c.Keep(ctx, "box", ttl(90*time.Second))
	_, _ = c.Keep(ctx, "box", ttl(0))
	_ = c.Discard(ctx, "box")
	_, _ = c.Diff(ctx, "box", DiffOptions{})
	_, _ = c.Diff(ctx, "box", DiffOptions{Summary: true})
	_, _ = c.Diff(ctx, "a/b", DiffOptions{Summary: true, Table: "app.my table"})
	_, _ = c.Diff(ctx, "box", DiffOptions{Table: "app.t&x=1"})
	_, _ = c.Export(ctx, "box")
	_, _ = c.Promote(ctx, "box", PromoteOptions{})
	_, _ = c.Promote(ctx, "box", PromoteOptions{Strategy: StrategyOurs})
	_, _ = c.Promote(ctx, "box", PromoteOptions{Strategy: StrategyTheirs, Tables: []string{"app.b", "app.a"}, Overwrite: []string{"app.x y"}, DryRun: true})
	_, _ = c.Promote(ctx, "a b", PromoteOptions{Matching: "sha256:" + strings.Repeat("f", 64), Tables: []string{"app.t&dry_run=1"}})
	_, _ = (&Client{BaseURL: srv.URL}).List(ctx)
	want := []string{
		"GET /api/v1/sandboxes Bearer t0k",
		"GET /api/v1/sandboxes/a%20b Bearer t0k",
		"POST /api/v1/sandboxes/box/keep Bearer t0k",
		"POST /api/v1/sandboxes/box/keep?ttl=36h Bearer t0k",
		"POST /api/v1/sandboxes/box/keep?ttl=1m30s Bearer t0k",
		"POST /api/v1/sandboxes/box/keep?ttl=0s Bearer t0k",
		"DELETE /api/v1/sandboxes/box Bearer t0k",
		"GET /api/v1/sandboxes/box/diff Bearer t0k",
		"GET /api/v1/sandboxes/box/diff?summary=1 Bearer t0k",
		"GET /api/v1/sandboxes/a%2Fb/diff?summary=1&table=app.my+table Bearer t0k",
		"GET /api/v1/sandboxes/box/diff?table=app.t%26x%3D1 Bearer t0k",
		"GET /api/v1/sandboxes/box/export Bearer t0k",
		"POST /api/v1/sandboxes/box/promote Bearer t0k",
		"POST /api/v1/sandboxes/box/promote?strategy=ours Bearer t0k",
		"POST /api/v1/sandboxes/box/promote?dry_run=1&overwrite=app.x+y&strategy=theirs&table=app.b&table=app.a Bearer t0k",
		"POST /api/v1/sandboxes/a%20b/promote?matching=sha256%3A" + strings.Repeat("f", 64) + "&table=app.t%26dry_run%3D1 Bearer t0k",
		"GET /api/v1/sandboxes ",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := c.Keep(ctx, "box", ttl(-time.Second)); !errors.Is(err, ErrBadRequest) || len(got) != len(want) {
		t.Errorf("a negative ttl: %v, after %d requests", err, len(got))
	}
}

// TestClientTransportErrors: a proxy that cannot be reached, or answers
// something other than JSON, is named in the error, which wraps the cause.
func TestClientTransportErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) }))
	base := srv.URL
	ctx := context.Background()
	_, err := (&Client{BaseURL: base}).List(ctx)
	if err == nil || !strings.HasPrefix(err.Error(), "admin API at "+base+": reading the answer to GET /api/v1/sandboxes: ") {
		t.Errorf("answer not JSON: %v", err)
	}
	srv.Close()
	_, err = (&Client{BaseURL: base}).List(ctx)
	if err == nil || !strings.HasPrefix(err.Error(), "admin API at "+base+": ") || errors.Unwrap(err) == nil {
		t.Errorf("proxy gone: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := (&Client{BaseURL: base}).List(cctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// ttl is a keep's ttl given explicitly.
func ttl(d time.Duration) *time.Duration { return &d }
