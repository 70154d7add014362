package lexer

import "testing"

func TestQuoteUnquote(t *testing.T) {
	for _, c := range []struct {
		s         string
		backslash bool
		quoted    string
	}{
		{"it's", true, `'it''s'`},
		{`a\b`, true, `'a\\b'`},
		{`a\b`, false, `'a\b'`},
		{"a\x00b", true, `'a\0b'`},
		{"a\x00b", false, "'a\x00b'"},
	} {
		if got := Quote(c.s, c.backslash); got != c.quoted {
			t.Errorf("Quote(%q, %v) = %q, want %q", c.s, c.backslash, got, c.quoted)
		}
		if got := Unquote(c.quoted, c.backslash); got != c.s {
			t.Errorf("Unquote(%q, %v) = %q, want %q", c.quoted, c.backslash, got, c.s)
		}
	}
	for in, want := range map[string]string{`'\n\t\r\b\Z\x'`: "\n\t\r\b\x1ax", `'\%\_'`: `\%\_`, `"a""b"`: `a"b`, `'`: ""} {
		if got := Unquote(in, true); got != want {
			t.Errorf("Unquote(%q) = %q, want %q", in, got, want)
		}
	}
}
