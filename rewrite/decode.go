package rewrite

import (
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
// the client's own bytes (charset.ClientText).

// decodeClient returns, for a text sql in a single-byte client character
// set holding bytes 0x80..0xFF (nz is its normalized form, read in that
// character set), the decoded client text and the decoded text as the
// server reads it, which share offsets; for an ASCII text in such a set, a
// charset.ClientText without offsets (and no text); nil for any other text. A byte
// outside string literals that stands for no character, or that the server
// does not read as part of a name, refuses the text: names are read in
// Unicode, and such a byte has none the server would use.
func decodeClient(sql string, nz *lexer.Normalized, opts Options) (ct *charset.ClientText, text string, err *Refusal) {
	cs, ok := lookupCharset(opts.Charset)
	if !ok || !cs.Decodes() {
		return nil, "", nil
	}
	ct, text, u := charset.Decode(sql, nz.Text, nz.Literals, cs, opts.ANSIQuotes)
	if u != nil {
		return nil, "", Refuse(wire.ErUnknown, "%s (at byte %d), so the proxy cannot be sure how the server reads this statement; "+
			"quote the name with backquotes or send it in utf8mb4", u.What, u.At)
	}
	return ct, text, nil
}

// toClient turns what the analysis a of a decoded text exports into the
// client's terms: offsets into the client's bytes, texts sent back to the
// server in its character set.
func (a *Analysis) toClient() {
	ct := a.client
	for i := range a.Statements {
		st := &a.Statements[i]
		for j, sp := range st.Labels {
			st.Labels[j] = [2]int{ct.Original(sp[0]), ct.Original(sp[1])}
		}
		if sh := st.Show; sh != nil {
			var err error
			if sh.Where != "" {
				sh.Where, err = ct.Encode(sh.Where)
			}
			if sh.Like != nil && err == nil {
				var like string
				like, err = ct.Encode(*sh.Like)
				sh.Like = &like
			}
			if err != nil && st.Unprovable == "" {
				st.Unprovable = "the statement holds a byte the proxy cannot read back exactly (send it in utf8mb4)"
			}
		}
	}
}

// nameCharset is the client's character set (opts.Charset) that name is
// translated through between the client and the server; nil when name
// needs none: name is ASCII (ok), its set is a UTF-8 one (ok, and isUTF8),
// or the set is unknown or one the engine does not decode (not ok).
func nameCharset(name string, opts Options) (cs *charset.Info, isUTF8, ok bool) {
	if !charset.HasHighByte(name) {
		return nil, false, true
	}
	cs, ok = lookupCharset(opts.Charset)
	switch {
	case !ok || !cs.Decodes() && cs.MB != charset.UTF8:
		return nil, false, false
	case cs.MB == charset.UTF8:
		return nil, true, true
	}
	return cs, false, true
}

// nameIf is name, ok; "" where not ok.
func nameIf(name string, ok bool) (string, bool) {
	if !ok {
		return "", false
	}
	return name, true
}

// DecodeName is name, sent by the client in its character set
// (opts.Charset) outside any statement text (COM_FIELD_LIST's table), as
// the server reads it: in UTF-8. ok is false when the engine cannot read
// it so: bytes 0x80..0xFF in a character set it does not decode (gbk,
// sjis, …), one that stands for no character, or a name that is no UTF-8
// in a UTF-8 set.
func DecodeName(name string, opts Options) (string, bool) {
	cs, isUTF8, ok := nameCharset(name, opts)
	if cs == nil {
		return nameIf(name, ok && (!isUTF8 || utf8.ValidString(name)))
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
	cs, _, ok := nameCharset(name, opts)
	if cs == nil {
		return nameIf(name, ok)
	}
	s, err := (&charset.ClientText{CS: cs}).Encode(name)
	return s, err == nil
}
