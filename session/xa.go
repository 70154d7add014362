package session

import (
	"context"
	"strconv"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// XA transactions in a sandbox run on its tables as on a private server.
// Their ids are the sandbox's own (rewrite.XAResolver, sandbox.XAPrefix):
// the rewrite sends each with the sandbox's prefix, and XA RECOVER, which
// the proxy answers, lists the sandbox's prepared transactions only. A
// transaction the proxy would have to start again past a fork (txn.Needs)
// cannot be, in XA: the statement is refused instead (xaRestart).

// xaAllowed refuses, among a's statements, an XA statement the proxy does
// not read, and XA RECOVER sent with others (the proxy answers it alone).
func xaAllowed(a *rewrite.Analysis, st rewrite.Statement) error {
	switch {
	case st.XA == nil:
		return rewrite.Refuse(wire.ErOptionPreventsStatement, "the proxy does not read this form of XA statement, so it cannot keep "+
			"its transaction id to the sandbox; write the id as 'text' of ASCII or X'…' (gtrid[, bqual[, formatID]])")
	case st.XA.Refused != nil:
		// What the server answers to it (XA RECOVER FORMAT of an unknown
		// name), which the proxy answers in a sandbox.
		return st.XA.Refused
	case st.XA.Verb == rewrite.XARecover && len(a.Statements) > 1:
		return rewrite.Refuse(wire.ErOptionPreventsStatement, "XA RECOVER is answered alone in a sandbox (with the sandbox's own "+
			"transactions only); send it as a statement of its own")
	}
	return nil
}

// xaPrepared refuses SQL PREPARE of an XA statement in a sandbox: its id
// is kept apart when the client sends the statement itself.
func xaPrepared(st rewrite.Statement) error {
	if st.Inner == nil {
		return nil
	}
	for _, is := range st.Inner.Statements {
		if is.Kind == rewrite.KindXa {
			return rewrite.Refuse(wire.ErOptionPreventsStatement, "XA statements are not prepared with SQL PREPARE in a sandbox "+
				"(their transaction ids are kept to the sandbox when sent as statements); send the XA statement itself")
		}
	}
	return nil
}

// startsXA reports whether a holds XA START (or XA BEGIN).
func startsXA(a *rewrite.Analysis) bool {
	if a == nil {
		return false
	}
	for _, st := range a.Statements {
		if st.Kind == rewrite.KindXa && st.XA != nil && st.XA.Verb == rewrite.XAStart {
			return true
		}
	}
	return false
}

// xaRestartRefused is the error for a statement of an XA transaction that
// uses a table forked into sandbox after the transaction took its read
// view: an XA transaction cannot be started again unseen.
func xaRestartRefused(sandbox string) error {
	return rewrite.Refuse(wire.ErTableDefChanged, "Table definition has changed, please retry transaction: a table this statement "+
		"uses was forked into sandbox %q after the XA transaction read, and the proxy cannot start an XA transaction again "+
		"unseen; XA END and XA ROLLBACK it, then run it again (the fork now exists, so the retry works; or write the table "+
		"once in the sandbox before XA START)", sandbox)
}

// xaRecoverOnly reports whether a is XA RECOVER alone, which a sandbox
// answers itself (xaRecover).
func xaRecoverOnly(a *rewrite.Analysis) (*rewrite.XA, bool) {
	if len(a.Statements) != 1 || a.Statements[0].Kind != rewrite.KindXa || a.Statements[0].XA == nil ||
		a.Statements[0].XA.Verb != rewrite.XARecover {
		return nil, false
	}
	return a.Statements[0].XA, true
}

// xaRecover answers XA RECOVER in the sandbox: the server's prepared XA
// transactions that are the sandbox's, with its prefix taken off their
// ids, in the format x asks for; the server's column definitions.
func (s *Session) xaRecover(ctx context.Context, x *rewrite.XA) (*Reply, error) {
	if x.Refused != nil {
		return nil, x.Refused
	}
	r, err := s.up.Query(ctx, "XA RECOVER")
	if err != nil {
		return nil, err
	}
	if len(r.Columns) != 4 {
		return nil, rewrite.Refuse(wire.ErUnknown, "the server's answer to XA RECOVER has %d columns, not the 4 the proxy "+
			"filters; run it on a direct connection", len(r.Columns))
	}
	p := sandbox.XAPrefix(s.sb.ID)
	rep := &Reply{Defs: r.Columns}
	for _, row := range r.Rows {
		tx, ok := sandbox.ParseXARow(row)
		if ok {
			tx, ok = tx.Own(p)
		}
		if !ok {
			continue
		}
		gl, data := strconv.Itoa(len(tx.Gtrid)), tx.Gtrid+tx.Bqual
		if x.SQLFormat {
			data = sandbox.XASQL(tx.FormatID, tx.Gtrid, tx.Bqual)
		}
		rep.Rows = append(rep.Rows, []*string{row[0], &gl, row[2], &data})
	}
	return rep, nil
}
