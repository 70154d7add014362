package adminapi

import (
	"crypto/subtle"
	"net/http"
	"strings"
)

// Need is what a request asks of the sandboxes, which decides what it
// needs besides the token (when one is set): the admin API's rules, which
// the web console (package console) applies too.
type Need int

// What a request may ask.
const (
	// NeedRead reads metadata (list, show, proxy): the token alone, when
	// one is set.
	NeedRead Need = iota
	// NeedRows reads rows, production's among them (diff, export): the
	// token, or TokenlessChanges.
	NeedRows
	// NeedChange keeps, discards or resets a sandbox: the token, or
	// TokenlessChanges.
	NeedChange
	// NeedCreate makes a sandbox: the token, or TokenlessChanges.
	NeedCreate
	// NeedPromote writes production (a promote, a dry run too): the token,
	// which must be set.
	NeedPromote
)

// TokenMatches reports whether got is the Token, compared in constant
// time; false when no Token is set.
func (o Options) TokenMatches(got string) bool {
	return o.Token != "" && subtle.ConstantTimeCompare([]byte(got), []byte(o.Token)) == 1
}

// Authenticated reports whether r may reach the API at all: no Token is
// set, or r presents it as "Authorization: Bearer <token>".
func (o Options) Authenticated(r *http.Request) bool {
	if o.Token == "" {
		return true
	}
	got, ok := BearerToken(r.Header.Get("Authorization"))
	return ok && o.TokenMatches(got)
}

// Permits reports whether an authenticated request may do what need asks;
// when it may not, refused is why (the API's 403 message).
func (o Options) Permits(need Need) (ok bool, refused string) {
	trusted := o.Token != "" || o.TokenlessChanges
	switch need {
	case NeedRead:
		return true, ""
	case NeedRows:
		return trusted, msgRowsNeedToken
	case NeedChange:
		return trusted, msgReadOnly
	case NeedCreate:
		return trusted, msgCreateNeedsToken
	}
	return o.Token != "", msgTokenOnly
}

// BearerToken is the token of an Authorization header of the Bearer
// scheme, whose name is case-insensitive (RFC 9110 11.1), as is the white
// space after it.
func BearerToken(header string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimLeft(header, " "), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.Trim(token, " ")
	return token, token != ""
}
