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
func KnownCharsets() []string {
	out := make([]string, 0, len(charsetTable))
	for n := range charsetTable {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// byteSet, with the mb constants, is the generated charsetTable's name
// for charset.ByteSet.
type byteSet = charset.ByteSet

// Multi-byte schemes, as charsetTable names them.
const (
	mbNone   = charset.SingleByte
	mbUTF8   = charset.UTF8
	mbBig5   = charset.Big5
	mbGBK    = charset.GBK
	mbSJIS   = charset.SJIS
	mbEUCKR  = charset.EUCKR
	mbGB2312 = charset.GB2312
	mbUJIS   = charset.UJIS
)

// charsetInfo is a row of the generated charsetTable: the fields of a
// csInfo.
type charsetInfo struct {
	name                  string
	mb                    charset.Scheme
	space, dashEnd, ident charset.ByteSet
	uni                   *[128]rune
}

// charsets are charsetTable's rows as csInfo.
var charsets = csInfos(charsetTable)

// csInfos makes the csInfo of each row of a table.
func csInfos(table map[string]*charsetInfo) map[string]*charset.Info {
	m := make(map[string]*charset.Info, len(table))
	for n, r := range table {
		m[n] = &charset.Info{Name: r.name, MB: r.mb, Space: r.space, DashEnd: r.dashEnd, Ident: r.ident, Uni: r.uni}
	}
	return m
}
