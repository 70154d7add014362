package proxy

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/sqlfork/sqlfork-proxy/grants"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/session"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Relayed authentication: a client logging in (or changing user) as an
// account the proxy does not know authenticates with the upstream itself.
// The proxy greeted the client with the upstream connection's scramble, so
// the client's auth data is valid upstream as it is; the proxy sends it in
// its own handshake response (or COM_CHANGE_USER) and then carries the
// exchange packet by packet until the upstream's OK or ERR. Two cases are
// not carried byte for byte:
//
//   - caching_sha2_password's full authentication sends the password in
//     clear over TLS and RSA-encrypted otherwise; when only one of the
//     client's and the upstream's links is TLS the proxy takes the password
//     from one side (decrypting it with its own RSA key when the client
//     asks for a key) and gives it to the other as that side expects;
//   - a plugin that sends the password in clear (mysql_clear_password,
//     dialog) is refused unless the upstream link is TLS.

// authPeer is the client's side of a relayed authentication exchange.
type authPeer interface {
	// send sends the client the next packet of the exchange.
	send(p []byte) error
	// recv reads the client's next packet of the exchange.
	recv() ([]byte, error)
	// secure reports whether the client's link to the proxy is TLS.
	secure() bool
}

// maxAuthRounds bounds the packets one relayed exchange may take.
const maxAuthRounds = 16

// relayLogin logs in on an opened backend (openBackend) as p.user with the
// client's first auth data auth for plugin, relaying the rest of the
// exchange with peer (key is the proxy's RSA key, for full
// authentication). It returns the upstream's OK packet, not yet sent to
// the client; the upstream's refusal comes back as *mysql.MyError, unsent.
func (b *backend) relayLogin(ctx context.Context, p dialParams, plugin string, auth []byte, peer authPeer, key *rsa.PrivateKey) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	var ok []byte
	err := b.withDeadline(ctx, func() error {
		seq, err := b.negotiate(p)
		if err != nil {
			return err
		}
		if err := b.sendResponse(p, seq, plugin, auth); err != nil {
			return err
		}
		ok, err = b.relayAuth(peer, plugin, b.greeting.Salt, key)
		return err
	})
	return ok, err
}

// relayChangeUser runs a client's COM_CHANGE_USER upstream as the client
// sent it, relaying the exchange as relayLogin does.
func (b *backend) relayChangeUser(req *changeUserReq, user string, collation uint8, attrs map[string]string, peer authPeer,
	key *rsa.PrivateKey, timeout time.Duration) ([]byte, error) {
	_ = b.conn.SetDeadline(time.Now().Add(timeout))
	defer func() { _ = b.conn.SetDeadline(time.Time{}) }()
	plugin := req.plugin
	if plugin == "" {
		plugin = b.greeting.AuthPlugin
	}
	if err := b.sendChangeUser(user, req.auth, plugin, req.db, collation, attrs); err != nil {
		return nil, err
	}
	return b.relayAuth(peer, plugin, b.greeting.Salt, key)
}

// relayAuth carries an authentication exchange between the upstream and
// the client until the upstream's OK (returned, unsent) or ERR (returned
// as *mysql.MyError, unsent).
func (b *backend) relayAuth(peer authPeer, plugin string, salt []byte, key *rsa.PrivateKey) ([]byte, error) {
	for range maxAuthRounds {
		p, seq, err := wire.ReadPacket(b.r, nil, handshakeLimit)
		if err != nil {
			return nil, fmt.Errorf("read upstream auth packet: %w", err)
		}
		if len(p) == 0 {
			return nil, fmt.Errorf("%w: empty auth packet", wire.ErrMalformed)
		}
		switch p[0] {
		case wire.OKHeader:
			if st, ok := wire.OKStatus(p); ok {
				b.status = st
			}
			return p, nil
		case wire.ErrHeader:
			return nil, wire.ParseErr(p)
		case wire.EOFHeader:
			if plugin, salt, err = b.authSwitch(p); err != nil {
				return nil, err
			}
		}
		if err := peer.send(p); err != nil {
			return nil, err
		}
		if plugin == AuthCachingSha2Password && len(p) == 2 && p[0] == 0x01 && p[1] == 3 {
			continue // fast authentication succeeded: the OK or ERR follows
		}
		reply, err := peer.recv()
		if err != nil {
			return nil, err
		}
		full := plugin == AuthCachingSha2Password && len(p) == 2 && p[0] == 0x01 && p[1] == 4
		if full && peer.secure() != b.usingTLS {
			err = b.bridgeFullAuth(peer, reply, salt, seq+1, key)
		} else {
			err = b.writeAuth(seq+1, reply)
		}
		if err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("upstream authentication took more than %d exchanges", maxAuthRounds)
}

// authSwitch reads an upstream's auth switch request, refusing plugins
// that send the password in clear over an upstream link without TLS.
func (b *backend) authSwitch(p []byte) (plugin string, salt []byte, err error) {
	if len(p) == 1 {
		// The old switch request, to mysql_old_password over the
		// greeting's scramble (MariaDB sends it for a pre-4.1 hash).
		return authOldPassword, append([]byte(nil), b.greeting.Salt...), nil
	}
	rest := p[1:]
	i := indexNul(rest)
	if i < 0 {
		return "", nil, fmt.Errorf("%w: auth switch request", wire.ErrMalformed)
	}
	plugin, salt = string(rest[:i]), rest[i+1:]
	if n := len(salt); n > 0 && salt[n-1] == 0 {
		salt = salt[:n-1]
	}
	if (plugin == authClearPassword || plugin == authDialog) && !b.usingTLS {
		return "", nil, wire.Error(wire.ErNotSupportedAuthMode,
			"sqlfork-proxy: the upstream asks for the password in clear (%s) over a connection without TLS; enable upstream-tls", plugin)
	}
	return plugin, append([]byte(nil), salt...), nil
}

// writeAuth sends the upstream one packet of the exchange.
func (b *backend) writeAuth(seq uint8, p []byte) error { return b.sendAs("upstream auth data", seq, p) }

// bridgeFullAuth completes caching_sha2_password's full authentication when
// exactly one of the client's and the upstream's links is TLS: the client
// answered the request for it with reply; the proxy takes the password
// from the client and gives it to the upstream (as seq), each as its link
// requires.
func (b *backend) bridgeFullAuth(peer authPeer, reply, salt []byte, seq uint8, key *rsa.PrivateKey) error {
	password, err := clientFullAuth(peer, reply, salt, key)
	if err != nil {
		return err
	}
	if b.usingTLS {
		return b.writeAuth(seq, append([]byte(password), 0))
	}
	if err := b.writeAuth(seq, []byte{2}); err != nil { // request the public key
		return err
	}
	p, _, err := wire.ReadPacket(b.r, nil, handshakeLimit)
	if err != nil {
		return fmt.Errorf("read upstream public key: %w", err)
	}
	if len(p) > 0 && p[0] == wire.ErrHeader {
		return wire.ParseErr(p)
	}
	if len(p) < 1 || p[0] != 0x01 {
		return fmt.Errorf("%w: upstream public key", wire.ErrMalformed)
	}
	enc, err := b.moreAuthData(authSha256Password, p[1:], salt, password)
	if err != nil {
		return err
	}
	return b.writeAuth(seq+2, enc)
}

// clientFullAuth takes the password of caching_sha2_password's full
// authentication from the client, whose first answer was reply: in clear
// over TLS; otherwise RSA-encrypted with the proxy's key, which the client
// asks for (2) first.
func clientFullAuth(peer authPeer, reply, salt []byte, key *rsa.PrivateKey) (string, error) {
	if !peer.secure() {
		if len(reply) == 1 && reply[0] == 2 {
			der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
			if err != nil {
				return "", fmt.Errorf("proxy public key: %w", err)
			}
			if err := peer.send(append([]byte{0x01}, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})...)); err != nil {
				return "", err
			}
			if reply, err = peer.recv(); err != nil {
				return "", err
			}
		}
		plain, err := rsa.DecryptOAEP(sha1.New(), rand.Reader, key, reply, nil)
		if err != nil {
			return "", wire.Error(wire.ErAccessDenied, "sqlfork-proxy: the client's encrypted password could not be read (%v)", err)
		}
		reply = mysql.Xor(plain, salt)
	}
	return strings.TrimSuffix(string(reply), "\x00"), nil
}

// relayedAccount is the account of a login name no configured account
// has: the upstream account of that name, with the sandbox tag after the
// user separator stripped (appuser+sandbox logs in upstream as appuser),
// authenticated by the upstream, in the proxy's mode. Its name is the
// proxy user for isolation.
func (s *Server) relayedAccount(login string) (*account, string) {
	name, tag := login, ""
	if sep := s.cfg.UserSeparator; sep != "" {
		if u, t, ok := strings.Cut(login, sep); ok && t != "" {
			name, tag = u, t
		}
	}
	return &account{name: name, upstreamUser: name, relayed: true}, tag
}

// sameAccount refuses a relayed login the server authenticated as another
// account than its name says: an anonymous account (an empty user name,
// which takes any name) or a proxied one. Sessions and sandboxes belong to the login's
// name, so the session would take over that user's sandboxes.
func sameAccount(ctx context.Context, a *account, be *backend) *mysql.MyError {
	r, err := be.query(ctx, "SELECT CURRENT_USER()")
	if err != nil || len(r.rows) != 1 || len(r.rows[0]) != 1 || r.rows[0][0] == nil {
		return wire.Error(wire.ErAccessDenied, "sqlfork-proxy: could not read which account user '%s' logged in as (%v)", a.name, err)
	}
	cur := *r.rows[0][0]
	if i := strings.LastIndexByte(cur, '@'); i >= 0 {
		cur = cur[:i]
	}
	if cur == a.name {
		return nil
	}
	return wire.Error(wire.ErAccessDenied, "sqlfork-proxy: user '%s' logged in as the account '%s', whose sessions and sandboxes "+
		"would be taken for those of '%s': log in with an account of that name (the server's anonymous account takes any name)",
		a.name, quote.Display(cur), a.name)
}

// checkSandboxGrants refuses a relayed account in a sandboxing mode whose
// grants (SHOW GRANTS on its own connection be: the account and its
// enabled roles) lack what its sessions need on the proxy's databases:
// they read and write the sandboxes' databases with the account's own
// privileges. Configured accounts map to accounts the operator set up
// (docs/OPERATIONS.md) and are not checked.
func (s *Server) checkSandboxGrants(ctx context.Context, a *account, be *backend) *mysql.MyError {
	if !a.relayed || s.modeOf(a) == session.Passthrough {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ConnectTimeout)
	defer cancel()
	if e := sameAccount(ctx, a, be); e != nil {
		return e
	}
	prefix := s.cfg.Sandbox.Prefix
	pattern := grants.SandboxPattern(prefix)
	r, err := be.query(ctx, "SHOW GRANTS")
	if err != nil {
		return wire.Error(wire.ErDBAccessDenied,
			"sqlfork-proxy: could not read the grants of user '%s' to check its privileges on the proxy's databases `%s`.* (%v)", a.name, pattern, err)
	}
	var lines []string
	for _, row := range r.rows {
		if len(row) > 0 && row[0] != nil {
			lines = append(lines, *row[0])
		}
	}
	missing := grants.SandboxGrantsMissing(lines, prefix)
	if len(missing) == 0 {
		return nil
	}
	return wire.Error(wire.ErDBAccessDenied,
		"sqlfork-proxy: user '%s' lacks %s ON `%s`.*, which its sandboxed sessions need (they read and write the proxy's sandbox databases "+
			"with the account's own privileges): GRANT ALL PRIVILEGES ON `%s`.* TO the account, or log in as one of the proxy's users",
		a.name, strings.Join(missing, ", "), pattern, pattern)
}
