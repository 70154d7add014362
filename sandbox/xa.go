package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
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

// XARow is a prepared XA transaction as XA RECOVER (its raw format)
// lists it.
type XARow struct {
	FormatID     int64
	Gtrid, Bqual string
}

// ParseXARow reads a row of XA RECOVER: formatID, gtrid_length,
// bqual_length, data (ok false for one it cannot read).
func ParseXARow(r []*string) (XARow, bool) {
	if len(r) != 4 || r[0] == nil || r[1] == nil || r[2] == nil || r[3] == nil {
		return XARow{}, false
	}
	format, err0 := strconv.ParseInt(*r[0], 10, 64)
	gl, err1 := strconv.Atoi(*r[1])
	bl, err2 := strconv.Atoi(*r[2])
	data := *r[3]
	if err0 != nil || err1 != nil || err2 != nil || gl < 0 || bl < 0 || gl+bl != len(data) {
		return XARow{}, false
	}
	return XARow{FormatID: format, Gtrid: data[:gl], Bqual: data[gl:]}, true
}

// Own is x as the sandbox whose prefix is p sees it, its gtrid without the
// prefix; ok is false for another's transaction.
func (x XARow) Own(p string) (XARow, bool) {
	if !strings.HasPrefix(x.Gtrid, p) {
		return XARow{}, false
	}
	x.Gtrid = x.Gtrid[len(p):]
	return x, true
}

// XID is x as XA COMMIT and XA ROLLBACK take it.
func (x XARow) XID() string {
	return "X'" + hex.EncodeToString([]byte(x.Gtrid)) + "',X'" + hex.EncodeToString([]byte(x.Bqual)) + "'," +
		strconv.FormatInt(x.FormatID, 10)
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
