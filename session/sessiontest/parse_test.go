package sessiontest

import (
	"reflect"
	"testing"
)

// TestTokenize: strings and names are read as MariaDB reads them — doubled
// quotes, backslash escapes, quote.String's hexadecimal with an
// introducer — and an unterminated one is an error.
func TestTokenize(t *testing.T) {
	for _, c := range []struct {
		sql  string
		want []token
	}{
		{"'it''s' 'x\\'y' 'n\\0l'", []token{{'s', "it's"}, {'s', "x'y"}, {'s', "n\x00l"}}},
		{"_utf8mb4 X'C3A4' _binary X'FF'", []token{{'s', "ä"}, {'s', "\xff"}}},
		{"`we``ird`.`t` = _x", []token{{'q', "we`ird"}, {'p', "."}, {'q', "t"}, {'p', "="}, {'w', "_x"}}},
	} {
		got, err := tokenize(c.sql)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("tokenize(%q) = %v, %v; want %v", c.sql, got, err, c.want)
		}
	}
	for _, sql := range []string{"SELECT 'open", "SELECT `open"} {
		if _, err := tokenize(sql); err == nil {
			t.Errorf("tokenize(%q): no error", sql)
		}
	}
}
