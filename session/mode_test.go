package session

import "testing"

func TestParseMode(t *testing.T) {
	for _, m := range []string{"transparent", "EXPLICIT", "passthrough"} {
		if _, err := ParseMode(m); err != nil {
			t.Errorf("%s: %v", m, err)
		}
	}
	if _, err := ParseMode("sandbox"); err == nil {
		t.Error("unknown mode accepted")
	}
}
