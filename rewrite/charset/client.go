package charset

// The server reads a statement sent in a single-byte character set
// (koi8r, cp1251, latin1, …) by decoding it: identifiers become Unicode in
// its catalog. The parser reads UTF-8 only, so the engine reads such a
// text decoded to UTF-8 (Decode) and splices its rewrites back into the
// client's own bytes (ClientText).

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// ClientText is a text the engine reads decoded: the client's bytes, and
// where each of them starts in the decoded text.
type ClientText struct {
	Orig string
	CS   *Info
	// Offs[i] is the offset in the decoded text of byte i of Orig;
	// Offs[len(Orig)] is the decoded text's length. It only grows. nil
	// for an ASCII text, which is its own decoding: only what is spliced
	// into it is written in cs.
	Offs []int
}

// Undecodable is a byte of a text the engine cannot decode: where, and
// why.
type Undecodable struct {
	At   int
	What string
}

// undecodableAt is the byte at Undecodable, for the reason format says.
func undecodableAt(at int, format string, args ...any) *Undecodable {
	return &Undecodable{At: at, What: fmt.Sprintf(format, args...)}
}

// Decode returns, for a text sql in the single-byte character set cs
// (Decodes) holding bytes 0x80..0xFF, the decoded client text and the
// decoded text as the server reads it, which share offsets; for an ASCII
// text, a ClientText without offsets (and no text). text and literals are
// sql's normalized form and the spans of its literals, ansiQuotes whether
// "…" quotes names. A byte outside string literals that stands for no
// character, or that the server does not read as part of a name, is
// Undecodable: names are read in Unicode, and such a byte has none the
// server would use.
func Decode(sql, text string, literals [][2]int32, cs *Info, ansiQuotes bool) (ct *ClientText, _ string, err *Undecodable) {
	if !HasHighByte(sql) {
		return &ClientText{Orig: sql, CS: cs}, "", nil
	}
	ct = &ClientText{Orig: sql, CS: cs, Offs: make([]int, len(sql)+1)}
	var out strings.Builder
	out.Grow(2 * len(sql))
	lits, at := literals, 0
	for i := 0; i < len(sql); i++ {
		ct.Offs[i] = at
		c := sql[i]
		if c < 0x80 {
			out.WriteByte(text[i])
			at++
			continue
		}
		for len(lits) > 0 && int(lits[0][1]) <= i {
			lits = lits[1:]
		}
		inLit := len(lits) > 0 && int(lits[0][0]) <= i
		quotedName := inLit && (sql[lits[0][0]] == '`' || ansiQuotes && sql[lits[0][0]] == '"')
		r := cs.Char(c)
		blanked := text[i] != c // a comment, or white space to the server
		switch {
		case blanked:
			if text[i] != ' ' {
				return nil, "", undecodableAt(i, "byte 0x%02X changed for the parser", c)
			}
		case r == utf8.RuneError && (!inLit || quotedName):
			return nil, "", undecodableAt(i, "byte 0x%02X, which stands for no character in %s, in a name", c, cs.Name)
		case !inLit && !cs.Ident.Has(c):
			return nil, "", undecodableAt(i, "byte 0x%02X (%c in %s) outside quotes, which the server does not read as part "+
				"of a name", c, r, cs.Name)
		}
		n := utf8.RuneLen(r)
		if blanked {
			out.WriteString(strings.Repeat(" ", n))
		} else {
			out.WriteRune(r)
		}
		at += n
	}
	ct.Offs[len(sql)] = at
	return ct, out.String(), nil
}

// HasHighByte reports whether s holds a byte 0x80..0xFF.
func HasHighByte(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return true
		}
	}
	return false
}

// Decoded returns the decoded client text.
func (ct *ClientText) Decoded() string {
	if ct.Offs == nil {
		return ct.Orig
	}
	var b strings.Builder
	b.Grow(ct.Offs[len(ct.Orig)])
	for i := 0; i < len(ct.Orig); i++ {
		if c := ct.Orig[i]; c < 0x80 {
			b.WriteByte(c)
		} else {
			b.WriteRune(ct.CS.Char(c))
		}
	}
	return b.String()
}

// Original is the offset in the client's bytes of off, an offset of the
// decoded text (the byte holding it when off is inside a character).
func (ct *ClientText) Original(off int) int {
	if ct.Offs == nil {
		return off
	}
	lo, hi := 0, len(ct.Orig)
	for lo < hi {
		m := (lo + hi + 1) / 2
		if ct.Offs[m] <= off {
			lo = m
		} else {
			hi = m - 1
		}
	}
	return lo
}

// Encode writes s, UTF-8, in the client's character set; an error names
// a character the set does not have (or the replacement character of a
// byte that stands for none: its byte cannot be told).
func (ct *ClientText) Encode(s string) (string, error) {
	if !HasHighByte(s) {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r < 0x80 {
			b.WriteByte(byte(r))
			continue
		}
		c, ok := ct.CS.ByteOf(r)
		if !ok {
			return "", fmt.Errorf("the character %q (%U) has no byte in the connection's character set %s", r, r, ct.CS.Name)
		}
		b.WriteByte(c)
	}
	return b.String(), nil
}
