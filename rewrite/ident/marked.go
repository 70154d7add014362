package ident

import (
	"strconv"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

// Marked is a text with every token spelled like a referenced name
// replaced by a unique backquoted marker.
type Marked struct {
	Text   string
	src    string
	toks   []lexer.Token
	tokens map[string]int // marker, in lower case -> token index
}

// Mark is text (tokens toks, chains chains) with every part of a chain
// spelled like one of names (lower case) replaced by a marker.
func Mark(text string, toks []lexer.Token, chains []Chain, names map[string]int32) *Marked {
	var b strings.Builder
	last := 0
	mk := &Marked{src: text, toks: toks, tokens: map[string]int{}}
	for _, ch := range chains {
		for pi := 0; pi < ch.N; pi++ {
			ti := ch.Tok(pi)
			t := toks[ti]
			if _, ok := names[strings.ToLower(lexer.IdentText(text, t))]; !ok {
				continue
			}
			m := MarkerPrefix + strconv.Itoa(ti)
			mk.tokens[strings.ToLower(m)] = ti
			b.WriteString(text[last:t.Start])
			b.WriteString("`" + m + "`")
			last = int(t.End)
		}
	}
	b.WriteString(text[last:])
	mk.Text = b.String()
	return mk
}

// Orig is the name marker m stands for, with its token's index; ok is
// false when m is no marker (m itself is returned).
func (mk *Marked) Orig(m string) (string, int, bool) {
	ti, ok := mk.tokens[strings.ToLower(m)]
	if !ok {
		return m, -1, false
	}
	return lexer.IdentText(mk.src, mk.toks[ti]), ti, true
}

// Name is the name m stands for.
func (mk *Marked) Name(m string) string {
	n, _, _ := mk.Orig(m)
	return n
}

// Names are the set of markers' names, in lower case.
func (mk *Marked) Names(markers map[string]bool) map[string]bool {
	out := map[string]bool{}
	for m := range markers {
		out[strings.ToLower(mk.Name(m))] = true
	}
	return out
}

// MarkerPrefix starts the markers Mark puts for names.
const MarkerPrefix = "__sqlfork_m"
