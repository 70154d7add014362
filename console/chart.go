package console

import (
	"strconv"
	"strings"
	"time"
)

// The size of a chart's drawing, in its viewBox's units.
const (
	chartWidth  = 320
	chartHeight = 80
	chartPad    = 4
)

// chart is one series drawn as inline SVG: a gauge as a line, a counter as
// bars of its increase between samples.
type chart struct {
	ID, Title, Help string
	Width, Height   int
	// Line is a gauge's polyline's points; Bars a counter's bars.
	Line string
	Bars []bar
	// Now is the gauge's last value or the counter's total; Peak the
	// highest value drawn; Span how long the samples cover.
	Now, Peak, Span string
	// Desc says the chart in words, for those who do not see it.
	Desc string
	// Empty: fewer than two samples (a counter) or none (a gauge).
	Empty bool
}

// bar is one bar of a counter's chart.
type bar struct{ X, Y, W, H string }

// charts draws chartSeries from samples.
func charts(samples []sample) []chart {
	var out []chart
	for _, d := range chartSeries() {
		out = append(out, drawChart(d, samples))
	}
	return out
}

// drawChart draws series d from samples, across the width: the oldest
// sample at the left edge, the newest at the right.
func drawChart(d seriesDef, samples []sample) chart {
	c := chart{ID: "chart-" + d.Key, Title: d.Title, Help: d.Help, Width: chartWidth, Height: chartHeight}
	var vals []float64
	for _, s := range samples {
		if v, ok := s.values[d.Key]; ok {
			vals = append(vals, v)
		}
	}
	if len(samples) > 1 {
		c.Span = span(samples[len(samples)-1].at.Sub(samples[0].at).Round(time.Second))
	}
	if len(vals) == 0 || d.Counter && len(vals) < 2 {
		c.Empty = true
		c.Desc = d.Title + ": not enough samples yet"
		return c
	}
	c.Now = number(vals[len(vals)-1])
	plotted := vals
	if d.Counter {
		plotted = increases(vals)
	}
	peak := 0.0
	for _, v := range plotted {
		peak = max(peak, v)
	}
	c.Peak = number(peak)
	slot := float64(chartWidth)
	if len(vals) > 1 {
		slot /= float64(len(vals) - 1)
	}
	x := func(i int) float64 {
		if len(vals) == 1 {
			return chartWidth
		}
		return float64(i) * slot
	}
	y := func(v float64) float64 {
		return chartHeight - chartPad - v/max(peak, 1)*(chartHeight-2*chartPad)
	}
	if d.Counter {
		for i, v := range plotted {
			x0, top := x(i), y(v)
			c.Bars = append(c.Bars, bar{X: coord(x0), Y: coord(top), W: coord(max(slot-1, 1)), H: coord(chartHeight - chartPad - top)})
		}
		c.Desc = d.Title + ": " + c.Now + " in total; at most " + c.Peak + " between two samples"
	} else {
		var pts []string
		for i, v := range vals {
			pts = append(pts, coord(x(i))+","+coord(y(v)))
		}
		if len(pts) == 1 { // one sample: a short line at the right edge
			pts = append([]string{coord(x(0)-2) + "," + coord(y(vals[0]))}, pts...)
		}
		c.Line = strings.Join(pts, " ")
		c.Desc = d.Title + ": " + c.Now + " now; at most " + c.Peak
	}
	if c.Span != "" {
		c.Desc += " over the last " + c.Span
	}
	return c
}

// increases are a counter's increases between its successive values (a
// value below the one before is a restart: its whole value).
func increases(vals []float64) []float64 {
	out := make([]float64, 0, len(vals)-1)
	for i := 1; i < len(vals); i++ {
		d := vals[i] - vals[i-1]
		if d < 0 {
			d = vals[i]
		}
		out = append(out, d)
	}
	return out
}

// coord is a coordinate to one decimal place.
func coord(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
