package lexer

import (
	"slices"
	"testing"
)

// kinds is the kinds and texts of src's tokens under o.
func kinds(src string, o Options) (ks []Kind, texts []string) {
	for _, t := range Lex(src, o) {
		ks = append(ks, t.Kind)
		texts = append(texts, src[t.Start:t.End])
	}
	return ks, texts
}

func TestLex(t *testing.T) {
	cases := []struct {
		src   string
		o     Options
		kinds []Kind
		texts []string
	}{
		{"SELECT a FROM t", Options{}, []Kind{Ident, Ident, Ident, Ident}, []string{"SELECT", "a", "FROM", "t"}},
		{"`a``b` \"c\"", Options{}, []Kind{Quoted, String}, []string{"`a``b`", `"c"`}},
		{"\"c\"", Options{ANSIQuotes: true}, []Kind{Quoted}, []string{`"c"`}},
		{`'a\'b'`, Options{}, []Kind{String}, []string{`'a\'b'`}},
		{`'a\' 'b'`, Options{NoBackslashEscapes: true}, []Kind{String, String}, []string{`'a\'`, `'b'`}},
		{"x'1F' b'01' N'z' _utf8mb4'x'", Options{}, []Kind{String, String, String, String},
			[]string{"x'1F'", "b'01'", "N'z'", "_utf8mb4'x'"}},
		// 1e, 1a and 1ea10 are identifiers to the server (SELECT 1e: unknown
		// column '1e'); 1e+1 is a number.
		{"1.5e-3 .5 0x1F 0b1 123abg 1e 0xZ 1a 1ea10 1e+1", Options{}, []Kind{Number, Number, Number, Number, Ident, Ident, Ident, Ident, Ident, Number},
			[]string{"1.5e-3", ".5", "0x1F", "0b1", "123abg", "1e", "0xZ", "1a", "1ea10", "1e+1"}},
		{"t.5", Options{}, []Kind{Ident, Punct, Number}, []string{"t", ".", "5"}},
		{"@v @@session.x @'u' @`q` ?", Options{}, []Kind{Variable, Variable, Variable, Variable, Variable},
			[]string{"@v", "@@session.x", "@'u'", "@`q`", "?"}},
		{"a # c\nb -- c\nc /* c */ d --x", Options{}, []Kind{Ident, Comment, Ident, Comment, Ident, Comment, Ident, Punct, Punct, Ident},
			[]string{"a", "# c", "b", "-- c", "c", "/* c */", "d", "-", "-", "x"}},
		{"/* open", Options{}, []Kind{Comment}, []string{"/* open"}},
		{"'open", Options{}, []Kind{String}, []string{"'open"}},
		{"a<>b", Options{}, []Kind{Ident, Punct, Punct, Ident}, []string{"a", "<", ">", "b"}},
	}
	for _, c := range cases {
		ks, texts := kinds(c.src, c.o)
		if !slices.Equal(ks, c.kinds) || !slices.Equal(texts, c.texts) {
			t.Errorf("Lex(%q, %+v) = %v %q, want %v %q", c.src, c.o, ks, texts, c.kinds, c.texts)
		}
	}
}

func TestIdentText(t *testing.T) {
	for src, want := range map[string]string{"abc": "abc", "`a``b`": "a`b", "`a": "a", "\"x\"\"y\"": "x\"y"} {
		toks := Lex(src, Options{ANSIQuotes: true})
		if got := IdentText(src, toks[0]); got != want {
			t.Errorf("IdentText(%q) = %q, want %q", src, got, want)
		}
	}
}

func TestWordPunctClosing(t *testing.T) {
	src := "select f(a, (b)) ; `x`"
	toks := Lex(src, Options{})
	if w := Word(src, toks, 0); w != "SELECT" {
		t.Errorf("Word(0) = %q", w)
	}
	if w := Word(src, toks, len(toks)-1); w != "" {
		t.Errorf("Word of a quoted name = %q", w)
	}
	if w := Word(src, toks, -1) + Word(src, toks, len(toks)); w != "" {
		t.Errorf("Word out of range = %q", w)
	}
	if !PunctAt(src, toks, 2, '(') || PunctAt(src, toks, 1, '(') || PunctAt(src, toks, 99, '(') {
		t.Error("PunctAt")
	}
	if c := Closing(src, toks, 2); c != 8 {
		t.Errorf("Closing(2) = %d, want 8", c)
	}
	if c := Closing(src, Lex("f(a ; b)", Options{}), 1); c != 0 {
		t.Errorf("Closing across ';' = %d, want 0", c)
	}
	if c := Closing(src, Lex("f(a", Options{}), 1); c != 0 {
		t.Errorf("Closing unclosed = %d, want 0", c)
	}
}
