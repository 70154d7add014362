package sideconn

import (
	"testing"
	"time"
)

// TestRows: NULL reads as the zero value of each kind, and a time written
// by SQLTime reads back as itself.
func TestRows(t *testing.T) {
	s := func(v string) *string { return &v }
	if Str(nil) != "" || Str(s("x")) != "x" || Num(nil) != 0 || Num(s("-42")) != -42 || Num(s("x")) != 0 {
		t.Error("Str/Num")
	}
	if SQLTime(time.Time{}) != "NULL" || !ParseTime(nil).IsZero() || !ParseTime(s("soon")).IsZero() {
		t.Error("NULL times")
	}
	at := time.Date(2026, 11, 29, 13, 4, 5, 123456000, time.FixedZone("x", 3600))
	lit := SQLTime(at)
	if lit != "'2026-11-29 12:04:05.123456'" {
		t.Errorf("SQLTime: %s", lit)
	}
	if back := ParseTime(s(lit[1 : len(lit)-1])); !back.Equal(at) {
		t.Errorf("ParseTime: %v, want %v", back, at)
	}
}
