package console

import (
	"regexp"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sqlfork/sqlfork-proxy/metrics"
)

// descNames is a prometheus.Registerer that records the names of the
// metrics its collectors describe.
type descNames map[string]bool

var _ prometheus.Registerer = descNames{}

func (d descNames) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc)
	go func() {
		c.Describe(ch)
		close(ch)
	}()
	name := regexp.MustCompile(`fqName: "([^"]+)"`)
	for desc := range ch {
		if m := name.FindStringSubmatch(desc.String()); m != nil {
			d[m[1]] = true
		}
	}
	return nil
}

func (d descNames) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		_ = d.Register(c)
	}
}

func (d descNames) Unregister(prometheus.Collector) bool { return false }

// TestMetricNames: every metric the proxy page shows or charts is one the
// proxy exports (package metrics).
func TestMetricNames(t *testing.T) {
	exported := descNames{}
	metrics.New(exported)
	names := []string{"sqlfork_upstream_production_writable"}
	for _, d := range shownMetrics() {
		names = append(names, d.Metric)
	}
	for _, d := range chartSeries() {
		names = append(names, d.Metric)
	}
	for _, n := range names {
		if !exported[n] {
			t.Errorf("the console reads %s, which the proxy does not export", n)
		}
	}
	if len(exported) < 20 {
		t.Fatalf("only %d metrics described", len(exported))
	}
}
