package sqlname

import "testing"

func TestTable(t *testing.T) {
	for _, c := range []struct {
		t           Table
		str, quoted string
	}{
		{Table{DB: "d", Name: "t"}, "d.t", "`d`.`t`"},
		{Table{DB: "a`b", Name: "c.d"}, "a`b.c.d", "`a``b`.`c.d`"},
		{Table{}, ".", "``.``"},
	} {
		if got := c.t.String(); got != c.str {
			t.Errorf("%#v.String() = %s, want %s", c.t, got, c.str)
		}
		if got := c.t.Quoted(); got != c.quoted {
			t.Errorf("%#v.Quoted() = %s, want %s", c.t, got, c.quoted)
		}
	}
}
