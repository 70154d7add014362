// Package charset knows how MariaDB's lexer groups the bytes of a
// statement sent in a client character set into characters.
package charset

import "unicode/utf8"

// ByteSet is a set of byte values.
type ByteSet [4]uint64

// Has reports whether c is in the set.
func (s *ByteSet) Has(c byte) bool { return s[c>>6]&(1<<(c&63)) != 0 }

// Scheme is how a character set groups bytes into characters, as
// MariaDB's charlen() functions for it do (strings/ctype-*.c).
type Scheme uint8

// Schemes.
const (
	SingleByte Scheme = iota // one byte per character
	UTF8                     // utf8mb3 / utf8mb4: every byte of a multi-byte character is >= 0x80
	Big5                     // lead A1-F9, trail 40-7E A1-FE
	GBK                      // lead 81-FE, trail 40-7E 80-FE
	SJIS                     // sjis and cp932: lead 81-9F E0-FC, trail 40-7E 80-FC; A1-DF single
	EUCKR                    // lead 81-FE, trail 41-5A 61-7A 81-FE
	GB2312                   // lead A1-F7, trail A1-FE
	UJIS                     // ujis and eucjpms: A1-FE A1-FE, 8E A1-DF, 8F A1-FE A1-FE
)

// Info is how MariaDB's lexer treats the bytes of a statement sent
// in one client character set (character_set_client).
type Info struct {
	Name string
	MB   Scheme
	// space are the bytes the lexer skips between tokens (its state map
	// says MY_LEX_SKIP: my_isspace for the character set).
	Space ByteSet
	// dashEnd are the bytes that, right after "--", make it a comment
	// (my_isspace or my_iscntrl for the character set).
	DashEnd ByteSet
	// ident are, for a single-byte character set, the bytes 0x80..0xFF
	// the lexer reads as part of a plain (unquoted) identifier; any other
	// byte of them outside quotes is a syntax error to the server.
	Ident ByteSet
	// uni is, for a single-byte character set other than binary, the
	// character each byte 0x80..0xFF stands for, as the server converts
	// identifiers to its own character set; 0 marks a byte with none.
	Uni *[128]rune
}

// ASCIITrail reports whether a multi-byte character of cs can hold a byte
// below 0x80 after its first byte: then quotes, backslashes and backquotes
// inside characters change how the server reads a text.
func (cs *Info) ASCIITrail() bool {
	switch cs.MB {
	case Big5, GBK, SJIS, EUCKR:
		return true
	}
	return false
}

// CharLen is the length of the valid character starting at s[0], or 0
// when s does not start with one (a broken or cut sequence), exactly as the
// server's charlen() sees it. ASCII bytes are characters of length 1.
func (cs *Info) CharLen(s string) int {
	if len(s) == 0 {
		return 0
	}
	c := s[0]
	if c < 0x80 {
		return 1
	}
	in := func(b, lo, hi byte) bool { return b >= lo && b <= hi }
	switch cs.MB {
	case SingleByte:
		return 1
	case UTF8:
		return utf8Len(s, cs.Name == "utf8mb4")
	case Big5:
		if len(s) >= 2 && in(c, 0xA1, 0xF9) && (in(s[1], 0x40, 0x7E) || in(s[1], 0xA1, 0xFE)) {
			return 2
		}
	case GBK:
		if len(s) >= 2 && in(c, 0x81, 0xFE) && (in(s[1], 0x40, 0x7E) || in(s[1], 0x80, 0xFE)) {
			return 2
		}
	case SJIS:
		if in(c, 0xA1, 0xDF) {
			return 1
		}
		if len(s) >= 2 && (in(c, 0x81, 0x9F) || in(c, 0xE0, 0xFC)) && (in(s[1], 0x40, 0x7E) || in(s[1], 0x80, 0xFC)) {
			return 2
		}
	case EUCKR:
		if len(s) >= 2 && in(c, 0x81, 0xFE) && (in(s[1], 0x41, 0x5A) || in(s[1], 0x61, 0x7A) || in(s[1], 0x81, 0xFE)) {
			return 2
		}
	case GB2312:
		if len(s) >= 2 && in(c, 0xA1, 0xF7) && in(s[1], 0xA1, 0xFE) {
			return 2
		}
	case UJIS:
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

// Decodes reports whether the engine reads texts of cs decoded: the
// single-byte character sets whose characters it knows (not binary,
// whose bytes are no characters).
func (cs *Info) Decodes() bool { return cs.MB == SingleByte && cs.Uni != nil }

// Char is the character byte c (>= 0x80) of a decoded character set
// stands for, utf8.RuneError when it stands for none (in a string literal
// or a comment the engine reads it so; its byte is sent as it is). A byte
// standing for an ASCII character (armscii8 has an apostrophe and
// parentheses up there) counts as none: the server's lexer reads the byte,
// not the character, so it must not become punctuation to the engine.
func (cs *Info) Char(c byte) rune {
	if r := cs.Uni[c-0x80]; r >= 0x80 {
		return r
	}
	return utf8.RuneError
}

// ByteOf is the byte 0x80..0xFF standing for r in a decoded character set.
func (cs *Info) ByteOf(r rune) (byte, bool) {
	if r == 0 || r == utf8.RuneError {
		return 0, false
	}
	for i, u := range cs.Uni {
		if u == r {
			return byte(0x80 + i), true
		}
	}
	return 0, false
}
