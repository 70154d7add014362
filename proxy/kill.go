package proxy

import (
	"encoding/binary"
	"errors"
	"strconv"

	"github.com/sqlfork/sqlfork-proxy/kill"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/session"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// KILL and the process list reach only the caller's own proxy user's
// connections (kill.Killer, session's process list): the Server is
// their Directory of this process's live connections. A connection is
// named by the id its greeting carried (what drivers cancel with) or by
// its upstream thread id (CONNECTION_ID()).

var _ kill.Directory = (*Server)(nil)

// Threads implements kill.Directory: the upstream thread ids of the
// live sessions of user.
func (s *Server) Threads(user string) map[uint32]bool {
	out := map[uint32]bool{}
	s.connsMu.Lock()
	defer s.connsMu.Unlock()
	for c := range s.conns {
		c.mu.Lock()
		be, u := c.be, c.user
		c.mu.Unlock()
		if be != nil && u == user {
			out[be.greeting.ConnID] = true
		}
	}
	return out
}

// KillTarget implements kill.Directory: the upstream thread id of the
// live session of user that id names. For a user the server polices
// (serverPolices) any id goes to the server, a greeting id translated.
func (s *Server) KillTarget(user string, id uint64) (uint32, bool) {
	anyone := s.serverPolices(user)
	s.connsMu.Lock()
	defer s.connsMu.Unlock()
	for c := range s.conns {
		c.mu.Lock()
		be, u, gid := c.be, c.user, c.greetingID
		c.mu.Unlock()
		if be == nil || u != user && !anyone {
			continue
		}
		if up := be.greeting.ConnID; id == uint64(gid) || id == uint64(up) && u == user {
			c.mu.Lock()
			interrupt := c.interrupt
			c.mu.Unlock()
			if interrupt != nil {
				interrupt() // a statement waiting in the proxy, not yet upstream
			}
			return up, true
		}
	}
	if anyone && id < proxyConnIDBase {
		return uint32(id), true
	}
	return 0, false
}

// serverPolices reports whether KILL by user's sessions is left to the
// server, as on a direct connection with the same credentials (1095
// without the privilege): the user is a proxy user sharing its upstream
// account with no other, in passthrough mode — an upstream account the
// proxy does not configure (a relayed login), or a configured passthrough
// user mapped to an upstream account of its own (no other login of the
// proxy, the proxy's own account included, maps to it). Other configured
// users, and every user in the sandboxing modes, reach only their own
// sessions.
func (s *Server) serverPolices(user string) bool {
	a, configured := s.accounts[user]
	if !configured {
		mode, _ := session.ParseMode(s.cfg.Mode)
		return mode == session.Passthrough
	}
	if user == s.cfg.UpstreamUser || s.modeOf(a) != session.Passthrough {
		return false // the proxy's own account serves every process's own connections too
	}
	for name, b := range s.accounts {
		if name != user && b.upstreamUser == a.upstreamUser {
			return false
		}
	}
	return true
}

// passthroughKill answers the pending COM_QUERY of a passthrough session
// if it is a KILL (reporting true). Passthrough sessions relay statements
// unread, so only texts that fit the read buffer are looked at: a longer
// one goes upstream as sent.
func (c *clientConn) passthroughKill() (bool, error) {
	hdr, err := c.cr.Peek(wire.HeaderLen)
	if err != nil {
		return false, nil
	}
	n := wire.PayloadLen(hdr)
	if n < 2 || wire.HeaderLen+n > c.cr.Size() {
		return false, nil
	}
	p, err := c.cr.Peek(wire.HeaderLen + n)
	if err != nil {
		return false, nil
	}
	opts := rewrite.Options{NoBackslashEscapes: c.be.status&wire.StatusNoBackslashEscapes != 0}
	eval := func(q string) (*string, error) {
		r, err := c.be.query(c.ctx(), q)
		if err != nil {
			return nil, upstreamErr(err)
		}
		if len(r.rows) == 0 || len(r.rows[0]) == 0 {
			return nil, nil
		}
		return r.rows[0][0], nil
	}
	stmt, ok, kerr := c.srv.killer.Statement(c.acct.name, string(p[wire.HeaderLen+1:]), opts, false, eval)
	if !ok {
		return false, nil
	}
	if _, err := c.readCommand(handshakeLimit); err != nil {
		return true, err
	}
	return true, c.kill(stmt, kerr)
}

// keepText keeps the text of the pending COM_QUERY of a passthrough
// session, when it fits the read buffer, for the liveness watcher to read
// should its client go away while it runs (killOrphan): only a plain read
// is killed then. A longer text, and every other command, runs to its end.
func (c *clientConn) keepText() {
	hdr, err := c.cr.Peek(wire.HeaderLen)
	if err != nil {
		return
	}
	n := wire.PayloadLen(hdr)
	if n < 2 || wire.HeaderLen+n > c.cr.Size() {
		return
	}
	p, err := c.cr.Peek(wire.HeaderLen + n)
	if err != nil {
		return
	}
	c.state.setText(p[wire.HeaderLen+1:], c.be.status&wire.StatusNoBackslashEscapes != 0)
}

// processKill answers COM_PROCESS_KILL: KILL CONNECTION of the 4-byte id.
func (c *clientConn) processKill() error {
	p, err := c.readCommand(handshakeLimit)
	if err != nil {
		return err
	}
	if len(p) < 5 {
		return c.out.writeErr(wire.Error(wire.ErMalformedPacket, "Malformed communication packet"))
	}
	stmt, err := c.srv.killer.ID(c.acct.name, uint64(binary.LittleEndian.Uint32(p[1:5])), false)
	return c.kill(stmt, err)
}

// kill runs stmt, a KILL translated for the upstream, on the client's
// own upstream connection and relays the answer; or answers refusal.
func (c *clientConn) kill(stmt string, refusal error) error {
	if refusal != nil {
		var le *linkError
		if errors.As(refusal, &le) {
			return refusal // evaluating the target broke the connection
		}
		e := clientError(refusal)
		if e.Code != wire.ErNoSuchThread {
			c.srv.m.SandboxRefusals.WithLabelValues(strconv.Itoa(int(e.Code))).Inc()
		}
		return c.out.writeErr(e)
	}
	var out sent
	if err := c.sendUpstream(append([]byte{wire.ComQuery}, stmt...), &out); err != nil {
		return err
	}
	a := c.answer(wire.ShapeResults, false)
	a.shift = out.shift
	if _, err := c.out.forward(a); err != nil {
		return err
	}
	return c.out.flush()
}
