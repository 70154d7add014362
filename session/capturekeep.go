package session

import (
	"cmp"
	"context"
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
