package proxy

import (
	"context"
	"fmt"
	"net"
	"time"

	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
)

// Connection liveness, both ways. A client waiting between commands does
// not read from the proxy, and an upstream running a statement is not
// written to: neither notices when the other side of its connection goes.
// Directly, a driver sees the server close an idle connection (wait_timeout,
// a restart, a failover) before it reuses it, and the server notices a
// client gone while it sends rows. Through the proxy, the liveness watcher
// gives both sides that back: every livenessInterval it looks, without
// reading, at the far side of each connection —
//
//   - an idle session whose upstream connection has closed (or says
//     anything unasked) gets its client connection closed, so pools and
//     drivers react as they do directly;
//   - a session running a plain read whose client has gone gets the
//     statement killed upstream (KILL QUERY on a connection of its own),
//     so it does not run on for nobody (directly, the server stops a
//     SLEEP when its client goes); anything else runs to its end, as
//     directly.
//
// Looking costs one non-blocking peek (recv MSG_PEEK) per connection and
// interval, and nothing per command.

// livenessInterval is how often the watcher looks at every connection.
const livenessInterval = 500 * time.Millisecond

// sockState is what a peek at a socket found.
type sockState int

const (
	sockQuiet   sockState = iota // nothing to read
	sockData                     // bytes to read
	sockClosed                   // the peer closed it, or it failed
	sockUnknown                  // cannot tell (not a socket, or not this platform)
)

// watchLiveness runs the liveness watcher until ctx ends.
func (s *Server) watchLiveness(ctx context.Context) {
	t := time.NewTicker(livenessInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.checkLiveness(ctx)
			s.livenessRounds.Add(1)
		}
	}
}

// checkLiveness looks at every connection once.
func (s *Server) checkLiveness(ctx context.Context) {
	s.connsMu.Lock()
	conns := make([]*connState, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.connsMu.Unlock()
	for _, c := range conns {
		s.checkConn(ctx, c)
	}
}

// checkConn looks at the far side of one connection: the upstream of an
// idle session, the client of a busy one. The peek is made under the
// connection's lock, so an idle session cannot start a command (and
// expect an answer from upstream) meanwhile.
func (s *Server) checkConn(ctx context.Context, c *connState) {
	c.mu.Lock()
	be, busy := c.be, c.busy
	if be == nil || c.closing {
		c.mu.Unlock()
		return
	}
	if !busy {
		st := peekSocket(be.socket)
		c.mu.Unlock()
		// Bytes an idle upstream sends unasked are its last words (MySQL's
		// 4031 on wait_timeout, MariaDB's 1927 on KILL); under TLS they may
		// be session tickets, so only a close counts there.
		if st == sockClosed || st == sockData && !be.usingTLS {
			s.m.UpstreamLost.Inc()
			s.log.Info("upstream connection closed while its client was idle; closing the client connection",
				zap.String("user", c.user), zap.Uint32("upstream_conn", be.greeting.ConnID))
			c.forceClose()
		}
		return
	}
	gone := !c.killed && (c.killable || len(c.text) > 0) && peekSocket(c.nc) == sockClosed
	c.killed = c.killed || gone
	user, killable := c.user, c.killable
	var text string
	if gone && !killable {
		text = string(c.text)
	}
	opts := rewrite.Options{NoBackslashEscapes: c.noBackslash}
	c.mu.Unlock()
	if gone {
		go func() {
			if killable || s.killer.PlainRead(text, opts) {
				s.killOrphan(ctx, user, be.greeting.ConnID)
			}
		}()
	}
}

// killOrphan kills the statement running on upstream thread id, whose
// client (of proxy user user) has gone, on a connection of its own. Only
// plain reads are killed (connState.killable): a write, DDL, a call, a
// locking read runs to its end as on a direct connection, where the server
// notices a client gone only when it next writes to it (a driver that
// cancels an INSERT by closing its connection finds the row written).
func (s *Server) killOrphan(ctx context.Context, user string, id uint32) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ConnectTimeout)
	defer cancel()
	err := s.killQuery(ctx, user, id)
	if err != nil {
		s.log.Warn("could not kill the statement of a client that went away", zap.String("user", user),
			zap.Uint32("upstream_conn", id), zap.Error(err))
		return
	}
	s.m.OrphanKills.Inc()
	s.log.Info("client went away during a statement; killed it upstream", zap.String("user", user), zap.Uint32("upstream_conn", id))
}

// killQuery runs KILL QUERY id on a new upstream connection: as the
// session's own upstream account when the proxy knows it (killing one's
// own statement needs no privilege), else as the proxy's account.
func (s *Server) killQuery(ctx context.Context, user string, id uint32) error {
	a := s.accounts[user]
	if a == nil {
		a = s.accounts[s.cfg.UpstreamUser]
	}
	be, err := dialBackend(ctx, s.dialParams(a, "", 45, sideCaps, map[string]string{"_proxy": "sqlfork-proxy", "_proxy_role": "kill"}))
	if err != nil {
		return err
	}
	defer (&sideConn{be: be}).Close()
	if _, err := be.query(ctx, fmt.Sprintf("KILL QUERY %d", id)); err != nil {
		return fmt.Errorf("KILL QUERY %d: %w", id, err)
	}
	return nil
}

// peekSocket looks at what c has to read without reading it.
func peekSocket(c net.Conn) sockState {
	if c == nil {
		return sockUnknown
	}
	return peek(c)
}
