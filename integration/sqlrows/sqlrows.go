// Package sqlrows reads database/sql rows in the form the proxy's own
// connections answer queries with (forker.Conn's Query): each value as
// text, a NULL as nil. The integration tests and the benchmarks share it.
package sqlrows

import "database/sql"

// Text reads rows to the end and closes them: each row's values as
// text, a NULL as nil.
func Text(rows *sql.Rows) ([][]*string, error) {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	raw := make([]sql.RawBytes, len(cols))
	dest := make([]any, len(cols))
	for i := range raw {
		dest[i] = &raw[i]
	}
	var out [][]*string
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		row := make([]*string, len(cols))
		for i, b := range raw {
			if b != nil {
				v := string(b)
				row[i] = &v
			}
		}
		out = append(out, row)
	}
	return out, rows.Err()
}
