package rewrite

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/sqlfork/sqlfork-proxy/rewrite/charset"
	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// The server reads a statement sent in a single-byte character set
// (koi8r, cp1251, latin1, …) by decoding it: identifiers become Unicode in
// its catalog. The parser reads UTF-8 only, so the engine reads such a
// text decoded to UTF-8 (decodeClient) and splices its rewrites back into
// the client's own bytes (clientText).

// clientText is a text the engine reads decoded: the client's bytes, and
// where each of them starts in the decoded text.
type clientText struct {
	orig string
	cs   *charset.Info
	// offs[i] is the offset in the decoded text of byte i of orig;
	// offs[len(orig)] is the decoded text's length. It only grows. nil
	// for an ASCII text, which is its own decoding: only what is spliced
	// into it is written in cs.
	offs []int
}

// decodeClient returns, for a text sql in a single-byte client character
// set holding bytes 0x80..0xFF (nz is its normalized form, read in that
// character set), the decoded client text and the decoded text as the
// server reads it, which share offsets; for an ASCII text in such a set, a
// clientText without offsets (and no text); nil for any other text. A byte
// outside string literals that stands for no character, or that the server
// does not read as part of a name, refuses the text: names are read in
// Unicode, and such a byte has none the server would use.
func decodeClient(sql string, nz *lexer.Normalized, opts Options) (ct *clientText, text string, err *Refusal) {
	cs, ok := lookupCharset(opts.Charset)
	if !ok || !cs.Decodes() {
		return nil, "", nil
	}
	ct, text, u := decodeIn(sql, nz.Text, nz.Literals, cs, opts.ANSIQuotes)
	if u != nil {
		return nil, "", Refuse(wire.ErUnknown, "%s (at byte %d), so the proxy cannot be sure how the server reads this statement; "+
			"quote the name with backquotes or send it in utf8mb4", u.what, u.at)
	}
	return ct, text, nil
}

// undecodable is a byte of a text the engine cannot decode: where, and
// why.
type undecodable struct {
	at   int
	what string
}

// undecodableAt is the byte at undecodable, for the reason format says.
func undecodableAt(at int, format string, args ...any) *undecodable {
	return &undecodable{at: at, what: fmt.Sprintf(format, args...)}
}

// decodeIn is decodeClient of sql in the decoded character set cs; text
// and literals are its normalized form and the spans of its literals,
// ansiQuotes whether "…" quotes names.
func decodeIn(sql, text string, literals [][2]int32, cs *charset.Info, ansiQuotes bool) (ct *clientText, _ string, err *undecodable) {
	if !hasHighByte(sql) {
		return &clientText{orig: sql, cs: cs}, "", nil
	}
	ct = &clientText{orig: sql, cs: cs, offs: make([]int, len(sql)+1)}
	var out strings.Builder
	out.Grow(2 * len(sql))
	lits, at := literals, 0
	for i := 0; i < len(sql); i++ {
		ct.offs[i] = at
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
	ct.offs[len(sql)] = at
	return ct, out.String(), nil
}

// hasHighByte reports whether s holds a byte 0x80..0xFF.
func hasHighByte(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return true
		}
	}
	return false
}

// decoded returns the decoded client text.
func (ct *clientText) decoded() string {
	if ct.offs == nil {
		return ct.orig
	}
	var b strings.Builder
	b.Grow(ct.offs[len(ct.orig)])
	for i := 0; i < len(ct.orig); i++ {
		if c := ct.orig[i]; c < 0x80 {
			b.WriteByte(c)
		} else {
			b.WriteRune(ct.cs.Char(c))
		}
	}
	return b.String()
}

// original is the offset in the client's bytes of off, an offset of the
// decoded text (the byte holding it when off is inside a character).
func (ct *clientText) original(off int) int {
	if ct.offs == nil {
		return off
	}
	lo, hi := 0, len(ct.orig)
	for lo < hi {
		m := (lo + hi + 1) / 2
		if ct.offs[m] <= off {
			lo = m
		} else {
			hi = m - 1
		}
	}
	return lo
}

// encode writes s, UTF-8, in the client's character set; an error names
// a character the set does not have (or the replacement character of a
// byte that stands for none: its byte cannot be told).
func (ct *clientText) encode(s string) (string, error) {
	if !hasHighByte(s) {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r < 0x80 {
			b.WriteByte(byte(r))
			continue
		}
		c, ok := ct.cs.ByteOf(r)
		if !ok {
			return "", fmt.Errorf("the character %q (%U) has no byte in the connection's character set %s", r, r, ct.cs.Name)
		}
		b.WriteByte(c)
	}
	return b.String(), nil
}

// toClient turns what the analysis a of a decoded text exports into the
// client's terms: offsets into the client's bytes, texts sent back to the
// server in its character set.
func (a *Analysis) toClient() {
	ct := a.client
	for i := range a.Statements {
		st := &a.Statements[i]
		for j, sp := range st.Labels {
			st.Labels[j] = [2]int{ct.original(sp[0]), ct.original(sp[1])}
		}
		if sh := st.Show; sh != nil {
			var err error
			if sh.Where != "" {
				sh.Where, err = ct.encode(sh.Where)
			}
			if sh.Like != nil && err == nil {
				var like string
				like, err = ct.encode(*sh.Like)
				sh.Like = &like
			}
			if err != nil && st.Unprovable == "" {
				st.Unprovable = "the statement holds a byte the proxy cannot read back exactly (send it in utf8mb4)"
			}
		}
	}
}

// DecodeName is name, sent by the client in its character set
// (opts.Charset) outside any statement text (COM_FIELD_LIST's table), as
// the server reads it: in UTF-8. ok is false when the engine cannot read
// it so: bytes 0x80..0xFF in a character set it does not decode (gbk,
// sjis, …), one that stands for no character, or a name that is no UTF-8
// in a UTF-8 set.
func DecodeName(name string, opts Options) (string, bool) {
	if !hasHighByte(name) {
		return name, true
	}
	cs, ok := lookupCharset(opts.Charset)
	switch {
	case !ok:
		return "", false
	case cs.MB == charset.UTF8:
		if !utf8.ValidString(name) {
			return "", false
		}
		return name, true
	case !cs.Decodes():
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c < 0x80 {
			b.WriteByte(c)
			continue
		}
		r := cs.Char(c)
		if r == utf8.RuneError {
			return "", false
		}
		b.WriteRune(r)
	}
	return b.String(), true
}

// EncodeName is name (UTF-8) written in the client's character set
// (opts.Charset), as a statement sent on its connection names it: the
// inverse of DecodeName. ok is false when the set cannot write it.
func EncodeName(name string, opts Options) (string, bool) {
	if !hasHighByte(name) {
		return name, true
	}
	cs, ok := lookupCharset(opts.Charset)
	switch {
	case !ok:
		return "", false
	case cs.MB == charset.UTF8:
		return name, true
	case !cs.Decodes():
		return "", false
	}
	s, err := (&clientText{cs: cs}).encode(name)
	return s, err == nil
}
