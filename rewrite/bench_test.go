package rewrite

import (
	"testing"
)

// benchStatements are the shapes the targets name. The mapped ones touch
// sandboxed tables (corpus resolver); passThrough touches none.
var benchStatements = []struct{ name, sql string }{
	{"PointSelect", "SELECT id, name, email FROM users WHERE id = 42"},
	{"Update", "UPDATE users SET name = 'x', score = score + 1 WHERE id = 42"},
	{"Insert", "INSERT INTO orders (user_id, total, created_at) VALUES (42, 19.99, NOW())"},
	{"Join3", "SELECT u.id, o.total, p.name FROM users u JOIN orders o ON o.user_id = u.id " +
		"JOIN products p ON p.id = o.product_id WHERE u.id = 7 ORDER BY o.created_at DESC LIMIT 10"},
}

const passThrough = "SELECT c FROM sbtest1 WHERE id = 4711"

// BenchmarkPassThroughCached is the pass-through decision for a repeated
// statement that touches no sandboxed table (target ≤ 1 µs).
func BenchmarkPassThroughCached(b *testing.B) {
	e, r := NewEngine(0), corpusResolver()
	opts := Options{DB: "app"}
	b.ReportAllocs()
	for b.Loop() {
		res, err := e.Rewrite(passThrough, opts, r)
		if err != nil || res.Changed {
			b.Fatal(err)
		}
	}
}

// BenchmarkClassifyCached is Analyze on a cache hit.
func BenchmarkClassifyCached(b *testing.B) {
	for _, s := range benchStatements {
		b.Run(s.name, func(b *testing.B) {
			e := NewEngine(0)
			opts := Options{DB: "app"}
			b.ReportAllocs()
			for b.Loop() {
				_ = e.Analyze(s.sql, opts)
			}
		})
	}
}

// BenchmarkClassifyUncached parses and binds every time.
func BenchmarkClassifyUncached(b *testing.B) {
	for _, s := range benchStatements {
		b.Run(s.name, func(b *testing.B) {
			e := NewEngine(0)
			opts := Options{DB: "app"}
			b.ReportAllocs()
			for b.Loop() {
				_ = e.analyze(s.sql, opts)
			}
		})
	}
}

// BenchmarkRewriteCached is a repeated statement through a resolver
// (target ≤ 2 µs).
func BenchmarkRewriteCached(b *testing.B) {
	for _, s := range benchStatements {
		b.Run(s.name, func(b *testing.B) {
			e, r := NewEngine(0), corpusResolver()
			opts := Options{DB: "app"}
			b.ReportAllocs()
			for b.Loop() {
				res, err := e.Rewrite(s.sql, opts, r)
				if err != nil || !res.Changed {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRewriteUncached analyses and rewrites a first-seen statement
// (target ≤ 25 µs).
func BenchmarkRewriteUncached(b *testing.B) {
	for _, s := range benchStatements {
		b.Run(s.name, func(b *testing.B) {
			e, r := NewEngine(0), corpusResolver()
			opts := Options{DB: "app"}
			b.ReportAllocs()
			for b.Loop() {
				res, err := e.analyze(s.sql, opts).Rewrite(r)
				if err != nil || !res.Changed {
					b.Fatal(err)
				}
			}
		})
	}
}
