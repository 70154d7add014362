package session

import (
	"context"

	"github.com/sqlfork/sqlfork-proxy/infoschema"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/session/txn"
)

// Test-only views of the session's internals, for this package's external
// tests (package session_test), which state the sandbox layer's decisions
// one step at a time.

// PlanFlags are a plan's decisions.
type PlanFlags struct {
	Changed, Restart, Replay, Stateful bool
	Begin, TxEnd, TxControl, DDL       bool
	UseDB, ReadVars, Diagnostics       bool
	Statements                         int
	ProcessList                        *infoschema.ProcessList
	Version                            Version
}

// Flags returns p's decisions.
func (p *Plan) Flags() PlanFlags {
	return PlanFlags{Changed: p.changed, Restart: p.restart == txn.Restart, Replay: p.restart == txn.Replay,
		Stateful: p.locks, Begin: p.shape.Begin, TxEnd: p.shape.End, TxControl: p.shape.Control, DDL: p.shape.DDL,
		UseDB: p.shape.UseDB, ReadVars: p.shape.Vars, Diagnostics: p.diagnostics, Statements: p.statements, ProcessList: p.processList,
		Version: p.version}
}

// Label is p.label.
func (p *Plan) Label(name string) (string, bool) { return p.label(name) }

// ColumnSpelling is p.columnSpelling.
func (p *Plan) ColumnSpelling(name string) (string, bool) { return p.columnSpelling(name) }

// readWith are the session's text-reading options with the client-side
// ones of opts (current database, ANSI_QUOTES, NO_BACKSLASH_ESCAPES).
func (s *Session) readWith(opts rewrite.Options) rewrite.Options {
	o := s.options()
	o.DB, o.ANSIQuotes, o.NoBackslashEscapes = opts.DB, opts.ANSIQuotes, opts.NoBackslashEscapes
	return o
}

// PlanWith plans sql read with opts (a SANDBOX statement run), without
// the answers Plan makes (process list, warnings) or KILL.
func (s *Session) PlanWith(ctx context.Context, sql string, opts rewrite.Options, prepared bool) (*Plan, error) {
	if s.mode == Passthrough {
		return &Plan{SQL: sql, text: sql}, nil
	}
	p, err := s.refreshed(ctx, sql, s.readWith(opts), prepared)
	if err == nil {
		err = s.forkPlanned(ctx, p)
	}
	if err != nil {
		return nil, s.serverVerdict(ctx, sql, s.readWith(opts), err)
	}
	if err := s.answered(ctx, p); err != nil {
		return nil, err
	}
	return p, nil
}

// Stale reports whether a plan made at v must be made again for a text
// read with opts.
func (s *Session) Stale(v Version, opts rewrite.Options) bool {
	return v != s.current(s.readWith(opts))
}

// Executed is s.executed.
func (s *Session) Executed(ctx context.Context, p *Plan, status uint16, failed bool) error {
	return s.executed(ctx, p, status, failed)
}

// Restarted is the transaction's Restarted at the registry's epoch now.
func (s *Session) Restarted(replayed bool) { s.tx.Restarted(replayed, s.m.reg.Epoch()) }

// ReplayRefused is txn.ReplayRefused for the session's sandbox.
func (s *Session) ReplayRefused(why string) error { return txn.ReplayRefused(s.SandboxName(), why) }

// ChangesLexing is s.changesLexing with the session's options.
func (s *Session) ChangesLexing(sql string, opts rewrite.Options) bool {
	return s.changesLexing(sql, s.readWith(opts))
}

// SetVars sets the session's variables as if read from its upstream.
func (s *Session) SetVars(v Vars) { s.vars, s.varsKnown = v, true }

// VarsQuery is s.varsQuery.
func (s *Session) VarsQuery() string { return s.varsQuery() }

// VarsFallbackQuery is varsFallbackQuery.
func (s *Session) VarsFallbackQuery() string { return varsFallbackQuery }

// CheckMultiStatement is s.checkMultiStatement.
func (s *Session) CheckMultiStatement() error { return s.checkMultiStatement() }

// Unmap is s.unmap.
func (s *Session) Unmap(msg string) string { return s.unmap(msg) }

// LogicalDB is s.logicalDB.
func (s *Session) LogicalDB(phys string) (string, bool) { return s.logicalDB(phys) }

// IsInfoSchema is s.isInfoSchema.
func (s *Session) IsInfoSchema(phys string) bool { return s.isInfoSchema(phys) }

// AuditExecution is s.auditExecution.
func (s *Session) AuditExecution(p *Plan) { s.auditExecution(p) }

// Manager is the session's manager.
func (s *Session) Manager() *Manager { return s.m }

// SyncWaiters is how many callers wait for the next registry check of the
// session's sandbox.
func (s *Session) SyncWaiters() int { return s.sb.SyncWaiters() }

// UnquoteRenames is unquoteRenames.
var UnquoteRenames = unquoteRenames

// EndGraces is the registry's EndGraces.
func (m *Manager) EndGraces() { m.reg.EndGraces() }

// LifeLock is the registry's LifeLock.
func (m *Manager) LifeLock(name string) string { return m.reg.LifeLock(name) }

// NameID is the id of the sandbox called name in every process.
func NameID(name string) string { return registry.NameID(name) }

// Plan is a text's whole plan: Run's plan, answer and fork steps.
func (s *Session) Plan(ctx context.Context, sql string, prepared bool) (*Plan, error) {
	p, _, err := s.planned(ctx, Input{Text: sql, Prepare: prepared}, nil)
	if err == nil {
		err = s.answered(ctx, p)
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Decided is a text's plan through Run's plan and fork steps only: the
// session's own answer not yet made.
func (s *Session) Decided(ctx context.Context, sql string) (*Plan, error) {
	p, _, err := s.planned(ctx, Input{Text: sql}, nil)
	return p, err
}

// Decide is decide alone of sql (a plain query, read with the session's
// settings): no refresh before it, no fork after it.
func (s *Session) Decide(ctx context.Context, sql string) (*Plan, error) {
	opts := s.options()
	return s.decide(ctx, sql, s.m.engine.Analyze(sql, opts), opts, false)
}

// Before is before, the step of Run after planning.
func (s *Session) Before(ctx context.Context, p *Plan) error { return s.before(ctx, p) }

// After is after, Run's last step.
func (s *Session) After(ctx context.Context, p *Plan, o *Outcome) error { return s.after(ctx, p, o) }

// Revalidate is revalidate and the fork step: an execution's plan made
// anew, nil when it still holds.
func (s *Session) Revalidate(ctx context.Context, p *Plan) (*Plan, error) {
	np, err := s.revalidate(ctx, p)
	if err == nil && np != nil {
		err = s.forkPlanned(ctx, np)
	}
	if err != nil {
		return nil, err
	}
	return np, nil
}

// Relabel is relabel: how p's answer's names are told back.
func (s *Session) Relabel(p *Plan) *Relabel { return s.relabel(p) }

// Abandon is abandon: undo what planning p made, when p never ran.
func (s *Session) Abandon(ctx context.Context, p *Plan) { s.abandon(ctx, p) }
