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

func TestNames(t *testing.T) {
	for text, want := range map[string]string{"a": "a", "t.`b`": "b", "db.t.c": "c", "t.": "", "é": "", "a b": "", "(a)": ""} {
		got, ok := ColumnName(text, false)
		if got != want || ok != (want != "") {
			t.Errorf("ColumnName(%q) = %q, %v", text, got, ok)
		}
	}
	if got, ok := ColumnName(`"c"`, true); !ok || got != "c" {
		t.Errorf("ColumnName under ANSI_QUOTES = %q, %v", got, ok)
	}
	if !CallParen("count(", 5, false) || CallParen("count (", 5, false) || !CallParen("count (", 5, true) || CallParen("count", 5, true) {
		t.Error("CallParen")
	}
	if !FunctionKeyword("COUNT") || FunctionKeyword("ADDDATE") {
		t.Error("FunctionKeyword")
	}
}
