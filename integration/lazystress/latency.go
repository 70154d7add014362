package lazystress

import (
	"slices"
	"time"
)

// Latency summarises latencies.
type Latency struct {
	N                  int
	P50, P95, P99, Max time.Duration
}

// Summarize is ds's count, percentiles (nearest rank) and maximum.
func Summarize(ds []time.Duration) Latency {
	l := Latency{N: len(ds)}
	if len(ds) == 0 {
		return l
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(p float64) time.Duration { return s[min(len(s)-1, int(p*float64(len(s))))] }
	l.P50, l.P95, l.P99, l.Max = at(0.50), at(0.95), at(0.99), s[len(s)-1]
	return l
}

// Over counts ds above limit.
func Over(ds []time.Duration, limit time.Duration) int {
	n := 0
	for _, d := range ds {
		if d > limit {
			n++
		}
	}
	return n
}
