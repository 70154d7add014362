package reply

import "testing"

func TestCells(t *testing.T) {
	deref := func(p *string) (string, bool) {
		if p == nil {
			return "", false
		}
		return *p, true
	}
	tests := []struct {
		name     string
		cell     *string
		want     string
		wantNull bool
	}{
		{"Str plain", Str("abc"), "abc", false},
		{"Str empty is a value", Str(""), "", false},
		{"Int zero", Int(0), "0", false},
		{"Int negative", Int(-42), "-42", false},
		{"Int large", Int(9223372036854775807), "9223372036854775807", false},
		{"OrNull value", OrNull("x"), "x", false},
		{"OrNull empty is NULL", OrNull(""), "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := deref(tt.cell)
			if ok == tt.wantNull {
				t.Fatalf("NULL = %v, want %v", !ok, tt.wantNull)
			}
			if got != tt.want {
				t.Errorf("cell = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestStrCopies: each cell is its own string; changing one leaves the
// others (and the caller's variable) alone.
func TestStrCopies(t *testing.T) {
	v := "a"
	a, b := Str(v), Str(v)
	if a == b {
		t.Fatal("Str returned the same pointer twice")
	}
	*a = "changed"
	if *b != "a" || v != "a" {
		t.Errorf("after changing one cell: other = %q, source = %q", *b, v)
	}
}
