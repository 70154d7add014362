package lexer

import (
	"slices"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite/internal/benchcases"
)

// benchStatements are rewrite's benchmark statements and a text of every
// token kind.
var benchStatements = append(slices.Clip(benchcases.Statements), benchcases.Statement{Name: "Mixed",
	SQL: "SELECT `a`.b, 'it''s', \"q\", x'1F', _utf8mb4'x', 1.5e-3, .5, 0x1F, 123abc, @v, @@session.x, @'u', ? " +
		"FROM t # c\n-- c\n/* c */ WHERE n <> N'z' AND b'01' = 3"})

// BenchmarkLex is the lexer alone on the benchmark statements.
func BenchmarkLex(b *testing.B) {
	for _, s := range benchStatements {
		b.Run(s.Name, func(b *testing.B) {
			toks := make([]Token, 0, 64)
			b.SetBytes(int64(len(s.SQL)))
			for b.Loop() {
				toks = LexInto(toks, s.SQL, Options{})
			}
		})
	}
}
