package lexer

import (
	"cmp"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite/charset"
	"github.com/sqlfork/sqlfork-proxy/rewrite/internal/normcases"
)

// normalize is Normalize under o, the text as a string.
func normalize(sql string, cs *charset.Info, o normcases.Opts) (string, *Unreadable) {
	n, u := Normalize(sql, cs, Options{ANSIQuotes: o.ANSIQuotes, NoBackslashEscapes: o.NoBackslashEscapes}, o.Server)
	if u != nil {
		return "", u
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
			if c.Err != "" {
				if err == nil || !strings.Contains(err.What, c.Err) {
					t.Fatalf("Normalize(%q) = %q, %v; want an error containing %q", c.In, got, err, c.Err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Normalize(%q): %+v", c.In, err)
			}
			if got != c.Want {
				t.Fatalf("Normalize(%q)\n got  %q\n want %q", c.In, got, c.Want)
			}
		})
	}
}
