package proxy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/session"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// maxStatement bounds a statement the proxy reads whole to plan it.
const maxStatement = 1 << 30

// statement is one statement of a sandboxing session on its way through
// the pipeline, written once for COM_QUERY, COM_STMT_PREPARE,
// COM_STMT_EXECUTE and each part of a multi-statement input:
//
//	plan     session.Plan (or Revalidate for an execution): answer, refuse, or a text to send
//	prepare  session.Before: restart or replay the transaction past a fork
//	send     the text (or the execution, prepared anew if its plan changed)
//	relay    relay.forward, names told back by session.Relabel
//	record   session.After: transaction record and tracking, settings read back
type statement struct {
	cmd byte
	// sql is the client's text (COM_QUERY, COM_STMT_PREPARE).
	sql string
	// ps is the statement a COM_STMT_EXECUTE executes: its packet stays
	// unread until it is sent.
	ps *preparedStmt
	// replanned: ps's plan no longer held and was made anew; the
	// statement must be prepared again upstream before it runs.
	replanned bool
	// more: the client's input goes on after this statement; part: it is
	// a part of a multi-statement input the session split.
	more, part bool
}

// sent is what went upstream for a statement.
type sent struct {
	// payload is the command as sent, for a replay (nil: not replayable
	// as sent); prepared is the text an execution executes.
	payload  []byte
	prepared string
	shift    uint8
	cursor   bool
}

// query runs COM_QUERY or COM_STMT_PREPARE of a sandboxing session.
func (c *clientConn) query(cmd byte) error {
	p, err := c.readCommand(maxStatement)
	if err != nil {
		return err
	}
	sql := string(p[1:])
	if cmd == wire.ComQuery {
		parts, err := c.sbx.Split(c.ctx(), sql, c.caps&wire.CapMultiStatements != 0)
		if err != nil {
			return c.finish(c.refuseStatement(&statement{cmd: cmd, sql: sql}, nil, err))
		}
		if parts != nil {
			return c.multi(parts)
		}
	}
	_, err = c.runStatement(&statement{cmd: cmd, sql: sql})
	return c.finish(err)
}

// multi runs the parts of a multi-statement input that holds SANDBOX
// statements in turn, their answers joined into one response (more
// results between them). As on the server, the first error ends the input.
func (c *clientConn) multi(parts []string) error {
	for i, sql := range parts {
		ok, err := c.runStatement(&statement{cmd: wire.ComQuery, sql: sql, more: i < len(parts)-1, part: true})
		if err != nil || !ok {
			return c.finish(err)
		}
	}
	return c.finish(nil)
}

// execute runs COM_STMT_EXECUTE of a sandboxing session.
func (c *clientConn) execute(cmd byte) error {
	b, err := c.cr.Peek(wire.HeaderLen + 5)
	if err != nil {
		return &linkError{side: sideClient, err: noEOF(err)}
	}
	id := binary.LittleEndian.Uint32(b[wire.HeaderLen+1:])
	ps := c.stmts[id]
	if ps == nil {
		// Every statement the client prepared is tracked: this id names
		// none, or is MariaDB's -1, "the last one prepared", which the
		// server may read again with other settings than the proxy did.
		if id == 0xFFFFFFFF {
			return c.answerInstead(wire.Error(wire.ErUnknownStmtHandler, "sqlfork-proxy: statement id -1 "+
				"(the last statement prepared) is not accepted through the proxy; execute the id COM_STMT_PREPARE returned"))
		}
		return c.answerInstead(wire.Error(wire.ErUnknownStmtHandler,
			"Unknown prepared statement handler (%d) given to %s", id, executeFunc(cmd)))
	}
	_, err = c.runStatement(&statement{cmd: cmd, ps: ps})
	return c.finish(err)
}

// finish flushes what the statements of a command left for the client,
// unless err broke the connection.
func (c *clientConn) finish(err error) error {
	if err != nil {
		return err
	}
	return c.out.flush()
}

// runStatement takes one statement through the pipeline. ok is false when the
// client got an error for it (which ends a multi-statement input); err is
// set only when the connection broke.
func (c *clientConn) runStatement(st *statement) (ok bool, err error) {
	start := time.Now()
	plan, err := c.plan(st)
	if err != nil {
		return false, c.refuseStatement(st, plan, err)
	}
	if plan.Reply != nil {
		c.countStatement(st, plan, start, answered{})
		if st.ps != nil {
			if err := c.out.discardCommand(); err != nil {
				return false, err
			}
		}
		return true, c.out.writeReply(plan.Reply, st.more)
	}
	if err := c.sbx.Before(c.ctx(), plan); err != nil {
		return false, c.refuseStatement(st, plan, err)
	}
	c.state.setKillable(plan.Killable())
	out, err := c.send(st, plan)
	if err != nil {
		// The statement never ran: what planning made for it goes.
		c.sbx.Abandon(c.ctx(), plan)
		return false, c.refuseStatement(st, plan, err)
	}
	a := c.answer(wire.ShapeResults, out.cursor)
	if st.cmd == wire.ComStmtPrepare {
		a.shape = wire.ShapePrepare
	}
	a.shift, a.more, a.relabel = out.shift, st.more, c.sbx.Relabel(plan)
	res, err := c.out.forward(a)
	if err != nil {
		return false, err
	}
	c.countStatement(st, plan, start, res)
	if st.cmd == wire.ComStmtPrepare && res.isPrepared {
		if c.stmts == nil {
			c.stmts = map[uint32]*preparedStmt{}
		}
		c.stmts[res.prepared.ID] = &preparedStmt{plan: plan, upstreamID: res.prepared.ID, params: res.prepared.Params}
	}
	o := &session.Outcome{Failed: res.failed, Code: res.code, OKs: res.oks, Payload: out.payload, Prepared: out.prepared,
		Prepare: st.cmd == wire.ComStmtPrepare, Execution: st.ps != nil, Unreplayable: res.infile, Part: st.part}
	if err := c.sbx.After(c.ctx(), plan, o); err != nil {
		return false, linkOr(err)
	}
	return !res.failed, nil
}

// plan is the statement's plan: its text's for a query or a prepare, its
// prepared statement's (made anew if it no longer holds) for an execution.
func (c *clientConn) plan(st *statement) (*session.Plan, error) {
	if st.ps != nil {
		np, err := c.sbx.Revalidate(c.ctx(), st.ps.plan)
		if err != nil || np == nil {
			return st.ps.plan, err
		}
		st.replanned = true
		return np, nil
	}
	start := time.Now()
	p, err := c.sbx.Plan(c.ctx(), st.sql, st.cmd == wire.ComStmtPrepare)
	c.srv.m.RewriteDuration.Observe(time.Since(start).Seconds())
	return p, err
}

// send sends a planned statement upstream. A server error (preparing an
// execution's statement anew) is for the client.
func (c *clientConn) send(st *statement, plan *session.Plan) (sent, error) {
	if st.ps == nil {
		out := sent{payload: append([]byte{st.cmd}, plan.SQL...)}
		err := c.sendUpstream(out.payload, &out)
		return out, err
	}
	ps := st.ps
	if st.replanned {
		id, err := c.be.prepare(c.ctx(), plan.SQL)
		if err != nil {
			return sent{}, linkOr(err)
		}
		c.be.closeStmt(ps.upstreamID)
		ps.upstreamID, ps.plan, ps.needTypes = id, plan, true
		c.log.Debug("statement prepared again for the sandbox", zap.Uint32("upstream_id", id))
	}
	bulk := st.cmd == wire.ComStmtBulkExecute
	out := sent{cursor: !bulk && c.pendingCursor(), prepared: ps.plan.SQL}
	ps.fetched = 0 // a new execution opens a new cursor
	if c.executeFastPath(ps, bulk) {
		// Forwarded untouched, as a plain proxy does (nothing to record).
		return out, c.out.passCommand()
	}
	p, err := c.readCommand(maxStatement)
	if err != nil {
		return sent{}, err
	}
	fix, with := ps.fixExecute, ps.withTypes
	if bulk {
		fix, with = ps.fixBulk, ps.withBulkTypes
	}
	p = fix(p)
	if !out.cursor { // a cursor's rows come with FETCH: not replayable
		out.payload = with(p) // replayable only with its parameter types in it
	}
	err = c.sendUpstream(p, &out)
	return out, err
}

// sendUpstream writes a command the proxy made (numbered from 0, as every
// command is) and flushes it; out.shift becomes what renumbers its answer
// to continue the client's sequence.
func (c *clientConn) sendUpstream(payload []byte, out *sent) error {
	next, err := wire.WritePacket(c.be.w, 0, payload)
	if err != nil {
		return &linkError{side: sideUpstream, write: true, err: err}
	}
	out.shift = c.out.seq - next
	return c.out.toUpstream.flush()
}

// refuseStatement answers err, from planning, readying or sending a
// statement, to the client in place of the statement's answer, and counts
// it; an error that broke the connection is returned instead.
func (c *clientConn) refuseStatement(st *statement, plan *session.Plan, err error) error {
	var le *linkError
	if errors.As(err, &le) {
		return err
	}
	c.log.Debug("statement refused", zap.Error(err))
	c.srv.countGuardrail(err)
	e := clientError(err)
	c.srv.m.SandboxRefusals.WithLabelValues(strconv.Itoa(int(e.Code))).Inc()
	class := plan.Class()
	if plan == nil {
		class = c.sbx.Classify(st.sql)
	}
	c.srv.m.Statements.WithLabelValues(class, "refused").Inc()
	if st.ps != nil {
		// An execution is refused before its packet is read (send reads
		// it last): drop it.
		return c.answerInstead(e)
	}
	return c.out.writeErrNoFlush(e)
}

// countStatement records a statement the client got an answer to in the
// metrics (not COM_STMT_PREPARE).
func (c *clientConn) countStatement(st *statement, plan *session.Plan, start time.Time, res answered) {
	if st.cmd == wire.ComStmtPrepare {
		return
	}
	outcome := "ok"
	if res.failed {
		outcome = "error"
	}
	class := plan.Class()
	if res.failed && plan.TimedOut(res.code) {
		c.srv.m.GuardrailRefusals.WithLabelValues(session.GuardStatementTimeout).Inc()
	}
	c.srv.m.Statements.WithLabelValues(class, outcome).Inc()
	c.srv.m.StatementDuration.WithLabelValues(class).Observe(time.Since(start).Seconds())
}

// linkOr returns err as it is: errors that are the server's or refusals
// go to the client; the rest broke the upstream connection and are made
// link errors when they are not yet.
func linkOr(err error) error {
	var le *linkError
	if err == nil || errors.As(err, &le) || isClientFacing(err) {
		return err
	}
	return &linkError{side: sideUpstream, err: err}
}

// isClientFacing reports whether err is an answer for the client: the
// server's error, or a refusal of the proxy's.
func isClientFacing(err error) bool {
	var se interface{ ServerError() bool }
	var r interface {
		MySQLError() (uint16, string, string)
	}
	return errors.As(err, &se) && se.ServerError() || errors.As(err, &r)
}

// initDB forwards COM_INIT_DB of a sandboxing session, refusing the
// proxy's own databases, and records the database on success.
func (c *clientConn) initDB() error {
	p, err := c.readCommand(handshakeLimit)
	if err != nil {
		return err
	}
	name := string(p[1:])
	if e := c.srv.internalDB(c.acct, name); e != nil {
		c.srv.m.SandboxRefusals.WithLabelValues(strconv.Itoa(int(e.Code))).Inc()
		return c.out.writeErr(e)
	}
	if _, err := wire.WritePacket(c.be.w, c.out.seq-1, p); err != nil {
		return &linkError{side: sideUpstream, write: true, err: err}
	}
	if err := c.out.toUpstream.flush(); err != nil {
		return err
	}
	res, err := c.out.forward(c.answer(wire.ShapeSingle, false))
	if err != nil {
		return err
	}
	if !res.failed && len(res.oks) == 1 {
		if err := c.sbx.UseDB(c.ctx(), name); err != nil {
			return err
		}
	}
	return c.out.flush()
}

// fieldList relays COM_FIELD_LIST of a sandboxing session. A table the
// sandbox has its own copy of (forked, created, dropped) is listed from
// there: its physical database is made current upstream for the command
// (USE on the session's own connection) and the current one restored after,
// and the answer's schema told back; any other table as sent.
func (c *clientConn) fieldList() error {
	p, err := c.readCommand(handshakeLimit)
	if err != nil {
		return err
	}
	table := string(p[1:])
	if i := strings.IndexByte(table, 0); i >= 0 {
		table = table[:i]
	}
	physDB, rl, ok, err := c.sbx.FieldList(c.ctx(), table)
	if err != nil {
		if err = linkOr(err); !isClientFacing(err) {
			return err
		}
		return c.out.writeErr(clientError(err))
	}
	var cur string
	if ok {
		// The names go on the client's connection, in its character set.
		var phys string
		if cur, err = c.sbx.ClientName(c.sbx.DB()); err == nil {
			phys, err = c.sbx.ClientName(physDB)
		}
		if err != nil {
			return c.out.writeErr(clientError(err))
		}
		if _, err := c.be.query(c.ctx(), "USE "+quote.Ident(phys)); err != nil {
			if err = linkOr(err); !isClientFacing(err) {
				return err
			}
			return c.out.writeErr(clientError(err))
		}
	}
	if _, err := wire.WritePacket(c.be.w, c.out.seq-1, p); err != nil {
		return &linkError{side: sideUpstream, write: true, err: err}
	}
	if err := c.out.toUpstream.flush(); err != nil {
		return err
	}
	a := c.answer(wire.ShapeFields, false)
	a.relabel = rl
	if _, err := c.out.forward(a); err != nil {
		return err
	}
	if ok {
		if _, err := c.be.query(c.ctx(), "USE "+quote.Ident(cur)); err != nil {
			return fmt.Errorf("restore the current database %s after COM_FIELD_LIST: %w", cur, err)
		}
	}
	return c.out.flush()
}

// processInfo answers COM_PROCESS_INFO of a sandboxing session like SHOW
// PROCESSLIST: with the user's own connections.
func (c *clientConn) processInfo() error {
	if _, err := c.readCommand(handshakeLimit); err != nil {
		return err
	}
	rep, err := c.sbx.ProcessInfo(c.ctx())
	if err != nil {
		if err = linkOr(err); !isClientFacing(err) {
			return err
		}
		return c.out.writeErr(clientError(err))
	}
	if err := c.out.writeReply(rep, false); err != nil {
		return err
	}
	return c.out.flush()
}
