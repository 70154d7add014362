package duration

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		// Go forms, as settings always took them.
		{in: "500ms", want: 500 * time.Millisecond},
		{in: "90s", want: 90 * time.Second},
		{in: "2m", want: 2 * time.Minute},
		{in: "30m", want: 30 * time.Minute},
		{in: "24h", want: 24 * time.Hour},
		{in: "720h", want: 720 * time.Hour},
		{in: "1h30m", want: 90 * time.Minute},
		{in: "1h0m1s", want: time.Hour + time.Second},
		{in: "1.5s", want: 1500 * time.Millisecond},
		{in: "0s", want: 0},
		{in: "+5s", want: 5 * time.Second},
		// Days.
		{in: "7d", want: 7 * 24 * time.Hour},
		{in: "0d", want: 0},
		{in: "99999d", want: 99999 * 24 * time.Hour},
		// Plain seconds.
		{in: "0", want: 0},
		{in: "10", want: 10 * time.Second},
		{in: "86400", want: 24 * time.Hour},
		{in: "9223372036", want: 9223372036 * time.Second},
		// Refused.
		{in: "", bad: true},
		{in: "x", bad: true},
		{in: "soon", bad: true},
		{in: "2 days", bad: true},
		{in: " 5s", bad: true},
		{in: "-1s", bad: true},
		{in: "-5", bad: true},
		{in: "-1d", bad: true},
		{in: "1.5d", bad: true},
		{in: "1d12h", bad: true},
		{in: "100000d", bad: true},
		{in: "9223372037", bad: true}, // seconds past what a Duration holds
		{in: "9223372036854775807", bad: true},
		{in: "5 s", bad: true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := Parse(tc.in)
			if tc.bad {
				if err == nil {
					t.Fatalf("Parse(%q) = %s, want an error", tc.in, got)
				}
				want := `bad duration "` + tc.in + `": use forms like 500ms, 90s, 30m, 2h, 1h30m, 7d or a number of seconds`
				if err.Error() != want {
					t.Errorf("Parse(%q) error %q, want %q", tc.in, err, want)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("Parse(%q) = %s, %v; want %s", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{8 * time.Hour, "8h"}, {30 * time.Second, "30s"}, {5 * time.Minute, "5m"},
		{90 * time.Minute, "1h30m"}, {time.Hour + time.Second, "1h0m1s"}, {1500 * time.Millisecond, "1.5s"}, {0, "0s"},
		{720 * time.Hour, "720h"}, {500 * time.Millisecond, "500ms"}, {time.Duration(math.MaxInt64), "2562047h47m16.854775807s"},
	}
	for _, tc := range tests {
		got := Format(tc.d)
		if got != tc.want {
			t.Errorf("Format(%s) = %q, want %q", tc.d, got, tc.want)
		}
		// What Format writes, Parse and Go's parser read back.
		if back, err := Parse(got); err != nil || back != tc.d {
			t.Errorf("Parse(Format(%s)) = %s, %v", tc.d, back, err)
		}
		if back, err := time.ParseDuration(got); err != nil || back != tc.d {
			t.Errorf("time.ParseDuration(Format(%s)) = %s, %v", tc.d, back, err)
		}
		if strings.HasSuffix(got, "m0s") || strings.HasSuffix(got, "h0m") {
			t.Errorf("Format(%s) = %q keeps a trailing zero unit", tc.d, got)
		}
	}
}

// TestHuman: whole days read as days, the rest as Format writes them;
// Parse reads every one back.
func TestHuman(t *testing.T) {
	for d, want := range map[time.Duration]string{720 * time.Hour: "30d", 1440 * time.Hour: "60d", 24 * time.Hour: "1d",
		25 * time.Hour: "25h", 90 * time.Minute: "1h30m", 0: "0s"} {
		if got := Human(d); got != want {
			t.Errorf("Human(%s) = %q, want %q", d, got, want)
		}
		if back, err := Parse(Human(d)); err != nil || back != d {
			t.Errorf("Parse(Human(%s)) = %s, %v", d, back, err)
		}
	}
}
