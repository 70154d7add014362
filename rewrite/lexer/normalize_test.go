package lexer

import (
	"cmp"
	"fmt"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite/charset"
	"github.com/sqlfork/sqlfork-proxy/rewrite/internal/normcases"
)

// normalize is Normalize under o, the text as a string; an Unreadable as
// an error (%+v of it, its What included).
func normalize(sql string, cs *charset.Info, o normcases.Opts) (string, error) {
	n, u := Normalize(sql, cs, Options{ANSIQuotes: o.ANSIQuotes, NoBackslashEscapes: o.NoBackslashEscapes}, o.Server)
	if u != nil {
		return "", fmt.Errorf("%+v", *u)
	}
	return n.Text, nil
}

func TestNormalize(t *testing.T) {
	for _, c := range normcases.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			cs, ok := charset.Lookup(cmp.Or(c.Opts.Charset, "utf8mb4"))
			if !ok {
				t.Skip("a character set the table does not have: rewrite refuses it before the lexer")
			}
			got, err := normalize(c.In, cs, c.Opts)
			c.Check(t, got, err)
		})
	}
}
