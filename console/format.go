package console

import (
	"strconv"
	"time"
)

// span is d for a person, to the minute past an hour and to the second
// below one: 45s, 12m 5s, 3h 20m, 2d 4h.
func span(d time.Duration) string {
	if d < 0 {
		d = -d
	}
	d = d.Round(time.Second)
	days, hours := int64(d/(24*time.Hour)), int64(d/time.Hour)%24
	mins, secs := int64(d/time.Minute)%60, int64(d/time.Second)%60
	switch {
	case days > 0:
		return join(days, "d", hours, "h")
	case hours > 0:
		return join(hours, "h", mins, "m")
	case mins > 0:
		return join(mins, "m", secs, "s")
	}
	return strconv.FormatInt(secs, 10) + "s"
}

// join is "<a><ua> <b><ub>", or "<a><ua>" when b is 0.
func join(a int64, ua string, b int64, ub string) string {
	s := strconv.FormatInt(a, 10) + ua
	if b != 0 {
		s += " " + strconv.FormatInt(b, 10) + ub
	}
	return s
}

// stamp is t as the pages show a time: UTC, to the second.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

// machineTime is t for a <time datetime> attribute.
func machineTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// number is v without a fraction when it has none, else to two places.
func number(v float64) string {
	if v == float64(int64(v)) {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}
