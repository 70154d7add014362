package console

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// gathered is the proxy's metrics at one moment, by family name.
type gathered map[string]*dto.MetricFamily

// gather reads g. What it gathered is kept when some collector failed
// (the error says which).
func gather(g prometheus.Gatherer) (gathered, error) {
	mfs, err := g.Gather()
	out := gathered{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf
	}
	if err != nil {
		return out, fmt.Errorf("gathering metrics: %w", err)
	}
	return out, nil
}

// sum is the sum of the values of family name's metrics whose labels hold
// match (pairs of a label's name and value); ok is false when there is no
// such family.
func (g gathered) sum(name string, match ...string) (v float64, ok bool) {
	mf, ok := g[name]
	if !ok {
		return 0, false
	}
	for _, m := range mf.GetMetric() {
		if labelsHold(m, match) {
			v += value(m)
		}
	}
	return v, true
}

// labelsHold reports whether m's labels hold every pair of match.
func labelsHold(m *dto.Metric, match []string) bool {
	for i := 0; i+1 < len(match); i += 2 {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == match[i] && l.GetValue() == match[i+1] {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// value is a metric's value: a gauge's or counter's, a histogram's or
// summary's count of observations.
func value(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Histogram != nil:
		return float64(m.GetHistogram().GetSampleCount())
	case m.Summary != nil:
		return float64(m.GetSummary().GetSampleCount())
	case m.Untyped != nil:
		return m.GetUntyped().GetValue()
	}
	return 0
}

// metricRow is one value the proxy page shows.
type metricRow struct{ Label, Value, Metric string }

// metricDef is a value the proxy page shows: its label, and the family and
// labels it sums.
type metricDef struct {
	Label, Metric string
	Match         []string
}

// shownMetrics are the values the proxy page shows, those the proxy has.
func shownMetrics() []metricDef {
	return []metricDef{
		{"Client connections open", "sqlfork_client_connections", nil},
		{"Client connections accepted", "sqlfork_client_connections_total", nil},
		{"Logins refused (bad credentials)", "sqlfork_client_auth_failures_total", nil},
		{"Sandboxes active (this process)", "sqlfork_sandboxes", []string{"state", "active"}},
		{"Sandboxes in grace (this process)", "sqlfork_sandboxes", []string{"state", "grace"}},
		{"Sandboxes kept (this process)", "sqlfork_sandboxes", []string{"state", "kept"}},
		{"Sandboxes in the registry", "sqlfork_registry_sandboxes", nil},
		{"Sandboxes discarded", "sqlfork_sandboxes_discarded_total", nil},
		{"Tables forked", "sqlfork_forks_total", nil},
		{"Forks that failed", "sqlfork_fork_failures_total", nil},
		{"Lazy fills running", "sqlfork_lazy_fills", nil},
		{"Promotes committed", "sqlfork_sandbox_promotes_total", []string{"outcome", "committed"}},
		{"Promotes refused", "sqlfork_sandbox_promotes_total", []string{"outcome", "refused"}},
		{"Promotes failed", "sqlfork_sandbox_promotes_total", []string{"outcome", "failed"}},
		{"Promotes partial (DDL applied, rows not)", "sqlfork_sandbox_promotes_total", []string{"outcome", "partial"}},
		{"Statements of sandboxing sessions", "sqlfork_statements_total", nil},
		{"Statements refused by the sandbox layer", "sqlfork_sandbox_refusals_total", nil},
		{"Side connections in use", "sqlfork_side_connections", []string{"state", "in_use"}},
		{"Side connections at most", "sqlfork_side_connections_max", nil},
		{"Upstream connections that failed to open", "sqlfork_upstream_connect_failures_total", nil},
		{"Upstream connections lost mid-session", "sqlfork_upstream_connections_lost_total", nil},
	}
}

// currentMetrics are the values of shownMetrics g has.
func currentMetrics(g gathered) []metricRow {
	var out []metricRow
	for _, d := range shownMetrics() {
		if v, ok := g.sum(d.Metric, d.Match...); ok {
			out = append(out, metricRow{Label: d.Label, Value: number(v), Metric: d.Metric})
		}
	}
	return out
}
