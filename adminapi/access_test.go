package adminapi

import (
	"net/http/httptest"
	"testing"
)

// TestPermits: what a request may do besides reaching the API, by the
// token and TokenlessChanges: the rules the handler and the console share.
func TestPermits(t *testing.T) {
	tests := []struct {
		name      string
		token     string
		tokenless bool
		// want is whether read, rows, change, create and promote are
		// permitted.
		want [5]bool
	}{
		{"token", "s3cret", false, [5]bool{true, true, true, true, true}},
		{"token and tokenless changes", "s3cret", true, [5]bool{true, true, true, true, true}},
		{"no token", "", false, [5]bool{true, false, false, false, false}},
		{"no token, tokenless changes", "", true, [5]bool{true, true, true, true, false}},
	}
	for _, tc := range tests {
		o := Options{Token: tc.token, TokenlessChanges: tc.tokenless}
		for i, need := range []Need{NeedRead, NeedRows, NeedChange, NeedCreate, NeedPromote} {
			ok, why := o.Permits(need)
			if ok != tc.want[i] || !ok && why == "" {
				t.Errorf("%s: Permits(%d) = %v, %q; want %v", tc.name, need, ok, why, tc.want[i])
			}
		}
	}
}

// TestAuthenticated: the bearer token, compared whole; none needed
// without a token.
func TestAuthenticated(t *testing.T) {
	tests := []struct {
		token, header string
		want          bool
	}{
		{"s3cret", "Bearer s3cret", true},
		{"s3cret", "bearer   s3cret ", true},
		{"s3cret", "Bearer s3cre", false},
		{"s3cret", "Bearer s3cretx", false},
		{"s3cret", "Basic s3cret", false},
		{"s3cret", "", false},
		{"", "", true},
		{"", "Bearer anything", true},
	}
	for _, tc := range tests {
		r := httptest.NewRequest("GET", "/", nil)
		if tc.header != "" {
			r.Header.Set("Authorization", tc.header)
		}
		if got := (Options{Token: tc.token}).Authenticated(r); got != tc.want {
			t.Errorf("token %q, header %q: %v, want %v", tc.token, tc.header, got, tc.want)
		}
	}
	if (Options{}).TokenMatches("") {
		t.Errorf("an empty token matches when none is set")
	}
}
