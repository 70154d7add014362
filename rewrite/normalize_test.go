package rewrite

import (
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

var (
	maria1011 = Server{Flavor: MariaDB, Version: 101119}
	mysql80   = Server{Flavor: MySQL, Version: 80036}
)

func TestNormalize(t *testing.T) {
	cases := []struct {
		name string
		in   string
		opts Options
		want string // "" with err set
		err  string
	}{
		{"plain", "SELECT 1", Options{Server: maria1011}, "SELECT 1", ""},
		{"comment", "SELECT /* x */ 1", Options{Server: maria1011}, "SELECT         1", ""},
		{"newer version skipped with its quote", "SELECT 1 /*!999999 ' */ , 2 -- ' */", Options{Server: maria1011},
			blanked("SELECT 1 /*!999999 ' */ , 2 -- ' */", "/*!999999 ' */", "-- ' */"), ""},
		{"own version runs", "SELECT 1 /*!101119 +5 */", Options{Server: maria1011}, blanked("SELECT 1 /*!101119 +5 */", "/*!101119", "*/"), ""},
		{"next version skipped", "SELECT 1 /*!101120 +5 */", Options{Server: maria1011}, blanked("SELECT 1 /*!101120 +5 */", "/*!101120 +5 */"), ""},
		{"mysql 5.7 range skipped", "SELECT 1 /*!50700 +5 */", Options{Server: maria1011}, blanked("SELECT 1 /*!50700 +5 */", "/*!50700 +5 */"), ""},
		{"mysql 5.7 range runs with M", "SELECT 1 /*M!50700 +5 */", Options{Server: maria1011}, blanked("SELECT 1 /*M!50700 +5 */", "/*M!50700", "*/"), ""},
		{"M without version", "SELECT 1 /*M! +5 */", Options{Server: maria1011}, blanked("SELECT 1 /*M! +5 */", "/*M!", "*/"), ""},
		{"old version runs", "SELECT 1 /*!40101 +5 */", Options{Server: maria1011}, blanked("SELECT 1 /*!40101 +5 */", "/*!40101", "*/"), ""},
		{"fewer than five digits are code", "SELECT 1 /*!123 +5 */", Options{Server: maria1011}, blanked("SELECT 1 /*!123 +5 */", "/*!", "*/"), ""},
		{"seven digits: six are the version", "SELECT 1 /*!1234567 +5 */", Options{Server: maria1011}, blanked("SELECT 1 /*!1234567 +5 */", "/*!1234567 +5 */"), ""},
		{"nested comment in a skipped one", "SELECT 1 /*!99999 +5 /* x */ +7 */ + 100", Options{Server: maria1011},
			blanked("SELECT 1 /*!99999 +5 /* x */ +7 */ + 100", "/*!99999 +5 /* x */ +7 */"), ""},
		{"regular comment in an executed one", "SELECT 1 /*! +2 /* +3 */ +4 */", Options{Server: maria1011},
			blanked("SELECT 1 /*! +2 /* +3 */ +4 */", "/*!", "/* +3 */", "*/"), ""},
		{"executed inside executed", "SELECT 1 /*! +2 /*! +3 */ +4 */", Options{Server: maria1011},
			blanked("SELECT 1 /*! +2 /*! +3 */ +4 */", "/*!", "/*!", "*/"), ""},
		{"statements do not share a comment", "SELECT 1 /*! ; SELECT 2 */", Options{Server: maria1011},
			blanked("SELECT 1 /*! ; SELECT 2 */", "/*!"), ""},
		{"dash comment needs space or control", "SELECT 1 --x", Options{Server: maria1011}, "SELECT 1 --x", ""},
		{"dash comment with a control byte", "SELECT 1 --\x01 +5\n+1", Options{Server: maria1011}, blanked("SELECT 1 --\x01 +5\n+1", "--\x01 +5"), ""},
		{"dash comment at the end", "SELECT 1 --", Options{Server: maria1011}, "SELECT 1   ", ""},
		{"dash comment before trailing semicolons", "SELECT 1 --;; ", Options{Server: maria1011}, blanked("SELECT 1 --;; ", "--;; "), ""},
		{"hash comment", "SELECT 1 # x\n, 2", Options{Server: maria1011}, blanked("SELECT 1 # x\n, 2", "# x"), ""},
		{"dashes before a semicolon and a comment", "SELECT 1--;#x", Options{Server: maria1011}, "", "before a final ';'"},
		{"dashes before a semicolon, a comment and more", "SELECT 1--;#x\n2", Options{Server: maria1011}, blanked("SELECT 1--;#x\n2", "#x"), ""},
		{"semicolon and a comment at the end", "SELECT 1;#x", Options{Server: maria1011}, blanked("SELECT 1;#x", "#x"), ""},
		{"NUL ends a comment, then is code", "SELECT 1 -- x\x00 , 2", Options{Server: maria1011}, "", "NUL byte"},
		{"NUL in a string is fine", "SELECT 'a\x00b'", Options{Server: maria1011}, "SELECT 'a\x00b'", ""},
		{"unclosed comment", "SELECT 1 /* x", Options{Server: maria1011}, "", "not closed"},
		{"unclosed executable comment", "SELECT 1 /*! x", Options{Server: maria1011}, "", "not closed"},
		{"unclosed string", "SELECT 'a", Options{Server: maria1011}, "", "not closed"},
		{"backslash escapes a quote", `SELECT 'a\'', 1`, Options{Server: maria1011}, `SELECT 'a\'', 1`, ""},
		{"no backslash escapes", `SELECT 'a\' /* x */`, Options{Server: maria1011, NoBackslashEscapes: true},
			blanked(`SELECT 'a\' /* x */`, "/* x */"), ""},
		{"comment inside a string stays", "SELECT '/* x */'", Options{Server: maria1011}, "SELECT '/* x */'", ""},
		{"ansi quotes", `SELECT "a /* b" /* c */`, Options{Server: maria1011, ANSIQuotes: true}, blanked(`SELECT "a /* b" /* c */`, "/* c */"), ""},
		{"double quotes are strings", `SELECT "a'b" /* c */`, Options{Server: maria1011}, blanked(`SELECT "a'b" /* c */`, "/* c */"), ""},
		{"backquote", "SELECT 1 AS `a/*b` /* c */", Options{Server: maria1011}, blanked("SELECT 1 AS `a/*b` /* c */", "/* c */"), ""},
		{"hex literal", "SELECT x'4142' /* c */", Options{Server: maria1011}, blanked("SELECT x'4142' /* c */", "/* c */"), ""},
		{"bad hex literal", "SELECT x'4z'", Options{Server: maria1011}, "", "digits"},
		{"gbk trail backslash ends the string", "SELECT '\xBF\\'; INSERT INTO t VALUES (1); -- '", Options{Server: maria1011, Charset: "gbk"},
			"SELECT '\xBFx'; INSERT INTO t VALUES (1);     ", ""},
		{"latin1 reads the same bytes as one string", "SELECT '\xBF\\'; x -- '", Options{Server: maria1011, Charset: "latin1"},
			"SELECT '\xBF\\'; x -- '", ""},
		{"gbk name with a punctuation trail", "SELECT a\xBF\\b", Options{Server: maria1011, Charset: "gbk"}, "", "name"},
		{"gbk name with a letter trail", "SELECT a\xBFAb", Options{Server: maria1011, Charset: "gbk"}, "SELECT a\xBFAb", ""},
		{"gbk quoted name with a backquote trail", "SELECT 1 AS `\xBF`` `", Options{Server: maria1011, Charset: "gbk"}, "", "quoted identifier"},
		{"gbk quoted name with a letter trail", "SELECT 1 AS `\xBFA`", Options{Server: maria1011, Charset: "gbk"}, "SELECT 1 AS `\xBFA`", ""},
		{"euckr lead before a backslash in an ANSI name", "SELECT 1 AS \"\xE0\\\"", Options{Server: maria1011, Charset: "euckr", ANSIQuotes: true},
			"SELECT 1 AS \"\xE00\"", ""},
		{"gbk after @", "SELECT @\xBF\\'", Options{Server: maria1011, Charset: "gbk"}, "", "after @"},
		{"unknown charset", "SELECT '\xE4'", Options{Server: maria1011, Charset: "klingon"}, "", "character set"},
		{"unknown charset, ASCII text", "SET NAMES utf8mb4 /* x */", Options{Server: maria1011, Charset: "klingon"},
			blanked("SET NAMES utf8mb4 /* x */", "/* x */"), ""},
		{"unknown server: old versions run", "SELECT 1 /*!40101 +5 */", Options{}, blanked("SELECT 1 /*!40101 +5 */", "/*!40101", "*/"), ""},
		{"unknown server: 5.7+ versions refused", "SELECT 1 /*!50700 +5 */", Options{}, "", "server version"},
		{"unknown server: M refused", "SELECT 1 /*M! +5 */", Options{}, "", "only MariaDB"},
		{"mysql: M is a comment", "SELECT 1 /*M! +5 */", Options{Server: mysql80}, blanked("SELECT 1 /*M! +5 */", "/*M! +5 */"), ""},
		{"mysql: 8.0 version runs", "SELECT 1 /*!80000 +5 */", Options{Server: mysql80}, blanked("SELECT 1 /*!80000 +5 */", "/*!80000", "*/"), ""},
		{"mysql: newer version skipped", "SELECT 1 /*!80037 +5 */", Options{Server: mysql80}, blanked("SELECT 1 /*!80037 +5 */", "/*!80037 +5 */"), ""},
		{"comment right after --", "SELECT 0 --/*!*/@v1:=1", Options{Server: maria1011}, "", "two minus signs"},
		{"hash comment right after --", "SELECT 0 --#x\n", Options{Server: maria1011}, "", "two minus signs"},
		{"executable comment end right after --", "SELECT 1 /*! - --*/ 1", Options{Server: maria1011}, "", "two minus signs"},
		{"-- then a byte others read as space", "SELECT 1 --\x85x", Options{Server: maria1011, Charset: "latin1"}, "", "white space"},
		{"-- then latin1 no-break space is a comment", "SELECT 1 --\xA0x", Options{Server: maria1011, Charset: "latin1"},
			blanked("SELECT 1 --\xA0x", "--\xA0x"), ""},
		{"a last NUL byte ends the text", "SELECT 1\x00", Options{Server: maria1011}, "SELECT 1 ", ""},
		{"backslash in an ANSI-quoted name", `SELECT 1 AS "a\"; SELECT 2 -- "`, Options{Server: maria1011, ANSIQuotes: true},
			blanked(`SELECT 1 AS "a0"; SELECT 2 -- "`, `-- "`), ""},
		{"backslash in an ANSI-quoted name, no escapes", `SELECT 1 AS "a\"`, Options{Server: maria1011, ANSIQuotes: true, NoBackslashEscapes: true},
			`SELECT 1 AS "a\"`, ""},
		{"mysql: six digits are ambiguous", "SELECT 1 /*!800001 +5 */", Options{Server: mysql80}, "", "server version"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Normalize(c.in, c.opts)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("Normalize(%q) = %q, %v; want an error containing %q", c.in, got, err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Normalize(%q): %v", c.in, err)
			}
			if got != c.want {
				t.Fatalf("Normalize(%q)\n got  %q\n want %q", c.in, got, c.want)
			}
		})
	}
}

// blanked is s with each of parts, found in turn from left to right,
// turned into spaces (line breaks kept).
func blanked(s string, parts ...string) string {
	from := 0
	for _, p := range parts {
		i := strings.Index(s[from:], p) + from
		if i < from {
			panic("blanked: " + p + " not in " + s)
		}
		s = s[:i] + strings.Map(func(r rune) rune {
			if r == '\n' {
				return r
			}
			return ' '
		}, p) + s[i+len(p):]
		from = i + len(p)
	}
	return s
}

// FuzzNormalize checks that Normalize never panics, keeps the length, and
// is idempotent: the server reads its output as it is.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"SELECT 1 /*!999999 ' */ , 2 -- ' */", "SELECT '\xBF\\'; x -- '", "/*! a /*! b */ c */", "--\x01\n#x\n/*M!50700 1*/"} {
		for _, cs := range []string{"", "gbk", "latin1", "sjis"} {
			f.Add(s, cs, false, false, 101119)
		}
	}
	f.Fuzz(func(t *testing.T, src, charset string, ansi, nbe bool, version int) {
		opts := Options{Charset: charset, ANSIQuotes: ansi, NoBackslashEscapes: nbe, Server: Server{Flavor: MariaDB, Version: version}}
		out, err := Normalize(src, opts)
		if err != nil {
			return
		}
		if len(out) != len(src) {
			t.Fatalf("Normalize(%q) changed the length: %q", src, out)
		}
		again, err := Normalize(out, opts)
		if err != nil || again != out {
			t.Fatalf("Normalize is not idempotent on %q:\n once  %q\n twice %q (%v)", src, out, again, err)
		}
	})
}

// TestReadersAgree checks that the lexer finds the quoted texts the
// scanner finds, including after @ (where the quote kinds differ in
// whether a backslash escapes), and that a disagreement is reported.
func TestReadersAgree(t *testing.T) {
	cases := []struct {
		in   string
		opts Options
	}{
		{"SELECT @`x\\`; DELETE FROM victim; SELECT 1 `victim`", Options{}},
		{`SELECT @"x\"; DELETE FROM victim; SELECT 1 "victim"`, Options{ANSIQuotes: true}},
		{`SELECT @'x\''; DELETE FROM victim; SELECT 1 'victim'`, Options{}},
		{`SELECT @"x\""; DELETE FROM victim`, Options{}},
		{`SELECT @'x\'; DELETE FROM victim; SELECT 1 'victim'`, Options{NoBackslashEscapes: true}},
		{"SELECT @@`x\\`, 'a\\'b', _utf8mb4'c', N'd', x'41', b'1', 'u'@'h', `q``q`", Options{}},
	}
	for _, c := range cases {
		c.opts.Server = maria1011
		n, err := normalize(c.in, c.opts)
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		lo := lexer.Options{ANSIQuotes: c.opts.ANSIQuotes, NoBackslashEscapes: c.opts.NoBackslashEscapes}
		if at, ok := n.Agrees(lo); !ok {
			t.Errorf("%q: readers disagree at %d", c.in, at)
		}
	}
}

// TestDisagreementRefused checks that a text the two readers split
// differently is refused rather than rewritten.
func TestDisagreementRefused(t *testing.T) {
	e := NewEngine(0)
	// The scanner ends the quoted name at the first backquote after x\;
	// a lexer taking backslash for an escape there would read on.
	a := e.analyze("SELECT @`x\\`; DELETE FROM victim; SELECT 1 `victim`", Options{Server: maria1011})
	if len(a.Statements) != 3 || a.Statements[1].Class != ClassWrite {
		t.Fatalf("statements = %+v, want the DELETE read as the second of three", a.Statements)
	}
	n := &lexer.Normalized{Text: "SELECT 'a', `b`", Literals: [][2]int32{{7, 10}}}
	if _, ok := n.Agrees(lexer.Options{}); ok {
		t.Error("a quoted name the scanner did not find was accepted")
	}
	n.Literals = append(n.Literals, [2]int32{12, 15}, [2]int32{20, 22})
	if _, ok := n.Agrees(lexer.Options{}); ok {
		t.Error("a quoted text the lexer did not find was accepted")
	}
	n = &lexer.Normalized{Text: "SELECT 1 # x", Literals: nil}
	if _, ok := n.Agrees(lexer.Options{}); ok {
		t.Error("a comment left in a normalized text was accepted")
	}
}
