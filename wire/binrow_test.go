package wire

import (
	"bytes"
	"strings"
	"testing"
)

// TestMapBinaryRowStrings: string values of a binary row are mapped, other
// values and NULLs kept as they are; a row that does not decode is left.
func TestMapBinaryRowStrings(t *testing.T) {
	types := []byte{typeLongLong, 253, typeNull, 252, typeDateTime, typeDouble, 253}
	row := []byte{0}
	row = append(row, 0, 1) // the NULL bitmap: column 6 is NULL (bit 6+2)
	row = append(row, 1, 0, 0, 0, 0, 0, 0, 0)
	row = AppendLenEncString(row, "`_sqlfork_x_app`.`t`")
	row = AppendLenEncString(row, "def `_sqlfork_x_app`")
	row = append(row, 4, 0xE8, 0x07, 1, 2)
	row = append(row, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F)
	out, ok := MapBinaryRowStrings(row, types, func(s string) string { return strings.ReplaceAll(s, "_sqlfork_x_app", "app") })
	want := []byte{0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0}
	want = AppendLenEncString(want, "`app`.`t`")
	want = AppendLenEncString(want, "def `app`")
	want = append(want, 4, 0xE8, 0x07, 1, 2, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F)
	if !ok || !bytes.Equal(out, want) {
		t.Errorf("got %v, %v\nwant %v", out, ok, want)
	}
	for _, bad := range [][]byte{nil, {1, 0, 0}, row[:len(row)-1], append(append([]byte{}, row...), 0)} {
		if _, ok := MapBinaryRowStrings(bad, types, func(s string) string { return s }); ok {
			t.Errorf("%v decoded", bad)
		}
	}
}
