package rewrite

import "testing"

func TestQuote(t *testing.T) {
	if got := QuoteIdent("a`b"); got != "`a``b`" {
		t.Errorf("QuoteIdent = %s", got)
	}
	if got := QuoteString(`it's \ ok`); got != `'it\'s \\ ok'` {
		t.Errorf("QuoteString = %s", got)
	}
	if got := (Table{DB: "d", Name: "t"}).Quoted(); got != "`d`.`t`" {
		t.Errorf("Table.Quoted = %s", got)
	}
}
