package session

import (
	"cmp"
	"context"
	"regexp"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox/capture"
)

// stopCapturesFor stops the captures of the forks st, DDL, changes (a
// trigger's DDL leaves them): on the client's connection when st is the
// client's statement (its DDL commits the open transaction anyway),
// otherwise (a statement of a body, which runs later or not at all) on a
// side connection.
func (s *Session) stopCapturesFor(ctx context.Context, st rewrite.Statement, own bool) error {
	if st.Class != rewrite.ClassDDL || strings.Contains(string(st.Kind), "TRIGGER") || st.Temporary || s.sb == nil {
		return nil
	}
	if st.Kind == rewrite.KindCreateTable && st.IfNotExists {
		return nil // of a table the sandbox has: it changes nothing (rows a SELECT adds fire the triggers)
	}
	why := capture.SandboxDDL + cmp.Or(string(st.Kind), "DDL") + " in the sandbox"
	var on forker.Conn
	switch {
	case own:
		on = s.ownConn()
	case s.tx.Open():
		// The client's transaction may hold the table: a side connection
		// would wait for it. The triggers stay (capturing still); the fork
		// is compared whole.
		on = capture.KeepTriggers{}
	}
	return s.m.caps.Stop(ctx, s.sb, st.Writes, why, on)
}

// carriedDDL plans, for an input a that is the client's ALTER TABLE of one
// table alone (not prepared: it runs later or never), that the capture of
// the table's fork follows the ALTER once it ran (capture.Tracker.Carry,
// from executed) instead of stopping before it: the fork's shape before
// it is read now. An ALTER that may change rows without their triggers,
// or move values between columns (movesRows), is not carried, nor is
// anything when the fork's changes are not captured. carried reports
// whether it was planned so.
func (s *Session) carriedDDL(ctx context.Context, a *rewrite.Analysis, p *Plan, prepared bool) (carried bool, err error) {
	if prepared || len(a.Statements) != 1 || s.sb == nil {
		return false, nil
	}
	st := a.Statements[0]
	if st.Kind != rewrite.KindAlterTable || len(st.Writes) != 1 || movesRows.MatchString(p.text) {
		return false, nil
	}
	before, ok, err := s.m.caps.Before(ctx, s.sb, st.Writes[0])
	if err != nil || !ok {
		return false, err
	}
	p.refresh = append(p.refresh, st.Writes...)
	p.carry = &carriedCapture{table: st.Writes[0], before: before}
	return true, nil
}

// movesRows matches the words of ALTER TABLE clauses that change rows
// without firing their triggers (partitions, tablespaces, system
// versioning, IGNORE, which deletes duplicates a new unique key finds) or
// move values between columns (CHANGE, RENAME COLUMN: a swap of two names
// keeps the table's shape), anywhere in a text (a comment too: the
// capture then stops, which is always safe).
var movesRows = regexp.MustCompile(`(?i)partition|tablespace|versioning|\bignore\b|\bchange\b|\brename\b`)

// carriedCapture is a capture to carry across the input's ALTER TABLE of
// table, whose fork had the shape before.
type carriedCapture struct {
	table  rewrite.Table
	before forker.Shape
}

// ownConn is the client's own upstream connection as a forker.Conn (nil
// when the session has none: tests).
func (s *Session) ownConn() forker.Conn {
	if s.up == nil {
		return nil
	}
	return upstreamConn{s.up}
}

// upstreamConn runs the proxy's own statements on a client's connection.
type upstreamConn struct{ up Upstream }

// Exec implements forker.Conn.
func (u upstreamConn) Exec(ctx context.Context, sql string) (uint64, error) {
	r, err := u.up.Query(ctx, sql)
	if err != nil {
		return 0, err
	}
	var n uint64
	for _, ok := range r.OKs {
		n += ok.Affected
	}
	return n, nil
}

// Query implements forker.Conn.
func (u upstreamConn) Query(ctx context.Context, sql string) ([][]*string, error) {
	r, err := u.up.Query(ctx, sql)
	if err != nil {
		return nil, err
	}
	return r.Rows, nil
}
