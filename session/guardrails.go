package session

import (
	"strconv"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// guard is a user's guardrails ready for use.
type guard struct {
	Guardrails
	policy rewrite.Policy
}

func newGuard(g Guardrails, prefix string) *guard {
	classes, _ := g.Classes() // validated with the configuration
	return &guard{Guardrails: g, policy: rewrite.Policy{InternalPrefix: prefix, DenyClasses: classes,
		DenyMultiStatements: g.DenyMultiStatements, StatementTimeout: g.StatementTimeout}}
}

// guard returns the guardrails of a proxy user (read without a lock: it
// is asked at every statement).
func (m *Manager) guard(user string) *guard {
	if t := m.guards.Load(); t != nil {
		if g, ok := (*t)[user]; ok {
			return g
		}
		if g := (*t)[""]; g != nil {
			return g
		}
	}
	return newGuard(Guardrails{}, m.cfg.Prefix) // before SetLimits
}

// Guardrails returns the guardrails in force for the session's user.
func (s *Session) Guardrails() Guardrails {
	if s.mode == Passthrough {
		return Guardrails{}
	}
	return s.m.guard(s.user).Guardrails
}

// checkGuardrails refuses an input the user's guardrails deny.
func (s *Session) checkGuardrails(a *rewrite.Analysis) error {
	g := s.m.guard(s.user)
	if err := g.policy.Check(a); err != nil {
		return err
	}
	if g.StatementTimeout > 0 && len(a.Statements) > 1 {
		r := rewrite.Refuse(wire.ErOptionPreventsStatement, "the statement-timeout guardrail (%s) bounds one statement at a time, and this input "+
			"holds %d; send them one at a time", g.StatementTimeout, len(a.Statements))
		r.Reason = GuardStatementTimeout
		return r
	}
	return nil
}

// checkMultiStatement refuses a multi-statement input the proxy splits
// itself (one holding SANDBOX statements) when the user's guardrails deny
// multi-statements.
func (s *Session) checkMultiStatement() error {
	if s.mode == Passthrough || !s.m.guard(s.user).DenyMultiStatements {
		return nil
	}
	r := rewrite.Refuse(wire.ErOptionPreventsStatement, "multi-statement input is denied by the deny-multi-statements guardrail; "+
		"send the statements one at a time")
	r.Reason = GuardDenyMultiStatements
	return r
}

// injectTimeout puts the statement-timeout guardrail into the text p
// sends, for a single read or write (SHOW statements excepted: SHOW
// WARNINGS must see the statement before it).
func (s *Session) injectTimeout(a *rewrite.Analysis, p *Plan) {
	g := s.m.guard(s.user)
	if g.StatementTimeout <= 0 || len(a.Statements) != 1 || a.Statements[0].Kind.IsShow() {
		return
	}
	sql := g.policy.WithTimeout(p.SQL, a, s.m.server.Flavor)
	p.timeout = sql != p.SQL
	p.SQL = sql
}

// TimedOut reports whether an error code the server answered p with is
// the statement timeout the guardrail injected (for counting).
func (p *Plan) TimedOut(code uint16) bool {
	return p != nil && p.timeout && (code == wire.ErStatementTimeout || code == wire.ErQueryTimeout)
}

// RowCapError is the error that ends a result set longer than the
// max-rows guardrail.
func (s *Session) RowCapError(limit int64) *rewrite.Refusal {
	r := rewrite.Refuse(wire.ErUserLimitReached, "User '%s' has exceeded the 'max_rows' resource (current value: %s): the result has more "+
		"rows than the max-rows guardrail lets through, so it was cut after %s rows; add a LIMIT or a narrower WHERE",
		s.user, strconv.FormatInt(limit, 10), strconv.FormatInt(limit, 10))
	r.Reason = GuardMaxRows
	return r
}
