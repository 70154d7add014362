package console

import (
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
	"github.com/sqlfork/sqlfork-proxy/quote"
)

// export is GET /ui/sandboxes/{name}/export: SANDBOX EXPORT as a file to
// download.
func (c *Console) export(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	text, err := c.o.API.Sandboxes.Export(r.Context(), name)
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": exportFile(name)}))
	_, _ = w.Write([]byte(text))
}

// exportFile is the name of the file an export of the sandbox called name
// downloads as: its letters, digits, '-' and '_' only.
func exportFile(name string) string {
	safe := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, name)
	return "sandbox-" + safe + ".sql"
}

// keep is POST /ui/sandboxes/{name}/keep: KEEP for the form's ttl (empty:
// the proxy's sandbox-ttl; 0: until discarded), then the sandbox's page.
func (c *Console) keep(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	ttl, err := adminapi.ParseTTL(strings.TrimSpace(r.PostForm.Get("ttl")))
	if err == nil {
		_, err = c.o.API.Sandboxes.Keep(r.Context(), name, ttl)
	}
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	http.Redirect(w, r, sandboxURL(name)+"?done=kept", http.StatusSeeOther)
}

// discardPage is what the confirmation of a discard shows.
type discardPage struct {
	Sandbox sandboxView
	// Name is the sandbox's name as it must be typed; Error why the last
	// try was refused.
	Name  string
	Error string
}

// discardForm is GET /ui/sandboxes/{name}/discard: the confirmation.
func (c *Console) discardForm(w http.ResponseWriter, r *http.Request) {
	c.confirmDiscard(w, r, http.StatusOK, "")
}

// confirmDiscard answers the confirmation of a discard with status, and
// the reason the last try was refused.
func (c *Console) confirmDiscard(w http.ResponseWriter, r *http.Request, status int, refused string) {
	name := r.PathValue("name")
	s, err := c.o.API.Sandboxes.Show(r.Context(), name)
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	v := viewSandbox(s, c.o.Now())
	c.render(w, r, visitorOf(r), status, "discard", "Discard "+v.Name, discardPage{Sandbox: v, Name: name, Error: refused})
}

// discard is POST /ui/sandboxes/{name}/discard: DISCARD, once the form
// names the sandbox (confirm), then the list.
func (c *Console) discard(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if r.PostForm.Get("confirm") != name {
		c.confirmDiscard(w, r, http.StatusBadRequest, "Type the sandbox's name exactly to confirm the discard.")
		return
	}
	if err := c.o.API.Sandboxes.Discard(r.Context(), name); err != nil {
		c.failErr(w, r, err)
		return
	}
	http.Redirect(w, r, "/ui/?discarded="+url.QueryEscape(name), http.StatusSeeOther)
}

// promotePage is what a dry run's page shows: the plan, and the form that
// applies it.
type promotePage struct {
	Name, URL, Strategy, Digest, Info string
	// Tables are the tables promoted (none: every table the sandbox
	// changed).
	Tables     []string
	Plan       []planStep
	Conflicts  int
	Strategies []strategyView
	// Hidden counts the plan's statements past maxPlanShown or
	// maxShown, which the page offers as a download (planFile).
	Hidden int
}

// maxPlanShown bounds the steps a dry run's page shows; past it, or past
// maxShown bytes of statements, the rest is counted and downloaded.
const maxPlanShown = 2000

// planStep is one step of a plan.
type planStep struct{ Step, Statement string }

// promotedPage is what a promote's page shows.
type promotedPage struct {
	Name, URL, Strategy, Outcome, Info string
	Rows                               int64
}

// promote is POST /ui/sandboxes/{name}/promote: a dry run (dry_run=1)
// answers its plan, with a form that applies it; matching applies the plan
// of that digest, which a dry run gave. A promote without either is
// refused: the console applies only plans that were reviewed.
func (c *Console) promote(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	o, err := adminapi.ParsePromote(r.PostForm)
	if err == nil && !o.DryRun && o.Matching == "" {
		err = fmt.Errorf("%w: the console applies only a plan a dry run gave: run the dry run first", adminapi.ErrBadRequest)
	}
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	p, err := c.o.API.Sandboxes.Promote(r.Context(), name, o)
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	display := quote.Display(name)
	if o.DryRun && r.PostForm.Get("download") != "" {
		c.planDownload(w, r, name, p)
		return
	}
	if !o.DryRun {
		c.render(w, r, visitorOf(r), http.StatusOK, "promoted", "Promoted "+display, promotedPage{Name: display, URL: sandboxURL(name),
			Strategy: p.Strategy, Outcome: p.Outcome, Info: quote.Display(p.Info), Rows: p.Rows})
		return
	}
	pp := promotePage{Name: display, URL: sandboxURL(name), Strategy: p.Strategy, Digest: p.Digest, Info: quote.Display(p.Info),
		Tables: o.Tables, Strategies: strategies(p.Strategy)}
	shown := 0
	for _, s := range p.Plan {
		if s.Step == "conflict" {
			pp.Conflicts++
		}
		if len(pp.Plan) >= maxPlanShown || shown >= maxShown {
			pp.Hidden++
			continue
		}
		pp.Plan = append(pp.Plan, planStep{Step: quote.Display(s.Step), Statement: displayLines(s.Statement)})
		shown += len(s.Statement)
	}
	c.render(w, r, visitorOf(r), http.StatusOK, "promote", "Promote "+display, pp)
}

// planDownload answers a dry run asked with download=1 as its whole plan,
// a SQL script, for a plan too long for its page: refused (409) when its
// digest is not the one the page showed (expect), whose plan the page's
// form applies.
func (c *Console) planDownload(w http.ResponseWriter, r *http.Request, name string, p adminapi.Promoted) {
	if expect := r.PostForm.Get("expect"); expect != "" && expect != p.Digest {
		c.fail(w, r, visitorOf(r), http.StatusConflict, "the plan changed since the page you read (its digest is "+
			quote.Display(p.Digest)+" now): run the dry run again")
		return
	}
	var b strings.Builder
	b.WriteString("-- PROMOTE dry run of sandbox " + quote.Comment(name) + ", strategy " + quote.Comment(p.Strategy) +
		": the plan of digest " + quote.Comment(p.Digest) + " (nothing was applied)\n")
	for _, s := range p.Plan {
		if s.Step == "conflict" {
			b.WriteString("-- conflict: " + quote.Comment(s.Statement) + "\n")
			continue
		}
		b.WriteString(s.Statement + ";\n")
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": planFile(name)}))
	_, _ = w.Write([]byte(b.String()))
}

// planFile is the name of the file a dry run's plan downloads as.
func planFile(name string) string {
	return strings.TrimSuffix(exportFile(name), ".sql") + "-plan.sql"
}
