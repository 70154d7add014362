// Package lexer splits SQL text into tokens: just enough of MySQL's
// lexing to find identifiers, literals and punctuation safely.
package lexer

import (
	"strings"
)

// Kind classifies a lexed token. The lexer knows only what it needs to
// find identifiers safely: quotes and comments. It reads normalized texts
// (see rewrite.Normalize), in which comments and executable-comment
// markers are already blanked, so the comment cases only guard against
// misuse.
type Kind uint8

// Token kinds.
const (
	Ident    Kind = iota // bare word: identifier or keyword
	Quoted               // `backquoted` identifier (or "double" under ANSI_QUOTES)
	String               // '...' (or "..." without ANSI_QUOTES), with an optional _charset introducer before it as its own token
	Number               // numeric literal
	Variable             // @var, @@var, @'quoted', ?
	Punct                // one operator or punctuation byte
	Comment              // -- , # or /* */ comment
)

// Token is a lexed token: text is src[Start:End]. Offsets are 32-bit to
// keep tokens small (inputs over 2 GiB are not statements).
type Token struct {
	Kind  Kind
	Start int32
	End   int32
}

// Options carry the sql_mode flags that change lexing.
type Options struct {
	ANSIQuotes         bool // "..." quotes identifiers
	NoBackslashEscapes bool // backslash is an ordinary character in strings
}

// Lex splits src into tokens. It never fails: an unterminated quote or
// comment runs to the end of the input (the parser reports the error).
func Lex(src string, o Options) []Token {
	return LexInto(make([]Token, 0, len(src)/3+8), src, o)
}

// LexInto is Lex appending to toks (whose contents it discards).
func LexInto(toks []Token, src string, o Options) []Token {
	toks = toks[:0]
	i := 0
	for i < len(src) {
		c := src[i]
		start := i
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		case c == '#' || (c == '-' && strings.HasPrefix(src[i:], "--") && (i+2 == len(src) || IsSpace(src[i+2]))):
			i = lineEnd(src, i)
			toks = append(toks, Token{Kind: Comment, Start: int32(start), End: int32(i)})
			continue
		case c == '/' && strings.HasPrefix(src[i:], "/*"):
			i = blockEnd(src, i)
			toks = append(toks, Token{Kind: Comment, Start: int32(start), End: int32(i)})
			continue
		case c == '`' || (c == '"' && o.ANSIQuotes):
			i = skipQuoted(src, i, c, false)
			toks = append(toks, Token{Kind: Quoted, Start: int32(start), End: int32(i)})
			continue
		case c == '\'' || c == '"':
			i = skipQuoted(src, i, c, !o.NoBackslashEscapes)
			toks = append(toks, Token{Kind: String, Start: int32(start), End: int32(i)})
			continue
		case c == '@':
			i = variableEnd(src, i, o)
			toks = append(toks, Token{Kind: Variable, Start: int32(start), End: int32(i)})
			continue
		case c == '?':
			i++
			toks = append(toks, Token{Kind: Variable, Start: int32(start), End: int32(i)})
			continue
		case c >= '0' && c <= '9' || (c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9' && !prevIsIdentLike(toks, src)):
			var k Kind
			i, k = numberEnd(src, i)
			toks = append(toks, Token{Kind: k, Start: int32(start), End: int32(i)})
			continue
		case isIdentByte(c):
			for i < len(src) && isIdentByte(src[i]) {
				i++
			}
			k := Ident
			if i < len(src) && src[i] == '\'' {
				i, k = prefixed(src, start, i, o)
			}
			toks = append(toks, Token{Kind: k, Start: int32(start), End: int32(i)})
			continue
		}
		i++
		toks = append(toks, Token{Kind: Punct, Start: int32(start), End: int32(i)})
	}
	return toks
}

// lineEnd is the end of the # or -- comment at i: its line break.
func lineEnd(src string, i int) int {
	for i < len(src) && src[i] != '\n' {
		i++
	}
	return i
}

// blockEnd is the end of the /* */ comment at i, the end of src when it is
// not closed.
func blockEnd(src string, i int) int {
	end := strings.Index(src[i+2:], "*/")
	if end < 0 {
		return len(src)
	}
	return i + 2 + end + 2
}

// variableEnd is the end of the @var, @@var, @'name' or @`name` at i.
func variableEnd(src string, i int, o Options) int {
	i++
	if i < len(src) && src[i] == '@' {
		i++
	}
	if i < len(src) && (src[i] == '\'' || src[i] == '"' || src[i] == '`') {
		// @'name' is a string (backslash escapes apply), @`name`
		// and, under ANSI_QUOTES, @"name" quoted identifiers.
		q := src[i]
		return skipQuoted(src, i, q, !o.NoBackslashEscapes && (q == '\'' || q == '"' && !o.ANSIQuotes))
	}
	for i < len(src) && (isIdentByte(src[i]) || src[i] == '.') {
		i++
	}
	return i
}

// numberEnd is the end of the number at i, and its kind: 1e10, 0x1F and
// 123abc, digits followed by letters, form an identifier in MySQL when
// not a valid number.
func numberEnd(src string, i int) (int, Kind) {
	start := i
	i = skipNumber(src, i)
	if i < len(src) && isIdentByte(src[i]) {
		for i < len(src) && isIdentByte(src[i]) {
			i++
		}
		if !isNumberText(src[start:i]) {
			return i, Ident
		}
	} else if text := src[start:i]; !strings.Contains(text, ".") && !isNumberText(text) {
		// Digits and the hex letters skipNumber takes that form no
		// number (1a, 1ea10, 12e): an identifier, as the server reads it.
		return i, Ident
	}
	return i, Number
}

// prefixed reads the quote at i after the word src[start:i]: x'..',
// b'..', N'..' and _charset'..' are literals; any other word is an
// identifier before the quote.
func prefixed(src string, start, i int, o Options) (int, Kind) {
	w := strings.ToLower(src[start:i])
	if w == "x" || w == "b" || w == "n" || w[0] == '_' {
		return skipQuoted(src, i, '\'', !o.NoBackslashEscapes && w != "x" && w != "b"), String
	}
	return i, Ident
}

// IsSpace reports the bytes the lexer skips between tokens.
func IsSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// isIdentByte reports bytes that may appear in an unquoted identifier:
// ASCII letters, digits, $, _ and any byte of a multi-byte UTF-8 character.
func isIdentByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$' || c >= 0x80
}

// prevIsIdentLike reports whether the previous token ends an identifier
// chain, so ".5" after it is "." then "5" (t.5col is not valid anyway).
func prevIsIdentLike(toks []Token, src string) bool {
	if len(toks) == 0 {
		return false
	}
	k := toks[len(toks)-1].Kind
	return k == Ident || k == Quoted
}

// skipQuoted returns the index after the quoted text starting at i.
// Doubling the quote escapes it; backslash escapes when allowed.
func skipQuoted(src string, i int, q byte, backslash bool) int {
	i++
	for i < len(src) {
		switch c := src[i]; {
		case backslash && c == '\\':
			i += 2
			continue
		case c == q:
			if i+1 < len(src) && src[i+1] == q {
				i += 2
				continue
			}
			return i + 1
		}
		i++
	}
	return len(src)
}

// skipNumber returns the index after the number starting at i.
func skipNumber(src string, i int) int {
	if strings.HasPrefix(src[i:], "0x") || strings.HasPrefix(src[i:], "0b") {
		i += 2
	}
	for i < len(src) && (src[i] >= '0' && src[i] <= '9' || src[i] == '.' ||
		src[i] >= 'a' && src[i] <= 'f' || src[i] >= 'A' && src[i] <= 'F') {
		if (src[i] == 'e' || src[i] == 'E') && i+1 < len(src) && (src[i+1] == '+' || src[i+1] == '-') {
			i++
		}
		i++
	}
	return i
}

// isNumberText reports whether s is a numeric literal rather than an
// identifier that starts with digits (like 1abc or 123e).
func isNumberText(s string) bool {
	ls := strings.ToLower(s)
	if strings.HasPrefix(ls, "0x") {
		return len(ls) > 2 && strings.Trim(ls[2:], "0123456789abcdef") == ""
	}
	if strings.HasPrefix(ls, "0b") {
		return len(ls) > 2 && strings.Trim(ls[2:], "01") == ""
	}
	seenE := false
	for j := 0; j < len(ls); j++ {
		c := ls[j]
		switch {
		case c >= '0' && c <= '9' || c == '.':
		case c == 'e' && !seenE && j > 0 && j+1 < len(ls):
			seenE = true
			if ls[j+1] == '+' || ls[j+1] == '-' {
				j++
			}
		default:
			return false
		}
	}
	return true
}

// IdentText returns the identifier an Ident or Quoted token names,
// unquoted.
func IdentText(src string, t Token) string {
	s := src[t.Start:t.End]
	if t.Kind != Quoted || len(s) < 2 {
		return s
	}
	q := s[0]
	s = s[1:]
	if s[len(s)-1] == q {
		s = s[:len(s)-1]
	}
	return strings.ReplaceAll(s, string([]byte{q, q}), string(q))
}

// Closing is the index of the ')' closing the '(' at toks[open], 0 when
// there is none.
func Closing(text string, toks []Token, open int) int {
	depth := 0
	for j := open; j < len(toks); j++ {
		switch {
		case PunctAt(text, toks, j, '('):
			depth++
		case PunctAt(text, toks, j, ')'):
			if depth--; depth == 0 {
				return j
			}
		case PunctAt(text, toks, j, ';'):
			return 0
		}
	}
	return 0
}

// Word is the upper-case word of toks[i], "" when it is no bare word.
func Word(text string, toks []Token, i int) string {
	if i >= 0 && i < len(toks) && toks[i].Kind == Ident {
		return strings.ToUpper(text[toks[i].Start:toks[i].End])
	}
	return ""
}

// PunctAt reports whether toks[i] is the punctuation c.
func PunctAt(text string, toks []Token, i int, c byte) bool {
	return i >= 0 && i < len(toks) && toks[i].Kind == Punct && text[toks[i].Start] == c
}
