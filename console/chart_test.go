package console

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestHistoryCharts: the history keeps the last samples of the charted
// metrics (a counter not yet counted as 0); a gauge is drawn as a line
// across the width, newest at the right edge, and a counter as bars of its
// increase between samples (a restart counted from 0); too few samples
// draw nothing.
func TestHistoryCharts(t *testing.T) {
	reg := prometheus.NewRegistry()
	conns := prometheus.NewGauge(prometheus.GaugeOpts{Name: "sqlfork_client_connections", Help: "h"})
	forks := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sqlfork_forks_total", Help: "h"}, []string{"strategy", "kind"})
	promotes := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sqlfork_sandbox_promotes_total", Help: "h"}, []string{"strategy", "outcome"})
	reg.MustRegister(conns, forks, promotes)
	h := newHistory(4)
	at := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	for i, n := range []float64{5, 1, 2, 4, 0} {
		conns.Set(n)
		forks.WithLabelValues("copy", "full").Add(float64(i))
		forks.WithLabelValues("copy", "schema").Add(1)
		promotes.WithLabelValues("ours", "refused").Inc()
		g, err := gather(reg)
		if err != nil {
			t.Fatal(err)
		}
		h.add(at.Add(time.Duration(i)*10*time.Second), g)
	}
	s := h.snapshot()
	if len(s) != 4 || !s[0].at.Equal(at.Add(10*time.Second)) {
		t.Fatalf("kept %d samples from %v", len(s), s[0].at)
	}
	byKey := map[string]chart{}
	for _, c := range charts(s) {
		byKey[strings.TrimPrefix(c.ID, "chart-")] = c
	}
	conn := byKey["connections"]
	if conn.Line != "0.0,58.0 106.7,40.0 213.3,4.0 320.0,76.0" || conn.Now != "0" || conn.Peak != "4" || conn.Span != "30s" {
		t.Errorf("connections: %+v", conn)
	}
	fk := byKey["forks"]
	if len(fk.Bars) != 3 || fk.Now != "15" || fk.Peak != "5" || fk.Bars[2].Y != "4.0" || fk.Bars[2].X != "213.3" {
		t.Errorf("forks: %+v", fk)
	}
	if p := byKey["promotes"]; p.Empty || p.Now != "0" || len(p.Bars) != 3 || p.Bars[0].H != "0.0" {
		t.Errorf("promotes (none committed): %+v", p)
	}
	if sb := byKey["sandboxes"]; !sb.Empty {
		t.Errorf("sandboxes, which the registry lacks: %+v", sb)
	}
	empty := newHistory(2)
	empty.add(at, gathered{})
	if v, ok := empty.snapshot()[0].values["forks"]; !ok || v != 0 || len(empty.snapshot()[0].values) != 2 {
		t.Errorf("a sample of no metrics: %v", empty.snapshot()[0].values)
	}
	if got := increases([]float64{3, 5, 2, 4}); len(got) != 3 || got[0] != 2 || got[1] != 2 || got[2] != 2 {
		t.Errorf("increases = %v", got)
	}
	one := drawChart(chartSeries()[0], s[:1])
	if one.Empty || strings.Count(one.Line, ",") != 2 {
		t.Errorf("a gauge's one sample: %+v", one)
	}
	if c := drawChart(chartSeries()[2], s[:1]); !c.Empty {
		t.Errorf("a counter's one sample: %+v", c)
	}
}
