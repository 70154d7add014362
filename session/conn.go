package session

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
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
	policy    *rewrite.Policy

	inTrx     bool
	trxEpoch  uint64
	trxLocked bool   // the transaction wrote or took locks
	planEpoch uint64 // the manager's epoch after the last plan
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
}

// Open starts a client session.
func (m *Manager) Open(ctx context.Context, o Options) (*Session, error) {
	log := o.Log
	if log == nil {
		log = m.log
	}
	s := &Session{m: m, log: log, user: o.User, connID: o.ConnID, mode: o.Mode, allowProd: o.AllowProductionWrites,
		policy: &rewrite.Policy{InternalPrefix: m.cfg.Prefix}}
	if o.Mode == Passthrough {
		return s, nil
	}
	if o.Sandbox != "" {
		if err := ValidName(o.Sandbox); err != nil {
			return nil, refusal(1105, "HY000", "%v", err)
		}
		sb, err := m.lookup(ctx, o.Sandbox)
		if err != nil {
			return nil, err
		}
		if sb == nil {
			// Connections of a pool arrive together: the first creates
			// the sandbox, the others join it.
			if sb, err = m.getOrCreate(o.Sandbox, o.User); err != nil {
				return nil, err
			}
		}
		if err := s.authorize(sb); err != nil {
			return nil, err
		}
		if err := m.attach(sb); err != nil {
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
	sb, err := s.m.newSandbox("", s.user)
	if err != nil {
		return err
	}
	if err := s.m.attach(sb); err != nil {
		return err
	}
	s.sb = sb
	return nil
}

// unbind detaches from the current sandbox, if any.
func (s *Session) unbind() {
	if s.sb != nil {
		s.m.detach(s.sb)
		s.sb = nil
	}
}

// Close ends the session; an unkept sandbox whose last connection this was
// is discarded.
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
func (s *Session) authorize(sb *Sandbox) error {
	if sb.Owner == s.user || s.m.isAdmin(s.user) {
		return nil
	}
	// The same error as for a sandbox that does not exist: other users'
	// sandboxes are not even visible.
	return refusal(1105, "HY000", "no sandbox named %q; SANDBOX LIST shows yours", sb.Name)
}

// Reply is an answer the proxy gives itself: a result set when Columns is
// set, else an OK packet.
type Reply struct {
	Columns  []string
	Rows     [][]*string
	Affected uint64
	Info     string
}

// Plan is what to do with one client input.
type Plan struct {
	// Reply, when set, is the whole answer: nothing goes upstream.
	Reply *Reply
	// SQL is the text to send upstream (the input itself when unchanged).
	SQL     string
	Changed bool
	// Restart asks the proxy to end the client's transaction (which has
	// only read so far) and start a new one before SQL: a table it reads
	// or writes was forked after the transaction's snapshot was taken.
	Restart bool
	// Replay is Restart for a transaction that has written: the proxy
	// rolls it back, starts a new one and replays its recorded writes
	// (checking they have the same effect), or refuses with
	// Session.ReplayRefused.
	Replay bool
	// Stateful marks statements a replay must repeat (writes, locking
	// reads, SAVEPOINT); Begin marks BEGIN / START TRANSACTION; TxControl
	// other transaction statements (SAVEPOINT, ROLLBACK TO …).
	Stateful, Begin, TxControl bool
	// Diagnostics marks SHOW WARNINGS / SHOW ERRORS in a sandbox: the
	// proxy runs SQL itself and answers with the messages unmapped.
	Diagnostics bool
	// DDL marks inputs holding DDL (which commits implicitly); Statements
	// is how many statements the input holds.
	DDL        bool
	Statements int
	// UseDB and SQLMode say the input may change the current database or
	// sql_mode: the proxy reads them back afterwards.
	UseDB, SQLMode bool
	// Version is the sandbox state SQL was rewritten against (for
	// prepared statements).
	Version Version

	analysis *rewrite.Analysis
	refresh  []rewrite.Table
	locks    bool
	// undoOnError are schema-only forks made for a DROP: if the statement
	// fails they must go, or the sandbox would see an empty table.
	undoOnError []rewrite.Table
	// infoIdents are the identifiers of an input that reads the sandbox's
	// information_schema views, to spell result columns as written.
	infoIdents []string
}

// Classify names the class of sql for metrics (the analysis is cached).
func (s *Session) Classify(sql string, opts rewrite.Options) string {
	opts.CaseSensitiveNames = s.m.caseSensitive
	a := s.m.engine.Analyze(sql, opts)
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

// ColumnSpelling is how the input spelled a column of the sandbox's
// information_schema views: the server labels information_schema columns
// as the query writes them (`table_name`), while the views' columns are in
// upper case. ok is false when the input does not name it.
func (p *Plan) ColumnSpelling(name string) (string, bool) {
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

// IsInfoSchema reports whether phys is the session's sandbox's
// information_schema database.
func (s *Session) IsInfoSchema(phys string) bool {
	return s.sb != nil && phys == InfoSchema(s.m.cfg.Prefix, s.sb.ID)
}

// Version identifies a sandbox binding and its table map.
type Version struct {
	sb  *Sandbox
	ver uint64
}

// Current is the session's present binding.
func (s *Session) Current() Version {
	if s.sb == nil {
		return Version{}
	}
	return Version{sb: s.sb, ver: s.sb.snapshotVersion()}
}

// Stale reports whether text rewritten at v may now be wrong: the binding
// or the sandbox's tables changed.
func (s *Session) Stale(v Version) bool { return v != s.Current() }

// Plan decides what to do with an input sent as COM_QUERY or
// COM_STMT_PREPARE: answer it (SANDBOX statements), refuse it (an error
// *rewrite.Refusal), or send it upstream rewritten, forking first the
// tables it writes.
func (s *Session) Plan(ctx context.Context, sql string, opts rewrite.Options, prepared bool) (*Plan, error) {
	if s.mode == Passthrough {
		return &Plan{SQL: sql}, nil
	}
	opts.CaseSensitiveNames = s.m.caseSensitive
	a := s.m.engine.Analyze(sql, opts)
	p := &Plan{SQL: sql, analysis: a, Statements: len(a.Statements)}
	for _, st := range a.Statements {
		switch {
		case st.Kind == "BEGIN":
			p.Begin = true
		case st.Class == rewrite.ClassTransaction && st.Kind != "COMMIT":
			p.TxControl = true
		}
		p.DDL = p.DDL || st.Class == rewrite.ClassDDL
	}
	for _, st := range a.Statements {
		switch {
		case st.Class == rewrite.ClassSandbox:
			if prepared {
				return nil, refusal(1295, "HY000", "SANDBOX statements cannot be prepared; send them as plain queries")
			}
			return s.sandboxStatement(ctx, sql)
		case st.Kind == "USE":
			p.UseDB = true
		case st.Kind == "SET" && strings.Contains(strings.ToLower(sql), "sql_mode"):
			p.SQLMode = true
		}
	}
	if err := s.policy.Check(a); err != nil {
		return nil, err
	}
	if s.sb == nil {
		if s.mode == Explicit && !s.allowProd {
			for _, st := range a.Statements {
				if reason := mutates(st); reason != "" {
					return nil, refusal(1290, "HY000", "%s outside a sandbox would change production, which this proxy does not "+
						"allow (--production-writes=deny); run SANDBOX CREATE first", reason)
				}
			}
			// What the engine cannot see through (unparseable writes,
			// dynamic SQL, stored functions) might write: refuse it too.
			if _, err := a.Rewrite(mapsNothing{}); err != nil {
				msg := err.Error()
				var r *rewrite.Refusal
				if errors.As(err, &r) {
					msg = strings.TrimPrefix(r.Message, "sqlfork-proxy: ")
				}
				return nil, refusal(1290, "HY000", "outside a sandbox the proxy must prove a statement does not change production "+
					"(--production-writes=deny), and cannot: %s; run SANDBOX CREATE first", msg)
			}
		}
		return p, nil
	}
	// SHOW WARNINGS / ERRORS: the proxy runs it and maps the sandbox's
	// database names in the messages back.
	if len(a.Statements) == 1 && (a.Statements[0].Kind == "SHOW WARNINGS" || a.Statements[0].Kind == "SHOW ERRORS") && !prepared {
		p.Diagnostics = true
		return p, nil
	}
	// SHOW TABLES / TABLE STATUS list the sandbox's view of a database:
	// asked of its information_schema instead.
	if len(a.Statements) == 1 && a.Statements[0].Show != nil && !s.sb.isDiscarded() {
		if q, ok, err := showSQL(a.Statements[0].Show, opts.DB); err != nil {
			return nil, err
		} else if ok {
			return s.Plan(ctx, q, opts, prepared)
		}
	}
	if s.sb.isDiscarded() {
		name := s.sb.Name
		s.unbind()
		if s.mode == Transparent {
			if err := s.fresh(); err != nil {
				return nil, err
			}
		}
		return nil, refusal(1105, "HY000", "sandbox %q was discarded (by SANDBOX DISCARD elsewhere or expiry); this connection "+
			"is now in %s; retry", name, s.where())
	}
	for _, st := range a.Statements {
		if reason := outsideTables(st); reason != "" {
			return nil, refusal(1290, "HY000", "%s changes the server outside any table, which a sandbox cannot contain; "+
				"it is refused in a sandbox (run it on a direct connection or SANDBOX DETACH in explicit mode)", reason)
		}
	}
	// First writes fork.
	for _, st := range a.Statements {
		mode := forker.Full
		switch st.Kind {
		case "DROP TABLE", "TRUNCATE TABLE", "DROP VIEW":
			mode = forker.SchemaOnly
		}
		for _, t := range st.Writes {
			_, made, err := s.m.ensure(ctx, s.sb, t, mode)
			if err != nil {
				s.Abandon(ctx, p)
				return nil, err
			}
			if made && mode == forker.SchemaOnly && st.Kind != "TRUNCATE TABLE" {
				p.undoOnError = append(p.undoOnError, t)
			}
		}
		// A foreign key from a sandbox table must point into the sandbox:
		// one pointing at production would let sandbox rows block
		// production's deletes and updates.
		for _, t := range st.References {
			if _, _, err := s.m.ensure(ctx, s.sb, t, forker.Full); err != nil {
				s.Abandon(ctx, p)
				return nil, err
			}
		}
		if st.Class == rewrite.ClassDDL {
			p.refresh = append(p.refresh, st.Writes...)
		}
		if st.Class == rewrite.ClassWrite || st.Class == rewrite.ClassDDL || st.Kind == "LOCK TABLES" ||
			st.Class == rewrite.ClassTransaction && st.Kind == "" || st.Kind == "SELECT" && lockingRead(sql) {
			p.locks = true
		}
	}
	if usesInfoSchema(a) {
		if err := s.m.ensureInfoViews(ctx, s.sb); err != nil {
			s.Abandon(ctx, p)
			return nil, err
		}
		p.infoIdents = rewrite.Identifiers(sql, opts)
	}
	res, err := a.Rewrite(resolver{s})
	if err != nil {
		s.Abandon(ctx, p)
		return nil, err
	}
	p.SQL, p.Changed = res.SQL, res.Changed
	p.Version = s.Current()
	// A table forked after this transaction's snapshot is invisible to
	// it (MariaDB: 1412 "Table definition has changed").
	if s.inTrx && s.touchesNewer(a, s.trxEpoch) {
		switch {
		case p.DDL:
			// DDL commits the open transaction anyway: commit it first.
			p.Restart = true
		case s.trxLocked:
			p.Replay = true
		default:
			p.Restart = true
		}
	}
	p.Stateful = p.locks
	s.planEpoch = s.m.epoch.Load()
	if p.locks && p.Changed {
		s.audit(a, sql)
	}
	return p, nil
}

// Restarted records that the proxy restarted the client's transaction;
// replayed says its writes were replayed in the new one.
func (s *Session) Restarted(replayed bool) {
	s.trxEpoch, s.trxLocked = s.m.epoch.Load(), replayed
}

// ReplayRefused is the error for a transaction that has written and now
// needs a table forked after it began, when the proxy cannot replay it.
func (s *Session) ReplayRefused(why string) error {
	return refusal(1412, "HY000", "Table definition has changed, please retry transaction: a table this statement "+
		"uses was forked into sandbox %q after the transaction started, and the transaction has already written (%s); "+
		"ROLLBACK and run the transaction again (the fork now exists, so the retry works)", s.SandboxName(), why)
}

// Executed records the outcome of a planned input: the server status
// after it (for transaction tracking), and, for DDL in a sandbox, re-reads
// which tables now exist there.
func (s *Session) Executed(ctx context.Context, p *Plan, status uint16, failed bool) error {
	const inTrans = 0x0001
	now := status&inTrans != 0
	// A statement the proxy did not plan (an EXECUTE of a statement it
	// does not track) may have written: assume it did.
	locks := p == nil || p.locks
	switch {
	case now && !s.inTrx:
		s.trxEpoch, s.trxLocked = s.planEpoch, locks
	case now && locks:
		s.trxLocked = true
	case !now:
		s.trxLocked = false
	}
	s.inTrx = now
	if p == nil || s.sb == nil {
		return nil
	}
	if failed {
		for _, t := range p.undoOnError {
			if err := s.m.unfork(ctx, s.sb, t); err != nil {
				return err
			}
		}
	}
	if len(p.refresh) > 0 {
		return s.m.refresh(ctx, s.sb, p.refresh)
	}
	return nil
}

// Abandon undoes what planning p did for a statement that will not run:
// schema-only forks made for a DROP would otherwise leave the sandbox an
// empty table where production has rows.
func (s *Session) Abandon(ctx context.Context, p *Plan) {
	if p == nil || s.sb == nil {
		return
	}
	for _, t := range p.undoOnError {
		if err := s.m.unfork(ctx, s.sb, t); err != nil {
			s.log.Warn("undo a schema-only fork", zap.String("table", t.String()), zap.Error(err))
		}
	}
}

// Reset is COM_RESET_CONNECTION: the transaction ends, the sandbox
// binding stays (a pool resets connections between borrowers, and its
// sandbox must stay theirs).
func (s *Session) Reset() { s.inTrx, s.trxLocked = false, false }

// touchesNewer reports whether the analysis uses a sandbox table that
// changed after epoch.
func (s *Session) touchesNewer(a *rewrite.Analysis, epoch uint64) bool {
	for _, st := range a.Statements {
		for _, list := range [][]rewrite.Table{st.Reads, st.Writes} {
			for _, t := range list {
				if e, ok := s.sb.resolve(s.m.key(t)); ok && e.epoch > epoch {
					return true
				}
			}
		}
	}
	return false
}

// Unmap replaces the sandbox's physical database names in a server message
// with the logical ones, so errors read as on the real database.
func (s *Session) Unmap(msg string) string {
	if s.sb == nil || !strings.Contains(msg, s.m.cfg.Prefix) {
		return msg
	}
	s.sb.mu.Lock()
	defer s.sb.mu.Unlock()
	for _, e := range s.sb.tables {
		msg = strings.ReplaceAll(msg, e.phys.DB, e.logical.DB)
	}
	return msg
}

// LogicalDB maps a sandbox database of the session's sandbox to the
// logical database it stands for.
func (s *Session) LogicalDB(phys string) (string, bool) {
	if s.sb == nil || !strings.HasPrefix(phys, s.m.cfg.Prefix) {
		return "", false
	}
	if phys == InfoSchema(s.m.cfg.Prefix, s.sb.ID) {
		return "information_schema", true
	}
	s.sb.mu.Lock()
	defer s.sb.mu.Unlock()
	for _, e := range s.sb.tables {
		if e.phys.DB == phys {
			return e.logical.DB, true
		}
	}
	return "", false
}

func (s *Session) audit(a *rewrite.Analysis, sql string) {
	var logical, phys []string
	for _, st := range a.Statements {
		for _, t := range st.Writes {
			logical = append(logical, t.String())
			if e, ok := s.sb.resolve(s.m.key(t)); ok {
				phys = append(phys, e.phys.String())
			}
		}
	}
	s.log.Info("sandbox write", zap.String("audit", "write"), zap.String("sandbox", s.sb.Name), zap.String("user", s.user),
		zap.Uint64("conn", s.connID), zap.Strings("tables", logical), zap.Strings("physical", phys), zap.Int("bytes", len(sql)))
}

// where names the session's binding for messages.
func (s *Session) where() string {
	if s.sb == nil {
		return "production (no sandbox)"
	}
	return "sandbox " + fmt.Sprintf("%q", s.sb.Name)
}

func (sb *Sandbox) hasInfoViews() bool {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return sb.infoViews
}

func (sb *Sandbox) isDiscarded() bool {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return sb.discarded
}

// resolver maps logical tables to the session's sandbox.
type resolver struct{ s *Session }

// Resolve implements rewrite.Resolver.
func (r resolver) Resolve(t rewrite.Table, write bool) (rewrite.Table, bool, error) {
	if e, ok := r.s.sb.resolve(r.s.m.key(t)); ok {
		return e.phys, true, nil
	}
	if strings.EqualFold(t.DB, "information_schema") {
		if v, ok := infoViewName(t.Name); ok && r.s.sb.hasInfoViews() {
			return rewrite.Table{DB: InfoSchema(r.s.m.cfg.Prefix, r.s.sb.ID), Name: v}, true, nil
		}
	}
	if write {
		// Every written table is forked before rewriting; one that is not
		// was missed by the analysis. Fail closed.
		return t, false, refusal(1105, "HY000", "the statement writes %s, which is not in the sandbox; "+
			"the proxy refuses rather than write production (simplify the statement)", t)
	}
	return t, false, nil
}

// mapsNothing is a resolver that leaves every table where it is; with it
// the engine still refuses what it cannot analyse.
type mapsNothing struct{}

// Resolve implements rewrite.Resolver.
func (mapsNothing) Resolve(t rewrite.Table, _ bool) (rewrite.Table, bool, error) {
	return t, false, nil
}

// mutates says why a statement would change production ("" if it would
// not).
func mutates(st rewrite.Statement) string {
	switch {
	case st.Class == rewrite.ClassWrite || st.Class == rewrite.ClassDDL:
		return st.Kind + " (a " + st.Class.String() + " statement)"
	case len(st.Writes) > 0:
		return "a statement that writes " + st.Writes[0].String()
	case st.Kind == "LOCK TABLES" && len(st.Writes) > 0:
		return "LOCK TABLES … WRITE"
	}
	if r := outsideTables(st); r != "" {
		return r
	}
	return ""
}

// outsideTables says why a statement changes state no fork can hold.
func outsideTables(st rewrite.Statement) string {
	switch {
	case st.Class == rewrite.ClassOther && st.Kind != "KILL" && st.Kind != "DO":
		return "this statement (administrative or privilege statement)"
	case st.Class == rewrite.ClassRoutine:
		return "a stored-routine statement"
	case st.Class == rewrite.ClassDDL && len(st.Writes) == 0:
		return st.Kind
	case st.Kind == "SET GLOBAL":
		return "SET GLOBAL"
	}
	return ""
}

// lockingRead spots SELECT … FOR UPDATE / FOR SHARE / LOCK IN SHARE MODE.
func lockingRead(sql string) bool {
	l := strings.ToLower(sql)
	return strings.Contains(l, "for update") || strings.Contains(l, "share")
}
