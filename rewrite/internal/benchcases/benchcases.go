// Package benchcases holds the statements rewrite's and rewrite/lexer's
// benchmarks both run: the shapes the performance targets name.
package benchcases

// Statement is one benchmark statement and the name its sub-benchmark
// takes.
type Statement struct{ Name, SQL string }

// Statements are a point select, an update, an insert and a three-table
// join.
var Statements = []Statement{
	{"PointSelect", "SELECT id, name, email FROM users WHERE id = 42"},
	{"Update", "UPDATE users SET name = 'x', score = score + 1 WHERE id = 42"},
	{"Insert", "INSERT INTO orders (user_id, total, created_at) VALUES (42, 19.99, NOW())"},
	{"Join3", "SELECT u.id, o.total, p.name FROM users u JOIN orders o ON o.user_id = u.id " +
		"JOIN products p ON p.id = o.product_id WHERE u.id = 7 ORDER BY o.created_at DESC LIMIT 10"},
}
