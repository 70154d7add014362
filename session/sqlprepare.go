package session

import (
	"context"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// SQL prepared statements in a sandbox. PREPARE name FROM 'text' is planned
// like the statement it holds (its tables forked, the text rewritten); the
// session keeps it, so that EXECUTE name can run: before each EXECUTE the
// PREPARE is planned again and, when what its text resolves to has changed
// meanwhile (a table it reads forked since), prepared again upstream under
// the same name, so the server never runs a text that reads production
// where the sandbox has its own table. Kept are only a PREPARE sent alone,
// of a single read or write, in this sandbox: any other EXECUTE is refused
// as before (the proxy cannot see what it runs), and so is one whose own
// text names a table (USING a subquery) — but for a name no PREPARE of the
// connection has named since it was last dropped, which the server has
// not, so EXECUTE goes to it for its own error (1243). A transaction that
// EXECUTEs is not replayed past a fork (1412): its USING values may have
// changed.

// sqlStmt is a SQL prepared statement the session keeps.
type sqlStmt struct {
	text string // the client's PREPARE statement
	sent string // the PREPARE sent upstream
	db   string // the current database it was prepared in
	sb   *Sandbox
	// itself, for a statement the proxy answers or watches by its kind,
	// is its text: EXECUTE name is planned as that text sent itself.
	itself string
}

// keepPrepare marks on p a PREPARE of a single read or write, sent alone,
// for after to keep once the server prepared it; any other PREPARE or
// DEALLOCATE of a name makes the session forget it.
func (s *Session) keepPrepare(a *rewrite.Analysis, sql string, opts rewrite.Options, prepared bool, p *Plan) {
	for _, st := range a.Statements {
		if st.HandleOp == "PREPARE" || st.HandleOp == "DEALLOCATE" {
			p.forgetStmts = append(p.forgetStmts, st.Handle)
		}
	}
	if len(a.Statements) != 1 || prepared {
		return
	}
	st := a.Statements[0]
	if st.HandleOp == "DEALLOCATE" {
		p.dropped = st.Handle
	}
	if st.HandleOp != "PREPARE" || st.Inner == nil || len(st.Inner.Statements) != 1 {
		return
	}
	switch is := st.Inner.Statements[0]; {
	case is.Class == rewrite.ClassRead || is.Class == rewrite.ClassWrite:
	case is.Kind == rewrite.KindCreateTable && !is.Temporary:
		// CREATE TABLE [… AS SELECT]: planned again at each EXECUTE, its
		// table placed in the sandbox as for the statement itself.
	case is.Class == rewrite.ClassUnparseable && len(is.Names)+len(is.Reads)+len(is.Writes) == 0:
		// A text the parser rejects that names no table (a function the
		// parser does not know, say): nothing in it to rewrite, ever.
	default:
		// Any other (SHOW, SET, CREATE VIEW, a procedure's DDL, …): its
		// EXECUTE runs as the text sent itself, when the server runs the
		// text so (rewrite.PreparedText, as for EXECUTE IMMEDIATE).
		text, ok := s.m.engine.PreparedText(sql, opts)
		if !ok || rewrite.UnpreparableText(text, opts) {
			return
		}
		p.keepStmt = &sqlStmt{text: sql, sent: p.SQL, db: opts.DB, sb: s.sb, itself: text}
		p.keepName = st.Handle
		return
	}
	p.keepStmt = &sqlStmt{text: sql, sent: p.SQL, db: opts.DB, sb: s.sb}
	p.keepName = st.Handle
}

// notePrepares records the names the PREPAREs of a planned input name: the
// server may have statements of those names from then on.
func (s *Session) notePrepares(a *rewrite.Analysis) {
	if a == nil {
		return
	}
	for _, st := range a.Statements {
		if st.HandleOp == "PREPARE" {
			if s.prepNames == nil {
				s.prepNames = map[string]bool{}
			}
			s.prepNames[st.Handle] = true
		}
	}
}

// keptStatements records, after p ran, the SQL prepared statements it
// made or dropped.
func (s *Session) keptStatements(p *Plan, failed bool) {
	for _, name := range p.forgetStmts {
		delete(s.sqlStmts, name)
	}
	if p.dropped != "" {
		// Dropped, or there was none (1243): the server has none now.
		delete(s.prepNames, p.dropped)
	}
	if p.keepStmt != nil && !failed {
		if s.sqlStmts == nil {
			s.sqlStmts = map[string]*sqlStmt{}
		}
		s.sqlStmts[p.keepName] = p.keepStmt
	}
}

// planExecute plans, in a sandbox, EXECUTE name [USING @v, …] (sql,
// analysed as a; sent as it is, p) of a statement the session keeps; ok is
// false for any other input (planned as before: the engine refuses an
// EXECUTE).
func (s *Session) planExecute(ctx context.Context, a *rewrite.Analysis, sql string, opts rewrite.Options, prepared bool, p *Plan) (*Plan, bool, error) {
	if prepared || len(a.Statements) != 1 || a.Statements[0].HandleOp != "EXECUTE" {
		return nil, false, nil
	}
	st := a.Statements[0]
	stored := false
	for _, f := range st.Funcs {
		stored = stored || !s.m.catalog.Native(f)
	}
	if len(st.Reads)+len(st.Writes)+len(st.Names) > 0 || stored {
		return nil, true, rewrite.Refuse(wire.ErOptionPreventsStatement, "EXECUTE … USING reads tables or calls functions the "+
			"proxy would have to rewrite; set user variables first and EXECUTE … USING them")
	}
	if !s.prepNames[st.Handle] {
		// No statement of that name on the server: its error, as directly.
		return p, true, nil
	}
	kept := s.sqlStmts[st.Handle]
	if kept == nil || kept.sb != s.sb {
		return nil, false, nil
	}
	if kept.itself != "" {
		// Run as the text sent itself, in the database the server runs
		// it in (the one it was prepared in); with USING values, the
		// server's 1210 (the text has no placeholder) and nothing run.
		switch {
		case !s.m.engine.BareExecute(sql, opts):
			return p, true, nil
		case opts.DB != kept.db:
			return nil, false, nil
		}
		pp, err := s.refreshed(ctx, kept.itself, opts, false)
		return pp, true, err
	}
	at := opts
	at.DB = kept.db
	pp, err := s.refreshed(ctx, kept.text, at, false)
	if err != nil {
		return nil, true, err
	}
	// What the PREPARE's text now resolves to is known once it is forked:
	// the fork step (forkExecute) prepares it again if need be.
	e := &executeStep{prepare: pp, kept: kept, handle: st.Handle}
	return &Plan{SQL: sql, text: sql, statements: 1, fork: &forkStep{sql: sql, opts: opts, execute: e}}, true, nil
}

// executeStep is the fork step of an EXECUTE of a statement the session
// keeps: its PREPARE's plan, forked and prepared again upstream when what
// its text resolves to has changed since it was prepared.
type executeStep struct {
	prepare *Plan // the kept PREPARE's text, planned again
	kept    *sqlStmt
	handle  string
}

// forkExecute is the fork step of p, EXECUTE name sent as sql with opts,
// planned by planExecute: the PREPARE forked (forkPlanned), prepared again
// under the same name when its rewrite differs from the one the server
// holds, then p made its execution.
func (s *Session) forkExecute(ctx context.Context, p *Plan, sql string, opts rewrite.Options, e *executeStep) error {
	pp, kept := e.prepare, e.kept
	if err := s.forkPlanned(ctx, pp); err != nil {
		return err
	}
	if pp.SQL != kept.sent {
		if opts.DB != kept.db {
			s.abandon(ctx, pp)
			return rewrite.Refuse(wire.ErOptionPreventsStatement, "the statement %s was prepared in database %s and "+
				"the sandbox has changed the tables it names since; USE %s again or PREPARE it again", quote.Ident(e.handle),
				quote.Ident(kept.db), quote.Ident(kept.db))
		}
		if _, err := s.up.Query(ctx, pp.SQL); err != nil {
			s.abandon(ctx, pp)
			return err
		}
		kept.sent = pp.SQL
	}
	np := *pp
	if in := preparedInner(pp); in != nil && answersPlan(in) {
		// The answer is the plan of the prepared statement's text.
		np.nameRows, np.planJSON, np.explainDB = true, true, in.Statements[0].DB
	}
	np.SQL, np.text, np.statements = sql, sql, 1
	np.keepStmt, np.forgetStmts, np.noReplay = nil, nil, true
	if in := preparedInner(pp); in != nil && in.Statements[0].Class == rewrite.ClassDDL {
		// It commits the transaction, and makes the table it names, as the
		// statement itself would.
		np.shape.DDL = true
		np.refresh = append(append([]rewrite.Table(nil), np.refresh...), in.Statements[0].Writes...)
		if err := s.stopCapturesFor(ctx, in.Statements[0], true); err != nil {
			return err
		}
	}
	*p = np
	return nil
}

// preparedInner is the analysis of the text a PREPARE planned as p
// prepares (nil if p is no such plan).
func preparedInner(p *Plan) *rewrite.Analysis {
	if p.analysis == nil || len(p.analysis.Statements) != 1 {
		return nil
	}
	return p.analysis.Statements[0].Inner
}
