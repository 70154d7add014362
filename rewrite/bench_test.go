package rewrite

import (
	"errors"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite/internal/benchcases"
)

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

// benchEach runs, for each of the benchmark statements (which touch
// sandboxed tables: corpus resolver), one statement a loop on an engine of
// its own; step fails the benchmark with its error.
func benchEach(b *testing.B, step func(e *Engine, r Resolver, sql string, opts Options) error) {
	for _, s := range benchcases.Statements {
		b.Run(s.Name, func(b *testing.B) {
			e, r := NewEngine(0), corpusResolver()
			opts := Options{DB: "app"}
			b.ReportAllocs()
			for b.Loop() {
				if err := step(e, r, s.SQL, opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// changed is err, or an error where res is not a rewrite.
func changed(res *Result, err error) error {
	if err == nil && !res.Changed {
		return errors.New("not rewritten")
	}
	return err
}

// BenchmarkClassifyCached is Analyze on a cache hit.
func BenchmarkClassifyCached(b *testing.B) {
	benchEach(b, func(e *Engine, _ Resolver, sql string, opts Options) error {
		_ = e.Analyze(sql, opts)
		return nil
	})
}

// BenchmarkClassifyUncached parses and binds every time.
func BenchmarkClassifyUncached(b *testing.B) {
	benchEach(b, func(e *Engine, _ Resolver, sql string, opts Options) error {
		_ = e.analyze(sql, opts)
		return nil
	})
}

// BenchmarkRewriteCached is a repeated statement through a resolver
// (target ≤ 2 µs).
func BenchmarkRewriteCached(b *testing.B) {
	benchEach(b, func(e *Engine, r Resolver, sql string, opts Options) error {
		return changed(e.Rewrite(sql, opts, r))
	})
}

// BenchmarkRewriteUncached analyses and rewrites a first-seen statement
// (target ≤ 25 µs).
func BenchmarkRewriteUncached(b *testing.B) {
	benchEach(b, func(e *Engine, r Resolver, sql string, opts Options) error {
		return changed(e.analyze(sql, opts).Rewrite(r))
	})
}
