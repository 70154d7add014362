package console

import (
	"sync"
	"time"
)

// seriesDef is a metric the proxy page charts over time: a gauge's value,
// or a counter's increase from one sample to the next.
type seriesDef struct {
	Key, Title, Help, Metric string
	Match                    []string
	Counter                  bool
}

// chartSeries are the metrics the proxy page charts.
func chartSeries() []seriesDef {
	return []seriesDef{
		{Key: "connections", Title: "Client connections", Help: "open at each sample", Metric: "sqlfork_client_connections"},
		{Key: "sandboxes", Title: "Sandboxes", Help: "held by this process at each sample", Metric: "sqlfork_sandboxes"},
		{Key: "forks", Title: "Forks", Help: "tables forked between samples", Metric: "sqlfork_forks_total", Counter: true},
		{Key: "promotes", Title: "Promotes", Help: "promotes committed between samples", Metric: "sqlfork_sandbox_promotes_total",
			Match: []string{"outcome", "committed"}, Counter: true},
	}
}

// history keeps the last samples of chartSeries, oldest first.
type history struct {
	mu      sync.Mutex
	max     int
	samples []sample
}

// sample is what chartSeries were at one moment, by Key (a series the
// proxy has no metric for is absent).
type sample struct {
	at     time.Time
	values map[string]float64
}

// newHistory keeps capacity samples.
func newHistory(capacity int) *history { return &history{max: capacity} }

// add records what g says of chartSeries at at, dropping the oldest sample
// past max.
func (h *history) add(at time.Time, g gathered) {
	s := sample{at: at, values: map[string]float64{}}
	for _, d := range chartSeries() {
		switch v, ok := g.sum(d.Metric, d.Match...); {
		case ok:
			s.values[d.Key] = v
		case d.Counter:
			s.values[d.Key] = 0 // a counter with labels has no family until its first count
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.samples = append(h.samples, s)
	if over := len(h.samples) - h.max; over > 0 {
		h.samples = append([]sample(nil), h.samples[over:]...)
	}
}

// snapshot is a copy of the samples, oldest first.
func (h *history) snapshot() []sample {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]sample(nil), h.samples...)
}
