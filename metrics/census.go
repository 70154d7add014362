package metrics

import "github.com/prometheus/client_golang/prometheus"

// censusCollector reports sqlfork_registry_sandboxes{state,changes} at
// scrape time from a function the proxy installs once its sandbox manager
// runs: the sandboxes the shared registry records, whichever process holds
// them (the same figure in every process sharing the upstream: aggregate
// with max, not sum).
type censusCollector struct {
	desc *prometheus.Desc
	source[map[[2]string]int]
}

// newCensusCollector makes sqlfork_registry_sandboxes.
func newCensusCollector() *censusCollector {
	return &censusCollector{desc: prometheus.NewDesc(namespace+"_registry_sandboxes",
		"Sandboxes the shared registry records, whichever proxy process holds them (none, for a kept sandbox no connection uses), "+
			"as of the last reap round, by state (kept, unkept) and changes (none; unpromoted: written since made or last promoted whole; "+
			"promoted). The same in every process sharing the upstream.", []string{"state", "changes"}, nil)}
}

// Describe implements prometheus.Collector.
func (c *censusCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector: nothing before the first count.
func (c *censusCollector) Collect(ch chan<- prometheus.Metric) {
	counts, _ := c.read()
	for k, n := range counts {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), k[0], k[1])
	}
}
