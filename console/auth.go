package console

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
	"github.com/sqlfork/sqlfork-proxy/sandbox/command"
)

// maxForm bounds the body of a form the console reads.
const maxForm = 64 << 10

// visitor is who a request comes from, as guard found it.
type visitor struct {
	// bearer: the request presented the token in its Authorization
	// header (a script: no cookie, no CSRF token needed).
	bearer bool
	// signedIn: a session made by the sign-in form (with a token set).
	signedIn bool
	// sess is the request's session (signed in, or, without a token, one
	// made for its forms' CSRF token); zero for a bearer request.
	sess session
}

// visitorKey is the context key of a request's visitor.
type visitorKey struct{}

// visitorOf is the visitor guard put in r's context.
func visitorOf(r *http.Request) visitor {
	v, _ := r.Context().Value(visitorKey{}).(visitor)
	return v
}

// guard lets a request through to next as the admin API would let it
// through for need: authenticated (the token as a bearer header or a
// signed-in session, when a token is set), permitted (adminapi's
// Permits), and for a POST, from the console's own origin with its
// session's CSRF token (a bearer request needs none: a browser adds no
// Authorization header on its own).
func (c *Console) guard(need adminapi.Need, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		securityHeaders(w)
		v, ok := c.identify(w, r)
		if !ok {
			return
		}
		if r.Method == http.MethodPost && !c.postAllowed(w, r, v) {
			return
		}
		if ok, refused := c.o.API.Permits(need); !ok {
			c.fail(w, r, v, http.StatusForbidden, refused)
			return
		}
		if name := r.PathValue("name"); name != "" && command.ValidName(name) != nil {
			c.fail(w, r, v, http.StatusNotFound, noSuchName(name))
			return
		}
		next(w, r.WithContext(context.WithValue(r.Context(), visitorKey{}, v)))
	}
}

// noSuchName is the answer to a path naming a sandbox by a name no
// sandbox can have (command.ValidName): the sandboxes are not asked, whose
// registry would fail on a name that is not UTF-8 and, comparing names
// without their trailing spaces, find "box" for "box ".
func noSuchName(name string) string {
	const shown = 64
	if len(name) > shown {
		name = name[:shown] + "…"
	}
	return fmt.Sprintf("not found: no such sandbox: %q (a sandbox's name is 1 to 48 letters, digits, '_' or '-')", name)
}

// identify finds who r comes from. A request that may not come in is
// answered here (a sign-in redirect for a browser's GET, else 401) and ok
// is false. Without a token, a request without a session gets one, for
// its forms' CSRF token.
func (c *Console) identify(w http.ResponseWriter, r *http.Request) (v visitor, ok bool) {
	if _, has := adminapi.BearerToken(r.Header.Get("Authorization")); has && c.o.API.Token != "" {
		if !c.o.API.Authenticated(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="sqlfork-proxy"`)
			c.fail(w, r, visitor{}, http.StatusUnauthorized, "wrong bearer token")
			return visitor{}, false
		}
		return visitor{bearer: true}, true
	}
	if ck, err := r.Cookie(sessionCookie); err == nil {
		if s, valid := c.keys.check(ck.Value, c.o.Now()); valid {
			return visitor{signedIn: c.o.API.Token != "", sess: s}, true
		}
	}
	if c.o.API.Token == "" {
		s, value, err := c.keys.issue(c.o.Now())
		if err != nil {
			c.fail(w, r, visitor{}, http.StatusInternalServerError, err.Error())
			return visitor{}, false
		}
		setSessionCookie(w, r, value, int(sessionFor.Seconds()))
		return visitor{sess: s}, true
	}
	if r.Method == http.MethodGet && r.Header.Get("Authorization") == "" {
		http.Redirect(w, r, "/ui/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
		return visitor{}, false
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="sqlfork-proxy"`)
	c.fail(w, r, visitor{}, http.StatusUnauthorized, "sign in with the admin token first")
	return visitor{}, false
}

// postAllowed reports whether the POST r from v may go on: from the
// console's origin (http.CrossOriginProtection), and with the session's
// CSRF token unless it presented the bearer token. A refused one is
// answered 403 here.
func (c *Console) postAllowed(w http.ResponseWriter, r *http.Request, v visitor) bool {
	if !c.sameSiteForm(w, r, v) {
		return false
	}
	if v.bearer || c.keys.csrfMatches(v.sess, r.PostForm.Get("csrf")) {
		return true
	}
	c.fail(w, r, v, http.StatusForbidden, "the form's CSRF token is missing or stale: reload the page and try again")
	return false
}

// sameSiteForm reports whether the POST r from v comes from the console's
// origin (http.CrossOriginProtection) with a form that parses (at most
// maxForm bytes), which it parses into r.PostForm. A refused one is
// answered here (403 or 400).
func (c *Console) sameSiteForm(w http.ResponseWriter, r *http.Request, v visitor) bool {
	if err := c.cop.Check(r); err != nil {
		c.fail(w, r, v, http.StatusForbidden, "refused a form posted from another site: "+err.Error())
		return false
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		c.fail(w, r, v, http.StatusBadRequest, "the form does not parse: "+err.Error())
		return false
	}
	return true
}

// loginForm is GET /ui/login: the sign-in form, or, without a token, the
// console itself.
func (c *Console) loginForm(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w)
	if c.o.API.Token == "" {
		http.Redirect(w, r, "/ui/", http.StatusSeeOther)
		return
	}
	c.render(w, r, visitor{}, http.StatusOK, "login", "Sign in", loginPage{Next: nextPath(r.URL.Query().Get("next"))})
}

// loginPage is what the sign-in form shows.
type loginPage struct {
	Next  string
	Error string
}

// login is POST /ui/login: with the admin token (compared in constant
// time), a session cookie and a redirect to where the visitor was going.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w)
	if c.o.API.Token == "" {
		http.Redirect(w, r, "/ui/", http.StatusSeeOther)
		return
	}
	if !c.sameSiteForm(w, r, visitor{}) {
		return
	}
	next := nextPath(r.PostForm.Get("next"))
	if !c.o.API.TokenMatches(strings.TrimSpace(r.PostForm.Get("token"))) {
		c.render(w, r, visitor{}, http.StatusUnauthorized, "login", "Sign in",
			loginPage{Next: next, Error: "That is not the admin token."})
		return
	}
	_, value, err := c.keys.issue(c.o.Now())
	if err != nil {
		c.fail(w, r, visitor{}, http.StatusInternalServerError, err.Error())
		return
	}
	setSessionCookie(w, r, value, int(sessionFor.Seconds()))
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// logout is POST /ui/logout: the session cookie goes.
func (c *Console) logout(w http.ResponseWriter, r *http.Request) {
	setSessionCookie(w, r, "", -1)
	to := "/ui/login"
	if c.o.API.Token == "" {
		to = "/ui/"
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// nextPath is where to go after signing in: next when it is a path of the
// console's own (never another host), else the sandboxes.
func nextPath(next string) string {
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Opaque != "" || strings.HasPrefix(next, "//") ||
		strings.ContainsAny(next, "\\\r\n\t") {
		return "/ui/"
	}
	clean := path.Clean(u.Path)
	if !strings.HasPrefix(clean, "/ui/") || strings.HasPrefix(clean, "/ui/login") || clean != u.Path && clean+"/" != u.Path {
		return "/ui/"
	}
	return u.RequestURI()
}
