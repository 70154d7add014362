package proxy

import (
	"encoding/binary"
	"fmt"

	"github.com/sqlfork/sqlfork-proxy/wire"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
)

// Proxy users share one upstream account, so the upstream would let any of
// them kill any other's statements. The proxy answers KILL itself: a
// client names a connection by the id its greeting carried (what drivers
// cancel with) or by its upstream thread id (CONNECTION_ID()), and only
// connections of its own proxy user are found; the proxy then kills the
// matching upstream thread on the client's own upstream connection.

// killStatement reports whether sql, sent as cmd (a statement or for
// preparing), is a KILL, which the proxy answers itself: with refusal if it
// cannot, else by killing k.
func (s *session) killStatement(cmd byte, sql string) (ok bool, refusal *mysql.MyError, k *rewrite.Kill) {
	if !mentionsKill(sql) {
		return false, nil, nil
	}
	a := s.srv.kills.Analyze(sql, s.options())
	kills := 0
	for _, st := range a.Statements {
		if st.Kind == "KILL" {
			kills++
			k = st.Kill
		}
	}
	switch {
	case kills == 0:
		return false, nil, nil
	case len(a.Statements) > 1:
		return true, newError(wire.ErUnknown, "HY000", "sqlfork-proxy: send KILL alone, not with other statements"), nil
	case cmd != wire.ComQuery:
		return true, newError(wire.ErUnknown, "HY000", "sqlfork-proxy: KILL cannot be prepared through the proxy; send it as a statement"), nil
	case k == nil:
		return true, newError(wire.ErUnknown, "HY000",
			"sqlfork-proxy: only KILL [CONNECTION | QUERY] <connection id> is supported through the proxy"), nil
	}
	return true, nil, k
}

// kill answers the KILL statement killStatement found.
func (s *session) kill(refusal *mysql.MyError, k *rewrite.Kill) error {
	if refusal != nil {
		return s.refused(refusal)
	}
	return s.killConn(k.ID, k.Query)
}

// passthroughKill answers the pending COM_QUERY if it is a KILL (reporting
// true). Passthrough sessions relay statements unread, so only texts that
// fit the read buffer are looked at: a longer one goes upstream as sent.
func (s *session) passthroughKill() (bool, error) {
	hdr, err := s.cr.Peek(wire.HeaderLen)
	if err != nil {
		return false, nil
	}
	n := wire.PayloadLen(hdr)
	if n < 2 || wire.HeaderLen+n > s.cr.Size() {
		return false, nil
	}
	p, err := s.cr.Peek(wire.HeaderLen + n)
	if err != nil {
		return false, nil
	}
	ok, refusal, k := s.killStatement(wire.ComQuery, string(p[wire.HeaderLen+1:]))
	if !ok {
		return false, nil
	}
	seq, err := s.discardCommand()
	if err != nil {
		return true, err
	}
	s.seq = seq + 1
	return true, s.kill(refusal, k)
}

// processKill answers COM_PROCESS_KILL: KILL CONNECTION of the 4-byte id.
func (s *session) processKill() error {
	p, seq, err := wire.ReadPacket(s.cr, nil, handshakeLimit)
	if err != nil {
		return &linkError{side: sideClient, err: noEOF(err)}
	}
	s.seq = seq + 1
	if len(p) < 5 {
		return s.writeErr(newError(wire.ErMalformedPacket, "08S01", "Malformed communication packet"))
	}
	return s.killConn(uint64(binary.LittleEndian.Uint32(p[1:5])), false)
}

// killConn kills the statement (query) or the connection id names, if it
// is one of this proxy user's, and answers the client with the upstream's
// reply.
func (s *session) killConn(id uint64, query bool) error {
	up, ok := s.srv.killTarget(s.acct.name, id)
	if !ok {
		return s.writeErr(newError(wire.ErNoSuchThread, "HY000", "Unknown thread id: %d", id))
	}
	stmt := fmt.Sprintf("KILL CONNECTION %d", up)
	if query {
		stmt = fmt.Sprintf("KILL QUERY %d", up)
	}
	s.h = packetHead{}
	if _, err := wire.WritePacket(s.be.w, 0, append([]byte{wire.ComQuery}, stmt...)); err != nil {
		return &linkError{side: sideUpstream, write: true, err: err}
	}
	if err := s.toUpstream.flush(); err != nil {
		return err
	}
	if err := s.relayResults(false); err != nil {
		return err
	}
	return s.toClient.flush()
}

// killTarget finds the live session of user that id names (its greeting id
// or its upstream thread id) and returns its upstream thread id.
func (s *Server) killTarget(user string, id uint64) (uint32, bool) {
	s.connsMu.Lock()
	defer s.connsMu.Unlock()
	for c := range s.conns {
		c.mu.Lock()
		be, u, gid := c.be, c.user, c.greetingID
		c.mu.Unlock()
		if be == nil || u != user {
			continue
		}
		if up := be.greeting.connID; id == uint64(gid) || id == uint64(up) {
			return up, true
		}
	}
	return 0, false
}

// mentionsKill reports whether sql holds "kill" in any letter case: a
// statement without it is no KILL, whatever its comments.
func mentionsKill(sql string) bool {
	for i := 0; i+4 <= len(sql); i++ {
		if sql[i]|0x20 == 'k' && sql[i+1]|0x20 == 'i' && sql[i+2]|0x20 == 'l' && sql[i+3]|0x20 == 'l' {
			return true
		}
	}
	return false
}
