package rewrite

import (
	"slices"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite/charset"
)

// lookupCharset returns what the proxy knows of a client character set
// (names as character_set_client reports them; "utf8" is utf8mb3). ok is
// false for a set it does not know: texts in it cannot be read safely.
func lookupCharset(name string) (*charset.Info, bool) {
	name = strings.ToLower(name)
	if name == "utf8" {
		name = "utf8mb3"
	}
	return charset.Lookup(name)
}

// CharsetBytes is what the proxy believes MariaDB's lexer does with the
// bytes of one client character set; exported for tests that check it
// against a server.
type CharsetBytes struct {
	Name string
	// Space are the bytes skipped between tokens; DashEnd the bytes that
	// make a preceding "--" a comment.
	Space, DashEnd [256]bool
	// MultiByte is false for single-byte character sets.
	MultiByte bool
	// CharLen is the length of the valid character at the start of s, or
	// 0 for a broken or cut sequence.
	CharLen func(s string) int
	// Ident are, for a single-byte character set, the bytes 0x80..0xFF
	// read as part of a plain identifier.
	Ident [256]bool
	// Unicode is, for a single-byte character set the proxy decodes, the
	// character of each byte 0x80..0xFF (0 for none); nil otherwise.
	Unicode []rune
}

// DescribeCharset returns what the proxy knows of a client character set.
func DescribeCharset(name string) (CharsetBytes, bool) {
	cs, ok := lookupCharset(name)
	if !ok {
		return CharsetBytes{}, false
	}
	d := CharsetBytes{Name: cs.Name, MultiByte: cs.MB != charset.SingleByte, CharLen: cs.CharLen}
	for c := 0; c < 256; c++ {
		d.Space[c], d.DashEnd[c], d.Ident[c] = cs.Space.Has(byte(c)), cs.DashEnd.Has(byte(c)), cs.Ident.Has(byte(c))
	}
	if cs.Uni != nil {
		d.Unicode = slices.Clone(cs.Uni[:])
	}
	return d, true
}

// KnownCharsets lists the client character sets the proxy can read texts
// in, sorted.
func KnownCharsets() []string { return charset.Names() }
