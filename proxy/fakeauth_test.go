package proxy

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/sqlfork/sqlfork-proxy/wire"
)

// The fake upstream authenticates as MariaDB (and, for
// caching_sha2_password, MySQL) does: it greets every connection with a
// scramble of its own and accepts a login or COM_CHANGE_USER only for an
// account it knows, with auth data that matches the account's password
// for the scramble, switching the client to the account's plugin first
// when it answered with another. Refusals are error 1045 worded as the
// server words it.

// fakeAccount is an account of the fake upstream.
type fakeAccount struct {
	password string
	plugin   string // mysql_native_password when ""
}

// addAccount adds (or replaces) an account of the fake upstream.
func (u *fakeUpstream) addAccount(user, password, plugin string) {
	if plugin == "" {
		plugin = AuthNativePassword
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.accounts == nil {
		u.accounts = map[string]fakeAccount{}
	}
	u.accounts[user] = fakeAccount{password: password, plugin: plugin}
	if plugin == AuthCachingSha2Password && u.rsaKey == nil {
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			u.t.Fatal(err)
		}
		u.rsaKey = key
	}
}

// account looks an account up.
func (u *fakeUpstream) account(user string) (fakeAccount, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	a, ok := u.accounts[user]
	return a, ok
}

// loginsSeen returns the accounts that logged in (or changed user), in
// order, as "user" or "user/db".
func (u *fakeUpstream) loginsSeen() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.logins...)
}

// scrambleBytes is a scramble of n bytes without NUL, as servers make.
func scrambleBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = 33 + b[i]%94
	}
	return b
}

// login reads the handshake response to the greeting and authenticates it;
// false ends the connection (refused, or the peer went away).
func (c *fakeUpConn) login() bool {
	p, seq, err := wire.ReadPacket(c.r, nil, 1<<20)
	if err != nil {
		return false
	}
	resp, err := wire.ParseHandshakeResponse(p)
	if err != nil || resp.SSLRequest {
		return false
	}
	c.seq, c.caps = seq+1, resp.Caps
	return c.logIn(resp.User, resp.DB, resp.Plugin, resp.Auth) && c.w.Flush() == nil
}

// logIn authenticates user (with plugin, mysql_native_password if none)
// and, if that succeeds, makes it the connection's account and db its
// database and answers OK; false ends the connection.
func (c *fakeUpConn) logIn(user, db, plugin string, auth []byte) bool {
	if plugin == "" {
		plugin = AuthNativePassword
	}
	if !c.authenticate(user, plugin, auth) {
		return false
	}
	c.user, c.db = user, db
	c.up.noteLogin(user, db)
	c.ok(0, 0)
	return true
}

// changeUser answers COM_CHANGE_USER (arg is what follows the command
// byte); false ends the connection.
func (c *fakeUpConn) changeUser(arg []byte) bool {
	req, err := parseChangeUser(append([]byte{wire.ComChangeUser}, arg...), c.caps)
	if err != nil {
		c.err(wire.ErHandshake, "08S01", "Bad handshake")
		return false
	}
	return c.logIn(req.user, req.db, req.plugin, req.auth)
}

func (u *fakeUpstream) noteLogin(user, db string) {
	if db != "" {
		user += "/" + db
	}
	u.mu.Lock()
	u.logins = append(u.logins, user)
	u.mu.Unlock()
}

// authenticate checks auth, the client's answer for plugin to the
// connection's scramble, for user; a refusal has been sent when it
// returns false.
func (c *fakeUpConn) authenticate(user, plugin string, auth []byte) bool {
	a, known := c.up.account(user)
	if !known {
		return c.deny(user, len(auth) > 0)
	}
	salt := c.salt
	if plugin != a.plugin {
		req := authSwitchRequest(a.plugin, salt)
		if a.plugin == authOldPassword {
			req = []byte{wire.EOFHeader} // MariaDB's old switch request
		}
		if a.plugin == authEd25519 {
			// MariaDB's ed25519 sends a fresh 32-byte nonce, unterminated.
			salt = scrambleBytes(32)
			req = append(append([]byte{wire.EOFHeader}, a.plugin+"\x00"...), salt...)
		}
		c.write(req)
		var ok bool
		if auth, ok = c.read(); !ok {
			return false
		}
	}
	var ok bool
	switch a.plugin {
	case AuthNativePassword:
		ok = checkNative(auth, salt, a.password)
	case authEd25519:
		want, err := mysql.CalcEd25519Password(salt, a.password)
		ok = err == nil && bytes.Equal(auth, want) || a.password == "" && len(auth) == 0
	case AuthCachingSha2Password:
		return c.cachingSha2(user, a, auth, salt)
	case authOldPassword:
		ok = bytes.Equal(auth, oldScrambleStub(salt, a.password))
	}
	if !ok {
		return c.deny(user, len(auth) > 0)
	}
	return true
}

// cachingSha2 is MySQL's caching_sha2_password: fast authentication for an
// account that logged in before, else full authentication, which over a
// connection without TLS (the fake has none) takes the password
// RSA-encrypted with the server's key.
func (c *fakeUpConn) cachingSha2(user string, a fakeAccount, auth, salt []byte) bool {
	if a.password == "" {
		return len(auth) == 0 || c.deny(user, true)
	}
	c.up.mu.Lock()
	cached := c.up.cachedSha2[user]
	c.up.mu.Unlock()
	if cached && bytes.Equal(auth, mysql.CalcCachingSha2Password(salt, []byte(a.password))) {
		c.write([]byte{0x01, 0x03})
		return true
	}
	c.write([]byte{0x01, 0x04})
	reply, ok := c.read()
	if !ok {
		return false
	}
	if len(reply) == 1 && reply[0] == 2 {
		der, _ := x509.MarshalPKIXPublicKey(&c.up.rsaKey.PublicKey)
		c.write(append([]byte{0x01}, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})...))
		if reply, ok = c.read(); !ok {
			return false
		}
	}
	plain, err := rsa.DecryptOAEP(sha1.New(), rand.Reader, c.up.rsaKey, reply, nil)
	if err != nil || strings.TrimSuffix(string(mysql.Xor(plain, salt)), "\x00") != a.password {
		return c.deny(user, true)
	}
	c.up.mu.Lock()
	if c.up.cachedSha2 == nil {
		c.up.cachedSha2 = map[string]bool{}
	}
	c.up.cachedSha2[user] = true
	c.up.mu.Unlock()
	return true
}

// read flushes what was written and reads the peer's next packet of the
// exchange.
func (c *fakeUpConn) read() ([]byte, bool) {
	if c.w.Flush() != nil {
		return nil, false
	}
	p, seq, err := wire.ReadPacket(c.r, nil, 1<<20)
	if err != nil {
		return nil, false
	}
	c.seq = seq + 1
	return p, true
}

// deny refuses user with 1045 as MariaDB words it; it returns false.
func (c *fakeUpConn) deny(user string, usingPassword bool) bool {
	c.err(wire.ErAccessDenied, "28000", accessDenied(user, hostOf(c.conn.RemoteAddr()), usingPassword).Message)
	_ = c.w.Flush()
	return false
}

// hostOf is an address's host, as servers name clients in errors.
func hostOf(a net.Addr) string {
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// upstreamDenied is the 1045 message the fake upstream sends a login as
// user through the proxy (which connects from 127.0.0.1).
func upstreamDenied(user string, usingPassword bool) string {
	using := "NO"
	if usingPassword {
		using = "YES"
	}
	return fmt.Sprintf("Access denied for user '%s'@'127.0.0.1' (using password: %s)", user, using)
}

// oldScrambleStub stands for mysql_old_password's answer in the fake
// (the relay carries it without reading it): 8 bytes of salt and
// password, NUL-terminated.
func oldScrambleStub(salt []byte, password string) []byte {
	h := sha1.Sum(append(append([]byte(nil), salt[:8]...), password...))
	return append(h[:8], 0)
}
