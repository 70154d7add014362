package human

import "testing"

// TestBytes: sizes in binary units, a decimal under ten.
func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1 KiB", 16384: "16 KiB", 114688: "112 KiB",
		1536 * 1024: "1.5 MiB", 5 << 30: "5 GiB", 3 << 40: "3 TiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}
