package rewrite

import (
	"maps"
	"slices"
	"sync"

	sets "github.com/sqlfork/sqlfork-proxy/rewrite/charset"

	"github.com/pingcap/tidb/pkg/parser/charset"
)

// registerCollations teaches the TiDB parser the character sets and
// collations MariaDB has and TiDB does not (big5, latin2, ucs2,
// utf8mb4_unicode_520_ci, …): the parser rejects a statement naming one it
// does not know (SET NAMES big5, CREATE TABLE … CHARSET=latin2), and the
// proxy would then refuse it. The parser keeps them in tables of its own
// package, so this runs once per process, before the first parse.
var registerCollations = sync.OnceFunc(func() {
	id := collationIDBase
	all := sets.ServerCollations()
	for _, cs := range slices.Sorted(maps.Keys(all)) {
		colls := all[cs]
		if _, err := charset.GetCharsetInfo(cs); err != nil {
			charset.AddCharset(&charset.Charset{Name: cs, DefaultCollation: colls[0], Collations: map[string]*charset.Collation{}, Maxlen: 4})
		}
		for i, name := range colls {
			if _, err := charset.GetCollationByName(name); err == nil {
				continue
			}
			// Ids of their own, above any real one: the parser only needs
			// the names.
			id++
			charset.AddCollation(&charset.Collation{ID: id, CharsetName: cs, Name: name, IsDefault: i == 0})
		}
	}
})

// collationIDBase starts the made-up ids of registered collations.
const collationIDBase = 1 << 20

// ServerCollations returns the character sets and collations the parser is
// taught (for tests that check them against a server).
func ServerCollations() map[string][]string { return sets.ServerCollations() }

// serverCharset reports whether the server has a character set called
// name (lower case).
func serverCharset(name string) bool {
	return sets.ServerCharset(name)
}

// parserCollation reports whether the parser knows the collation name
// (lower case), the server's it was taught included.
func parserCollation(name string) bool {
	registerCollations()
	_, err := charset.GetCollationByName(name)
	return err == nil
}
