package lexer

import "testing"

// benchStatements are rewrite's benchmark statements and a text of every
// token kind.
var benchStatements = []struct{ name, sql string }{
	{"PointSelect", "SELECT id, name, email FROM users WHERE id = 42"},
	{"Update", "UPDATE users SET name = 'x', score = score + 1 WHERE id = 42"},
	{"Insert", "INSERT INTO orders (user_id, total, created_at) VALUES (42, 19.99, NOW())"},
	{"Join3", "SELECT u.id, o.total, p.name FROM users u JOIN orders o ON o.user_id = u.id " +
		"JOIN products p ON p.id = o.product_id WHERE u.id = 7 ORDER BY o.created_at DESC LIMIT 10"},
	{"Mixed", "SELECT `a`.b, 'it''s', \"q\", x'1F', _utf8mb4'x', 1.5e-3, .5, 0x1F, 123abc, @v, @@session.x, @'u', ? " +
		"FROM t # c\n-- c\n/* c */ WHERE n <> N'z' AND b'01' = 3"},
}

// BenchmarkLex is the lexer alone on the benchmark statements.
func BenchmarkLex(b *testing.B) {
	for _, s := range benchStatements {
		b.Run(s.name, func(b *testing.B) {
			toks := make([]Token, 0, 64)
			b.SetBytes(int64(len(s.sql)))
			for b.Loop() {
				toks = LexInto(toks, s.sql, Options{})
			}
		})
	}
}
