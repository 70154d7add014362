package session

import (
	"strings"

	"github.com/sqlfork/sqlfork-proxy/infoschema"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// resolver maps logical tables to the session's sandbox.
type resolver struct {
	s *Session
	// productionViews leaves the sandbox's copies of production views
	// out: SHOW CREATE VIEW shows production's definition.
	productionViews bool
	// productionTrigger leaves the trigger SHOW CREATE TRIGGER names as
	// written: production's (objects.Placer.ForkTrigger).
	productionTrigger bool
	// counts, when set, are ROW_COUNT() and FOUND_ROWS() for the input's
	// first statement (PreviousCounts).
	counts *lastCounts
}

// showCreateView reports an input that is SHOW CREATE VIEW.
func showCreateView(a *rewrite.Analysis) bool {
	return len(a.Statements) == 1 && a.Statements[0].Kind == rewrite.KindShowCreateView
}

// Resolve implements rewrite.Resolver.
func (r resolver) Resolve(t rewrite.Table, write bool) (rewrite.Table, bool, error) {
	if e, ok := r.s.sb.Resolve(r.s.m.names.Key(t)); ok && !(r.productionViews && e.Kind == sandbox.KindView) {
		return e.Phys, true, nil
	}
	if d, own := r.s.ownDB(t.DB); own {
		// A database the sandbox made or dropped: every name in it is
		// the sandbox's (databases.go).
		return rewrite.Table{DB: d.Phys, Name: t.Name}, true, nil
	}
	if strings.EqualFold(t.DB, "information_schema") {
		if v, ok := infoschema.ViewName(t.Name); ok && r.s.sb.HasInfoViews() {
			return rewrite.Table{DB: sandbox.InfoSchema(r.s.m.cfg.Prefix, r.s.sb.ID), Name: v}, true, nil
		}
	}
	if v, ok := infoschema.OwnConnView(t); ok && r.s.sb.HasInfoViews() {
		return rewrite.Table{DB: sandbox.InfoSchema(r.s.m.cfg.Prefix, r.s.sb.ID), Name: v}, true, nil
	}
	if strings.EqualFold(t.DB, "information_schema") && infoschema.Safe[strings.ToLower(t.Name)] {
		// Lists no database's objects (character sets, the session's
		// status, …): the sandbox's as it is, in a routine's body too.
		return t, true, nil
	}
	if write {
		// Every written table is forked before rewriting; one that is not
		// was missed by the analysis. Fail closed.
		return t, false, rewrite.Refuse(wire.ErUnknown, "the statement writes %s, which is not in the sandbox; "+
			"the proxy refuses rather than write production (simplify the statement)", t)
	}
	return t, false, nil
}

// XAPrefix implements rewrite.XAResolver: the sandbox's XA transaction
// ids are its own (sandbox.XAPrefix).
func (r resolver) XAPrefix() string { return sandbox.XAPrefix(r.s.sb.ID) }
