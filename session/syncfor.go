package session

import (
	"context"

	"github.com/sqlfork/sqlfork-proxy/infoschema"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
)

// unmapped reports whether a touches a table whose place another process
// may have changed since this one last looked: one the sandbox's map
// leaves to production (a fork made elsewhere), or, with sync leases, any
// (a SANDBOX RESET elsewhere gives forks back to production, and waits
// out the leases before it drops them). information_schema and
// performance_schema aside: the sandbox's information_schema views read
// the registry as it is.
func (s *Session) unmapped(a *rewrite.Analysis) bool {
	leased := s.m.reg.Leased()
	for _, st := range a.Statements {
		for _, list := range [][]rewrite.Table{st.Reads, st.Writes, st.Names, st.Like} {
			for _, t := range list {
				if infoschema.Virtual(t) {
					continue
				}
				if _, ok := s.sb.Resolve(s.m.names.Key(t)); !ok || leased {
					return true
				}
			}
		}
	}
	return false
}

// syncFor checks the registry before a statement analysed as a, when
// another process may have changed a table it would otherwise read from
// production (see syncTables).
func (s *Session) syncFor(ctx context.Context, a *rewrite.Analysis) error {
	if s.synced || !s.sb.Shareable() || !s.unmapped(a) {
		return nil
	}
	return s.m.reg.SyncTables(ctx, s.sb)
}
