package testkit

import (
	"strings"
	"testing"
)

// WantError fails the test unless err is what want asks for: no error for
// want "", else an error whose text holds want. what names the case.
func WantError(t testing.TB, what string, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("%s: unexpected error %v", what, err)
	case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
		t.Errorf("%s: error %v, want one containing %q", what, err, want)
	}
}
