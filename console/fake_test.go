package console

import (
	"context"
	"encoding/json"
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

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
)

// testNow is the fake clock of the console's tests.
var testNow = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

// hostile is a name and a value a sandbox controls, made to break out of
// HTML: as a table, a column, a value and a sandbox's owner.
const (
	hostileTable  = `<script>alert(1)</script>`
	hostileColumn = `a"b'c<i>`
	hostileValue  = `</td><img src=x onerror=alert(2)>`
)

// fakeSandboxes is adminapi.Sandboxes over two sandboxes, "box" (with a
// hostile table) and the anonymous "sb-1a2b"; it records what it is asked.
type fakeSandboxes struct {
	mu    sync.Mutex
	asked []string
	// planRows adds that many statements to a dry run's plan.
	planRows int
}

func (f *fakeSandboxes) record(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, s)
}

// calls is what it was asked, in order.
func (f *fakeSandboxes) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.asked...)
}

func fakeBoxes() []adminapi.Sandbox {
	created := testNow.Add(-3 * time.Hour)
	expires := testNow.Add(30 * time.Minute)
	return []adminapi.Sandbox{
		{ID: "77aa", Name: "box", State: "kept", Owner: `own<er>`, Created: created, Expires: &expires, Connections: 1,
			TableCount: 2, Bytes: 49152, Changes: "unpromoted"},
		{ID: "1a2b", Name: "sb-1a2b", State: "active", Owner: "app", Created: testNow.Add(-time.Minute), Changes: "promoted"},
	}
}

func (f *fakeSandboxes) List(context.Context) ([]adminapi.Sandbox, error) {
	f.record("list")
	return fakeBoxes(), nil
}

func (f *fakeSandboxes) Show(_ context.Context, name string) (adminapi.Sandbox, error) {
	f.record("show " + name)
	for _, b := range fakeBoxes() {
		if b.Name == name {
			if name == "box" {
				b.Tables = []adminapi.Table{{Table: "app." + hostileTable, State: "fork", Rows: 3, Bytes: 16384},
					{Table: "app.big", State: "filling", Fill: &adminapi.Fill{Copied: 250, Total: 1000, Started: testNow}}}
			}
			return b, nil
		}
	}
	return adminapi.Sandbox{}, fmt.Errorf("%w: no sandbox %q", adminapi.ErrNotFound, name)
}

func (f *fakeSandboxes) Create(context.Context, string, string, *time.Duration) (adminapi.Sandbox, error) {
	return adminapi.Sandbox{}, fmt.Errorf("%w: not in the console", adminapi.ErrBadRequest)
}

func (f *fakeSandboxes) Keep(_ context.Context, name string, ttl *time.Duration) (adminapi.Sandbox, error) {
	f.record(fmt.Sprintf("keep %s %v", name, fmtTTL(ttl)))
	return f.Show(context.Background(), name)
}

func fmtTTL(ttl *time.Duration) string {
	if ttl == nil {
		return "default"
	}
	return ttl.String()
}

func (f *fakeSandboxes) Discard(_ context.Context, name string) error {
	f.record("discard " + name)
	_, err := f.Show(context.Background(), name)
	return err
}

// fakeChanges are box's changes: an ALTER, an update of the hostile
// column to a hostile value, an insert, a delete and a conflict.
func fakeChanges() []adminapi.DiffChange {
	t := "app." + hostileTable
	col, _ := json.Marshal(hostileColumn)
	val, _ := json.Marshal(hostileValue)
	return []adminapi.DiffChange{
		{Table: t, Op: "ddl", After: json.RawMessage(`"ALTER TABLE app.t ADD COLUMN x INT -- </pre><script>alert(3)</script>"`)},
		{Table: t, Op: "update", Key: json.RawMessage(`{"id":1}`), Before: json.RawMessage(`{"id":1,` + string(col) + `:"old","n":5}`),
			After: json.RawMessage(`{"id":1,` + string(col) + `:` + string(val) + `,"n":5}`)},
		{Table: t, Op: "insert", Key: json.RawMessage(`{"id":2}`), After: json.RawMessage(`{"id":2,` + string(col) + `:"new","n":null}`)},
		{Table: t, Op: "delete", Key: json.RawMessage(`{"id":3}`), Before: json.RawMessage(`{"id":3,` + string(col) + `:"gone","n":1}`)},
		{Table: t, Op: "conflict", Key: json.RawMessage(`{"id":4}`), Before: json.RawMessage(`{"id":4,` + string(col) + `:"a","n":1}`),
			After: json.RawMessage(`{"id":4,` + string(col) + `:"b","n":1}`), Production: json.RawMessage(`{"id":4,` + string(col) + `:"p","n":1}`)},
	}
}

func (f *fakeSandboxes) Diff(_ context.Context, name string, o adminapi.DiffOptions) (adminapi.Diff, error) {
	f.record(fmt.Sprintf("diff %s summary=%v", name, o.Summary))
	if _, err := f.Show(context.Background(), name); err != nil {
		return adminapi.Diff{}, err
	}
	if name != "box" {
		return adminapi.Diff{}, nil
	}
	if o.Summary {
		return adminapi.Diff{Summary: []adminapi.DiffTable{{Table: "app." + hostileTable, Change: "altered", Inserted: 1, Updated: 1,
			Deleted: 1, Conflicts: 1, KeyKind: "primary", Method: "capture"}}}, nil
	}
	return adminapi.Diff{Changes: fakeChanges()}, nil
}

func (f *fakeSandboxes) Export(_ context.Context, name string) (string, error) {
	f.record("export " + name)
	return "UPDATE `app`.`t` SET `n` = 6;\n", nil
}

// fakeDigest is the digest of every dry run of the fake.
const fakeDigest = "sha256:cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd"

func (f *fakeSandboxes) Promote(_ context.Context, name string, o adminapi.PromoteOptions) (adminapi.Promoted, error) {
	f.record(fmt.Sprintf("promote %s strategy=%s tables=%s dry=%v matching=%s", name, o.Strategy, strings.Join(o.Tables, ","), o.DryRun, o.Matching))
	if o.DryRun {
		p := adminapi.Promoted{Sandbox: name, Strategy: o.Strategy, Outcome: adminapi.OutcomeDryRun, DryRun: true, Digest: fakeDigest,
			Info: "dry run: nothing was applied", Plan: []adminapi.PlanStep{{Step: "conflict", Statement: "app.t {\"id\":4}: " + hostileColumn},
				{Step: "rows", Statement: "UPDATE `app`.`" + hostileTable + "` SET `n` = 6"}}}
		for i := range f.planRows {
			p.Plan = append(p.Plan, adminapi.PlanStep{Step: "rows", Statement: fmt.Sprintf("INSERT INTO `app`.`t` VALUES (%d)", i)})
		}
		return p, nil
	}
	if o.Matching != fakeDigest {
		return adminapi.Promoted{}, fmt.Errorf("%w: the plan changed since the dry run", adminapi.ErrConflict)
	}
	return adminapi.Promoted{Sandbox: name, Strategy: o.Strategy, Outcome: "committed", Info: "promoted 3 rows", Rows: 3}, nil
}

func (f *fakeSandboxes) Reset(context.Context, string, []string) (adminapi.ResetResult, error) {
	return adminapi.ResetResult{}, fmt.Errorf("%w: not in the console", adminapi.ErrBadRequest)
}

// testConsole serves a console over a fake with token and tokenless; the
// console, its fake, and the server.
func testConsole(t *testing.T, token string, tokenless bool) (*Console, *fakeSandboxes, *httptest.Server) {
	t.Helper()
	f := &fakeSandboxes{}
	reg := prometheus.NewRegistry()
	conns := prometheus.NewGauge(prometheus.GaugeOpts{Name: "sqlfork_client_connections", Help: "open"})
	conns.Set(3)
	reg.MustRegister(conns)
	c, err := New(Options{API: adminapi.Options{Sandboxes: f, Token: token, TokenlessChanges: tokenless,
		Proxy: adminapi.Proxy{Listen: "127.0.0.1:3307", UserSeparator: "+"}}, Upstream: "db:3306", Mode: "transparent",
		Gatherer: reg, Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	c.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return c, f, srv
}

// browser is an HTTP client that keeps cookies and does not follow
// redirects, as the tests read them.
type browser struct {
	t    *testing.T
	base string
	hc   *http.Client
	// header is added to every request.
	header http.Header
}

func newBrowser(t *testing.T, srv *httptest.Server) *browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{t: t, base: srv.URL, header: http.Header{}, hc: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// get is GET path: status, body and Location.
func (b *browser) get(path string) (int, string, string) {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, b.base+path, nil)
	return b.do(req)
}

// post is POST of form to path, from the console's own origin.
func (b *browser) post(path string, form url.Values) (int, string, string) {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, b.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return b.do(req)
}

func (b *browser) do(req *http.Request) (int, string, string) {
	b.t.Helper()
	for k, v := range b.header {
		req.Header[k] = v
	}
	resp, err := b.hc.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp.Header.Get("Location")
}

// csrfOf is the CSRF token of a page's forms.
func csrfOf(t *testing.T, body string) string {
	t.Helper()
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no CSRF token in the page:\n%s", body)
	}
	return m[1]
}
