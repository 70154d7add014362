package proxy

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sqlfork/sqlfork-proxy/wire"

	"github.com/go-mysql-org/go-mysql/mysql"
	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	sandbox "github.com/sqlfork/sqlfork-proxy/session"
)

// maxStatement bounds a statement the proxy reads whole to rewrite it.
const maxStatement = 1 << 30

// preparedStmt is a server-side prepared statement of a sandboxed session.
// Its text was rewritten for the sandbox as it was at prepare time; when
// the sandbox's tables change (a table it reads is forked later) it is
// prepared again upstream, under a new id the proxy translates.
type preparedStmt struct {
	sql        string
	opts       rewrite.Options
	plan       *sandbox.Plan
	upstreamID uint32
	params     int
	// types are the parameter types the client last sent (2 bytes each),
	// replayed to a re-prepared statement that has not had them yet.
	types     []byte
	needTypes bool
	// fetched counts the rows its open cursor has returned (max-rows).
	fetched int64
}

// ctx is the context of work done for the session: it ends with the
// client connection (or when shutdown forces it closed).
func (s *session) ctx() context.Context {
	if s.state == nil || s.state.ctx == nil {
		return context.Background()
	}
	return s.state.ctx
}

// options are the text-reading settings of the upstream session.
func (s *session) options() rewrite.Options {
	o := rewrite.Options{DB: s.db, ANSIQuotes: s.ansiQuotes, NoBackslashEscapes: s.status&wire.StatusNoBackslashEscapes != 0}
	if s.sbx != nil {
		o = s.sbx.Options(o)
	}
	return o
}

// planned handles COM_QUERY and COM_STMT_PREPARE in a sandboxing session:
// the statement is read whole, planned (answered, refused, or rewritten
// after forking what it writes) and the rewritten text sent upstream.
func (s *session) planned(cmd byte) error {
	p, seq, err := wire.ReadPacket(s.cr, nil, maxStatement)
	if err != nil {
		return &linkError{side: sideClient, err: noEOF(err)}
	}
	s.seq = seq + 1
	s.h = packetHead{} // nothing relayed yet for this statement
	sql := string(p[1:])
	if !s.varsKnown {
		if err := s.readVars(); err != nil {
			return s.writeErr(clientError(err))
		}
	}
	if ok, refusal, k := s.killStatement(cmd, sql); ok {
		return s.kill(refusal, k)
	}
	if cmd == wire.ComQuery {
		if pieces := s.sandboxPieces(sql); pieces != nil {
			if err := s.sbx.CheckMultiStatement(); err != nil {
				s.srv.countGuardrail(err)
				return s.refused(clientError(err))
			}
			return s.multiStatement(pieces)
		}
	}
	opts := s.options()
	start := time.Now()
	plan, err := s.sbx.Plan(s.ctx(), sql, opts, cmd == wire.ComStmtPrepare)
	s.srv.m.RewriteDuration.Observe(time.Since(start).Seconds())
	if err != nil {
		s.log.Debug("statement refused", zap.Error(err))
		s.srv.countGuardrail(err)
		s.srv.m.Statements.WithLabelValues(s.sbx.Classify(sql, opts), "refused").Inc()
		return s.refused(clientError(err))
	}
	if cmd == wire.ComQuery {
		defer s.countStatement(plan, start)
	}
	if plan.Reply != nil {
		return s.writeReply(plan.Reply)
	}
	if plan.ProcessList != nil {
		_, err := s.processList(plan.ProcessList, false)
		return err
	}
	if plan.Diagnostics {
		return s.diagnostics(plan.SQL)
	}
	if refused, err := s.beforeStatement(plan); err != nil {
		return err
	} else if refused != nil {
		s.sbx.Abandon(s.ctx(), plan)
		return s.writeErr(refused)
	}
	payload := append([]byte{cmd}, plan.SQL...)
	s.tx.start()
	if _, err := wire.WritePacket(s.be.w, 0, payload); err != nil {
		return &linkError{side: sideUpstream, write: true, err: err}
	}
	if err := s.toUpstream.flush(); err != nil {
		return err
	}
	s.unmap, s.plan = plan.Changed, plan
	defer func() { s.unmap, s.plan = false, nil }()
	if cmd == wire.ComStmtPrepare {
		if err := s.relayPrepare(); err != nil {
			return err
		}
		if s.prepared.ok {
			if s.stmts == nil {
				s.stmts = map[uint32]*preparedStmt{}
			}
			id := s.prepared.id
			s.stmts[id] = &preparedStmt{sql: sql, opts: opts, plan: plan, upstreamID: id, params: s.prepared.params}
		}
	} else if err := s.relayResults(false); err != nil {
		return err
	}
	if err := s.toClient.flush(); err != nil {
		return err
	}
	if cmd == wire.ComQuery {
		s.record(plan, payload, "")
	}
	return s.afterStatement(plan)
}

// countStatement records a finished statement in the metrics.
func (s *session) countStatement(plan *sandbox.Plan, start time.Time) {
	outcome := "ok"
	if s.h.first() == wire.ErrHeader {
		outcome = "error"
	}
	class := plan.Class()
	if outcome == "error" && s.h.n >= 3 && plan.TimedOut(binary.LittleEndian.Uint16(s.h.prefix[1:])) {
		s.srv.m.GuardrailRefusals.WithLabelValues(sandbox.GuardStatementTimeout).Inc()
	}
	s.srv.m.Statements.WithLabelValues(class, outcome).Inc()
	s.srv.m.StatementDuration.WithLabelValues(class).Observe(time.Since(start).Seconds())
}

// refused answers a statement the sandbox layer refused, and counts it.
func (s *session) refused(e *mysql.MyError) error {
	s.srv.m.SandboxRefusals.WithLabelValues(strconv.Itoa(int(e.Code))).Inc()
	return s.writeErr(e)
}

// beforeStatement restarts or replays the client's transaction when the
// plan asks for it. refused is the error the client gets instead of the
// statement's answer when that is impossible.
func (s *session) beforeStatement(plan *sandbox.Plan) (*mysql.MyError, error) {
	switch {
	case plan.Restart:
		if err := s.restartTransaction(); err != nil {
			if se, ok := err.(serverError); ok {
				return clientError(se), nil
			}
			return nil, err
		}
		s.srv.m.TransactionReplays.WithLabelValues("restarted").Inc()
	case plan.Replay:
		if why := s.replayTransaction(); why != "" {
			// The client is told to ROLLBACK and retry: roll back now, so
			// nothing of the transaction survives half-replayed.
			if _, err := s.internal("ROLLBACK"); err != nil {
				if _, ok := err.(serverError); !ok {
					return nil, err
				}
			}
			s.tx.reset()
			_ = s.sbx.Executed(s.ctx(), nil, s.status, false)
			s.srv.m.TransactionReplays.WithLabelValues("refused").Inc()
			s.log.Info("transaction could not be replayed after a fork", zap.String("why", why))
			return clientError(s.sbx.ReplayRefused(why)), nil
		}
		s.srv.m.TransactionReplays.WithLabelValues("replayed").Inc()
	}
	return nil, nil
}

// txLog is the open transaction's record: the statements that change
// state (as sent upstream) and what their OK packets said, so that after
// a fork the transaction can be rolled back and replayed in a new one.
type txLog struct {
	entries   []txEntry
	bytes     int
	broken    bool // holds something that cannot be replayed
	recording bool
	oks       []okInfo
}

type txEntry struct {
	payload []byte
	oks     []okInfo
	begin   bool // BEGIN / START TRANSACTION: the replay starts with it
	// prepared is the (rewritten) text of the statement a
	// COM_STMT_EXECUTE payload executes: the replay prepares it afresh,
	// since the client may have closed it meanwhile.
	prepared string
}

// maxTxLog bounds the bytes of statements kept for replay.
const maxTxLog = 1 << 20

func (t *txLog) start() { t.recording, t.oks = true, t.oks[:0] }

func (t *txLog) reset() { *t = txLog{oks: t.oks[:0]} }

// record keeps a finished statement in the transaction log when it may be
// needed for a replay.
func (s *session) record(plan *sandbox.Plan, payload []byte, prepared string) {
	t := &s.tx
	t.recording = false
	inTrx := s.status&wire.StatusInTrans != 0
	failed := s.h.first() == wire.ErrHeader
	var code uint16
	if failed && s.h.n >= 3 {
		code = binary.LittleEndian.Uint16(s.h.payload()[1:])
	}
	switch {
	case !inTrx || code == wire.ErLockDeadlock || plan != nil && plan.DDL:
		// Ended, rolled back by a deadlock, or committed implicitly by
		// DDL (even DDL that fails).
		t.reset()
		return
	case plan != nil && plan.TxEnd:
		// The transaction ended within the input; what is open now (after
		// COMMIT AND CHAIN, or a later BEGIN) started inside it, and a
		// replay could not tell which of its statements belong to it.
		t.reset()
		t.broken = failed || plan.Statements > 1
		return
	case failed && (len(t.oks) > 0 || plan != nil && plan.Statements > 1):
		t.broken = true // part of a multi-statement input took effect
		return
	case failed:
		return // a failed statement changed nothing
	case plan == nil || payload == nil:
		t.broken = true
		return
	case plan.Begin:
		// BEGIN commits any open transaction and starts a new one.
		oks := append([]okInfo(nil), t.oks...)
		t.reset()
		t.oks = oks
	case plan.TxControl:
		t.broken = true // savepoints: not replayed
		return
	case plan.ReadVars || plan.UseDB:
		// A replay sends the recorded statements again under the settings
		// and database of its own time: after a change of sql_mode, the
		// character set or the database, the earlier ones could read
		// differently than they did.
		t.broken = true
		return
	case !plan.Stateful:
		return
	}
	if t.bytes+len(payload) > maxTxLog {
		t.broken = true
		return
	}
	t.entries = append(t.entries, txEntry{payload: append([]byte(nil), payload...),
		oks: append([]okInfo(nil), t.oks...), begin: plan.Begin, prepared: prepared})
	t.bytes += len(payload)
}

// replayTransaction rolls the client's transaction back, starts a new one
// and replays its recorded statements, checking each has the same effect
// (affected rows, insert ids). It returns why it could not ("" on
// success); the transaction is then rolled back.
func (s *session) replayTransaction() string {
	t := &s.tx
	if t.broken || len(t.entries) == 0 {
		return "its statements were not all recorded for replay"
	}
	autocommit := s.status&wire.StatusAutocommit != 0
	if _, err := s.internal("ROLLBACK"); err != nil {
		return "rollback failed: " + err.Error()
	}
	if !t.entries[0].begin {
		if autocommit {
			if _, err := s.internal("START TRANSACTION"); err != nil {
				return "restart failed: " + err.Error()
			}
		}
	}
	for _, e := range t.entries {
		if len(e.oks) == 1 && e.oks[0].insertID != 0 {
			// AUTO_INCREMENT values are not given back by a rollback: ask
			// for the ones the client already saw.
			if _, err := s.internal(fmt.Sprintf("SET insert_id = %d", e.oks[0].insertID)); err != nil {
				_, _ = s.internal("ROLLBACK")
				return "replaying it failed: " + err.Error()
			}
		}
		payload := e.payload
		var stmtID uint32
		if e.prepared != "" {
			id, err := s.prepareUpstream(e.prepared)
			if err != nil {
				_, _ = s.internal("ROLLBACK")
				return "replaying it failed: " + err.Error()
			}
			stmtID = id
			payload = append([]byte(nil), payload...)
			binary.LittleEndian.PutUint32(payload[1:], id)
		}
		r, err := s.be.roundTrip(s.ctx(), payload, false)
		if stmtID != 0 {
			s.closeUpstream(stmtID)
		}
		if err == nil && !sameOKs(r.oks, e.oks) {
			err = fmt.Errorf("a statement had a different effect the second time (affected rows and insert ids %v, first time %v)", r.oks, e.oks)
		}
		if err != nil {
			_, _ = s.internal("ROLLBACK")
			return "replaying it failed: " + err.Error()
		}
		s.status = r.status
	}
	s.sbx.Restarted(true)
	s.log.Debug("transaction replayed after a fork", zap.Int("statements", len(t.entries)))
	return ""
}

func sameOKs(a, b []okInfo) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// diagnostics answers SHOW WARNINGS / SHOW ERRORS with the sandbox's
// database names in the messages mapped back to logical ones.
func (s *session) diagnostics(sql string) error {
	r, err := s.internal(sql)
	if err != nil {
		if se, ok := err.(serverError); ok {
			return s.writeErr(clientError(se))
		}
		return err
	}
	rep := &sandbox.Reply{Columns: []string{"Level", "Code", "Message"}}
	for _, row := range r.rows {
		if len(row) == 3 && row[2] != nil {
			m := s.sbx.Unmap(*row[2])
			row[2] = &m
		}
		rep.Rows = append(rep.Rows, row)
	}
	return s.writeReply(rep)
}

// afterStatement updates what the proxy tracks of the upstream session.
func (s *session) afterStatement(plan *sandbox.Plan) error {
	if s.h.first() == wire.ErrHeader && s.h.n >= 3 {
		if code := binary.LittleEndian.Uint16(s.h.payload()[1:]); code == wire.ErLockDeadlock {
			s.status &^= wire.StatusInTrans // a deadlock rolls the transaction back
		}
	}
	if err := s.sbx.Executed(s.ctx(), plan, s.status, s.h.first() == wire.ErrHeader); err != nil {
		s.log.Warn("sandbox bookkeeping after DDL failed", zap.Error(err))
	}
	if plan != nil && plan.UseDB {
		if r, err := s.internal("SELECT DATABASE()"); err == nil && len(r.rows) == 1 {
			s.db = ""
			if v := r.rows[0][0]; v != nil {
				s.db = *v
			}
		} else if err != nil {
			return err
		}
	}
	if plan != nil && plan.ReadVars {
		return s.readVars()
	}
	return nil
}

// readVars reads the upstream session's variables that decide how its
// statements are read (sql_mode, character_set_client) and run (the
// isolation level), for the statement layer.
func (s *session) readVars() error {
	r, err := s.internal(s.sbx.VarsQuery())
	if se, ok := err.(serverError); ok && se.Code == wire.ErUnknownSystemVariable {
		r, err = s.internal(s.sbx.VarsFallbackQuery())
	}
	if err != nil {
		return err
	}
	if len(r.rows) != 1 || len(r.rows[0]) != 3 {
		return s.malformed("session variables")
	}
	v := sandbox.Vars{}
	for i, p := range []*string{&v.SQLMode, &v.Charset, &v.Isolation} {
		if r.rows[0][i] != nil {
			*p = *r.rows[0][i]
		}
	}
	m := "," + strings.ToUpper(v.SQLMode) + ","
	s.ansiQuotes = strings.Contains(m, ",ANSI_QUOTES,") || strings.Contains(m, ",ANSI,")
	s.sbx.SetVars(v)
	s.varsKnown = true
	return nil
}

// internal runs a query of the proxy's own on the session's upstream
// connection, between client commands. A server error is returned as is;
// anything else breaks the session.
func (s *session) internal(sql string) (*textResult, error) {
	r, err := s.be.query(s.ctx(), sql)
	if err != nil {
		if _, ok := err.(serverError); ok {
			return nil, err
		}
		return nil, &linkError{side: sideUpstream, err: err}
	}
	s.status = r.status
	return r, nil
}

// restartTransaction ends the client's transaction, which has only read,
// and starts a new one, so its snapshot includes tables just forked. A
// server error is returned as serverError; other errors break the session.
func (s *session) restartTransaction() error {
	autocommit := s.status&wire.StatusAutocommit != 0
	if _, err := s.internal("COMMIT"); err != nil {
		return err
	}
	if autocommit {
		if _, err := s.internal("START TRANSACTION"); err != nil {
			return err
		}
	}
	s.sbx.Restarted(false)
	s.tx.reset()
	s.log.Debug("transaction restarted after a fork")
	return nil
}

// initDB forwards COM_INIT_DB and records the database on success.
func (s *session) initDB() error {
	p, seq, err := wire.ReadPacket(s.cr, nil, handshakeLimit)
	if err != nil {
		return &linkError{side: sideClient, err: noEOF(err)}
	}
	if prefix := s.srv.cfg.Sandbox.Prefix; prefix != "" && len(p) > len(prefix) &&
		strings.EqualFold(string(p[1:1+len(prefix)]), prefix) {
		s.seq = seq + 1
		return s.refused(newError(wire.ErDBAccessDenied, "42000", "sqlfork-proxy: access to the proxy's internal database %s is denied", forker.QuoteIdent(string(p[1:]))))
	}
	if _, err := wire.WritePacket(s.be.w, seq, p); err != nil {
		return &linkError{side: sideUpstream, write: true, err: err}
	}
	if err := s.toUpstream.flush(); err != nil {
		return err
	}
	if err := s.relay(&s.toClient); err != nil {
		return err
	}
	if s.h.first() == wire.OKHeader {
		s.db = string(p[1:])
		if st, ok := wire.OKStatus(s.h.payload()); ok {
			s.status = st
		}
	}
	return s.toClient.flush()
}

// relayUnmappedErr forwards an ERR packet with the sandbox's physical
// database names replaced by logical ones; handled is false (nothing read)
// for other packets.
func (s *session) relayUnmappedErr() (bool, error) {
	hdr, err := s.toClient.peek(wire.HeaderLen + 1)
	if err != nil {
		return false, err
	}
	if hdr[wire.HeaderLen] != wire.ErrHeader {
		return false, nil
	}
	p, seq, err := wire.ReadPacket(s.be.r, nil, internalLimit)
	if err != nil {
		return true, &linkError{side: sideUpstream, err: noEOF(err)}
	}
	e := wire.ParseErr(p)
	e.Message = s.sbx.Unmap(e.Message)
	if _, err := wire.WritePacket(s.cw, seq, wire.AppendErr(nil, e)); err != nil {
		return true, &linkError{side: sideClient, write: true, err: err}
	}
	s.h = packetHead{length: len(p), seq: seq}
	s.h.n = copy(s.h.prefix[:], p)
	s.seq = seq + 1
	return true, nil
}

// writeReply sends a proxy-made answer: an OK packet or a text result set.
func (s *session) writeReply(r *sandbox.Reply) error {
	if err := s.writeReplyNoFlush(r, false); err != nil {
		return err
	}
	return s.flushClient()
}

// writeReplyNoFlush writes a proxy-made answer without flushing; more says
// another result of the same input follows.
func (s *session) writeReplyNoFlush(r *sandbox.Reply, more bool) error {
	if r.Columns != nil {
		defs := make([][]byte, len(r.Columns))
		for i, c := range r.Columns {
			defs[i] = wire.TextColumnDef(c)
		}
		return s.writeResultSet(defs, r.Rows, more)
	}
	// Flags the proxy can vouch for: no session-state block follows, and
	// more results only where the caller says so (the status of the last
	// upstream answer may still carry the flag).
	st := s.replyStatus(more)
	p := []byte{wire.OKHeader}
	p = wire.AppendLenEnc(p, r.Affected)
	p = append(p, 0, byte(st), byte(st>>8), 0, 0)
	if s.caps&wire.CapSessionTrack != 0 {
		p = wire.AppendLenEnc(p, uint64(len(r.Info)))
	}
	var err error
	if s.seq, err = wire.WritePacket(s.cw, s.seq, append(p, r.Info...)); err != nil {
		return &linkError{side: sideClient, write: true, err: err}
	}
	return nil
}

// writeResultSet writes a proxy-made text result set of the given column
// definition packets and rows without flushing; more says another result
// of the same input follows.
func (s *session) writeResultSet(defs [][]byte, rows [][]*string, more bool) error {
	var err error
	w := func(p []byte) {
		if err == nil {
			s.seq, err = wire.WritePacket(s.cw, s.seq, p)
		}
	}
	st := s.replyStatus(more)
	w(wire.AppendLenEnc(nil, uint64(len(defs))))
	for _, d := range defs {
		w(d)
	}
	eof := []byte{wire.EOFHeader, 0, 0, byte(st), byte(st >> 8)}
	w(eof)
	for _, row := range rows {
		var p []byte
		for _, v := range row {
			if v == nil {
				p = append(p, 0xFB)
				continue
			}
			p = wire.AppendLenEnc(p, uint64(len(*v)))
			p = append(p, *v...)
		}
		w(p)
	}
	w(eof)
	if err != nil {
		return &linkError{side: sideClient, write: true, err: err}
	}
	return nil
}

// replyStatus is the server status of an answer the proxy makes: the
// flags it can vouch for, with more results only when more says so.
func (s *session) replyStatus(more bool) uint16 {
	st := s.status & (wire.StatusInTrans | wire.StatusAutocommit | wire.StatusNoBackslashEscapes)
	if more {
		st |= wire.StatusMoreResults
	}
	return st
}

// translateStmtID rewrites the statement id of a pending COM_STMT_* packet
// in place (in the read buffer) when the statement was prepared again
// upstream under another id.
func (s *session) translateStmtID(cmd byte) *preparedStmt {
	b, err := s.cr.Peek(wire.HeaderLen + 5)
	if err != nil {
		return nil
	}
	id := binary.LittleEndian.Uint32(b[wire.HeaderLen+1:])
	ps := s.stmts[id]
	if ps == nil {
		return nil
	}
	if ps.upstreamID != id {
		binary.LittleEndian.PutUint32(b[wire.HeaderLen+1:], ps.upstreamID)
	}
	if cmd == wire.ComStmtClose {
		delete(s.stmts, id)
	}
	return ps
}

// execute forwards COM_STMT_EXECUTE, first preparing the statement again
// if the sandbox changed since it was prepared.
func (s *session) execute() error {
	b, err := s.cr.Peek(wire.HeaderLen + 5)
	if err != nil {
		return &linkError{side: sideClient, err: noEOF(err)}
	}
	id := binary.LittleEndian.Uint32(b[wire.HeaderLen+1:])
	ps := s.stmts[id]
	if ps == nil {
		// Every statement the client prepared is tracked: this id names
		// none, or is MariaDB's -1, "the last one prepared", which the
		// server may read again with other settings than the proxy did.
		if id == 0xFFFFFFFF {
			return s.answerInstead(newError(wire.ErUnknownStmtHandler, "HY000", "sqlfork-proxy: statement id -1 "+
				"(the last statement prepared) is not accepted through the proxy; execute the id COM_STMT_PREPARE returned"))
		}
		return s.answerInstead(newError(wire.ErUnknownStmtHandler, "HY000",
			"Unknown prepared statement handler (%d) given to mysqld_stmt_execute", id))
	}
	if !s.varsKnown {
		// After COM_RESET_CONNECTION: the statement is read with the
		// session's settings of now.
		if err := s.readVars(); err != nil {
			return s.answerInstead(clientError(err))
		}
	}
	if opts := s.options(); s.sbx.Stale(ps.plan.Version, opts) {
		plan, err := s.sbx.Plan(s.ctx(), ps.sql, opts, true)
		if err != nil {
			s.srv.countGuardrail(err)
			return s.answerInstead(clientError(err))
		}
		if refused, err := s.beforeStatement(plan); err != nil {
			return err
		} else if refused != nil {
			s.sbx.Abandon(s.ctx(), plan)
			return s.answerInstead(refused)
		}
		newID, err := s.prepareUpstream(plan.SQL)
		if se, ok := err.(serverError); ok {
			return s.answerInstead(clientError(se))
		} else if err != nil {
			return err
		}
		s.closeUpstream(ps.upstreamID)
		ps.upstreamID, ps.plan, ps.needTypes = newID, plan, true
		s.log.Debug("statement prepared again for the sandbox", zap.Uint32("id", id), zap.Uint32("upstream_id", newID))
	}
	return s.forwardExecute(ps)
}

// forwardExecute sends the pending COM_STMT_EXECUTE upstream (with the
// statement id translated, and parameter types added when a re-prepared
// statement needs them), relays the results and records the outcome.
func (s *session) forwardExecute(ps *preparedStmt) error {
	var plan *sandbox.Plan
	var payload []byte
	defer func(start time.Time) {
		if plan != nil {
			s.countStatement(plan, start)
		}
	}(time.Now())
	if ps != nil && s.executeFastPath(ps) {
		// Same id upstream, no types to add, not in a transaction (so
		// nothing to record): forward untouched, as a plain proxy does.
		plan = ps.plan
		if err := s.relay(&s.toUpstream); err != nil {
			return err
		}
	} else if ps != nil {
		plan = ps.plan
		p, seq, err := wire.ReadPacket(s.cr, nil, maxStatement)
		if err != nil {
			return &linkError{side: sideClient, err: noEOF(err)}
		}
		p = ps.fixExecute(p)
		payload = p
		s.h = packetHead{length: len(p), seq: seq}
		s.h.n = copy(s.h.prefix[:], p)
		if _, err := wire.WritePacket(s.be.w, 0, p); err != nil { // a command starts at 0
			return &linkError{side: sideUpstream, write: true, err: err}
		}
	} else if err := s.relay(&s.toUpstream); err != nil {
		return err
	}
	s.tx.start()
	cursor := s.h.n > 5 && s.h.prefix[5]&wire.CursorFlagsMask != 0
	if ps != nil {
		ps.fetched = 0 // a new execution opens a new cursor
	}
	if err := s.toUpstream.flush(); err != nil {
		return err
	}
	s.unmap, s.plan = plan != nil && plan.Changed, plan
	defer func() { s.unmap, s.plan = false, nil }()
	if err := s.relayResults(cursor); err != nil {
		return err
	}
	if plan != nil {
		s.sbx.AuditExecution(plan)
	}
	if err := s.toClient.flush(); err != nil {
		return err
	}
	prepared := ""
	if ps != nil && payload != nil {
		// Replayable only with its parameter types in it.
		payload, prepared = ps.withTypes(payload), ps.plan.SQL
	}
	if cursor {
		payload = nil // rows come later with FETCH: not replayable
	}
	s.record(plan, payload, prepared)
	return s.afterStatement(plan)
}

// answerInstead drops the pending command packet and answers it with e.
func (s *session) answerInstead(e *mysql.MyError) error {
	seq, err := s.discardCommand()
	if err != nil {
		return err
	}
	s.seq = seq + 1
	return s.writeErr(e)
}

// executeFastPath reports whether the pending COM_STMT_EXECUTE of ps can
// be forwarded untouched, recording the parameter types it carries (from
// the read buffer, without consuming it).
func (s *session) executeFastPath(ps *preparedStmt) bool {
	if ps.needTypes || s.status&wire.StatusInTrans != 0 || s.status&wire.StatusAutocommit == 0 {
		return false
	}
	b, err := s.cr.Peek(wire.HeaderLen + 5)
	if err != nil || binary.LittleEndian.Uint32(b[wire.HeaderLen+1:]) != ps.upstreamID || wire.PayloadLen(b) >= wire.MaxPayload {
		return false
	}
	if ps.params == 0 {
		return true
	}
	flagAt := 10 + (ps.params+7)/8
	need := wire.HeaderLen + flagAt + 1 + 2*ps.params
	if need > wire.PayloadLen(b)+wire.HeaderLen || need > s.cr.Size() {
		return false
	}
	b, err = s.cr.Peek(need)
	if err != nil {
		return false
	}
	if p := b[wire.HeaderLen:]; p[flagAt] == 1 {
		ps.types = append(ps.types[:0], p[flagAt+1:flagAt+1+2*ps.params]...)
	}
	return true
}

// withTypes returns an execute payload that carries its parameter types
// (new-params-bound flag 1), adding the last types the client sent when it
// has none; nil when they are unknown.
func (ps *preparedStmt) withTypes(p []byte) []byte {
	if ps.params == 0 {
		return p
	}
	flagAt := 10 + (ps.params+7)/8
	if len(p) <= flagAt {
		return nil
	}
	if p[flagAt] == 1 {
		return p
	}
	if len(ps.types) != 2*ps.params {
		return nil
	}
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
	if ps.params == 0 {
		return p
	}
	nullLen := (ps.params + 7) / 8
	flagAt := 10 + nullLen
	if len(p) <= flagAt {
		return p
	}
	if p[flagAt] == 1 {
		if len(p) >= flagAt+1+2*ps.params {
			ps.types = append(ps.types[:0], p[flagAt+1:flagAt+1+2*ps.params]...)
		}
		ps.needTypes = false
		return p
	}
	if ps.needTypes && len(ps.types) == 2*ps.params {
		out := make([]byte, 0, len(p)+len(ps.types))
		out = append(out, p[:flagAt]...)
		out = append(out, 1)
		out = append(out, ps.types...)
		out = append(out, p[flagAt+1:]...)
		ps.needTypes = false
		return out
	}
	return p
}

// prepareUpstream prepares sql on the session's upstream connection for
// the proxy itself and returns the new statement id.
func (s *session) prepareUpstream(sql string) (uint32, error) {
	if _, err := wire.WritePacket(s.be.w, 0, append([]byte{wire.ComStmtPrepare}, sql...)); err != nil {
		return 0, &linkError{side: sideUpstream, write: true, err: err}
	}
	if err := s.be.w.Flush(); err != nil {
		return 0, &linkError{side: sideUpstream, write: true, err: err}
	}
	p, _, err := wire.ReadPacket(s.be.r, nil, internalLimit)
	if err != nil {
		return 0, &linkError{side: sideUpstream, err: err}
	}
	if len(p) > 0 && p[0] == wire.ErrHeader {
		return 0, serverError{wire.ParseErr(p)}
	}
	if len(p) < 9 || p[0] != wire.OKHeader {
		return 0, s.malformed("COM_STMT_PREPARE_OK")
	}
	id := binary.LittleEndian.Uint32(p[1:])
	cols, params := int(binary.LittleEndian.Uint16(p[5:])), int(binary.LittleEndian.Uint16(p[7:]))
	for _, n := range []int{params, cols} {
		if n == 0 {
			continue
		}
		for i := 0; i <= n; i++ { // definitions and EOF
			if _, _, err := wire.ReadPacket(s.be.r, nil, internalLimit); err != nil {
				return 0, &linkError{side: sideUpstream, err: err}
			}
		}
	}
	return id, nil
}

// closeUpstream closes an upstream statement (no response).
func (s *session) closeUpstream(id uint32) {
	p := []byte{wire.ComStmtClose, 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(p[1:], id)
	if _, err := wire.WritePacket(s.be.w, 0, p); err == nil {
		_ = s.be.w.Flush()
	}
}

// relayDefinitionUnmapped forwards one column definition with its schema
// field changed from a sandbox database to the logical one (and, for the
// sandbox's information_schema views, its names spelled as the query
// wrote them, as the server does for information_schema).
func (s *session) relayDefinitionUnmapped() error {
	if err := s.toClient.flushIfBlocking(); err != nil {
		return err
	}
	p, seq, err := wire.ReadPacket(s.be.r, nil, internalLimit)
	if err != nil {
		return &linkError{side: sideUpstream, err: noEOF(err)}
	}
	s.h = packetHead{length: len(p), seq: seq}
	s.h.n = copy(s.h.prefix[:], p)
	s.seq = seq + 1
	if out, ok := rewriteColumnDef(p, s.sbx.LogicalDB, s.columnSpelling); ok {
		p = out
	}
	if _, err := wire.WritePacket(s.cw, seq, p); err != nil {
		return &linkError{side: sideClient, write: true, err: err}
	}
	return nil
}

// columnSpelling renames a column of the sandbox's information_schema
// views as the current statement spelled it. Columns the views compute
// (the mapped names) come with no schema, others with information_schema
// or the views' database.
func (s *session) columnSpelling(schema, name string) (string, bool) {
	if l, ok := s.plan.Label(name); ok {
		return l, true
	}
	if schema != "" && schema != "information_schema" && !s.sbx.IsInfoSchema(schema) {
		return "", false
	}
	return s.plan.ColumnSpelling(name)
}

// rewriteColumnDef rewrites a ColumnDefinition41 payload: the schema field
// through logical, and the name and org_name fields through spell (given
// the physical schema); ok is false when nothing changes.
func rewriteColumnDef(p []byte, logical func(string) (string, bool), spell func(schema, name string) (string, bool)) ([]byte, bool) {
	var f [6][]byte // catalog, schema, table, org_table, name, org_name
	rest := p
	for i := range f {
		l, n, ok := wire.LenEnc(rest)
		if !ok || uint64(len(rest)-n) < l {
			return nil, false
		}
		f[i], rest = rest[n:n+int(l)], rest[n+int(l):]
	}
	schema := string(f[1])
	changed := false
	if db, ok := logical(schema); ok {
		f[1], changed = []byte(db), true
	}
	// The label as the query wrote it; org_name keeps the column's own.
	if sp, ok := spell(schema, string(f[4])); ok && sp != string(f[4]) {
		f[4], changed = []byte(sp), true
		if schema == "" && strings.EqualFold(sp, string(f[5])) {
			f[1] = []byte("information_schema") // a column the view maps: it is information_schema's
		}
	}
	if !changed {
		return nil, false
	}
	out := make([]byte, 0, len(p)+8)
	for _, v := range f {
		out = wire.AppendLenEnc(out, uint64(len(v)))
		out = append(out, v...)
	}
	return append(out, rest...), true
}
