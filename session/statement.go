package session

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/infoschema"
	"github.com/sqlfork/sqlfork-proxy/kill"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/session/txn"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// The proxy hands every statement of a sandboxing session to Run (run.go),
// which takes it through its steps in order:
//
//	planText / revalidate    refresh the session's binding, then decide: answer it, refuse it, or send a text
//	answer                   the session's own answer made (a SANDBOX statement runs here)
//	fork                     in a sandbox, fork what it writes and rewrite it to the forks
//	before                   end and restart or replay the transaction if a fork needs it
//	… Exchange.Send and Exchange.Relay, relabel telling names back …
//	after                    record it for a replay, track the transaction, re-read settings
//
// Everything that needs to know SQL is decided here; the proxy only moves
// packets. What the session runs itself between the client's statements it
// runs on the client's own upstream connection, through Upstream.

// Upstream is the client's own upstream connection, as the session uses it
// between the client's commands (never while an answer is being relayed).
type Upstream interface {
	// Query runs sql and reads its whole answer. A server error comes back
	// as an error with a ServerError() bool method that reports true and
	// unwraps to *mysql.MyError; any other error means the connection is
	// broken and must be returned as is.
	Query(ctx context.Context, sql string) (*Result, error)
	// Resend sends a recorded command again: payload is a COM_QUERY, or a
	// COM_STMT_EXECUTE of the text prepared (prepared afresh for it, then
	// closed). It returns what the answer's OK packets said.
	Resend(ctx context.Context, payload []byte, prepared string) ([]wire.OK, error)
	// Status is the server status the last answer on the connection
	// carried.
	Status() uint16
}

// Result is the answer to a query the session runs itself.
type Result struct {
	// Columns are the column definition packets of the first result set.
	Columns [][]byte
	// Rows are the first result set's rows, as text.
	Rows [][]*string
	// OKs are what the answer's OK packets said, in order.
	OKs []wire.OK
}

// Outcome is what the upstream answered to a planned statement
// (txn.Outcome: the transaction's record keeps it as it is).
type Outcome = txn.Outcome

// options are the text-reading settings of the session's next input.
func (s *Session) options() rewrite.Options {
	o := rewrite.Options{DB: s.db, ANSIQuotes: s.ansiQuotes, IgnoreSpace: s.ignoreSpace, Charset: s.vars.Charset}
	if s.up != nil {
		o.NoBackslashEscapes = s.up.Status()&wire.StatusNoBackslashEscapes != 0
	}
	if s.m != nil {
		o.CaseSensitiveNames = s.m.names.CaseSensitive
		o.Server = s.m.server
	}
	return o
}

// sync reads the upstream session's variables that decide how its texts
// are read, when they are not known (a new session, or after a reset).
func (s *Session) sync(ctx context.Context) error {
	if err := s.joinGlobals(ctx); err != nil {
		return err
	}
	if s.varsKnown || s.up == nil {
		return nil
	}
	return s.readVars(ctx)
}

// readVars reads sql_mode, character_set_client, the isolation level and
// the access mode on the session's upstream connection.
func (s *Session) readVars(ctx context.Context) error {
	r, err := s.up.Query(ctx, s.varsQuery())
	var me *mysql.MyError
	if isServerError(err) && errors.As(err, &me) && me.Code == wire.ErUnknownSystemVariable {
		r, err = s.up.Query(ctx, varsFallbackQuery)
	}
	if err != nil {
		return err
	}
	if len(r.Rows) != 1 || len(r.Rows[0]) != 4 {
		return fmt.Errorf("%w: session variables", wire.ErrMalformed)
	}
	v := Vars{}
	for i, p := range []*string{&v.SQLMode, &v.Charset, &v.Isolation, &v.ReadOnly} {
		if r.Rows[0][i] != nil {
			*p = *r.Rows[0][i]
		}
	}
	m := "," + strings.ToUpper(v.SQLMode) + ","
	s.ansiQuotes = strings.Contains(m, ",ANSI_QUOTES,") || strings.Contains(m, ",ANSI,")
	s.ignoreSpace = strings.Contains(m, ",IGNORE_SPACE,") || strings.Contains(m, ",ANSI,")
	s.vars, s.varsKnown = v, true
	return nil
}

// planText decides what to do with an input sent as COM_QUERY (prepared
// false) or COM_STMT_PREPARE: answer it (Plan.Answered: Run's answer step makes the Reply), refuse it (an error
// the client gets), or send Plan.SQL upstream — in a sandbox once Run's
// fork step forked what it writes and rewrote it (Plan.fork). An error that is not a refusal or the server's may mean the
// upstream connection broke (it is the Upstream's own error).
func (s *Session) planText(ctx context.Context, sql string, prepared bool) (*Plan, error) {
	if s.mode == Passthrough {
		return &Plan{SQL: sql, text: sql}, nil
	}
	if err := s.sync(ctx); err != nil {
		return nil, err
	}
	if err := s.reselectDB(ctx); err != nil {
		return nil, err
	}
	opts := s.options()
	refused := s.refused
	s.refused = nil
	if stmt, ok, err := s.m.killer.Statement(s.user, sql, opts, prepared, s.evaluator(ctx)); ok {
		if err != nil {
			return nil, err
		}
		return &Plan{SQL: stmt, text: sql, statements: 1}, nil
	}
	p, err := s.refreshed(ctx, sql, opts, prepared)
	if err != nil {
		return nil, s.refusedText(ctx, sql, opts, prepared, err)
	}
	p.text = sql // what a prepared statement is planned from again
	switch {
	case p.processList != nil:
		pl := *p.processList
		pl.Text = sql // the caller's own row shows the text as sent
		p.answer = func(ctx context.Context) (*Reply, error) { return s.processList(ctx, &pl) }
	case p.diagnostics:
		q := p.SQL
		p.answer = func(ctx context.Context) (*Reply, error) { return s.diagnostics(ctx, q, refused) }
	}
	return p, nil
}

// refusedText is err, planning's refusal of the client's text sql read
// with opts, as the client gets it: the server's own error where the
// server would refuse the text too; kept for SHOW WARNINGS unless the text
// was to be prepared.
func (s *Session) refusedText(ctx context.Context, sql string, opts rewrite.Options, prepared bool, err error) error {
	err = s.serverVerdict(ctx, sql, opts, err)
	if !prepared {
		s.refused = diagnosticsOf(err)
	}
	return err
}

// evaluator evaluates a query on the session's upstream connection (see
// Killer).
func (s *Session) evaluator(ctx context.Context) kill.Evaluator {
	return func(q string) (*string, error) {
		r, err := s.up.Query(ctx, q)
		if err != nil {
			return nil, err
		}
		if len(r.Rows) == 0 || len(r.Rows[0]) == 0 {
			return nil, nil
		}
		return r.Rows[0][0], nil
	}
}

// Split splits a multi-statement input (multi says the client may send
// several statements at once) that holds SANDBOX statements, SHOW
// statements the proxy answers itself (TABLES, TABLE STATUS, DATABASES,
// PROCEDURE and FUNCTION STATUS, PROCESSLIST, WARNINGS, ERRORS) or, with no
// current database, statements naming a table without its database into
// the inputs to plan and run in turn: each of those statements alone, and
// each run of other statements together. It returns nil for any other
// input. Each part is planned just before it runs (Plan), after the parts
// before it.
func (s *Session) Split(ctx context.Context, sql string, multi bool) ([]string, error) {
	upper := strings.ToUpper(sql)
	if !multi || s.mode == Passthrough || !strings.Contains(upper, "SANDBOX") && !strings.Contains(upper, "SHOW") && (s.db != "" || s.sb == nil) {
		return nil, nil
	}
	if err := s.sync(ctx); err != nil {
		return nil, err
	}
	opts := s.options()
	if _, ok, _ := s.m.killer.Statement(s.user, sql, opts, false, nil); ok {
		return nil, nil // Plan refuses it: KILL goes alone
	}
	pieces := rewrite.SplitStatements(sql, opts)
	alone := func(p string) bool {
		return rewrite.IsSandboxStatement(p) || s.answersShow(p, opts) || s.needsDatabase(p, opts)
	}
	if len(pieces) < 2 || !slices.ContainsFunc(pieces, alone) {
		return nil, nil
	}
	if !slices.ContainsFunc(pieces, rewrite.IsSandboxStatement) && len(s.m.engine.Analyze(sql, opts).Statements) != len(pieces) {
		return nil, nil // the cut is not the parser's (a compound statement): not for SHOW alone
	}
	if err := s.checkMultiStatement(); err != nil {
		return nil, err
	}
	var groups [][]string
	for _, p := range pieces {
		if alone(p) || len(groups) == 0 || alone(groups[len(groups)-1][0]) {
			groups = append(groups, []string{p})
			continue
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], p)
	}
	out := make([]string, len(groups))
	for i, g := range groups {
		out[i] = strings.Join(g, ";\n")
		// The pieces were cut with the settings the input starts with; a
		// statement that changes how text is read must be the last one.
		if i < len(groups)-1 && !alone(g[0]) && s.changesLexing(out[i], opts) {
			return nil, s.lexingChangeRefused()
		}
	}
	return out, nil
}

// needsDatabase reports whether the statement sql, in a sandbox with no
// current database, names a table without its database: planned alone, in
// its turn, it gets the server's 1046 after the statements before it ran,
// as on the server.
func (s *Session) needsDatabase(sql string, opts rewrite.Options) bool {
	return s.sb != nil && opts.DB == "" && namesNoDatabase(s.m.engine.Analyze(sql, opts))
}

// answersShow reports whether the statement sql is a SHOW the proxy
// answers itself, which must come alone.
func (s *Session) answersShow(sql string, opts rewrite.Options) bool {
	a := s.m.engine.Analyze(sql, opts)
	if len(a.Statements) != 1 {
		return false
	}
	st := a.Statements[0]
	switch {
	case st.Show != nil && (infoschema.Shown(st.Show.What) || st.Show.What == "PROCESSLIST"):
		return true
	case st.Kind == rewrite.KindShowWarnings || st.Kind == rewrite.KindShowErrors || st.Kind == rewrite.KindShowProcesslist:
		return true
	}
	return false
}

// before readies the transaction for a plan: when a table the statement
// needs was forked after the open transaction's snapshot, the transaction
// is restarted (it has only read) or replayed (it has written). A refusal
// (1412 when it cannot be replayed, or the server's error) is for the
// client, and the plan is then abandoned; any other error broke the
// connection. before does nothing for a plan it readied already.
func (s *Session) before(ctx context.Context, p *Plan) error {
	if s.m != nil {
		s.sendEpoch = s.m.reg.Epoch() // forks recorded by now are older than what p may read
	}
	r := p.restart
	p.restart = txn.Nothing
	return s.restart(ctx, p, r)
}

// restart restarts (r: Restart) or replays (Replay) the open transaction
// before p, or refuses p; nothing for Nothing.
func (s *Session) restart(ctx context.Context, p *Plan, r txn.Action) error {
	var err error
	switch {
	case r == txn.Nothing:
		return nil
	case s.xa:
		// An XA transaction is not started again: the statement is
		// refused, the transaction left as it is.
		err = xaRestartRefused(s.SandboxName())
	case p.tx.Previous != "":
		// What the statement reads would be what the proxy ran before it.
		why := "this statement reads " + p.tx.Previous + ", which would then be that of the proxy's own statements"
		err = s.refuseRestart(ctx, why, txn.RestartRefused(s.SandboxName(), why))
	case r == txn.Restart:
		if err = s.tx.Restart(ctx, txConn{s}, txConn{s}); err == nil {
			s.log.Debug("transaction restarted after a fork")
			s.m.observer().TransactionRestarted("restarted")
			return nil
		}
	case r == txn.Replay:
		var why string
		if why, err = s.tx.Replay(ctx, txConn{s}, txConn{s}); err == nil && why == "" {
			s.log.Debug("transaction replayed after a fork", zap.Int("statements", s.tx.Recorded()))
			s.m.observer().TransactionRestarted("replayed")
			return nil
		}
		if err == nil {
			err = s.refuseRestart(ctx, why, txn.ReplayRefused(s.SandboxName(), why))
		}
	}
	if isServerError(err) || isRefusal(err) {
		s.abandon(ctx, p)
	}
	return err
}

// refuseRestart rolls back the transaction the session could not restart
// or replay (why) and returns refused, the error telling the client to
// ROLLBACK and retry: nothing of the transaction survives half-replayed.
// An error that breaks the connection is returned instead.
func (s *Session) refuseRestart(ctx context.Context, why string, refused error) error {
	return s.refuse(ctx, why, refused, true)
}

// refuse is refuseRestart; settle says to wait for the sandbox's fills
// first (not after KILL ended a wait for them).
func (s *Session) refuse(ctx context.Context, why string, refused error, settle bool) error {
	if err := s.tx.Rollback(ctx, txConn{s}); err != nil {
		return err
	}
	_ = s.executed(ctx, nil, s.up.Status(), false)
	if settle && s.m != nil && s.Filling() {
		// The retry must not meet a fill's end (a new table) in turn.
		_ = s.awaitAllFills(ctx)
	}
	s.m.observer().TransactionRestarted("refused")
	s.log.Info("transaction could not be restarted or replayed after a fork", zap.String("why", why))
	return refused
}

// isServerError reports whether err is an answer of the server, after
// which the connection is still usable.
func isServerError(err error) bool {
	var se interface{ ServerError() bool }
	return errors.As(err, &se) && se.ServerError()
}

// isRefusal reports whether err is a refusal for the client.
func isRefusal(err error) bool {
	var r *rewrite.Refusal
	return errors.As(err, &r)
}

// commitsImplicitly reports a plan whose statements include one the server
// commits the open transaction for before running it (DDL).
func (p *Plan) commitsImplicitly() bool {
	if p == nil || p.analysis == nil {
		return false
	}
	for _, st := range p.analysis.Statements {
		if st.Class == rewrite.ClassDDL && !strings.Contains(string(st.Kind), "TEMPORARY") {
			return true
		}
	}
	return false
}

// transactionEnded asks the server whether the session's transaction has
// ended (MariaDB's @@in_transaction); false when it cannot tell.
func (s *Session) transactionEnded(ctx context.Context) (bool, error) {
	if s.m.server.Flavor != rewrite.MariaDB {
		return false, nil
	}
	r, err := s.up.Query(ctx, "SELECT @@in_transaction")
	switch {
	case err != nil && !isServerError(err):
		return false, err
	case err != nil || len(r.Rows) != 1 || len(r.Rows[0]) != 1 || r.Rows[0][0] == nil:
		return false, nil
	}
	return *r.Rows[0][0] == "0", nil
}

// after records the outcome of a planned statement: the transaction's
// record for a replay, transaction tracking, the audit of a prepared
// write's execution, the sandbox's tables after DDL; and reads back the
// current database and the session's settings when the statement may have
// changed them. An error means the upstream connection broke.
func (s *Session) after(ctx context.Context, p *Plan, o *Outcome) error {
	status := uint16(wire.StatusAutocommit) // opened without the client's connection (unit tests): none open
	if s.up != nil {
		status = s.up.Status()
	}
	if o.Code == wire.ErLockDeadlock {
		status &^= wire.StatusInTrans // a deadlock rolls the transaction back
	}
	if o.Failed && status&wire.StatusInTrans != 0 && p.commitsImplicitly() {
		// DDL commits the open transaction before it runs, also when it
		// then fails, and an ERR packet carries no status: ask.
		ended, err := s.transactionEnded(ctx)
		if err != nil {
			return err
		}
		if ended {
			status &^= wire.StatusInTrans
		}
	}
	inTrx := status&wire.StatusInTrans != 0
	// With autocommit off, a savepoint set before the transaction's first
	// statement is the server's for the transaction that statement starts:
	// kept for a replay too.
	keep := inTrx || !o.Failed && p != nil && p.shape.Control && status&wire.StatusAutocommit == 0
	s.tx.Record(p.txInput(), *o, keep)
	if o.Execution {
		s.auditExecution(p) // every execution sent, as every statement is audited when planned
	}
	s.keptStatements(p, o.Failed)
	if !p.diagnostics {
		s.lastRenames = p.renames // for the diagnostics a SHOW WARNINGS reads next
	}
	if err := s.executed(ctx, p, status, o.Failed); err != nil {
		s.log.Warn("sandbox bookkeeping after DDL failed", zap.Error(err))
	}
	if p.shape.UseDB {
		db, ok, err := s.serverDB(ctx)
		switch {
		case err == nil && ok:
			s.setServerDB(db)
		case err != nil && !isServerError(err):
			return err
		}
	}
	if p.shape.Vars {
		if err := s.readVars(ctx); err != nil && !isServerError(err) {
			return err
		}
	}
	return nil
}

// revalidate checks a prepared statement's plan before an execution: nil
// when it still holds, else the plan the text gets now (its binding or the
// sandbox's tables changed, its reads now lock, the settings it is read
// with or the guardrails changed), decided (Run's fork step completes it),
// which the proxy prepares anew upstream.
func (s *Session) revalidate(ctx context.Context, p *Plan) (*Plan, error) {
	if s.mode == Passthrough {
		return nil, nil
	}
	if err := s.sync(ctx); err != nil {
		return nil, err
	}
	opts := s.options()
	if p.version == s.current(opts) {
		// Still the sandbox's tables as this process knows them; when the
		// statement reads production, other processes may have forked
		// since (sandbox/registry/sync.go).
		if !p.unmapped || s.sb == nil || p.version.sb != s.sb {
			return nil, nil
		}
		if err := s.syncFor(ctx, p.analysis); err != nil {
			return nil, err
		}
		if p.version == s.current(opts) {
			return nil, nil
		}
		s.synced = true
		defer func() { s.synced = false }()
	}
	np, err := s.refreshed(ctx, p.text, opts, true)
	if err != nil {
		return nil, err
	}
	np.text = p.text
	return np, nil
}

// NotReplayable marks the open transaction as holding what a replay cannot
// repeat (COM_STMT_SEND_LONG_DATA's data is not kept).
func (s *Session) NotReplayable() {
	s.tx.Break()
}

// ClientName is name (UTF-8) as a statement the proxy sends on the
// client's connection writes it: in the connection's character set, which
// the server reads it in (a current database whose name is not ASCII, in
// latin1, say); refused when that set cannot write it.
func (s *Session) ClientName(name string) (string, error) {
	out, ok := rewrite.EncodeName(name, rewrite.Options{Charset: s.vars.Charset})
	if !ok {
		return "", rewrite.Refuse(wire.ErUnknown, "the connection's character set %s cannot write the name %s, which the "+
			"proxy sends for the sandbox; use utf8mb4", s.vars.Charset, quote.Ident(name))
	}
	return out, nil
}

// DB is the session's current database.
func (s *Session) DB() string { return s.db }

// UseDB records the current database a COM_INIT_DB set, named db in the
// client's bytes: a name that is not ASCII is read back from the server.
func (s *Session) UseDB(ctx context.Context, db string) error {
	if isASCII(db) {
		d, own := s.ownDB(db)
		s.db, s.dbPhys, s.upDB = db, own, d.Phys
		return nil
	}
	name, ok, err := s.serverDB(ctx)
	if err == nil && !ok {
		err = errors.New("no answer")
	}
	if err != nil {
		return fmt.Errorf("read the current database: %w", err)
	}
	s.setServerDB(name)
	return nil
}

// serverDB reads the current database of the session's upstream
// connection, in UTF-8 as the catalogs and the engine compare names: the
// server answers DATABASE() in the connection's result character set, and
// a client names it (USE, COM_INIT_DB, the handshake) in its own, which for
// a name that is not ASCII are other bytes (koi8r, latin1, …) that would
// name another database. ok is false for an answer of no row.
func (s *Session) serverDB(ctx context.Context) (db string, ok bool, err error) {
	r, err := s.up.Query(ctx, "SELECT HEX(CONVERT(DATABASE() USING utf8mb4))")
	if err != nil {
		return "", false, err
	}
	if len(r.Rows) != 1 || len(r.Rows[0]) != 1 {
		return "", false, nil
	}
	v := r.Rows[0][0]
	if v == nil {
		return "", true, nil
	}
	b, err := hex.DecodeString(*v)
	if err != nil {
		return "", false, fmt.Errorf("current database %q: %w", *v, err)
	}
	return string(b), true, nil
}

// isASCII reports whether s is ASCII: the same bytes in every character
// set a client may use.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// ProcessInfo answers COM_PROCESS_INFO as SHOW PROCESSLIST.
func (s *Session) ProcessInfo(ctx context.Context) (*Reply, error) {
	return s.processList(ctx, &infoschema.ProcessList{})
}

// processList answers SHOW [FULL] PROCESSLIST with the server's answer
// kept to the connections of the session's proxy user (to this process):
// each row's Id is the connection's upstream thread id, its User the proxy
// user, and its Info has the user's sandbox databases in logical names.
func (s *Session) processList(ctx context.Context, pl *infoschema.ProcessList) (*Reply, error) {
	r, err := s.up.Query(ctx, pl.SQL())
	if err != nil {
		return nil, err
	}
	if len(r.Columns) < 8 {
		return nil, rewrite.Refuse(wire.ErUnknown, "the server's answer to %s has %d columns, not the 8 or more the proxy "+
			"filters; run it on a direct connection", pl.SQL(), len(r.Columns))
	}
	own := map[uint32]bool{}
	if s.m.dir != nil {
		own = s.m.dir.Threads(s.user)
	}
	user := s.user
	rep := &Reply{Defs: r.Columns}
	for _, row := range r.Rows {
		if len(row) != len(r.Columns) || row[0] == nil {
			continue
		}
		id, err := strconv.ParseUint(*row[0], 10, 32)
		if err != nil || !own[uint32(id)] {
			continue
		}
		row[1] = &user
		if row[7] != nil {
			info := s.UnmapOwn(*row[7])
			row[7] = &info
		}
		rep.Rows = append(rep.Rows, row)
	}
	return rep, nil
}

// diagnostics answers SHOW WARNINGS / SHOW ERRORS (sql) with the sandbox's
// database names in the messages told back in logical names.
//
// After a statement the proxy answered with an error of its own (refused:
// its diagnostics area), the server's would be an earlier statement's:
// the rows are refused's.
func (s *Session) diagnostics(ctx context.Context, sql string, refused []Diag) (*Reply, error) {
	r, err := s.up.Query(ctx, sql)
	if err != nil {
		return nil, err
	}
	// The server's own column definitions: Code is an integer.
	rep := &Reply{Defs: r.Columns}
	if len(r.Columns) != 3 {
		rep = &Reply{Columns: []string{"Level", "Code", "Message"}}
	}
	if refused != nil {
		errorsOnly := strings.Contains(strings.ToUpper(sql), "ERRORS")
		r.Rows = nil
		for _, d := range refused {
			if errorsOnly && d.Level != "Error" {
				continue
			}
			code := strconv.Itoa(int(d.Code))
			level, msg := d.Level, d.Message
			r.Rows = append(r.Rows, []*string{&level, &code, &msg})
		}
	}
	for _, row := range r.Rows {
		if len(row) == 3 && row[2] != nil {
			m := s.unmap(unquoteRenames(*row[2], s.lastRenames))
			if row[1] != nil && *row[1] == "1003" {
				// The query as the server expands it: its calls in the
				// server's words, an alias quoting the text as written.
				m = s.unmap(s.currentDBCalls(unquoteQuoted(*row[2], s.lastRenames)))
			}
			row[2] = &m
		}
		rep.Rows = append(rep.Rows, row)
	}
	return rep, nil
}

// unquoteRenames tells back, in a server message, an expression the
// message quotes as a name (`f1()` of a cast's error) or as written (the
// column of an out-of-range value, an expression's label): the rewritten
// text, with its backquotes doubled or as sent, becomes the client's.
func unquoteRenames(msg string, renames []rewrite.Rename) string {
	msg = unquoteQuoted(msg, renames)
	for _, rn := range renames {
		if strings.Contains(rn.To, "`") {
			// As sent, only a call's: a table the server names in its own
			// words (`db`.`t`.`col`), which telling the physical database
			// back makes right (unmap); the client's text would be wrong.
			msg = strings.ReplaceAll(msg, rn.To+"(", rn.From+"(")
		}
	}
	return msg
}

// unquoteQuoted tells back, in a server message, the rewritten text it
// quotes as a name (its backquotes doubled: a label, `f1()` of a cast's
// error) as the client wrote it.
func unquoteQuoted(msg string, renames []rewrite.Rename) string {
	for _, rn := range renames {
		if strings.Contains(rn.To, "`") {
			msg = strings.ReplaceAll(msg, strings.ReplaceAll(rn.To, "`", "``"), rn.From)
		}
	}
	return msg
}

// FieldList says where COM_FIELD_LIST of table, which names a table of the
// current database, must be asked in a sandbox: in the physical database of
// the sandbox's own table (forked, created or dropped there) — the proxy
// makes it current for the command and then restores the current one —,
// with rl telling the answer's names back. ok is false when the command
// goes upstream as sent: outside a sandbox, without a current database, or
// for a table the sandbox leaves to production.
func (s *Session) FieldList(ctx context.Context, table string) (physDB string, rl *Relabel, ok bool, err error) {
	if s.sb == nil || s.db == "" || table == "" {
		return "", nil, false, nil
	}
	name, ok := rewrite.DecodeName(table, rewrite.Options{Charset: s.vars.Charset})
	if !ok { // the sandbox's copy of the table could be missed
		return "", nil, false, rewrite.Refuse(wire.ErUnknown, "the proxy cannot read this table name in the connection's "+
			"character set %s; name the table in utf8mb4, or read information_schema.COLUMNS", s.vars.Charset)
	}
	t := rewrite.Table{DB: s.db, Name: name}
	// What other proxy processes did to the sandbox's tables first.
	if !s.synced && s.sb.Shareable() {
		if _, mapped, _ := (resolver{s: s}).Resolve(t, false); !mapped {
			if err := s.m.reg.SyncTables(ctx, s.sb); err != nil {
				return "", nil, false, err
			}
		}
	}
	e, found := s.sb.Resolve(s.m.names.Key(t))
	if !found {
		return "", nil, false, nil
	}
	return e.Phys.DB, &Relabel{s: s, p: &Plan{changed: true}}, true, nil
}
