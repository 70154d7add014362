package wire

import (
	"encoding/binary"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// ColumnNames are the names of a column definition (ColumnDefinition41).
type ColumnNames struct {
	Catalog, Schema, Table, OrgTable, Name, OrgName string
}

// ParseColumnDef decodes the names of a ColumnDefinition41 payload and
// returns the fixed-length fields after them; ok is false when p is short.
func ParseColumnDef(p []byte) (n ColumnNames, rest []byte, ok bool) {
	fields := [6]*string{&n.Catalog, &n.Schema, &n.Table, &n.OrgTable, &n.Name, &n.OrgName}
	rest = p
	for _, f := range fields {
		var s []byte
		if s, rest, ok = LenEncString(rest); !ok {
			return ColumnNames{}, nil, false
		}
		*f = string(s)
	}
	return n, rest, true
}

// AppendColumnDef appends a ColumnDefinition41 payload of the names n
// followed by the fixed-length fields rest (as ParseColumnDef returned
// them).
func AppendColumnDef(b []byte, n ColumnNames, rest []byte) []byte {
	for _, f := range []string{n.Catalog, n.Schema, n.Table, n.OrgTable, n.Name, n.OrgName} {
		b = AppendLenEncString(b, f)
	}
	return append(b, rest...)
}

// TextColumnDef is the definition of a text column named name, as the
// proxy describes the columns of result sets it makes itself: VARCHAR
// of 1024 bytes in utf8mb4_general_ci, with no schema or table.
func TextColumnDef(name string) []byte {
	rest := []byte{0x0C, 45, 0} // length of the fixed fields; utf8mb4_general_ci
	rest = binary.LittleEndian.AppendUint32(rest, 1024)
	rest = append(rest, mysql.MYSQL_TYPE_VAR_STRING, 0, 0, 0, 0, 0)
	return AppendColumnDef(nil, ColumnNames{Catalog: "def", Name: name, OrgName: name}, rest)
}

// WithExtendedMetadata returns the column definition def with an empty
// extended-metadata field (MariaDB's extended type information) after its
// names, as a session that negotiated wire.ExtCapExtendedMetadata reads
// every column definition.
func WithExtendedMetadata(def []byte) []byte {
	n, rest, ok := ParseColumnDef(def)
	if !ok {
		return def
	}
	return AppendColumnDef(nil, n, append([]byte{0}, rest...))
}

// AppendTextRow appends a text-protocol row: each value length-encoded,
// NULL as 0xFB.
func AppendTextRow(b []byte, row []*string) []byte {
	for _, v := range row {
		if v == nil {
			b = append(b, 0xFB)
			continue
		}
		b = AppendLenEncString(b, *v)
	}
	return b
}

// ParseTextRow decodes a text-protocol row of n columns.
func ParseTextRow(p []byte, n int) ([]*string, error) {
	row := make([]*string, n)
	for i := range n {
		if len(p) == 0 {
			return nil, errShort("row")
		}
		if p[0] == 0xFB {
			p = p[1:]
			continue
		}
		s, rest, ok := LenEncString(p)
		if !ok {
			return nil, errShort("row value")
		}
		v := string(s)
		row[i], p = &v, rest
	}
	return row, nil
}
