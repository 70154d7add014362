package proxy

import (
	"context"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/server"
	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/session"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// account is a proxy login and the upstream credentials it maps to.
type account struct {
	name             string
	password         string
	plugin           string
	upstreamUser     string
	upstreamPassword string
	mode             string
}

// buildAccounts returns the proxy's logins: the upstream account itself,
// then the configured users.
func buildAccounts(cfg *Config) map[string]*account {
	accts := map[string]*account{
		cfg.UpstreamUser: {
			name: cfg.UpstreamUser, password: cfg.UpstreamPassword, plugin: cfg.AuthPlugin,
			upstreamUser: cfg.UpstreamUser, upstreamPassword: cfg.UpstreamPassword,
		},
	}
	for _, u := range cfg.Users {
		a := &account{name: u.Name, password: u.Password, plugin: u.AuthPlugin,
			upstreamUser: u.UpstreamUser, upstreamPassword: u.UpstreamPassword, mode: u.Mode}
		if a.plugin == "" {
			a.plugin = AuthNativePassword
		}
		if a.upstreamUser == "" {
			a.upstreamUser, a.upstreamPassword = cfg.UpstreamUser, cfg.UpstreamPassword
		}
		accts[u.Name] = a
	}
	return accts
}

// login implements go-mysql's AuthenticationHandler and Handler for one
// client handshake. After a successful check of the client's password it
// opens the upstream connection, so upstream refusals (unknown database,
// too many connections) reach the client as its login result.
type login struct {
	ctx  context.Context
	srv  *Server
	log  *zap.Logger
	acct *account
	db   string
	// pre is the upstream connection opened before the client was
	// greeted (see openBackend), be the same once logged in.
	pre *backend
	be  *backend
	// tag is the sandbox named in the login (appuser+sandbox).
	tag string
	sbx *session.Session
}

var _ server.AuthenticationHandler = (*login)(nil)
var _ server.Handler = (*login)(nil)

// GetCredential returns the account's password. Unknown users get an
// unguessable one, so they fail with 1045 like a wrong password, as on MySQL.
func (l *login) GetCredential(username string) (server.Credential, bool, error) {
	if a, tag, ok := l.srv.lookupAccount(username); ok {
		l.acct, l.tag = a, tag
		return server.Credential{Passwords: []string{a.password}, AuthPluginName: a.plugin}, true, nil
	}
	// Same plugin as the default account, so the exchange does not reveal
	// which names exist.
	return server.Credential{Passwords: []string{hex.EncodeToString(mysql.RandomBuf(16))},
		AuthPluginName: l.srv.cfg.AuthPlugin}, true, nil
}

// OnAuthSuccess enforces TLS when required and connects upstream.
func (l *login) OnAuthSuccess(c *server.Conn) error {
	if _, isTLS := c.Conn.Conn.(*tls.Conn); l.srv.cfg.TLSRequired && !isTLS {
		return newError(wire.ErSecureTransportRequired, "HY000",
			"Connections using insecure transport are prohibited while --tls-required is set on sqlfork-proxy")
	}
	if err := l.srv.internalDB(l.acct, l.db); err != nil {
		return err
	}
	be := l.pre
	l.pre = nil
	err := be.login(l.ctx, l.srv.dialParams(l.acct, l.db, c.Charset(), c.Capability(), l.srv.upstreamAttrs(c.Attributes(), c)))
	if err != nil {
		be.close()
		var me *mysql.MyError
		if errors.As(err, &me) {
			l.log.Info("upstream refused login", zap.String("user", l.acct.upstreamUser), zap.Error(err))
			return me
		}
		l.srv.m.UpstreamConnectFails.Inc()
		l.log.Warn("upstream connect failed", zap.Error(err))
		return upstreamDown(l.srv.cfg.Upstream, err)
	}
	l.srv.remember(be.greeting)
	c.SetStatus(be.status)
	l.be = be
	sbx, err := l.srv.openSandbox(l.ctx, l.acct, l.tag, c.Attributes(), c.ConnectionID(), be, l.db, l.log)
	if err != nil {
		be.close()
		l.be = nil
		l.log.Info("sandbox refused login", zap.Error(err))
		return clientError(err)
	}
	l.sbx = sbx
	return nil
}

// internalDB refuses a sandboxing account's login or change of user into
// one of the proxy's own databases, as COM_INIT_DB and USE are refused.
func (s *Server) internalDB(a *account, db string) *mysql.MyError {
	prefix := s.cfg.Sandbox.Prefix
	if prefix == "" || s.modeOf(a) == session.Passthrough || len(db) < len(prefix) || !strings.EqualFold(db[:len(prefix)], prefix) {
		return nil
	}
	return newError(wire.ErDBAccessDenied, "42000", "sqlfork-proxy: access to the proxy's internal database %s is denied", rewrite.QuoteIdent(db))
}

// lookupAccount finds the account of a login name, which may carry a
// sandbox tag after the user separator (appuser+mysandbox).
func (s *Server) lookupAccount(name string) (*account, string, bool) {
	if a, ok := s.accounts[name]; ok {
		return a, "", true
	}
	if sep := s.cfg.UserSeparator; sep != "" {
		if user, tag, ok := strings.Cut(name, sep); ok && tag != "" {
			if a, ok := s.accounts[user]; ok {
				return a, tag, true
			}
		}
	}
	return nil, "", false
}

// modeOf is the sandbox mode of an account.
func (s *Server) modeOf(a *account) session.Mode {
	m := a.mode
	if m == "" {
		m = s.cfg.Mode
	}
	mode, _ := session.ParseMode(m)
	return mode
}

// openSandbox binds a new client session to its sandbox per the account's
// mode, the login tag or the sqlfork_sandbox connection attribute.
// be is the connection's upstream connection and db the database its
// login chose.
func (s *Server) openSandbox(ctx context.Context, a *account, tag string, attrs map[string]string, connID uint32, be *backend,
	db string, log *zap.Logger) (*session.Session, error) {
	mode := s.modeOf(a)
	if tag == "" {
		tag = attrs["sqlfork_sandbox"]
	}
	if mode == session.Passthrough {
		if tag != "" {
			return nil, newError(wire.ErAccessDenied, "28000", "sqlfork-proxy: user %s is in passthrough mode and cannot use sandbox %q", a.name, tag)
		}
		return nil, nil
	}
	m, err := s.sandboxes(ctx)
	if err != nil {
		s.log.Warn("sandbox manager unavailable", zap.Error(err))
		return nil, newError(wire.ErConnectToForeignSource, "HY000", "sqlfork-proxy: sandboxes are unavailable (%v)", err)
	}
	sbx, err := m.Open(ctx, session.Options{User: a.name, ConnID: uint64(connID), Mode: mode, Sandbox: tag,
		AllowProductionWrites: s.cfg.ProductionWrites == "allow", Log: log, Upstream: clientUpstream{be}, DB: db})
	s.countGuardrail(err)
	return sbx, err
}

// OnAuthFailure counts a refused login.
func (l *login) OnAuthFailure(c *server.Conn, err error) {
	l.srv.m.AuthFailures.Inc()
	l.log.Debug("client login refused", zap.String("user", c.GetUser()), zap.Error(err))
}

// UseDB records the client's initial database.
func (l *login) UseDB(db string) error { l.db = db; return nil }

// HandleQuery is never called: the proxy runs its own command loop.
func (l *login) HandleQuery(string) (*mysql.Result, error) { return nil, errNotInHandshake }

// HandleFieldList is never called.
func (l *login) HandleFieldList(string, string) ([]*mysql.Field, error) {
	return nil, errNotInHandshake
}

// HandleStmtPrepare is never called.
func (l *login) HandleStmtPrepare(string) (int, int, any, error) { return 0, 0, nil, errNotInHandshake }

// HandleStmtExecute is never called.
func (l *login) HandleStmtExecute(any, string, []any) (*mysql.Result, error) {
	return nil, errNotInHandshake
}

// HandleStmtClose is never called.
func (l *login) HandleStmtClose(any) error { return errNotInHandshake }

// HandleOtherCommand is never called.
func (l *login) HandleOtherCommand(byte, []byte) error { return errNotInHandshake }

var errNotInHandshake = errors.New("sqlfork-proxy: command handled outside go-mysql")

// upstreamDown is the error a client gets when the upstream can't be reached.
func upstreamDown(addr string, err error) *mysql.MyError {
	var oe *net.OpError
	var me *mysql.MyError
	reason := err.Error()
	switch {
	case errors.As(err, &me):
		// The proxy's own login was refused; its details (account, host)
		// are for the proxy's log, not for a client that has not logged in.
		reason = fmt.Sprintf("upstream refused the proxy's login with error %d; see the proxy log", me.Code)
	case errors.As(err, &oe) && oe.Err != nil:
		reason = oe.Err.Error()
	}
	return newError(wire.ErConnectToForeignSource, "HY000", "Can't connect to upstream server on '%s' (sqlfork-proxy: %s)", addr, reason)
}

// attrSource is anything with a remote address (a net.Conn or go-mysql conn).
type attrSource interface{ RemoteAddr() net.Addr }

// upstreamAttrs are the connection attributes sent upstream: the client's
// own, plus where it connects from, so upstream process lists can tell
// proxied sessions apart.
func (s *Server) upstreamAttrs(client map[string]string, c attrSource) map[string]string {
	attrs := make(map[string]string, len(client)+2)
	for k, v := range client {
		attrs[k] = v
	}
	attrs["_proxy"] = "sqlfork-proxy"
	attrs["_proxy_client"] = fmt.Sprint(c.RemoteAddr())
	return attrs
}
