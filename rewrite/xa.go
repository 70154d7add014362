package rewrite

import (
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
	"github.com/sqlfork/sqlfork-proxy/rewrite/splice"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// XA statements (sql/sql_yacc.yy, rule xa):
//
//	XA {START | BEGIN} xid [JOIN | RESUME]
//	XA END xid [SUSPEND [FOR MIGRATE]]
//	XA PREPARE xid
//	XA COMMIT xid [ONE PHASE]
//	XA ROLLBACK xid
//	XA RECOVER [FORMAT = {'RAW' | 'SQL'}]
//
// where xid is gtrid [, bqual [, formatID]]: two strings (a quoted one, or
// X'…', 0x…, B'…', 0b…) and a number. An XA transaction's id is the
// server's, shared by every connection: a prepared one outlives its
// connection, and any connection may commit, roll back or list it. A
// sandbox therefore keeps its ids apart (XAResolver): each gtrid it sends
// starts with the sandbox's prefix, and XA RECOVER answers with its own
// ids only, the prefix taken off.

// XA verbs.
const (
	XAStart    = "START"
	XAEnd      = "END"
	XAPrepare  = "PREPARE"
	XACommit   = "COMMIT"
	XARollback = "ROLLBACK"
	XARecover  = "RECOVER"
)

// maxXIDPart is the server's limit on a gtrid's and a bqual's bytes.
const maxXIDPart = 64

// XA is an XA statement as the engine reads it.
type XA struct {
	// Verb is one of the XA verbs (XA BEGIN is XAStart).
	Verb string
	// ID is the transaction's id (none for XA RECOVER).
	ID XID
	// Start and End are where the gtrid is in the text.
	Start, End int
	// SQLFormat marks XA RECOVER FORMAT = 'SQL'.
	SQLFormat bool
	// Refused is the server's error for a statement the proxy reads but
	// the server rejects (XA RECOVER FORMAT of an unknown name), which a
	// sandbox answers itself.
	Refused *Refusal
}

// XID is an XA transaction id.
type XID struct {
	Gtrid, Bqual []byte
	FormatID     int64
}

// XAResolver is a Resolver that keeps XA transaction ids apart: XAPrefix
// is what every gtrid the statement sends starts with ("" for none).
type XAResolver interface {
	XAPrefix() string
}

// readXA reads the XA statement toks hold (comments included), or says
// it cannot (ok false): a form the proxy does not read exactly, whose id
// it could not keep apart.
func readXA(text string, toks []lexer.Token, opts Options) (x *XA, ok bool) {
	var ts []lexer.Token
	for _, t := range toks {
		if t.Kind != lexer.Comment && !(t.Kind == lexer.Punct && text[t.Start] == ';') {
			ts = append(ts, t)
		}
	}
	word := func(i int) string { return lexer.Word(text, ts, i) }
	x = &XA{Verb: word(1)}
	if x.Verb == "BEGIN" {
		x.Verb = XAStart
	}
	switch x.Verb {
	case XARecover:
		if !xaFormat(text, ts, x, opts) {
			return nil, false
		}
		return x, true
	case XAStart, XAEnd, XAPrepare, XACommit, XARollback:
	default:
		return nil, false
	}
	next, ok := readXID(text, ts, 2, x, opts)
	if !ok {
		return nil, false
	}
	var tail []string
	for i := next; i < len(ts); i++ {
		tail = append(tail, word(i))
	}
	switch t := strings.Join(tail, " "); {
	case t == "",
		x.Verb == XAStart && (t == "JOIN" || t == "RESUME"),
		x.Verb == XAEnd && (t == "SUSPEND" || t == "SUSPEND FOR MIGRATE"),
		x.Verb == XACommit && t == "ONE PHASE":
		return x, true
	}
	return nil, false
}

// xaFormat reads XA RECOVER's [FORMAT = 'RAW' | 'SQL'] from ts[2].
func xaFormat(text string, ts []lexer.Token, x *XA, opts Options) bool {
	if len(ts) == 2 {
		return true
	}
	if len(ts) != 5 || lexer.Word(text, ts, 2) != "FORMAT" || !lexer.PunctAt(text, ts, 3, '=') {
		return false
	}
	// ident_or_text: a string ('…', or "…" without ANSI_QUOTES), a quoted
	// or plain identifier; SQL is a reserved word, a syntax error bare.
	var name string
	switch t := ts[4]; {
	case t.Kind == lexer.String && (text[t.Start] == '\'' || text[t.Start] == '"'):
		name = lexer.Unquote(text[t.Start:t.End], !opts.NoBackslashEscapes)
	case t.Kind == lexer.Quoted:
		name = lexer.IdentText(text, t)
	case t.Kind == lexer.Ident && strings.EqualFold(text[t.Start:t.End], "SQL"):
		x.Refused = ServerRefusal(wire.ErParse, "You have an error in your SQL syntax; check the manual that corresponds to your "+
			"MariaDB server version for the right syntax to use near '%s' at line 1", text[t.Start:])
		return true
	case t.Kind == lexer.Ident:
		name = text[t.Start:t.End]
	default:
		return false
	}
	switch f := strings.ToUpper(name); f {
	case "SQL", "RAW":
		x.SQLFormat = f == "SQL"
	default:
		x.Refused = ServerRefusal(errUnknownXAFormat, "Unknown XA RECOVER format name: '%s'", name)
	}
	return true
}

// errUnknownXAFormat is ER_UNKNOWN_EXPLAIN_FORMAT, which XA RECOVER
// FORMAT of an unknown name gets (sql/xa.cc).
const errUnknownXAFormat uint16 = 1791

// readXID reads gtrid [, bqual [, formatID]] from ts[i] into x; next is
// the index after it.
func readXID(text string, ts []lexer.Token, i int, x *XA, opts Options) (next int, ok bool) {
	if i >= len(ts) {
		return 0, false
	}
	x.ID.FormatID = 1
	if x.ID.Gtrid, ok = xidString(text, ts[i], opts); !ok {
		return 0, false
	}
	x.Start, x.End = int(ts[i].Start), int(ts[i].End)
	i++
	if !lexer.PunctAt(text, ts, i, ',') {
		return i, true
	}
	if i+1 >= len(ts) {
		return 0, false
	}
	if x.ID.Bqual, ok = xidString(text, ts[i+1], opts); !ok {
		return 0, false
	}
	i += 2
	if !lexer.PunctAt(text, ts, i, ',') {
		return i, true
	}
	// formatID is any number the server reads (ulong_num: decimal, 0x…,
	// a decimal fraction): the proxy sends it as written and needs its
	// value only where it is a plain decimal. A negative one is sent too,
	// for the server's syntax error.
	j := i + 1
	if lexer.PunctAt(text, ts, j, '-') {
		j++
	}
	if j >= len(ts) || ts[j].Kind != lexer.Number {
		return 0, false
	}
	if n, err := strconv.ParseInt(text[ts[j].Start:ts[j].End], 10, 64); err == nil && j == i+1 {
		x.ID.FormatID = n
	} else {
		x.ID.FormatID = -1
	}
	return j + 1, true
}

// xidString is the bytes of a gtrid or bqual written as t: a quoted string
// of ASCII (bytes above 0x7F would depend on the connection's character
// set), X'…' or 0x…, B'…' or 0b….
func xidString(text string, t lexer.Token, opts Options) ([]byte, bool) {
	s := text[t.Start:t.End]
	switch {
	case t.Kind == lexer.String && (s[0] == '\'' || s[0] == '"'):
		v := lexer.Unquote(s, !opts.NoBackslashEscapes)
		for i := 0; i < len(v); i++ {
			if v[i] >= 0x80 {
				return nil, false
			}
		}
		return []byte(v), true
	case t.Kind == lexer.String && (s[0] == 'x' || s[0] == 'X'):
		b, err := hex.DecodeString(s[2 : len(s)-1])
		return b, err == nil
	case t.Kind == lexer.Number && len(s) > 2 && s[0] == '0' && s[1] == 'x':
		h := s[2:]
		if len(h)%2 == 1 {
			h = "0" + h
		}
		b, err := hex.DecodeString(h)
		return b, err == nil
	case t.Kind == lexer.String && (s[0] == 'b' || s[0] == 'B'):
		return bitBytes(s[2 : len(s)-1])
	case t.Kind == lexer.Number && len(s) > 2 && s[0] == '0' && s[1] == 'b':
		return bitBytes(s[2:])
	}
	return nil, false
}

// bitBytes is the bytes of a bit literal's digits, right-aligned as the
// server stores them.
func bitBytes(bits string) ([]byte, bool) {
	if len(bits) == 0 {
		return []byte{}, true
	}
	n := (len(bits) + 7) / 8
	out := make([]byte, n)
	for i := 0; i < len(bits); i++ {
		c := bits[len(bits)-1-i]
		if c != '0' && c != '1' {
			return nil, false
		}
		if c == '1' {
			out[n-1-i/8] |= 1 << (i % 8)
		}
	}
	return out, true
}

// xaReps keeps the XA statement's id apart for r (an XAResolver): its
// gtrid, written as X'…', starts with r's prefix. Statements the engine
// could not read are refused.
func (a *Analysis) xaReps(r Resolver) ([]splice.Replacement, bool, error) {
	xr, ok := r.(XAResolver)
	if !ok || xr.XAPrefix() == "" {
		return nil, false, nil
	}
	var reps []splice.Replacement
	for _, st := range a.Statements {
		if st.Kind != KindXa {
			continue
		}
		if st.XA == nil {
			return nil, true, Refuse(wire.ErUnknown, "the proxy does not read this form of XA statement, so it cannot keep its "+
				"transaction id to the sandbox; write the id as 'text' of ASCII or X'…' (gtrid[, bqual[, formatID]])")
		}
		if st.XA.Verb == XARecover {
			continue
		}
		id := xr.XAPrefix() + string(st.XA.ID.Gtrid)
		if st.XA.Verb == XAStart && len(st.XA.ID.Gtrid) == 0 {
			// The server refuses an empty gtrid at XA START; with the
			// prefix it would not be empty.
			return nil, true, ServerRefusal(wire.ErXAInvalid, "XAER_INVAL: Invalid arguments (or unsupported command)")
		}
		// A gtrid or bqual beyond the server's 64 bytes goes as written
		// (prefixed), for the server's syntax error; one the prefix
		// makes too long is refused.
		if len(st.XA.ID.Gtrid) <= maxXIDPart && len(st.XA.ID.Bqual) <= maxXIDPart && len(id) > maxXIDPart {
			return nil, true, Refuse(wire.ErXAInvalid, "XAER_INVAL: Invalid arguments (or unsupported command): in a sandbox an XA "+
				"transaction's gtrid may be at most %d bytes (the proxy keeps %d of the server's 64 to tell sandboxes apart)",
				maxXIDPart-len(xr.XAPrefix()), len(xr.XAPrefix()))
		}
		reps = append(reps, splice.Replacement{Start: st.XA.Start, End: st.XA.End, Text: "X'" + hex.EncodeToString([]byte(id)) + "'"})
	}
	return reps, len(reps) > 0, nil
}
