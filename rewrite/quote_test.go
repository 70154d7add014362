package rewrite

import "testing"

func TestQuote(t *testing.T) {
	if got := QuoteIdent("a`b"); got != "`a``b`" {
		t.Errorf("QuoteIdent = %s", got)
	}
	for in, want := range map[string]string{
		"it's ok":     `'it''s ok'`,
		`it's \ ok`:   `_utf8mb4 X'69742773205C206F6B'`,
		"caf\u00e9":   `_utf8mb4 X'636166C3A9'`,
		"a\x00\xff":   `_binary X'6100FF'`,
		"line\nbreak": `_utf8mb4 X'6C696E650A627265616B'`,
	} {
		if got := QuoteString(in); got != want {
			t.Errorf("QuoteString(%q) = %s, want %s", in, got, want)
		}
	}
	if got := (Table{DB: "d", Name: "t"}).Quoted(); got != "`d`.`t`" {
		t.Errorf("Table.Quoted = %s", got)
	}
}
