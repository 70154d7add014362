package quote

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sqlfork/sqlfork-proxy/quote/model"
)

// check compares f(in) with want for each in, want of cases.
func check(t *testing.T, name string, f func(string) string, cases map[string]string) {
	t.Helper()
	for in, want := range cases {
		if got := f(in); got != want {
			t.Errorf("%s(%q) = %q, want %q", name, in, got, want)
		}
	}
}

func TestIdent(t *testing.T) {
	check(t, "Ident", Ident, map[string]string{
		"t":              "`t`",
		"a`b":            "`a``b`",
		"``":             "``````",
		"x\n\\! touch p": "`x\n\\! touch p`",
	})
	if got := Qualified("d", "t`"); got != "`d`.`t```" {
		t.Errorf("Qualified = %q", got)
	}
}

func TestString(t *testing.T) {
	check(t, "String", String, map[string]string{
		"":             "''",
		"plain text":   "'plain text'",
		"it's":         "'it''s'",
		`a\b`:          "_utf8mb4 X'615C62'",
		"\\'; DROP":    "_utf8mb4 X'5C273B2044524F50'",
		"caf\u00e9":    "_utf8mb4 X'636166C3A9'",
		"nul\x00":      "_utf8mb4 X'6E756C00'",
		"\xff\xfe":     "_binary X'FFFE'",
		"new\nline":    "_utf8mb4 X'6E65770A6C696E65'",
		"tab\tand\x1b": "_utf8mb4 X'74616209616E641B'",
	})
}

func TestStringIn(t *testing.T) {
	if got := StringIn("\xe4", "latin1"); got != "_latin1 X'E4'" {
		t.Errorf("StringIn = %s", got)
	}
	if got := StringIn("it's", "koi8r"); got != "'it''s'" {
		t.Errorf("StringIn = %s", got)
	}
}

func TestDisplay(t *testing.T) {
	cases := map[string]string{
		"plain":             "plain",
		"café 中文":           "café 中文",
		"a\nb":              `a\nb`,
		"a\r\tb":            `a\r\tb`,
		"back\\slash":       `back\\slash`,
		"\x1b[31mred":       `\x1b[31mred`,
		"\u009b31m":         `\u009b31m`,
		"evil\u202egnp.exe": `evil\u202egnp.exe`,
		"zero\u200bwidth":   `zero\u200bwidth`,
		"bad\xffbyte":       `bad\xffbyte`,
		"sep\u2028line":     `sep\u2028line`,
	}
	check(t, "Display", Display, cases)
	for in := range cases {
		if got := Comment(in); got != Display(in) {
			t.Errorf("Comment(%q) = %q", in, got)
		}
	}
}

func TestJSONSafe(t *testing.T) {
	v := map[string]string{"name": "x\u202ey\u009b\x1b\n\U000E0001"}
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	safe := JSONSafe(string(raw))
	var back map[string]string
	if err := json.Unmarshal([]byte(safe), &back); err != nil || back["name"] != v["name"] {
		t.Fatalf("JSONSafe(%s) = %s reads back as %q (%v)", raw, safe, back, err)
	}
	if !printable(strings.ReplaceAll(safe, "\n", "")) {
		t.Errorf("JSONSafe left what a terminal acts on: %q", safe)
	}
}

// printable reports text of printable characters only.
func printable(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || hidden(r) {
			return false
		}
	}
	return true
}

// FuzzQuote: whatever the name or value, Ident and String give one token
// of the server's reading in every sql_mode, which reads back as the name
// or value; and a script line with Comment's text is one comment to the
// server and to the mariadb CLI, and Display's text has no character a
// terminal acts on.
func FuzzQuote(f *testing.F) {
	for _, s := range []string{"", "a", "it's", `\`, "`", "x\n\\! touch p\nDELETE FROM t; #", "*/", "-- ", "#", "\xff", "中\\", "\u202e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, m := range model.Modes {
			if got, n, ok := model.ReadString(String(s), m); !ok || n != len(String(s)) || got != s {
				t.Fatalf("String(%q) = %s reads as %q (%d of %d bytes, %v) under %+v", s, String(s), got, n, len(String(s)), ok, m)
			}
			if got, n, ok := model.ReadIdent(Ident(s)); !ok || n != len(Ident(s)) || got != s {
				t.Fatalf("Ident(%q) = %s reads as %q", s, Ident(s), got)
			}
		}
		script := "-- " + Comment(s) + "\nSELECT 1;\n"
		if cmds, stmts := model.CLIRead(script, false); len(cmds) > 0 || len(stmts) != 1 || strings.TrimSpace(stmts[0]) != "SELECT 1" {
			t.Fatalf("the mariadb CLI reads %q as commands %q, statements %q", script, cmds, stmts)
		}
		if strings.ContainsAny(Comment(s), "\n\r") || !printable(Display(s)) || !utf8.ValidString(Display(s)) {
			t.Fatalf("Display(%q) = %q", s, Display(s))
		}
		line := "INSERT INTO " + Qualified(s, s) + " (" + Ident(s) + ") VALUES (" + String(s) + ");\n"
		for _, nbe := range []bool{false, true} {
			if cmds, stmts := model.CLIRead(line, nbe); len(cmds) > 0 || len(stmts) != 1 || stmts[0]+";\n" != line {
				t.Fatalf("the mariadb CLI reads %q as commands %q, statements %q", line, cmds, stmts)
			}
		}
	})
}
