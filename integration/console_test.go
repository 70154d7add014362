package integration

import (
	"context"
	"database/sql"
	"errors"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
)

// consoleToken is the admin token of the console tests' proxies.
const consoleToken = "console-s3cret"

// consoleProxy is a proxy process whose admin listener serves the console.
type consoleProxy struct {
	addr string // where clients connect
	base string // http://<admin listener>
	api  *adminapi.Client
}

// startConsoleProxy starts a proxy process in explicit mode with the
// least-privilege account, an admin token and a promote account, and
// waits for its admin listener.
func startConsoleProxy(t *testing.T) consoleProxy {
	t.Helper()
	db := leastPrivilegeEnv(t)
	metricsAddr := freeAddr(t)
	p := startProxyProcess(t, db, "--mode", "explicit", "--metrics-listen", metricsAddr, "--admin-token", consoleToken,
		"--promote-user", db.User, "--promote-password", db.Password)
	cp := consoleProxy{addr: p.addr, base: "http://" + metricsAddr, api: &adminapi.Client{BaseURL: "http://" + metricsAddr, Token: consoleToken}}
	testkit.Eventually(t, "the admin listener", func() bool {
		resp, err := http.Get(cp.base + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == http.StatusOK
	})
	return cp
}

// keptSandbox makes the sandbox name for the sandbox user through the
// admin API, kept for ttl and discarded when the test ends (unless the test
// did), and opens a connection to it in database db.
func (cp consoleProxy) keptSandbox(t *testing.T, name, db string, ttl time.Duration) *sql.Conn {
	t.Helper()
	if _, err := cp.api.Create(context.Background(), name, sandboxUser, &ttl); err != nil {
		t.Fatalf("create sandbox %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := cp.api.Discard(context.Background(), name); err != nil && !errors.Is(err, adminapi.ErrNotFound) {
			t.Errorf("discard sandbox %s: %v", name, err)
		}
	})
	return conn(t, openDB(t, sandboxUser+"+"+name+":"+sandboxPassword+"@tcp("+cp.addr+")/"+db))
}

// signIn opens the console, which asks to sign in, and signs in with the
// admin token.
func (cp consoleProxy) signIn(t *testing.T, ctx context.Context) {
	t.Helper()
	browse(t, ctx, "open the console", chromedp.Navigate(cp.base+"/ui/"))
	if loc := evalJS[string](t, ctx, `location.pathname + location.search`); loc != "/ui/login?next=%2Fui%2F" {
		t.Fatalf("the console unsigned is at %s, not its sign-in form", loc)
	}
	checkLabels(t, ctx, "the sign-in form")
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("token"), consoleToken)); err != nil {
		t.Fatal(err)
	}
	if code := browse(t, ctx, "sign in", chromedp.Click(chromedp.CSS(`form[action="/ui/login"] button`))); code != http.StatusOK {
		t.Fatalf("sign in: HTTP %d", code)
	}
	if got := evalJS[string](t, ctx, `location.pathname + " " + document.cookie`); got != "/ui/ " {
		t.Fatalf("after signing in: %q (the session cookie must be HttpOnly, invisible to scripts)", got)
	}
}

// TestConsoleBrowser drives the web console in a real chromium against a
// real proxy and MariaDB: sign in with the admin token; the list shows the
// sandboxes; a sandbox's page shows DIFF SUMMARY and the changed rows,
// changed cells as before → after, the conflict with production's value,
// the created table's DDL; a dry run with the strategy ours shows its plan
// and digest, and its page's button promotes exactly it into production;
// a discard asks for the sandbox's name and drops it; the proxy page shows
// the accounts' checks and the charts. SQLFORK_SCREENSHOTS=dir writes the
// pages' screenshots (make screenshots).
func TestConsoleBrowser(t *testing.T) {
	ctx, watch := newBrowserTab(t)
	db := leastPrivilegeEnv(t)
	root := openDB(t, db.DSN("")+"?multiStatements=true")
	readOnlyDatabase(t, root, "console_shop")
	mustExecC(t, root, `CREATE TABLE console_shop.products (id INT PRIMARY KEY, sku VARCHAR(16) NOT NULL, name VARCHAR(64) NOT NULL,
  price DECIMAL(10,2) NOT NULL, stock INT NOT NULL) ENGINE=InnoDB;
INSERT INTO console_shop.products VALUES (1, 'KB-001', 'Keyboard', 89.90, 12), (2, 'MS-002', 'Mouse', 24.50, 40),
  (3, 'CB-004', 'USB cable', 7.99, 100), (4, 'HD-010', 'Headset', 59.00, 0);`)
	cp := startConsoleProxy(t)
	pricing := cp.keptSandbox(t, "pricing", "console_shop", 2*time.Hour)
	for _, q := range []string{"UPDATE products SET price = 99.00 WHERE sku = 'KB-001'", "UPDATE products SET price = 22.00, stock = 35 WHERE id = 2",
		"INSERT INTO products VALUES (5, 'WC-020', 'Webcam', 49.00, 8)", "DELETE FROM products WHERE id = 4",
		"CREATE TABLE coupons (code VARCHAR(16) PRIMARY KEY, percent INT NOT NULL)", "INSERT INTO coupons VALUES ('WELCOME10', 10)"} {
		mustExecC(t, pricing, q)
	}
	scratch := cp.keptSandbox(t, "scratch", "console_shop", 2*time.Hour)
	mustExecC(t, scratch, "UPDATE products SET stock = 0 WHERE id = 3")
	restock := cp.keptSandbox(t, "restock", "console_shop", 30*time.Minute) // expiring
	mustExecC(t, restock, "UPDATE products SET stock = stock + 50")
	// Production changes a row the sandbox changed: a conflict.
	mustExecC(t, root, "UPDATE console_shop.products SET price = 25.00 WHERE id = 2")

	cp.signIn(t, ctx)
	names := evalJS[[]string](t, ctx, `[...document.querySelectorAll('table.list tbody th a')].map(a => a.textContent)`)
	if !slices.Equal(names, []string{"pricing", "restock", "scratch"}) {
		t.Fatalf("the list shows %v", names)
	}
	if row := evalJS[string](t, ctx, `document.querySelector('a[href="/ui/sandboxes/restock"]').closest('tr').innerText`); !regexp.MustCompile(
		`^restock\s+sbx\s+kept\s+expiring\s+\S+\s+(30m|[12]\dm( \d+s)?)\s+1\s+1\s`).MatchString(row) {
		t.Errorf("the list's row of restock: %q", row)
	}
	row := evalJS[string](t, ctx, `document.querySelector('a[href="/ui/sandboxes/pricing"]').closest('tr').innerText`)
	// Its TTL: 2h, less the time since it was made.
	if !regexp.MustCompile(`^pricing\s+sbx\s+kept\s+\S+\s+(2h|1h( \d+m)?)\s+1\s+2\s+\d+ KiB\s+unreviewed changes\s+complete$`).MatchString(row) {
		t.Errorf("the list's row of pricing: %q", row)
	}
	screenshot(t, ctx, "sandboxes")
	// The keyboard: the first Tab reaches the skip link, which leads to the
	// content, whose first link is a sandbox's.
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
		t.Fatal(err)
	}
	if got := evalJS[string](t, ctx, `document.activeElement.textContent`); got != "Skip to content" {
		t.Errorf("the first Tab focuses %q, not the skip link", got)
	}
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Enter), chromedp.KeyEvent(kb.Tab)); err != nil {
		t.Fatal(err)
	}
	if got := evalJS[string](t, ctx, `location.hash + " " + document.activeElement.textContent`); got != "#main pricing" {
		t.Errorf("the skip link, then Tab: %q", got)
	}

	browse(t, ctx, "open pricing", chromedp.Click(chromedp.CSS(`a[href="/ui/sandboxes/pricing"]`)))
	checkDiffPage(t, ctx)
	checkLabels(t, ctx, "the sandbox's page")
	screenshot(t, ctx, "sandbox")
	// The products' rows at the top of the window.
	evalJS[chromedp.Void](t, ctx, `window.scrollTo(0, [...document.querySelectorAll('section.tablediff')]
		.find(s => s.querySelector('h3').textContent === 'console_shop.products').offsetTop - 8)`)
	screenshot(t, ctx, "diff")

	promoteInBrowser(t, ctx)
	if got := strings.Join(column(t, root, "SELECT CONCAT(id, ':', price, ':', stock) FROM console_shop.products ORDER BY id"), ","); got !=
		"1:99.00:12,2:22.00:35,3:7.99:100,5:49.00:8" {
		t.Errorf("production after the promote: %s", got)
	}
	if got := strings.Join(column(t, root, "SELECT CONCAT(code, ':', percent) FROM console_shop.coupons"), ","); got != "WELCOME10:10" {
		t.Errorf("production's coupons after the promote: %s", got)
	}

	discardInBrowser(t, ctx, cp, "scratch")
	proxyPageInBrowser(t, ctx, cp)
	if seen := watch.seen(); len(seen) > 0 {
		t.Errorf("the console's pages ran script: %v", seen)
	}
}

// checkDiffPage checks the page of the sandbox pricing: its DIFF SUMMARY,
// its rows' cells, the conflict and the DDL.
func checkDiffPage(t *testing.T, ctx context.Context) {
	t.Helper()
	summary := evalJS[[]string](t, ctx, `[...document.querySelectorAll('table.summary tbody tr')].map(r => r.innerText.replace(/\s+/g, ' ').trim())`)
	if len(summary) != 2 || !strings.HasPrefix(summary[0], "console_shop.coupons created") ||
		!strings.HasPrefix(summary[1], "console_shop.products forked 1 2 1 1") {
		t.Errorf("DIFF SUMMARY: %q", summary)
	}
	changed := evalJS[[]string](t, ctx, `[...document.querySelectorAll('table.rows td.changed')].map(td => td.innerText.replace(/\s+/g, ' ').trim())`)
	for _, w := range []string{"89.90 → 99.00", "24.50 → 22.00 production: 25.00", "40 → 35"} {
		if !slices.Contains(changed, w) {
			t.Errorf("the changed cells %q lack %q", changed, w)
		}
	}
	ops := evalJS[[]string](t, ctx, `[...document.querySelectorAll('table.rows tbody th .op')].map(e => e.textContent)`)
	slices.Sort(ops)
	if strings.Join(ops, ",") != "conflict,delete,insert,insert,update" {
		t.Errorf("the rows' changes: %v", ops)
	}
	if ddl := evalJS[string](t, ctx, `document.querySelector('pre.ddl').textContent`); !strings.HasPrefix(ddl, "CREATE TABLE") ||
		!strings.Contains(ddl, "`console_shop`.`coupons` (\n  `code` varchar(16) NOT NULL,\n") {
		t.Errorf("the DDL shown: %q", ddl)
	}
	if n := evalJS[int](t, ctx, `document.querySelectorAll('mark.prod').length`); n != 1 {
		t.Errorf("%d cells carry production's value, want 1", n)
	}
}

// promoteInBrowser runs a dry run of pricing with the strategy ours from
// its page, checks the plan, and applies it from the dry run's page.
func promoteInBrowser(t *testing.T, ctx context.Context) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("strategy-ours"))); err != nil {
		t.Fatal(err)
	}
	if code := browse(t, ctx, "dry run", chromedp.Click(chromedp.CSS(`form[action="/ui/sandboxes/pricing/promote"] button`))); code != http.StatusOK {
		t.Fatalf("dry run: HTTP %d", code)
	}
	digest := evalJS[string](t, ctx, `document.querySelector('input[name="matching"]').value`)
	if !adminapi.IsDigest(digest) || evalJS[string](t, ctx, `document.querySelector('code.digest').textContent`) != digest {
		t.Fatalf("the dry run's digest: %q", digest)
	}
	steps := evalJS[[]string](t, ctx, `[...document.querySelectorAll('ol.plan li .op')].map(e => e.textContent)`)
	if len(steps) < 3 || steps[0] != "conflict" || !slices.Contains(steps, "ddl") || !slices.Contains(steps, "rows") {
		t.Errorf("the plan's steps: %v", steps)
	}
	checkLabels(t, ctx, "the dry run's page")
	screenshot(t, ctx, "promote-dry-run")
	if code := browse(t, ctx, "promote", chromedp.Click(chromedp.CSS(`button.primary`))); code != http.StatusOK {
		t.Fatalf("promote: HTTP %d: %s", code, evalJS[string](t, ctx, `document.body.innerText`))
	}
	if got := evalJS[string](t, ctx, `document.querySelector('dl.facts dd').textContent`); got != "committed" {
		t.Fatalf("the promote's outcome: %q\n%s", got, evalJS[string](t, ctx, `document.body.innerText`))
	}
}

// discardInBrowser discards the sandbox name from its page: a wrong name
// typed is refused, the right one drops it.
func discardInBrowser(t *testing.T, ctx context.Context, cp consoleProxy, name string) {
	t.Helper()
	browse(t, ctx, "open "+name, chromedp.Navigate(cp.base+"/ui/sandboxes/"+name))
	browse(t, ctx, "discard…", chromedp.Click(chromedp.CSS(`a[href="/ui/sandboxes/`+name+`/discard"]`)))
	checkLabels(t, ctx, "the discard's confirmation")
	type attempt struct {
		typed string
		code  int64
	}
	for _, a := range []attempt{{name + "x", http.StatusBadRequest}, {name, http.StatusOK}} {
		if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("confirm"), a.typed)); err != nil {
			t.Fatal(err)
		}
		if code := browse(t, ctx, "discard", chromedp.Click(chromedp.CSS(`button.danger`))); code != int64(a.code) {
			t.Fatalf("discard, %q typed: HTTP %d, want %d", a.typed, code, a.code)
		}
	}
	if got := evalJS[string](t, ctx, `document.querySelector('p.flash').textContent`); got != "Sandbox "+name+" was discarded." {
		t.Errorf("the list after the discard says %q", got)
	}
	if _, err := cp.api.Show(context.Background(), name); !errors.Is(err, adminapi.ErrNotFound) {
		t.Errorf("sandbox %s after the discard: %v", name, err)
	}
}

// proxyPageInBrowser checks the proxy page: the upstream account cannot
// change production, the promote account is set, the charts are drawn.
func proxyPageInBrowser(t *testing.T, ctx context.Context, cp consoleProxy) {
	t.Helper()
	browse(t, ctx, "the proxy page", chromedp.Click(chromedp.CSS(`nav a[href="/ui/proxy"]`)))
	checks := evalJS[[]string](t, ctx, `[...document.querySelectorAll('section[aria-labelledby="checks"] tbody tr')].map(r => r.innerText.replace(/\s+/g, ' ').trim())`)
	if len(checks) != 2 || !strings.HasPrefix(checks[0], "upstream account "+sandboxUser+" ok cannot change production") ||
		!strings.HasPrefix(checks[1], "promote account") {
		t.Errorf("the accounts' checks: %q", checks)
	}
	if n := evalJS[int](t, ctx, `document.querySelectorAll('figure.chart svg[role="img"]').length`); n != 4 {
		t.Errorf("%d charts", n)
	}
	if os.Getenv("SQLFORK_SCREENSHOTS") != "" {
		// A few samples (one each 10 s) make a chart worth a picture.
		testkit.EventuallyWithin(t, "the charts' samples", 2*time.Minute, func() bool {
			browse(t, ctx, "the proxy page", chromedp.Navigate(cp.base+"/ui/proxy"))
			return evalJS[int](t, ctx, `document.querySelectorAll('#chart-forks-desc, #chart-connections-desc').length`) == 2 &&
				evalJS[int](t, ctx, `document.querySelectorAll('polyline.series').length`) > 0 &&
				evalJS[int](t, ctx, `(document.querySelector('polyline.series').getAttribute('points') || '').split(' ').length`) >= 4
		})
	}
	screenshot(t, ctx, "proxy")
}

// The hostile names and values of TestConsoleBrowserHostileNames: HTML and
// quotes, as a table, a column and values.
const (
	hostileTable   = `<script>alert(1)</script>`
	hostileColumn  = `a"b'c<i>`
	hostileValue   = `<img src=x onerror=alert(2)>"'`
	hostileClose   = `</td></tr></table><script>alert(3)</script>`
	hostileCreated = `"><svg onload=alert(4)>`
)

// TestConsoleBrowserHostileNames: a sandbox whose tables, columns and
// values hold HTML and quotes — a table <script>alert(1)</script> with a
// column a"b'c<i>, values that close the cell or open an image, a table
// created as "><svg onload=…> — shows them as text on the list, the
// sandbox's page and a dry run's plan, in a real chromium: the names read
// back as they are, the page holds no element of theirs (no script, img, i,
// svg), and no script runs (no dialog opens).
func TestConsoleBrowserHostileNames(t *testing.T) {
	ctx, watch := newBrowserTab(t)
	db := leastPrivilegeEnv(t)
	root := openDB(t, db.DSN("")+"?multiStatements=true")
	readOnlyDatabase(t, root, "console_xss")
	table, col := "console_xss."+quoteIdent(hostileTable), quoteIdent(hostileColumn)
	mustExecC(t, root, "CREATE TABLE "+table+" (id INT PRIMARY KEY, "+col+" VARCHAR(200)) ENGINE=InnoDB")
	mustExecC(t, root, "INSERT INTO "+table+" VALUES (1, 'plain'), (2, 'two')")
	cp := startConsoleProxy(t)
	c := cp.keptSandbox(t, "hostile", "console_xss", time.Hour)
	mustExecC(t, c, "UPDATE "+quoteIdent(hostileTable)+" SET "+col+" = ? WHERE id = 1", hostileValue)
	mustExecC(t, c, "INSERT INTO "+quoteIdent(hostileTable)+" VALUES (3, ?)", hostileClose)
	mustExecC(t, c, "CREATE TABLE "+quoteIdent(hostileCreated)+" ("+quoteIdent("<b>")+" INT PRIMARY KEY)")
	mustExecC(t, c, "INSERT INTO "+quoteIdent(hostileCreated)+" VALUES (1)")

	cp.signIn(t, ctx)
	checkNoMarkup(t, ctx, "the list")
	browse(t, ctx, "open hostile", chromedp.Click(chromedp.CSS(`a[href="/ui/sandboxes/hostile"]`)))
	checkNoMarkup(t, ctx, "the sandbox's page")
	headings := evalJS[[]string](t, ctx, `[...document.querySelectorAll('section.tablediff h3')].map(e => e.textContent)`)
	slices.Sort(headings)
	if want := []string{"console_xss." + hostileCreated, "console_xss." + hostileTable}; !slices.Equal(headings, want) {
		t.Errorf("the tables' headings read %q, want %q", headings, want)
	}
	columns := evalJS[[]string](t, ctx, `[...document.querySelectorAll('table.rows thead th')].map(e => e.textContent)`)
	if !slices.Contains(columns, hostileColumn) || !slices.Contains(columns, "<b>") {
		t.Errorf("the columns read %q", columns)
	}
	cells := evalJS[[]string](t, ctx, `[...document.querySelectorAll('table.rows td')].map(e => e.textContent.replace(/\s+/g, ' ').trim())`)
	for _, w := range []string{`"plain" → "<img src=x onerror=alert(2)>\"'"`, `"` + hostileClose + `"`} {
		if !slices.Contains(cells, w) {
			t.Errorf("the cells %q lack %q", cells, w)
		}
	}
	summary := evalJS[string](t, ctx, `document.querySelector('table.summary').innerText`)
	if !strings.Contains(summary, "console_xss."+hostileTable) || !strings.Contains(summary, "console_xss."+hostileCreated) {
		t.Errorf("DIFF SUMMARY reads %q", summary)
	}
	// The promote form's checkboxes carry the names as values.
	values := evalJS[[]string](t, ctx, `[...document.querySelectorAll('input[name="table"]')].map(e => e.value)`)
	if !slices.Contains(values, "console_xss."+hostileTable) {
		t.Errorf("the promote form's tables: %q", values)
	}
	if code := browse(t, ctx, "dry run", chromedp.Click(chromedp.CSS(`form[action="/ui/sandboxes/hostile/promote"] button`))); code != http.StatusOK {
		t.Fatalf("dry run: HTTP %d: %s", code, evalJS[string](t, ctx, `document.body.innerText`))
	}
	checkNoMarkup(t, ctx, "the dry run's plan")
	if plan := evalJS[string](t, ctx, `document.querySelector('ol.plan').textContent`); !strings.Contains(plan, hostileTable) ||
		!strings.Contains(plan, hostileCreated) {
		t.Errorf("the plan does not name the tables as they are: %s", plan)
	}
	if seen := watch.seen(); len(seen) > 0 {
		t.Errorf("a hostile name ran script: %v", seen)
	}
}

// checkLabels fails the test when a control of the page (what) has no
// label, or the page has no main landmark or no h1.
func checkLabels(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	unlabelled := evalJS[[]string](t, ctx, `[...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
		.filter(e => e.labels.length === 0 && !e.getAttribute('aria-label')).map(e => e.outerHTML)`)
	if len(unlabelled) > 0 {
		t.Errorf("%s has controls without a label: %q", what, unlabelled)
	}
	if n := evalJS[int](t, ctx, `document.querySelectorAll('main#main, h1').length`); n != 2 {
		t.Errorf("%s lacks its main landmark or its one h1", what)
	}
}

// checkNoMarkup fails the test when the page (what) holds an element a
// hostile name or value could make: a script, an image, an i, b or svg.
func checkNoMarkup(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	got := evalJS[[]string](t, ctx, `[...document.querySelectorAll('script, img, i, b, svg, iframe, [onerror], [onload]')].map(e => e.outerHTML)`)
	if len(got) > 0 {
		t.Errorf("%s holds elements a sandbox's names made: %q", what, got)
	}
}

// quoteIdent is name as a backquoted identifier.
func quoteIdent(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }
