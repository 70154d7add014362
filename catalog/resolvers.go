package catalog

import "github.com/sqlfork/sqlfork-proxy/rewrite"

// MapsNothing is a resolver that leaves every table where it is; with it
// the engine still refuses what it cannot analyse.
type MapsNothing struct{}

// Resolve implements rewrite.Resolver.
func (MapsNothing) Resolve(t rewrite.Table, _ bool) (rewrite.Table, bool, error) {
	return t, false, nil
}
