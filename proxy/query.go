package proxy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sqlfork/sqlfork-proxy/wire"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/sqlfork/sqlfork-proxy/metrics"
	"github.com/sqlfork/sqlfork-proxy/rewrite"

	sandbox "github.com/sqlfork/sqlfork-proxy/session"
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
	// oks are the OK packets of the answer, in order.
	oks []okInfo
}

// okInfo is what an OK packet says a statement did.
type okInfo struct{ affected, insertID uint64 }

// parseOK reads affected rows and last insert id from an OK payload.
func parseOK(p []byte) okInfo {
	if len(p) < 1 {
		return okInfo{}
	}
	a, n, _ := wire.LenEnc(p[1:])
	id, _, _ := wire.LenEnc(p[1+n:])
	return okInfo{a, id}
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
// reads the whole answer; rows are parsed as text rows when textRows is
// set, else skipped.
func (b *backend) roundTrip(ctx context.Context, payload []byte, textRows bool) (*textResult, error) {
	if dl, ok := ctx.Deadline(); ok {
		_ = b.conn.SetDeadline(dl)
		defer func() { _ = b.conn.SetDeadline(time.Time{}) }()
	}
	stop := context.AfterFunc(ctx, func() { _ = b.conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := wire.WritePacket(b.w, 0, payload); err != nil {
		return nil, fmt.Errorf("send query: %w", err)
	}
	if err := b.w.Flush(); err != nil {
		return nil, fmt.Errorf("send query: %w", err)
	}
	res := &textResult{}
	first := true
	for {
		p, _, err := wire.ReadPacket(b.r, nil, internalLimit)
		if err != nil {
			return nil, fmt.Errorf("read answer: %w", err)
		}
		if len(p) == 0 {
			return nil, fmt.Errorf("%w: empty packet", wire.ErrMalformed)
		}
		switch p[0] {
		case wire.ErrHeader:
			return nil, serverError{wire.ParseErr(p)}
		case wire.OKHeader:
			n, _, _ := wire.LenEnc(p[1:])
			st, _ := wire.OKStatus(p)
			res.oks = append(res.oks, parseOK(p))
			if first {
				res.affected = n
			}
			res.status = st
			if st&wire.StatusMoreResults == 0 {
				return res, nil
			}
			first = false
			continue
		}
		cols, _, ok := wire.LenEnc(p)
		if !ok || cols == 0 || cols > 4096 {
			return nil, fmt.Errorf("%w: column count", wire.ErrMalformed)
		}
		for i := uint64(0); i <= cols; i++ { // definitions, then EOF
			p, _, err := wire.ReadPacket(b.r, nil, internalLimit)
			if err != nil {
				return nil, fmt.Errorf("read columns: %w", err)
			}
			if first && textRows && i < cols {
				res.defs = append(res.defs, p)
			}
		}
		more := false
		for {
			p, _, err := wire.ReadPacket(b.r, nil, internalLimit)
			if err != nil {
				return nil, fmt.Errorf("read rows: %w", err)
			}
			if len(p) > 0 && p[0] == wire.ErrHeader {
				return nil, serverError{wire.ParseErr(p)}
			}
			if len(p) > 0 && p[0] == wire.EOFHeader && len(p) < wire.MaxEOFLength {
				st, _ := wire.EOFStatus(p)
				res.status = st
				more = st&wire.StatusMoreResults != 0
				break
			}
			if first && textRows {
				row, err := wire.ParseTextRow(p, int(cols))
				if err != nil {
					return nil, err
				}
				res.rows = append(res.rows, row)
			}
		}
		first = false
		if !more {
			return res, nil
		}
	}
}

// sideConn is an upstream connection the sandbox manager uses for forks and
// its registry, logged in with the proxy's default upstream account.
type sideConn struct{ be *backend }

var _ sandbox.SideConn = (*sideConn)(nil)

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
func (s *Server) dialSide(ctx context.Context) (sandbox.SideConn, error) {
	a := s.accounts[s.cfg.UpstreamUser]
	be, err := dialBackend(ctx, s.dialParams(a, "", 45, sideCaps, map[string]string{"_proxy": "sqlfork-proxy", "_proxy_role": "sandbox"}))
	if err != nil {
		s.m.UpstreamConnectFails.Inc()
		return nil, err
	}
	return &sideConn{be: be}, nil
}

// sandboxes returns the sandbox manager, starting it on first use (the
// upstream need not be up when the proxy starts).
func (s *Server) sandboxes(ctx context.Context) (*sandbox.Manager, error) {
	s.sbMu.Lock()
	defer s.sbMu.Unlock()
	if s.sbm != nil {
		return s.sbm, nil
	}
	m, err := sandbox.New(ctx, s.cfg.Sandbox, s.dialSide, s.log.Named("sandbox"))
	if err != nil {
		return nil, err
	}
	m.SetObserver(sandboxMetrics{s.m})
	s.m.Sandboxes.SetSource(m.Counts)
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
	return newError(wire.ErUnknown, "HY000", "sqlfork-proxy: %v", err)
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
