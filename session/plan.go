package session

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/sqlfork/sqlfork-proxy/infoschema"
	"github.com/sqlfork/sqlfork-proxy/kill"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/session/txn"
)

// Plan is what to do with one client input: answer it with Reply, or send
// SQL upstream.
type Plan struct {
	// Reply, when set, is the whole answer: nothing goes upstream. Run's
	// answer step sets it (answer).
	Reply *Reply
	// answer, when set, makes Reply at Run's answer step: the session's own
	// answer — a SANDBOX statement, SHOW PROCESSLIST, SHOW WARNINGS —,
	// which planning decides but does not run.
	answer func(context.Context) (*Reply, error)
	// SQL is the text to send upstream (the input itself when unchanged).
	SQL string

	// text is the input as the client sent it; changed says SQL differs
	// from it in names the answer must tell back (Relabel).
	text    string
	changed bool
	// restart is what before must do to the open transaction first.
	restart txn.Action
	// locks marks statements a replay must repeat (writes, locking
	// reads, SAVEPOINT).
	locks bool
	// calls marks an input that calls stored procedures or functions of
	// the sandbox: their bodies may write its tables, which the analysis
	// does not list among the statement's writes.
	calls bool
	// shape is what the input does to the transaction (BEGIN, its end,
	// other transaction statements, DDL, which commits implicitly) and to
	// the session's settings: after reads the current database or the
	// session's Vars back when it may have changed them.
	shape txn.Shape
	// diagnostics marks SHOW WARNINGS / SHOW ERRORS in a sandbox: the
	// session runs SQL itself and answers with the messages unmapped.
	diagnostics bool
	// processList is SHOW [FULL] PROCESSLIST, answered with the
	// connections of the session's proxy user only.
	processList *infoschema.ProcessList
	// statements is how many statements the input holds.
	statements int
	// version is the sandbox state SQL was rewritten against (for
	// prepared statements, see revalidate).
	version Version

	analysis *rewrite.Analysis
	// fork is the step a plan decided in a sandbox still needs before it
	// is sent (forkPlanned; nil when none).
	fork *forkStep
	// audited is the text of a write to audit (Session.audit), "" for
	// other inputs.
	audited string
	refresh []rewrite.Table
	// carry is the capture to carry across the input's ALTER TABLE once
	// it ran (carriedDDL).
	carry *carriedCapture
	// undoOnError are schema-only forks made for a DROP: if the statement
	// fails they must go, or the sandbox would see an empty table.
	undoOnError []rewrite.Table
	// copyUps are the rows the gate step copies up into lazy forks still
	// filling before the statement runs (filling.go).
	copyUps []copyUp
	// adoptViews are copies of production views the statement drops,
	// replaces or alters: once it has run, what is left of them is the
	// sandbox's own (objects.Placer.AdoptViews).
	adoptViews []rewrite.Table
	// keepStmt is a SQL prepared statement (keepName) the session keeps
	// once the PREPARE ran; forgetStmts are the names of those the input
	// prepares or drops otherwise (sqlprepare.go).
	keepStmt    *sqlStmt
	keepName    string
	forgetStmts []string
	dropped     string // a DEALLOCATE PREPARE sent alone: its name
	// noReplay: the transaction that runs the input cannot be replayed
	// (an EXECUTE, whose USING values may have changed).
	noReplay bool
	// infoIdents are the identifiers of an input that reads the sandbox's
	// information_schema views, to spell result columns as written.
	infoIdents []string
	// defs are the column definitions of the server's own answer to a
	// SHOW the proxy asks as a query (see showDefs): the answer's are
	// replaced by them, in order.
	defs [][]byte
	// nameRows marks a text answer whose values may hold the sandbox's
	// database names, written by the server (SHOW CREATE VIEW, EXPLAIN's
	// ref, a view's definition in information_schema): the relay tells
	// them back (Relabel.Row).
	nameRows bool
	// binaryRows: the rows of the answers to execute it are binary (a
	// prepared statement's).
	binaryRows bool
	// viewDB is the current database of SHOW CREATE VIEW, whose tables the
	// server names without their database (Relabel.Row).
	viewDB string
	// explainDB is the current database of an EXPLAIN (or ANALYZE, or a
	// read of the optimizer trace), whose JSON form writes conditions'
	// columns without the database for its tables (Relabel.Row).
	explainDB string
	// planJSON: the answer is a plan (answersPlan), whose JSON arrays the
	// server writes on one line when they fit (Relabel.Row).
	planJSON bool
	// unmapped: after its forks the input still reads a table the
	// sandbox's map leaves to production, so an execution of it as a
	// prepared statement checks the registry first (revalidate).
	unmapped bool
	// renames are the names the rewrite replaced (see label).
	renames []rewrite.Rename
	// productionTrigger marks SHOW CREATE TRIGGER of production's trigger
	// (objects.Placer.ForkTrigger).
	productionTrigger bool
	// rewritten is the rewrite's text, splices where it differs from the
	// client's (see Relabel.Error).
	rewritten string
	splices   []rewrite.Splice
	// timeout: SQL carries the statement-timeout guardrail.
	timeout bool
	// dbChange is what a CREATE or DROP DATABASE in a sandbox records
	// once it ran (databases.go).
	dbChange *dbChange
	// tx is what the input's statements tell the transaction and a
	// replay of it (its characteristics, why a second run could differ,
	// …).
	tx txn.Facts
	// insertID is the sandbox's table whose last insert id the proxy may
	// read for the answer (insertid.go); counts are ROW_COUNT() and
	// FOUND_ROWS() for the input's first statement, when the proxy knows
	// them and the server no longer does.
	insertID *rewrite.Table
	counts   *lastCounts
}

// Killable reports whether the planned input may be killed upstream should
// its client go away while it runs: plain reads only, whose answer is all
// they make. Anything else — writes, DDL, sequences, locking reads,
// transaction control, changes of the session — runs to its end, as on a
// direct connection (the server notices a client gone only when it next
// writes to it).
func (p *Plan) Killable() bool {
	if p == nil || p.Answered() || p.analysis == nil || p.locks || p.shape != (txn.Shape{}) || p.processList != nil ||
		p.diagnostics {
		return false
	}
	for _, st := range p.analysis.Statements {
		if !kill.PlainStatement(st) {
			return false
		}
	}
	return len(p.analysis.Statements) > 0
}

// label tells an expression column's label back in the client's words:
// the server labels an expression with its text as sent, in which the
// rewrite replaced table names (NEXTVAL(`_sqlfork_…`.`seq`)). ok is false
// when the label holds no replaced name.
func (p *Plan) label(name string) (string, bool) {
	if p == nil || len(p.renames) == 0 {
		return "", false
	}
	if l, ok := p.labelOfExpr(name); ok {
		return l, l != name
	}
	if !strings.Contains(name, "`") {
		return "", false
	}
	out := name
	for _, r := range p.renames {
		out = strings.ReplaceAll(out, r.To, r.From)
	}
	return out, out != name
}

// labelOfExpr is the label the server gives a select list expression the
// rewrite changed, had the client's text been sent: its text as the client
// wrote it, cut where the server cut the text sent (a label cut in the
// middle of a physical name cannot be told back by replacing names).
func (p *Plan) labelOfExpr(name string) (string, bool) {
	if p.analysis == nil || p.rewritten == "" {
		return "", false
	}
	for _, st := range p.analysis.Statements {
		for _, sp := range st.Labels {
			start, end := rewrite.Sent(p.splices, sp[0]), rewrite.Sent(p.splices, sp[1])
			if sp[1] > len(p.text) || end > len(p.rewritten) {
				continue
			}
			sent, client := p.rewritten[start:end], p.text[sp[0]:sp[1]]
			switch {
			case sent == client:
			case name == sent:
				return client, true
			case len(name) >= cutLabels && len(name) < len(sent) && strings.HasPrefix(sent, name):
				return cutText(client, len(name)), true
			}
		}
	}
	return "", false
}

// cutText is text cut to at most n bytes, not inside a UTF-8 character.
func cutText(text string, n int) string {
	if len(text) <= n {
		return text
	}
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	return text[:n]
}

// Classify names the class of sql for metrics (the analysis is cached).
func (s *Session) Classify(sql string) string {
	if s.m == nil {
		return "unknown"
	}
	a := s.m.engine.Analyze(sql, s.options())
	if len(a.Statements) == 1 {
		return a.Statements[0].Class.String()
	}
	return "multi"
}

// Answered reports whether the session answers the input itself (Reply,
// or answer to make it): nothing goes upstream.
func (p *Plan) Answered() bool { return p.Reply != nil || p.answer != nil }

// Class names the input for metrics: the class of its statement, or
// "multi" for several.
func (p *Plan) Class() string {
	switch {
	case p == nil || p.analysis == nil:
		return "unknown"
	case p.Answered():
		return rewrite.ClassSandbox.String()
	case len(p.analysis.Statements) == 1:
		return p.analysis.Statements[0].Class.String()
	}
	return "multi"
}

// columnSpelling is how the input spelled a column of the sandbox's
// information_schema views: the server labels information_schema columns
// as the query writes them (`table_name`), while the views' columns are in
// upper case. ok is false when the input does not name it.
func (p *Plan) columnSpelling(name string) (string, bool) {
	if p == nil {
		return "", false
	}
	for _, id := range p.infoIdents {
		if strings.EqualFold(id, name) {
			return id, true
		}
	}
	return "", false
}

// newPlan is the plan of sending the input sql, analysed as a, as it is,
// with what its statements do to the transaction and the session.
func newPlan(sql string, a *rewrite.Analysis) *Plan {
	p := &Plan{SQL: sql, text: sql, analysis: a, statements: len(a.Statements)}
	for i, st := range a.Statements {
		p.shape.Add(i, st)
		p.shape.DDL = p.shape.DDL || sandboxTrigger(st)
		p.tx.Add(st, sql)
	}
	return p
}
