package corpus

import (
	"strings"
	"testing"
)

var classes = map[string]bool{"read": true, "write": true, "ddl": true, "transaction": true, "session": true,
	"routine": true, "sandbox": true, "other": true, "unparseable": true}

// TestCases checks the corpus's shape: every case has a text and a known
// class, no text is there twice for one database, and its tables are
// db.table lists.
func TestCases(t *testing.T) {
	cases := Cases()
	if len(cases) == 0 {
		t.Fatal("no cases")
	}
	seen := map[[2]string]bool{}
	for _, c := range cases {
		if seen[[2]string{c.DB, c.SQL}] {
			t.Errorf("%q (database %q) is there twice", c.SQL, c.DB)
		}
		seen[[2]string{c.DB, c.SQL}] = true
		if strings.TrimSpace(c.SQL) == "" {
			t.Errorf("a case without a text: %+v", c)
		}
		if c.Class != "" && !classes[c.Class] {
			t.Errorf("%q: unknown class %q", c.SQL, c.Class)
		}
		for _, list := range []string{c.Reads, c.Writes} {
			for _, tb := range strings.Split(list, ",") {
				if tb != "" && !strings.Contains(tb, ".") {
					t.Errorf("%q: table %q is not db.table", c.SQL, tb)
				}
			}
		}
	}
}
