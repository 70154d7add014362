package proxy

import (
	"strconv"

	sandbox "github.com/sqlfork/sqlfork-proxy/session"
)

// Proxy users share one upstream account, which sees all of its threads:
// the proxy answers SHOW [FULL] PROCESSLIST and COM_PROCESS_INFO of a
// sandboxing session itself, as a MySQL user without the PROCESS privilege
// sees only its own threads. It runs the statement on the session's own
// upstream connection and keeps the rows of its own proxy user's live
// connections (to this proxy process), in the server's own column
// definitions. Each row's Id is the connection's upstream thread id, what
// CONNECTION_ID() returns through the proxy and KILL accepts; User is the
// proxy user; Info has the user's sandbox databases told back in logical
// names.

// processList answers SHOW [FULL] PROCESSLIST (pl) for the session; more
// says another result of the same input follows. ok is false when the
// answer was an error (which ends an input).
func (s *session) processList(pl *sandbox.ProcessList, more bool) (ok bool, err error) {
	r, err := s.internal(pl.SQL())
	if se, isServer := err.(serverError); isServer {
		return false, s.writeErr(clientError(se))
	} else if err != nil {
		return false, err
	}
	if len(r.defs) < 8 {
		return false, s.malformed("SHOW PROCESSLIST result")
	}
	own := s.srv.userThreads(s.acct.name)
	var rows [][]*string
	user := s.acct.name
	for _, row := range r.rows {
		if len(row) != len(r.defs) || row[0] == nil {
			continue
		}
		id, err := strconv.ParseUint(*row[0], 10, 32)
		if err != nil || !own[uint32(id)] {
			continue
		}
		row[1] = &user
		if row[7] != nil {
			info := s.sbx.UnmapOwn(*row[7])
			row[7] = &info
		}
		rows = append(rows, row)
	}
	if err := s.writeResultSet(r.defs, rows, more); err != nil {
		return false, err
	}
	if more {
		return true, nil
	}
	return true, s.flushClient()
}

// processInfo answers COM_PROCESS_INFO like SHOW PROCESSLIST.
func (s *session) processInfo() error {
	seq, err := s.discardCommand()
	if err != nil {
		return err
	}
	s.seq = seq + 1
	_, err = s.processList(&sandbox.ProcessList{}, false)
	return err
}

// userThreads are the upstream thread ids of the live sessions of user.
func (s *Server) userThreads(user string) map[uint32]bool {
	out := map[uint32]bool{}
	s.connsMu.Lock()
	defer s.connsMu.Unlock()
	for c := range s.conns {
		c.mu.Lock()
		be, u := c.be, c.user
		c.mu.Unlock()
		if be != nil && u == user {
			out[be.greeting.connID] = true
		}
	}
	return out
}
