package console

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"

	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
	"github.com/sqlfork/sqlfork-proxy/quote"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// pageNames are the console's pages: templates/<name>.html, each with
// templates/layout.html.
func pageNames() []string {
	return []string{"list", "sandbox", "promote", "promoted", "discard", "proxy", "login", "error"}
}

// parsePages parses each page with the layout.
func parsePages() (map[string]*template.Template, error) {
	funcs := template.FuncMap{"sandboxURL": sandboxURL}
	pages := map[string]*template.Template{}
	for _, name := range pageNames() {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/parts.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("console: template %s: %w", name, err)
		}
		pages[name] = t
	}
	return pages, nil
}

// staticHandler serves the stylesheet under /ui/static/.
func staticHandler() http.Handler {
	sub, _ := fs.Sub(staticFS, "static") // a directory embedded above
	files := http.StripPrefix("/ui/static/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}

// sandboxURL is the console's path of the sandbox called name, plus
// parts (each a path segment).
func sandboxURL(name string, parts ...string) string {
	p := "/ui/sandboxes/" + url.PathEscape(name)
	for _, s := range parts {
		p += "/" + url.PathEscape(s)
	}
	return p
}

// securityHeaders are every page's: no script, style or image but the
// console's own, no framing, no referrer, no caching.
func securityHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "+
		"frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

// page is what the layout shows around a page's content (Data).
type page struct {
	Title string
	// Nav is the navigation entry of the page: sandboxes or proxy.
	Nav string
	// SignedIn shows the sign-out button; CSRF is the token of the page's
	// forms.
	SignedIn bool
	CSRF     string
	// Can is what the visitor may do.
	Can  permissions
	Data any
}

// permissions are what the console offers, as adminapi's rules allow it;
// the reasons say why not.
type permissions struct {
	Rows, Change, Promote          bool
	RowsWhy, ChangeWhy, PromoteWhy string
	// ReadOnly: neither rows nor changes (a tokenless API without
	// TokenlessChanges).
	ReadOnly bool
}

// permitted is what o allows.
func permitted(o adminapi.Options) permissions {
	var p permissions
	p.Rows, p.RowsWhy = o.Permits(adminapi.NeedRows)
	p.Change, p.ChangeWhy = o.Permits(adminapi.NeedChange)
	p.Promote, p.PromoteWhy = o.Permits(adminapi.NeedPromote)
	p.ReadOnly = !p.Rows && !p.Change
	return p
}

// render writes the page name with data, titled title, with status.
func (c *Console) render(w http.ResponseWriter, r *http.Request, v visitor, status int, name, title string, data any) {
	p := page{Title: title, Nav: navOf(name), SignedIn: v.signedIn, Can: permitted(c.o.API), Data: data}
	if len(v.sess.id) > 0 {
		p.CSRF = c.keys.csrf(v.sess)
	}
	var b bytes.Buffer
	if err := c.pages[name].Execute(&b, p); err != nil {
		c.log.Error("rendering a console page", zap.String("page", name), zap.String("path", r.URL.Path), zap.Error(err))
		http.Error(w, "the console could not render this page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// navOf is the navigation entry of the page name.
func navOf(name string) string {
	switch name {
	case "proxy":
		return "proxy"
	case "login":
		return ""
	}
	return "sandboxes"
}

// errorPage is what the error page shows.
type errorPage struct {
	Status  int
	Text    string
	Message string
	Back    string
}

// fail answers r with the error page: status and message, which may hold
// what a sandbox named (a table in a failed statement): shown as the CLI
// shows an error (quote.Display).
func (c *Console) fail(w http.ResponseWriter, r *http.Request, v visitor, status int, message string) {
	back := "/ui/"
	if name := r.PathValue("name"); name != "" && status != http.StatusNotFound {
		back = sandboxURL(name)
	}
	c.render(w, r, v, status, "error", http.StatusText(status),
		errorPage{Status: status, Text: http.StatusText(status), Message: quote.Display(message), Back: back})
}

// failErr answers r with err from the sandboxes, with the status the admin
// API gives it.
func (c *Console) failErr(w http.ResponseWriter, r *http.Request, err error) {
	c.fail(w, r, visitorOf(r), adminapi.HTTPStatus(err), err.Error())
}

// notFound answers a path of the console that is none of its pages.
func (c *Console) notFound(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w)
	c.fail(w, r, visitor{}, http.StatusNotFound, "The console has no page at this address.")
}
