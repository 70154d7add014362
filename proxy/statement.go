package proxy

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/session"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// maxStatement bounds a statement the proxy reads whole to plan it.
const maxStatement = 1 << 30

// statement is one statement of a sandboxing session, written once for
// COM_QUERY, COM_STMT_PREPARE, COM_STMT_EXECUTE and each part of a
// multi-statement input. The session runs it (session.Session.Run), in
// order: plan, fork, ready the transaction, send, relay, record; the
// statement is the session.Exchange through which it sends and relays.
type statement struct {
	c   *clientConn
	cmd byte
	// sql is the client's text (COM_QUERY, COM_STMT_PREPARE).
	sql string
	// ps is the statement a COM_STMT_EXECUTE executes: its packet stays
	// unread until it is sent.
	ps *preparedStmt
	// params are its parameters, when read (executeParams).
	params []wire.Param
	// more: the client's input goes on after this statement; part: it is
	// a part of a multi-statement input the session split.
	more, part bool
	// start is when it began; out what was sent upstream for it.
	start time.Time
	out   sent
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
	params := c.executeParams(cmd, ps)
	_, err = c.runStatement(&statement{cmd: cmd, ps: ps, params: params})
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

// runStatement has the session run one statement. ok is false when the
// client got an error for it (which ends a multi-statement input); err is
// set only when the connection broke.
func (c *clientConn) runStatement(st *statement) (ok bool, err error) {
	st.c, st.start = c, time.Now()
	in := session.Input{Text: st.sql, Prepare: st.cmd == wire.ComStmtPrepare, Part: st.part}
	if st.ps != nil {
		in.Prepared, in.Params = st.ps.plan, st.params
	}
	ok, err = c.sbx.Run(c.ctx(), in, st)
	return ok, linkOr(err)
}

// Refuse answers err in place of the statement's answer (session.Exchange).
func (st *statement) Refuse(p *session.Plan, err error) error {
	return st.c.refuseStatement(st, p, err)
}

// Answer writes the session's own answer (session.Exchange).
func (st *statement) Answer(p *session.Plan) error {
	c := st.c
	c.countStatement(st, p, answered{})
	if st.ps != nil {
		if err := c.out.discardCommand(); err != nil {
			return err
		}
	}
	return c.out.writeReply(p.Reply, st.more)
}

// Send sends the statement upstream (session.Exchange).
func (st *statement) Send(ctx context.Context, p *session.Plan, replanned bool) error {
	st.c.state.setKillable(p.Killable())
	var err error
	st.out, err = st.c.send(ctx, st, p, replanned)
	return err
}

// Relay relays the statement's answer (session.Exchange); a statement
// prepared is tracked from then on.
func (st *statement) Relay(ctx context.Context, p *session.Plan, rl *session.Relabel) (*session.Outcome, error) {
	c := st.c
	a := c.answer(wire.ShapeResults, st.out.cursor)
	if st.cmd == wire.ComStmtPrepare {
		a.shape = wire.ShapePrepare
	} else if p.ReadsInsertID() && st.cmd != wire.ComStmtBulkExecute {
		a.insertID = func(o wire.OK) (uint64, bool, error) { return c.sbx.InsertID(ctx, p, o) }
	}
	a.shift, a.more, a.relabel = st.out.shift, st.more, rl
	res, err := c.out.forward(a)
	if err != nil {
		return nil, err
	}
	c.countStatement(st, p, res)
	if st.cmd == wire.ComStmtPrepare && res.isPrepared {
		if c.stmts == nil {
			c.stmts = map[uint32]*preparedStmt{}
		}
		c.stmts[res.prepared.ID] = &preparedStmt{plan: p, upstreamID: res.prepared.ID, params: res.prepared.Params}
	}
	return &session.Outcome{Failed: res.failed, Code: res.code, OKs: res.oks, Payload: st.out.payload,
		Prepared: st.out.prepared, Unreplayable: res.infile}, nil
}

// send sends a planned statement upstream. A server error (preparing an
// execution's statement anew) is for the client.
func (c *clientConn) send(ctx context.Context, st *statement, plan *session.Plan, replanned bool) (sent, error) {
	if st.ps == nil {
		out := sent{payload: append([]byte{st.cmd}, plan.SQL...)}
		err := c.sendUpstream(out.payload, &out)
		return out, err
	}
	ps := st.ps
	if replanned {
		if err := c.prepareAgain(ctx, ps, plan); err != nil {
			return sent{}, err
		}
	}
	defer func() { ps.longData = false }() // the server's execution takes it
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

// prepareAgain prepares ps upstream anew as plan says. A statement whose
// parameter the client sent as long data keeps the upstream statement
// holding it when plan's text is the one prepared (a lazy fork's fill
// ended: the same names, a table the server prepares it again for by
// itself); otherwise the data is gone with the old statement, and the
// execution is refused, saying to send it again.
func (c *clientConn) prepareAgain(ctx context.Context, ps *preparedStmt, plan *session.Plan) error {
	if ps.longData && plan.SQL == ps.plan.SQL {
		ps.plan = plan
		return nil
	}
	id, err := c.be.prepare(ctx, plan.SQL)
	if err != nil {
		return linkOr(err)
	}
	c.be.closeStmt(ps.upstreamID)
	ps.upstreamID, ps.plan, ps.needTypes = id, plan, true
	c.log.Debug("statement prepared again for the sandbox", zap.Uint32("upstream_id", id))
	if ps.longData {
		ps.longData = false
		return rewrite.Refuse(wire.ErUnknown, "the sandbox's tables this statement names changed since COM_STMT_SEND_LONG_DATA "+
			"sent a parameter, and the proxy prepared it again upstream without that data; send it again, then execute")
	}
	return nil
}

// resetLongData clears, with COM_STMT_RESET, the long data the server
// keeps for ps when the proxy answered its execution itself (a refusal, a
// KILL while it waited): the server's own execution would have used it up.
func (c *clientConn) resetLongData(ps *preparedStmt) error {
	if !ps.longData {
		return nil
	}
	ps.longData = false
	p := []byte{wire.ComStmtReset, 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(p[1:], ps.upstreamID)
	_, err := c.be.roundTrip(c.ctx(), p, false)
	return linkOr(err)
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
		if err := c.resetLongData(st.ps); err != nil && !isClientFacing(err) {
			return err
		}
		return c.answerInstead(e)
	}
	return c.out.writeErrNoFlush(e)
}

// countStatement records a statement the client got an answer to in the
// metrics (not COM_STMT_PREPARE).
func (c *clientConn) countStatement(st *statement, plan *session.Plan, res answered) {
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
	c.srv.m.StatementDuration.WithLabelValues(class).Observe(time.Since(st.start).Seconds())
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
	// A database the sandbox made is its schema upstream; one it dropped
	// is unknown.
	send, err := c.sbx.InitDBName(name)
	if err != nil {
		return c.out.writeErr(clientError(err))
	}
	if send != name {
		p = append([]byte{p[0]}, send...)
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
