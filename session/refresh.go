package session

import (
	"context"

	"github.com/sqlfork/sqlfork-proxy/infoschema"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// refresh brings the session's binding up to date before a text analysed
// as a is decided, so that deciding reads the session's state and changes
// none of it: a transparent session that lost its sandbox gets a new one
// (keepTransparent); outside a sandbox, the production views of
// information_schema a text reads are made (once a process); a shared
// sandbox's tables are synced with other processes' when the text reads a
// table its map leaves to production (syncFor); a sandbox discarded
// elsewhere is left — a transparent session gets a new one — and the text
// refused. SANDBOX statements, which bind themselves, and SHOW PROCESSLIST
// are decided as the session stands; SHOW WARNINGS and ERRORS read what
// the last statement left, in whatever sandbox.
func (s *Session) refresh(ctx context.Context, a *rewrite.Analysis, prepared bool) error {
	if asItStands(a, prepared) {
		return nil
	}
	if err := s.keepTransparent(); err != nil {
		return err
	}
	switch {
	case s.sb == nil && infoschema.ReadsViews(a):
		// Outside a sandbox, information_schema's listings are read
		// through the production views (outsideSandbox).
		return s.m.ensureProdViews(ctx)
	case s.sb == nil || diagnosticsOnly(a, prepared):
		return nil
	}
	if err := s.syncFor(ctx, a); err != nil {
		return err
	}
	if !s.sb.IsDiscarded() {
		return nil
	}
	name := s.sb.Name
	s.unbind()
	if s.mode == Transparent {
		if err := s.fresh(); err != nil {
			return err
		}
	}
	return rewrite.Refuse(wire.ErUnknown, "sandbox %q was discarded (by SANDBOX DISCARD elsewhere or expiry); this connection "+
		"is now in %s; retry", name, s.where())
}

// refreshed is the text sql, read with opts, analysed once, then decided
// once the session is refreshed for it; a text of a session whose sql_mode
// the proxy cannot read as the server does is refused first.
func (s *Session) refreshed(ctx context.Context, sql string, opts rewrite.Options, prepared bool) (*Plan, error) {
	if m := unreadableMode(s.vars.SQLMode); m != "" {
		return nil, rewrite.Refuse(wire.ErOptionPreventsStatement, "sql_mode %s changes how the server reads statements in ways the proxy does not "+
			"follow, so it cannot keep them away from production; SET sql_mode without %s", m, m)
	}
	a := s.m.engine.Analyze(sql, opts)
	if err := s.refresh(ctx, a, prepared); err != nil {
		return nil, err
	}
	return s.decide(ctx, sql, a, opts, prepared)
}

// asItStands reports whether a is decided with the session's binding as it
// stands: it holds a SANDBOX statement, or is SHOW PROCESSLIST.
func asItStands(a *rewrite.Analysis, prepared bool) bool {
	for _, st := range a.Statements {
		if st.Class == rewrite.ClassSandbox {
			return true
		}
	}
	pl, err := infoschema.OwnOnly(a, prepared)
	return pl != nil || err != nil
}

// diagnosticsOnly reports whether a is SHOW WARNINGS or SHOW ERRORS alone,
// sent as a plain query.
func diagnosticsOnly(a *rewrite.Analysis, prepared bool) bool {
	return !prepared && len(a.Statements) == 1 &&
		(a.Statements[0].Kind == rewrite.KindShowWarnings || a.Statements[0].Kind == rewrite.KindShowErrors)
}

// keepTransparent gives a transparent session that lost its sandbox
// (discarded, and no new one could be made then) a new one: it is never
// on production.
func (s *Session) keepTransparent() error {
	if s.sb != nil || s.mode != Transparent {
		return nil
	}
	if err := s.fresh(); err != nil {
		return rewrite.Refuse(wire.ErUnknown, "this connection has no sandbox and cannot get one (%s); "+
			"nothing runs outside a sandbox in transparent mode: reconnect later or SANDBOX ATTACH one of yours", refusalText(err))
	}
	return nil
}
