// Package human formats quantities for people: the CLI and the web console
// show sizes the same way.
package human

import "fmt"

// Bytes is n in binary units: 512 B, 16 KiB, 1.5 MiB.
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n), 0
	for v >= unit && i < 4 {
		v, i = v/unit, i+1
	}
	suffix := []string{"B", "KiB", "MiB", "GiB", "TiB"}[i]
	if v < 10 && v != float64(int64(v)) {
		return fmt.Sprintf("%.1f %s", v, suffix)
	}
	return fmt.Sprintf("%d %s", int64(v+0.5), suffix)
}
