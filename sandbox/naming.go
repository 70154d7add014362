// Package sandbox holds what every part of a sandbox agrees on: the names
// of its schemas (Names, Schema), and the entries that say where each of
// its tables lives (Entry, Kind). It does no I/O.
package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
)

// MaxIdent is MySQL's limit on database and table name length.
const MaxIdent = 64

// MetaSchema is the database holding the registry for prefix.
func MetaSchema(prefix string) string { return prefix + "_meta" }

// Schema is the database holding a sandbox's tables of logical database
// db: prefix_<sandbox id>_<db>, with db shortened and hashed when the whole
// would pass 64 characters. Table names are kept as they are.
func Schema(prefix, id, db string) string {
	s := prefix + "_" + id + "_" + db
	if len(s) <= MaxIdent {
		return s
	}
	sum := sha256.Sum256([]byte(db))
	h := hex.EncodeToString(sum[:])[:12]
	keep := max(MaxIdent-len(prefix)-len(id)-len(h)-3, 0)
	// Cut on a byte boundary that keeps UTF-8 valid.
	cut := db[:min(keep, len(db))]
	for len(cut) > 0 && cut[len(cut)-1]&0xC0 == 0x80 {
		cut = cut[:len(cut)-1]
	}
	if len(cut) > 0 && cut[len(cut)-1] >= 0xC0 {
		cut = cut[:len(cut)-1]
	}
	return prefix + "_" + id + "_" + cut + "_" + h
}

// SchemaPrefix is what every schema of sandbox id starts with.
func SchemaPrefix(prefix, id string) string { return prefix + "_" + id + "_" }

// InfoSchema is the database holding sandbox id's information_schema
// views: prefix_<id> (sandbox table databases are prefix_<id>_<db>).
func InfoSchema(prefix, id string) string { return prefix + "_" + id }
