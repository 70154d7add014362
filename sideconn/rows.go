package sideconn

import (
	"strconv"
	"time"
)

// timeLayout is how the registry's DATETIME(6) columns read and are
// written.
const timeLayout = "2006-01-02 15:04:05.000000"

// SQLTime is t as a DATETIME(6) literal in UTC; NULL for the zero time.
func SQLTime(t time.Time) string {
	if t.IsZero() {
		return "NULL"
	}
	return "'" + t.UTC().Format(timeLayout) + "'"
}

// ParseTime reads a DATETIME(6) value; the zero time for NULL or what
// does not parse.
func ParseTime(v *string) time.Time {
	if v == nil {
		return time.Time{}
	}
	t, _ := time.Parse(timeLayout, *v)
	return t
}

// Str is a column's text; "" for NULL.
func Str(v *string) string {
	if v == nil {
		return ""
	}
	return *v
}

// Num is a column's integer; 0 for NULL or what is not one.
func Num(v *string) int64 {
	n, _ := strconv.ParseInt(Str(v), 10, 64)
	return n
}
