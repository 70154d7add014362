package proxy

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/sqlfork/sqlfork-proxy/metrics"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/session"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// internalLimit bounds packets the proxy reads for its own queries.
const internalLimit = 64 << 20

// textResult is the answer to a query the proxy sends itself.
type textResult struct {
	affected uint64
	status   uint16
	rows     [][]*string
	// defs are the column definition packets of the first result set.
	defs [][]byte
	// oks are what the answer's OK packets said, in order.
	oks []wire.OK
}

// serverError is an error the upstream answered with; the connection is
// still usable.
type serverError struct{ *mysql.MyError }

// ServerError marks errors after which a connection can be reused.
func (serverError) ServerError() bool { return true }

func (e serverError) Unwrap() error { return e.MyError }

// query runs sql on b with the text protocol and reads the whole answer
// (the first result set's rows; later results are read and dropped).
func (b *backend) query(ctx context.Context, sql string) (*textResult, error) {
	return b.roundTrip(ctx, append([]byte{wire.ComQuery}, sql...), true)
}

// roundTrip sends one command packet (COM_QUERY or COM_STMT_EXECUTE) and
// reads the whole answer; the first result set's rows are parsed as text
// rows when textRows is set, else skipped. A server error is a
// serverError; any other error leaves the connection unusable.
func (b *backend) roundTrip(ctx context.Context, payload []byte, textRows bool) (*textResult, error) {
	defer b.watch(ctx)()
	if err := b.send(payload); err != nil {
		return nil, err
	}
	res := &textResult{}
	resp := b.response(wire.ShapeResults, false)
	defer func() { b.status = resp.Status }()
	first, cols := true, 0
	for !resp.Done() {
		p, seq, err := wire.ReadPacket(b.r, nil, internalLimit)
		if err != nil {
			return nil, fmt.Errorf("read answer: %w", err)
		}
		kind, err := resp.Next(p, len(p))
		if err != nil {
			return nil, err
		}
		switch kind {
		case wire.KindErr:
			return nil, serverError{wire.ParseErr(p)}
		case wire.KindOK:
			o, _ := wire.ParseOK(p)
			res.oks = append(res.oks, o)
			if first {
				res.affected = o.Affected
			}
			first = false
		case wire.KindLocalInfile:
			// The proxy has no file to give: send none.
			if err := b.sendSeq(seq+1, nil); err != nil {
				return nil, err
			}
		case wire.KindColumnCount:
			n, _, _ := wire.LenEnc(p)
			cols = int(n)
		case wire.KindColumnDef:
			if first && textRows {
				res.defs = append(res.defs, p)
			}
		case wire.KindRow:
			if first && textRows {
				row, err := wire.ParseTextRow(p, cols)
				if err != nil {
					return nil, err
				}
				res.rows = append(res.rows, row)
			}
		case wire.KindEnd:
			first = false // the first result set has ended
		}
	}
	res.status = resp.Status
	return res, nil
}

// prepare prepares sql on b for the proxy itself and returns the new
// statement's id; a server error is a serverError.
func (b *backend) prepare(ctx context.Context, sql string) (uint32, error) {
	defer b.watch(ctx)()
	if err := b.send(append([]byte{wire.ComStmtPrepare}, sql...)); err != nil {
		return 0, err
	}
	resp := b.response(wire.ShapePrepare, false)
	defer func() { b.status = resp.Status }()
	for !resp.Done() {
		p, _, err := wire.ReadPacket(b.r, nil, internalLimit)
		if err != nil {
			return 0, fmt.Errorf("read prepare answer: %w", err)
		}
		kind, err := resp.Next(p, len(p))
		switch {
		case err != nil:
			return 0, err
		case kind == wire.KindErr:
			return 0, serverError{wire.ParseErr(p)}
		case kind == wire.KindOther:
			return 0, fmt.Errorf("%w: COM_STMT_PREPARE_OK", wire.ErrMalformed)
		}
	}
	return resp.Prepared.ID, nil
}

// closeStmt closes an upstream statement (COM_STMT_CLOSE has no answer).
func (b *backend) closeStmt(id uint32) {
	p := []byte{wire.ComStmtClose, 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(p[1:], id)
	_ = b.send(p)
}

// send writes a command packet (numbered from 0) and flushes it.
func (b *backend) send(payload []byte) error { return b.sendSeq(0, payload) }

func (b *backend) sendSeq(seq uint8, payload []byte) error {
	return b.sendAs("to upstream", seq, payload)
}

// sendAs writes payload as packet seq and flushes it; an error says what
// it was sending.
func (b *backend) sendAs(what string, seq uint8, payload []byte) error {
	_, err := wire.WritePacket(b.w, seq, payload)
	if err == nil {
		err = b.w.Flush()
	}
	if err != nil {
		return fmt.Errorf("send %s: %w", what, err)
	}
	return nil
}

// watch applies ctx to b's blocking I/O until the returned function is
// called: its deadline, and its cancellation, which cuts the I/O short.
func (b *backend) watch(ctx context.Context) func() {
	dl, hasDeadline := ctx.Deadline()
	if hasDeadline {
		_ = b.conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = b.conn.SetDeadline(time.Unix(1, 0)) })
	return func() {
		stop()
		if hasDeadline {
			_ = b.conn.SetDeadline(time.Time{})
		}
	}
}

// clientUpstream is a client's own upstream connection as its session
// uses it between the client's commands (session.Upstream). Anything but
// the server's answer breaks the connection: it comes back as a
// linkError.
type clientUpstream struct{ be *backend }

var _ session.Upstream = clientUpstream{}

// Query implements session.Upstream.
func (u clientUpstream) Query(ctx context.Context, sql string) (*session.Result, error) {
	r, err := u.be.query(ctx, sql)
	if err != nil {
		return nil, upstreamErr(err)
	}
	return &session.Result{Columns: r.defs, Rows: r.rows, OKs: r.oks}, nil
}

// Resend implements session.Upstream.
func (u clientUpstream) Resend(ctx context.Context, payload []byte, prepared string) ([]wire.OK, error) {
	if prepared != "" {
		id, err := u.be.prepare(ctx, prepared)
		if err != nil {
			return nil, upstreamErr(err)
		}
		defer u.be.closeStmt(id)
		payload = append([]byte(nil), payload...)
		binary.LittleEndian.PutUint32(payload[1:], id)
	}
	r, err := u.be.roundTrip(ctx, payload, false)
	if err != nil {
		return nil, upstreamErr(err)
	}
	return r.oks, nil
}

// Status implements session.Upstream.
func (u clientUpstream) Status() uint16 { return u.be.status }

// upstreamErr passes the server's errors on and makes others link errors.
func upstreamErr(err error) error {
	if _, ok := err.(serverError); ok {
		return err
	}
	return &linkError{side: sideUpstream, err: err}
}

// sideConn is an upstream connection the sandbox manager uses for forks and
// its registry, logged in with the proxy's default upstream account.
type sideConn struct{ be *backend }

var _ session.SideConn = (*sideConn)(nil)

func (c *sideConn) Exec(ctx context.Context, sql string) (uint64, error) {
	r, err := c.be.query(ctx, sql)
	if err != nil {
		return 0, err
	}
	return r.affected, nil
}

func (c *sideConn) Query(ctx context.Context, sql string) ([][]*string, error) {
	r, err := c.be.query(ctx, sql)
	if err != nil {
		return nil, err
	}
	return r.rows, nil
}

func (c *sideConn) Close() error {
	_ = c.be.conn.SetWriteDeadline(time.Now().Add(time.Second))
	if _, err := wire.WritePacket(c.be.w, 0, []byte{wire.ComQuit}); err == nil {
		_ = c.be.w.Flush()
	}
	c.be.close()
	return nil
}

// sideCaps are the capabilities of side connections: plain protocol 4.1
// (notably without CLIENT_NO_SCHEMA, under which db.table loses its db).
const sideCaps = wire.CapLongPassword | wire.CapLongFlag | wire.CapProtocol41 | wire.CapTransactions | wire.CapSecureConnection |
	wire.CapMultiResults | wire.CapPluginAuth | wire.CapPluginAuthLenenc | wire.CapConnectAttrs

// dialSide opens a side connection.
func (s *Server) dialSide(ctx context.Context) (session.SideConn, error) {
	a := s.accounts[s.cfg.UpstreamUser]
	be, err := dialBackend(ctx, s.dialParams(a, "", 45, sideCaps, map[string]string{"_proxy": "sqlfork-proxy", "_proxy_role": "sandbox"}))
	if err != nil {
		s.m.UpstreamConnectFails.Inc()
		return nil, err
	}
	return &sideConn{be: be}, nil
}

// dialPromote opens a connection with the promote account, which SANDBOX
// PROMOTE writes production with.
func (s *Server) dialPromote(ctx context.Context) (session.SideConn, error) {
	a := &account{upstreamUser: s.cfg.PromoteUser, upstreamPassword: s.cfg.PromotePassword}
	be, err := dialBackend(ctx, s.dialParams(a, "", 45, sideCaps, map[string]string{"_proxy": "sqlfork-proxy", "_proxy_role": "promote"}))
	if err != nil {
		s.m.UpstreamConnectFails.Inc()
		return nil, err
	}
	return &sideConn{be: be}, nil
}

// sandboxes returns the sandbox manager, starting it on first use (the
// upstream need not be up when the proxy starts).
func (s *Server) sandboxes(ctx context.Context) (*session.Manager, error) {
	s.sbMu.Lock()
	defer s.sbMu.Unlock()
	if s.sbm != nil {
		return s.sbm, nil
	}
	dial := s.sideDialer
	if dial == nil {
		dial = s.dialSide
	}
	m, err := session.New(ctx, s.cfg.Sandbox, dial, s.log.Named("sandbox"))
	if err != nil {
		return nil, err
	}
	m.SetObserver(sandboxMetrics{s.m})
	if s.cfg.PromoteUser != "" {
		m.SetPromoteDialer(s.dialPromote)
	}
	m.SetDirectory(s)
	s.m.Sandboxes.SetSource(m.Counts)
	s.m.RegistrySandboxes.SetSource(func() map[[2]string]int {
		out := map[[2]string]int{}
		for k, n := range m.Census() {
			out[[2]string{k.State, k.Changes}] = n
		}
		return out
	})
	s.m.Fills.SetSource(func() metrics.FillStats {
		st := m.FillStats()
		return metrics.FillStats{Running: st.Running, Copied: st.Copied, Total: st.Total, Oldest: st.Oldest}
	})
	s.m.SideConns.SetSource(func() metrics.PoolStats {
		st := m.PoolStats()
		return metrics.PoolStats{Size: st.Size, InUse: st.InUse, Idle: st.Idle, Waiting: st.Waiting}
	})
	if known, writable, _ := m.ProductionWritable(); known {
		v := 0.0
		if writable {
			v = 1
		}
		s.m.ProductionWritable.Set(v)
	}
	s.sbm = m
	return m, nil
}

// clientError turns an error from planning a statement into the MySQL
// error the client gets.
func clientError(err error) *mysql.MyError {
	var r interface {
		error
		MySQLError() (uint16, string, string)
	}
	if errors.As(err, &r) {
		code, state, msg := r.MySQLError()
		return &mysql.MyError{Code: code, State: state, Message: msg}
	}
	var me *mysql.MyError
	if errors.As(err, &me) {
		// A server error met while forking or reading the registry: keep
		// its code, say what the proxy was doing.
		return &mysql.MyError{Code: me.Code, State: me.State, Message: "sqlfork-proxy: " + err.Error()}
	}
	return wire.Error(wire.ErUnknown, "sqlfork-proxy: %v", err)
}

// countGuardrail counts err in sqlfork_guardrail_refusals_total when a
// guardrail made it.
func (s *Server) countGuardrail(err error) {
	var r *rewrite.Refusal
	if errors.As(err, &r) && r.Reason != "" {
		s.m.GuardrailRefusals.WithLabelValues(r.Reason).Inc()
	}
}

// sandboxMetrics feeds sandbox events to the Prometheus collectors.
type sandboxMetrics struct{ m *metrics.Proxy }

func (o sandboxMetrics) Discarded(reason string) {
	o.m.SandboxesDiscarded.WithLabelValues(reason).Inc()
}

func (o sandboxMetrics) ForkFailed(strategy, cause string) {
	o.m.ForkFailures.WithLabelValues(strategy, cause).Inc()
}

func (o sandboxMetrics) SideConnTimedOut() { o.m.SideConnTimeouts.Inc() }

func (o sandboxMetrics) TransactionRestarted(outcome string) {
	o.m.TransactionReplays.WithLabelValues(outcome).Inc()
}

func (o sandboxMetrics) Planned(took time.Duration) { o.m.RewriteDuration.Observe(took.Seconds()) }

func (o sandboxMetrics) RegistryChecked(result string) {
	o.m.RegistryChecks.WithLabelValues(result).Inc()
}

func (o sandboxMetrics) LeasesAwaited(took time.Duration) { o.m.SyncLeaseWait.Observe(took.Seconds()) }

func (o sandboxMetrics) Diffed(kind string, took time.Duration) {
	o.m.Diffs.WithLabelValues(kind).Observe(took.Seconds())
}

func (o sandboxMetrics) Promoted(strategy, outcome string, conflicts int) {
	o.m.Promotes.WithLabelValues(strings.ToLower(strategy), outcome).Inc()
	if conflicts > 0 {
		o.m.PromoteConflicts.WithLabelValues(strings.ToLower(strategy)).Add(float64(conflicts))
	}
}

func (o sandboxMetrics) Filled(rows, bytes int64) {
	o.m.ForkedRows.Add(float64(rows))
	o.m.ForkedBytes.Add(float64(bytes))
}

func (o sandboxMetrics) Forked(strategy string, schemaOnly bool, took time.Duration, rows, bytes int64) {
	o.m.ForkedRows.Add(float64(rows))
	kind := "full"
	if schemaOnly {
		kind = "schema"
	}
	o.m.Forks.WithLabelValues(strategy, kind).Inc()
	o.m.ForkDuration.Observe(took.Seconds())
	o.m.ForkedBytes.Add(float64(bytes))
}
