package integration

import (
	"context"
	"database/sql"
	"testing"
)

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

// firstColumn is the first column of q's rows on c, a NULL as "".
func firstColumn(ctx context.Context, c rowQuerier, q string) ([]string, error) {
	rows, err := c.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals, err := scanStrings(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, vals[0].String)
	}
	return out, rows.Err()
}

// column is firstColumn, failing the test on an error.
func column(t *testing.T, c rowQuerier, q string) []string {
	t.Helper()
	out, err := firstColumn(context.Background(), c, q)
	if err != nil {
		t.Fatalf("%s: %s", q, mysqlErr(err))
	}
	return out
}
