package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// XA transaction ids are the server's, shared by every connection: any
// connection may list a prepared one (XA RECOVER), commit it or roll it
// back. Each sandbox therefore sends its ids with a prefix of its own, which
// no client writes through the proxy (the proxy adds it to every id), and
// sees only the ids that carry it, without it.

// XAPrefix is what the gtrid of every XA transaction of sandbox id starts
// with upstream: a 0xFF byte and 6 bytes of the id's hash (7 of the
// server's 64 bytes).
func XAPrefix(id string) string {
	sum := sha256.Sum256([]byte("sqlfork-xa\x00" + id))
	return "\xff" + string(sum[:6])
}

// XARecovered is a row of XA RECOVER (formatID, gtrid_length,
// bqual_length, data: the raw format) as a sandbox with prefix p sees it:
// ok is false for another's id; data loses the prefix, and is written as
// XA RECOVER FORMAT='SQL' writes it when sql is set.
func XARecovered(p string, formatID int64, gtridLen, bqualLen int, data string, sql bool) (gl int, out string, ok bool) {
	if gtridLen < len(p) || gtridLen+bqualLen != len(data) || data[:len(p)] != p {
		return 0, "", false
	}
	gtrid, bqual := data[len(p):gtridLen], data[gtridLen:]
	if !sql {
		return len(gtrid), gtrid + bqual, true
	}
	return len(gtrid), XASQL(formatID, gtrid, bqual), true
}

// XASQL writes an XA id as the server's XA RECOVER FORMAT='SQL' does
// (sql/xa.cc get_sql_xid): quoted when every byte is an ASCII letter,
// digit, '_', '-' or space (as MariaDB 10.11 writes them), else in hex;
// the bqual when it is not empty or formatID is not 1; formatID when it is
// not 1.
func XASQL(formatID int64, gtrid, bqual string) string {
	plain := true
	for _, c := range []byte(gtrid + bqual) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '-' || c == ' ') {
			plain = false
		}
	}
	part := func(s string) string {
		if plain {
			return "'" + s + "'"
		}
		return "X'" + hex.EncodeToString([]byte(s)) + "'"
	}
	out := part(gtrid)
	if bqual != "" || formatID != 1 {
		out += "," + part(bqual)
	}
	if formatID != 1 {
		out += "," + strconv.FormatInt(formatID, 10)
	}
	return out
}
