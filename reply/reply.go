// Package reply holds what the proxy answers by itself: result sets and OK
// packets as values (Reply), and the rows of SHOW WARNINGS (Diag).
package reply

import "strconv"

// Diag is one row of SHOW WARNINGS.
type Diag struct {
	Level   string // Note, Warning, Error
	Code    uint16
	Message string
}

// Reply is an answer the proxy gives itself: a result set when Columns
// (text columns of these names) or Defs (column definition packets) are
// set, else an OK packet.
type Reply struct {
	Columns  []string
	Defs     [][]byte
	Rows     [][]*string
	Affected uint64
	Info     string
	// Warnings are an OK packet's warnings: it counts them, and SHOW
	// WARNINGS lists them next.
	Warnings []Diag
}

// Str is v as a result set cell.
func Str(v string) *string { return &v }

// Int is n as a result set cell.
func Int(n int64) *string { v := strconv.FormatInt(n, 10); return &v }

// OrNull is s as a result set cell, NULL when empty.
func OrNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
