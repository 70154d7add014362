package charset

import (
	"maps"
	"slices"
)

// The generated tables (table_data.go, collation_data.go) are written by
// integration/charset_probe_test.go and integration/collations_test.go
// against a live server; this file gives them their names.

// byteSet, with the mb constants, is the generated charsetTable's name
// for ByteSet.
type byteSet = ByteSet

// Multi-byte schemes, as charsetTable names them.
const (
	mbNone   = SingleByte
	mbUTF8   = UTF8
	mbBig5   = Big5
	mbGBK    = GBK
	mbSJIS   = SJIS
	mbEUCKR  = EUCKR
	mbGB2312 = GB2312
	mbUJIS   = UJIS
)

// charsetInfo is a row of the generated charsetTable: the fields of an
// Info.
type charsetInfo struct {
	name                  string
	mb                    Scheme
	space, dashEnd, ident ByteSet
	uni                   *[128]rune
}

// charsets are charsetTable's rows as Info.
var charsets = csInfos(charsetTable)

// csInfos makes the Info of each row of a table.
func csInfos(table map[string]*charsetInfo) map[string]*Info {
	m := make(map[string]*Info, len(table))
	for n, r := range table {
		m[n] = &Info{Name: r.name, MB: r.mb, Space: r.space, DashEnd: r.dashEnd, Ident: r.ident, Uni: r.uni}
	}
	return m
}

// Lookup is what the proxy knows of the client character set called name
// (lower case, as the table has it).
func Lookup(name string) (*Info, bool) {
	cs, ok := charsets[name]
	return cs, ok
}

// Names are the character sets of the table, sorted.
func Names() []string { return slices.Sorted(maps.Keys(charsetTable)) }

// ServerCollations are the server's character sets, each with its
// collations, the default first (a copy).
func ServerCollations() map[string][]string { return maps.Clone(serverCollations) }

// ServerCharset reports whether the server has a character set called
// name (lower case).
func ServerCharset(name string) bool {
	_, ok := serverCollations[name]
	return ok
}
