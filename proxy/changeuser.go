package proxy

import (
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/wire"
)

// changeUser handles COM_CHANGE_USER: to a configured account the proxy
// authenticates the client itself, then changes the upstream session to
// the mapped upstream account; to any other account it relays the change
// and its authentication to the upstream, which decides
// (changeUserRelayed). A failure closes the connection.
func (c *clientConn) changeUser() error {
	p, err := c.readCommand(handshakeLimit)
	if err != nil {
		return err
	}
	req, err := parseChangeUser(p, c.caps)
	if err != nil {
		_ = c.out.writeErr(wire.Error(wire.ErHandshake, "sqlfork-proxy: malformed COM_CHANGE_USER: %v", err))
		return errSessionEnd
	}
	if c.caps&wire.CapPluginAuth == 0 {
		_ = c.out.writeErr(wire.Error(wire.ErNotSupportedAuthMode,
			"Client does not support authentication protocol requested by server; consider upgrading MariaDB client"))
		return errSessionEnd
	}
	if _, _, known := c.srv.lookupAccount(req.user); !known {
		return c.changeUserRelayed(req)
	}
	acct, tag, ok, err := c.checkChangeUser(req)
	if err != nil || !ok {
		return err
	}
	collation, attrs := c.changedSession(req)
	// From here the connection is the new user's (a failure below ends
	// it): the old user may no longer see or kill it.
	c.state.setUser(acct.name)
	_ = c.be.conn.SetDeadline(time.Now().Add(c.srv.cfg.ConnectTimeout))
	// A database of a named sandbox's own is made current once the
	// session is bound (session.Options.SelectDB).
	db, selectDB := req.db, c.srv.namedSandboxDB(acct, tag, req.attrs, req.db)
	if selectDB {
		db = ""
	}
	err = c.be.changeUser(acct.upstreamUser, acct.upstreamPassword, db, collation, attrs)
	_ = c.be.conn.SetDeadline(time.Time{})
	if err != nil {
		return c.changeUserFailed(err)
	}
	return c.rebind(acct, tag, req, collation, wireOK(c.be.status, 0), selectDB)
}

// changedSession is the collation and the upstream connection attributes
// of the session req changes to: the collation req names, or the
// session's where it names none.
func (c *clientConn) changedSession(req *changeUserReq) (collation uint8, attrs map[string]string) {
	collation = c.collation
	if req.hasCollation {
		collation = req.collation
	}
	return collation, c.srv.upstreamAttrs(req.attrs, c.client)
}

// changeUserRelayed changes the session to an account the proxy does not
// know: the client's COM_CHANGE_USER and the authentication exchange after
// it are relayed to the upstream (relayauth.go), whose OK the client gets.
func (c *clientConn) changeUserRelayed(req *changeUserReq) error {
	acct, tag := c.srv.relayedAccount(req.user)
	if e := c.srv.internalDB(acct, req.db); e != nil {
		_ = c.out.writeErr(e)
		return errSessionEnd
	}
	collation, attrs := c.changedSession(req)
	c.state.setUser(acct.name)
	ok, err := c.be.relayChangeUser(req, acct.upstreamUser, collation, attrs, changeUserPeer{c}, c.srv.rsaKey, c.srv.cfg.ConnectTimeout)
	if err != nil {
		var me *mysql.MyError
		if errors.As(err, &me) && me.Code == wire.ErAccessDenied {
			c.srv.m.AuthFailures.Inc()
		}
		return c.changeUserFailed(err)
	}
	return c.rebind(acct, tag, req, collation, ok, false)
}

// changeUserFailed ends the session after a failed change of user: the
// upstream's refusal goes to the client as it was sent.
func (c *clientConn) changeUserFailed(err error) error {
	var me *mysql.MyError
	if errors.As(err, &me) {
		_ = c.out.writeErr(me)
		return errSessionEnd
	}
	var le *linkError
	if errors.As(err, &le) {
		return err
	}
	return &linkError{side: sideUpstream, err: err}
}

// rebind completes a change of user the upstream accepted: the session
// becomes acct's, gets the sandbox binding a fresh login of it would get
// (the old binding is released, and an unkept sandbox whose last
// connection this was is discarded), and the client gets ok.
func (c *clientConn) rebind(acct *account, tag string, req *changeUserReq, collation uint8, ok []byte, selectDB bool) error {
	c.acct, c.collation, c.stmts = acct, collation, nil
	if c.sbx != nil {
		c.state.setInterrupt(nil)
		c.sbx.Close()
		c.sbx = nil
	}
	if e := c.srv.checkSandboxGrants(c.ctx(), acct, c.be); e != nil {
		_ = c.out.writeErr(e)
		return errSessionEnd
	}
	sbx, err := c.srv.openSandbox(c.ctx(), acct, tag, req.attrs, 0, c.be, req.db, selectDB, c.log)
	if err != nil {
		_ = c.out.writeErr(clientError(err))
		return errSessionEnd
	}
	c.sbx = sbx
	if sbx != nil {
		c.state.setInterrupt(sbx.Interrupt)
	}
	c.log.Debug("change user", zap.String("user", acct.name), zap.String("db", req.db), zap.Bool("relayed", acct.relayed))
	if err := c.out.write(ok); err != nil {
		return err
	}
	return c.out.flush()
}

// changeUserPeer is the client's side of a relayed COM_CHANGE_USER.
type changeUserPeer struct{ c *clientConn }

func (p changeUserPeer) send(b []byte) error {
	if err := p.c.out.write(b); err != nil {
		return err
	}
	return p.c.out.flush()
}

func (p changeUserPeer) recv() ([]byte, error) { return p.c.readCommand(handshakeLimit) }

func (p changeUserPeer) secure() bool {
	_, ok := p.c.client.(*tls.Conn)
	return ok
}

// checkChangeUser authenticates a COM_CHANGE_USER against the proxy's
// accounts: it asks for a fresh mysql_native_password scramble (the proxy
// knows the password, so it can check it whatever plugin the account
// uses). ok is false when the client was refused (and told so).
func (c *clientConn) checkChangeUser(req *changeUserReq) (acct *account, tag string, ok bool, err error) {
	salt := mysql.RandomBuf(20)
	sw := append([]byte{wire.EOFHeader}, AuthNativePassword...)
	sw = append(sw, 0)
	sw = append(sw, salt...)
	sw = append(sw, 0)
	if err := c.out.write(sw); err != nil {
		return nil, "", false, err
	}
	if err := c.out.flush(); err != nil {
		return nil, "", false, err
	}
	reply, err := c.readCommand(handshakeLimit)
	if err != nil {
		return nil, "", false, err
	}
	acct, tag, _ = c.srv.lookupAccount(req.user)
	if acct == nil || !checkNative(reply, salt, acct.password) {
		c.srv.m.AuthFailures.Inc()
		using := "YES"
		if len(reply) == 0 {
			using = "NO"
		}
		_ = c.out.writeErr(wire.Error(wire.ErAccessDenied, "Access denied for user '%s'@'%s' (using password: %s)",
			req.user, hostAddr{c.client.RemoteAddr()}.String(), using))
		return nil, "", false, errSessionEnd
	}
	if e := c.srv.internalDB(acct, req.db); e != nil {
		_ = c.out.writeErr(e)
		return nil, "", false, errSessionEnd
	}
	return acct, tag, true, nil
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
