package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/catalog"
	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/infoschema"
	"github.com/sqlfork/sqlfork-proxy/kill"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/reply"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/command"
	"github.com/sqlfork/sqlfork-proxy/sandbox/objects"
	"github.com/sqlfork/sqlfork-proxy/session/txn"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Session is one client connection's view of sandboxes: which sandbox it
// is bound to (none means production), and what its open transaction has
// done. It is used by one goroutine.
type Session struct {
	m      *Manager
	log    *zap.Logger
	user   string
	connID uint64
	mode   Mode
	// allowProd lets writes reach production outside a sandbox (explicit
	// mode with --production-writes=allow).
	allowProd bool
	sb        *Sandbox
	// schemas are sandbox databases the session named in a statement of
	// its own (createExistingDatabase), physical to logical, for unmap.
	schemas map[string]string
	// up is the client's own upstream connection (nil in tests that
	// plan without one).
	up Upstream
	// db is the current database, ansiQuotes and ignoreSpace whether
	// sql_mode has ANSI_QUOTES and IGNORE_SPACE; varsKnown says vars (and
	// the flags) were read since the session started or was reset.
	db          string
	ansiQuotes  bool
	ignoreSpace bool
	varsKnown   bool
	// tx is the open transaction as the session follows it, with its
	// record for a replay (session/txn).
	tx        txn.Transaction
	planEpoch uint64 // the manager's epoch after the last plan
	sendEpoch uint64 // the manager's epoch when the last statement was sent (before)
	// synced: the registry was checked for the statement being planned
	// (revalidate did it).
	synced bool

	// vars are the upstream session's variables as last read.
	vars Vars
	// refused is the diagnostics area of the last statement when the proxy
	// answered it with an error of its own (nil when it went upstream):
	// SHOW WARNINGS and SHOW ERRORS then list it, as the server lists the
	// errors of the statement before.
	refused []Diag
	// sqlStmts are the SQL prepared statements the session keeps, by
	// lower-case name (sqlprepare.go).
	sqlStmts map[string]*sqlStmt
	// prepNames are the names the connection's PREPAREs named since each
	// was last dropped: the server may have statements of them.
	prepNames map[string]bool
	// obj places the session's stored objects in its sandbox (objs).
	obj *objects.Placer
	// lastRenames are the names the last statement's rewrite replaced,
	// for telling its diagnostics back (SHOW WARNINGS).
	lastRenames []rewrite.Rename
	// account is CURRENT_USER() of the session's connection, once read
	// (ownAccount).
	account string
}

// Diag is one row of SHOW WARNINGS (reply.Diag).
type Diag = reply.Diag

// Reply is an answer the proxy gives itself (reply.Reply).
type Reply = reply.Reply

// diagnosed is an error that knows the whole diagnostics area it leaves
// (a view whose tables are gone, sandbox/objects).
type diagnosed interface{ Diagnostics() []Diag }

// diagnosticsOf is the diagnostics area an error the proxy answers with
// leaves: the error itself, or what it says it leaves; nil for an error
// the client does not get as such.
func diagnosticsOf(err error) []Diag {
	var d diagnosed
	if errors.As(err, &d) {
		return d.Diagnostics()
	}
	var r interface {
		MySQLError() (uint16, string, string)
	}
	if errors.As(err, &r) {
		code, _, msg := r.MySQLError()
		return []Diag{{Level: "Error", Code: code, Message: msg}}
	}
	return nil
}

// Vars are the upstream session variables that decide how the proxy reads
// and runs statements; the session reads them when it starts, after a
// reset and after any statement that may change them.
type Vars struct {
	SQLMode   string // @@sql_mode
	Charset   string // @@character_set_client
	Isolation string // @@tx_isolation (transaction_isolation on MySQL)
	ReadOnly  string // @@tx_read_only (transaction_read_only on MySQL): "1" or "0"
}

// varsQuery reads Vars (in their order) on the session's upstream
// connection. A server that knows neither isolation variable gets
// varsFallbackQuery.
func (s *Session) varsQuery() string {
	iso, ro := "tx_isolation", "tx_read_only"
	if s.m != nil && s.m.server.Flavor == rewrite.MySQL {
		iso, ro = "transaction_isolation", "transaction_read_only" // MySQL 8 dropped tx_isolation
	}
	return "SELECT @@SESSION.sql_mode, @@SESSION.character_set_client, @@SESSION." + iso + ", @@SESSION." + ro
}

// varsFallbackQuery reads Vars without the isolation level and access
// mode (left empty).
const varsFallbackQuery = "SELECT @@SESSION.sql_mode, @@SESSION.character_set_client, '', ''"

// changesLexing reports whether an input holds a statement that changes
// how the server reads the texts after it.
func (s *Session) changesLexing(sql string, opts rewrite.Options) bool {
	if s.m == nil {
		return false
	}
	for _, st := range s.m.engine.Analyze(sql, opts).Statements {
		if mustComeLast(st) {
			return true
		}
	}
	return false
}

// blocksProduction says why a statement run on production would lock rows
// or tables there for longer than a plain read ("" when it would not): it
// reads under locks (… FOR UPDATE, LOCK TABLES … READ, the reads of a
// write), it asks for SERIALIZABLE, or it reads while the session is
// SERIALIZABLE (serializable).
func blocksProduction(st rewrite.Statement, serializable bool) string {
	switch {
	case len(st.Locked) > 0:
		return "reading " + st.Locked[0].Quoted() + " under locks"
	case st.Serializable:
		return "asking for SERIALIZABLE isolation (every read then locks)"
	case serializable:
		for _, t := range append(st.Reads, st.Names...) {
			if !infoschema.Virtual(t) {
				return "reading " + t.Quoted() + " under SERIALIZABLE isolation"
			}
		}
	}
	return ""
}

// mustComeLast reports statements after which the proxy must read the
// session's settings again before it can plan the next statement: they
// change how text is read, or make reads lock (SERIALIZABLE).
func mustComeLast(st rewrite.Statement) bool {
	return st.ChangesLexing || st.ChangesIsolation || st.Serializable
}

// lexingChangeRefused is the error for an input in which a statement that
// changes how text is read is followed by more statements.
func (s *Session) lexingChangeRefused() error {
	return rewrite.Refuse(wire.ErOptionPreventsStatement, "a statement that changes how the server reads text (SET NAMES, SET CHARACTER SET, "+
		"character_set_client, sql_mode) or makes reads lock (SERIALIZABLE) must be sent on its own or last in a "+
		"multi-statement input; send the statements after it separately")
}

// ServerCommand refuses a protocol command that acts on or shows the server
// as a whole (COM_REFRESH, COM_DEBUG) where the statement doing the same
// (FLUSH) is refused: in a sandbox, and, for one that changes the server, outside one
// in explicit mode when production writes are denied.
func (s *Session) ServerCommand(name string, changes bool) error {
	switch {
	case s.mode == Passthrough:
		return nil
	case s.sb != nil:
		return rewrite.Refuse(wire.ErOptionPreventsStatement, "%s acts on or shows the server as a whole, every sandbox's sessions included; "+
			"it is refused in a sandbox (run it on a direct connection)", name)
	case changes && s.mode == Explicit && !s.allowProd:
		return rewrite.Refuse(wire.ErOptionPreventsStatement, "%s outside a sandbox would change the server, which this proxy does not allow "+
			"(--production-writes=deny)", name)
	}
	return nil
}

// unreadableMode names an sql_mode under which the server reads texts in
// a way the proxy does not ("" when it reads them as the proxy does).
func unreadableMode(mode string) string {
	for _, m := range strings.Split(strings.ToUpper(mode), ",") {
		switch m {
		case "ORACLE", "MSSQL":
			return m
		}
	}
	return ""
}

// serializable reports whether the session's reads lock what they read:
// SERIALIZABLE makes InnoDB read every row of a transaction under a shared
// lock — the session's level, one SET TRANSACTION gave the next
// transaction (pending across statements that use no table), or the one
// the open transaction started with (txn.Transaction.Serializable).
func (s *Session) serializable() bool {
	return s.tx.Serializable() || strings.EqualFold(strings.ReplaceAll(s.vars.Isolation, "_", "-"), "SERIALIZABLE")
}

// Options open a Session.
type Options struct {
	User   string
	ConnID uint64
	Mode   Mode
	// Sandbox is a sandbox chosen at connect time (user-name tag or
	// connection attribute): attached if it exists, else created.
	Sandbox string
	// AllowProductionWrites lets writes outside a sandbox through.
	AllowProductionWrites bool
	Log                   *zap.Logger
	// Upstream is the client's own upstream connection, and DB the
	// database its login chose.
	Upstream Upstream
	DB       string
}

// Open starts a client session.
func (m *Manager) Open(ctx context.Context, o Options) (*Session, error) {
	log := o.Log
	if log == nil {
		log = m.log
	}
	s := &Session{m: m, log: log, user: o.User, connID: o.ConnID, mode: o.Mode, allowProd: o.AllowProductionWrites,
		up: o.Upstream, db: o.DB}
	if o.Mode == Passthrough {
		return s, nil
	}
	if err := s.UseDB(ctx, o.DB); err != nil { // the handshake's database, in the client's bytes
		return nil, err
	}
	if o.Sandbox != "" {
		if err := command.ValidName(o.Sandbox); err != nil {
			return nil, rewrite.Refuse(wire.ErUnknown, "%v", err)
		}
		// Connections of a pool arrive together: the first creates the
		// sandbox, the others join it; one that comes back within the
		// sandbox's grace finds it again.
		sb, err := m.reg.Acquire(ctx, o.Sandbox, o.User, true)
		if err != nil {
			return nil, err
		}
		s.sb = sb
		return s, nil
	}
	if o.Mode == Transparent {
		if err := s.fresh(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// fresh binds the session to a new anonymous sandbox.
func (s *Session) fresh() error {
	sb, err := s.m.reg.NewSandbox("", s.user)
	if err != nil {
		return err
	}
	if err := s.m.reg.Attach(sb); err != nil {
		return err
	}
	s.sb = sb
	return nil
}

// unbind detaches from the current sandbox, if any.
func (s *Session) unbind() {
	if s.sb != nil {
		s.m.reg.Detach(s.sb)
		s.sb = nil
	}
}

// Close ends the session; an unkept sandbox whose last connection this was
// is discarded, or, when named, starts its grace.
func (s *Session) Close() { s.unbind() }

// SandboxName is the bound sandbox's name ("" for production).
func (s *Session) SandboxName() string {
	if s.sb == nil {
		return ""
	}
	return s.sb.Name
}

// Mode is the session's mode.
func (s *Session) Mode() Mode { return s.mode }

// authorize checks that the session's user may use sb.
func (s *Session) authorize(sb *Sandbox) error { return s.m.reg.Authorize(s.user, sb) }

// Plan is what to do with one client input: answer it with Reply, or send
// SQL upstream.
type Plan struct {
	// Reply, when set, is the whole answer: nothing goes upstream.
	Reply *Reply
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
	// undoOnError are schema-only forks made for a DROP: if the statement
	// fails they must go, or the sandbox would see an empty table.
	undoOnError []rewrite.Table
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
	// tx is what the input's statements tell the transaction and a
	// replay of it (its characteristics, why a second run could differ,
	// …).
	tx txn.Facts
}

// Killable reports whether the planned input may be killed upstream should
// its client go away while it runs: plain reads only, whose answer is all
// they make. Anything else — writes, DDL, sequences, locking reads,
// transaction control, changes of the session — runs to its end, as on a
// direct connection (the server notices a client gone only when it next
// writes to it).
func (p *Plan) Killable() bool {
	if p == nil || p.Reply != nil || p.analysis == nil || p.locks || p.shape != (txn.Shape{}) || p.processList != nil ||
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

// cutLabels is the length from which a label may be the server's cut of
// a longer expression (it cuts labels at 255 bytes).
const cutLabels = 250

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

// Class names the input for metrics: the class of its statement, or
// "multi" for several.
func (p *Plan) Class() string {
	switch {
	case p == nil || p.analysis == nil:
		return "unknown"
	case p.Reply != nil:
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

// isInfoSchema reports whether phys is a database of information_schema
// views the session reads: its sandbox's, or production's.
func (s *Session) isInfoSchema(phys string) bool {
	return s.m != nil && phys == infoschema.ProductionSchema(s.m.cfg.Prefix) || s.sb != nil && phys == sandbox.InfoSchema(s.m.cfg.Prefix, s.sb.ID)
}

// Version identifies a sandbox binding and its table map.
type Version struct {
	sb  *Sandbox
	ver uint64
	// serializable: reads were planned to lock (and so to fork first).
	serializable bool
	// reading are the settings the text was read with: the server reads
	// a prepared statement's text again, with the settings of the moment,
	// when it prepares it anew.
	reading reading
	// guard are the guardrails it was planned under (new ones, after a
	// reload, are checked and injected again).
	guard *guard
}

// reading are the settings that decide how a text is read.
type reading struct {
	charset, db       string
	ansi, nbe, ignore bool
}

// current is the session's present binding, for texts read with opts
// (completed by Options).
func (s *Session) current(opts rewrite.Options) Version {
	v := Version{reading: reading{charset: opts.Charset, db: opts.DB, ansi: opts.ANSIQuotes, nbe: opts.NoBackslashEscapes,
		ignore: opts.IgnoreSpace},
		guard: s.m.guard(s.user)}
	if s.sb != nil {
		v.sb, v.ver, v.serializable = s.sb, s.sb.SnapshotVersion(), s.serializable()
	}
	return v
}

// plan decides what to do with an input read with opts (decide), then
// forks what it writes and rewrites it to the forks (forkPlanned): the
// whole plan, for the plans made inside another's (a SHOW's query, an SQL
// EXECUTE's statement, a computed text).
func (s *Session) plan(ctx context.Context, sql string, opts rewrite.Options, prepared bool) (*Plan, error) {
	p, err := s.decide(ctx, sql, opts, prepared)
	if err == nil {
		err = s.forkPlanned(ctx, p)
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// decide decides what to do with an input read with opts: answer it,
// refuse it, or send it — in a sandbox, once what it writes is forked and
// it is rewritten to the forks, which decide leaves to forkPlanned
// (Plan.fork).
func (s *Session) decide(ctx context.Context, sql string, opts rewrite.Options, prepared bool) (*Plan, error) {
	if m := unreadableMode(s.vars.SQLMode); m != "" {
		return nil, rewrite.Refuse(wire.ErOptionPreventsStatement, "sql_mode %s changes how the server reads statements in ways the proxy does not "+
			"follow, so it cannot keep them away from production; SET sql_mode without %s", m, m)
	}
	a := s.m.engine.Analyze(sql, opts)
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
			return s.plan(ctx, text, opts, false)
		}
	}
	for _, st := range a.Statements {
		if st.Class == rewrite.ClassSandbox {
			if prepared {
				return nil, rewrite.Refuse(wire.ErUnsupportedPS, "SANDBOX statements cannot be prepared; send them as plain queries")
			}
			return s.sandboxStatement(ctx, sql)
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
	if err := s.keepTransparent(); err != nil {
		return nil, err
	}
	if s.sb == nil {
		return s.planOutside(ctx, a, sql, opts, prepared, p)
	}
	return s.planInSandbox(ctx, a, sql, opts, prepared, p)
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

// refusalText is err's message without the proxy's prefix, to quote it in
// another refusal.
func refusalText(err error) string {
	var r *rewrite.Refusal
	if errors.As(err, &r) {
		return strings.TrimPrefix(r.Message, "sqlfork-proxy: ")
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

// forkStep is what a plan decided in a sandbox still needs before it can
// be sent: the input's analysis, text and reading, to fork what it writes
// and rewrite it to the forks (forkPlanned).
type forkStep struct {
	a        *rewrite.Analysis
	sql      string
	opts     rewrite.Options
	prepared bool
}

// forkPlanned forks what p, decided in a sandbox, writes (and reads under
// locks), rewrites it to the sandbox's tables and completes it; nothing
// for a plan that needs no fork step. On error what it made for p goes.
func (s *Session) forkPlanned(ctx context.Context, p *Plan) error {
	if p == nil || p.fork == nil {
		return nil
	}
	f := p.fork
	p.fork = nil
	a, sql, opts, prepared := f.a, f.sql, f.opts, f.prepared
	res, err := s.forkAndRewrite(ctx, a, sql, opts, prepared, p)
	if err != nil {
		// What planning made for a statement that will not run goes.
		s.abandon(ctx, p)
		return err
	}
	p.SQL, p.changed, p.renames = res.SQL, res.Changed, res.Renames
	s.keepPrepare(a, sql, opts, prepared, p)
	p.rewritten, p.splices = res.SQL, res.Splices
	p.nameRows, p.binaryRows = writesNames(a), prepared
	if len(a.Statements) == 1 && a.Statements[0].Kind == rewrite.KindShowCreateView {
		p.viewDB = a.Statements[0].DB
	}
	if answersPlan(a) {
		p.nameRows, p.planJSON, p.explainDB = true, true, a.Statements[0].DB
	}
	p.unmapped = s.unmapped(a)
	s.injectTimeout(a, p)
	p.version = s.current(opts)
	p.restart = s.restartFor(a, p)
	s.planEpoch = s.m.reg.Epoch()
	if p.locks && p.changed {
		p.audited = sql
		if !prepared {
			s.audit(a, sql, false) // a prepared one at each execution
		}
	}
	return nil
}

// answeredFirst plans the inputs decided before any fork: SHOW WARNINGS
// and ERRORS, an EXECUTE of an SQL PREPARE, a sandbox discarded
// elsewhere, SHOW TABLES and its kind, a table named with no current
// database, CREATE DATABASE of one the sandbox has. ok is false for any
// other input (after the sandbox's tables are synced with other proxies').
func (s *Session) answeredFirst(ctx context.Context, a *rewrite.Analysis, sql string, opts rewrite.Options, prepared bool, p *Plan) (*Plan, bool, error) {
	one := len(a.Statements) == 1
	if one && !prepared && (a.Statements[0].Kind == rewrite.KindShowWarnings || a.Statements[0].Kind == rewrite.KindShowErrors) {
		// The proxy runs it and tells the sandbox's database names in the
		// messages back.
		p.diagnostics = true
		return p, true, nil
	}
	if ep, ok, err := s.planExecute(ctx, a, sql, opts, prepared, p); ok {
		return ep, true, err
	}
	// What other proxy processes did to the sandbox's tables, before
	// anything is decided about them.
	if err := s.syncFor(ctx, a); err != nil {
		return nil, true, err
	}
	switch {
	case s.sb.IsDiscarded():
		name := s.sb.Name
		s.unbind()
		if s.mode == Transparent {
			if err := s.fresh(); err != nil {
				return nil, true, err
			}
		}
		return nil, true, rewrite.Refuse(wire.ErUnknown, "sandbox %q was discarded (by SANDBOX DISCARD elsewhere or expiry); this connection "+
			"is now in %s; retry", name, s.where())
	case one && a.Statements[0].Show != nil:
		// SHOW TABLES / TABLE STATUS list the sandbox's view of a
		// database: asked of its information_schema instead.
		if np, ok, err := s.planShow(ctx, a.Statements[0].Show, opts, prepared); ok {
			return np, true, err
		}
	}
	if opts.DB == "" && namesNoDatabase(a) {
		return nil, true, errNoDatabase()
	}
	if one && a.Statements[0].Kind == rewrite.KindCreateDatabase {
		// CREATE DATABASE of a database the sandbox has changes nothing:
		// the server's answer (1007, or with IF NOT EXISTS its note).
		if q, err := s.createExistingDatabase(ctx, a.Statements[0]); err != nil || q != "" {
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

// forkAndRewrite forks what the input needs in the sandbox (forkFor), its
// information_schema views when it reads them, and rewrites it to the
// sandbox's tables.
func (s *Session) forkAndRewrite(ctx context.Context, a *rewrite.Analysis, sql string, opts rewrite.Options, prepared bool, p *Plan) (*rewrite.Result, error) {
	if err := s.confined(ctx, a); err != nil {
		return nil, err
	}
	if err := s.forkFor(ctx, a, p, prepared); err != nil {
		return nil, err
	}
	if infoschema.Uses(a) {
		if err := s.m.ensureInfoViews(ctx, s.sb); err != nil {
			return nil, err
		}
		if err := s.readOwnConn(ctx, a); err != nil {
			return nil, err
		}
		p.infoIdents = rewrite.Identifiers(sql, opts)
	}
	return a.Rewrite(resolver{s: s, productionViews: showCreateView(a), productionTrigger: p.productionTrigger})
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

// createExistingDatabase plans CREATE DATABASE [IF NOT EXISTS] db in a
// sandbox: when the session's account sees db (a database of production
// the sandbox copies), the statement runs on the sandbox's own database for
// db, made first if need be, so the server answers it as directly — error
// 1007 "Can't create database …; database exists", or with IF NOT EXISTS
// OK with that note — in db's name (the error relabelled, the note by SHOW
// WARNINGS). "" when db does not exist: a sandbox makes no new databases.
func (s *Session) createExistingDatabase(ctx context.Context, st rewrite.Statement) (string, error) {
	db := st.Database
	r, err := s.up.Query(ctx, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = "+quote.String(db))
	if err != nil {
		return "", err
	}
	if len(r.Rows) == 0 {
		return "", nil
	}
	phys := sandbox.Schema(s.m.cfg.Prefix, s.sb.ID, s.m.names.Norm(rewrite.Table{DB: db}).DB)
	err = s.m.reg.WithConn(ctx, func(c SideConn) error {
		return s.m.fk.CreateSchema(ctx, c, db, phys)
	})
	if err != nil {
		return "", err
	}
	if s.schemas == nil {
		s.schemas = map[string]string{}
	}
	s.schemas[phys] = db
	if st.IfNotExists {
		return "CREATE DATABASE IF NOT EXISTS " + quote.Ident(phys), nil
	}
	return "CREATE DATABASE " + quote.Ident(phys), nil
}

// confined refuses, in a sandbox, what no fork can hold or what would
// show or reach beyond the sandbox.
func (s *Session) confined(ctx context.Context, a *rewrite.Analysis) error {
	return s.confinedIn(ctx, a, false)
}

// confinedIn is confined for the statements of a client's input, or of a
// sandbox procedure's body (body), where table maintenance stays refused:
// the tables a body names are forked as the body's reads and writes.
func (s *Session) confinedIn(ctx context.Context, a *rewrite.Analysis, body bool) error {
	for i, st := range a.Statements {
		if st.Outside != "" {
			if !body { // a body's SET is the server's to check when it runs
				if err := s.unknownEngine(ctx, st); err != nil {
					return err
				}
			}
			return rewrite.Refuse(wire.ErOptionPreventsStatement, "%s", st.Outside)
		}
		if why := infoschema.ServerWide(infoschema.OwnConnOnly(st)); why != "" {
			return rewrite.Refuse(wire.ErOptionPreventsStatement, "%s, which a sandbox must not see; run it on a direct connection", why)
		}
		if t, ok := systemDDL(st); ok {
			return rewrite.Refuse(wire.ErOptionPreventsStatement, "%s changes %s, a table of the server's own schema %s, whose "+
				"definitions a sandbox does not hold; it is refused in a sandbox (run it on a direct connection)", st.Kind, t, quote.Ident(t.DB))
		}
		if reason := outsideTables(st); reason != "" && !objects.RoutineStatement(st) && !sandboxTrigger(st) && (body || !maintains(a, i)) {
			return rewrite.Refuse(wire.ErOptionPreventsStatement, "%s changes the server outside any table, which a sandbox cannot contain; "+
				"it is refused in a sandbox (run it on a direct connection or SANDBOX DETACH in explicit mode)", reason)
		}
		if st.Kind == rewrite.KindCall && st.Routine != nil {
			if err := s.objs().CheckCall(ctx, st); err != nil {
				return err
			}
		}
		if err := s.confinedTrigger(ctx, st); err != nil {
			return err
		}
		if st.Kind == rewrite.KindCompound && !body {
			// An anonymous block's statements run at once, under the
			// rules of a sandbox procedure's body.
			for _, b := range a.CompoundBody() {
				if err := s.bodyAllowed(b); err != nil {
					return err
				}
				if err := s.confinedIn(ctx, b, true); err != nil {
					return err
				}
			}
		}
		if (st.Kind == rewrite.KindCreateProcedure || st.Kind == rewrite.KindCreateFunction) && st.Routine != nil {
			// The body's statements are the sandbox's statements too.
			for _, b := range st.Routine.Body {
				if err := s.bodyAllowed(b); err != nil {
					return err
				}
				if err := s.confinedIn(ctx, b, true); err != nil {
					return err
				}
			}
		}
	}
	if why, err := s.objs().Hazard(ctx, a, s.sb); err != nil {
		return err
	} else if why != "" {
		return rewrite.Refuse(wire.ErOptionPreventsStatement, "this statement cannot be confined to the sandbox: %s", why)
	}
	return nil
}

// bodyShows are the SHOW statements a sandbox's procedure body may hold:
// the server's answer names a table without its database, or with the
// sandbox's physical one, which the answer to the CALL tells back
// (writesNames), and the proxy adds nothing to it when the client sends
// them. SHOW STATUS and SHOW VARIABLES name no table.
var bodyShows = map[rewrite.Kind]bool{rewrite.KindShowStatus: true, rewrite.KindShowVariables: true, rewrite.KindShowCreateTable: true,
	rewrite.KindShowColumns: true, rewrite.KindShowIndex: true, rewrite.KindShowWarnings: true, rewrite.KindShowErrors: true,
	rewrite.KindShowCount: true}

// bodyAllowed refuses, in a sandbox's procedure body, what the proxy does
// for a statement of the client's around the statement itself, which a
// body's statements never get when the procedure runs: SHOW statements (the
// proxy answers them itself, without its own databases and other
// connections) but SHOW STATUS and SHOW VARIABLES (which name no table or
// database, and which the server answers for the client's too), changes of the isolation level (the server keeps them past
// the CALL, unseen by the proxy, which forks tables read under SERIALIZABLE
// first), connection attributes (the caller's own are made for each
// statement reading them), and what the user's guardrails deny.
func (s *Session) bodyAllowed(b *rewrite.Analysis) error {
	for _, st := range b.Statements {
		switch {
		case st.Show == nil && bodyShows[st.Kind]:
		case st.Show != nil || st.Kind.IsShow():
			return rewrite.Refuse(wire.ErOptionPreventsStatement, "%s in a sandbox's procedure body is not supported: the proxy answers "+
				"SHOW itself, for the sandbox, when the client sends it; run it outside the procedure", st.Kind)
		case st.ChangesIsolation || st.Serializable:
			return rewrite.Refuse(wire.ErOptionPreventsStatement, "a sandbox's procedure body may not change the isolation level "+
				"(the proxy would not see it); set it with SET SESSION TRANSACTION ISOLATION LEVEL before the CALL")
		}
		for _, t := range st.Reads {
			if _, ok := infoschema.OwnConnView(t); ok {
				return rewrite.Refuse(wire.ErOptionPreventsStatement, "%s in a sandbox's procedure body is not supported; "+
					"read it outside the procedure", t.Quoted())
			}
		}
	}
	return s.checkGuardrails(b)
}

// forkFor forks, once per sandbox, the tables the input writes (a DROP or
// TRUNCATE only their definition, unless it is prepared: it runs later or
// never) and those that must be in the sandbox
// first, and marks in p what the input locks and which tables DDL changes.
func (s *Session) forkFor(ctx context.Context, a *rewrite.Analysis, p *Plan, prepared bool) error {
	for i, st := range a.Statements {
		if done, err := s.routineFor(ctx, a, p, st); done || err != nil {
			if err != nil {
				return err
			}
			continue
		}
		if err := s.tablesFor(ctx, a, i, p, prepared); err != nil {
			return err
		}
	}
	return nil
}

// routineFor readies what a statement of routines, triggers or a compound
// block needs; done is true when st was one (nothing else to fork for it).
func (s *Session) routineFor(ctx context.Context, a *rewrite.Analysis, p *Plan, st rewrite.Statement) (done bool, err error) {
	switch {
	case (st.Kind == rewrite.KindCreateProcedure || st.Kind == rewrite.KindCreateFunction) && st.Routine != nil:
		if err := s.objs().RoutineChanging(ctx, st); err != nil {
			return true, err
		}
		if err := s.objs().ForkBody(ctx, st, true); err != nil {
			return true, err
		}
		p.locks = true
		return true, nil
	case st.Kind == rewrite.KindCall:
		p.locks = true // its body may write: kept for a replay
		return true, nil
	case st.Kind == rewrite.KindCompound && a.CompoundDDL():
		return true, s.forkBlock(ctx, a, p)
	case st.Trigger != nil && st.Routine != nil:
		return true, s.forkTrigger(ctx, st, p)
	case (st.Kind == rewrite.KindShowCreateFunction || st.Kind == rewrite.KindShowCreateProcedure) && st.Routine != nil:
		return true, s.objs().ShowsOwnRoutine(ctx, st)
	case (st.Kind == rewrite.KindDropFunction || st.Kind == rewrite.KindDropProcedure || st.Kind == rewrite.KindAlterFunction ||
		st.Kind == rewrite.KindAlterProcedure) && st.Routine != nil:
		return true, s.objs().RoutineChanging(ctx, st)
	}
	return false, nil
}

// tablesFor forks what statement i of a writes and what must be in the
// sandbox first, places the functions it calls, and marks in p what it
// locks.
func (s *Session) tablesFor(ctx context.Context, a *rewrite.Analysis, i int, p *Plan, prepared bool) error {
	st := a.Statements[i]
	if calls, err := s.objs().PlaceFunctions(ctx, st); err != nil {
		return err
	} else if calls {
		p.locks = true // its functions may write: kept for a replay
		if p.tx.Volatile == "" {
			p.tx.Volatile = "it calls a stored function, whose statements the proxy does not check for a second run"
		}
	}
	// A foreign key from a sandbox table must point into the sandbox: one
	// pointing at production would let sandbox rows block production's
	// deletes and updates. Tables read under locks are forked first too,
	// so that the locks are taken in the sandbox, never on production
	// rows; and a view made in the sandbox must read the sandbox's
	// tables, or writes through it would reach production.
	first, err := s.objs().ForkFirst(ctx, st)
	if err != nil {
		return err
	}
	if maintains(a, i) && a.Maintenance(i) != rewrite.KindChecksumTable {
		// Checked, analysed (statistics) on the sandbox's copies, never on
		// production's tables.
		first = append(first, st.Reads...)
	}
	// Production views are copied, not forked.
	views, err := s.prepareViews(ctx, st, first, p)
	if err != nil {
		return err
	}
	if err := s.forkWrites(ctx, st, p, views, prepared); err != nil {
		return err
	}
	for _, t := range first {
		if views[s.m.names.Key(s.m.names.Norm(t))] {
			continue
		}
		if _, _, err := s.ensure(ctx, t, forker.Full); err != nil {
			return err
		}
	}
	if err := s.plannedDDL(ctx, p, st, true); err != nil {
		return err
	}
	if st.Class == rewrite.ClassWrite || st.Class == rewrite.ClassDDL || st.Kind == rewrite.KindLockTables ||
		st.Class == rewrite.ClassTransaction && st.Kind == "" || len(st.Locked) > 0 || len(st.Writes) > 0 {
		p.locks = true
	}
	return nil
}

// forkWrites forks the tables st writes (not the production views it
// copies). DROP and TRUNCATE need only the table's structure, when they
// run now: a prepared one runs later or never, and until then the table
// keeps its rows in the sandbox as in production. A schema-only fork a
// DROP made goes if the statement fails (p.undoOnError).
func (s *Session) forkWrites(ctx context.Context, st rewrite.Statement, p *Plan, views map[string]bool, prepared bool) error {
	mode := forker.Full
	switch st.Kind {
	case rewrite.KindDropTable, rewrite.KindTruncateTable, rewrite.KindDropView:
		if !prepared {
			mode = forker.SchemaOnly
		}
	}
	for _, t := range st.Writes {
		if views[s.m.names.Key(s.m.names.Norm(t))] {
			continue
		}
		_, made, err := s.ensure(ctx, t, mode)
		if err != nil {
			return err
		}
		if made && mode == forker.SchemaOnly && st.Kind != rewrite.KindTruncateTable {
			p.undoOnError = append(p.undoOnError, t)
		}
	}
	return nil
}

// plannedDDL marks in p the tables st, when DDL, changes (re-read once it
// has run) and stops their captures (own: st is the client's statement;
// see stopCapturesFor).
func (s *Session) plannedDDL(ctx context.Context, p *Plan, st rewrite.Statement, own bool) error {
	if st.Class != rewrite.ClassDDL {
		return nil
	}
	p.refresh = append(p.refresh, st.Writes...)
	return s.stopCapturesFor(ctx, st, own)
}

// forkBlock makes ready, before it runs, what an anonymous block holding
// DDL (a, one COMPOUND statement) needs in the sandbox, as ForkBody does
// for a procedure's body: each of its statements' tables forked whole —
// never schema only, as a statement before a DROP may read the rows — or
// placed when production does not have them, with the tables that must be
// in the sandbox first and the copies of production views, so that the
// block, rewritten once, names the sandbox's tables all through. The
// tables its DDL changes are re-read once it has run (p.refresh), as after
// the client's own DDL. Its DDL commits the open transaction in the middle
// of the block, where a replay could not tell what belonged to which
// transaction: a transaction left open after it is not replayed (1412).
func (s *Session) forkBlock(ctx context.Context, a *rewrite.Analysis, p *Plan) error {
	p.locks = true
	if p.tx.Volatile == "" {
		p.tx.Volatile = "it ran a compound statement holding DDL, which commits the open transaction in the middle of the block"
	}
	for _, b := range a.CompoundBody() {
		for _, bs := range b.Statements {
			first, err := s.objs().BodyFirst(ctx, bs)
			if err != nil {
				return err
			}
			views, err := s.prepareViews(ctx, bs, first, p)
			if err != nil {
				return err
			}
			for _, t := range append(append([]rewrite.Table{}, bs.Writes...), first...) {
				if infoschema.Virtual(t) || views[s.m.names.Key(s.m.names.Norm(t))] {
					continue
				}
				if _, _, err := s.ensure(ctx, t, forker.Full); err != nil {
					return err
				}
			}
			if err := s.plannedDDL(ctx, p, bs, false); err != nil {
				return err
			}
		}
		if infoschema.Uses(b) {
			if err := s.m.ensureInfoViews(ctx, s.sb); err != nil {
				return err
			}
		}
	}
	return nil
}

// restartFor is what must happen to the open transaction before p
// (txn.Transaction.Needs): a table forked after its read view, or, at its
// first write, any change of the sandbox's tables since.
func (s *Session) restartFor(a *rewrite.Analysis, p *Plan) txn.Action {
	return s.tx.Needs(p.txInput(), func(epoch uint64) bool { return s.touchesNewer(a, epoch) }, s.sb.ChangedSince)
}

// executed records the outcome of a planned input: the server status
// after it (for transaction tracking), and, for DDL in a sandbox, re-reads
// which tables now exist there.
func (s *Session) executed(ctx context.Context, p *Plan, status uint16, failed bool) error {
	s.tx.Executed(p.txInput(), txn.Result{Status: status, Failed: failed, Isolation: s.vars.Isolation, ReadOnly: s.vars.ReadOnly,
		Since: s.viewSince()})
	if p == nil || s.sb == nil {
		return nil
	}
	if failed {
		for _, t := range p.undoOnError {
			if err := s.m.fk.Unfork(ctx, s.sb, t); err != nil {
				return err
			}
		}
	}
	if len(p.refresh) > 0 {
		if err := s.m.fk.Refresh(ctx, s.sb, p.refresh); err != nil {
			return err
		}
	}
	if !failed && p.analysis != nil {
		for _, st := range p.analysis.Statements {
			if st.Kind == rewrite.KindCreateTrigger && st.Trigger != nil {
				if err := s.m.caps.Last(ctx, s.sb, st.Trigger.Table, st.Trigger.Timing, st.Trigger.Event, s.ownConn()); err != nil {
					return err
				}
			}
		}
	}
	if !failed && len(p.adoptViews) > 0 {
		return s.objs().AdoptViews(ctx, p.adoptViews)
	}
	return nil
}

// abandon undoes what planning p did for a statement that will not run:
// schema-only forks made for a DROP would otherwise leave the sandbox an
// empty table where production has rows.
func (s *Session) abandon(ctx context.Context, p *Plan) {
	if p == nil || s.sb == nil {
		return
	}
	for _, t := range p.undoOnError {
		if err := s.m.fk.Unfork(ctx, s.sb, t); err != nil {
			s.log.Warn("undo a schema-only fork", zap.String("table", t.String()), zap.Error(err))
		}
	}
}

// Reset is COM_RESET_CONNECTION: the transaction ends, the sandbox
// binding stays (a pool resets connections between borrowers, and its
// sandbox must stay theirs).
func (s *Session) Reset() {
	s.tx.Reset()
	// The reset sets the session's variables back and drops the
	// connection's prepared statements.
	s.varsKnown = false
	s.sqlStmts, s.prepNames = nil, nil
	s.account = ""
}

// touchesNewer reports whether the analysis uses a sandbox table that
// changed after epoch.
func (s *Session) touchesNewer(a *rewrite.Analysis, epoch uint64) bool {
	for _, st := range a.Statements {
		for _, list := range [][]rewrite.Table{st.Reads, st.Writes, st.Names, st.Like} {
			for _, t := range list {
				if e, ok := s.sb.Resolve(s.m.names.Key(t)); ok && e.Epoch > epoch {
					return true
				}
			}
		}
	}
	return false
}

// unmap replaces the sandbox's physical database names in a server message
// with the logical ones, so errors read as on the real database.
func (s *Session) unmap(msg string) string {
	if s.sb == nil || !strings.Contains(msg, s.m.cfg.Prefix) {
		return msg
	}
	for e := range s.sb.Each() {
		msg = strings.ReplaceAll(msg, e.Phys.DB, e.Logical.DB)
	}
	for phys, logical := range s.schemas {
		msg = strings.ReplaceAll(msg, phys, logical)
	}
	// A physical name the server wrote in another character set than
	// UTF-8 (the results' latin1, koi8r, …: a database name that is not
	// ASCII) is its prefix, which is ASCII, and the logical name in that
	// set: without the prefix, the logical name as the server writes it.
	return strings.ReplaceAll(msg, sandbox.SchemaPrefix(s.m.cfg.Prefix, s.sb.ID), "")
}

// unqualify drops the sandbox's databases for db from the names of text
// (`_sqlfork_…_db`.`t` becomes `t`): the server writes the tables of the
// current database without it in SHOW CREATE VIEW.
func (s *Session) unqualify(text, db string) string {
	if s.sb == nil || db == "" {
		return text
	}
	for e := range s.sb.Each() {
		if e.Logical.DB == db {
			text = strings.ReplaceAll(text, quote.Ident(e.Phys.DB)+".", "")
		}
	}
	return text
}

// unqualifyJSON takes, in the JSON text of an EXPLAIN run in database db,
// the sandbox's physical database of db off the columns its conditions
// name (`_sqlfork_…_db.t.a` → `t.a`), as the server writes columns of the
// current database's tables; "ref" lists, which the server writes with
// the database, keep it (told back as db by unmap).
func (s *Session) unqualifyJSON(text, db string) string {
	if t := strings.TrimSpace(text); s.sb == nil || db == "" || !strings.HasPrefix(t, "{") && !strings.HasPrefix(t, "[") {
		return text
	}
	prefix := sandbox.Schema(s.m.cfg.Prefix, s.sb.ID, s.m.names.Norm(rewrite.Table{DB: db}).DB) + "."
	if !strings.Contains(text, prefix) {
		return text
	}
	var b strings.Builder
	for {
		ref := strings.Index(text, `"ref": [`)
		head := text
		if ref >= 0 {
			head = text[:ref]
		}
		b.WriteString(strings.ReplaceAll(head, prefix, ""))
		if ref < 0 {
			return b.String()
		}
		end := strings.Index(text[ref:], "]")
		if end < 0 {
			b.WriteString(text[ref:])
			return b.String()
		}
		b.WriteString(text[ref : ref+end+1])
		text = text[ref+end+1:]
	}
}

// schemaOf is the logical database of a sandbox database the session named
// in a statement of its own (s.schemas).
func (s *Session) schemaOf(phys string) (string, bool) {
	db, ok := s.schemas[phys]
	return db, ok
}

// logicalDB maps a sandbox database of the session's sandbox to the
// logical database it stands for.
func (s *Session) logicalDB(phys string) (string, bool) {
	if s.isInfoSchema(phys) {
		return "information_schema", true
	}
	if s.sb == nil || !strings.HasPrefix(phys, s.m.cfg.Prefix) {
		return "", false
	}
	if phys == sandbox.InfoSchema(s.m.cfg.Prefix, s.sb.ID) {
		return "information_schema", true
	}
	if db, ok := s.schemaOf(phys); ok {
		return db, true
	}
	for e := range s.sb.Each() {
		if e.Phys.DB == phys {
			return e.Logical.DB, true
		}
	}
	return "", false
}

// auditExecution records an execution of the prepared statement planned
// as p, when it writes the sandbox.
func (s *Session) auditExecution(p *Plan) {
	if p.audited != "" && s.sb != nil {
		s.audit(p.analysis, p.audited, true)
	}
}

// audit logs a write to the sandbox (one per statement run or prepared
// statement executed).
func (s *Session) audit(a *rewrite.Analysis, sql string, prepared bool) {
	var logical, phys []string
	for _, st := range a.Statements {
		for _, t := range st.Writes {
			logical = append(logical, t.String())
			if e, ok := s.sb.Resolve(s.m.names.Key(t)); ok {
				phys = append(phys, e.Phys.String())
			}
		}
	}
	s.log.Info("sandbox write", zap.String("audit", "write"), zap.String("sandbox", s.sb.Name), zap.String("user", s.user),
		zap.Uint64("thread_id", s.connID), zap.Strings("tables", logical), zap.Strings("physical", phys), zap.Int("bytes", len(sql)),
		zap.Bool("prepared", prepared))
}

// where names the session's binding for messages.
func (s *Session) where() string {
	if s.sb == nil {
		return "production (no sandbox)"
	}
	return "sandbox " + fmt.Sprintf("%q", s.sb.Name)
}

// resolver maps logical tables to the session's sandbox.
type resolver struct {
	s *Session
	// productionViews leaves the sandbox's copies of production views
	// out: SHOW CREATE VIEW shows production's definition.
	productionViews bool
	// productionTrigger leaves the trigger SHOW CREATE TRIGGER names as
	// written: production's (objects.Placer.ForkTrigger).
	productionTrigger bool
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

// mutates says why a statement would change production ("" if it would
// not).
func mutates(st rewrite.Statement) string {
	switch {
	case st.Class == rewrite.ClassWrite || st.Class == rewrite.ClassDDL:
		return string(st.Kind) + " (a " + st.Class.String() + " statement)"
	case len(st.Writes) > 0:
		return "a statement that writes " + st.Writes[0].String()
	}
	if r := outsideTables(st); r != "" {
		return r
	}
	return ""
}

// maintains reports whether the i-th statement of a is table maintenance
// — CHECK, ANALYZE, OPTIMIZE, REPAIR or CHECKSUM TABLE — of tables a
// sandbox can hold (none of the server's own schemas): in a sandbox it runs
// on the sandbox's copies of them (forkFor), and changes nothing outside
// them.
func maintains(a *rewrite.Analysis, i int) bool {
	if a.Maintenance(i) == "" {
		return false
	}
	st := a.Statements[i]
	for _, list := range [][]rewrite.Table{st.Reads, st.Writes} {
		for _, t := range list {
			if infoschema.Virtual(t) || strings.EqualFold(t.DB, "mysql") || strings.EqualFold(t.DB, "sys") {
				return false
			}
		}
	}
	return len(st.Reads)+len(st.Writes) > 0
}

// systemDDL returns the table of the server's own schemas (mysql, sys,
// performance_schema, information_schema) that st, DDL, changes.
func systemDDL(st rewrite.Statement) (rewrite.Table, bool) {
	if st.Class != rewrite.ClassDDL {
		return rewrite.Table{}, false
	}
	for _, t := range st.Writes {
		if t = sandbox.WithDB(t, st.DB); sandbox.IsSystemSchema(t.DB) {
			return t, true
		}
	}
	return rewrite.Table{}, false
}

// outsideTables says why a statement changes state no fork can hold.
func outsideTables(st rewrite.Statement) string {
	switch {
	case st.Kind == rewrite.KindKill:
		return "KILL"
	case st.Class == rewrite.ClassOther && st.Kind != rewrite.KindDo:
		return "this statement (administrative or privilege statement)"
	case st.Class == rewrite.ClassRoutine:
		return "a stored-routine statement"
	case st.Class == rewrite.ClassDDL && len(st.Writes) == 0:
		return string(st.Kind)
	case st.Kind == rewrite.KindSetGlobal:
		return "SET GLOBAL"
	}
	return ""
}
