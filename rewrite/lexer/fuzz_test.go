package lexer

import (
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite/corpus"
)

// Fuzz target. Seeds are every corpus statement; run it with e.g.
//
//	go test -run='^$' -fuzz=FuzzLex -fuzztime=60s ./rewrite/lexer/

// FuzzLex checks that Lex never panics and that its tokens are non-empty,
// in order, non-overlapping, within bounds and cover every byte that is not
// white space.
func FuzzLex(f *testing.F) {
	for _, c := range corpus.Cases() {
		f.Add(c.SQL, false, false)
		f.Add(c.SQL, true, true)
	}
	f.Fuzz(func(t *testing.T, src string, ansiQuotes, noBackslashEscapes bool) {
		toks := Lex(src, Options{ANSIQuotes: ansiQuotes, NoBackslashEscapes: noBackslashEscapes})
		pos := 0
		for i, tok := range toks {
			start, end := int(tok.Start), int(tok.End)
			if start < pos || start >= end || end > len(src) {
				t.Fatalf("token %d [%d,%d) out of order, empty or out of bounds (previous end %d, len %d) in %q",
					i, tok.Start, tok.End, pos, len(src), src)
			}
			for j := pos; j < start; j++ {
				if !IsSpace(src[j]) {
					t.Fatalf("byte %d (%q) before token %d is not covered by any token in %q", j, src[j], i, src)
				}
			}
			if tok.Kind == Ident || tok.Kind == Quoted {
				_ = IdentText(src, tok)
			}
			pos = end
		}
		for j := pos; j < len(src); j++ {
			if !IsSpace(src[j]) {
				t.Fatalf("trailing byte %d (%q) is not covered by any token in %q", j, src[j], src)
			}
		}
	})
}
