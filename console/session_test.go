package console

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestSessions: a session's cookie holds until it ends, only under the key
// that signed it; a changed byte, another key (another token) or a lapse
// of sessionFor undoes it. A token's key is the same in every process;
// without a token the key is random.
func TestSessions(t *testing.T) {
	random := bytes.NewReader(bytes.Repeat([]byte{7}, 1024))
	k, err := newSessionKeys("s3cret", random)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	s, value, err := k.issue(now)
	if err != nil {
		t.Fatal(err)
	}
	same, _ := newSessionKeys("s3cret", strings.NewReader(""))
	other, _ := newSessionKeys("other", strings.NewReader(""))
	tampered := []byte(value)
	tampered[3] ^= 1
	// The same bytes in another spelling: the last character's unused
	// bits (56 bytes leave two) set.
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	respelt := value[:len(value)-1] + string(alphabet[strings.IndexByte(alphabet, value[len(value)-1])|1])
	tests := []struct {
		name  string
		keys  sessionKeys
		value string
		at    time.Time
		ok    bool
	}{
		{"as issued", k, value, now, true},
		{"another process with the token", same, value, now.Add(time.Hour), true},
		{"just before it ends", k, value, now.Add(sessionFor - time.Second), true},
		{"once it ends", k, value, now.Add(sessionFor), false},
		{"another token", other, value, now, false},
		{"a changed byte", k, string(tampered), now, false},
		{"cut short", k, value[:len(value)-2], now, false},
		{"respelt", k, respelt, now, false},
		{"empty", k, "", now, false},
	}
	for _, tc := range tests {
		got, ok := tc.keys.check(tc.value, tc.at)
		if ok != tc.ok || ok && !bytes.Equal(got.id, s.id) {
			t.Errorf("%s: check = %v, want %v", tc.name, ok, tc.ok)
		}
	}
	if !k.csrfMatches(s, k.csrf(s)) || k.csrfMatches(s, other.csrf(s)) || k.csrfMatches(session{}, k.csrf(session{})) {
		t.Errorf("a CSRF token matches only its session's, under its key")
	}
	a, _ := newSessionKeys("", bytes.NewReader(bytes.Repeat([]byte{1}, 64)))
	b, _ := newSessionKeys("", bytes.NewReader(bytes.Repeat([]byte{2}, 64)))
	if bytes.Equal(a.key, b.key) {
		t.Errorf("tokenless keys are not random")
	}
	if _, err := newSessionKeys("", strings.NewReader("short")); err == nil {
		t.Errorf("a short random source made a key")
	}
}
