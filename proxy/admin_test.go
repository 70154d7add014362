package proxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
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
		{"missing", fmt.Errorf("%w: %q", session.ErrNoSandbox, "x"), `not found: no such sandbox: "x"`, adminapi.ErrNotFound},
		{"ttl", fmt.Errorf("%w: a kept sandbox may live at most 720h0m0s", session.ErrTTL),
			"bad request: TTL beyond max-sandbox-ttl: a kept sandbox may live at most 720h0m0s", adminapi.ErrBadRequest},
		{"other", other, "registry unreachable", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := apiError(tc.err)
			if got.Error() != tc.want {
				t.Errorf("apiError: %q, want %q", got, tc.want)
			}
			if !errors.Is(got, tc.err) {
				t.Errorf("apiError(%v) does not wrap it", tc.err)
			}
			for _, s := range []error{adminapi.ErrNotFound, adminapi.ErrBadRequest} {
				if errors.Is(got, s) != (s == tc.sentinel) {
					t.Errorf("errors.Is(%v, %v) = %v", got, s, !(s == tc.sentinel))
				}
			}
		})
	}
	if apiError(nil) != nil {
		t.Error("apiError(nil) != nil")
	}
}
