package metrics

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
)

func testRegistry(t *testing.T) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewRegistry()
	m := New(reg)
	m.ConnectionsTotal.Add(3)
	return reg
}

func TestHandler(t *testing.T) {
	reg := testRegistry(t)
	okReady := func(context.Context) error { return nil }
	failReady := func(context.Context) error { return errors.New("upstream 127.0.0.1:3306 unreachable") }
	slowReady := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	deaf := make(chan struct{})
	t.Cleanup(func() { close(deaf) })
	deafReady := func(context.Context) error { <-deaf; return nil } // ignores ctx: answers only when the test ends

	tests := []struct {
		name       string
		method     string
		path       string
		ready      func(context.Context) error
		wantStatus int
		wantBody   []string // substrings
		wantCT     string   // Content-Type prefix
	}{
		{"metrics", http.MethodGet, "/metrics", okReady, 200,
			[]string{"sqlfork_client_connections_total 3", "# HELP sqlfork_client_connections ", "go_goroutines"}, "text/plain"},
		{"metrics head", http.MethodHead, "/metrics", okReady, 200, nil, ""},
		{"healthz", http.MethodGet, "/healthz", failReady, 200, []string{"ok"}, "text/plain"},
		{"healthz head", http.MethodHead, "/healthz", failReady, 200, nil, "text/plain"},
		{"readyz ok", http.MethodGet, "/readyz", okReady, 200, []string{"ready"}, "text/plain"},
		{"readyz nil func", http.MethodGet, "/readyz", nil, 200, []string{"ready"}, "text/plain"},
		{"readyz error", http.MethodGet, "/readyz", failReady, 503, []string{"upstream 127.0.0.1:3306 unreachable"}, "text/plain"},
		{"readyz timeout", http.MethodGet, "/readyz", slowReady, 503, []string{"did not finish within 50ms"}, "text/plain"},
		{"readyz ignores ctx", http.MethodGet, "/readyz", deafReady, 503, []string{"did not finish within 50ms"}, "text/plain"},
		{"post healthz", http.MethodPost, "/healthz", okReady, 405, nil, ""},
		{"post metrics", http.MethodPost, "/metrics", okReady, 405, nil, ""},
		{"unknown path", http.MethodGet, "/", okReady, 404, nil, ""},
		{"subpath", http.MethodGet, "/healthz/x", okReady, 404, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHandler(reg, tc.ready, 50*time.Millisecond)
			rec := httptest.NewRecorder()
			served := make(chan struct{})
			go func() {
				defer close(served)
				h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
			}()
			// A readiness check that ignores its context answers only when
			// the test ends: the handler's own 50 ms limit must answer first.
			select {
			case <-served:
			case <-time.After(testkit.WaitLimit):
				t.Fatal("the request never answered")
			}
			if rec.Code != tc.wantStatus {
				t.Fatalf("status = %d, want %d; body %q", rec.Code, tc.wantStatus, rec.Body.String())
			}
			body := rec.Body.String()
			for _, want := range tc.wantBody {
				if !strings.Contains(body, want) {
					t.Errorf("body does not contain %q:\n%s", want, body)
				}
			}
			if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, tc.wantCT) {
				t.Errorf("Content-Type = %q, want prefix %q", ct, tc.wantCT)
			}
		})
	}
}

func TestNewHandlerUsesReadyTimeout(t *testing.T) {
	var got time.Duration
	ready := func(ctx context.Context) error {
		dl, ok := ctx.Deadline()
		if !ok {
			return errors.New("no deadline")
		}
		got = time.Until(dl)
		return nil
	}
	rec := httptest.NewRecorder()
	NewHandler(prometheus.NewRegistry(), ready).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	if rec.Code != 200 {
		t.Fatalf("status = %d, body %q", rec.Code, rec.Body.String())
	}
	if got <= 0 || got > ReadyTimeout {
		t.Errorf("ready deadline in %s, want within (0, %s]", got, ReadyTimeout)
	}
}

// TestNewMux: NewMux serves what NewHandler does (readiness bounded by
// ReadyTimeout too), plus the routes the caller adds.
func TestNewMux(t *testing.T) {
	var deadline time.Duration
	ready := func(ctx context.Context) error {
		if dl, ok := ctx.Deadline(); ok {
			deadline = time.Until(dl)
		}
		return nil
	}
	mux := NewMux(testRegistry(t), ready)
	mux.HandleFunc("GET /extra", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "extra") })
	tests := []struct {
		method, path string
		want         int
		body         string
	}{
		{http.MethodGet, "/metrics", 200, "sqlfork_client_connections_total 3"},
		{http.MethodGet, "/healthz", 200, "ok"},
		{http.MethodGet, "/readyz", 200, "ready"},
		{http.MethodGet, "/extra", 200, "extra"},
		{http.MethodPost, "/healthz", 405, ""},
		{http.MethodGet, "/", 404, ""},
	}
	for _, tc := range tests {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
		if rec.Code != tc.want || !strings.Contains(rec.Body.String(), tc.body) {
			t.Errorf("%s %s: %d %q, want %d with %q", tc.method, tc.path, rec.Code, rec.Body.String(), tc.want, tc.body)
		}
	}
	if deadline <= 0 || deadline > ReadyTimeout {
		t.Errorf("ready deadline in %s, want within (0, %s]", deadline, ReadyTimeout)
	}
}

func TestServe(t *testing.T) {
	tests := []struct {
		name string
		path string
		want int
	}{
		{"healthz", "/healthz", 200},
		{"readyz", "/readyz", 200},
		{"metrics", "/metrics", 200},
		{"missing", "/nope", 404},
	}
	addr, shutdown, err := Serve(context.Background(), "127.0.0.1:0", NewHandler(testRegistry(t), nil), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := http.Get("http://" + addr.String() + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("status = %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if err := shutdown(ctx); err != nil {
		t.Fatalf("second shutdown: %v", err)
	}
	if c, err := net.DialTimeout("tcp", addr.String(), time.Second); err == nil {
		_ = c.Close()
		t.Error("listener still accepts after shutdown")
	}
}

func TestServeBindErrors(t *testing.T) {
	busy := testkit.Listen(t)

	tests := []struct {
		name string
		addr string
	}{
		{"busy port", busy.Addr().String()},
		{"no port", "127.0.0.1"},
		{"bad port", "127.0.0.1:notaport"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			addr, shutdown, err := Serve(context.Background(), tc.addr, http.NotFoundHandler(), nil)
			if err == nil {
				_ = shutdown(context.Background())
				t.Fatalf("Serve(%q) bound %s, want error", tc.addr, addr)
			}
			if !strings.HasPrefix(err.Error(), "metrics listener: ") {
				t.Errorf("error %q does not name the metrics listener", err)
			}
		})
	}
}

func TestServeShutdownCutsOffSlowRequests(t *testing.T) {
	started := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done() // only returns once the connection is closed
	})
	addr, shutdown, err := Serve(context.Background(), "127.0.0.1:0", h, nil)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		resp, err := http.Get("http://" + addr.String() + "/")
		if err == nil {
			_ = resp.Body.Close()
		}
	}()
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("shutdown = %v, want deadline exceeded", err)
	}
}
