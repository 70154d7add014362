// Package proxy is the MySQL wire-protocol front of sqlfork-proxy: it accepts
// client connections, authenticates them (its configured accounts itself,
// any other account by relaying the exchange to the upstream), pins one
// upstream connection to each and runs its own command loop that forwards
// response packets untouched.
package proxy

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
	"github.com/sqlfork/sqlfork-proxy/kill"
	"github.com/sqlfork/sqlfork-proxy/metrics"
	"github.com/sqlfork/sqlfork-proxy/proxy/admin"
	"github.com/sqlfork/sqlfork-proxy/session"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// readyCacheFor is how long a readiness probe result is reused.
const readyCacheFor = time.Second

// upstreamInfo is what clients are told about the server behind the proxy.
type upstreamInfo struct {
	version   string
	caps      uint32
	collation uint8
	status    uint16
}

// frontend is what the proxy last learnt of the upstream's greeting.
type frontend struct {
	info upstreamInfo
}

// Server is a running proxy listener.
type Server struct {
	cfg     Config
	log     *zap.Logger
	m       *metrics.Proxy
	ln      net.Listener
	tlsConf *tls.Config // client side; nil without --tls-cert
	upTLS   *tls.Config // upstream side; nil when disabled
	// rsaKey encrypts passwords of caching_sha2_password's full
	// authentication from clients without TLS (relayauth.go).
	rsaKey   *rsa.PrivateKey
	accounts map[string]*account
	// sha2Cache holds the configured caching_sha2_password accounts that
	// completed a full authentication: they get the fast one from then on.
	sha2Cache sync.Map

	cmdCount [256]prometheus.Counter
	cmdTime  [256]prometheus.Observer

	front atomic.Pointer[frontend]

	probeMu  sync.Mutex
	probeAt  time.Time
	probeErr error
	nextID   atomic.Uint64
	connsMu  sync.Mutex
	conns    map[*connState]struct{}
	// livenessRounds counts the liveness watcher's looks at every
	// connection (liveness.go).
	livenessRounds atomic.Int64
	wg             sync.WaitGroup
	stopping       atomic.Bool
	closeOnce      sync.Once

	sbMu sync.Mutex
	sbm  *session.Manager // started on first sandboxed login
	// sideDialer opens the manager's side connections: dialSide, or an
	// in-memory upstream in tests.
	sideDialer session.Dialer

	// killer answers KILL (kill.Killer; the Server is its Directory).
	killer *kill.Killer
	// trim gives memory back after a spike of connections closes.
	trim *memoryTrimmer
}

// New validates cfg, loads TLS material and binds the client listener, so a
// bad setting or a busy port fails at start. The upstream need not be up.
func New(cfg Config, log *zap.Logger, m *metrics.Proxy) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Sandbox = cfg.SandboxConfig()
	s := &Server{cfg: cfg, log: log, m: m, accounts: buildAccounts(&cfg), conns: map[*connState]struct{}{}}
	s.killer = kill.New(s)
	s.trim = newMemoryTrimmer(log, func() int {
		s.connsMu.Lock()
		defer s.connsMu.Unlock()
		return len(s.conns)
	})
	if cfg.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("tls-cert/tls-key: %w", err)
		}
		s.tlsConf = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		s.rsaKey, _ = cert.PrivateKey.(*rsa.PrivateKey)
	}
	if s.rsaKey == nil {
		// caching_sha2_password full authentication over plain TCP sends
		// the password RSA-encrypted with the proxy's key.
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return nil, fmt.Errorf("generate RSA key: %w", err)
		}
		s.rsaKey = key
	}
	upTLS, err := upstreamTLS(&cfg)
	if err != nil {
		return nil, err
	}
	s.upTLS = upTLS
	for i := range s.cmdCount {
		name := commandName(byte(i))
		s.cmdCount[i] = m.Commands.WithLabelValues(name)
		s.cmdTime[i] = m.CommandDuration.WithLabelValues(name)
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	s.ln = ln
	return s, nil
}

func upstreamTLS(cfg *Config) (*tls.Config, error) {
	host, _, _ := net.SplitHostPort(cfg.Upstream)
	switch cfg.UpstreamTLS {
	case UpstreamTLSDisabled:
		return nil, nil
	case UpstreamTLSPreferred, UpstreamTLSRequired:
		return &tls.Config{InsecureSkipVerify: true, ServerName: host}, nil //nolint:gosec // modes that do not verify, by definition
	}
	c := &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	if cfg.UpstreamTLSCA != "" {
		pem, err := os.ReadFile(cfg.UpstreamTLSCA)
		if err != nil {
			return nil, fmt.Errorf("upstream-tls-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("upstream-tls-ca: no PEM certificates in %s", cfg.UpstreamTLSCA)
		}
		c.RootCAs = pool
	}
	if cfg.UpstreamTLS == UpstreamTLSVerifyCA {
		// Verify the chain but not the host name.
		c.InsecureSkipVerify = true
		c.VerifyConnection = func(cs tls.ConnectionState) error {
			opts := x509.VerifyOptions{Roots: c.RootCAs, Intermediates: x509.NewCertPool()}
			for _, ic := range cs.PeerCertificates[1:] {
				opts.Intermediates.AddCert(ic)
			}
			_, err := cs.PeerCertificates[0].Verify(opts)
			return err
		}
	}
	return c, nil
}

// SetSandboxLimits changes the sandbox limits, guardrails (global and
// per user), TTL defaults, grace and lazy fork rate (of the copies running
// too) of a running proxy to those of c (SIGHUP reload); c's other
// settings are ignored.
func (s *Server) SetSandboxLimits(c Config) {
	s.sbMu.Lock()
	defer s.sbMu.Unlock()
	sc := c.SandboxConfig()
	s.cfg.Sandbox.MaxSandboxes, s.cfg.Sandbox.Guardrails, s.cfg.Sandbox.UserGuardrails = sc.MaxSandboxes, sc.Guardrails, sc.UserGuardrails
	s.cfg.Sandbox.DefaultTTL, s.cfg.Sandbox.IdleTTL, s.cfg.Sandbox.MaxTTL = sc.DefaultTTL, sc.IdleTTL, sc.MaxTTL
	s.cfg.Sandbox.Grace = sc.Grace
	s.cfg.Sandbox.SideConnections, s.cfg.Sandbox.ForkQueueTimeout = sc.SideConnections, sc.ForkQueueTimeout
	s.cfg.Sandbox.LazyForkRate, s.cfg.Sandbox.LazyForkRateFor = sc.LazyForkRate, sc.LazyForkRateFor
	if s.sbm != nil {
		s.sbm.SetLimits(sc)
	}
}

// Sandboxes returns the sandbox manager, or nil before the first sandboxed
// login started it.
func (s *Server) Sandboxes() *session.Manager {
	s.sbMu.Lock()
	defer s.sbMu.Unlock()
	return s.sbm
}

// Addr is the bound client listener address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// dialParams builds the upstream connection parameters for an account.
func (s *Server) dialParams(a *account, db string, collation uint8, caps uint32, attrs map[string]string) dialParams {
	return dialParams{
		addr: s.cfg.Upstream, user: a.upstreamUser, password: a.upstreamPassword, db: db,
		collation: collation, caps: caps, attrs: attrs, tls: s.upTLS,
		tlsMust: s.cfg.UpstreamTLS != UpstreamTLSDisabled && s.cfg.UpstreamTLS != UpstreamTLSPreferred,
		timeout: s.cfg.ConnectTimeout,
	}
}

// remember records what the upstream announced, for future client greetings.
func (s *Server) remember(g *wire.Greeting) {
	info := upstreamInfo{version: g.Version, caps: g.Caps, collation: g.Collation, status: g.Status}
	if f := s.front.Load(); f != nil && f.info == info {
		return
	}
	s.front.Store(&frontend{info: info})
}

// probe logs in upstream with the default account and quits, refreshing
// what the proxy knows about the upstream.
func (s *Server) probe(ctx context.Context) error {
	a := s.accounts[s.cfg.UpstreamUser]
	be, err := dialBackend(ctx, s.dialParams(a, "", 33, relayedCaps, map[string]string{"_proxy": "sqlfork-proxy", "_proxy_probe": "1"}))
	if err != nil {
		return err
	}
	defer be.close()
	s.remember(be.greeting)
	if _, err := wire.WritePacket(be.w, 0, []byte{wire.ComQuit}); err == nil {
		_ = be.w.Flush()
	}
	return nil
}

// Ready reports nil when the upstream accepts the default account. Results
// are reused for a second so probes cannot flood the upstream.
func (s *Server) Ready(ctx context.Context) error {
	if s.stopping.Load() {
		return errors.New("shutting down")
	}
	if err := s.probeCached(ctx); err != nil {
		return err
	}
	if s.sandboxing() {
		// Sessions need the registry: ready once it is loaded.
		if _, err := s.sandboxes(ctx); err != nil {
			return fmt.Errorf("sandbox registry: %w", err)
		}
	}
	return nil
}

// sandboxing reports whether any account uses sandboxes.
func (s *Server) sandboxing() bool {
	for _, a := range s.accounts {
		if s.modeOf(a) != session.Passthrough {
			return true
		}
	}
	return false
}

// probeCached probes the upstream unless a probe finished within
// readyCacheFor, whose result it returns instead.
func (s *Server) probeCached(ctx context.Context) error {
	s.probeMu.Lock()
	defer s.probeMu.Unlock()
	if !s.probeAt.IsZero() && time.Since(s.probeAt) < readyCacheFor {
		return s.probeErr
	}
	s.probeErr = s.probe(ctx)
	s.probeAt = time.Now()
	return s.probeErr
}

// frontendFor returns the client-facing configuration, probing the upstream
// if it has never been reached.
func (s *Server) frontendFor(ctx context.Context) (*frontend, error) {
	if f := s.front.Load(); f != nil {
		return f, nil
	}
	// Clients queued behind a failed probe get its result, not a probe each.
	if err := s.probeCached(ctx); err != nil {
		return nil, err
	}
	if f := s.front.Load(); f != nil {
		return f, nil
	}
	return nil, errors.New("upstream greeting unknown")
}

// observe records a finished command.
func (s *Server) observe(cmd byte, start time.Time) {
	s.cmdCount[cmd].Inc()
	s.cmdTime[cmd].Observe(time.Since(start).Seconds())
}

// Serve accepts clients until ctx is cancelled, then stops accepting, lets
// in-flight statements finish within ShutdownGrace and returns nil.
func (s *Server) Serve(ctx context.Context) error {
	stop := context.AfterFunc(ctx, s.beginShutdown)
	defer stop()
	watch, endWatch := context.WithCancel(context.WithoutCancel(ctx))
	defer endWatch()
	go s.watchLiveness(watch)
	if s.sandboxing() {
		// Start the sandbox manager now (it checks the upstream account's
		// privileges and reconciles the registry); if the upstream is not
		// up yet, the first sandboxed login starts it.
		go func() {
			if _, err := s.sandboxes(ctx); err != nil {
				s.log.Info("sandbox manager not started yet; the first sandboxed login retries", zap.Error(err))
			}
		}()
	}
	var delay time.Duration
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			if s.stopping.Load() {
				break
			}
			if retryableAccept(err) {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				s.log.Warn("accept failed; retrying", zap.Error(err), zap.Duration("delay", delay))
				time.Sleep(delay)
				continue
			}
			return fmt.Errorf("accept: %w", err)
		}
		delay = 0
		s.wg.Add(1)
		go s.handle(ctx, nc)
	}
	return s.drain()
}

// retryableAccept reports accept errors that pass (out of file
// descriptors, a connection reset before it was accepted).
func retryableAccept(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.ENOBUFS)
}

// beginShutdown stops accepting and ends idle sessions.
func (s *Server) beginShutdown() {
	s.closeOnce.Do(func() {
		s.connsMu.Lock()
		defer s.connsMu.Unlock()
		s.log.Info("shutting down: stop accepting; waiting for in-flight statements",
			zap.Int("connections", len(s.conns)), zap.Duration("grace", s.cfg.ShutdownGrace))
		s.stopping.Store(true)
		// Idle sessions are told first: once the listener is seen closed,
		// none of them takes another command.
		for c := range s.conns {
			c.shutdown()
		}
		_ = s.ln.Close()
	})
}

// drain waits for sessions to end, closing what remains after the grace.
func (s *Server) drain() error {
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(s.cfg.ShutdownGrace):
		s.connsMu.Lock()
		n := len(s.conns)
		for c := range s.conns {
			c.forceClose()
		}
		s.connsMu.Unlock()
		s.log.Warn("shutdown grace expired; closed remaining connections", zap.Int("connections", n))
		<-done
	}
	s.sbMu.Lock()
	if s.sbm != nil {
		s.sbm.Close()
	}
	s.sbMu.Unlock()
	s.log.Info("shutdown complete")
	return nil
}

// handle runs one client connection to its end. A panic closes only it.
func (s *Server) handle(ctx context.Context, nc net.Conn) {
	defer s.wg.Done()
	id := s.nextID.Add(1)
	log := s.log.With(zap.Uint64("conn", id), zap.String("client", nc.RemoteAddr().String()))
	st := newConnState(ctx, nc)
	defer st.cancel()
	s.connsMu.Lock()
	s.conns[st] = struct{}{}
	stopping, n := s.stopping.Load(), len(s.conns)
	s.connsMu.Unlock()
	s.trim.opened(n)
	s.m.ConnectionsTotal.Inc()
	s.m.ConnectionsActive.Inc()
	var be *backend
	defer func() {
		if r := recover(); r != nil {
			s.m.ConnectionPanics.Inc()
			log.Error("connection handler panicked; closing this connection", zap.Any("panic", r),
				zap.ByteString("stack", debug.Stack()))
		}
		if be != nil {
			be.close()
		}
		_ = nc.Close()
		s.connsMu.Lock()
		delete(s.conns, st)
		left := len(s.conns)
		s.connsMu.Unlock()
		s.m.ConnectionsActive.Dec()
		s.trim.closed(left)
	}()
	if stopping {
		s.rejectGreeting(nc, wire.Error(wire.ErServerShutdown, "sqlfork-proxy is shutting down"), "shutdown")
		return
	}
	if s.cfg.MaxConnections > 0 && n > s.cfg.MaxConnections {
		s.rejectGreeting(nc, wire.Error(wire.ErConCount, "Too many connections (sqlfork-proxy max-connections=%d)", s.cfg.MaxConnections), "max_connections")
		return
	}
	// Shutdown reaches sessions through connState, not ctx: a login in
	// progress completes (or times out) rather than failing half-way.
	sess, err := s.handshake(context.WithoutCancel(ctx), st, id, log)
	if sess != nil {
		be = sess.be
	}
	if err != nil {
		log.Debug("handshake ended", zap.Error(err))
		return
	}
	log.Debug("session started", zap.String("user", sess.acct.name), zap.Uint32("upstream_conn", sess.be.greeting.ConnID))
	defer func() {
		if sess.sbx != nil {
			// The upstream connection ends first: an XA transaction it
			// left prepared is then the server's, which the discard of
			// an unkept sandbox rolls back.
			sess.be.close()
			sess.sbx.Close()
		}
	}()
	if err := sess.run(); err != nil {
		lvl := zap.InfoLevel
		var le *linkError
		if errors.As(err, &le) && le.side == sideUpstream {
			lvl = zap.WarnLevel
		}
		log.Log(lvl, "session closed on error", zap.Error(err))
		return
	}
	log.Debug("session closed")
}

// rejectGreeting answers a new connection with an ERR packet in place of the
// server greeting, as MySQL does for refused connections.
func (s *Server) rejectGreeting(nc net.Conn, e *mysql.MyError, reason string) {
	s.writeGreetingRefusal(nc, wire.AppendErr(nil, e), reason)
}

// writeGreetingRefusal sends the ERR payload p in place of the greeting.
func (s *Server) writeGreetingRefusal(nc net.Conn, p []byte, reason string) {
	s.m.ConnectionsRejected.WithLabelValues(reason).Inc()
	_ = nc.SetWriteDeadline(time.Now().Add(s.cfg.HandshakeTimeout))
	_, _ = nc.Write(append([]byte{byte(len(p)), byte(len(p) >> 8), byte(len(p) >> 16), 0}, p...))
}

// handshake authenticates the client and opens its upstream connection
// (clientLogin).
func (s *Server) handshake(ctx context.Context, st *connState, id uint64, log *zap.Logger) (*clientConn, error) {
	nc := st.nc
	_ = nc.SetDeadline(time.Now().Add(s.cfg.HandshakeTimeout))
	// Until the upstream has been reached once (a probe login with the
	// default account), clients are refused in place of the greeting.
	if _, err := s.frontendFor(ctx); err != nil {
		s.m.UpstreamConnectFails.Inc()
		log.Warn("upstream unavailable; refusing client", zap.Error(err))
		s.rejectGreeting(nc, upstreamDown(s.cfg.Upstream, err), "upstream_unavailable")
		return nil, err
	}
	// The upstream connection is opened before the client is greeted: if
	// the upstream cannot be reached, the client is refused in place of the
	// greeting, as by a server refusing connections; otherwise the client
	// is greeted with its scramble.
	pre, err := openBackend(ctx, s.cfg.Upstream, s.cfg.ConnectTimeout)
	var refused *wire.RefusedGreeting
	switch {
	case errors.As(err, &refused):
		// The server's own answer in place of its greeting (1040 too many
		// connections, a blocked host): the client gets it as sent.
		s.m.UpstreamConnectFails.Inc()
		log.Info("upstream refused a connection; so is the client", zap.Error(err))
		s.writeGreetingRefusal(nc, refused.Payload, "upstream_refused")
		return nil, err
	case err != nil:
		s.m.UpstreamConnectFails.Inc()
		log.Warn("upstream unavailable; refusing client", zap.Error(err))
		s.rejectGreeting(nc, upstreamDown(s.cfg.Upstream, err), "upstream_unavailable")
		return nil, err
	}
	sock := &loginSocket{Conn: nc}
	// The client is greeted with the upstream thread's id, as directly: it
	// is what CONNECTION_ID() and the process list show, and what KILL
	// takes (translated for the caller's own connections only).
	l := &clientLogin{ctx: ctx, srv: s, log: log, sock: sock, conn: sock, be: pre, connID: pre.greeting.ConnID}
	done := false
	defer func() {
		if !done { // refused, failed or panicked
			pre.close()
			if l.sbx != nil {
				l.sbx.Close()
			}
		}
	}()
	if err := l.run(); err != nil {
		return nil, err
	}
	done = true
	var client net.Conn = nc
	if l.tls {
		client = l.conn
	}
	_ = nc.SetDeadline(time.Time{})
	sess := newClientConn(s, log, st, client, l.be, l.resp.Caps)
	sess.acct, sess.collation, sess.sbx = l.acct, l.resp.Collation, l.sbx
	sock.handshakeDone()
	st.attach(l.be, l.acct.name, l.connID)
	if l.sbx != nil {
		st.setInterrupt(l.sbx.Interrupt)
	}
	return sess, nil
}

// Admin returns what the admin API manages: the proxy's sandboxes (starting
// the sandbox manager if no login has yet).
func (s *Server) Admin() adminapi.Sandboxes { return admin.New(s.sandboxes) }
