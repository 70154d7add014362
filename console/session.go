package console

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"time"
)

// A session is a signed cookie, kept nowhere on the proxy: a random id and
// an expiry, with their HMAC under the console's key. With a token, the
// key is derived from the token (so only the sign-in form, which checks
// the token, makes sessions, they hold across restarts and processes that
// share the token, and a new token ends them all); without one it is
// random, and a session only carries the CSRF token of its forms.
// The CSRF token of a session is the HMAC of its id under the same key.

// sessionCookie is the session cookie's name; sessionFor its lifetime.
const (
	sessionCookie = "sqlfork_console"
	sessionFor    = 12 * time.Hour
	sessionIDLen  = 16
)

// sessionKeys signs and checks sessions; random is where new session ids
// come from.
type sessionKeys struct {
	key    []byte
	random io.Reader
}

// newSessionKeys is the keys of a console with token ("" : none).
func newSessionKeys(token string, random io.Reader) (sessionKeys, error) {
	if token != "" {
		m := hmac.New(sha256.New, []byte(token))
		m.Write([]byte("sqlfork-proxy console session key"))
		return sessionKeys{key: m.Sum(nil), random: random}, nil
	}
	key := make([]byte, 32)
	if _, err := io.ReadFull(random, key); err != nil {
		return sessionKeys{}, fmt.Errorf("console: session key: %w", err)
	}
	return sessionKeys{key: key, random: random}, nil
}

// session is a valid session: its id.
type session struct{ id []byte }

// issue makes a session that ends at now+sessionFor: the session and its
// cookie's value.
func (k sessionKeys) issue(now time.Time) (session, string, error) {
	payload := make([]byte, 8+sessionIDLen)
	binary.BigEndian.PutUint64(payload, uint64(now.Add(sessionFor).Unix()))
	if _, err := io.ReadFull(k.random, payload[8:]); err != nil {
		return session{}, "", fmt.Errorf("console: session id: %w", err)
	}
	value := base64.RawURLEncoding.EncodeToString(append(payload, k.mac("session", payload)...))
	return session{id: payload[8:]}, value, nil
}

// check is the session of a cookie's value, if its signature holds and it
// has not ended by now. The value must be the one issue wrote: strict
// base64, whose last character's unused bits are 0 (else four values read
// as one cookie).
func (k sessionKeys) check(value string, now time.Time) (session, bool) {
	b, err := base64.RawURLEncoding.Strict().DecodeString(value)
	if err != nil || len(b) != 8+sessionIDLen+sha256.Size {
		return session{}, false
	}
	payload, sig := b[:8+sessionIDLen], b[8+sessionIDLen:]
	if !hmac.Equal(sig, k.mac("session", payload)) {
		return session{}, false
	}
	if int64(binary.BigEndian.Uint64(payload)) <= now.Unix() {
		return session{}, false
	}
	return session{id: payload[8:]}, true
}

// csrf is the CSRF token of the forms of session s.
func (k sessionKeys) csrf(s session) string {
	return base64.RawURLEncoding.EncodeToString(k.mac("csrf", s.id))
}

// csrfMatches reports whether got is the CSRF token of s, compared in
// constant time.
func (k sessionKeys) csrfMatches(s session, got string) bool {
	return len(s.id) > 0 && hmac.Equal([]byte(got), []byte(k.csrf(s)))
}

// mac is the HMAC of b under the key, for purpose.
func (k sessionKeys) mac(purpose string, b []byte) []byte {
	m := hmac.New(sha256.New, k.key)
	m.Write([]byte(purpose))
	m.Write([]byte{0})
	m.Write(b)
	return m.Sum(nil)
}

// setSessionCookie sets the cookie of a session with value on w: HttpOnly,
// SameSite=Strict, Secure when r came over TLS, for the console's paths.
func setSessionCookie(w http.ResponseWriter, r *http.Request, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: value, Path: "/ui/", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
}
