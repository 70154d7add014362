package session

import (
	"context"

	"github.com/sqlfork/sqlfork-proxy/infoschema"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
)

// Views over filling forks. A statement naming a production view (or the
// sandbox's copy of one) reads the tables the view reads, which it does
// not name: it waits for the fills of those that are filling forks, and
// no copy-up bounds its rows. A view the proxy cannot follow (one calling
// a stored function, one it cannot read) may reach any table: the
// statement waits for every fill of the sandbox. The sandbox's own views
// (CREATE VIEW in it) forked what they read, whole, when made.

// viewOf says whether t is a production view or the sandbox's copy of one
// (view), the keys of the filling forks it reads (fills), and whether
// those are all it may reach (ok; false when the lookup failed).
func (s *Session) viewOf(ctx context.Context, t rewrite.Table) (view bool, fills []string, ok bool) {
	if e, held := s.sb.Resolve(s.m.names.Key(t)); held && e.Kind != sandbox.KindView || infoschema.Virtual(t) || t.DB == "" {
		return false, nil, true
	}
	o, err := s.m.catalog.Object(ctx, t)
	switch {
	case err != nil:
		return true, nil, false
	case o.Kind != "VIEW":
		return false, nil, true
	case o.Hazard != "" || o.Calls != "" || o.View == nil:
		return true, nil, false
	}
	for _, b := range o.Bases {
		k := s.m.names.Key(b)
		e, held := s.sb.Resolve(k)
		switch {
		case held && e.Kind == sandbox.KindView:
			return true, nil, false // a copy of a view of its name, made since: followed no further
		case held && e.Filling:
			fills = append(fills, k)
		}
	}
	return true, fills, true
}

// namesView says whether st names a view (viewOf).
func (s *Session) namesView(ctx context.Context, st rewrite.Statement) bool {
	for _, t := range named(st) {
		if view, _, _ := s.viewOf(ctx, t); view {
			return true
		}
	}
	return false
}

// copyUpSafe says whether a copy-up may bound the rows st reaches: it
// reaches no table the proxy cannot see (fillSafe) and names no view.
func (s *Session) copyUpSafe(ctx context.Context, st rewrite.Statement) bool {
	return s.fillSafe(ctx, st) && !s.namesView(ctx, st)
}
