package lexer

import (
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite/charset"
	"github.com/sqlfork/sqlfork-proxy/rewrite/dialect"
)

var (
	maria1011 = dialect.Server{Flavor: dialect.MariaDB, Version: 101119}
	mysql80   = dialect.Server{Flavor: dialect.MySQL, Version: 80036}
)

// testOpts are the session state Normalize reads under.
type testOpts struct {
	Server                         dialect.Server
	ANSIQuotes, NoBackslashEscapes bool
	Charset                        string
}

// testCharsets are rows of rewrite's charsetTable ("" is utf8mb4).
var testCharsets = map[string]*charset.Info{
	"utf8mb4": {Name: "utf8mb4", MB: charset.UTF8, Space: charset.ByteSet{0x0000000100003e00, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000}, DashEnd: charset.ByteSet{0x00000001ffffffff, 0x8000000000000000, 0x0000000000000000, 0x0000000000000000}},
	"gbk":     {Name: "gbk", MB: charset.GBK, Space: charset.ByteSet{0x0000000100003e00, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000}, DashEnd: charset.ByteSet{0x00000001ffffffff, 0x8000000000000000, 0x0000000000000000, 0x0000000000000000}},
	"latin1":  {Name: "latin1", MB: charset.SingleByte, Space: charset.ByteSet{0x0000000100003e00, 0x0000000000000000, 0x0000000100000000, 0x0000000000000000}, DashEnd: charset.ByteSet{0x00000001ffffffff, 0x8000000000000000, 0x0000000100000000, 0x0000000000000000}, Ident: charset.ByteSet{0x0000000000000000, 0x0000000000000000, 0x00000000d4005408, 0xff7fffffff7fffff}},
	"euckr":   {Name: "euckr", MB: charset.EUCKR, Space: charset.ByteSet{0x0000000100003e00, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000}, DashEnd: charset.ByteSet{0x00000001ffffffff, 0x8000000000000000, 0x0000000000000000, 0x0000000000000000}},
}

func init() { testCharsets[""] = testCharsets["utf8mb4"] }

// normalize is Normalize under o, the text as a string.
func normalize(sql string, cs *charset.Info, o testOpts) (string, *Unreadable) {
	n, u := Normalize(sql, cs, Options{ANSIQuotes: o.ANSIQuotes, NoBackslashEscapes: o.NoBackslashEscapes}, o.Server)
	if u != nil {
		return "", u
	}
	return n.Text, nil
}

func TestNormalize(t *testing.T) {
	cases := []struct {
		name string
		in   string
		opts testOpts
		want string // "" with err set
		err  string
	}{
		{"plain", "SELECT 1", testOpts{Server: maria1011}, "SELECT 1", ""},
		{"comment", "SELECT /* x */ 1", testOpts{Server: maria1011}, "SELECT         1", ""},
		{"newer version skipped with its quote", "SELECT 1 /*!999999 ' */ , 2 -- ' */", testOpts{Server: maria1011},
			blanked("SELECT 1 /*!999999 ' */ , 2 -- ' */", "/*!999999 ' */", "-- ' */"), ""},
		{"own version runs", "SELECT 1 /*!101119 +5 */", testOpts{Server: maria1011}, blanked("SELECT 1 /*!101119 +5 */", "/*!101119", "*/"), ""},
		{"next version skipped", "SELECT 1 /*!101120 +5 */", testOpts{Server: maria1011}, blanked("SELECT 1 /*!101120 +5 */", "/*!101120 +5 */"), ""},
		{"mysql 5.7 range skipped", "SELECT 1 /*!50700 +5 */", testOpts{Server: maria1011}, blanked("SELECT 1 /*!50700 +5 */", "/*!50700 +5 */"), ""},
		{"mysql 5.7 range runs with M", "SELECT 1 /*M!50700 +5 */", testOpts{Server: maria1011}, blanked("SELECT 1 /*M!50700 +5 */", "/*M!50700", "*/"), ""},
		{"M without version", "SELECT 1 /*M! +5 */", testOpts{Server: maria1011}, blanked("SELECT 1 /*M! +5 */", "/*M!", "*/"), ""},
		{"old version runs", "SELECT 1 /*!40101 +5 */", testOpts{Server: maria1011}, blanked("SELECT 1 /*!40101 +5 */", "/*!40101", "*/"), ""},
		{"fewer than five digits are code", "SELECT 1 /*!123 +5 */", testOpts{Server: maria1011}, blanked("SELECT 1 /*!123 +5 */", "/*!", "*/"), ""},
		{"seven digits: six are the version", "SELECT 1 /*!1234567 +5 */", testOpts{Server: maria1011}, blanked("SELECT 1 /*!1234567 +5 */", "/*!1234567 +5 */"), ""},
		{"nested comment in a skipped one", "SELECT 1 /*!99999 +5 /* x */ +7 */ + 100", testOpts{Server: maria1011},
			blanked("SELECT 1 /*!99999 +5 /* x */ +7 */ + 100", "/*!99999 +5 /* x */ +7 */"), ""},
		{"regular comment in an executed one", "SELECT 1 /*! +2 /* +3 */ +4 */", testOpts{Server: maria1011},
			blanked("SELECT 1 /*! +2 /* +3 */ +4 */", "/*!", "/* +3 */", "*/"), ""},
		{"executed inside executed", "SELECT 1 /*! +2 /*! +3 */ +4 */", testOpts{Server: maria1011},
			blanked("SELECT 1 /*! +2 /*! +3 */ +4 */", "/*!", "/*!", "*/"), ""},
		{"statements do not share a comment", "SELECT 1 /*! ; SELECT 2 */", testOpts{Server: maria1011},
			blanked("SELECT 1 /*! ; SELECT 2 */", "/*!"), ""},
		{"dash comment needs space or control", "SELECT 1 --x", testOpts{Server: maria1011}, "SELECT 1 --x", ""},
		{"dash comment with a control byte", "SELECT 1 --\x01 +5\n+1", testOpts{Server: maria1011}, blanked("SELECT 1 --\x01 +5\n+1", "--\x01 +5"), ""},
		{"dash comment at the end", "SELECT 1 --", testOpts{Server: maria1011}, "SELECT 1   ", ""},
		{"dash comment before trailing semicolons", "SELECT 1 --;; ", testOpts{Server: maria1011}, blanked("SELECT 1 --;; ", "--;; "), ""},
		{"hash comment", "SELECT 1 # x\n, 2", testOpts{Server: maria1011}, blanked("SELECT 1 # x\n, 2", "# x"), ""},
		{"dashes before a semicolon and a comment", "SELECT 1--;#x", testOpts{Server: maria1011}, "", "before a final ';'"},
		{"dashes before a semicolon, a comment and more", "SELECT 1--;#x\n2", testOpts{Server: maria1011}, blanked("SELECT 1--;#x\n2", "#x"), ""},
		{"semicolon and a comment at the end", "SELECT 1;#x", testOpts{Server: maria1011}, blanked("SELECT 1;#x", "#x"), ""},
		{"NUL ends a comment, then is code", "SELECT 1 -- x\x00 , 2", testOpts{Server: maria1011}, "", "NUL byte"},
		{"NUL in a string is fine", "SELECT 'a\x00b'", testOpts{Server: maria1011}, "SELECT 'a\x00b'", ""},
		{"unclosed comment", "SELECT 1 /* x", testOpts{Server: maria1011}, "", "not closed"},
		{"unclosed executable comment", "SELECT 1 /*! x", testOpts{Server: maria1011}, "", "not closed"},
		{"unclosed string", "SELECT 'a", testOpts{Server: maria1011}, "", "not closed"},
		{"backslash escapes a quote", `SELECT 'a\'', 1`, testOpts{Server: maria1011}, `SELECT 'a\'', 1`, ""},
		{"no backslash escapes", `SELECT 'a\' /* x */`, testOpts{Server: maria1011, NoBackslashEscapes: true},
			blanked(`SELECT 'a\' /* x */`, "/* x */"), ""},
		{"comment inside a string stays", "SELECT '/* x */'", testOpts{Server: maria1011}, "SELECT '/* x */'", ""},
		{"ansi quotes", `SELECT "a /* b" /* c */`, testOpts{Server: maria1011, ANSIQuotes: true}, blanked(`SELECT "a /* b" /* c */`, "/* c */"), ""},
		{"double quotes are strings", `SELECT "a'b" /* c */`, testOpts{Server: maria1011}, blanked(`SELECT "a'b" /* c */`, "/* c */"), ""},
		{"backquote", "SELECT 1 AS `a/*b` /* c */", testOpts{Server: maria1011}, blanked("SELECT 1 AS `a/*b` /* c */", "/* c */"), ""},
		{"hex literal", "SELECT x'4142' /* c */", testOpts{Server: maria1011}, blanked("SELECT x'4142' /* c */", "/* c */"), ""},
		{"bad hex literal", "SELECT x'4z'", testOpts{Server: maria1011}, "", "digits"},
		{"gbk trail backslash ends the string", "SELECT '\xBF\\'; INSERT INTO t VALUES (1); -- '", testOpts{Server: maria1011, Charset: "gbk"},
			"SELECT '\xBFx'; INSERT INTO t VALUES (1);     ", ""},
		{"latin1 reads the same bytes as one string", "SELECT '\xBF\\'; x -- '", testOpts{Server: maria1011, Charset: "latin1"},
			"SELECT '\xBF\\'; x -- '", ""},
		{"gbk name with a punctuation trail", "SELECT a\xBF\\b", testOpts{Server: maria1011, Charset: "gbk"}, "", "name"},
		{"gbk name with a letter trail", "SELECT a\xBFAb", testOpts{Server: maria1011, Charset: "gbk"}, "SELECT a\xBFAb", ""},
		{"gbk quoted name with a backquote trail", "SELECT 1 AS `\xBF`` `", testOpts{Server: maria1011, Charset: "gbk"}, "", "quoted identifier"},
		{"gbk quoted name with a letter trail", "SELECT 1 AS `\xBFA`", testOpts{Server: maria1011, Charset: "gbk"}, "SELECT 1 AS `\xBFA`", ""},
		{"euckr lead before a backslash in an ANSI name", "SELECT 1 AS \"\xE0\\\"", testOpts{Server: maria1011, Charset: "euckr", ANSIQuotes: true},
			"SELECT 1 AS \"\xE00\"", ""},
		{"gbk after @", "SELECT @\xBF\\'", testOpts{Server: maria1011, Charset: "gbk"}, "", "after @"},
		{"unknown charset", "SELECT '\xE4'", testOpts{Server: maria1011, Charset: "klingon"}, "", "character set"},
		{"unknown charset, ASCII text", "SET NAMES utf8mb4 /* x */", testOpts{Server: maria1011, Charset: "klingon"},
			blanked("SET NAMES utf8mb4 /* x */", "/* x */"), ""},
		{"unknown server: old versions run", "SELECT 1 /*!40101 +5 */", testOpts{}, blanked("SELECT 1 /*!40101 +5 */", "/*!40101", "*/"), ""},
		{"unknown server: 5.7+ versions refused", "SELECT 1 /*!50700 +5 */", testOpts{}, "", "server version"},
		{"unknown server: M refused", "SELECT 1 /*M! +5 */", testOpts{}, "", "only MariaDB"},
		{"mysql: M is a comment", "SELECT 1 /*M! +5 */", testOpts{Server: mysql80}, blanked("SELECT 1 /*M! +5 */", "/*M! +5 */"), ""},
		{"mysql: 8.0 version runs", "SELECT 1 /*!80000 +5 */", testOpts{Server: mysql80}, blanked("SELECT 1 /*!80000 +5 */", "/*!80000", "*/"), ""},
		{"mysql: newer version skipped", "SELECT 1 /*!80037 +5 */", testOpts{Server: mysql80}, blanked("SELECT 1 /*!80037 +5 */", "/*!80037 +5 */"), ""},
		{"comment right after --", "SELECT 0 --/*!*/@v1:=1", testOpts{Server: maria1011}, "", "two minus signs"},
		{"hash comment right after --", "SELECT 0 --#x\n", testOpts{Server: maria1011}, "", "two minus signs"},
		{"executable comment end right after --", "SELECT 1 /*! - --*/ 1", testOpts{Server: maria1011}, "", "two minus signs"},
		{"-- then a byte others read as space", "SELECT 1 --\x85x", testOpts{Server: maria1011, Charset: "latin1"}, "", "white space"},
		{"-- then latin1 no-break space is a comment", "SELECT 1 --\xA0x", testOpts{Server: maria1011, Charset: "latin1"},
			blanked("SELECT 1 --\xA0x", "--\xA0x"), ""},
		{"a last NUL byte ends the text", "SELECT 1\x00", testOpts{Server: maria1011}, "SELECT 1 ", ""},
		{"backslash in an ANSI-quoted name", `SELECT 1 AS "a\"; SELECT 2 -- "`, testOpts{Server: maria1011, ANSIQuotes: true},
			blanked(`SELECT 1 AS "a0"; SELECT 2 -- "`, `-- "`), ""},
		{"backslash in an ANSI-quoted name, no escapes", `SELECT 1 AS "a\"`, testOpts{Server: maria1011, ANSIQuotes: true, NoBackslashEscapes: true},
			`SELECT 1 AS "a\"`, ""},
		{"mysql: six digits are ambiguous", "SELECT 1 /*!800001 +5 */", testOpts{Server: mysql80}, "", "server version"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cs, ok := testCharsets[c.opts.Charset]
			if !ok {
				t.Skip("a character set only rewrite knows of")
			}
			got, err := normalize(c.in, cs, c.opts)
			if c.err != "" {
				if err == nil || !strings.Contains(err.What, c.err) {
					t.Fatalf("Normalize(%q) = %q, %v; want an error containing %q", c.in, got, err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Normalize(%q): %+v", c.in, err)
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
