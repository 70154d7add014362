package session

import (
	"context"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/session/txn"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// The open transaction, its record for a replay and its restart or replay
// past a fork are txn.Transaction's (session/txn); what follows gives it
// the session's plans, connection and sandbox.

// viewSince is the epoch a read view taken by the statement just run is at
// least as new as: every fork recorded by then was made before the
// statement was sent, so the view sees it.
func (s *Session) viewSince() uint64 { return max(s.sendEpoch, s.planEpoch) }

// txInput is p as the transaction reads it (nil for nil: a statement the
// proxy did not plan).
func (p *Plan) txInput() *txn.Input {
	if p == nil {
		return nil
	}
	return &txn.Input{Facts: p.tx, Shape: p.shape, SQL: p.SQL, Analysis: p.analysis, Statements: p.statements, Locks: p.locks,
		NoReplay: p.noReplay}
}

// txConn is the session's upstream connection and sandbox as a restart or
// replay of its transaction uses them (txn.Conn, txn.Sandbox).
type txConn struct{ s *Session }

var (
	_ txn.Conn    = txConn{}
	_ txn.Sandbox = txConn{}
)

// Query runs sql on the client's connection; the rows of its first result
// set.
func (c txConn) Query(ctx context.Context, sql string) ([][]*string, error) {
	r, err := c.s.up.Query(ctx, sql)
	if r == nil {
		return nil, err
	}
	return r.Rows, err
}

// Resend is Upstream.Resend.
func (c txConn) Resend(ctx context.Context, payload []byte, prepared string) ([]wire.OK, error) {
	return c.s.up.Resend(ctx, payload, prepared)
}

// Status is Upstream.Status.
func (c txConn) Status() uint16 { return c.s.up.Status() }

// Epoch is the registry's fork epoch.
func (c txConn) Epoch() uint64 { return c.s.m.reg.Epoch() }

// Physical is the sandbox's copy of t when it has one, else t.
func (c txConn) Physical(t rewrite.Table) rewrite.Table {
	if c.s.sb != nil {
		if en, ok := c.s.sb.Resolve(c.s.m.names.Key(t)); ok {
			return en.Phys
		}
	}
	return t
}

// Again copies up again the rows the rolled-back transaction copied up
// inside it (Session.copyUpAgain).
func (c txConn) Again(ctx context.Context) error { return c.s.copyUpAgain(ctx) }

// Logical is msg with the sandbox's names told back (Session.unmap).
func (c txConn) Logical(msg string) string { return c.s.unmap(msg) }

// Analyze reads sql with the server's dialect and no session settings.
func (c txConn) Analyze(sql string) *rewrite.Analysis {
	return c.s.m.engine.Analyze(sql, rewrite.Options{Server: c.s.m.server})
}
