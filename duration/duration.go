// Package duration reads and writes the one duration syntax of
// sqlfork-proxy, used by every setting (flags, SQLFORK_* variables, the
// YAML file), by SANDBOX CREATE/KEEP TTL and by the admin API: 500ms, 90s,
// 30m, 2h, 1h30m (Go's time.ParseDuration forms), 7d (whole days) or a
// plain number of seconds. Durations are never negative.
package duration

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// maxDays bounds the days form so that it cannot overflow a time.Duration
// (about 106,751 days).
const maxDays = 100000

// Parse reads s: a non-negative Go duration (500ms, 90s, 30m, 2h, 1h30m),
// a whole number of days (7d) or a whole number of seconds (90).
func Parse(s string) (time.Duration, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n >= 0 && n <= math.MaxInt64/int64(time.Second) {
			return time.Duration(n) * time.Second, nil
		}
		return 0, syntaxError(s)
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.ParseInt(days, 10, 64); err == nil && n >= 0 && n < maxDays {
			return time.Duration(n) * 24 * time.Hour, nil
		}
		return 0, syntaxError(s)
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, syntaxError(s)
	}
	return d, nil
}

func syntaxError(s string) error {
	return fmt.Errorf("bad duration %q: use forms like 500ms, 90s, 30m, 2h, 1h30m, 7d or a number of seconds", s)
}

// Format writes d as Parse reads it, in Go's form without trailing zero
// units: "8h" rather than "8h0m0s", "1h30m", "1.5s", "0s".
func Format(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// Human writes d for a person, as Parse reads it: whole days as days
// ("30d"), anything else as Format does.
func Human(d time.Duration) string {
	const day = 24 * time.Hour
	if d >= day && d%day == 0 {
		return strconv.FormatInt(int64(d/day), 10) + "d"
	}
	return Format(d)
}
