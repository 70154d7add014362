package rewrite

import (
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite/internal/normcases"
	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

var (
	maria1011 = Server{Flavor: MariaDB, Version: 101119}
	mysql80   = Server{Flavor: MySQL, Version: 80036}
)

func TestNormalize(t *testing.T) {
	for _, c := range normcases.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			o := Options{Server: c.Opts.Server, ANSIQuotes: c.Opts.ANSIQuotes, NoBackslashEscapes: c.Opts.NoBackslashEscapes,
				Charset: c.Opts.Charset}
			got, err := Normalize(c.In, o)
			c.Check(t, got, err)
		})
	}
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
