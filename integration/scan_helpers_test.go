package integration

import "database/sql"

// scanRow scans rows' current row into a new slice of n values of type T,
// one for each of its n columns.
func scanRow[T any](rows *sql.Rows, n int) ([]T, error) {
	vals := make([]T, n)
	ptrs := make([]any, n)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	return vals, rows.Scan(ptrs...)
}

// nullText is each value's text, "NULL" for a NULL.
func nullText(vals []sql.NullString) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = "NULL"
		if v.Valid {
			out[i] = v.String
		}
	}
	return out
}
