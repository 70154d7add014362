package console

import (
	"context"
	"net/http"

	"github.com/sqlfork/sqlfork-proxy/quote"
)

// proxyPage is what the proxy page shows.
type proxyPage struct {
	Listen, Upstream, Mode, Version, Separator string
	// Ready is the upstream's readiness in words, ReadyOK whether it is.
	Ready   string
	ReadyOK bool
	Checks  []Check
	Metrics []metricRow
	// MetricsError says why Metrics may miss some.
	MetricsError string
	Charts       []chart
	SampleEvery  string
}

// proxy is GET /ui/proxy.
func (c *Console) proxy(w http.ResponseWriter, r *http.Request) {
	p := proxyPage{Listen: c.o.API.Proxy.Listen, Upstream: c.o.Upstream, Mode: c.o.Mode, Version: c.o.Version,
		Separator: c.o.API.Proxy.UserSeparator, SampleEvery: span(c.o.SampleEvery)}
	p.Ready, p.ReadyOK = c.readiness(r.Context())
	var g gathered
	if c.o.Gatherer != nil {
		var err error
		if g, err = gather(c.o.Gatherer); err != nil {
			p.MetricsError = quote.Display(err.Error())
		}
		p.Metrics = currentMetrics(g)
		p.Charts = charts(c.history.snapshot())
	}
	if c.o.Checks != nil {
		p.Checks = c.o.Checks(r.Context())
	} else if g != nil {
		p.Checks = []Check{writableCheck(g)}
	}
	for i := range p.Checks {
		p.Checks[i].Account = quote.Display(p.Checks[i].Account)
	}
	c.render(w, r, visitorOf(r), http.StatusOK, "proxy", "Proxy", p)
}

// readiness is whether the upstream accepts the proxy's login, in words.
func (c *Console) readiness(ctx context.Context) (string, bool) {
	if c.o.Ready == nil {
		return "not checked", false
	}
	if err := c.o.Ready(ctx); err != nil {
		return "not ready: " + quote.Display(err.Error()), false
	}
	return "ready: the upstream accepts the proxy's login", true
}

// writableCheck is the upstream account's check as the metric
// sqlfork_upstream_production_writable tells it, for a console given no
// Checks.
func writableCheck(g gathered) Check {
	ck := Check{Role: "upstream account", Status: CheckUnknown, Summary: "not checked yet"}
	switch v, ok := g.sum("sqlfork_upstream_production_writable"); {
	case ok && v == 1:
		ck.Status, ck.Summary = CheckWarn, "can change production: only the proxy keeps sandboxes from writing it"
	case ok && v == 0:
		ck.Status, ck.Summary = CheckOK, "cannot change production (least privilege)"
	}
	return ck
}
