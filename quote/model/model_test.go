package model

import (
	"slices"
	"testing"
)

// TestCLIRead: the model splits a script at the delimiter outside strings,
// names and comments, drops -- and # comments to the line's end and /* */
// comments (not /*! or /*M!), and reports as commands a `\` command outside
// a string and a command word starting a statement; a backslash escapes in
// strings only when NO_BACKSLASH_ESCAPES is off.
func TestCLIRead(t *testing.T) {
	for _, tt := range []struct {
		script      string
		nbe         bool
		cmds, stmts []string
	}{
		{"SELECT 1;\nSELECT 2;", false, nil, []string{"SELECT 1", "SELECT 2"}},
		{"-- note\nSELECT 1;", false, nil, []string{"SELECT 1"}},
		{"SELECT 1 # c;\n;", false, nil, []string{"SELECT 1 \n"}},
		{"SELECT 1 --x;", false, nil, []string{"SELECT 1 --x"}},
		{"/* x; */ SELECT 1;", false, nil, []string{"SELECT 1"}},
		{"/*!50000 SELECT 1 */;", false, nil, []string{"/*!50000 SELECT 1 */"}},
		{"SELECT 'a;b', \"c;d\", `e;f`;", false, nil, []string{"SELECT 'a;b', \"c;d\", `e;f`"}},
		{"SELECT 'a\\';b';", false, nil, []string{"SELECT 'a\\';b'"}},
		{"SELECT 'a\\';b';", true, nil, []string{"SELECT 'a\\'"}},
		{"SELECT `a\\`;", false, nil, []string{"SELECT `a\\`"}},
		{"SELECT \\N;", false, nil, []string{"SELECT \\N"}},
		{"SELECT \"a\nb;\";", true, nil, []string{"SELECT \"a\nb;\""}},
		{"system ls\nSELECT 1;", false, []string{"system ls"}, []string{"SELECT 1"}},
		{"delimiter //\nSELECT 1;", true, []string{"delimiter //"}, []string{"SELECT 1"}},
		{"SELECT 1; \\g", false, []string{"\\g"}, []string{"SELECT 1"}},
	} {
		cmds, stmts := CLIRead(tt.script, tt.nbe)
		if !slices.Equal(cmds, tt.cmds) || !slices.Equal(stmts, tt.stmts) {
			t.Errorf("CLIRead(%q, %v) = %q, %q; want %q, %q", tt.script, tt.nbe, cmds, stmts, tt.cmds, tt.stmts)
		}
	}
	if cmds, _ := CLIRead("-- a\n\\! touch x\nSELECT 1;", false); !slices.Equal(cmds, []string{"\\! touch x"}) {
		t.Errorf("a \\! line after a comment: commands %q", cmds)
	}
}

// TestReadLiterals: strings in every form the export writes (doubled
// quotes, backslash escapes unless NO_BACKSLASH_ESCAPES, _charset X'…'),
// back-quoted names with doubled backticks, and what is not one.
func TestReadLiterals(t *testing.T) {
	for _, tt := range []struct {
		text string
		mode Mode
		want string
		n    int
		ok   bool
	}{
		{"'a''b' x", Mode{}, "a'b", 6, true},
		{"'a\\nb\\0\\Z\\t\\r\\b\\q'", Mode{}, "a\nb\x00\x1a\t\r\bq", 18, true},
		{"'a\\nb'", Mode{NoBackslashEscapes: true}, "a\\nb", 6, true},
		{"'abc", Mode{}, "", 0, false},
		{"_utf8mb4 X'6162' y", Mode{}, "ab", 16, true},
		{"_binary X'zz'", Mode{}, "", 13, false},
		{"x", Mode{}, "", 0, false},
	} {
		if v, n, ok := ReadString(tt.text, tt.mode); v != tt.want || n != tt.n || ok != tt.ok {
			t.Errorf("ReadString(%q, %+v) = %q, %d, %v; want %q, %d, %v", tt.text, tt.mode, v, n, ok, tt.want, tt.n, tt.ok)
		}
	}
	for _, tt := range []struct {
		text, want string
		n          int
		ok         bool
	}{{"`a``b` x", "a`b", 6, true}, {"`abc", "", 0, false}, {"x", "", 0, false}} {
		if v, n, ok := ReadIdent(tt.text); v != tt.want || n != tt.n || ok != tt.ok {
			t.Errorf("ReadIdent(%q) = %q, %d, %v; want %q, %d, %v", tt.text, v, n, ok, tt.want, tt.n, tt.ok)
		}
	}
}
