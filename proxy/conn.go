package proxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/session"
	"github.com/sqlfork/sqlfork-proxy/wire"
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
	// killed: the client went away during a statement, which the
	// liveness watcher killed upstream (once).
	killed bool
	// killable says the running statement may be killed should its client
	// go: a plain read, whose answer is all it makes (session.Plan.
	// Killable). text is a passthrough COM_QUERY's text, read only then
	// (kill.Killer.PlainRead); noBackslash how to read it. Every
	// command resets both: anything else runs to its end, as directly,
	// where the server notices a client gone only when it writes to it.
	killable    bool
	text        []byte
	noBackslash bool
	// interrupt ends a statement's wait in the proxy (session.Session.
	// Interrupt), for KILL; nil outside a sandboxing session.
	interrupt func()
}

// setInterrupt records what ends the session's waits in the proxy.
func (c *connState) setInterrupt(f func()) {
	c.mu.Lock()
	c.interrupt = f
	c.mu.Unlock()
}

// setKillable records whether the statement about to be sent may be
// killed should its client go away.
func (c *connState) setKillable(k bool) {
	c.mu.Lock()
	c.killable = k
	c.mu.Unlock()
}

// setText keeps a passthrough statement's text, to decide whether it may
// be killed should its client go away.
func (c *connState) setText(p []byte, noBackslash bool) {
	c.mu.Lock()
	c.text, c.noBackslash = append(c.text[:0], p...), noBackslash
	c.mu.Unlock()
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
	c.busy, c.killable, c.text = true, false, c.text[:0]
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

// clientConn is one client connection after login, with its pinned
// upstream connection: the command loop, a protocol engine that moves
// packets. What a sandboxing session's statements mean is decided by its
// session.Session (sbx); statement.go runs them.
type clientConn struct {
	srv   *Server
	log   *zap.Logger
	state *connState

	client net.Conn
	cr     *bufio.Reader
	cw     *bufio.Writer
	be     *backend
	// out carries every answer to the client.
	out *relay

	caps      uint32 // client capability flags
	acct      *account
	collation uint8

	// sbx is the session's sandbox binding (nil: passthrough).
	sbx *session.Session
	// stmts are the statements the client prepared, by the id it knows.
	stmts map[uint32]*preparedStmt
	// rowCap is the max-rows guardrail for the command being answered (0:
	// none) and rows the rows of its current result set (of its cursor,
	// across COM_STMT_FETCH).
	rowCap, rows int64
}

// newClientConn starts the command loop's state of a client logged in
// with capabilities caps on client, with its upstream connection be.
func newClientConn(srv *Server, log *zap.Logger, st *connState, client net.Conn, be *backend, caps uint32) *clientConn {
	c := &clientConn{srv: srv, log: log, state: st, client: client, be: be, caps: caps}
	var r io.Reader = client
	var w io.Writer = &deadlineWriter{conn: client, timeout: srv.cfg.WriteTimeout}
	if caps&wire.CapCompress != 0 {
		r, w = wire.Compressed(r, w)
	}
	c.cr, c.cw = bufio.NewReaderSize(r, clientReadBuf), bufio.NewWriterSize(w, clientWriteBuf)
	c.out = newRelay(be, c.cr, c.cw, func() { st.work(srv.cfg.IdleTimeout) })
	c.out.sessionTrack = caps&wire.CapSessionTrack != 0
	return c
}

// ctx is the context of work done for the connection: it ends with the
// client connection (or when shutdown forces it closed).
func (c *clientConn) ctx() context.Context {
	if c.state == nil || c.state.ctx == nil {
		return context.Background()
	}
	return c.state.ctx
}

// run serves commands until the client quits, the connection fails or the
// server shuts down.
func (c *clientConn) run() error {
	for {
		cmd, err := c.nextCommand()
		if err != nil {
			if errors.Is(err, errSessionEnd) {
				return nil
			}
			return err
		}
		start := time.Now()
		err = c.dispatch(cmd)
		c.srv.observe(cmd, start)
		if err != nil {
			if errors.Is(err, errSessionEnd) {
				return nil
			}
			return c.fail(err)
		}
	}
}

// nextCommand waits for the next command packet and returns its command
// byte, leaving the packet unread.
func (c *clientConn) nextCommand() (byte, error) {
	if !c.state.wait(c.srv.cfg.IdleTimeout) {
		return 0, errSessionEnd
	}
	hdr, err := c.cr.Peek(wire.HeaderLen)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			c.log.Debug("client idle or server shutting down; closing")
			return 0, errSessionEnd
		}
		if len(hdr) == 0 {
			return 0, errSessionEnd // client closed between commands
		}
		return 0, &linkError{side: sideClient, err: noEOF(err)}
	}
	c.state.work(c.srv.cfg.IdleTimeout)
	if wire.PayloadLen(hdr) == 0 {
		_, _ = c.cr.Discard(wire.HeaderLen)
		c.out.seq = hdr[3] + 1
		_ = c.out.writeErr(wire.Error(wire.ErHandshake, "sqlfork-proxy: empty command packet"))
		return 0, errSessionEnd
	}
	hdr, err = c.cr.Peek(wire.HeaderLen + 1)
	if err != nil {
		return 0, &linkError{side: sideClient, err: noEOF(err)}
	}
	return hdr[wire.HeaderLen], nil
}

// dispatch handles one command whose packet is still unread.
func (c *clientConn) dispatch(cmd byte) error {
	info := lookupCommand(cmd)
	switch {
	case info.resp == respUnsupported:
		return c.refuse(cmd)
	case info.resp == respChangeUser:
		return c.changeUser()
	case cmd == wire.ComProcessKill:
		return c.processKill()
	}
	c.rowCap, c.rows = 0, 0
	if c.sbx == nil {
		if cmd == wire.ComQuery {
			if handled, err := c.passthroughKill(); handled {
				return err
			}
			c.keepText()
		}
		return c.forwardCommand(cmd, info.shape())
	}
	c.rowCap = c.sbx.Guardrails().MaxRows
	switch cmd {
	case wire.ComQuery, wire.ComStmtPrepare, wire.ComStmtClose:
	case wire.ComPing, wire.ComInitDB, wire.ComStmtReset, wire.ComStmtSendLongData:
		c.sbx.OtherCommand(true) // it runs no query
	default:
		c.sbx.OtherCommand(false)
	}
	switch cmd {
	case wire.ComQuery, wire.ComStmtPrepare:
		return c.query(cmd)
	case wire.ComStmtExecute, wire.ComStmtBulkExecute:
		return c.execute(cmd)
	case wire.ComProcessInfo:
		// SHOW PROCESSLIST by command: the user's own connections.
		return c.processInfo()
	case wire.ComInitDB:
		return c.initDB()
	case wire.ComRefresh, wire.ComDebug:
		// FLUSH by command, and the debug dump: refused where the
		// statements are.
		if err := c.sbx.ServerCommand(commandName(cmd), cmd == wire.ComRefresh); err != nil {
			return c.answerInstead(clientError(err))
		}
	case wire.ComFieldList:
		if e := c.srv.internalDB(c.acct, c.sbx.DB()); e != nil {
			return c.answerInstead(e)
		}
		return c.fieldList()
	case wire.ComStmtClose, wire.ComStmtReset, wire.ComStmtSendLongData, wire.ComStmtFetch:
		ps := c.translateStmtID(cmd)
		if cmd == wire.ComStmtSendLongData {
			c.sbx.NotReplayable() // long data is not kept for a replay
			if ps != nil {
				ps.longData = true
			}
		}
		if cmd == wire.ComStmtReset && ps != nil {
			ps.longData = false
		}
		if cmd == wire.ComStmtFetch && ps != nil {
			// The cap counts every row the cursor returns, across
			// fetches and whatever runs between them.
			c.rows = ps.fetched
			defer func() { ps.fetched = c.rows }()
		}
	case wire.ComResetConnection:
		c.stmts = nil       // the reset closes the prepared statements,
		defer c.sbx.Reset() // rolls the transaction back and resets the variables
	}
	return c.forwardCommand(cmd, info.shape())
}

// forwardCommand forwards the pending command packet and relays the
// answer, a response of the given shape, untouched (but for the max-rows
// cap).
func (c *clientConn) forwardCommand(cmd byte, shape wire.Shape) error {
	cursor := cmd == wire.ComStmtExecute && c.pendingCursor()
	if err := c.out.passCommand(); err != nil {
		return err
	}
	if shape == wire.ShapeNone {
		if cmd == wire.ComQuit {
			return errSessionEnd
		}
		return nil
	}
	if _, err := c.out.forward(c.answer(shape, cursor)); err != nil {
		return err
	}
	return c.out.flush()
}

// answer is how an answer of shape is relayed to this client: untouched,
// but for the max-rows cap.
func (c *clientConn) answer(shape wire.Shape, cursor bool) *answer {
	a := &answer{shape: shape, cursor: cursor, maxRows: c.rowCap, rows: &c.rows}
	if c.rowCap > 0 {
		limit := c.rowCap
		a.capErr = func() *mysql.MyError {
			c.srv.m.GuardrailRefusals.WithLabelValues(session.GuardMaxRows).Inc()
			return clientError(c.sbx.RowCapError(limit))
		}
	}
	return a
}

// pendingCursor reports whether the pending COM_STMT_EXECUTE asks for a
// cursor (its flags byte).
func (c *clientConn) pendingCursor() bool {
	b, err := c.cr.Peek(wire.HeaderLen + 6)
	return err == nil && wire.PayloadLen(b) >= 6 && b[wire.HeaderLen+5]&wire.CursorFlagsMask != 0
}

// refuse answers a command the proxy does not forward.
func (c *clientConn) refuse(cmd byte) error {
	msg := fmt.Sprintf("sqlfork-proxy: command 0x%02X is not supported through the proxy", cmd)
	if cmd == wire.ComShutdown {
		msg = "sqlfork-proxy: COM_SHUTDOWN is refused; the proxy never shuts down its upstream"
	}
	return c.answerInstead(wire.Error(wire.ErUnknownCom, "%s", msg))
}

// answerInstead drops the pending command packet and answers it with e.
func (c *clientConn) answerInstead(e *mysql.MyError) error {
	if err := c.out.discardCommand(); err != nil {
		return err
	}
	return c.out.writeErr(e)
}

// readCommand reads the pending command packet whole (at most limit
// bytes); packets the proxy writes next follow its sequence number.
func (c *clientConn) readCommand(limit int) ([]byte, error) { return c.out.readCommand(limit) }

// fail reports a fatal session error to the client when the protocol still
// allows it, and returns the error for logging.
func (c *clientConn) fail(err error) error {
	var le *linkError
	if !errors.As(err, &le) {
		return err
	}
	if le.side == sideClient {
		return err // the client is gone or broke the protocol; nothing to say
	}
	c.srv.m.UpstreamLost.Inc()
	if le.partial && !le.write {
		return err // a packet is half-written to the client
	}
	if le.write {
		// The upstream may have said why it hung up (max_allowed_packet,
		// killed connection) before closing: pass that on if so.
		_ = c.be.conn.SetReadDeadline(time.Now().Add(partingErrWait))
		if p, seq, rerr := wire.ReadPacket(c.be.r, nil, handshakeLimit); rerr == nil && len(p) > 0 && p[0] == wire.ErrHeader {
			// Forward it as sent: its sequence number counts the
			// client's packets, which went through unchanged.
			c.out.seq = seq
			_ = c.out.writeErr(wire.ParseErr(p))
			return err
		}
	}
	// Nothing more to say: the client sees its connection end, as it would
	// have seen the server's (libmariadb: 2013 during a query), and the
	// proxy's log says why.
	return err
}
