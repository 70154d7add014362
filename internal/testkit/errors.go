package testkit

import (
	"errors"
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

// WantMarked fails the test unless got, what a function marking errors made
// of err, reads want, keeps err in its chain and is, of the marks, exactly
// mark (none for nil).
func WantMarked(t testing.TB, got, err error, want string, marks []error, mark error) {
	t.Helper()
	if got == nil {
		t.Errorf("%v: marked as nil, want %q", err, want)
		return
	}
	if got.Error() != want {
		t.Errorf("text %q, want %q", got, want)
	}
	if !errors.Is(got, err) {
		t.Errorf("%v: not in the chain of %v", err, got)
	}
	for _, m := range marks {
		if errors.Is(got, m) != (m == mark) {
			t.Errorf("errors.Is(%v, %v) = %v", got, m, m != mark)
		}
	}
}
