// Package ident finds identifiers in a statement's tokens: the dotted
// chains that may name tables and the role each part can play, and a
// text with the names the parser is to place marked.
package ident

import (
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite/collect"
	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
	"github.com/sqlfork/sqlfork-proxy/sqlname"
)

// Chain is a dotted identifier in the text: a, a.b or a.b.c, possibly
// followed by .* (star).
type Chain struct {
	First int // token index of the first part; parts are every other token
	N     int // number of parts
	Star  bool
}

// Tok is the token index of part k.
func (c Chain) Tok(k int) int { return c.First + 2*k }

// Chains finds the identifier chains of toks. Bare reserved words are
// not identifiers unless they follow a dot.
func Chains(src string, toks []lexer.Token, reserved map[string]bool) []Chain {
	return ChainsInto(nil, src, toks, reserved)
}

// ChainsInto is Chains appending to out (whose contents it
// discards).
func ChainsInto(out []Chain, src string, toks []lexer.Token, reserved map[string]bool) []Chain {
	out = out[:0]
	isPunct := func(i int, c byte) bool {
		return i < len(toks) && toks[i].Kind == lexer.Punct && src[toks[i].Start] == c
	}
	isName := func(i int, afterDot bool) bool {
		if i >= len(toks) {
			return false
		}
		switch toks[i].Kind {
		case lexer.Quoted:
			return true
		case lexer.Ident:
			if afterDot {
				return true
			}
			var buf [64]byte
			w, ok := LowerInto(&buf, src[toks[i].Start:toks[i].End])
			return !ok || !reserved[string(w)]
		}
		return false
	}
	for i := 0; i < len(toks); i++ {
		if !isName(i, false) || (i > 0 && isPunct(i-1, '.')) {
			continue
		}
		c := Chain{First: i, N: 1}
		j := i
		for isPunct(j+1, '.') && isName(j+2, true) {
			j += 2
			c.N++
		}
		if isPunct(j+1, '.') && isPunct(j+2, '*') {
			c.Star = true
		}
		out = append(out, c)
		i = j
	}
	return out
}

// Tables are the tables a chain could name: its first part in the
// current database (DB left empty), and for a.b the table a.b.
func Tables(src string, toks []lexer.Token, ch Chain) []sqlname.Table {
	p0 := lexer.IdentText(src, toks[ch.First])
	out := []sqlname.Table{{Name: p0}}
	if ch.N >= 2 {
		out = append(out, sqlname.Table{DB: p0, Name: lexer.IdentText(src, toks[ch.Tok(1)])})
	}
	return out
}

// LowerInto lower-cases an ASCII s into buf without allocating; ok is
// false when s does not fit or is not ASCII.
func LowerInto(buf *[64]byte, s string) ([]byte, bool) {
	b := buf[:]
	if len(s) > len(b) {
		return nil, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return nil, false
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	return b[:len(s)], true
}

// RoleAt says what the part at pi of ch can be.
func RoleAt(src string, toks []lexer.Token, ch Chain, pi int) (collect.RefKind, bool, string) {
	n := ch.N
	part := func(i int) string { return lexer.IdentText(src, toks[ch.Tok(i)]) }
	switch {
	case n == 1 && !ch.Star:
		return collect.RefTable, true, ""
	case n == 1 && ch.Star:
		return collect.RefQualifier, true, ""
	case n == 2 && !ch.Star && pi == 1:
		return collect.RefTable, true, part(0)
	case n == 2 && !ch.Star && pi == 0:
		return collect.RefQualifier, true, ""
	case n == 2 && ch.Star && pi == 1:
		return collect.RefQualifier, true, part(0)
	case n == 3 && !ch.Star && pi == 1:
		return collect.RefQualifier, true, part(0)
	}
	return 0, false, ""
}

// AliasDefs counts "AS name" / "table name" alias definitions of n:
// one-part chains spelled n that follow another chain or AS.
func AliasDefs(src string, toks []lexer.Token, chains []Chain, n string) int {
	count := 0
	for _, ch := range chains {
		if ch.N != 1 || ch.Star {
			continue
		}
		ti := ch.First
		if strings.ToLower(lexer.IdentText(src, toks[ti])) != n || ti == 0 {
			continue
		}
		prev := toks[ti-1]
		if prev.Kind == lexer.Ident && strings.EqualFold(src[prev.Start:prev.End], "as") {
			count++
		}
	}
	return count
}

// Declared marks the chains whose place in the text makes them
// no table for sure: a partition's or subpartition's name (right after
// PARTITION or SUBPARTITION, or after a comma continuing such a list), a
// name after ENGINE, TABLESPACE, COLLATE, CHARSET or CHARACTER SET (with
// or without '='), and a user's name before its @host.
func Declared(text string, toks []lexer.Token, chains []Chain) map[int]bool {
	var out map[int]bool
	mark := func(ci int) {
		if out == nil {
			out = map[int]bool{}
		}
		out[ci] = true
	}
	prevChain := -1 // the chain before the current one, when declared
	for ci, ch := range chains {
		first, last := ch.First, ch.Tok(ch.N-1)
		w := lexer.Word(text, toks, first-1)
		if lexer.PunctAt(text, toks, first-1, '=') {
			w = lexer.Word(text, toks, first-2)
		}
		switch {
		case ch.N == 1 && !ch.Star && namedAfter[w]:
			mark(ci) // ENGINE [=] name, COLLATE name, …
		case ch.N == 1 && !ch.Star && (w == "PARTITION" || w == "SUBPARTITION"):
			mark(ci)
		case ch.N == 1 && !ch.Star && prevChain == ci-1 && prevChain >= 0 && lexer.PunctAt(text, toks, first-1, ',') &&
			chains[prevChain].Tok(chains[prevChain].N-1) == first-2:
			mark(ci) // p1, p2 of a partition list
		case ch.N == 1 && !ch.Star && last+1 < len(toks) && toks[last+1].Kind == lexer.Variable && toks[last+1].Start == toks[last].End &&
			text[toks[last+1].Start] == '@' && (toks[last+1].End-toks[last+1].Start < 2 || text[toks[last+1].Start+1] != '@'):
			mark(ci) // user@host
		default:
			prevChain = -1
			continue
		}
		prevChain = ci
	}
	return out
}

// namedAfter are the words after which (and an optional '=') a name is an
// engine's, a tablespace's, a collation's or a character set's.
var namedAfter = map[string]bool{"ENGINE": true, "TABLESPACE": true, "COLLATE": true, "CHARSET": true, "SET": true}
