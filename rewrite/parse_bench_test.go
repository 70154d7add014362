package rewrite

import "testing"

// BenchmarkParseOnly is the TiDB parser alone on the benchmark statements:
// the floor under every uncached analysis.
func BenchmarkParseOnly(b *testing.B) {
	for _, s := range benchStatements {
		b.Run(s.name, func(b *testing.B) {
			e := NewEngine(0)
			b.ReportAllocs()
			for b.Loop() {
				_, release, err := e.parse(s.sql, Options{})
				if err != nil {
					b.Fatal(err)
				}
				release()
			}
		})
	}
}
