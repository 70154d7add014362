package session

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox/forking"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Guardrails bound what one proxy user's sessions may do in the sandbox
// modes (transparent and explicit); passthrough sessions are not read by
// the proxy and get none. Zero values mean no bound.
type Guardrails struct {
	// DenyStatements names statement classes refused outright: read,
	// write, ddl, transaction, session, routine, other.
	DenyStatements []string
	// DenyMultiStatements refuses inputs holding more than one statement.
	DenyMultiStatements bool
	// StatementTimeout is injected into every read and write sent
	// upstream (MariaDB SET STATEMENT max_statement_time=… FOR, MySQL
	// MAX_EXECUTION_TIME for SELECT).
	StatementTimeout time.Duration
	// MaxRows caps the rows of one result set: past it the proxy stops
	// forwarding rows and ends the statement with an error.
	MaxRows int64
	// MaxForkBytes caps the bytes of tables forked into one sandbox.
	MaxForkBytes int64
	// MaxSandboxes caps the sandboxes one proxy user owns at once in this
	// process.
	MaxSandboxes int
}

// Guardrail names, as counted in refusals (Refusal.Reason) and named in
// settings.
const (
	GuardDenyStatements      = rewrite.ReasonDenyStatements
	GuardDenyMultiStatements = rewrite.ReasonDenyMultiStatements
	GuardStatementTimeout    = rewrite.ReasonStatementTimeout
	GuardMaxRows             = "max_rows"
	GuardMaxForkBytes        = forking.ReasonMaxForkBytes
	GuardMaxSandboxes        = "max_sandboxes_per_user"
)

// deniableClasses are the classes DenyStatements may name (SANDBOX
// statements are how a user leaves trouble; unparseable ones are refused
// in sandboxes anyway).
func deniableClasses() []rewrite.Class {
	return []rewrite.Class{rewrite.ClassRead, rewrite.ClassWrite, rewrite.ClassDDL, rewrite.ClassTransaction,
		rewrite.ClassSession, rewrite.ClassRoutine, rewrite.ClassOther}
}

// Validate checks the guardrails, naming the bad one.
func (g Guardrails) Validate() error {
	if _, err := g.classes(); err != nil {
		return err
	}
	switch {
	case g.StatementTimeout < 0:
		return fmt.Errorf("statement-timeout: must be >= 0, got %s", g.StatementTimeout)
	case g.StatementTimeout > 0 && g.StatementTimeout < time.Millisecond:
		return fmt.Errorf("statement-timeout: %s is below the server's resolution of 1ms", g.StatementTimeout)
	case g.MaxRows < 0:
		return fmt.Errorf("max-rows: must be >= 0, got %d", g.MaxRows)
	case g.MaxForkBytes < 0:
		return fmt.Errorf("max-fork-bytes: must be >= 0, got %d", g.MaxForkBytes)
	case g.MaxSandboxes < 0:
		return fmt.Errorf("max-sandboxes-per-user: must be >= 0, got %d", g.MaxSandboxes)
	}
	return nil
}

// classes parses DenyStatements.
func (g Guardrails) classes() ([]rewrite.Class, error) {
	var out []rewrite.Class
	for _, name := range g.DenyStatements {
		i := slices.IndexFunc(deniableClasses(), func(c rewrite.Class) bool { return strings.EqualFold(c.String(), name) })
		if i < 0 {
			names := make([]string, 0, 7)
			for _, c := range deniableClasses() {
				names = append(names, c.String())
			}
			return nil, fmt.Errorf("deny-statements: %q is not a statement class (want some of %s)", name, strings.Join(names, ", "))
		}
		out = append(out, deniableClasses()[i])
	}
	return out, nil
}

// guard is a user's guardrails ready for use.
type guard struct {
	Guardrails
	policy rewrite.Policy
}

func newGuard(g Guardrails, prefix string) *guard {
	classes, _ := g.classes() // validated with the configuration
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
