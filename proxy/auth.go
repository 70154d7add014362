package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/session"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// account is a proxy login and the upstream credentials it maps to: a
// configured one (the upstream account, users:), which the proxy
// authenticates, or a relayed one (relayedAccount), an upstream account of
// the login's name that the upstream authenticates.
type account struct {
	name             string
	password         string
	plugin           string
	upstreamUser     string
	upstreamPassword string
	mode             string
	// relayed marks an account the proxy does not know: its login and
	// COM_CHANGE_USER are relayed to the upstream (relayauth.go).
	relayed bool
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

// internalDB refuses a sandboxing account's login or change of user into
// one of the proxy's own databases, as COM_INIT_DB and USE are refused.
func (s *Server) internalDB(a *account, db string) *mysql.MyError {
	prefix := s.cfg.Sandbox.Prefix
	if prefix == "" || s.modeOf(a) == session.Passthrough || len(db) < len(prefix) || !strings.EqualFold(db[:len(prefix)], prefix) {
		return nil
	}
	return wire.Error(wire.ErDBAccessDenied, "sqlfork-proxy: access to the proxy's internal database %s is denied", quote.Ident(db))
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
	db string, selectDB bool, log *zap.Logger) (*session.Session, error) {
	mode := s.modeOf(a)
	if tag == "" {
		tag = attrs["sqlfork_sandbox"]
	}
	if mode == session.Passthrough {
		if tag != "" {
			return nil, wire.Error(wire.ErAccessDenied, "sqlfork-proxy: user %s is in passthrough mode and cannot use sandbox %q", a.name, tag)
		}
		return nil, nil
	}
	m, err := s.sandboxes(ctx)
	if err != nil {
		s.log.Warn("sandbox manager unavailable", zap.Error(err))
		return nil, wire.Error(wire.ErConnectToForeignSource, "sqlfork-proxy: sandboxes are unavailable (%v)", err)
	}
	sbx, err := m.Open(ctx, session.Options{User: a.name, ConnID: uint64(connID), Mode: mode, Sandbox: tag,
		AllowProductionWrites: s.cfg.ProductionWrites == "allow", Log: log, Upstream: clientUpstream{be}, DB: db, SelectDB: selectDB})
	s.countGuardrail(err)
	return sbx, err
}

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
	return wire.Error(wire.ErConnectToForeignSource, "Can't connect to upstream server on '%s' (sqlfork-proxy: %s)", addr, reason)
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
