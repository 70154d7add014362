package proxy

import (
	"bufio"
	"context"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/sqlfork/sqlfork-proxy/wire"

	"github.com/go-mysql-org/go-mysql/mysql"
	"go.uber.org/zap"

	sandbox "github.com/sqlfork/sqlfork-proxy/session"
)

const (
	clientReadBuf  = 16 << 10
	clientWriteBuf = 32 << 10
	// partingErrWait bounds the wait for an upstream's last words.
	partingErrWait = 200 * time.Millisecond
)

// errSessionEnd ends a session without a protocol error.
var errSessionEnd = errors.New("session ended")

// connState is the lifecycle of one client connection, shared with the
// server's shutdown: an idle connection is closed at once, a busy one
// finishes its command first.
type connState struct {
	nc net.Conn
	// ctx is the connection's life: cancelled when it ends or is forced
	// closed (shutdown grace over), so work the proxy does for it (forks,
	// registry updates) stops then too.
	ctx     context.Context
	cancel  context.CancelFunc
	mu      sync.Mutex
	busy    bool
	closing bool
	be      *backend // the session's upstream, once it has one
	// user and greetingID identify the logged-in session to KILL.
	user       string
	greetingID uint32
	readBy     time.Time // the read deadline last set on nc
}

// deadlineSlack is the fraction of a timeout by which a deadline may be
// early: deadlines move only when they would shift by more, which keeps
// timer updates off most commands.
const deadlineSlack = 100

// extendRead sets nc's read deadline to now+d unless the one set is at most
// d/deadlineSlack earlier. Callers hold c.mu.
func (c *connState) extendRead(d time.Duration) {
	by := time.Now().Add(d)
	if by.Sub(c.readBy) <= d/deadlineSlack {
		return
	}
	c.readBy = by
	_ = c.nc.SetReadDeadline(by)
}

// wait marks the connection idle until the next command arrives or d
// passes; false means the server is shutting down.
func (c *connState) wait(d time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return false
	}
	c.busy = false
	c.extendRead(d)
	return true
}

// work marks the connection busy with a command and gives reads from the
// client in the middle of it (large packets, LOAD DATA files) a fresh
// deadline d. A shutdown that raced with the command's arrival no longer
// cuts it short: busy commands are allowed to finish.
func (c *connState) work(d time.Duration) {
	c.mu.Lock()
	c.busy = true
	c.extendRead(d)
	c.mu.Unlock()
}

// attach records the session's upstream connection so forceClose reaches it.
func (c *connState) attach(be *backend, user string, greetingID uint32) {
	c.mu.Lock()
	c.be, c.user, c.greetingID = be, user, greetingID
	c.mu.Unlock()
}

// setUser records the proxy user a COM_CHANGE_USER logged the session in
// as: KILL and the process list find it under that user from then on.
func (c *connState) setUser(user string) {
	c.mu.Lock()
	c.user = user
	c.mu.Unlock()
}

// newConnState starts the lifecycle of client connection nc; parent's
// cancellation does not end it (shutdown reaches it through shutdown and
// forceClose).
func newConnState(parent context.Context, nc net.Conn) *connState {
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	return &connState{nc: nc, ctx: ctx, cancel: cancel}
}

// forceClose closes both sockets, waking a session blocked on either, and
// cancels the work done for the connection.
func (c *connState) forceClose() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancel != nil {
		c.cancel()
	}
	_ = c.nc.Close()
	if c.be != nil {
		c.be.close()
	}
}

// shutdown asks the connection to end after its current command.
func (c *connState) shutdown() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closing = true
	if !c.busy {
		c.readBy = time.Now()
		_ = c.nc.SetReadDeadline(c.readBy)
	}
}

// deadlineWriter gives every write to a connection a deadline of about
// timeout from now (up to timeout/deadlineSlack earlier), so a peer that
// stops reading fails the write instead of blocking it forever.
type deadlineWriter struct {
	conn    net.Conn
	timeout time.Duration
	by      time.Time
}

func (w *deadlineWriter) Write(b []byte) (int, error) {
	if by := time.Now().Add(w.timeout); by.Sub(w.by) > w.timeout/deadlineSlack {
		w.by = by
		_ = w.conn.SetWriteDeadline(by)
	}
	return w.conn.Write(b)
}

// session is one client connection after login, with its pinned upstream.
type session struct {
	srv   *Server
	log   *zap.Logger
	state *connState

	client net.Conn
	cr     *bufio.Reader
	cw     *bufio.Writer
	be     *backend

	toClient   pipe // upstream -> client
	toUpstream pipe // client -> upstream

	caps      uint32 // client capability flags
	acct      *account
	collation uint8

	// seq is the sequence number for the next packet the proxy itself
	// writes to the client within the current command.
	seq uint8
	h   packetHead

	// Sandboxing (nil sbx: passthrough).
	sbx *sandbox.Session
	// db, ansiQuotes and status are what the statement layer needs of the
	// upstream session: current database, sql_mode ANSI_QUOTES, and the
	// last server status flags seen.
	db         string
	ansiQuotes bool
	// varsKnown is set once the session's variables were read (see
	// readVars).
	varsKnown bool
	status    uint16
	// unmap makes the relay rewrite sandbox names in ERR packets.
	unmap bool
	stmts map[uint32]*preparedStmt
	// tx records the open transaction's writes, for replay after a fork.
	tx txLog
	// prepared is what the last COM_STMT_PREPARE_OK said.
	prepared preparedOK
	// plan is the statement being answered, while it is.
	plan *sandbox.Plan
	// rowCap is the max-rows guardrail for the command being answered (0:
	// none) and rows the rows of its current result set (of its cursor,
	// across COM_STMT_FETCH); sink takes what cutRows drops.
	rowCap, rows int64
	sink         *bufio.Writer
}

// preparedOK is the head of a COM_STMT_PREPARE_OK.
type preparedOK struct {
	ok     bool
	id     uint32
	params int
}

func newSession(srv *Server, log *zap.Logger, st *connState, client net.Conn, be *backend) *session {
	s := &session{srv: srv, log: log, state: st, client: client, be: be,
		cr: bufio.NewReaderSize(client, clientReadBuf),
		cw: bufio.NewWriterSize(&deadlineWriter{conn: client, timeout: srv.cfg.WriteTimeout}, clientWriteBuf)}
	s.toClient = pipe{src: be.r, dst: s.cw, srcSide: sideUpstream, dstSide: sideClient}
	s.toUpstream = pipe{src: s.cr, dst: be.w, srcSide: sideClient, dstSide: sideUpstream}
	return s
}

// run serves commands until the client quits, the connection fails or the
// server shuts down.
func (s *session) run() error {
	for {
		cmd, err := s.nextCommand()
		if err != nil {
			if errors.Is(err, errSessionEnd) {
				return nil
			}
			return err
		}
		start := time.Now()
		err = s.dispatch(cmd)
		s.srv.observe(cmd, start)
		if err != nil {
			if errors.Is(err, errSessionEnd) {
				return nil
			}
			return s.fail(err)
		}
	}
}

// nextCommand waits for the next command packet and returns its command
// byte, leaving the packet unread.
func (s *session) nextCommand() (byte, error) {
	if !s.state.wait(s.srv.cfg.IdleTimeout) {
		return 0, errSessionEnd
	}
	hdr, err := s.cr.Peek(wire.HeaderLen)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			s.log.Debug("client idle or server shutting down; closing")
			return 0, errSessionEnd
		}
		if len(hdr) == 0 {
			return 0, errSessionEnd // client closed between commands
		}
		return 0, &linkError{side: sideClient, err: noEOF(err)}
	}
	s.state.work(s.srv.cfg.IdleTimeout)
	if wire.PayloadLen(hdr) == 0 {
		_, _ = s.cr.Discard(wire.HeaderLen)
		s.seq = hdr[3] + 1
		_ = s.writeErr(newError(wire.ErHandshake, "08S01", "sqlfork-proxy: empty command packet"))
		return 0, errSessionEnd
	}
	hdr, err = s.cr.Peek(wire.HeaderLen + 1)
	if err != nil {
		return 0, &linkError{side: sideClient, err: noEOF(err)}
	}
	return hdr[wire.HeaderLen], nil
}

// dispatch handles one command whose packet is still unread.
func (s *session) dispatch(cmd byte) error {
	info := lookupCommand(cmd)
	switch info.resp {
	case respUnsupported:
		return s.refuse(cmd)
	case respChangeUser:
		return s.changeUser()
	}
	switch {
	case cmd == wire.ComProcessKill:
		return s.processKill()
	case cmd == wire.ComQuery && s.sbx == nil:
		if handled, err := s.passthroughKill(); handled {
			return err
		}
	}
	s.rowCap, s.rows = 0, 0
	if s.sbx != nil {
		s.rowCap = s.sbx.Guardrails().MaxRows
		switch cmd {
		case wire.ComQuery, wire.ComStmtPrepare:
			return s.planned(cmd)
		case wire.ComProcessInfo:
			// SHOW PROCESSLIST by command: the user's own connections.
			return s.processInfo()
		case wire.ComRefresh, wire.ComDebug:
			// FLUSH by command, and the debug dump: refused where the
			// statements are.
			if err := s.sbx.ServerCommand(commandName(cmd), cmd == wire.ComRefresh); err != nil {
				return s.answerInstead(clientError(err))
			}
		case wire.ComFieldList:
			if e := s.srv.internalDB(s.acct, s.db); e != nil {
				return s.answerInstead(e)
			}
		case wire.ComInitDB:
			return s.initDB()
		case wire.ComStmtExecute:
			return s.execute()
		case wire.ComStmtClose, wire.ComStmtReset, wire.ComStmtSendLongData, wire.ComStmtFetch:
			ps := s.translateStmtID(cmd)
			if cmd == wire.ComStmtSendLongData && s.status&wire.StatusInTrans != 0 {
				s.tx.broken = true // long data is not kept for a replay
			}
			if cmd == wire.ComStmtFetch && ps != nil {
				// The cap counts every row the cursor returns, across
				// fetches and whatever runs between them.
				s.rows = ps.fetched
				defer func() { ps.fetched = s.rows }()
			}
		case wire.ComResetConnection:
			s.tx.reset()        // the reset rolls the transaction back,
			s.varsKnown = false // sets the session's variables back
			s.stmts = nil       // and closes its prepared statements
			defer s.sbx.Reset()
		}
	}
	if err := s.relay(&s.toUpstream); err != nil {
		return err
	}
	cursor := cmd == wire.ComStmtExecute && s.h.n > 5 && s.h.prefix[5]&wire.CursorFlagsMask != 0
	if err := s.toUpstream.flush(); err != nil {
		return err
	}
	var err error
	switch info.resp {
	case respNone:
		if cmd == wire.ComQuit {
			return errSessionEnd
		}
		return nil
	case respSingle:
		err = s.relay(&s.toClient)
	case respResults:
		err = s.relayResults(cursor)
	case respPrepare:
		err = s.relayPrepare()
	case respRows:
		_, err = s.relayRows()
	case respFields:
		err = s.relayFields()
	}
	if err != nil {
		return err
	}
	return s.toClient.flush()
}

// relay forwards one logical packet (with any continuations) through p and
// sets the sequence number for packets the proxy writes next.
func (s *session) relay(p *pipe) error {
	if s.unmap && p == &s.toClient {
		if handled, err := s.relayUnmappedErr(); handled || err != nil {
			return err
		}
	}
	if err := p.forwardLogical(&s.h); err != nil {
		return err
	}
	s.seq = s.h.seq + 1
	return nil
}

// relayResults forwards the response to COM_QUERY or COM_STMT_EXECUTE: OK,
// ERR, LOCAL INFILE requests and result sets, for as long as the server
// flags more results.
func (s *session) relayResults(cursor bool) error {
	for {
		if err := s.relay(&s.toClient); err != nil {
			return err
		}
		switch s.h.first() {
		case wire.ErrHeader:
			return nil
		case wire.OKHeader:
			st, ok := wire.OKStatus(s.h.payload())
			if !ok {
				return s.malformed("OK packet")
			}
			s.status = st
			if s.tx.recording {
				s.tx.oks = append(s.tx.oks, parseOK(s.h.payload()))
			}
			if st&wire.StatusMoreResults == 0 {
				return nil
			}
			continue
		case wire.LocalInfileHeader:
			s.tx.broken = true // the file is not kept: the statement cannot be replayed
			if s.toClient.dst == s.sink {
				// Dropping the answer (cutRows): the client never saw
				// the request; send the server no file.
				if _, err := wire.WritePacket(s.be.w, s.h.seq+1, nil); err != nil {
					return &linkError{side: sideUpstream, write: true, err: err}
				}
				if err := s.be.w.Flush(); err != nil {
					return &linkError{side: sideUpstream, write: true, err: err}
				}
				continue
			}
			if err := s.relayLocalInfile(); err != nil {
				return err
			}
			continue
		}
		cols, _, ok := wire.LenEnc(s.h.payload())
		if !ok || s.h.length >= wire.MaxPayload || cols == 0 {
			return s.malformed("column count")
		}
		if err := s.relayDefinitions(cols, "column definitions"); err != nil {
			return err
		}
		s.rows = 0
		if st, _ := wire.EOFStatus(s.h.payload()); cursor && st&wire.StatusCursorExists != 0 {
			return nil // rows come with COM_STMT_FETCH
		}
		more, err := s.relayRows()
		if err != nil || !more {
			return err
		}
	}
}

// relayRows forwards rows up to and including the closing EOF or ERR, and
// reports whether more result sets follow.
func (s *session) relayRows() (bool, error) {
	for {
		if s.rowCap > 0 && s.rows >= s.rowCap {
			if end, err := s.rowsEnd(); err != nil {
				return false, err
			} else if !end {
				return s.cutRows()
			}
		}
		if err := s.relay(&s.toClient); err != nil {
			return false, err
		}
		switch {
		case s.h.isEOF():
			st, ok := wire.EOFStatus(s.h.payload())
			if !ok {
				return false, s.malformed("EOF packet")
			}
			s.status = st
			return st&wire.StatusMoreResults != 0, nil
		case s.h.first() == wire.ErrHeader:
			return false, nil
		}
		s.rows++
	}
}

// rowsEnd reports whether the next packet from upstream ends the rows
// (EOF or ERR) rather than being one.
func (s *session) rowsEnd() (bool, error) {
	hdr, err := s.toClient.peek(wire.HeaderLen + 1)
	if err != nil {
		return false, err
	}
	first := hdr[wire.HeaderLen]
	return first == wire.ErrHeader || first == wire.EOFHeader && wire.PayloadLen(hdr) < wire.MaxEOFLength, nil
}

// cutRows ends a result set with more rows than the max-rows guardrail
// lets through: the client has the rows so far; the rest of the answer
// (and of any results after it) is read and dropped, and the client gets
// error 1226 instead, numbered as if it followed the last row.
func (s *session) cutRows() (bool, error) {
	if err := s.toClient.flush(); err != nil {
		return false, err
	}
	if s.sink == nil {
		s.sink = bufio.NewWriterSize(io.Discard, 512)
	}
	seq, limit, dst, unmap := s.seq, s.rowCap, s.toClient.dst, s.unmap
	s.toClient.dst, s.rowCap, s.unmap = s.sink, 0, false
	more, err := s.relayRows()
	if err == nil && more {
		err = s.relayResults(false)
	}
	s.toClient.dst, s.rowCap, s.unmap = dst, limit, unmap
	if err != nil {
		return false, err
	}
	s.seq = seq
	s.srv.m.GuardrailRefusals.WithLabelValues(sandbox.GuardMaxRows).Inc()
	return false, s.writeErr(clientError(s.sbx.RowCapError(limit)))
}

// relayFields forwards the response to COM_FIELD_LIST.
func (s *session) relayFields() error {
	for {
		if err := s.relay(&s.toClient); err != nil {
			return err
		}
		if s.h.isEOF() || s.h.first() == wire.ErrHeader {
			return nil
		}
	}
}

// relayPrepare forwards COM_STMT_PREPARE_OK with its parameter and column
// definitions.
func (s *session) relayPrepare() error {
	s.prepared = preparedOK{}
	if err := s.relay(&s.toClient); err != nil {
		return err
	}
	if s.h.first() != wire.OKHeader {
		return nil
	}
	p := s.h.payload()
	if len(p) < 9 {
		return s.malformed("COM_STMT_PREPARE_OK")
	}
	cols := uint64(binary.LittleEndian.Uint16(p[5:]))
	params := uint64(binary.LittleEndian.Uint16(p[7:]))
	s.prepared = preparedOK{ok: true, id: binary.LittleEndian.Uint32(p[1:]), params: int(params)}
	if params > 0 {
		if err := s.relayDefinitions(params, "parameter definitions"); err != nil {
			return err
		}
	}
	if cols > 0 {
		return s.relayDefinitions(cols, "column definitions")
	}
	return nil
}

// relayDefinitions forwards n column (or parameter) definitions and the
// EOF packet that closes them; the EOF is left in s.h.
func (s *session) relayDefinitions(n uint64, what string) error {
	for i := uint64(0); i < n; i++ {
		if s.unmap {
			// Column metadata names the fork's database: show the logical
			// one, as on the real database.
			if err := s.relayDefinitionUnmapped(); err != nil {
				return err
			}
			continue
		}
		if err := s.relay(&s.toClient); err != nil {
			return err
		}
	}
	if err := s.relay(&s.toClient); err != nil {
		return err
	}
	if !s.h.isEOF() {
		return s.malformed("end of " + what)
	}
	return nil
}

// relayLocalInfile forwards the file the client sends for LOAD DATA LOCAL,
// up to the empty packet that ends it. The server's answer follows.
func (s *session) relayLocalInfile() error {
	if err := s.toClient.flush(); err != nil {
		return err
	}
	for {
		s.state.work(s.srv.cfg.IdleTimeout)
		if err := s.relay(&s.toUpstream); err != nil {
			return err
		}
		if s.h.length == 0 {
			return s.toUpstream.flush()
		}
	}
}

// refuse answers a command the proxy does not forward.
func (s *session) refuse(cmd byte) error {
	seq, err := s.discardCommand()
	if err != nil {
		return err
	}
	s.seq = seq + 1
	msg := fmt.Sprintf("sqlfork-proxy: command 0x%02X is not supported through the proxy", cmd)
	if cmd == wire.ComShutdown {
		msg = "sqlfork-proxy: COM_SHUTDOWN is refused; the proxy never shuts down its upstream"
	}
	return s.writeErr(newError(wire.ErUnknownCom, "08S01", "%s", msg))
}

// discardCommand reads and drops the pending command packet, returning its
// last sequence number.
func (s *session) discardCommand() (uint8, error) {
	for {
		hdr, err := s.cr.Peek(wire.HeaderLen)
		if err != nil {
			return 0, &linkError{side: sideClient, err: noEOF(err)}
		}
		n := wire.PayloadLen(hdr)
		seq := hdr[3]
		if _, err := s.cr.Discard(wire.HeaderLen + n); err != nil {
			return 0, &linkError{side: sideClient, err: noEOF(err)}
		}
		if n < wire.MaxPayload {
			return seq, nil
		}
	}
}

// writeErr sends a proxy-made ERR packet to the client and flushes. The
// packet head records an ERR, so the statement counts as failed.
func (s *session) writeErr(e *mysql.MyError) error {
	s.h = packetHead{length: 1, n: 1, prefix: [prefixLen]byte{wire.ErrHeader}}
	if _, err := wire.WritePacket(s.cw, s.seq, wire.AppendErr(nil, e)); err != nil {
		return &linkError{side: sideClient, write: true, err: err}
	}
	s.seq++
	if err := s.cw.Flush(); err != nil {
		return &linkError{side: sideClient, write: true, err: err}
	}
	return nil
}

func (s *session) malformed(what string) error {
	return &linkError{side: sideUpstream, err: fmt.Errorf("%w: %s", wire.ErrMalformed, what)}
}

// fail reports a fatal session error to the client when the protocol still
// allows it, and returns the error for logging.
func (s *session) fail(err error) error {
	var le *linkError
	if !errors.As(err, &le) {
		return err
	}
	if le.side == sideClient {
		return err // the client is gone or broke the protocol; nothing to say
	}
	s.srv.m.UpstreamLost.Inc()
	if le.partial && !le.write {
		return err // a packet is half-written to the client
	}
	if le.write {
		// The upstream may have said why it hung up (max_allowed_packet,
		// killed connection) before closing: pass that on if so.
		_ = s.be.conn.SetReadDeadline(time.Now().Add(partingErrWait))
		if p, seq, rerr := wire.ReadPacket(s.be.r, nil, handshakeLimit); rerr == nil && len(p) > 0 && p[0] == wire.ErrHeader {
			// Forward it as sent: its sequence number counts the
			// client's packets, which went through unchanged.
			s.seq = seq
			_ = s.writeErr(wire.ParseErr(p))
			return err
		}
	}
	// Nothing more to say: the client sees its connection end, as it would
	// have seen the server's (libmariadb: 2013 during a query), and the
	// proxy's log says why.
	return err
}

// changeUser handles COM_CHANGE_USER: the proxy authenticates the client
// against its own accounts, then changes the upstream session to the mapped
// upstream account. A failure closes the connection.
func (s *session) changeUser() error {
	p, seq, err := wire.ReadPacket(s.cr, nil, handshakeLimit)
	if err != nil {
		return &linkError{side: sideClient, err: err}
	}
	s.seq = seq + 1
	req, err := parseChangeUser(p, s.caps)
	if err != nil {
		_ = s.writeErr(newError(wire.ErHandshake, "08S01", "sqlfork-proxy: malformed COM_CHANGE_USER: %v", err))
		return errSessionEnd
	}
	if s.caps&wire.CapPluginAuth == 0 {
		_ = s.writeErr(newError(wire.ErNotSupportedAuthMode, "08004",
			"Client does not support authentication protocol requested by server; consider upgrading MariaDB client"))
		return errSessionEnd
	}
	// Ask for a fresh mysql_native_password scramble: the proxy knows the
	// password, so it can check it whatever plugin the account uses.
	salt := mysql.RandomBuf(20)
	sw := append([]byte{wire.EOFHeader}, AuthNativePassword...)
	sw = append(sw, 0)
	sw = append(sw, salt...)
	sw = append(sw, 0)
	if s.seq, err = wire.WritePacket(s.cw, s.seq, sw); err != nil {
		return &linkError{side: sideClient, write: true, err: err}
	}
	if err := s.cw.Flush(); err != nil {
		return &linkError{side: sideClient, write: true, err: err}
	}
	reply, seq, err := wire.ReadPacket(s.cr, nil, handshakeLimit)
	if err != nil {
		return &linkError{side: sideClient, err: err}
	}
	s.seq = seq + 1
	acct, tag, _ := s.srv.lookupAccount(req.user)
	if acct == nil || !checkNative(reply, salt, acct.password) {
		s.srv.m.AuthFailures.Inc()
		using := "YES"
		if len(reply) == 0 {
			using = "NO"
		}
		_ = s.writeErr(newError(wire.ErAccessDenied, "28000", "Access denied for user '%s'@'%s' (using password: %s)",
			req.user, hostAddr{s.client.RemoteAddr()}.String(), using))
		return errSessionEnd
	}
	if e := s.srv.internalDB(acct, req.db); e != nil {
		_ = s.writeErr(e)
		return errSessionEnd
	}
	collation := s.collation
	if req.hasCollation {
		collation = req.collation
	}
	attrs := s.srv.upstreamAttrs(req.attrs, s.client)
	// From here the connection is the new user's (a failure below ends
	// it): the old user may no longer see or kill it.
	s.state.setUser(acct.name)
	_ = s.be.conn.SetDeadline(time.Now().Add(s.srv.cfg.ConnectTimeout))
	err = s.be.changeUser(acct.upstreamUser, acct.upstreamPassword, req.db, collation, attrs)
	_ = s.be.conn.SetDeadline(time.Time{})
	if err != nil {
		var me *mysql.MyError
		if errors.As(err, &me) {
			_ = s.writeErr(me)
			return errSessionEnd
		}
		return &linkError{side: sideUpstream, err: err}
	}
	s.acct, s.collation = acct, collation
	s.db, s.varsKnown, s.stmts = req.db, false, nil
	s.tx.reset()
	s.status = s.be.status
	// The new login gets the sandbox binding a fresh connection of it
	// would get; the old binding is released (and an unkept sandbox whose
	// last connection this was is discarded).
	if s.sbx != nil {
		s.sbx.Close()
		s.sbx = nil
	}
	sbx, err := s.srv.openSandbox(context.Background(), acct, tag, req.attrs, 0, s.log)
	if err != nil {
		_ = s.writeErr(clientError(err))
		return errSessionEnd
	}
	s.sbx = sbx
	s.log.Debug("change user", zap.String("user", acct.name), zap.String("db", req.db))
	if s.seq, err = wire.WritePacket(s.cw, s.seq, wireOK(s.be.status, 0)); err != nil {
		return &linkError{side: sideClient, write: true, err: err}
	}
	if err := s.cw.Flush(); err != nil {
		return &linkError{side: sideClient, write: true, err: err}
	}
	return nil
}

// checkNative verifies a mysql_native_password reply for password.
func checkNative(reply, salt []byte, password string) bool {
	if password == "" {
		return len(reply) == 0
	}
	want := mysql.CalcNativePassword(salt, []byte(password))
	return subtle.ConstantTimeCompare(reply, want) == 1
}

// changeUserReq is a decoded COM_CHANGE_USER.
type changeUserReq struct {
	user         string
	auth         []byte
	db           string
	hasCollation bool
	collation    uint8
	plugin       string
	attrs        map[string]string
}

// parseChangeUser decodes a COM_CHANGE_USER payload sent by a client with
// capabilities caps.
func parseChangeUser(p []byte, caps uint32) (*changeUserReq, error) {
	if len(p) < 1 || p[0] != wire.ComChangeUser {
		return nil, wire.ErrMalformed
	}
	p = p[1:]
	r := &changeUserReq{}
	i := indexNul(p)
	if i < 0 {
		return nil, fmt.Errorf("%w: user", wire.ErrMalformed)
	}
	r.user, p = string(p[:i]), p[i+1:]
	if caps&wire.CapSecureConnection != 0 {
		if len(p) < 1 || len(p) < 1+int(p[0]) {
			return nil, fmt.Errorf("%w: auth data", wire.ErrMalformed)
		}
		r.auth, p = p[1:1+int(p[0])], p[1+int(p[0]):]
	} else {
		if i = indexNul(p); i < 0 {
			return nil, fmt.Errorf("%w: auth data", wire.ErrMalformed)
		}
		r.auth, p = p[:i], p[i+1:]
	}
	if i = indexNul(p); i < 0 {
		if len(p) > 0 {
			return nil, fmt.Errorf("%w: database", wire.ErrMalformed)
		}
		return r, nil
	}
	r.db, p = string(p[:i]), p[i+1:]
	if len(p) >= 2 {
		r.hasCollation, r.collation = true, p[0]
		p = p[2:]
	}
	if caps&wire.CapPluginAuth != 0 && len(p) > 0 {
		if i = indexNul(p); i < 0 {
			return nil, fmt.Errorf("%w: plugin", wire.ErrMalformed)
		}
		r.plugin, p = string(p[:i]), p[i+1:]
	}
	if caps&wire.CapConnectAttrs != 0 && len(p) > 0 {
		attrs, err := parseAttrs(p)
		if err != nil {
			return nil, err
		}
		r.attrs = attrs
	}
	return r, nil
}

// parseAttrs decodes length-encoded connection attributes.
func parseAttrs(p []byte) (map[string]string, error) {
	total, n, ok := wire.LenEnc(p)
	if !ok || uint64(len(p)-n) < total {
		return nil, fmt.Errorf("%w: attributes", wire.ErrMalformed)
	}
	p = p[n : n+int(total)]
	attrs := map[string]string{}
	for len(p) > 0 {
		var kv [2]string
		for j := range kv {
			l, n, ok := wire.LenEnc(p)
			if !ok || uint64(len(p)-n) < l {
				return nil, fmt.Errorf("%w: attributes", wire.ErrMalformed)
			}
			kv[j] = string(p[n : n+int(l)])
			p = p[n+int(l):]
		}
		attrs[kv[0]] = kv[1]
	}
	return attrs, nil
}
