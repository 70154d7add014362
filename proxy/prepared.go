package proxy

import (
	"encoding/binary"

	"github.com/sqlfork/sqlfork-proxy/session"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// preparedStmt is a server-side prepared statement of a sandboxing
// session. Its text was planned for the sandbox as it was at prepare time;
// when the plan no longer holds (session.Session.Run makes it anew) it is
// prepared again upstream, under a new id the proxy translates.
type preparedStmt struct {
	plan       *session.Plan
	upstreamID uint32
	params     int
	// types are the parameter types the client last sent (2 bytes each),
	// replayed to a re-prepared statement that has not had them yet.
	types     []byte
	needTypes bool
	// fetched counts the rows its open cursor has returned (max-rows).
	fetched int64
	// longData: COM_STMT_SEND_LONG_DATA sent a parameter's value since
	// its last execution, which then lacks that value.
	longData bool
}

// executeParams are the parameter values of the pending COM_STMT_EXECUTE
// of ps, read from the read buffer without consuming it, when the session
// has a lazy fork filling (they bound the rows it copies up); nil when
// they are not read: a bulk execution, a value sent as long data, a packet
// larger than the buffer.
func (c *clientConn) executeParams(cmd byte, ps *preparedStmt) []wire.Param {
	if cmd != wire.ComStmtExecute || ps.params == 0 || ps.longData || !c.sbx.Filling() {
		return nil
	}
	b, err := c.cr.Peek(wire.HeaderLen)
	if err != nil {
		return nil
	}
	n := wire.HeaderLen + wire.PayloadLen(b)
	if wire.PayloadLen(b) >= wire.MaxPayload || n > c.cr.Size() {
		return nil
	}
	if b, err = c.cr.Peek(n); err != nil {
		return nil
	}
	params, _, ok := wire.ExecuteParams(b[wire.HeaderLen:], ps.params, ps.types)
	if !ok {
		return nil
	}
	return params
}

// translateStmtID rewrites the statement id of a pending COM_STMT_* packet
// in place (in the read buffer) when the statement was prepared again
// upstream under another id.
func (c *clientConn) translateStmtID(cmd byte) *preparedStmt {
	b, err := c.cr.Peek(wire.HeaderLen + 5)
	if err != nil {
		return nil
	}
	id := binary.LittleEndian.Uint32(b[wire.HeaderLen+1:])
	ps := c.stmts[id]
	if ps == nil {
		return nil
	}
	if ps.upstreamID != id {
		binary.LittleEndian.PutUint32(b[wire.HeaderLen+1:], ps.upstreamID)
	}
	if cmd == wire.ComStmtClose {
		delete(c.stmts, id)
	}
	return ps
}

// executeFastPath reports whether the pending COM_STMT_EXECUTE (or, when
// bulk, COM_STMT_BULK_EXECUTE) of ps can be forwarded untouched — same id
// upstream, no types to add, and no transaction to record it for —
// recording the parameter types it carries (from the read buffer, without
// consuming it).
func (c *clientConn) executeFastPath(ps *preparedStmt, bulk bool) bool {
	if ps.needTypes || c.be.status&wire.StatusInTrans != 0 || c.be.status&wire.StatusAutocommit == 0 {
		return false
	}
	b, err := c.cr.Peek(wire.HeaderLen + 5)
	if err != nil || binary.LittleEndian.Uint32(b[wire.HeaderLen+1:]) != ps.upstreamID || wire.PayloadLen(b) >= wire.MaxPayload {
		return false
	}
	if ps.params == 0 {
		return true
	}
	flagAt := 10 + (ps.params+7)/8
	typesAt := flagAt + 1
	if bulk {
		typesAt = bulkTypesAt
	}
	need := wire.HeaderLen + typesAt + 2*ps.params
	if need > wire.PayloadLen(b)+wire.HeaderLen || need > c.cr.Size() {
		return false
	}
	b, err = c.cr.Peek(need)
	if err != nil {
		return false
	}
	p := b[wire.HeaderLen:]
	if bulk {
		ps.recordBulkTypes(p)
	} else if p[flagAt] == 1 {
		ps.types = append(ps.types[:0], p[flagAt+1:flagAt+1+2*ps.params]...)
	}
	return true
}

// bulkTypesAt is where the parameter types of a COM_STMT_BULK_EXECUTE
// payload go: after its statement id and flags.
const bulkTypesAt = 7

// bulkFlags are the flags of a COM_STMT_BULK_EXECUTE payload p (0 when p is
// too short to hold them).
func bulkFlags(p []byte) uint16 {
	if len(p) < bulkTypesAt {
		return 0
	}
	return binary.LittleEndian.Uint16(p[5:])
}

// recordBulkTypes records the parameter types a COM_STMT_BULK_EXECUTE
// payload p carries, if it does.
func (ps *preparedStmt) recordBulkTypes(p []byte) bool {
	n := 2 * ps.params
	if bulkFlags(p)&wire.BulkSendTypes == 0 || len(p) < bulkTypesAt+n {
		return false
	}
	ps.types = append(ps.types[:0], p[bulkTypesAt:bulkTypesAt+n]...)
	return true
}

// fixBulk is fixExecute for a COM_STMT_BULK_EXECUTE payload, whose types
// follow its flags when the SEND_TYPES flag is set.
func (ps *preparedStmt) fixBulk(p []byte) []byte {
	if len(p) < bulkTypesAt {
		return p
	}
	binary.LittleEndian.PutUint32(p[1:], ps.upstreamID)
	switch {
	case ps.params == 0:
	case ps.recordBulkTypes(p):
		ps.needTypes = false
	case ps.needTypes && len(ps.types) == 2*ps.params:
		ps.needTypes = false
		return ps.insertBulkTypes(p)
	}
	return p
}

// withBulkTypes is withTypes for a COM_STMT_BULK_EXECUTE payload.
func (ps *preparedStmt) withBulkTypes(p []byte) []byte {
	switch {
	case ps.params == 0 || bulkFlags(p)&wire.BulkSendTypes != 0:
		return p
	case len(p) < bulkTypesAt || len(ps.types) != 2*ps.params:
		return nil
	}
	return ps.insertBulkTypes(p)
}

// insertBulkTypes is the COM_STMT_BULK_EXECUTE payload p with the
// SEND_TYPES flag set and the recorded types after the flags.
func (ps *preparedStmt) insertBulkTypes(p []byte) []byte {
	out := make([]byte, 0, len(p)+len(ps.types))
	out = append(out, p[:bulkTypesAt]...)
	binary.LittleEndian.PutUint16(out[5:], bulkFlags(p)|wire.BulkSendTypes)
	out = append(out, ps.types...)
	return append(out, p[bulkTypesAt:]...)
}

// executeFunc names the server function executing cmd, as its "unknown
// prepared statement" error says.
func executeFunc(cmd byte) string {
	if cmd == wire.ComStmtBulkExecute {
		return "mysqld_stmt_bulk_execute"
	}
	return "mysqld_stmt_execute"
}

// typesAt is where the new-params-bound flag of an execute payload p of
// ps is (its parameter types follow it); ok is false when ps has no
// parameters or p is too short to hold the flag.
func (ps *preparedStmt) typesAt(p []byte) (at int, ok bool) {
	if ps.params == 0 {
		return 0, false
	}
	at = 10 + (ps.params+7)/8
	return at, len(p) > at
}

// withTypes returns an execute payload that carries its parameter types
// (new-params-bound flag 1), adding the last types the client sent when it
// has none; nil when they are unknown.
func (ps *preparedStmt) withTypes(p []byte) []byte {
	at, ok := ps.typesAt(p)
	switch {
	case ps.params == 0 || ok && p[at] == 1:
		return p
	case !ok || len(ps.types) != 2*ps.params:
		return nil
	}
	return ps.insertTypes(p, at)
}

// insertTypes is p with the new-params-bound flag at flagAt set and the
// recorded types after it.
func (ps *preparedStmt) insertTypes(p []byte, flagAt int) []byte {
	out := make([]byte, 0, len(p)+len(ps.types))
	out = append(out, p[:flagAt]...)
	out = append(out, 1)
	out = append(out, ps.types...)
	return append(out, p[flagAt+1:]...)
}

// fixExecute translates the id of an execute packet and records or
// replays its parameter types.
func (ps *preparedStmt) fixExecute(p []byte) []byte {
	if len(p) < 10 {
		return p
	}
	binary.LittleEndian.PutUint32(p[1:], ps.upstreamID)
	at, ok := ps.typesAt(p)
	switch {
	case !ok:
	case p[at] == 1:
		if len(p) >= at+1+2*ps.params {
			ps.types = append(ps.types[:0], p[at+1:at+1+2*ps.params]...)
		}
		ps.needTypes = false
	case ps.needTypes && len(ps.types) == 2*ps.params:
		ps.needTypes = false
		return ps.insertTypes(p, at)
	}
	return p
}
