package proxy

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"

	"github.com/go-mysql-org/go-mysql/mysql"
	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/session"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// clientLogin is one client's login, from the proxy's greeting to the OK or
// ERR that ends it (Server.handshake). The upstream connection is opened
// before the client is greeted (openBackend), and the client is greeted with
// that connection's own scramble and default auth plugin. Then:
//
//   - a configured account (the proxy's upstream account, users:) is
//     authenticated by the proxy, which knows its password, and logged in
//     upstream with the credentials it maps to (loginMapped);
//   - any other name is the upstream account of that name: the client's
//     auth data and the rest of the exchange (auth switches, more data) are
//     relayed between client and upstream, which decides (loginRelayed,
//     relayAuth). The proxy keeps no copy of those passwords.
type clientLogin struct {
	ctx  context.Context
	srv  *Server
	log  *zap.Logger
	sock *loginSocket
	// conn is sock, or the proxy's TLS over it once the client asked.
	conn   net.Conn
	tls    bool
	seq    uint8 // sequence number of the next packet to the client
	connID uint32
	// be is the upstream connection opened before the greeting; logged in
	// once run returns nil.
	be   *backend
	resp *wire.HandshakeResponse
	acct *account
	// tag is the sandbox named in the login (appuser+sandbox).
	tag string
	sbx *session.Session
}

// run greets the client, reads its handshake response (terminating TLS
// when asked), authenticates it, logs in upstream and binds the session's
// sandbox; the client has its OK when run returns nil, and its ERR, when
// the protocol still allows one, otherwise.
func (l *clientLogin) run() error {
	if err := l.greet(); err != nil {
		return err
	}
	if err := l.readResponse(); err != nil {
		return err
	}
	var ok []byte
	var err error
	if a, tag, found := l.srv.lookupAccount(l.resp.User); found {
		l.acct, l.tag = a, tag
		ok, err = l.loginMapped()
	} else {
		l.acct, l.tag = l.srv.relayedAccount(l.resp.User)
		ok, err = l.loginRelayed()
	}
	if err != nil {
		return err
	}
	return l.finish(ok)
}

// greet sends the proxy's greeting: the upstream's (appendGreeting) with
// the capabilities the proxy relays and a connection id at or above 2³¹.
func (l *clientLogin) greet() error {
	g := l.be.greeting
	caps := clientCaps(g.Caps, l.srv.tlsConf != nil)
	if _, err := l.sock.Write(appendGreeting(nil, g, caps, l.connID)); err != nil {
		return fmt.Errorf("send greeting: %w", err)
	}
	l.seq = 1
	return nil
}

// readResponse reads the client's handshake response, after completing
// TLS with the client if it sends an SSLRequest first. A malformed one is
// answered "Bad handshake" (1043).
func (l *clientLogin) readResponse() error {
	p, err := l.recv()
	if err != nil {
		return err
	}
	resp, err := wire.ParseHandshakeResponse(p)
	if err == nil && resp.SSLRequest {
		if err = l.startTLS(resp); err != nil {
			return err
		}
		if p, err = l.recv(); err != nil {
			return err
		}
		if err = checkTunneled(p); err == nil {
			resp, err = wire.ParseHandshakeResponse(p)
		}
	}
	if err != nil {
		return l.badHandshake(err)
	}
	l.resp = resp
	return nil
}

// badHandshake answers a malformed handshake response.
func (l *clientLogin) badHandshake(why error) error {
	_, _ = l.conn.Write(badHandshake(l.seq, why))
	return fmt.Errorf("%w: %v", errBadHandshake, why)
}

// recv reads the client's next packet of the login (the handshake read
// limit applies) and returns its payload.
func (l *clientLogin) recv() ([]byte, error) {
	pkt, err := readWhole(l.conn, handshakeReadLimit)
	if err != nil {
		return nil, err
	}
	l.seq = pkt[3] + 1
	return pkt[wire.HeaderLen:], nil
}

// send sends the client one packet of the login.
func (l *clientLogin) send(p []byte) error {
	pkt := append([]byte{byte(len(p)), byte(len(p) >> 8), byte(len(p) >> 16), l.seq}, p...)
	l.seq++
	if _, err := l.conn.Write(pkt); err != nil {
		return fmt.Errorf("write to client: %w", err)
	}
	return nil
}

// secure reports whether the client's link to the proxy is TLS.
func (l *clientLogin) secure() bool { return l.tls }

// fail sends the client e, ending the login, and returns e.
func (l *clientLogin) fail(e *mysql.MyError) error {
	_ = l.send(wire.AppendErr(nil, e))
	return e
}

// requireTLS refuses a client without TLS when --tls-required is set.
func (l *clientLogin) requireTLS() error {
	if !l.srv.cfg.TLSRequired || l.tls {
		return nil
	}
	return l.fail(wire.Error(wire.ErSecureTransportRequired,
		"Connections using insecure transport are prohibited while --tls-required is set on sqlfork-proxy"))
}

// loginMapped authenticates a configured account and logs in upstream with
// the credentials it maps to; it returns the OK the client is to get.
func (l *clientLogin) loginMapped() ([]byte, error) {
	if err := l.authLocal(); err != nil {
		return nil, err
	}
	p, err := l.upstreamParams()
	if err != nil {
		return nil, err
	}
	if err := l.be.login(l.ctx, p); err != nil {
		return nil, l.upstreamFailed(err)
	}
	return wireOK(l.be.status, 0), nil
}

// upstreamParams are the parameters of the upstream login, once the
// login may go upstream: over TLS where --tls-required is set, into no
// database of the proxy's own.
func (l *clientLogin) upstreamParams() (dialParams, error) {
	if err := l.requireTLS(); err != nil {
		return dialParams{}, err
	}
	if e := l.srv.internalDB(l.acct, l.resp.DB); e != nil {
		return dialParams{}, l.fail(e)
	}
	db := l.resp.DB
	if l.namedSandbox() {
		db = "" // it may be one of the sandbox's own: made current by the session (session.Options.SelectDB)
	}
	p := l.srv.dialParams(l.acct, db, l.resp.Collation, l.resp.Caps, l.attrs())
	p.extCaps = l.resp.ExtCaps
	return p, nil
}

// namedSandbox reports a sandboxing login into a named sandbox (a tag or
// the sqlfork_sandbox attribute) that chose a database.
func (l *clientLogin) namedSandbox() bool {
	return l.srv.namedSandboxDB(l.acct, l.tag, l.resp.Attrs, l.resp.DB)
}

// namedSandboxDB reports a sandboxing login or change of user of account
// a into a named sandbox (tag, or the sqlfork_sandbox attribute) that
// chose database db, which may be one of the sandbox's own.
func (s *Server) namedSandboxDB(a *account, tag string, attrs map[string]string, db string) bool {
	return db != "" && s.modeOf(a) != session.Passthrough && (tag != "" || attrs["sqlfork_sandbox"] != "")
}

// upstreamFailed reports a failed upstream login to the client: a refusal
// by the server as the server sent it, anything else as error 1429.
func (l *clientLogin) upstreamFailed(err error) error {
	var me *mysql.MyError
	if errors.As(err, &me) {
		l.log.Info("upstream refused login", zap.String("user", l.acct.upstreamUser), zap.Error(err))
		return l.fail(me)
	}
	l.srv.m.UpstreamConnectFails.Inc()
	l.log.Warn("upstream connect failed", zap.Error(err))
	_ = l.fail(upstreamDown(l.srv.cfg.Upstream, err))
	return err
}

// attrs are the connection attributes sent upstream.
func (l *clientLogin) attrs() map[string]string { return l.srv.upstreamAttrs(l.resp.Attrs, l.sock) }

// authLocal checks the client's password for a configured account against
// the scramble it was greeted with, after switching the client to the
// account's auth plugin if it answered with another.
func (l *clientLogin) authLocal() error {
	a, auth, plugin := l.acct, l.resp.Auth, l.resp.Plugin
	if l.resp.Caps&wire.CapPluginAuth == 0 {
		plugin = AuthNativePassword
	}
	salt := l.scramble()
	if plugin != a.plugin {
		if l.resp.Caps&wire.CapPluginAuth == 0 {
			return l.fail(wire.Error(wire.ErNotSupportedAuthMode,
				"Client does not support authentication protocol requested by server; consider upgrading MariaDB client"))
		}
		if err := l.send(authSwitchRequest(a.plugin, salt)); err != nil {
			return err
		}
		reply, err := l.recv()
		if err != nil {
			return err
		}
		auth = reply
	}
	ok := checkPassword(a.plugin, auth, salt, a.password)
	if a.plugin == AuthCachingSha2Password && a.password != "" {
		var err error
		if ok, err = l.cachingSha2(ok, salt); err != nil {
			return err
		}
		if ok {
			l.srv.sha2Cache.Store(a, struct{}{})
		}
	}
	if !ok {
		l.srv.m.AuthFailures.Inc()
		l.log.Debug("client login refused", zap.String("user", l.resp.User))
		return l.fail(accessDenied(l.resp.User, l.sock.RemoteAddr().String(), len(auth) > 0))
	}
	return nil
}

// cachingSha2 completes caching_sha2_password for a configured account
// whose scramble check gave match, as MySQL does: fast authentication when
// the scramble matched and the account logged in since the proxy started
// (its cache), else full authentication (some clients also hash the switch
// request's trailing NUL, whose scramble never matches): the password in
// clear over TLS, RSA-encrypted with the proxy's key otherwise.
func (l *clientLogin) cachingSha2(match bool, salt []byte) (bool, error) {
	if _, cached := l.srv.sha2Cache.Load(l.acct); match && cached {
		return true, l.send([]byte{0x01, 0x03})
	}
	if err := l.send([]byte{0x01, 0x04}); err != nil {
		return false, err
	}
	reply, err := l.recv()
	if err != nil {
		return false, err
	}
	password, err := clientFullAuth(l, reply, salt, l.srv.rsaKey)
	if err != nil {
		var me *mysql.MyError
		if errors.As(err, &me) {
			return false, nil // undecryptable: a wrong password
		}
		return false, err
	}
	return subtle.ConstantTimeCompare([]byte(password), []byte(l.acct.password)) == 1, nil
}

// scramble is the 20-byte scramble the client was greeted with
// (appendGreeting pads a shorter one with zeros).
func (l *clientLogin) scramble() []byte {
	s := make([]byte, 20)
	copy(s, l.be.greeting.Salt)
	return s
}

// authSwitchRequest asks the client to answer salt with plugin.
func authSwitchRequest(plugin string, salt []byte) []byte {
	p := append([]byte{wire.EOFHeader}, plugin...)
	p = append(p, 0)
	p = append(p, salt...)
	return append(p, 0)
}

// accessDenied is error 1045 as the server words it.
func accessDenied(user, host string, usingPassword bool) *mysql.MyError {
	using := "NO"
	if usingPassword {
		using = "YES"
	}
	return wire.Error(wire.ErAccessDenied, "Access denied for user '%s'@'%s' (using password: %s)", user, host, using)
}

// checkPassword verifies a client's auth data for plugin (one a configured
// account may use) against salt and the account's password.
func checkPassword(plugin string, reply, salt []byte, password string) bool {
	if plugin == AuthCachingSha2Password {
		if password == "" {
			return len(reply) == 0 || len(reply) == 1 && reply[0] == 0
		}
		return subtle.ConstantTimeCompare(reply, mysql.CalcCachingSha2Password(salt, []byte(password))) == 1
	}
	return checkNative(reply, salt, password)
}

// loginRelayed logs in an account the proxy does not know by relaying the
// client's authentication to the upstream; it returns the upstream's OK.
func (l *clientLogin) loginRelayed() ([]byte, error) {
	p, err := l.upstreamParams()
	if err != nil {
		return nil, err
	}
	plugin := l.resp.Plugin
	if plugin == "" {
		plugin = AuthNativePassword // a 4.1 client without plugin auth
	}
	ok, err := l.be.relayLogin(l.ctx, p, plugin, l.resp.Auth, l, l.srv.rsaKey)
	if err != nil {
		var me *mysql.MyError
		if errors.As(err, &me) {
			if me.Code == wire.ErAccessDenied {
				l.srv.m.AuthFailures.Inc()
			}
			l.log.Debug("upstream refused relayed login", zap.String("user", l.acct.name), zap.Error(err))
			return nil, l.fail(me)
		}
		return nil, l.upstreamFailed(err)
	}
	return ok, nil
}

// finish completes a login the upstream accepted: the session's sandbox
// binding, then the client's OK.
func (l *clientLogin) finish(ok []byte) error {
	l.srv.remember(l.be.greeting)
	if e := l.srv.checkSandboxGrants(l.ctx, l.acct, l.be); e != nil {
		l.log.Info("relayed account lacks the sandbox grants", zap.String("user", l.acct.name), zap.Error(e))
		return l.fail(e)
	}
	sbx, err := l.srv.openSandbox(l.ctx, l.acct, l.tag, l.resp.Attrs, l.connID, l.be, l.resp.DB, l.namedSandbox(), l.log)
	if err != nil {
		l.log.Info("sandbox refused login", zap.Error(err))
		return l.fail(clientError(err))
	}
	l.sbx = sbx
	return l.send(ok)
}
