package forking

import (
	"fmt"
	"slices"

	"github.com/sqlfork/sqlfork-proxy/forker"
)

// shapeChange says how production's table (prod) now differs from its
// fork (fork), made like it at the fork and unaltered while it fills, or
// "" when it does not: a fill started again copies production's rows of
// now into the fork's shape, which a changed column would cut short,
// convert or miss, and a changed key would copy by another order. A
// column production added is no change here: the fork has not got it,
// as any fork has not got a column added after it.
func shapeChange(fork, prod forker.Shape) string {
	if !slices.Equal(fork.Key, prod.Key) {
		return fmt.Sprintf("its key is now %v, the fork's %v", prod.Key, fork.Key)
	}
	cols := map[string]forker.Column{}
	for _, c := range prod.Columns {
		cols[c.Name] = c
	}
	for _, f := range fork.Columns {
		p, ok := cols[f.Name]
		switch {
		case !ok:
			return fmt.Sprintf("its column %s is gone", f.Name)
		case p.Type != f.Type || p.Generated != f.Generated || p.Nullable != f.Nullable:
			return fmt.Sprintf("its column %s is now %s, the fork's %s", f.Name, p.Type, f.Type)
		}
	}
	return ""
}
