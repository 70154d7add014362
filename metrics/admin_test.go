package metrics

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// recordingAdmin records the changes asked of it.
type recordingAdmin struct{ changes []string }

func (a *recordingAdmin) List(context.Context) (any, error) { return []string{"box"}, nil }
func (a *recordingAdmin) Show(_ context.Context, name string) (any, error) {
	return map[string]string{"name": name}, nil
}
func (a *recordingAdmin) Keep(_ context.Context, name string, ttl string) (any, error) {
	d, err := time.ParseDuration(ttl)
	if err != nil || d > 720*time.Hour || d == 0 {
		return nil, fmt.Errorf("%w: a kept sandbox may live at most 720h", ErrBadRequest)
	}
	a.changes = append(a.changes, "keep "+name+" "+d.String())
	return map[string]string{"kept": name}, nil
}
func (a *recordingAdmin) Discard(_ context.Context, name string) error {
	a.changes = append(a.changes, "discard "+name)
	return nil
}

// TestAdminChangesNeedToken: without a token the admin API reads but does
// not keep or discard, unless TokenlessChanges; with one, every request
// needs it.
func TestAdminChangesNeedToken(t *testing.T) {
	ready := func(context.Context) error { return nil }
	tests := []struct {
		name       string
		opts       AdminOptions
		method     string
		path       string
		bearer     string
		wantStatus int
		wantChange bool
	}{
		{"tokenless list", AdminOptions{}, "GET", "/api/v1/sandboxes", "", 200, false},
		{"tokenless show", AdminOptions{}, "GET", "/api/v1/sandboxes/box", "", 200, false},
		{"tokenless keep", AdminOptions{}, "POST", "/api/v1/sandboxes/box/keep?ttl=1000000h", "", 403, false},
		{"tokenless discard", AdminOptions{}, "DELETE", "/api/v1/sandboxes/box", "", 403, false},
		{"tokenless keep allowed", AdminOptions{TokenlessChanges: true}, "POST", "/api/v1/sandboxes/box/keep?ttl=2h", "", 200, true},
		{"tokenless discard allowed", AdminOptions{TokenlessChanges: true}, "DELETE", "/api/v1/sandboxes/box", "", 200, true},
		{"token missing", AdminOptions{Token: "s3cret"}, "GET", "/api/v1/sandboxes", "", 401, false},
		{"token wrong", AdminOptions{Token: "s3cret"}, "POST", "/api/v1/sandboxes/box/keep", "nope", 401, false},
		{"token keep", AdminOptions{Token: "s3cret"}, "POST", "/api/v1/sandboxes/box/keep?ttl=3h", "s3cret", 200, true},
		{"token discard", AdminOptions{Token: "s3cret"}, "DELETE", "/api/v1/sandboxes/box", "s3cret", 200, true},
		{"ttl beyond the bound", AdminOptions{Token: "s3cret"}, "POST", "/api/v1/sandboxes/box/keep?ttl=1000000h", "s3cret", 400, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &recordingAdmin{}
			tt.opts.Admin = a
			h := NewAdminHandler(prometheus.NewRegistry(), ready, tt.opts)
			req := httptest.NewRequest(tt.method, tt.path, nil)
			if tt.bearer != "" {
				req.Header.Set("Authorization", "Bearer "+tt.bearer)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.wantStatus {
				t.Fatalf("HTTP %d, want %d: %s", rec.Code, tt.wantStatus, rec.Body)
			}
			if got := len(a.changes) > 0; got != tt.wantChange {
				t.Fatalf("changes made: %v, want any: %v", a.changes, tt.wantChange)
			}
			if rec.Code != http.StatusOK && rec.Header().Get("Content-Type") != "application/json" {
				t.Fatalf("error answer is not JSON: %q", rec.Header().Get("Content-Type"))
			}
		})
	}
}
