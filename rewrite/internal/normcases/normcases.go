// Package normcases holds the cases of Normalize — how the server reads a
// text's comments, version comments and multi-byte characters — that
// rewrite and rewrite/lexer both check (each through its own Normalize),
// and the check of an answer (Case.Check). It is for tests only.
package normcases

import (
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite/dialect"
)

// Servers the cases read under.
var (
	MariaDB1011 = dialect.Server{Flavor: dialect.MariaDB, Version: 101119}
	MySQL80     = dialect.Server{Flavor: dialect.MySQL, Version: 80036}
)

// Opts are the session state a case is read under.
type Opts struct {
	Server                         dialect.Server
	ANSIQuotes, NoBackslashEscapes bool
	Charset                        string
}

// Case is a text, how it is read, and what Normalize makes of it: Want,
// or an error containing Err.
type Case struct {
	Name string
	In   string
	Opts Opts
	Want string // "" with Err set
	Err  string
}

// Check checks what a Normalize answered to the case: the text got, or,
// when the case wants an error, an error holding Err.
func (c Case) Check(t *testing.T, got string, err error) {
	t.Helper()
	if c.Err != "" {
		if err == nil || !strings.Contains(err.Error(), c.Err) {
			t.Fatalf("Normalize(%q) = %q, %v; want an error containing %q", c.In, got, err, c.Err)
		}
		return
	}
	if err != nil {
		t.Fatalf("Normalize(%q): %v", c.In, err)
	}
	if got != c.Want {
		t.Fatalf("Normalize(%q)\n got  %q\n want %q", c.In, got, c.Want)
	}
}

// Cases are the cases, each time a fresh slice.
func Cases() []Case {
	return []Case{
		{"plain", "SELECT 1", Opts{Server: MariaDB1011}, "SELECT 1", ""},
		{"comment", "SELECT /* x */ 1", Opts{Server: MariaDB1011}, "SELECT         1", ""},
		{"newer version skipped with its quote", "SELECT 1 /*!999999 ' */ , 2 -- ' */", Opts{Server: MariaDB1011},
			Blanked("SELECT 1 /*!999999 ' */ , 2 -- ' */", "/*!999999 ' */", "-- ' */"), ""},
		{"own version runs", "SELECT 1 /*!101119 +5 */", Opts{Server: MariaDB1011}, Blanked("SELECT 1 /*!101119 +5 */", "/*!101119", "*/"), ""},
		{"next version skipped", "SELECT 1 /*!101120 +5 */", Opts{Server: MariaDB1011}, Blanked("SELECT 1 /*!101120 +5 */", "/*!101120 +5 */"), ""},
		{"mysql 5.7 range skipped", "SELECT 1 /*!50700 +5 */", Opts{Server: MariaDB1011}, Blanked("SELECT 1 /*!50700 +5 */", "/*!50700 +5 */"), ""},
		{"mysql 5.7 range runs with M", "SELECT 1 /*M!50700 +5 */", Opts{Server: MariaDB1011}, Blanked("SELECT 1 /*M!50700 +5 */", "/*M!50700", "*/"), ""},
		{"M without version", "SELECT 1 /*M! +5 */", Opts{Server: MariaDB1011}, Blanked("SELECT 1 /*M! +5 */", "/*M!", "*/"), ""},
		{"old version runs", "SELECT 1 /*!40101 +5 */", Opts{Server: MariaDB1011}, Blanked("SELECT 1 /*!40101 +5 */", "/*!40101", "*/"), ""},
		{"fewer than five digits are code", "SELECT 1 /*!123 +5 */", Opts{Server: MariaDB1011}, Blanked("SELECT 1 /*!123 +5 */", "/*!", "*/"), ""},
		{"seven digits: six are the version", "SELECT 1 /*!1234567 +5 */", Opts{Server: MariaDB1011}, Blanked("SELECT 1 /*!1234567 +5 */", "/*!1234567 +5 */"), ""},
		{"nested comment in a skipped one", "SELECT 1 /*!99999 +5 /* x */ +7 */ + 100", Opts{Server: MariaDB1011},
			Blanked("SELECT 1 /*!99999 +5 /* x */ +7 */ + 100", "/*!99999 +5 /* x */ +7 */"), ""},
		{"regular comment in an executed one", "SELECT 1 /*! +2 /* +3 */ +4 */", Opts{Server: MariaDB1011},
			Blanked("SELECT 1 /*! +2 /* +3 */ +4 */", "/*!", "/* +3 */", "*/"), ""},
		{"executed inside executed", "SELECT 1 /*! +2 /*! +3 */ +4 */", Opts{Server: MariaDB1011},
			Blanked("SELECT 1 /*! +2 /*! +3 */ +4 */", "/*!", "/*!", "*/"), ""},
		{"statements do not share a comment", "SELECT 1 /*! ; SELECT 2 */", Opts{Server: MariaDB1011},
			Blanked("SELECT 1 /*! ; SELECT 2 */", "/*!"), ""},
		{"dash comment needs space or control", "SELECT 1 --x", Opts{Server: MariaDB1011}, "SELECT 1 --x", ""},
		{"dash comment with a control byte", "SELECT 1 --\x01 +5\n+1", Opts{Server: MariaDB1011}, Blanked("SELECT 1 --\x01 +5\n+1", "--\x01 +5"), ""},
		{"dash comment at the end", "SELECT 1 --", Opts{Server: MariaDB1011}, "SELECT 1   ", ""},
		{"dash comment before trailing semicolons", "SELECT 1 --;; ", Opts{Server: MariaDB1011}, Blanked("SELECT 1 --;; ", "--;; "), ""},
		{"hash comment", "SELECT 1 # x\n, 2", Opts{Server: MariaDB1011}, Blanked("SELECT 1 # x\n, 2", "# x"), ""},
		{"dashes before a semicolon and a comment", "SELECT 1--;#x", Opts{Server: MariaDB1011}, "", "before a final ';'"},
		{"dashes before a semicolon, a comment and more", "SELECT 1--;#x\n2", Opts{Server: MariaDB1011}, Blanked("SELECT 1--;#x\n2", "#x"), ""},
		{"semicolon and a comment at the end", "SELECT 1;#x", Opts{Server: MariaDB1011}, Blanked("SELECT 1;#x", "#x"), ""},
		{"NUL ends a comment, then is code", "SELECT 1 -- x\x00 , 2", Opts{Server: MariaDB1011}, "", "NUL byte"},
		{"NUL in a string is fine", "SELECT 'a\x00b'", Opts{Server: MariaDB1011}, "SELECT 'a\x00b'", ""},
		{"unclosed comment", "SELECT 1 /* x", Opts{Server: MariaDB1011}, "", "not closed"},
		{"unclosed executable comment", "SELECT 1 /*! x", Opts{Server: MariaDB1011}, "", "not closed"},
		{"unclosed string", "SELECT 'a", Opts{Server: MariaDB1011}, "", "not closed"},
		{"backslash escapes a quote", `SELECT 'a\'', 1`, Opts{Server: MariaDB1011}, `SELECT 'a\'', 1`, ""},
		{"no backslash escapes", `SELECT 'a\' /* x */`, Opts{Server: MariaDB1011, NoBackslashEscapes: true},
			Blanked(`SELECT 'a\' /* x */`, "/* x */"), ""},
		{"comment inside a string stays", "SELECT '/* x */'", Opts{Server: MariaDB1011}, "SELECT '/* x */'", ""},
		{"ansi quotes", `SELECT "a /* b" /* c */`, Opts{Server: MariaDB1011, ANSIQuotes: true}, Blanked(`SELECT "a /* b" /* c */`, "/* c */"), ""},
		{"double quotes are strings", `SELECT "a'b" /* c */`, Opts{Server: MariaDB1011}, Blanked(`SELECT "a'b" /* c */`, "/* c */"), ""},
		{"backquote", "SELECT 1 AS `a/*b` /* c */", Opts{Server: MariaDB1011}, Blanked("SELECT 1 AS `a/*b` /* c */", "/* c */"), ""},
		{"hex literal", "SELECT x'4142' /* c */", Opts{Server: MariaDB1011}, Blanked("SELECT x'4142' /* c */", "/* c */"), ""},
		{"bad hex literal", "SELECT x'4z'", Opts{Server: MariaDB1011}, "", "digits"},
		{"gbk trail backslash ends the string", "SELECT '\xBF\\'; INSERT INTO t VALUES (1); -- '", Opts{Server: MariaDB1011, Charset: "gbk"},
			"SELECT '\xBFx'; INSERT INTO t VALUES (1);     ", ""},
		{"latin1 reads the same bytes as one string", "SELECT '\xBF\\'; x -- '", Opts{Server: MariaDB1011, Charset: "latin1"},
			"SELECT '\xBF\\'; x -- '", ""},
		{"gbk name with a punctuation trail", "SELECT a\xBF\\b", Opts{Server: MariaDB1011, Charset: "gbk"}, "", "name"},
		{"gbk name with a letter trail", "SELECT a\xBFAb", Opts{Server: MariaDB1011, Charset: "gbk"}, "SELECT a\xBFAb", ""},
		{"gbk quoted name with a backquote trail", "SELECT 1 AS `\xBF`` `", Opts{Server: MariaDB1011, Charset: "gbk"}, "", "quoted identifier"},
		{"gbk quoted name with a letter trail", "SELECT 1 AS `\xBFA`", Opts{Server: MariaDB1011, Charset: "gbk"}, "SELECT 1 AS `\xBFA`", ""},
		{"euckr lead before a backslash in an ANSI name", "SELECT 1 AS \"\xE0\\\"", Opts{Server: MariaDB1011, Charset: "euckr", ANSIQuotes: true},
			"SELECT 1 AS \"\xE00\"", ""},
		{"gbk after @", "SELECT @\xBF\\'", Opts{Server: MariaDB1011, Charset: "gbk"}, "", "after @"},
		{"unknown charset", "SELECT '\xE4'", Opts{Server: MariaDB1011, Charset: "klingon"}, "", "character set"},
		{"unknown charset, ASCII text", "SET NAMES utf8mb4 /* x */", Opts{Server: MariaDB1011, Charset: "klingon"},
			Blanked("SET NAMES utf8mb4 /* x */", "/* x */"), ""},
		{"unknown server: old versions run", "SELECT 1 /*!40101 +5 */", Opts{}, Blanked("SELECT 1 /*!40101 +5 */", "/*!40101", "*/"), ""},
		{"unknown server: 5.7+ versions refused", "SELECT 1 /*!50700 +5 */", Opts{}, "", "server version"},
		{"unknown server: M refused", "SELECT 1 /*M! +5 */", Opts{}, "", "only MariaDB"},
		{"mysql: M is a comment", "SELECT 1 /*M! +5 */", Opts{Server: MySQL80}, Blanked("SELECT 1 /*M! +5 */", "/*M! +5 */"), ""},
		{"mysql: 8.0 version runs", "SELECT 1 /*!80000 +5 */", Opts{Server: MySQL80}, Blanked("SELECT 1 /*!80000 +5 */", "/*!80000", "*/"), ""},
		{"mysql: newer version skipped", "SELECT 1 /*!80037 +5 */", Opts{Server: MySQL80}, Blanked("SELECT 1 /*!80037 +5 */", "/*!80037 +5 */"), ""},
		{"comment right after --", "SELECT 0 --/*!*/@v1:=1", Opts{Server: MariaDB1011}, "", "two minus signs"},
		{"hash comment right after --", "SELECT 0 --#x\n", Opts{Server: MariaDB1011}, "", "two minus signs"},
		{"executable comment end right after --", "SELECT 1 /*! - --*/ 1", Opts{Server: MariaDB1011}, "", "two minus signs"},
		{"-- then a byte others read as space", "SELECT 1 --\x85x", Opts{Server: MariaDB1011, Charset: "latin1"}, "", "white space"},
		{"-- then latin1 no-break space is a comment", "SELECT 1 --\xA0x", Opts{Server: MariaDB1011, Charset: "latin1"},
			Blanked("SELECT 1 --\xA0x", "--\xA0x"), ""},
		{"a last NUL byte ends the text", "SELECT 1\x00", Opts{Server: MariaDB1011}, "SELECT 1 ", ""},
		{"backslash in an ANSI-quoted name", `SELECT 1 AS "a\"; SELECT 2 -- "`, Opts{Server: MariaDB1011, ANSIQuotes: true},
			Blanked(`SELECT 1 AS "a0"; SELECT 2 -- "`, `-- "`), ""},
		{"backslash in an ANSI-quoted name, no escapes", `SELECT 1 AS "a\"`, Opts{Server: MariaDB1011, ANSIQuotes: true, NoBackslashEscapes: true},
			`SELECT 1 AS "a\"`, ""},
		{"mysql: six digits are ambiguous", "SELECT 1 /*!800001 +5 */", Opts{Server: MySQL80}, "", "server version"},
	}
}

// Blanked is s with each of parts, found in turn from left to right,
// turned into spaces (line breaks kept).
func Blanked(s string, parts ...string) string {
	from := 0
	for _, p := range parts {
		i := strings.Index(s[from:], p) + from
		if i < from {
			panic("Blanked: " + p + " not in " + s)
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
