package adminapi

import (
	"context"
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
	if got := strings.Join(f.changes, "; "); got != "keep box 168h0m0s; discard other" {
		t.Errorf("changes made: %q", got)
	}
}

// TestClientErrors: each refusal of the API is a StatusError with the
// API's message and status, wrapping ErrNotFound and ErrBadRequest.
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
			403, nil},
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
			for _, sentinel := range []error{ErrNotFound, ErrBadRequest} {
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
	_, _ = (&Client{BaseURL: srv.URL}).List(ctx)
	want := []string{
		"GET /api/v1/sandboxes Bearer t0k",
		"GET /api/v1/sandboxes/a%20b Bearer t0k",
		"POST /api/v1/sandboxes/box/keep Bearer t0k",
		"POST /api/v1/sandboxes/box/keep?ttl=36h Bearer t0k",
		"POST /api/v1/sandboxes/box/keep?ttl=1m30s Bearer t0k",
		"POST /api/v1/sandboxes/box/keep?ttl=0s Bearer t0k",
		"DELETE /api/v1/sandboxes/box Bearer t0k",
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
