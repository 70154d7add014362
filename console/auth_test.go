package console

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// TestConsoleAccess: the console lets through what the admin API would,
// by the same rules: with a token, a browser without a session is sent to
// sign in and a script with a wrong bearer token gets 401; without one,
// pages read metadata, and rows and changes need TokenlessChanges;
// promote always needs the token.
func TestConsoleAccess(t *testing.T) {
	type req struct {
		method, path, auth string
		want               int
	}
	tests := []struct {
		name      string
		token     string
		tokenless bool
		reqs      []req
	}{
		{"token, no credentials", "s3cret", false, []req{
			{"GET", "/ui/", "", http.StatusSeeOther}, {"GET", "/ui/sandboxes/box", "", http.StatusSeeOther},
			{"GET", "/ui/proxy", "", http.StatusSeeOther}, {"GET", "/ui/login", "", http.StatusOK},
			{"GET", "/ui/static/console.css", "", http.StatusOK},
			{"POST", "/ui/sandboxes/box/keep", "", http.StatusUnauthorized},
			{"POST", "/ui/sandboxes/box/promote", "", http.StatusUnauthorized},
		}},
		{"token, wrong bearer", "s3cret", false, []req{
			{"GET", "/ui/", "Bearer nope", http.StatusUnauthorized}, {"GET", "/ui/sandboxes/box/export", "Bearer nope", http.StatusUnauthorized},
		}},
		{"token, bearer", "s3cret", false, []req{
			{"GET", "/ui/", "Bearer s3cret", http.StatusOK}, {"GET", "/ui/sandboxes/box", "bearer  s3cret", http.StatusOK},
			{"GET", "/ui/sandboxes/box/export", "Bearer s3cret", http.StatusOK}, {"GET", "/ui/proxy", "Bearer s3cret", http.StatusOK},
			{"GET", "/ui/sandboxes/nobox", "Bearer s3cret", http.StatusNotFound},
			{"POST", "/ui/sandboxes/box/keep", "Bearer s3cret", http.StatusSeeOther},
			{"POST", "/ui/sandboxes/box/promote?dry_run=1", "Bearer s3cret", http.StatusOK},
		}},
		{"no token: reads only", "", false, []req{
			{"GET", "/ui/", "", http.StatusOK}, {"GET", "/ui/sandboxes/box", "", http.StatusOK}, {"GET", "/ui/proxy", "", http.StatusOK},
			{"GET", "/ui/login", "", http.StatusSeeOther},
			{"GET", "/ui/sandboxes/box/export", "", http.StatusForbidden}, {"GET", "/ui/sandboxes/box/discard", "", http.StatusForbidden},
			{"POST", "/ui/sandboxes/box/keep", "", http.StatusForbidden}, {"POST", "/ui/sandboxes/box/discard", "", http.StatusForbidden},
			{"POST", "/ui/sandboxes/box/promote", "", http.StatusForbidden},
		}},
		{"no token, tokenless changes", "", true, []req{
			{"GET", "/ui/sandboxes/box/export", "", http.StatusOK}, {"GET", "/ui/sandboxes/box/discard", "", http.StatusOK},
			{"POST", "/ui/sandboxes/box/keep", "", http.StatusSeeOther},
			{"POST", "/ui/sandboxes/box/promote", "", http.StatusForbidden},
		}},
		{"unknown paths", "", true, []req{
			{"GET", "/ui/nothing", "", http.StatusNotFound}, {"GET", "/ui", "", http.StatusMovedPermanently},
			{"DELETE", "/ui/sandboxes/box", "", http.StatusNotFound},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, srv := testConsole(t, tc.token, tc.tokenless)
			for _, r := range tc.reqs {
				b := newBrowser(t, srv)
				if r.auth != "" {
					b.header.Set("Authorization", r.auth)
				}
				code, body := 0, ""
				if r.method == "POST" {
					// A page first, for its form's CSRF token (a bearer
					// request needs none).
					form := url.Values{"ttl": {"2h"}, "dry_run": {"1"}}
					if _, page, _ := b.get("/ui/sandboxes/box"); strings.Contains(page, `name="csrf" value="`) &&
						!strings.Contains(page, `name="csrf" value=""`) {
						form.Set("csrf", csrfOf(t, page))
					}
					code, body, _ = b.post(r.path, form)
				} else {
					req, _ := http.NewRequest(r.method, srv.URL+r.path, nil)
					code, body, _ = b.do(req)
				}
				if code != r.want {
					t.Errorf("%s %s (auth %q): HTTP %d, want %d\n%.600s", r.method, r.path, r.auth, code, r.want, body)
				}
			}
		})
	}
}

// TestConsoleSignIn: the sign-in form takes the admin token (a wrong one
// is refused), sets an HttpOnly, SameSite=Strict session cookie for /ui/
// (Secure over TLS) and goes where the visitor was going, never to
// another site; signing out ends the session.
func TestConsoleSignIn(t *testing.T) {
	_, _, srv := testConsole(t, "s3cret", false)
	b := newBrowser(t, srv)
	code, _, loc := b.get("/ui/sandboxes/box")
	if code != http.StatusSeeOther || loc != "/ui/login?next=%2Fui%2Fsandboxes%2Fbox" {
		t.Fatalf("GET a page unsigned: %d to %q", code, loc)
	}
	if code, body, _ := b.post("/ui/login", url.Values{"token": {"wrong"}, "next": {"/ui/sandboxes/box"}}); code != http.StatusUnauthorized ||
		!strings.Contains(body, "not the admin token") {
		t.Fatalf("sign in with a wrong token: %d\n%s", code, body)
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/ui/login",
		strings.NewReader(url.Values{"token": {"s3cret"}, "next": {"/ui/sandboxes/box"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := b.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/sandboxes/box" {
		t.Fatalf("sign in: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	ck := resp.Cookies()
	if len(ck) != 1 || ck[0].Name != sessionCookie || !ck[0].HttpOnly || ck[0].SameSite != http.SameSiteStrictMode ||
		ck[0].Path != "/ui/" || ck[0].Secure {
		t.Fatalf("session cookie over plain HTTP: %+v", ck)
	}
	if code, body, _ := b.get("/ui/sandboxes/box"); code != http.StatusOK || !strings.Contains(body, "Sign out") {
		t.Fatalf("signed in, the sandbox page: %d", code)
	}
	_, page, _ := b.get("/ui/")
	if code, _, loc := b.post("/ui/logout", url.Values{"csrf": {csrfOf(t, page)}}); code != http.StatusSeeOther || loc != "/ui/login" {
		t.Fatalf("sign out: %d to %q", code, loc)
	}
	if code, _, _ := b.get("/ui/"); code != http.StatusSeeOther {
		t.Fatalf("after signing out: HTTP %d, want the sign-in redirect", code)
	}
}

// TestConsoleCookieSecure: over TLS the session cookie is Secure.
func TestConsoleCookieSecure(t *testing.T) {
	c, _, _ := testConsole(t, "s3cret", false)
	req := httptest.NewRequest(http.MethodPost, "https://proxy.example/ui/login", strings.NewReader("token=s3cret"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.TLS = &tls.ConnectionState{}
	rec := httptest.NewRecorder()
	c.login(rec, req)
	ck := rec.Result().Cookies()
	if len(ck) != 1 || !ck[0].Secure || !ck[0].HttpOnly || ck[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("session cookie over TLS: %+v", ck)
	}
}

// TestConsoleCSRF: a form posted without the session's CSRF token, with
// another session's, or from another site is refused before the
// sandboxes are asked; the page's own token passes.
func TestConsoleCSRF(t *testing.T) {
	_, f, srv := testConsole(t, "", true)
	b := newBrowser(t, srv)
	_, page, _ := b.get("/ui/sandboxes/box")
	token := csrfOf(t, page)
	other := newBrowser(t, srv)
	_, otherPage, _ := other.get("/ui/sandboxes/box")
	tests := []struct {
		name  string
		csrf  string
		site  string
		want  int
		asked bool
	}{
		{"no token", "", "same-origin", http.StatusForbidden, false},
		{"another session's token", csrfOf(t, otherPage), "same-origin", http.StatusForbidden, false},
		{"a forged token", strings.Repeat("A", len(token)), "same-origin", http.StatusForbidden, false},
		{"from another site", token, "cross-site", http.StatusForbidden, false},
		{"the page's token", token, "same-origin", http.StatusSeeOther, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(f.calls())
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/ui/sandboxes/box/keep",
				strings.NewReader(url.Values{"csrf": {tc.csrf}, "ttl": {"1h"}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Sec-Fetch-Site", tc.site)
			code, body, _ := b.do(req)
			if code != tc.want {
				t.Errorf("HTTP %d, want %d\n%.600s", code, tc.want, body)
			}
			asked := false
			for _, c := range f.calls()[before:] {
				asked = asked || strings.HasPrefix(c, "keep")
			}
			if asked != tc.asked {
				t.Errorf("the sandboxes were asked to keep: %v, want %v (%v)", asked, tc.asked, f.calls()[before:])
			}
		})
	}
}

// TestNextPath: where a sign-in goes next is one of the console's paths,
// never another site.
func TestNextPath(t *testing.T) {
	for in, want := range map[string]string{
		"/ui/sandboxes/box":     "/ui/sandboxes/box",
		"/ui/proxy?x=1":         "/ui/proxy?x=1",
		"":                      "/ui/",
		"https://evil.example/": "/ui/",
		"//evil.example/ui/":    "/ui/",
		"/ui/../evil":           "/ui/",
		"/\\evil.example":       "/ui/",
		"/api/v1/sandboxes":     "/ui/",
		"/ui/login?next=/ui/":   "/ui/",
		"javascript:alert(1)":   "/ui/",
	} {
		if got := nextPath(in); got != want {
			t.Errorf("nextPath(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestConsoleOddNames: a path naming a sandbox by a name no sandbox can
// have (not UTF-8, a trailing space, '/', too long) is 404 on every route
// without asking the sandboxes.
func TestConsoleOddNames(t *testing.T) {
	_, f, srv := testConsole(t, "s3cret", false)
	b := newBrowser(t, srv)
	b.header.Set("Authorization", "Bearer s3cret")
	for _, name := range []string{"%FF", "%C0%80", "box%20", "box%2F", "%2e%2e", strings.Repeat("b", 49)} {
		for _, suffix := range []string{"", "/export", "/discard"} {
			before := len(f.calls())
			code, body, _ := b.get("/ui/sandboxes/" + name + suffix)
			if code != http.StatusNotFound || !strings.Contains(body, "no such sandbox") || len(f.calls()) != before {
				t.Errorf("GET /ui/sandboxes/%s%s: HTTP %d, sandboxes asked %v", name, suffix, code, f.calls()[before:])
			}
		}
		before := len(f.calls())
		if code, _, _ := b.post("/ui/sandboxes/"+name+"/keep", url.Values{"ttl": {"1h"}}); code != http.StatusNotFound || len(f.calls()) != before {
			t.Errorf("POST /ui/sandboxes/%s/keep: HTTP %d, sandboxes asked %v", name, code, f.calls()[before:])
		}
	}
}
