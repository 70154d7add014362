package integration

// Red team 29: the web console (/ui/) on the admin listener, attacked over
// HTTP against real proxy processes and MariaDB (and once in chromium): its
// token gates and sessions (forged, expired, another token's cookies), its
// CSRF defences, the sign-in's next=, path tricks and odd sandbox names,
// the promote's digest (the plan reviewed is the plan applied), hostile
// owners, huge cells, the tokenless rules, and what the admin listener
// beside it lets another site do.

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
)

// rt29Client is a client of one admin listener: a cookie jar, no redirects
// followed, headers added to every request.
type rt29Client struct {
	t      *testing.T
	base   string
	hc     *http.Client
	header http.Header
}

func newRT29Client(t *testing.T, base string) *rt29Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &rt29Client{t: t, base: base, header: http.Header{}, hc: &http.Client{Jar: jar, Timeout: time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// rt29Resp is an answer: its status, headers and body.
type rt29Resp struct {
	code   int
	header http.Header
	body   string
}

// do sends req (a path on the listener, already escaped) with the
// client's headers and extra ones (pairs of name and value).
func (c *rt29Client) do(method, path string, body io.Reader, extra ...string) rt29Resp {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(extra); i += 2 {
		if extra[i] == "Host" {
			req.Host = extra[i+1]
			continue
		}
		req.Header.Set(extra[i], extra[i+1])
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	return rt29Resp{code: resp.StatusCode, header: resp.Header, body: string(b)}
}

func (c *rt29Client) get(path string, extra ...string) rt29Resp {
	c.t.Helper()
	return c.do(http.MethodGet, path, nil, extra...)
}

func (c *rt29Client) post(path string, form url.Values, extra ...string) rt29Resp {
	c.t.Helper()
	return c.do(http.MethodPost, path, strings.NewReader(form.Encode()), extra...)
}

// signIn signs in with token; the sign-in must succeed.
func (c *rt29Client) signIn(token string) {
	c.t.Helper()
	r := c.post("/ui/login", url.Values{"token": {token}, "next": {"/ui/"}})
	if r.code != http.StatusSeeOther || r.header.Get("Location") != "/ui/" {
		c.t.Fatalf("sign in: HTTP %d to %q\n%.400s", r.code, r.header.Get("Location"), r.body)
	}
}

// csrf is the CSRF token of the forms of the page at path.
func (c *rt29Client) csrf(path string) string {
	c.t.Helper()
	r := c.get(path)
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(r.body)
	if r.code != http.StatusOK || m == nil {
		c.t.Fatalf("no CSRF token on %s (HTTP %d)\n%.600s", path, r.code, r.body)
	}
	return m[1]
}

// cookie is the session cookie's value the client holds ("" when none).
func (c *rt29Client) cookie() string {
	u, _ := url.Parse(c.base + "/ui/")
	for _, ck := range c.hc.Jar.Cookies(u) {
		if ck.Name == "sqlfork_console" {
			return ck.Value
		}
	}
	return ""
}

// errorText is the message of an error page.
func errorText(body string) string {
	if m := regexp.MustCompile(`(?s)<p class="error" role="alert">(.*?)</p>`).FindStringSubmatch(body); m != nil {
		return m[1]
	}
	return ""
}

// startRT29Console starts a proxy process (explicit mode) whose admin
// listener serves the console, with args, and waits for the listener: its
// base URL.
func startRT29Console(t *testing.T, args ...string) string {
	t.Helper()
	db := leastPrivilegeEnv(t)
	addr := freeAddr(t)
	startProxyProcess(t, db, append([]string{"--mode", "explicit", "--metrics-listen", addr}, args...)...)
	base := "http://" + addr
	testkit.Eventually(t, "the admin listener", func() bool {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == http.StatusOK
	})
	return base
}

// forgedSession is a session cookie's value signed as a console with token
// signs one, ending at expires (the format of console/session.go).
func forgedSession(token string, expires time.Time) string {
	k := hmac.New(sha256.New, []byte(token))
	k.Write([]byte("sqlfork-proxy console session key"))
	key := k.Sum(nil)
	payload := make([]byte, 8+16)
	binary.BigEndian.PutUint64(payload, uint64(expires.Unix()))
	_, _ = rand.Read(payload[8:])
	m := hmac.New(sha256.New, key)
	m.Write([]byte("session\x00"))
	m.Write(payload)
	return base64.RawURLEncoding.EncodeToString(append(payload, m.Sum(nil)...))
}

// rt29Fixture is production's database rt29c, its table items holding a
// secret in production, and the kept sandbox rt29a (made through the token
// proxy cp) that wrote another secret.
const (
	rt29ProdSecret    = "PROD-SECRET-7f3a"
	rt29SandboxSecret = "SANDBOX-SECRET-91bc"
)

func rt29Fixture(t *testing.T, cp consoleProxy) {
	t.Helper()
	db := leastPrivilegeEnv(t)
	root := openDB(t, db.DSN("")+"?multiStatements=true")
	readOnlyDatabase(t, root, "rt29c")
	mustExecC(t, root, `CREATE TABLE rt29c.items (id INT PRIMARY KEY, name VARCHAR(64) NOT NULL, secret VARCHAR(64)) ENGINE=InnoDB;
CREATE TABLE rt29c.wide (id INT PRIMARY KEY, t LONGTEXT) ENGINE=InnoDB;
INSERT INTO rt29c.items VALUES (1, 'one', '`+rt29ProdSecret+`'), (2, 'two', NULL), (3, 'three', NULL);`)
	c := cp.keptSandbox(t, "rt29a", "rt29c", 2*time.Hour)
	mustExecC(t, c, "UPDATE items SET secret = ? WHERE id = 2", rt29SandboxSecret)
	mustExecC(t, c, "UPDATE items SET name = 'uno' WHERE id = 1")
}

// securityHeadersOK checks the headers every console answer carries: no
// framing, no sniffing, no caching, no script.
func securityHeadersOK(t *testing.T, what string, r rt29Resp) {
	t.Helper()
	csp := r.header.Get("Content-Security-Policy")
	if r.header.Get("X-Frame-Options") != "DENY" || !strings.Contains(csp, "frame-ancestors 'none'") ||
		!strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") ||
		r.header.Get("X-Content-Type-Options") != "nosniff" || r.header.Get("Cache-Control") != "no-store" {
		t.Errorf("%s (HTTP %d): security headers %v", what, r.code, r.header)
	}
}

// TestRT29ConsoleTokenGates: with --admin-token every page needs it. Without
// credentials each page redirects to the sign-in form (with next) and each
// POST is 401, showing no sandbox data; forged cookies (random, truncated,
// signed with another key, expired) are sessions of nobody; a cookie signed
// with the right key is one (the forging matches the format); the sign-in
// cookie is HttpOnly, SameSite=Strict, for /ui/; a proxy started with
// another token refuses the first one's sessions; every answer carries the
// security headers; EXPORT downloads as a safe file name. Concurrent
// sign-ins all work and the proxy stays up.
func TestRT29ConsoleTokenGates(t *testing.T) {
	cp := startConsoleProxy(t)
	rt29Fixture(t, cp)
	anon := newRT29Client(t, cp.base)
	for _, p := range []string{"/ui/", "/ui/sandboxes/rt29a", "/ui/sandboxes/rt29a/export", "/ui/sandboxes/rt29a/discard", "/ui/proxy",
		"/ui/sandboxes/rt29a?done=kept"} {
		r := anon.get(p)
		if want := "/ui/login?next=" + url.QueryEscape(p); r.code != http.StatusSeeOther || r.header.Get("Location") != want {
			t.Errorf("GET %s unsigned: HTTP %d to %q, want 303 to %q", p, r.code, r.header.Get("Location"), want)
		}
		securityHeadersOK(t, "GET "+p+" unsigned", r)
		if strings.Contains(r.body, "SECRET") || strings.Contains(r.body, "rt29c") {
			t.Errorf("GET %s unsigned shows sandbox data: %.300s", p, r.body)
		}
	}
	for _, p := range []string{"/ui/sandboxes/rt29a/keep", "/ui/sandboxes/rt29a/discard", "/ui/sandboxes/rt29a/promote", "/ui/logout"} {
		r := anon.post(p, url.Values{"ttl": {"0"}, "confirm": {"rt29a"}, "dry_run": {"1"}})
		if r.code != http.StatusUnauthorized {
			t.Errorf("POST %s unsigned: HTTP %d, want 401", p, r.code)
		}
		securityHeadersOK(t, "POST "+p+" unsigned", r)
	}
	if r := anon.get("/ui/", "Authorization", "Bearer "+consoleToken+"x"); r.code != http.StatusUnauthorized {
		t.Errorf("a wrong bearer token: HTTP %d, want 401", r.code)
	}
	if r := anon.get("/ui/sandboxes/rt29a", "Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("x:"+consoleToken))); r.code != http.StatusUnauthorized {
		t.Errorf("the token as Basic credentials: HTTP %d, want 401", r.code)
	}

	// Cookies nobody signed in for.
	valid := forgedSession(consoleToken, time.Now().Add(time.Hour))
	for name, value := range map[string]string{
		"random":         base64.RawURLEncoding.EncodeToString(make([]byte, 56)),
		"truncated":      valid[:len(valid)-4],
		"another key":    forgedSession("not-the-token", time.Now().Add(time.Hour)),
		"expired":        forgedSession(consoleToken, time.Now().Add(-time.Second)),
		"empty":          "",
		"padded base64":  valid + "==",
		"bit flipped":    flipLast(valid),
		"expiry swapped": forgedExpiry(valid, time.Now().Add(24*time.Hour)),
	} {
		r := anon.get("/ui/sandboxes/rt29a", "Cookie", "sqlfork_console="+value)
		if r.code != http.StatusSeeOther {
			t.Errorf("a %s session cookie: HTTP %d, want the sign-in redirect", name, r.code)
		}
	}
	if r := anon.get("/ui/sandboxes/rt29a", "Cookie", "sqlfork_console="+valid); r.code != http.StatusOK || !strings.Contains(r.body, rt29SandboxSecret) {
		t.Fatalf("a cookie signed with the token's key: HTTP %d (the test's forging does not match the console's format)", r.code)
	}

	// A real sign-in.
	b := newRT29Client(t, cp.base)
	r := b.post("/ui/login", url.Values{"token": {"  " + consoleToken + " "}, "next": {"/ui/sandboxes/rt29a"}})
	if r.code != http.StatusSeeOther || r.header.Get("Location") != "/ui/sandboxes/rt29a" {
		t.Fatalf("sign in: HTTP %d to %q", r.code, r.header.Get("Location"))
	}
	securityHeadersOK(t, "sign in", r)
	set := r.header.Get("Set-Cookie")
	for _, attr := range []string{"HttpOnly", "SameSite=Strict", "Path=/ui/", "Max-Age=43200"} {
		if !strings.Contains(set, attr) {
			t.Errorf("the session cookie lacks %s: %s", attr, set)
		}
	}
	page := b.get("/ui/sandboxes/rt29a")
	if page.code != http.StatusOK || !strings.Contains(page.body, rt29SandboxSecret) {
		t.Fatalf("signed in, the sandbox's page: HTTP %d", page.code)
	}
	securityHeadersOK(t, "the sandbox's page", page)
	exp := b.get("/ui/sandboxes/rt29a/export")
	if exp.code != http.StatusOK || exp.header.Get("Content-Disposition") != "attachment; filename=sandbox-rt29a.sql" ||
		!strings.HasPrefix(exp.header.Get("Content-Type"), "text/plain") || !strings.Contains(exp.body, "UPDATE") {
		t.Errorf("EXPORT: HTTP %d, %v", exp.code, exp.header)
	}
	securityHeadersOK(t, "EXPORT", exp)
	for _, p := range []string{"/ui/nothing", "/ui/sandboxes/nobox", "/ui/sandboxes/rt29a/nothing"} {
		r := b.get(p)
		if r.code != http.StatusNotFound {
			t.Errorf("GET %s: HTTP %d, want 404", p, r.code)
		}
		securityHeadersOK(t, "GET "+p, r)
	}

	// Another token: the first one's sessions end.
	other := startRT29Console(t, "--admin-token", "another-token")
	ob := newRT29Client(t, other)
	if r := ob.get("/ui/sandboxes/rt29a", "Cookie", "sqlfork_console="+b.cookie()); r.code != http.StatusSeeOther {
		t.Errorf("a session of the old token on a proxy with another one: HTTP %d, want the sign-in redirect", r.code)
	}
	if r := ob.post("/ui/login", url.Values{"token": {consoleToken}}); r.code != http.StatusUnauthorized {
		t.Errorf("the old token signing in: HTTP %d, want 401", r.code)
	}

	// Concurrent sign-ins, each then reading a page.
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for i := range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := newRT29Client(t, cp.base)
			tok := consoleToken
			if i%3 == 0 {
				tok = "wrong"
			}
			r := c.post("/ui/login", url.Values{"token": {tok}, "next": {"/ui/proxy"}})
			switch {
			case tok == "wrong" && r.code != http.StatusUnauthorized:
				errs <- fmt.Errorf("a wrong sign-in: HTTP %d", r.code)
			case tok == "wrong":
			case r.code != http.StatusSeeOther:
				errs <- fmt.Errorf("sign-in %d: HTTP %d", i, r.code)
			default:
				if p := c.get("/ui/"); p.code != http.StatusOK {
					errs <- fmt.Errorf("sign-in %d, the list: HTTP %d", i, p.code)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if r := anon.get("/healthz"); r.code != http.StatusOK {
		t.Errorf("the proxy after the concurrent sign-ins: /healthz HTTP %d", r.code)
	}
}

// flipLast is a cookie value with its last signature character changed.
func flipLast(v string) string {
	last := v[len(v)-1]
	c := byte('A')
	if last == 'A' {
		c = 'B'
	}
	return v[:len(v)-1] + string(c)
}

// forgedExpiry is a valid cookie value with its expiry replaced (its
// signature kept).
func forgedExpiry(v string, expires time.Time) string {
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil {
		return v
	}
	binary.BigEndian.PutUint64(b, uint64(expires.Unix()))
	return base64.RawURLEncoding.EncodeToString(b)
}

// TestRT29ConsoleSignInNext: whatever next= a sign-in carries, it goes to
// one of the console's own paths, never another host, and a cross-site
// sign-in is refused without a cookie.
func TestRT29ConsoleSignInNext(t *testing.T) {
	base := startRT29Console(t, "--admin-token", "next-token")
	c := newRT29Client(t, base)
	for _, next := range []string{"//evil.example/ui/", `/\evil.example`, "/ui/../../evil", "https://evil.example/ui/", "/ui/%2F%2Fevil.example",
		"/ui//evil.example", `/ui/\/evil.example`, "javascript:alert(1)", "/ui/%0d%0aLocation:%20http://evil", "/%2F/evil.example/ui/",
		"///evil.example/ui/", "/ui/%5c%5cevil.example", "http:/ui/", "/ui/;//evil", "\t//evil.example", " //evil.example", "/ui/\x00",
		"/ui/login?next=//evil.example", "/ui/sandboxes/x?next=//evil.example", "/ui/@evil.example", "//ui/", strings.Repeat("/ui/", 2000)} {
		r := c.post("/ui/login", url.Values{"token": {"next-token"}, "next": {next}})
		loc := r.header.Get("Location")
		u, err := url.Parse(loc)
		if r.code != http.StatusSeeOther || err != nil || u.Host != "" || u.Scheme != "" || !strings.HasPrefix(loc, "/ui/") ||
			strings.HasPrefix(loc, "//") || strings.ContainsAny(loc, "\\\r\n\t") {
			t.Errorf("sign in with next %.80q: HTTP %d to %.80q", next, r.code, loc)
		}
		// The form that asks again shows next as text in an attribute.
		if f := c.get("/ui/login?next=" + url.QueryEscape(next+`"><b>x</b>`)); strings.Contains(f.body, "<b>x") {
			t.Errorf("the sign-in form reflects next %.80q as markup", next)
		}
	}
	x := newRT29Client(t, base)
	for _, h := range [][]string{{"Sec-Fetch-Site", "cross-site"}, {"Sec-Fetch-Site", "same-site"}, {"Origin", "http://evil.example"}, {"Origin", "null"}} {
		r := x.post("/ui/login", url.Values{"token": {"next-token"}}, h...)
		if r.code != http.StatusForbidden || strings.Contains(r.header.Get("Set-Cookie"), "sqlfork_console=") {
			t.Errorf("a sign-in with %s: %s: HTTP %d, cookie %q", h[0], h[1], r.code, r.header.Get("Set-Cookie"))
		}
	}
}

// TestRT29ConsoleCSRF: a signed-in console's forms refuse a POST without
// the session's CSRF token, with it in the query, with another session's,
// and from another origin or site (by Sec-Fetch-Site or Origin) even with
// the right token; the sandbox is left as it was. In chromium, a page of
// another origin that knows the token (leaked) and posts the discard form
// of a signed-in browser is refused too.
func TestRT29ConsoleCSRF(t *testing.T) {
	cp := startConsoleProxy(t)
	rt29Fixture(t, cp)
	b := newRT29Client(t, cp.base)
	b.signIn(consoleToken)
	token := b.csrf("/ui/sandboxes/rt29a")
	o := newRT29Client(t, cp.base)
	o.signIn(consoleToken)
	otherToken := o.csrf("/ui/sandboxes/rt29a")
	before, err := cp.api.Show(context.Background(), "rt29a")
	if err != nil {
		t.Fatal(err)
	}
	type attempt struct {
		name  string
		form  url.Values
		path  string
		extra []string
	}
	with := func(k, v string) url.Values {
		f := url.Values{"confirm": {"rt29a"}, "dry_run": {"1"}}
		f.Set(k, v)
		return f
	}
	for _, a := range []attempt{
		{"no token", url.Values{"confirm": {"rt29a"}}, "/ui/sandboxes/rt29a/discard", nil},
		{"token in the query", url.Values{"confirm": {"rt29a"}}, "/ui/sandboxes/rt29a/discard?csrf=" + url.QueryEscape(token), nil},
		{"another session's token", with("csrf", otherToken), "/ui/sandboxes/rt29a/discard", nil},
		{"an empty token", with("csrf", ""), "/ui/sandboxes/rt29a/discard", nil},
		{"a forged token", with("csrf", strings.Repeat("A", len(token))), "/ui/sandboxes/rt29a/discard", nil},
		{"cross-site", with("csrf", token), "/ui/sandboxes/rt29a/discard", []string{"Sec-Fetch-Site", "cross-site"}},
		{"same-site, another origin", with("csrf", token), "/ui/sandboxes/rt29a/discard", []string{"Sec-Fetch-Site", "same-site"}},
		{"another Origin", with("csrf", token), "/ui/sandboxes/rt29a/discard", []string{"Origin", "http://127.0.0.1:1"}},
		{"Origin null", with("csrf", token), "/ui/sandboxes/rt29a/discard", []string{"Origin", "null"}},
		{"keep, cross-site", url.Values{"csrf": {token}, "ttl": {"0"}}, "/ui/sandboxes/rt29a/keep", []string{"Sec-Fetch-Site", "cross-site"}},
		{"dry run, cross-site", url.Values{"csrf": {token}, "dry_run": {"1"}}, "/ui/sandboxes/rt29a/promote", []string{"Sec-Fetch-Site", "cross-site"}},
		{"sign out, another origin", url.Values{"csrf": {token}}, "/ui/logout", []string{"Origin", "http://evil.example"}},
	} {
		r := b.post(a.path, a.form, a.extra...)
		if r.code != http.StatusForbidden {
			t.Errorf("%s: HTTP %d, want 403\n%.300s", a.name, r.code, errorText(r.body))
		}
		securityHeadersOK(t, a.name, r)
	}
	after, err := cp.api.Show(context.Background(), "rt29a")
	if err != nil {
		t.Fatalf("the sandbox after the refused forms: %v", err)
	}
	if after.State != before.State || (after.Expires == nil) != (before.Expires == nil) {
		t.Errorf("the refused forms changed the sandbox: %+v, was %+v", after, before)
	}
	// The page's own token, posted as the page would: it passes.
	if r := b.post("/ui/sandboxes/rt29a/keep", url.Values{"csrf": {token}, "ttl": {"3h"}}, "Sec-Fetch-Site", "same-origin"); r.code != http.StatusSeeOther {
		t.Fatalf("keep with the page's token: HTTP %d\n%s", r.code, errorText(r.body))
	}

	// In chromium: signed in, then a page of another origin posts the
	// discard form with the (leaked) token.
	ctx, watch := newBrowserTab(t)
	cp.signIn(t, ctx)
	browse(t, ctx, "open rt29a", chromedp.Navigate(cp.base+"/ui/sandboxes/rt29a"))
	leaked := evalJS[string](t, ctx, `document.querySelector('input[name="csrf"]').value`)
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><form id="f" method="post" action="%s/ui/sandboxes/rt29a/discard">
<input name="csrf" value="%s"><input name="confirm" value="rt29a"></form><script>document.getElementById('f').submit()</script>`, cp.base, leaked)
	}))
	defer evil.Close()
	// localhost: another site than 127.0.0.1; evil.URL: the same site, another origin.
	for _, u := range []string{strings.Replace(evil.URL, "127.0.0.1", "localhost", 1), evil.URL} {
		if err := chromedp.Do(ctx, chromedp.Navigate(u)); err != nil {
			t.Fatalf("open the other site: %v", err)
		}
		var got string
		testkit.Eventually(t, "the other site's form to be posted", func() bool {
			v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href.startsWith(`+"`"+cp.base+"`"+`) && document.readyState === 'complete' ? document.querySelector('h1').textContent : ''`))
			got = v
			return err == nil && v != ""
		})
		// 403 from the same site (the cookie sent, the origin refused);
		// 401 from another site (SameSite=Strict: no cookie).
		if !strings.HasPrefix(got, "403") && !strings.HasPrefix(got, "401") {
			t.Errorf("the discard posted from %s: %q", u, got)
		}
		t.Logf("the discard posted from %s: %q", u, got)
	}
	if _, err := cp.api.Show(context.Background(), "rt29a"); err != nil {
		t.Errorf("the sandbox after the other site's posts: %v", err)
	}
	if seen := watch.seen(); len(seen) > 0 {
		t.Errorf("dialogs: %v", seen)
	}
}

// TestRT29ConsolePromoteDigest: the console applies exactly the plan its
// dry run showed. The apply form's strategy and tables tampered with, a
// digest that is not the dry run's, or no digest, are refused; a write to
// the sandbox between the dry run and the apply (another connection) is
// refused with production left as it was; a fresh dry run's plan then
// applies. Production is written by the promote account only.
func TestRT29ConsolePromoteDigest(t *testing.T) {
	cp := startConsoleProxy(t)
	rt29Fixture(t, cp)
	db := leastPrivilegeEnv(t)
	root := openDB(t, db.DSN(""))
	mustExecC(t, root, "CREATE TABLE rt29c.other (id INT PRIMARY KEY)")
	c := cp.keptSandbox(t, "rt29p", "rt29c", time.Hour)
	mustExecC(t, c, "UPDATE items SET name = 'p1' WHERE id = 3")
	b := newRT29Client(t, cp.base)
	b.signIn(consoleToken)
	token := b.csrf("/ui/sandboxes/rt29p")
	prod := func() string {
		return strings.Join(column(t, root, "SELECT CONCAT(id, ':', name) FROM rt29c.items ORDER BY id"), ",")
	}
	const untouched = "1:one,2:two,3:three"
	dryRun := func(strategy string) string {
		t.Helper()
		r := b.post("/ui/sandboxes/rt29p/promote", url.Values{"csrf": {token}, "dry_run": {"1"}, "strategy": {strategy}})
		m := regexp.MustCompile(`name="matching" value="(sha256:[0-9a-f]{64})"`).FindStringSubmatch(r.body)
		if r.code != http.StatusOK || m == nil {
			t.Fatalf("dry run: HTTP %d %s", r.code, errorText(r.body))
		}
		if !strings.Contains(r.body, "UPDATE `rt29c`.`items` SET `name` = ") {
			t.Errorf("the dry run's plan does not show the update: %.2000s", r.body)
		}
		return m[1]
	}
	digest := dryRun("ours")
	for _, a := range []struct {
		name string
		form url.Values
		want int
	}{
		{"strategy fail", url.Values{"strategy": {"fail"}, "matching": {digest}}, http.StatusConflict},
		{"strategy theirs", url.Values{"strategy": {"theirs"}, "matching": {digest}}, http.StatusConflict},
		{"strategy theirs, the digest in upper case", url.Values{"strategy": {"THEIRS"}, "matching": {strings.ToUpper(digest)}}, http.StatusConflict},
		{"a table it did not change", url.Values{"strategy": {"ours"}, "table": {"rt29c.other"}, "matching": {digest}}, http.StatusBadRequest},
		{"another digest", url.Values{"strategy": {"ours"}, "matching": {"sha256:" + strings.Repeat("0", 64)}}, http.StatusConflict},
		{"a digest that is not one", url.Values{"strategy": {"ours"}, "matching": {digest + "00"}}, http.StatusBadRequest},
		{"no digest", url.Values{"strategy": {"ours"}}, http.StatusBadRequest},
		{"dry_run=0", url.Values{"strategy": {"ours"}, "dry_run": {"0"}}, http.StatusBadRequest},
		{"dry run and digest", url.Values{"strategy": {"ours"}, "dry_run": {"1"}, "matching": {digest}}, http.StatusBadRequest},
		{"a bad strategy", url.Values{"strategy": {"ours;DROP"}, "matching": {digest}}, http.StatusBadRequest},
		{"a bad table", url.Values{"strategy": {"ours"}, "table": {"items"}, "matching": {digest}}, http.StatusBadRequest},
	} {
		a.form.Set("csrf", token)
		r := b.post("/ui/sandboxes/rt29p/promote", a.form)
		if r.code != a.want && (a.want != http.StatusBadRequest || r.code != http.StatusConflict) {
			t.Errorf("apply, %s: HTTP %d, want %d: %s", a.name, r.code, a.want, errorText(r.body))
		}
		if got := prod(); got != untouched {
			t.Fatalf("apply, %s, changed production: %s", a.name, got)
		}
	}
	// Another connection writes the sandbox after the dry run.
	mustExecC(t, c, "UPDATE items SET name = 'p2' WHERE id = 3")
	r := b.post("/ui/sandboxes/rt29p/promote", url.Values{"csrf": {token}, "strategy": {"ours"}, "matching": {digest}})
	if r.code != http.StatusConflict || !strings.Contains(errorText(r.body), "not the "+digest+" that was reviewed") {
		t.Errorf("apply after the sandbox changed: HTTP %d: %s", r.code, errorText(r.body))
	}
	if got := prod(); got != untouched {
		t.Fatalf("the stale plan changed production: %s", got)
	}
	// Production writes a row of the plan's after the dry run: a conflict,
	// another plan.
	digest = dryRun("ours")
	mustExecC(t, root, "UPDATE rt29c.items SET name = 'prod' WHERE id = 3")
	if r := b.post("/ui/sandboxes/rt29p/promote", url.Values{"csrf": {token}, "strategy": {"ours"}, "matching": {digest}}); r.code != http.StatusConflict {
		t.Errorf("apply after production changed: HTTP %d: %s", r.code, errorText(r.body))
	}
	if got := prod(); got != "1:one,2:two,3:prod" {
		t.Fatalf("after the refused apply, production: %s", got)
	}
	digest = dryRun("ours")
	if r := b.post("/ui/sandboxes/rt29p/promote", url.Values{"csrf": {token}, "strategy": {"ours"}, "matching": {digest}}); r.code != http.StatusOK ||
		!strings.Contains(r.body, "committed") {
		t.Fatalf("apply of the fresh plan: HTTP %d: %s", r.code, errorText(r.body))
	}
	if got := prod(); got != "1:one,2:two,3:p2" {
		t.Errorf("production after the promote: %s", got)
	}
	// The same digest again: the plan is now empty, another one.
	if r := b.post("/ui/sandboxes/rt29p/promote", url.Values{"csrf": {token}, "strategy": {"ours"}, "matching": {digest}}); r.code < 400 || r.code > 499 {
		t.Errorf("the applied plan's digest again: HTTP %d: %s", r.code, errorText(r.body))
	}
}

// TestRT29ConsoleOddNames: a sandbox name in the console's paths that no
// sandbox can have — invalid UTF-8, overlong, a NUL, '/', '..', bidi,
// 60 000 bytes — is answered 404 (or a redirect to a clean path) on every
// route, never a 500 or the registry's SQL error, and never another
// sandbox's page.
func TestRT29ConsoleOddNames(t *testing.T) {
	cp := startConsoleProxy(t)
	rt29Fixture(t, cp)
	b := newRT29Client(t, cp.base)
	b.header.Set("Authorization", "Bearer "+consoleToken)
	for _, name := range []string{"%FF", "%C0%80", "%F4%90%80%80", "%ED%A0%80", "%FF%FE%00", "%00", "%2e%2e", "..%2Frt29a", "x%2F..%2Frt29a",
		"rt29a%2F", "a%2Fb", "%E2%80%AErt29a", "rt29a%0D%0ASet-Cookie:%20x=1", "%3Cscript%3E", strings.Repeat("a", 60000), "RT29A", "rt29a%20"} {
		short := name
		if len(short) > 40 {
			short = short[:40] + "…"
		}
		var wrong []string
		for _, route := range []struct{ method, suffix string }{{"GET", ""}, {"GET", "/export"}, {"GET", "/discard"},
			{"POST", "/keep"}, {"POST", "/discard"}, {"POST", "/promote"}} {
			var r rt29Resp
			if route.method == "GET" {
				r = b.get("/ui/sandboxes/" + name + route.suffix)
			} else {
				r = b.post("/ui/sandboxes/"+name+route.suffix, url.Values{"ttl": {"1h"}, "confirm": {"x"}, "dry_run": {"1"}})
			}
			if r.code != http.StatusNotFound && r.code != http.StatusBadRequest || strings.Contains(r.body, "ERROR 1300") ||
				strings.Contains(r.body, "read registry") || strings.Contains(r.body, rt29SandboxSecret) ||
				strings.Contains(strings.Join(r.header.Values("Set-Cookie"), ";"), "x=1") {
				wrong = append(wrong, fmt.Sprintf("%s …%s: HTTP %d %.120s", route.method, route.suffix, r.code, errorText(r.body)))
			}
		}
		if len(wrong) > 0 {
			t.Errorf("/ui/sandboxes/%s, want 404 on every route without the registry's error or another sandbox's page:\n  %s",
				short, strings.Join(wrong, "\n  "))
		}
	}
	// The flashes take a name from the query: text only.
	for _, p := range []string{"/ui/?discarded=" + url.QueryEscape(`<img src=x onerror=alert(1)>"'`), "/ui/?discarded=%FF%00%E2%80%AE",
		"/ui/sandboxes/rt29a?done=kept&discarded=%3Cb%3E"} {
		r := b.get(p)
		if r.code != http.StatusOK || strings.Contains(r.body, "<img") || strings.Contains(r.body, "\u202e") || strings.Contains(r.body, "<b>") {
			t.Errorf("GET %s: HTTP %d, markup or hidden characters in the page", p, r.code)
		}
	}
	if _, err := cp.api.Show(context.Background(), "rt29a"); err != nil {
		t.Errorf("rt29a after the odd names: %v", err)
	}
}

// TestRT29ConsoleHugeCells: the sandbox's page is bounded however large
// the sandbox's values are: a few rows of a few hundred kilobytes of '<'
// (each escaped as &lt;) make no page of megabytes (a sandbox user could
// otherwise make the page of their sandbox — and the proxy's memory as it
// renders it — as large as they like: 20 rows of 3 MB made a 180 MB page
// and +480 MB of the proxy's memory); EXPORT still has every byte. Rows
// past the 500 shown are counted.
func TestRT29ConsoleHugeCells(t *testing.T) {
	cp := startConsoleProxy(t)
	rt29Fixture(t, cp)
	c := cp.keptSandbox(t, "rt29w", "rt29c", time.Hour)
	const n, size = 6, 256 << 10
	for i := range n {
		mustExecC(t, c, "INSERT INTO wide VALUES (?, REPEAT('<', ?))", i+1, size)
	}
	var rows []string
	for i := range 620 {
		rows = append(rows, fmt.Sprintf("(%d, 'n%d', NULL)", 100+i, i))
	}
	mustExecC(t, c, "INSERT INTO items VALUES "+strings.Join(rows, ","))
	b := newRT29Client(t, cp.base)
	b.signIn(consoleToken)
	start := time.Now()
	r := b.get("/ui/sandboxes/rt29w")
	if r.code != http.StatusOK {
		t.Fatalf("the sandbox's page: HTTP %d %s", r.code, errorText(r.body))
	}
	t.Logf("the page of %d values of %d bytes and 620 rows: %d bytes in %v", n, size, len(r.body), time.Since(start).Round(time.Millisecond))
	if len(r.body) > 1<<20 {
		t.Errorf("the sandbox's page is %d bytes for %d values of %d bytes: the values are shown whole", len(r.body), n, size)
	}
	if !strings.Contains(r.body, "120 more rows are in EXPORT") {
		t.Errorf("the page does not count the rows past the 500 shown")
	}
	// The page asks for 500 rows of each table (the API's rows): the
	// server sends no more.
	for _, n := range []int{1, 7, 500} {
		d, err := cp.api.Diff(context.Background(), "rt29w", adminapi.DiffOptions{RowsPerTable: n})
		counts := map[string]int{}
		for _, ch := range d.Changes {
			if ch.Op != "ddl" {
				counts[ch.Table]++
			}
		}
		if err != nil || counts["rt29c.items"] != n || counts["rt29c.wide"] != min(n, 6) {
			t.Errorf("the API's diff with rows=%d: %v rows by table (%v), want %d of items and %d of wide", n, counts, err, n, min(n, 6))
		}
	}
	exp := b.get("/ui/sandboxes/rt29w/export")
	if exp.code != http.StatusOK || strings.Count(exp.body, "INSERT INTO `rt29c`.`wide`") < 1 || len(exp.body) < n*size {
		t.Errorf("EXPORT: HTTP %d, %d bytes", exp.code, len(exp.body))
	}
}

// TestRT29ConsoleTokenless: without a token the console reads metadata
// only (an upstream account with ALL PRIVILEGES changes nothing): no row
// of production's or the sandbox's in any page, no export, no keep,
// discard or promote; a hostile owner (a login name of HTML) is text.
// With --admin-tokenless-changes rows, keep and discard open, and promote
// stays refused, even with the page's CSRF token.
func TestRT29ConsoleTokenless(t *testing.T) {
	cp := startConsoleProxy(t)
	rt29Fixture(t, cp)
	db := leastPrivilegeEnv(t)
	root := openDB(t, db.DSN("")+"?multiStatements=true")
	const owner = `<img src=x onerror=alert(7)>"'`
	setUp(t, root, []string{"CREATE USER IF NOT EXISTS '" + strings.ReplaceAll(owner, "'", "''") + "'@'%' IDENTIFIED BY '" + sandboxPassword + "'",
		"GRANT SELECT ON rt29c.* TO '" + strings.ReplaceAll(owner, "'", "''") + "'@'%'",
		"GRANT ALL ON `\\_sqlfork%`.* TO '" + strings.ReplaceAll(owner, "'", "''") + "'@'%'"},
		"DROP USER IF EXISTS '"+strings.ReplaceAll(owner, "'", "''")+"'@'%'")
	hc := conn(t, openDB(t, strings.ReplaceAll(owner, ":", "")+":"+sandboxPassword+"@tcp("+cp.addr+")/rt29c"))
	mustExecC(t, hc, "SANDBOX CREATE rt29o")
	mustExecC(t, hc, "SANDBOX KEEP TTL 1h")
	t.Cleanup(func() { _ = cp.api.Discard(context.Background(), "rt29o") })
	mustExecC(t, hc, "UPDATE items SET name = 'owned' WHERE id = 3")

	ro := startRT29Console(t, "--upstream-user", db.User, "--upstream-password", db.Password)
	b := newRT29Client(t, ro)
	for _, p := range []string{"/ui/", "/ui/sandboxes/rt29a", "/ui/sandboxes/rt29o", "/ui/proxy"} {
		r := b.get(p)
		if r.code != http.StatusOK {
			t.Errorf("tokenless GET %s: HTTP %d", p, r.code)
		}
		for _, leak := range []string{rt29ProdSecret, rt29SandboxSecret, "owned", "<img", "uno"} {
			if strings.Contains(r.body, leak) {
				t.Errorf("tokenless GET %s shows %q", p, leak)
			}
		}
		securityHeadersOK(t, "tokenless GET "+p, r)
	}
	if r := b.get("/ui/"); !strings.Contains(r.body, "&lt;img src=x onerror=alert(7)&gt;&#34;&#39;") {
		t.Errorf("the list does not show the hostile owner as text")
	}
	if r := b.get("/ui/proxy"); !strings.Contains(r.body, "<code>"+db.User+"</code>") {
		t.Errorf("the proxy page does not name the upstream account %s (ALL PRIVILEGES)", db.User)
	}
	// A read-only console's pages have no form, hence no CSRF token: the
	// POSTs are refused by it or by the rules, 403 either way.
	token := ""
	for _, p := range []struct{ method, path string }{{"GET", "/ui/sandboxes/rt29a/export"}, {"GET", "/ui/sandboxes/rt29a/discard"},
		{"POST", "/ui/sandboxes/rt29a/keep"}, {"POST", "/ui/sandboxes/rt29a/discard"}, {"POST", "/ui/sandboxes/rt29a/promote"}} {
		var r rt29Resp
		if p.method == "GET" {
			r = b.get(p.path)
		} else {
			r = b.post(p.path, url.Values{"csrf": {token}, "ttl": {"0"}, "confirm": {"rt29a"}, "dry_run": {"1"}})
		}
		if r.code != http.StatusForbidden || strings.Contains(r.body, rt29SandboxSecret) {
			t.Errorf("tokenless %s %s: HTTP %d, want 403", p.method, p.path, r.code)
		}
	}
	// Even a bearer header with the token of another proxy changes nothing.
	if r := b.get("/ui/sandboxes/rt29a/export", "Authorization", "Bearer "+consoleToken); r.code != http.StatusForbidden {
		t.Errorf("tokenless export with a bearer header: HTTP %d, want 403", r.code)
	}

	ch := startRT29Console(t, "--admin-tokenless-changes")
	c := newRT29Client(t, ch)
	if r := c.get("/ui/sandboxes/rt29a"); r.code != http.StatusOK || !strings.Contains(r.body, rt29SandboxSecret) {
		t.Errorf("tokenless changes, the sandbox's page: HTTP %d, rows shown: %v", r.code, strings.Contains(r.body, rt29SandboxSecret))
	}
	token = c.csrf("/ui/sandboxes/rt29a")
	for _, f := range []url.Values{{"dry_run": {"1"}}, {"matching": {"sha256:" + strings.Repeat("a", 64)}}} {
		f.Set("csrf", token)
		if r := c.post("/ui/sandboxes/rt29a/promote", f); r.code != http.StatusForbidden {
			t.Errorf("tokenless changes, promote %v: HTTP %d, want 403", f, r.code)
		}
	}
	if r := c.post("/ui/sandboxes/rt29a/keep", url.Values{"csrf": {token}, "ttl": {"90m"}}); r.code != http.StatusSeeOther {
		t.Errorf("tokenless changes, keep: HTTP %d: %s", r.code, errorText(r.body))
	}
}

// TestRT29AdminListenerCrossSite: with --admin-tokenless-changes, the
// console refuses a form posted from another site, but the admin API
// beside it on the same listener does not: a page of any site the
// operator visits can send it "simple" cross-site POSTs (text/plain, no
// preflight) that create a sandbox for any owner, keep one, or RESET one
// (its forks dropped, its changes lost). They must be refused as the
// console's are (the CLI sends no Origin or Sec-Fetch-Site).
func TestRT29AdminListenerCrossSite(t *testing.T) {
	cp := startConsoleProxy(t)
	rt29Fixture(t, cp)
	base := startRT29Console(t, "--admin-tokenless-changes")
	c := newRT29Client(t, base)
	site := []string{"Origin", "http://evil.example", "Sec-Fetch-Site", "cross-site", "Content-Type", "text/plain"}
	t.Cleanup(func() { _ = cp.api.Discard(context.Background(), "rt29x") })
	if r := c.do("POST", "/api/v1/sandboxes", strings.NewReader(`{"name":"rt29x","owner":"`+sandboxUser+`","ttl":"1h"}`), site...); r.code != http.StatusForbidden {
		t.Errorf("a cross-site POST /api/v1/sandboxes: HTTP %d, want 403: %s", r.code, r.body)
	}
	if _, err := cp.api.Show(context.Background(), "rt29x"); !errors.Is(err, adminapi.ErrNotFound) {
		t.Errorf("the sandbox a cross-site POST asked for was made (%v)", err)
	}
	if r := c.do("POST", "/api/v1/sandboxes/rt29a/reset", nil, site...); r.code != http.StatusForbidden {
		t.Errorf("a cross-site POST …/reset: HTTP %d, want 403: %.300s", r.code, r.body)
	}
	if d, err := cp.api.Diff(context.Background(), "rt29a", adminapi.DiffOptions{Summary: true}); err != nil || len(d.Summary) == 0 {
		t.Errorf("rt29a after a cross-site reset: its changes are gone (%v, %v)", d.Summary, err)
	}
	if r := c.do("POST", "/api/v1/sandboxes/rt29a/keep?ttl=1s", nil, site...); r.code != http.StatusForbidden {
		t.Errorf("a cross-site POST …/keep: HTTP %d, want 403", r.code)
	}
	// The console's own forms on the same listener: refused.
	token := c.csrf("/ui/sandboxes/rt29a")
	if r := c.post("/ui/sandboxes/rt29a/keep", url.Values{"csrf": {token}, "ttl": {"1s"}}, "Origin", "http://evil.example", "Sec-Fetch-Site", "cross-site"); r.code != http.StatusForbidden {
		t.Errorf("a cross-site console keep: HTTP %d, want 403", r.code)
	}
}

// TestRT29AdminListenerRebinding: a tokenless admin listener on loopback
// answers whatever Host a request names, so a site the operator visits can
// rebind its own name to 127.0.0.1 and read the console and the API
// same-origin: with --admin-tokenless-changes the sandbox's rows
// (production's among them) and EXPORT, and a CSRF token its forms then
// post (a discard). A loopback-only tokenless listener should answer only
// Hosts that name loopback (127.0.0.1, [::1], localhost).
func TestRT29AdminListenerRebinding(t *testing.T) {
	cp := startConsoleProxy(t)
	rt29Fixture(t, cp)
	base := startRT29Console(t, "--admin-tokenless-changes")
	port := base[strings.LastIndex(base, ":")+1:]
	c := newRT29Client(t, base)
	host := "rebind.attacker.example:" + port
	for _, p := range []string{"/ui/sandboxes/rt29a", "/ui/sandboxes/rt29a/export", "/api/v1/sandboxes/rt29a/diff", "/api/v1/sandboxes/rt29a/export"} {
		r := c.get(p, "Host", host)
		if r.code == http.StatusOK || strings.Contains(r.body, rt29SandboxSecret) {
			t.Errorf("GET %s with Host %s: HTTP %d, the sandbox's rows shown: %v", p, host, r.code, strings.Contains(r.body, rt29SandboxSecret))
		}
	}
	for _, h := range []string{"127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port} {
		if r := c.get("/ui/", "Host", h); r.code != http.StatusOK {
			t.Errorf("GET /ui/ with Host %s: HTTP %d, want 200", h, r.code)
		}
	}
}

// TestRT29ConsoleErrorText: an error the console shows is text as the
// sandbox's names are: a promote that fails on a table the sandbox named
// with a bidirectional override (production made a table of that name,
// which another table's foreign key holds, so the plan's DROP TABLE fails)
// shows the override as an escape, not raw (it would reorder the
// message's text).
func TestRT29ConsoleErrorText(t *testing.T) {
	cp := startConsoleProxy(t)
	rt29Fixture(t, cp)
	db := leastPrivilegeEnv(t)
	root := openDB(t, db.DSN("")+"?multiStatements=true")
	const table = "bd\u202eelbat"
	c := cp.keptSandbox(t, "rt29e", "rt29c", time.Hour)
	mustExecC(t, c, "CREATE TABLE "+quoteIdent(table)+" (id INT PRIMARY KEY, v INT)")
	mustExecC(t, c, "INSERT INTO "+quoteIdent(table)+" VALUES (1, 1)")
	mustExecC(t, root, "CREATE TABLE rt29c."+quoteIdent(table)+" (id INT PRIMARY KEY) ENGINE=InnoDB;"+
		"CREATE TABLE rt29c.child (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES rt29c."+quoteIdent(table)+" (id)) ENGINE=InnoDB")
	b := newRT29Client(t, cp.base)
	b.header.Set("Authorization", "Bearer "+consoleToken)
	r := b.post("/ui/sandboxes/rt29e/promote", url.Values{"dry_run": {"1"}, "strategy": {"ours"}})
	m := regexp.MustCompile(`name="matching" value="(sha256:[0-9a-f]{64})"`).FindStringSubmatch(r.body)
	if r.code != http.StatusOK || m == nil {
		t.Fatalf("dry run: HTTP %d %s", r.code, errorText(r.body))
	}
	if strings.Contains(r.body, "\u202e") {
		t.Errorf("the dry run's page holds the override raw")
	}
	r = b.post("/ui/sandboxes/rt29e/promote", url.Values{"strategy": {"ours"}, "matching": {m[1]}})
	msg := errorText(r.body)
	if r.code < 400 || !strings.Contains(msg, "DROP TABLE") {
		t.Fatalf("the promote: HTTP %d %q", r.code, msg)
	}
	if strings.Contains(r.body, "\u202e") || !strings.Contains(msg, `bd\u202eelbat`) {
		t.Errorf("the promote's error shows the table's name with its override raw, not as an escape: %+q", msg)
	}
}

// TestRT29ConsoleIgnorableCharacters: characters that render as nothing
// (default-ignorable: a combining grapheme joiner, a Hangul filler, a
// variation selector) in a table's, a column's name and a value are shown
// as escapes, as bidirectional and zero-width ones are: else the table
// `t<U+034F>` a sandbox created reads as `t` on its page and in its
// plan. (quote.Display escapes Cf, Zl, Zp and what unicode.IsPrint
// refuses; these are Mn and Lo.)
func TestRT29ConsoleIgnorableCharacters(t *testing.T) {
	cp := startConsoleProxy(t)
	rt29Fixture(t, cp)
	c := cp.keptSandbox(t, "rt29i", "rt29c", time.Hour)
	const table, col, value = "t\u034f", "c\u3164", "v\ufe0f"
	mustExecC(t, c, "CREATE TABLE "+quoteIdent(table)+" (id INT PRIMARY KEY, "+quoteIdent(col)+" VARCHAR(20))")
	mustExecC(t, c, "INSERT INTO "+quoteIdent(table)+" VALUES (1, ?)", value)
	b := newRT29Client(t, cp.base)
	b.header.Set("Authorization", "Bearer "+consoleToken)
	page := b.get("/ui/sandboxes/rt29i")
	plan := b.post("/ui/sandboxes/rt29i/promote", url.Values{"dry_run": {"1"}})
	for what, r := range map[string]rt29Resp{"the sandbox's page": page, "the dry run's page": plan} {
		if r.code != http.StatusOK {
			t.Fatalf("%s: HTTP %d %s", what, r.code, errorText(r.body))
		}
		// A form's value attribute holds the name as it is, for the form to
		// send it back: it is not shown.
		shown := regexp.MustCompile(`value="[^"]*"`).ReplaceAllString(r.body, "")
		for _, ch := range []string{"\u034f", "\u3164", "\ufe0f"} {
			if strings.Contains(shown, ch) {
				t.Errorf("%s shows %+q raw (it renders as nothing)", what, ch)
			}
		}
	}
}
