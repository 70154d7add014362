package console

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// TestConsoleEscapes: every name and value a sandbox controls — a table
// named <script>, a column a"b'c<i>, a value closing the cell, DDL closing
// its <pre>, an owner — is text on every page that shows it; no markup of
// theirs reaches the page, and the policy allows no script anyway.
func TestConsoleEscapes(t *testing.T) {
	_, _, srv := testConsole(t, "", true)
	b := newBrowser(t, srv)
	raw := []string{hostileTable, hostileColumn, hostileValue, "<i>", "<img", "</pre><script>", "own<er>"}
	escaped := []string{"app.&lt;script&gt;alert(1)&lt;/script&gt;", "a&#34;b&#39;c&lt;i&gt;", "&lt;/td&gt;&lt;img src=x onerror=alert(2)&gt;",
		"&lt;/pre&gt;&lt;script&gt;alert(3)&lt;/script&gt;", "own&lt;er&gt;"}
	pages := map[string][]string{
		"/ui/":                      {escaped[4]},
		"/ui/sandboxes/box":         escaped,
		"/ui/sandboxes/box/discard": nil,
	}
	for path, want := range pages {
		code, body, _ := b.get(path)
		if code != http.StatusOK {
			t.Fatalf("GET %s: HTTP %d", path, code)
		}
		for _, r := range raw {
			if strings.Contains(body, r) {
				t.Errorf("GET %s holds %q unescaped", path, r)
			}
		}
		for _, e := range want {
			if !strings.Contains(body, e) {
				t.Errorf("GET %s lacks %q", path, e)
			}
		}
		if n := strings.Count(body, "<script"); n != 0 {
			t.Errorf("GET %s holds %d script elements", path, n)
		}
	}
	_, page, _ := b.get("/ui/sandboxes/box")
	code, body, _ := b.post("/ui/sandboxes/box/promote", url.Values{"csrf": {csrfOf(t, page)}, "dry_run": {"1"},
		"table": {"app." + hostileTable}})
	if code != http.StatusForbidden { // tokenless: promote is never offered
		t.Fatalf("tokenless promote: HTTP %d\n%s", code, body)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/ui/", nil)
	resp, err := b.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for h, want := range map[string]string{"Content-Security-Policy": "default-src 'none'", "X-Frame-Options": "DENY",
		"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"} {
		if got := resp.Header.Get(h); !strings.Contains(got, want) {
			t.Errorf("header %s = %q, want %q in it", h, got, want)
		}
	}
}

// TestConsoleSandboxPage: the sandbox page shows its state, tables and
// copy progress, DIFF SUMMARY linked to each table's rows, the changed
// cells as before → after, a conflict's production value, DDL as SQL; and
// offers export, keep, discard and a promote dry run as the rules allow.
func TestConsoleSandboxPage(t *testing.T) {
	tests := []struct {
		name             string
		token            string
		tokenless        bool
		want, wantAbsent []string
	}{
		{"signed in", "s3cret", false, []string{
			`<li class="badge kept">kept</li>`, `<li class="badge expiring">expiring</li>`, "TTL left: 30m",
			`<progress value="250" max="1000"`, "25%", `<a href="#table-1">`, `id="table-1"`,
			`<td class="changed"><del>&#34;old&#34;</del>`, `<ins>&#34;&lt;/td&gt;`, `<mark class="prod">production: &#34;p&#34;</mark>`,
			`<pre class="ddl"><code>ALTER TABLE app.t ADD COLUMN x INT`, `<td class="added"><ins>&#34;new&#34;</ins></td>`,
			`<td class="removed"><del>&#34;gone&#34;</del></td>`, `<td class="same">5</td>`,
			`href="/ui/sandboxes/box/export"`, `action="/ui/sandboxes/box/keep"`, `href="/ui/sandboxes/box/discard"`,
			`action="/ui/sandboxes/box/promote"`, `name="dry_run" value="1"`, `value="app.&lt;script&gt;alert(1)&lt;/script&gt;"`,
		}, nil},
		{"tokenless changes", "", true, []string{`action="/ui/sandboxes/box/keep"`, "DIFF SUMMARY", "promoting a sandbox writes production"},
			[]string{`action="/ui/sandboxes/box/promote"`}},
		{"read-only", "", false, []string{"read-only", "a sandbox&#39;s diff and export show rows", "keeping and discarding sandboxes needs admin-token"},
			[]string{"DIFF SUMMARY", `action="/ui/sandboxes/box/keep"`, `/export"`, `action="/ui/sandboxes/box/promote"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, f, srv := testConsole(t, tc.token, tc.tokenless)
			b := newBrowser(t, srv)
			if tc.token != "" {
				b.header.Set("Authorization", "Bearer "+tc.token)
			}
			code, body, _ := b.get("/ui/sandboxes/box")
			if code != http.StatusOK {
				t.Fatalf("HTTP %d\n%s", code, body)
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("the page lacks %s", w)
				}
			}
			for _, w := range tc.wantAbsent {
				if strings.Contains(body, w) {
					t.Errorf("the page holds %s", w)
				}
			}
			diffed := strings.Contains(strings.Join(f.calls(), "\n"), "diff box")
			if diffed != !strings.Contains(tc.name, "read-only") {
				t.Errorf("the sandboxes' Diff asked: %v (%v)", diffed, f.calls())
			}
		})
	}
}

// TestConsolePromote: a dry run answers the plan and a form that applies
// exactly it (matching its digest, with its strategy and tables); the
// apply commits; a promote without a reviewed plan is refused before the
// sandboxes are asked, and a stale digest gets the API's 409.
func TestConsolePromote(t *testing.T) {
	_, f, srv := testConsole(t, "s3cret", false)
	b := newBrowser(t, srv)
	if code, _, _ := b.post("/ui/login", url.Values{"token": {"s3cret"}}); code != http.StatusSeeOther {
		t.Fatalf("sign in: HTTP %d", code)
	}
	_, page, _ := b.get("/ui/sandboxes/box")
	csrf := csrfOf(t, page)
	code, plan, _ := b.post("/ui/sandboxes/box/promote", url.Values{"csrf": {csrf}, "dry_run": {"1"}, "strategy": {"Ours"},
		"table": {"app.t"}})
	if code != http.StatusOK {
		t.Fatalf("dry run: HTTP %d\n%s", code, plan)
	}
	for _, w := range []string{`name="matching" value="` + fakeDigest + `"`, `name="strategy" value="ours"`, `name="table" value="app.t"`,
		"Promote with strategy ours", "UPDATE `app`.`&lt;script&gt;alert(1)&lt;/script&gt;` SET `n` = 6", `<span class="op conflict">conflict</span>`} {
		if !strings.Contains(plan, w) {
			t.Errorf("the dry run's page lacks %s", w)
		}
	}
	form := url.Values{"csrf": {csrf}}
	for _, m := range regexp.MustCompile(`<input type="hidden" name="(strategy|table|matching)" value="([^"]*)">`).FindAllStringSubmatch(plan, 3) {
		form.Add(m[1], m[2])
	}
	code, done, _ := b.post("/ui/sandboxes/box/promote", form)
	if code != http.StatusOK || !strings.Contains(done, "promoted 3 rows") || !strings.Contains(done, "committed") {
		t.Fatalf("apply: HTTP %d\n%s", code, done)
	}
	if code, _, _ := b.post("/ui/sandboxes/box/promote", url.Values{"csrf": {csrf}, "strategy": {"ours"}}); code != http.StatusBadRequest {
		t.Errorf("a promote with no reviewed plan: HTTP %d, want 400", code)
	}
	stale := "sha256:" + strings.Repeat("0", 64)
	if code, body, _ := b.post("/ui/sandboxes/box/promote", url.Values{"csrf": {csrf}, "matching": {stale}}); code != http.StatusConflict ||
		!strings.Contains(body, "the plan changed") {
		t.Errorf("a stale plan: HTTP %d\n%s", code, body)
	}
	want := []string{"promote box strategy=ours tables=app.t dry=true matching=",
		"promote box strategy=ours tables=app.t dry=false matching=" + fakeDigest,
		"promote box strategy=fail tables= dry=false matching=" + stale}
	var got []string
	for _, c := range f.calls() {
		if strings.HasPrefix(c, "promote") {
			got = append(got, c)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("promotes asked:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestConsoleKeepDiscardExport: keep reads its TTL as SANDBOX KEEP does;
// a discard needs the sandbox's name typed; export downloads.
func TestConsoleKeepDiscardExport(t *testing.T) {
	_, f, srv := testConsole(t, "", true)
	b := newBrowser(t, srv)
	_, page, _ := b.get("/ui/sandboxes/box")
	csrf := csrfOf(t, page)
	tests := []struct {
		path   string
		form   url.Values
		want   int
		loc    string
		called string
	}{
		{"/ui/sandboxes/box/keep", url.Values{"ttl": {"2h"}}, http.StatusSeeOther, "/ui/sandboxes/box?done=kept", "keep box 2h0m0s"},
		{"/ui/sandboxes/box/keep", url.Values{"ttl": {" "}}, http.StatusSeeOther, "/ui/sandboxes/box?done=kept", "keep box default"},
		{"/ui/sandboxes/box/keep", url.Values{"ttl": {"soon"}}, http.StatusBadRequest, "", ""},
		{"/ui/sandboxes/box/discard", url.Values{"confirm": {"bo"}}, http.StatusBadRequest, "", ""},
		{"/ui/sandboxes/box/discard", url.Values{"confirm": {"box"}}, http.StatusSeeOther, "/ui/?discarded=box", "discard box"},
		{"/ui/sandboxes/nobox/discard", url.Values{"confirm": {"nobox"}}, http.StatusNotFound, "", "discard nobox"},
	}
	for _, tc := range tests {
		before := len(f.calls())
		tc.form.Set("csrf", csrf)
		code, body, loc := b.post(tc.path, tc.form)
		if code != tc.want || loc != tc.loc {
			t.Errorf("POST %s %v: HTTP %d to %q, want %d to %q\n%.400s", tc.path, tc.form, code, loc, tc.want, tc.loc, body)
		}
		var changes []string
		for _, c := range f.calls()[before:] {
			if strings.HasPrefix(c, "keep") || strings.HasPrefix(c, "discard") {
				changes = append(changes, c)
			}
		}
		if strings.Join(changes, ",") != tc.called {
			t.Errorf("POST %s %v asked %v, want %q", tc.path, tc.form, changes, tc.called)
		}
	}
	if _, body, _ := b.get("/ui/?discarded=box"); !strings.Contains(body, "Sandbox <strong>box</strong> was discarded.") {
		t.Errorf("the list after a discard does not say so")
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/ui/sandboxes/box/export", nil)
	resp, err := b.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if cd := resp.Header.Get("Content-Disposition"); cd != `attachment; filename=sandbox-box.sql` ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Errorf("export: %q, %q", cd, resp.Header.Get("Content-Type"))
	}
	if got := exportFile(`a"b/../<c>`); got != "sandbox-a_b_____c_.sql" {
		t.Errorf("exportFile = %q", got)
	}
}

// TestConsoleProxyPage: the proxy page shows where clients connect, the
// upstream, the accounts' checks (from the metric when no Checks are
// given), the metrics now and the charts of their samples.
func TestConsoleProxyPage(t *testing.T) {
	c, _, srv := testConsole(t, "", false)
	c.sample()
	c.sample()
	b := newBrowser(t, srv)
	code, body, _ := b.get("/ui/proxy")
	if code != http.StatusOK {
		t.Fatalf("HTTP %d", code)
	}
	for _, w := range []string{"<code>127.0.0.1:3307</code>", "<code>db:3306</code>", "not checked", "upstream account",
		"Client connections open", `<td class="num">3</td>`, `<svg viewBox="0 0 320 80" role="img"`, `<polyline class="series" points="`,
		"Client connections: 3 now; at most 3"} {
		if !strings.Contains(body, w) {
			t.Errorf("the proxy page lacks %s", w)
		}
	}
}

// TestConsoleLongPlan: a dry run's page shows maxPlanShown statements and
// counts the rest, which a form downloads whole, with the conflicts as
// comments, as long as the plan is still the one the page showed.
func TestConsoleLongPlan(t *testing.T) {
	_, f, srv := testConsole(t, "s3cret", false)
	f.planRows = maxPlanShown + 5
	b := newBrowser(t, srv)
	if code, _, _ := b.post("/ui/login", url.Values{"token": {"s3cret"}}); code != http.StatusSeeOther {
		t.Fatalf("sign in: HTTP %d", code)
	}
	_, page, _ := b.get("/ui/sandboxes/box")
	csrf := csrfOf(t, page)
	code, plan, _ := b.post("/ui/sandboxes/box/promote", url.Values{"csrf": {csrf}, "dry_run": {"1"}})
	if code != http.StatusOK || !strings.Contains(plan, "7 more statements of this plan are not shown here") ||
		strings.Count(plan, `<li class="step`) != maxPlanShown || !strings.Contains(plan, `name="expect" value="`+fakeDigest+`"`) {
		t.Fatalf("dry run: HTTP %d, %d steps shown\n%.2000s", code, strings.Count(plan, `<li class="step`), plan)
	}
	form := url.Values{"csrf": {csrf}, "dry_run": {"1"}, "download": {"1"}, "expect": {fakeDigest}}
	req, _ := http.NewRequest(http.MethodPost, b.base+"/ui/sandboxes/box/promote", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := b.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text, h := string(body), resp.Header
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/plain") ||
		!strings.Contains(h.Get("Content-Disposition"), "sandbox-box-plan.sql") {
		t.Fatalf("the plan's download: HTTP %d %v", resp.StatusCode, h)
	}
	if n := strings.Count(text, ";\n"); n != maxPlanShown+6 || !strings.Contains(text, "-- conflict: app.t") ||
		!strings.Contains(text, fakeDigest) || strings.Contains(text, "\n"+hostileColumn) {
		t.Errorf("the plan's download: %d statements, want %d:\n%.600s", n, maxPlanShown+6, text)
	}
	form.Set("expect", "sha256:"+strings.Repeat("0", 64))
	if code, body, _ := b.post("/ui/sandboxes/box/promote", form); code != http.StatusConflict || !strings.Contains(body, "the plan changed since") {
		t.Errorf("a download of a plan that changed: HTTP %d", code)
	}
}
