package session

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
)

// Syntax errors in a sandbox: the server's 1064 quotes the text it was
// sent from where its parser stopped; the client must get the quote of its
// own text.

// nearQuote reads the text a syntax error (1064) quotes: "… near '<text>'
// at line <n>".
var nearQuote = regexp.MustCompile(`(?s)^(.* near ')(.*)(' at line )([0-9]+)$`)

// nearLimit is how much text the server quotes (%-.80T: 77 bytes and
// "..." for longer texts).
const nearLimit = 80

// nearClient is the syntax error message msg, which quotes the text sent
// from where the server's parser stopped, quoting the client's text from
// there instead, as the server would have: the same length limit, the line
// counted in the client's text. ok is false when the quote is not found in
// the text sent.
func (p *Plan) nearClient(msg string) (string, bool) {
	m := nearQuote.FindStringSubmatch(msg)
	if m == nil || p.rewritten == "" || !strings.HasSuffix(p.SQL, p.rewritten) {
		return "", false
	}
	line, err := strconv.Atoi(m[4])
	if err != nil {
		return "", false
	}
	sent := p.rewritten
	lead := len(p.SQL) - len(sent) // a guardrail's prefix
	pos := nearOffset(sent, m[2], line-strings.Count(p.SQL[:lead], "\n"))
	if pos < 0 {
		return "", false
	}
	orig := rewrite.Original(p.splices, pos)
	if orig < 0 || orig > len(p.text) {
		return "", false
	}
	line += strings.Count(p.text[:orig], "\n") - strings.Count(sent[:pos], "\n")
	return m[1] + nearCut(p.text[orig:]) + m[3] + strconv.Itoa(line), true
}

// nearOffset is where in sent the server's quote q starts (-1 if
// nowhere): the end of the text when q is whole, else the occurrence of its
// first 77 bytes on the given line (or the first).
func nearOffset(sent, q string, line int) int {
	if len(q) <= nearLimit && !strings.HasSuffix(q, "...") || strings.HasSuffix(sent, q) {
		if !strings.HasSuffix(sent, q) {
			return -1
		}
		return len(sent) - len(q)
	}
	head := strings.TrimSuffix(q, "...")
	first := -1
	for from := 0; ; {
		i := strings.Index(sent[from:], head)
		if i < 0 {
			return first
		}
		at := from + i
		if strings.Count(sent[:at], "\n")+1 == line {
			return at
		}
		if first < 0 {
			first = at
		}
		from = at + 1
	}
}

// nearCut is text as the server quotes it: whole up to 80 bytes, else
// its first 77 (not splitting a UTF-8 character) and "...".
func nearCut(text string) string {
	if len(text) <= nearLimit {
		return text
	}
	n := nearLimit - 3
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	return text[:n] + "..."
}

// literalSafe reports whether a text in charset can be quoted byte by
// byte: no multi-byte character of it holds a quote or a backslash.
func literalSafe(charset string) bool {
	switch strings.ToLower(charset) {
	case "", "utf8", "utf8mb3", "utf8mb4", "latin1", "ascii", "binary":
		return true
	}
	return false
}
