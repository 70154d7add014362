package rewrite

import (
	"slices"
	"strings"
)

// byteSet is a set of byte values.
type byteSet [4]uint64

func (s *byteSet) has(c byte) bool { return s[c>>6]&(1<<(c&63)) != 0 }

// mbScheme is how a character set groups bytes into characters, as
// MariaDB's charlen() functions for it do (strings/ctype-*.c).
type mbScheme uint8

const (
	mbNone   mbScheme = iota // one byte per character
	mbUTF8                   // utf8mb3 / utf8mb4: every byte of a multi-byte character is >= 0x80
	mbBig5                   // lead A1-F9, trail 40-7E A1-FE
	mbGBK                    // lead 81-FE, trail 40-7E 80-FE
	mbSJIS                   // sjis and cp932: lead 81-9F E0-FC, trail 40-7E 80-FC; A1-DF single
	mbEUCKR                  // lead 81-FE, trail 41-5A 61-7A 81-FE
	mbGB2312                 // lead A1-F7, trail A1-FE
	mbUJIS                   // ujis and eucjpms: A1-FE A1-FE, 8E A1-DF, 8F A1-FE A1-FE
)

// csInfo is how MariaDB's lexer treats the bytes of a statement sent
// in one client character set (character_set_client).
type csInfo struct {
	name string
	mb   mbScheme
	// space are the bytes the lexer skips between tokens (its state map
	// says MY_LEX_SKIP: my_isspace for the character set).
	space byteSet
	// dashEnd are the bytes that, right after "--", make it a comment
	// (my_isspace or my_iscntrl for the character set).
	dashEnd byteSet
	// ident are, for a single-byte character set, the bytes 0x80..0xFF
	// the lexer reads as part of a plain (unquoted) identifier; any other
	// byte of them outside quotes is a syntax error to the server.
	ident byteSet
	// uni is, for a single-byte character set other than binary, the
	// character each byte 0x80..0xFF stands for, as the server converts
	// identifiers to its own character set; 0 marks a byte with none.
	uni *[128]rune
}

// asciiTrail reports whether a multi-byte character of cs can hold a byte
// below 0x80 after its first byte: then quotes, backslashes and backquotes
// inside characters change how the server reads a text.
func (cs *csInfo) asciiTrail() bool {
	switch cs.mb {
	case mbBig5, mbGBK, mbSJIS, mbEUCKR:
		return true
	}
	return false
}

// charlen is the length of the valid character starting at s[0], or 0
// when s does not start with one (a broken or cut sequence), exactly as the
// server's charlen() sees it. ASCII bytes are characters of length 1.
func (cs *csInfo) charlen(s string) int {
	if len(s) == 0 {
		return 0
	}
	c := s[0]
	if c < 0x80 {
		return 1
	}
	in := func(b, lo, hi byte) bool { return b >= lo && b <= hi }
	switch cs.mb {
	case mbNone:
		return 1
	case mbUTF8:
		return utf8Len(s, cs.name == "utf8mb4")
	case mbBig5:
		if len(s) >= 2 && in(c, 0xA1, 0xF9) && (in(s[1], 0x40, 0x7E) || in(s[1], 0xA1, 0xFE)) {
			return 2
		}
	case mbGBK:
		if len(s) >= 2 && in(c, 0x81, 0xFE) && (in(s[1], 0x40, 0x7E) || in(s[1], 0x80, 0xFE)) {
			return 2
		}
	case mbSJIS:
		if in(c, 0xA1, 0xDF) {
			return 1
		}
		if len(s) >= 2 && (in(c, 0x81, 0x9F) || in(c, 0xE0, 0xFC)) && (in(s[1], 0x40, 0x7E) || in(s[1], 0x80, 0xFC)) {
			return 2
		}
	case mbEUCKR:
		if len(s) >= 2 && in(c, 0x81, 0xFE) && (in(s[1], 0x41, 0x5A) || in(s[1], 0x61, 0x7A) || in(s[1], 0x81, 0xFE)) {
			return 2
		}
	case mbGB2312:
		if len(s) >= 2 && in(c, 0xA1, 0xF7) && in(s[1], 0xA1, 0xFE) {
			return 2
		}
	case mbUJIS:
		if len(s) >= 2 && (in(c, 0xA1, 0xFE) && in(s[1], 0xA1, 0xFE) || c == 0x8E && in(s[1], 0xA1, 0xDF)) {
			return 2
		}
		if len(s) >= 3 && c == 0x8F && in(s[1], 0xA1, 0xFE) && in(s[2], 0xA1, 0xFE) {
			return 3
		}
	}
	return 0
}

// utf8Len is the length of the well-formed UTF-8 character at s[0] (s[0]
// >= 0x80), or 0; mb4 allows four-byte characters.
func utf8Len(s string, mb4 bool) int {
	c := s[0]
	cont := func(i int) bool { return i < len(s) && s[i]&0xC0 == 0x80 }
	switch {
	case c < 0xC2:
		return 0
	case c < 0xE0:
		if cont(1) {
			return 2
		}
	case c < 0xF0:
		if cont(1) && cont(2) && !(c == 0xE0 && s[1] < 0xA0) {
			return 3
		}
	case mb4 && c < 0xF5:
		if cont(1) && cont(2) && cont(3) && !(c == 0xF0 && s[1] < 0x90) && !(c == 0xF4 && s[1] > 0x8F) {
			return 4
		}
	}
	return 0
}

// lookupCharset returns what the proxy knows of a client character set
// (names as character_set_client reports them; "utf8" is utf8mb3). ok is
// false for a set it does not know: texts in it cannot be read safely.
func lookupCharset(name string) (*csInfo, bool) {
	name = strings.ToLower(name)
	if name == "utf8" {
		name = "utf8mb3"
	}
	cs, ok := charsets[name]
	return cs, ok
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
	d := CharsetBytes{Name: cs.name, MultiByte: cs.mb != mbNone, CharLen: cs.charlen}
	for c := 0; c < 256; c++ {
		d.Space[c], d.DashEnd[c], d.Ident[c] = cs.space.has(byte(c)), cs.dashEnd.has(byte(c)), cs.ident.has(byte(c))
	}
	if cs.uni != nil {
		d.Unicode = slices.Clone(cs.uni[:])
	}
	return d, true
}

// KnownCharsets lists the client character sets the proxy can read texts
// in, sorted.
func KnownCharsets() []string {
	out := make([]string, 0, len(charsetTable))
	for n := range charsetTable {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// charsetInfo is a row of the generated charsetTable: the fields of a
// csInfo.
type charsetInfo struct {
	name                  string
	mb                    mbScheme
	space, dashEnd, ident byteSet
	uni                   *[128]rune
}

// charsets are charsetTable's rows as csInfo.
var charsets = csInfos(charsetTable)

// csInfos makes the csInfo of each row of a table.
func csInfos(table map[string]*charsetInfo) map[string]*csInfo {
	m := make(map[string]*csInfo, len(table))
	for n, r := range table {
		m[n] = &csInfo{name: r.name, mb: r.mb, space: r.space, dashEnd: r.dashEnd, ident: r.ident, uni: r.uni}
	}
	return m
}
