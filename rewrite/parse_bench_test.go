package rewrite

import "testing"

// BenchmarkParseOnly is the TiDB parser alone on the benchmark statements:
// the floor under every uncached analysis.
func BenchmarkParseOnly(b *testing.B) {
	benchEach(b, func(e *Engine, _ Resolver, sql string, _ Options) error {
		_, release, err := e.parse(sql, Options{})
		if err == nil {
			release()
		}
		return err
	})
}
