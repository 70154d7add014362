package console

import (
	"context"
	"net/http"
	"time"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
	"github.com/sqlfork/sqlfork-proxy/internal/human"
	"github.com/sqlfork/sqlfork-proxy/quote"
)

// listDetail is how many of the sandboxes with tables the list shows the
// copy progress of (each a Show, which reads the sizes of its tables from
// the upstream); the others say to open the sandbox.
const listDetail = 25

// expiringWithin: a sandbox that ends within it is shown as expiring.
const expiringWithin = time.Hour

// sandboxView is a sandbox as the pages show it.
type sandboxView struct {
	Name, URL, ID, Owner string
	// Badges are its state in words: anonymous, kept, active, grace,
	// expiring, promoted.
	Badges []badge
	// Age is how long ago it was made, Created when.
	Age, Created, CreatedISO string
	// Expires is when it ends and TTL how long it has left ("" when no end
	// is set).
	Expires, ExpiresISO, TTL string
	Connections, TableCount  int
	Size                     string
	// Changes is none, unpromoted or promoted.
	Changes  string
	Promoted string
	// Filling are its tables whose copy is under way; Detail says whether
	// they were read (a list reads the first listDetail).
	Filling []fillView
	Detail  bool
}

// badge is one word of a sandbox's state, and its style.
type badge struct{ Text, Class string }

// fillView is how far a lazy fork's copy is.
type fillView struct {
	Table          string
	Copied, Total  int64
	Percent        string
	Error, Waiting string
}

// viewSandbox is s as the pages show it at now.
func viewSandbox(s adminapi.Sandbox, now time.Time) sandboxView {
	v := sandboxView{Name: quote.Display(s.Name), URL: sandboxURL(s.Name), ID: quote.Display(s.ID), Owner: quote.Display(s.Owner),
		Age: span(now.Sub(s.Created)), Created: stamp(s.Created), CreatedISO: machineTime(s.Created),
		Connections: s.Connections, TableCount: s.TableCount, Size: human.Bytes(s.Bytes), Changes: s.Changes,
		Badges: badges(s, now)}
	if s.Expires != nil {
		v.Expires, v.ExpiresISO = stamp(*s.Expires), machineTime(*s.Expires)
		v.TTL = "ended"
		if left := s.Expires.Sub(now); left > 0 {
			v.TTL = span(left)
		}
	}
	if s.Promoted != nil {
		v.Promoted = stamp(*s.Promoted)
	}
	for _, t := range s.Tables {
		if t.Fill != nil {
			v.Filling = append(v.Filling, viewFill(t))
		}
	}
	return v
}

// badges are the words of s's state at now.
func badges(s adminapi.Sandbox, now time.Time) []badge {
	var out []badge
	if s.Name == "sb-"+s.ID {
		out = append(out, badge{"anonymous", "anonymous"})
	}
	switch s.State {
	case "kept":
		out = append(out, badge{"kept", "kept"})
	case "grace":
		out = append(out, badge{"grace", "grace"})
	default:
		out = append(out, badge{quote.Display(s.State), "active"})
	}
	if s.Expires != nil && s.Expires.Sub(now) < expiringWithin {
		out = append(out, badge{"expiring", "expiring"})
	}
	if s.Changes == "promoted" {
		out = append(out, badge{"promoted", "promoted"})
	}
	return out
}

// viewFill is the copy progress of t, which has one.
func viewFill(t adminapi.Table) fillView {
	f := fillView{Table: quote.Display(t.Table), Copied: t.Fill.Copied, Total: t.Fill.Total, Error: quote.Display(t.Fill.Error)}
	if f.Total > 0 {
		f.Percent = number(float64(min(f.Copied*1000/f.Total, 1000))/10) + "%"
	}
	switch {
	case t.Fill.BuildingKeys:
		f.Waiting = "building keys"
	case t.Fill.Waiting:
		f.Waiting = "waiting for a transaction to end"
	}
	return f
}

// listPage is what the list shows.
type listPage struct {
	Sandboxes []sandboxView
	// Discarded names the sandbox a discard just dropped.
	Discarded string
}

// list is GET /ui/: every sandbox.
func (c *Console) list(w http.ResponseWriter, r *http.Request) {
	boxes, err := c.o.API.Sandboxes.List(r.Context())
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	now := c.o.Now()
	p := listPage{Discarded: quote.Display(r.URL.Query().Get("discarded"))}
	detailed := 0
	for _, s := range boxes {
		detail := s.TableCount > 0 && detailed < listDetail
		if detail {
			detailed++
			s = c.withTables(r.Context(), s)
		}
		v := viewSandbox(s, now)
		v.Detail = detail || s.TableCount == 0
		p.Sandboxes = append(p.Sandboxes, v)
	}
	c.render(w, r, visitorOf(r), http.StatusOK, "list", "Sandboxes", p)
}

// withTables is s with its tables, as Show gives them; s as it is when
// Show fails (the sandbox went since the list, say).
func (c *Console) withTables(ctx context.Context, s adminapi.Sandbox) adminapi.Sandbox {
	full, err := c.o.API.Sandboxes.Show(ctx, s.Name)
	if err != nil {
		return s
	}
	return full
}
