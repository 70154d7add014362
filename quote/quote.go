// Package quote is the one way names and values reach SQL the proxy writes
// itself — the statements it runs, the EXPORT and PROMOTE it generates, the
// notes in them — and text it shows a person (CLI output): what a sandbox
// holds is data, never code.
//
// Ident and String give text that the server reads back as exactly the name
// or value given, whatever the session's sql_mode (ANSI_QUOTES,
// NO_BACKSLASH_ESCAPES) and character set, and that a client reading a
// script (the mariadb CLI's `\` commands, `;` and comments) sees as one
// token. Comment and Display render any text on one line of printable
// characters, so it can neither end a comment nor move a terminal's cursor.
package quote

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Ident back-quotes a name, doubling embedded backquotes. Inside backquotes
// the server reads every byte as part of the name in every sql_mode, and
// the mariadb CLI reads no `\` command, delimiter or comment.
func Ident(s string) string {
	return "`" + strings.ReplaceAll(s, "`", "``") + "`"
}

// Qualified is db.name, each part back-quoted.
func Qualified(db, name string) string { return Ident(db) + "." + Ident(name) }

// String is a string literal of s that reads the same in every sql_mode and
// connection character set: printable ASCII without a backslash is
// single-quoted with embedded quotes doubled (no escape sequence is ever
// needed); anything else — a backslash, whose meaning NO_BACKSLASH_ESCAPES
// changes, control bytes, non-ASCII characters, whose bytes depend on the
// connection's character set — is written in hexadecimal with an introducer
// (utf8mb4 when s is valid UTF-8, binary otherwise), which no mode or
// character set reads differently.
func String(s string) string {
	if !utf8.ValidString(s) {
		return StringIn(s, "binary")
	}
	return StringIn(s, "utf8mb4")
}

// StringIn is String for text whose bytes are in character set charset
// (a client's, say): its introducer says so.
func StringIn(s, charset string) string {
	if plain(s) {
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	return "_" + charset + " X'" + strings.ToUpper(hex.EncodeToString([]byte(s))) + "'"
}

// plain reports printable ASCII without a backslash.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '\\' {
			return false
		}
	}
	return true
}

// Comment renders s for a `-- ` comment line of generated SQL: on one line,
// control characters, invisible formatting characters and invalid bytes
// written as escapes (\n, \x1b, \u202e), backslashes doubled so that the
// rendering is unambiguous. Neither the server nor a client reading the
// script can find the end of the comment inside it.
func Comment(s string) string { return Display(s) }

// Display renders s for a person's terminal as Comment does: a name or value
// the sandbox controls cannot move the cursor, change colours, reorder the
// text (bidirectional overrides) or start a new line.
func Display(s string) string {
	if displayable(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			b.WriteString(`\x` + hex2(s[i]))
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80 && !unicode.IsPrint(r):
			b.WriteString(`\x` + hex2(byte(r)))
		case hidden(r):
			q := strconv.QuoteRuneToASCII(r) // '\u202e'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// displayable reports text Display leaves as it is.
func displayable(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 || r == '\\' || r < 0x80 && !unicode.IsPrint(r) || hidden(r) {
			return false
		}
		i += n
	}
	return true
}

// hidden reports characters a terminal does not show as themselves: C1
// controls, formatting characters (bidirectional overrides and isolates,
// zero-width characters), line and paragraph separators, characters that
// render as nothing (default-ignorable: a combining grapheme joiner, a
// Hangul filler, variation selectors), and any other non-printing
// character.
func hidden(r rune) bool {
	return r >= 0x80 && (!unicode.IsPrint(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r) ||
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) || unicode.Is(unicode.Variation_Selector, r))
}

// JSONSafe is JSON text (as encoding/json writes it: valid UTF-8, C0
// controls escaped inside strings) with the characters Display escapes
// written as \u escapes, which JSON reads back as the same characters.
// Line ends and tabs, which stand only between tokens there, are kept.
func JSONSafe(text string) string {
	var b strings.Builder
	for _, r := range text {
		switch {
		case r == '\n' || r == '\t' || r == '\r':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || hidden(r):
			for _, u := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(&b, `\u%04x`, u)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}
