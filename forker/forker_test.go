package forker

import (
	"testing"
)

func TestDetect(t *testing.T) {
	for v, want := range map[string]string{
		"10.11.19-MariaDB-0+deb12u1":       "copy",
		"8.0.36":                           "copy",
		"5.7.25-OceanBase seekdb-v1.1.0.0": "seekdb",
		"5.7.25-SeekDB-v1.0.0":             "seekdb",
		"5.7.25-OceanBase_CE-v4.2.1.0":     "seekdb",
	} {
		if got := Detect(v); got != want {
			t.Errorf("Detect(%q) = %s, want %s", v, got, want)
		}
	}
}
