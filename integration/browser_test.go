package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// The web console's browser tests drive Debian's chromium, headless, with
// chromedp. CI installs it (.ci/run); with CI=true a missing chromium
// fails them, elsewhere it skips them. SQLFORK_SCREENSHOTS=dir makes them
// write screenshots of the console's pages there (make screenshots).

// browserGuard bounds a browser test's whole run: a hang guard, far above
// what a run takes on a loaded machine, not a measure of speed.
const browserGuard = 10 * time.Minute

// viewport is the size of the browser's window, and of the screenshots.
const viewportWidth, viewportHeight = 1280, 800

// chromiumPath is the chromium to drive; a test without one is skipped,
// or fails under CI=true.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed; CI=true, so the web console's browser tests must not be skipped (.ci/run installs it)")
	}
	t.Skip("skipping the web console's browser test: chromium is not installed")
	return ""
}

// pageWatch records what a page did that the console's pages never do:
// JavaScript dialogs (alert, confirm, prompt) and uncaught exceptions.
type pageWatch struct {
	mu     sync.Mutex
	events []string
}

func (w *pageWatch) add(s string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.events = append(w.events, s)
}

// seen is what it recorded.
func (w *pageWatch) seen() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.events...)
}

// newBrowserTab starts a headless chromium (as root: --no-sandbox) with a
// tab of viewport's size, stopped when the test ends, and watches the
// tab's pages: a dialog is recorded and dismissed.
func newBrowserTab(t *testing.T) (context.Context, *pageWatch) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromiumPath(t)), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.WindowSize(viewportWidth, viewportHeight), chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("lang", "en-US"), chromedp.Flag("hide-scrollbars", true))
	guard, stopGuard := context.WithTimeout(context.Background(), browserGuard)
	actx, stopAlloc := chromedp.NewExecAllocator(guard, opts...)
	ctx, stopTab := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() {
		stopTab()
		stopAlloc()
		stopGuard()
	})
	w := &pageWatch{}
	err := chromedp.Listen(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *page.EventJavascriptDialogOpening:
			w.add("dialog " + string(ev.Type) + ": " + ev.Message)
			go func() {
				_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
			}()
		}
	})
	if err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(viewportWidth, viewportHeight)); err != nil {
		t.Fatalf("chromium's viewport: %v", err)
	}
	return ctx, w
}

// screenshot writes the tab's viewport as name.png into the directory
// SQLFORK_SCREENSHOTS names, if it names one.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("SQLFORK_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// browse runs steps that load a page (a navigation, a click on a link or
// a form's button) and waits for it: the page's HTTP status.
func browse(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) int64 {
	t.Helper()
	resp, err := chromedp.RunResponse(ctx, steps...)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return resp.Status
}

// evalJS is what the expression gives on the tab's page.
func evalJS[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}
