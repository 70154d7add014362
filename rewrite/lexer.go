package rewrite

import (
	"strings"
)

// tokKind classifies a lexed token. The lexer knows only what it needs to
// find identifiers safely: quotes and comments. It reads normalized texts
// (see Normalize), in which comments and executable-comment markers are
// already blanked, so the comment cases only guard against misuse.
type tokKind uint8

const (
	tokIdent    tokKind = iota // bare word: identifier or keyword
	tokQuoted                  // `backquoted` identifier (or "double" under ANSI_QUOTES)
	tokString                  // '...' (or "..." without ANSI_QUOTES), with an optional _charset introducer before it as its own token
	tokNumber                  // numeric literal
	tokVariable                // @var, @@var, @'quoted', ?
	tokPunct                   // one operator or punctuation byte
	tokComment                 // -- , # or /* */ comment
)

// token is a lexed token: text is src[start:end]. Offsets are 32-bit to
// keep tokens small (inputs over 2 GiB are not statements).
type token struct {
	kind  tokKind
	start int32
	end   int32
}

// lexOptions carry the sql_mode flags that change lexing.
type lexOptions struct {
	ansiQuotes         bool // "..." quotes identifiers
	noBackslashEscapes bool // backslash is an ordinary character in strings
}

// lex splits src into tokens. It never fails: an unterminated quote or
// comment runs to the end of the input (the parser reports the error).
func lex(src string, o lexOptions) []token {
	return lexInto(make([]token, 0, len(src)/3+8), src, o)
}

// lexInto is lex appending to toks (whose contents it discards).
func lexInto(toks []token, src string, o lexOptions) []token {
	toks = toks[:0]
	i := 0
	for i < len(src) {
		c := src[i]
		start := i
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		case c == '#' || (c == '-' && strings.HasPrefix(src[i:], "--") && (i+2 == len(src) || isSpace(src[i+2]))):
			for i < len(src) && src[i] != '\n' {
				i++
			}
			toks = append(toks, token{kind: tokComment, start: int32(start), end: int32(i)})
			continue
		case c == '/' && strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				i = len(src)
			} else {
				i += 2 + end + 2
			}
			toks = append(toks, token{kind: tokComment, start: int32(start), end: int32(i)})
			continue
		case c == '`' || (c == '"' && o.ansiQuotes):
			i = skipQuoted(src, i, c, false)
			toks = append(toks, token{kind: tokQuoted, start: int32(start), end: int32(i)})
			continue
		case c == '\'' || c == '"':
			i = skipQuoted(src, i, c, !o.noBackslashEscapes)
			toks = append(toks, token{kind: tokString, start: int32(start), end: int32(i)})
			continue
		case c == '@':
			i++
			if i < len(src) && src[i] == '@' {
				i++
			}
			if i < len(src) && (src[i] == '\'' || src[i] == '"' || src[i] == '`') {
				// @'name' is a string (backslash escapes apply), @`name`
				// and, under ANSI_QUOTES, @"name" quoted identifiers.
				q := src[i]
				i = skipQuoted(src, i, q, !o.noBackslashEscapes && (q == '\'' || q == '"' && !o.ansiQuotes))
			} else {
				for i < len(src) && (isIdentByte(src[i]) || src[i] == '.') {
					i++
				}
			}
			toks = append(toks, token{kind: tokVariable, start: int32(start), end: int32(i)})
			continue
		case c == '?':
			i++
			toks = append(toks, token{kind: tokVariable, start: int32(start), end: int32(i)})
			continue
		case c >= '0' && c <= '9' || (c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9' && !prevIsIdentLike(toks, src)):
			i = skipNumber(src, i)
			// 1e10, 0x1F and 123abc: digits followed by letters form an
			// identifier in MySQL when not a valid number.
			if i < len(src) && isIdentByte(src[i]) {
				for i < len(src) && isIdentByte(src[i]) {
					i++
				}
				if !isNumberText(src[start:i]) {
					toks = append(toks, token{kind: tokIdent, start: int32(start), end: int32(i)})
					continue
				}
			}
			toks = append(toks, token{kind: tokNumber, start: int32(start), end: int32(i)})
			continue
		case isIdentByte(c):
			for i < len(src) && isIdentByte(src[i]) {
				i++
			}
			// x'..', b'..', N'..', _charset'..' are literals.
			if i < len(src) && src[i] == '\'' {
				w := strings.ToLower(src[start:i])
				if w == "x" || w == "b" || w == "n" || w[0] == '_' {
					i = skipQuoted(src, i, '\'', !o.noBackslashEscapes && w != "x" && w != "b")
					toks = append(toks, token{kind: tokString, start: int32(start), end: int32(i)})
					continue
				}
			}
			toks = append(toks, token{kind: tokIdent, start: int32(start), end: int32(i)})
			continue
		}
		i++
		toks = append(toks, token{kind: tokPunct, start: int32(start), end: int32(i)})
	}
	return toks
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// isIdentByte reports bytes that may appear in an unquoted identifier:
// ASCII letters, digits, $, _ and any byte of a multi-byte UTF-8 character.
func isIdentByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$' || c >= 0x80
}

// prevIsIdentLike reports whether the previous token ends an identifier
// chain, so ".5" after it is "." then "5" (t.5col is not valid anyway).
func prevIsIdentLike(toks []token, src string) bool {
	if len(toks) == 0 {
		return false
	}
	k := toks[len(toks)-1].kind
	return k == tokIdent || k == tokQuoted
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

// identText returns the identifier a tokIdent or tokQuoted token names,
// unquoted.
func identText(src string, t token) string {
	s := src[t.start:t.end]
	if t.kind != tokQuoted || len(s) < 2 {
		return s
	}
	q := s[0]
	s = s[1:]
	if s[len(s)-1] == q {
		s = s[:len(s)-1]
	}
	return strings.ReplaceAll(s, string([]byte{q, q}), string(q))
}
