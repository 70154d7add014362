package rewrite

import (
	"strings"
	"testing"
)

// xaSandbox maps nothing and keeps XA ids apart with the prefix "~sb~".
type xaSandbox struct{ mapsNothingResolver }

func (xaSandbox) XAPrefix() string { return "~sb~" }

// TestReadXA reads the XA statements' forms: each id's bytes, and where
// its gtrid is.
func TestReadXA(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	for _, c := range []struct {
		sql, verb, gtrid, bqual string
		format                  int64
		sqlFormat               bool
	}{
		{sql: "XA START 'g1'", verb: XAStart, gtrid: "g1", format: 1},
		{sql: "xa begin 'g1', 'b1' /* c */", verb: XAStart, gtrid: "g1", bqual: "b1", format: 1},
		{sql: "XA START X'00ff', 'b', 7 JOIN", verb: XAStart, gtrid: "\x00\xff", bqual: "b", format: 7},
		{sql: "XA END 0x4142 SUSPEND FOR MIGRATE", verb: XAEnd, gtrid: "AB", format: 1},
		{sql: "XA PREPARE b'01000001';", verb: XAPrepare, gtrid: "A", format: 1},
		{sql: "XA COMMIT 'a''b\\\\c', '', 0 ONE PHASE", verb: XACommit, gtrid: "a'b\\c", format: 0},
		{sql: "XA ROLLBACK \"g\"", verb: XARollback, gtrid: "g", format: 1},
		{sql: "XA RECOVER", verb: XARecover},
		{sql: "XA RECOVER FORMAT='SQL'", verb: XARecover, sqlFormat: true},
		{sql: "XA RECOVER FORMAT = raw", verb: XARecover},
		{sql: "XA RECOVER FORMAT = \"sql\"", verb: XARecover, sqlFormat: true},
		{sql: "XA RECOVER FORMAT = `SQL`", verb: XARecover, sqlFormat: true},
		{sql: "XA START 'g', '', 0x10", verb: XAStart, gtrid: "g", format: -1},
		{sql: "XA START 'g', '', 1.5", verb: XAStart, gtrid: "g", format: -1},
	} {
		a := e.Analyze(c.sql, opts)
		if len(a.Statements) != 1 || a.Statements[0].XA == nil {
			t.Errorf("%q: not read as XA: %+v", c.sql, a.Statements)
			continue
		}
		x := a.Statements[0].XA
		if x.Verb != c.verb || string(x.ID.Gtrid) != c.gtrid || string(x.ID.Bqual) != c.bqual || x.ID.FormatID != c.format && c.verb != XARecover ||
			x.SQLFormat != c.sqlFormat {
			t.Errorf("%q: read %+v", c.sql, x)
		}
	}
	for _, sql := range []string{"XA START 'é'", "XA START _latin1'x'", "XA START 'g' JOIN RESUME", "XA COMMIT 'g', 'b', x",
		"XA START 'g' ONE PHASE", "XA START"} {
		if a := e.Analyze(sql, opts); len(a.Statements) == 1 && a.Statements[0].XA != nil {
			t.Errorf("%q read as %+v", sql, a.Statements[0].XA)
		}
	}
}

// TestXAIdsKeptApart: in a sandbox every XA id the client writes reaches
// the server with the sandbox's prefix, as X'…'; forms the engine does not
// read, and gtrids the prefix would make too long, are refused.
func TestXAIdsKeptApart(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	hex := func(s string) string {
		var b strings.Builder
		for _, c := range []byte("~sb~" + s) {
			b.WriteString(strings.ToLower(string("0123456789abcdef"[c>>4]) + string("0123456789abcdef"[c&15])))
		}
		return "X'" + b.String() + "'"
	}
	wantRewrites(t, e, opts, xaSandbox{}, []rewriteCase{
		{"XA START 'g1'", "XA START " + hex("g1")},
		{"XA END 'g1', 'b', 3", "XA END " + hex("g1") + ", 'b', 3"},
		{"XA COMMIT X'0001' ONE PHASE", "XA COMMIT " + hex("\x00\x01") + " ONE PHASE"},
		{"XA RECOVER", "XA RECOVER"},
	})
	wantRefused(t, e, opts, xaSandbox{}, "XA START _latin1'x'", "XA START '"+strings.Repeat("g", 61)+"'", "XA START ''", "XA START X'', 'b'")
	// The server's errors: XA RECOVER FORMAT of an unknown name (1791),
	// FORMAT=SQL bare (SQL is reserved: 1064).
	for sql, code := range map[string]uint16{"XA RECOVER FORMAT='XML'": 1791, "XA RECOVER FORMAT=SQL": 1064} {
		if a := e.Analyze(sql, opts); len(a.Statements) != 1 || a.Statements[0].XA == nil || a.Statements[0].XA.Refused == nil ||
			a.Statements[0].XA.Refused.Code != code {
			t.Errorf("%q: %+v, want the server's %d", sql, a.Statements, code)
		}
	}
	// A gtrid beyond the server's 64 bytes, or a negative formatID, goes
	// (prefixed) for the server's syntax error; an empty gtrid ends a
	// transaction as on the server (none has it).
	long := strings.Repeat("g", 65)
	wantRewrites(t, e, opts, xaSandbox{}, []rewriteCase{
		{"XA START '" + long + "'", "XA START " + hex(long)},
		{"XA START 'g', '', -1", "XA START " + hex("g") + ", '', -1"},
		{"XA START 'g', '', 0x10", "XA START " + hex("g") + ", '', 0x10"},
		{"XA ROLLBACK ''", "XA ROLLBACK " + hex("")},
	})
	// Outside a sandbox the text is sent as written.
	wantRewrites(t, e, opts, mapsNothingResolver{}, []rewriteCase{{"XA START 'g1'", "XA START 'g1'"}})
}
