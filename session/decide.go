package session

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/catalog"
	"github.com/sqlfork/sqlfork-proxy/infoschema"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// decide decides what to do with an input read with opts, analysed as a:
// answer it, refuse it, or send it — in a sandbox, once what it writes is
// forked and it is rewritten to the forks, which decide leaves to
// forkPlanned (Plan.fork).
func (s *Session) decide(ctx context.Context, sql string, a *rewrite.Analysis, opts rewrite.Options, prepared bool) (*Plan, error) {
	if !prepared {
		// Dynamic SQL whose text the proxy may compute first: planned with
		// that text in place.
		if text, ok, err := s.computedText(ctx, a, sql, opts); err != nil || ok {
			if err != nil {
				return nil, err
			}
			if text == sql {
				p := newPlan(sql, a)
				p.version = s.current(opts)
				return p, nil
			}
			return s.refreshed(ctx, text, opts, false)
		}
	}
	for _, st := range a.Statements {
		if st.Class == rewrite.ClassSandbox {
			if prepared {
				return nil, rewrite.Refuse(wire.ErUnsupportedPS, "SANDBOX statements cannot be prepared; send them as plain queries")
			}
			return s.sandboxStatement(sql)
		}
	}
	p := newPlan(sql, a)
	// The server reads each statement of an input with the settings the
	// statements before it left: one that changes how text is read must
	// come last, or the proxy would read the rest differently.
	for i, st := range a.Statements {
		if mustComeLast(st) && i < len(a.Statements)-1 {
			return nil, s.lexingChangeRefused()
		}
	}
	if err := s.checkGuardrails(a); err != nil {
		return nil, err
	}
	if pl, err := infoschema.OwnOnly(a, prepared); err != nil || pl != nil {
		p.processList = pl
		return p, err
	}
	switch {
	case s.sb != nil:
		return s.planInSandbox(ctx, a, sql, opts, prepared, p)
	case s.mode == Transparent:
		// refresh gives a transparent session a sandbox; one it could
		// not is refused there. Never production.
		return nil, rewrite.Refuse(wire.ErUnknown, "this connection has no sandbox; nothing runs outside a sandbox in transparent "+
			"mode: reconnect later or SANDBOX ATTACH one of yours")
	}
	return s.planOutside(ctx, a, sql, opts, prepared, p)
}

// refusalText is err's message without the proxy's prefix, to quote it in
// another refusal.
func refusalText(err error) string {
	var r *rewrite.Refusal
	if errors.As(err, &r) {
		return r.Plain()
	}
	return err.Error()
}

// planOutside plans an input of a session outside any sandbox (explicit
// mode, on production).
func (s *Session) planOutside(ctx context.Context, a *rewrite.Analysis, sql string, opts rewrite.Options, prepared bool, p *Plan) (*Plan, error) {
	if np, done, err := s.outsideSandbox(ctx, a, sql, opts, prepared, p); err != nil || done {
		return np, err
	}
	if s.mode == Explicit && !s.allowProd {
		if err := s.provesNoWrite(ctx, a); err != nil {
			return nil, err
		}
	}
	s.injectTimeout(a, p)
	p.version = s.current(opts)
	return p, nil
}

// provesNoWrite refuses, with --production-writes=deny, a statement on
// production the proxy cannot prove leaves production as it is and does
// not hold locks there.
func (s *Session) provesNoWrite(ctx context.Context, a *rewrite.Analysis) error {
	const deny = "(--production-writes=deny)"
	for _, st := range a.Statements {
		if st.Outside != "" {
			if err := s.unknownEngine(ctx, st); err != nil {
				return err
			}
			return rewrite.Refuse(wire.ErOptionPreventsStatement, "%s", st.Outside)
		}
		if reason := mutates(st); reason != "" {
			return rewrite.Refuse(wire.ErOptionPreventsStatement, "%s outside a sandbox would change production, which this proxy does not "+
				"allow %s; run SANDBOX CREATE first", reason, deny)
		}
		if reason := blocksProduction(st, s.serializable()); reason != "" {
			return rewrite.Refuse(wire.ErOptionPreventsStatement, "%s outside a sandbox would hold locks on production rows and block its "+
				"writers, which this proxy does not allow %s; run SANDBOX CREATE first "+
				"(a sandbox takes such locks on its own copies)", reason, deny)
		}
	}
	why, err := s.objs().Hazard(ctx, a, nil)
	if err != nil {
		return err
	}
	if why == "" {
		// What the engine cannot see through (unparseable writes, dynamic
		// SQL, stored functions) might write: refuse it too.
		if _, err := a.Rewrite(catalog.MapsNothing{}); err != nil {
			why = refusalText(err)
		}
	}
	if why != "" {
		return rewrite.Refuse(wire.ErOptionPreventsStatement, "outside a sandbox the proxy must prove a statement does not change "+
			"production %s, and cannot: %s; run SANDBOX CREATE first", deny, why)
	}
	return nil
}

// planInSandbox plans an input of a session in a sandbox: refused, answered
// by the proxy, or rewritten to the sandbox's tables after forking what it
// writes (and what it reads under locks).
func (s *Session) planInSandbox(ctx context.Context, a *rewrite.Analysis, sql string, opts rewrite.Options, prepared bool, p *Plan) (*Plan, error) {
	if ep, ok, err := s.answeredFirst(ctx, a, sql, opts, prepared, p); ok || err != nil {
		return ep, err
	}
	p.fork = &forkStep{a: a, sql: sql, opts: opts, prepared: prepared}
	return p, nil
}

// answeredFirst plans the inputs decided before any fork: SHOW WARNINGS
// and ERRORS, an EXECUTE of an SQL PREPARE, SHOW TABLES and its kind, a table named with no current
// database, CREATE DATABASE of one the sandbox has. ok is false for any
// other input.
func (s *Session) answeredFirst(ctx context.Context, a *rewrite.Analysis, sql string, opts rewrite.Options, prepared bool, p *Plan) (*Plan, bool, error) {
	one := len(a.Statements) == 1
	if diagnosticsOnly(a, prepared) {
		// The proxy runs it and tells the sandbox's database names in the
		// messages back.
		p.diagnostics = true
		return p, true, nil
	}
	if x, ok := xaRecoverOnly(a); ok {
		if prepared {
			return nil, true, rewrite.Refuse(wire.ErUnsupportedPS, "XA RECOVER is answered by the proxy in a sandbox (with the "+
				"sandbox's own transactions only) and cannot be prepared; send it as a plain query")
		}
		p.answer = func(ctx context.Context) (*Reply, error) { return s.xaRecover(ctx, x) }
		return p, true, nil
	}
	if one {
		switch a.Statements[0].Kind {
		case rewrite.KindSetGlobal:
			ep, err := s.planSetGlobal(ctx, a, prepared, p)
			return ep, true, err
		case rewrite.KindFlushStatus:
			ep, err := s.planFlushStatus(prepared, p)
			return ep, true, err
		}
		if ep, ok := s.answeredVarsShow(a, sql, prepared, p); ok {
			return ep, true, nil
		}
	}
	if ep, ok, err := s.planExecute(ctx, a, sql, opts, prepared, p); ok {
		return ep, true, err
	}
	if one && a.Statements[0].Show != nil {
		// SHOW TABLES / TABLE STATUS list the sandbox's view of a
		// database: asked of its information_schema instead.
		if np, ok, err := s.planShow(ctx, a.Statements[0].Show, opts, prepared); ok {
			return np, true, err
		}
	}
	if opts.DB == "" && namesNoDatabase(a) {
		return nil, true, errNoDatabase()
	}
	if prepared && a.ChangesDatabase() {
		return nil, true, rewrite.Refuse(wire.ErUnsupportedPS, "a prepared CREATE, DROP or ALTER DATABASE cannot run in a sandbox; send it as a plain statement")
	}
	if one && a.ChangesDatabase() {
		if err := s.planDatabase(ctx, a.Statements[0], cmp.Or(a.Statements[0].Database, opts.DB), p); err != nil {
			return nil, true, err
		}
	}
	if one && a.Statements[0].Kind == rewrite.KindCreateDatabase && !s.hasOwnDB(a.Statements[0].Database) {
		// CREATE DATABASE of a database the sandbox has changes nothing:
		// the server's answer (1007, or with IF NOT EXISTS its note).
		if q, err := s.createExistingDatabase(ctx, a.Statements[0]); err != nil || q != "" {
			p.dbChange = nil
			if err != nil {
				return nil, true, err
			}
			p.SQL, p.changed = q, true
			p.version = s.current(opts)
			return p, true, nil
		}
	}
	return nil, false, nil
}

// answersPlan reports whether the answer to a, one statement, is a plan
// the server writes with the names of the tables it reads, in a table or
// in JSON: EXPLAIN, ANALYZE of a statement, or a read of the optimizer
// trace of the statement before.
func answersPlan(a *rewrite.Analysis) bool {
	if len(a.Statements) != 1 {
		return false
	}
	st := a.Statements[0]
	if st.Kind == rewrite.KindExplain || a.Analyzes() {
		return true
	}
	for _, t := range st.Reads {
		if strings.EqualFold(t.DB, "information_schema") && strings.EqualFold(t.Name, "OPTIMIZER_TRACE") {
			return true
		}
	}
	return false
}

// writesNames reports whether the answer to a holds names the server
// writes out itself — definitions (SHOW CREATE …), plans (EXPLAIN, whose
// ref column is db.table.column), the answers of table maintenance (whose
// Table column is db.table), the definitions of views and routines and the
// column defaults (NEXTVAL(db.seq)) in information_schema — where a
// sandbox's tables show their physical databases.
func writesNames(a *rewrite.Analysis) bool {
	for i, st := range a.Statements {
		if st.Kind.IsShow() || st.Kind == rewrite.KindExplain || maintains(a, i) {
			return true // maintenance answers name each table db.table
		}
		if st.Kind == rewrite.KindCall {
			return true // its body's SHOW and warnings may name the sandbox's tables
		}
		for _, t := range st.Reads {
			if strings.EqualFold(t.DB, "information_schema") && (strings.EqualFold(t.Name, "VIEWS") ||
				strings.EqualFold(t.Name, "ROUTINES") || strings.EqualFold(t.Name, "TRIGGERS") || strings.EqualFold(t.Name, "COLUMNS")) {
				return true
			}
		}
	}
	return false
}

// errNoDatabase is the server's own error for a table named without a
// database when no database is current.
func errNoDatabase() error {
	return rewrite.ServerRefusal(wire.ErNoDB, "No database selected")
}

// namesNoDatabase reports whether a statement of a names a table without
// its database, read with no current database: the server refuses it with
// 1046 "No database selected", while a sandbox would place the table in a
// database of no name. (A FOREIGN KEY's REFERENCES clause is left out: the
// server takes its table from the database of the table it constrains.)
func namesNoDatabase(a *rewrite.Analysis) bool {
	for _, st := range a.Statements {
		for _, list := range [][]rewrite.Table{st.Reads, st.Writes, st.Like} {
			for _, t := range list {
				if t.DB == "" && !slices.Contains(st.References, t) {
					return true
				}
			}
		}
	}
	return false
}
