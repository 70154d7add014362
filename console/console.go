// Package console is sqlfork-proxy's web console, served at /ui/ on the
// admin listener beside the admin API: the sandboxes (list, one sandbox's
// tables and diff, EXPORT, PROMOTE as a dry run then the plan it gave,
// KEEP, DISCARD) and the proxy (upstream, accounts' checks, its own
// metrics now and over the last minutes).
//
// It is built with html/template and embed alone and works offline: no
// JavaScript, no CDN, charts drawn as inline SVG. Every name and value a
// sandbox controls is text in the page (html/template escapes it), and the
// Content-Security-Policy allows no script at all.
//
// It calls the same adminapi.Sandboxes methods as the admin API, under the
// same rules (adminapi.Options.Permits): with a token, every page needs it,
// given once on a sign-in form (a session cookie: HttpOnly, SameSite=Strict,
// Secure over TLS) or on each request as "Authorization: Bearer <token>";
// without one, the console reads metadata only, rows and changes need
// TokenlessChanges, and promote is never offered. Every form POSTs with a
// CSRF token tied to the session, and cross-origin POSTs are refused
// (http.CrossOriginProtection).
//
//	GET  /ui/                              the sandboxes
//	GET  /ui/sandboxes/{name}              one sandbox: tables, DIFF SUMMARY, rows
//	GET  /ui/sandboxes/{name}/export       SANDBOX EXPORT, as a download
//	POST /ui/sandboxes/{name}/keep         KEEP (ttl: empty, the proxy's; 0, until discarded)
//	GET  /ui/sandboxes/{name}/discard      the confirmation of a discard
//	POST /ui/sandboxes/{name}/discard      DISCARD (confirm: the sandbox's name)
//	POST /ui/sandboxes/{name}/promote      a dry run (dry_run=1), or the plan it gave
//	                                       (matching=sha256:…), with strategy and table
//	GET  /ui/proxy                         the proxy: upstream, checks, metrics
//	GET  /ui/login, POST /ui/login         sign in with the admin token
//	POST /ui/logout                        sign out
//	GET  /ui/static/…                      the stylesheet
package console

import (
	"context"
	"crypto/rand"
	"fmt"
	"html/template"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
)

// Options configure the console.
type Options struct {
	// API is what the admin API serves with: the sandboxes the console
	// shows and changes, the token and TokenlessChanges that decide who
	// may do what, and where clients connect (Proxy). Sandboxes must not
	// be nil.
	API adminapi.Options
	// Upstream is the server the proxy fronts, Mode its mode (transparent,
	// explicit, passthrough) and Version its build, as the proxy page
	// shows them.
	Upstream, Mode, Version string
	// Ready, when set, says whether the upstream accepts the proxy's
	// login, as /readyz does.
	Ready func(context.Context) error
	// Checks, when set, are the checks of the accounts the proxy uses.
	Checks func(context.Context) []Check
	// Gatherer is the proxy's own metrics registry (nil: no metrics).
	Gatherer prometheus.Gatherer
	// SampleEvery is how often Run samples the metrics (0: 10s); Samples
	// how many samples the charts keep (0: 180, half an hour).
	SampleEvery time.Duration
	Samples     int
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Logger logs what fails beyond a request's answer (nil: none).
	Logger *zap.Logger
}

// Check is what the proxy found of one account it uses.
type Check struct {
	// Role is what the proxy uses it for ("upstream account", "promote
	// account"); Account its name ("" when none is configured).
	Role, Account string
	// Status is CheckOK, CheckWarn or CheckUnknown; Summary says it in
	// words; Details are what backs it (the grants that let it write
	// production).
	Status  string
	Summary string
	Details []string
}

// The statuses of a Check.
const (
	CheckOK      = "ok"
	CheckWarn    = "warn"
	CheckUnknown = "unknown"
)

// Console serves the web console; make it with New.
type Console struct {
	o       Options
	pages   map[string]*template.Template
	keys    sessionKeys
	cop     *http.CrossOriginProtection
	history *history
	log     *zap.Logger
}

// The defaults of Options.
const (
	defaultSampleEvery = 10 * time.Second
	defaultSamples     = 180
)

// New makes the console o describes.
func New(o Options) (*Console, error) {
	if o.API.Sandboxes == nil {
		return nil, fmt.Errorf("console: no sandboxes")
	}
	if o.SampleEvery <= 0 {
		o.SampleEvery = defaultSampleEvery
	}
	if o.Samples < 2 {
		o.Samples = defaultSamples
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	log := o.Logger
	if log == nil {
		log = zap.NewNop()
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	keys, err := newSessionKeys(o.API.Token, rand.Reader)
	if err != nil {
		return nil, err
	}
	return &Console{o: o, pages: pages, keys: keys, cop: http.NewCrossOriginProtection(),
		history: newHistory(o.Samples), log: log.Named("console")}, nil
}

// Register adds the console's routes (see the package documentation) to
// mux.
func (c *Console) Register(mux *http.ServeMux) {
	mux.Handle("GET /ui/static/", staticHandler())
	mux.HandleFunc("GET /ui", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/ui/", http.StatusMovedPermanently)
	})
	mux.HandleFunc("GET /ui/login", c.loginForm)
	mux.HandleFunc("POST /ui/login", c.login)
	mux.HandleFunc("POST /ui/logout", c.guard(adminapi.NeedRead, c.logout))
	mux.HandleFunc("GET /ui/{$}", c.guard(adminapi.NeedRead, c.list))
	mux.HandleFunc("GET /ui/sandboxes/{name}", c.guard(adminapi.NeedRead, c.sandbox))
	mux.HandleFunc("GET /ui/sandboxes/{name}/export", c.guard(adminapi.NeedRows, c.export))
	mux.HandleFunc("POST /ui/sandboxes/{name}/keep", c.guard(adminapi.NeedChange, c.keep))
	mux.HandleFunc("GET /ui/sandboxes/{name}/discard", c.guard(adminapi.NeedChange, c.discardForm))
	mux.HandleFunc("POST /ui/sandboxes/{name}/discard", c.guard(adminapi.NeedChange, c.discard))
	mux.HandleFunc("POST /ui/sandboxes/{name}/promote", c.guard(adminapi.NeedPromote, c.promote))
	mux.HandleFunc("GET /ui/proxy", c.guard(adminapi.NeedRead, c.proxy))
	mux.HandleFunc("/ui/", c.notFound)
}

// Run samples the metrics for the proxy page's charts now and every
// SampleEvery until ctx ends.
func (c *Console) Run(ctx context.Context) {
	if c.o.Gatherer == nil {
		return
	}
	t := time.NewTicker(c.o.SampleEvery)
	defer t.Stop()
	for {
		c.sample()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sample adds what the metrics say now to the history.
func (c *Console) sample() {
	g, err := gather(c.o.Gatherer)
	if err != nil {
		c.log.Warn("reading the proxy's metrics for the console", zap.Error(err))
	}
	c.history.add(c.o.Now(), g)
}
