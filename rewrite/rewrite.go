// Package rewrite classifies SQL statements and rewrites their table
// references through a caller-supplied resolver, splicing new identifiers
// into the original text so everything else reaches the server byte for
// byte. It is pure: no I/O.
package rewrite

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver" // value expressions for the parser

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite/charset"
	"github.com/sqlfork/sqlfork-proxy/rewrite/collect"
	"github.com/sqlfork/sqlfork-proxy/rewrite/forms"
	"github.com/sqlfork/sqlfork-proxy/rewrite/ident"
	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
	"github.com/sqlfork/sqlfork-proxy/rewrite/recovery"
	"github.com/sqlfork/sqlfork-proxy/rewrite/refusal"
	"github.com/sqlfork/sqlfork-proxy/rewrite/splice"
	"github.com/sqlfork/sqlfork-proxy/sqlname"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Table is a database-qualified table name (sqlfork/sqlname's, which the
// layers below rewrite share).
type Table = sqlname.Table

// Resolver maps logical tables to physical ones.
type Resolver interface {
	// Resolve returns the physical table for t, or ok=false to leave the
	// reference as written. write reports whether the statement writes t.
	// An error refuses the statement (return a *Refusal to choose the
	// client's error).
	Resolve(t Table, write bool) (phys Table, ok bool, err error)
}

// Options are the session state that changes how text is read.
type Options struct {
	// DB is the session's current database, for unqualified names.
	DB string
	// ANSIQuotes and NoBackslashEscapes mirror those sql_mode flags.
	ANSIQuotes         bool
	NoBackslashEscapes bool
	// IgnoreSpace mirrors sql_mode's IGNORE_SPACE (which ANSI implies):
	// the server reads a function's name followed by whitespace and "("
	// as it reads one right before "(".
	IgnoreSpace bool
	// CaseSensitiveNames is lower_case_table_names=0: table and database
	// names that differ in case are different tables. Otherwise (1 or 2)
	// they are the same table.
	CaseSensitiveNames bool
	// Charset is the session's character_set_client, which decides which
	// bytes belong together in a multi-byte character ("" is utf8mb4).
	Charset string
	// Server is the upstream's flavor and version, which decide which
	// version comments it executes.
	Server Server
}

// Kill is the target of a KILL statement.
type Kill struct {
	// Query is KILL QUERY: the statement running, not the connection.
	Query bool
	// ID is the connection id as written.
	ID uint64
}

// Statement describes one statement of the input.
type Statement struct {
	Class Class
	// DB is the current database the statement runs in (a USE earlier in
	// the input changes it).
	DB     string
	Reads  []Table
	Writes []Table
	// Unprovable says why the engine cannot prove which tables the
	// statement touches ("" when it can).
	Unprovable string
	// Kind names the statement more finely than Class, in upper case:
	// "CREATE TABLE", "DROP TABLE", "TRUNCATE TABLE", "RENAME TABLE",
	// "ALTER TABLE", "INSERT", "SET GLOBAL", "KILL", … ("" when unknown).
	Kind Kind
	// Show details SHOW [FULL] TABLES and SHOW TABLE STATUS (nil for
	// other statements).
	Show *Show
	// Kill is what KILL [CONNECTION | QUERY] <number> names (nil for other
	// statements and for the KILL forms the parser does not read, whose
	// Kind is still "KILL").
	Kill *Kill
	// Bounds are, for a one-table SELECT, UPDATE, DELETE or INSERT of the
	// simple forms Bounds lists, the literal values it pins the table's
	// columns to (nil for other statements).
	Bounds *Bounds
	// References are the tables FOREIGN KEY … REFERENCES clauses of the
	// statement name (also listed in Reads).
	References []Table
	// Funcs are the functions the statement calls by name, as written:
	// built-in or stored, which the parser cannot tell apart for
	// unqualified names. For an unparseable statement they are the names
	// the text puts before a parenthesis.
	Funcs []Func
	// Locked are the tables of Reads the statement reads under locks:
	// every table a statement other than a plain SELECT reads (InnoDB locks
	// the rows an INSERT … SELECT, UPDATE, DELETE, SET or DO reads), and
	// the tables of SELECT … FOR UPDATE / LOCK IN SHARE MODE and LOCK
	// TABLES … READ. information_schema and performance_schema are left
	// out.
	Locked []Table
	// Like are the sources of CREATE TABLE … LIKE.
	Like []Table
	// Names are, for a statement the parser cannot read, the identifiers
	// of its text that could name a table (a, or db.t): it reads none of
	// them for sure, but may read any.
	Names []Table
	// Outside says why the statement reaches beyond the database's tables:
	// files on the server, other servers, engines that write other
	// tables ("" when it does not).
	Outside string
	// Engine is the storage engine a SET of default_storage_engine (or
	// another engine variable) names, as a literal or a bare name, when
	// Outside refuses it: "" otherwise. The server rejects a name it knows
	// no engine by (ER_UNKNOWN_STORAGE_ENGINE) whatever the proxy says.
	Engine string
	// ChangesLexing marks SET statements that change how the server reads
	// the texts that follow (sql_mode, character_set_client, NAMES).
	ChangesLexing bool
	// ChangesIsolation marks SET statements of the isolation level;
	// Serializable is set when one asks for SERIALIZABLE.
	ChangesIsolation, Serializable bool
	// Temporary marks CREATE / DROP TEMPORARY TABLE, the DDL that does not
	// commit the open transaction.
	Temporary bool
	// SetStatement are the variables (lower case) a SET STATEMENT … FOR
	// prefix of the statement sets, only ones that change neither how the
	// text is read nor what it locks (see recovery.Mask).
	SetStatement []string
	// Vars are the user and server variables the statement reads or sets
	// (for a statement the parser cannot read, every one its text names,
	// taken as set); the variables of SET TRANSACTION are Next instead.
	Vars []Var
	// Start is what BEGIN / START TRANSACTION starts its transaction with;
	// Next what SET TRANSACTION (without SESSION or GLOBAL) gives the next
	// transaction (nil for other statements).
	Start, Next *TxChars
	// Handle is the name (lower case) of the SQL prepared statement a
	// PREPARE, EXECUTE or DEALLOCATE PREPARE statement names, and HandleOp
	// which of the three it is ("" for any other statement). Inner is, for
	// PREPARE … FROM 'text', the analysis of the text.
	Handle, HandleOp string
	Inner            *Analysis
	// innerFuncs is how many of Funcs, the last ones, the text another
	// statement's text calls (takeInner): its own analysis places them.
	innerFuncs int
	// Routine is the stored procedure of CREATE PROCEDURE, DROP PROCEDURE
	// and CALL (nil for other statements).
	Routine *Routine
	// XA is an XA statement as read (xa.go); nil for any other statement,
	// and for an XA form the engine does not read.
	XA *XA
	// Trigger is the rest of what CREATE TRIGGER, DROP TRIGGER and SHOW
	// CREATE TRIGGER say of their trigger, named in Routine (trigger.go).
	Trigger *Trigger
	// Labels are the spans [start, end) in the text of the select list
	// expressions the server labels with their text as sent (those
	// without an alias).
	Labels [][2]int
	// labelColumns says, for each of Labels, whether the expression is a
	// column reference.
	labelColumns []bool
	// AliasedColumns are the select list's columns given an alias: alias,
	// column name (as written).
	AliasedColumns [][2]string
	// InsertSelect marks INSERT and REPLACE whose rows a query makes (…
	// SELECT), without ON DUPLICATE KEY UPDATE or RETURNING: the server
	// answers their last insert id as its select_insert does
	// (forker/insertid.go).
	InsertSelect bool
	// Database is the database CREATE, DROP or ALTER DATABASE or USE
	// names, IfNotExists whether
	// it (or a CREATE TABLE) says IF NOT EXISTS.
	Database    string
	IfNotExists bool
	// hint is what a refusal for Unprovable tells the client to do
	// instead ("" for the default).
	hint string
	// serverCheck marks a statement whose text the server may reject
	// itself (EXECUTE IMMEDIATE of an expression, a routine whose body
	// the proxy cannot read): the refusal for Unprovable of an input that
	// is this one statement asks for the server's own verdict
	// (Refusal.ServerCheck).
	serverCheck bool
	// privileges marks account and privilege statements (GRANT, CREATE
	// USER, …).
	privileges bool
}

// looseName is a name of statement stmt that no site covers.
type looseName struct {
	t    Table
	stmt int
}

// SafeEngine reports whether a storage engine keeps its tables in the
// database (see collect.SafeEngine).
func SafeEngine(name string) bool { return collect.SafeEngine(name) }

// Show is a SHOW statement the proxy answers itself or asks as a query
// (collect.Show).
type Show = collect.Show

// Func is a function a statement calls, as written (collect.Func).
type Func = collect.Func

// Analysis is what the engine knows about an input, independent of any
// resolver. It is immutable and shared through the cache.
type Analysis struct {
	Statements []Statement
	// src is the client's text, into which rewrites are spliced; text is
	// the same text as the server reads it (see Normalize), which every
	// reading of the statement uses. Offsets are shared.
	src  string
	text string
	opts Options
	// client is set when the client's text is in a single-byte character
	// set the engine reads decoded (decode.go): src and text are then the
	// decoded texts, and rewrites are spliced into client.orig.
	client *charset.ClientText
	// altered says where text differs from src inside literals; normErr
	// is set when the proxy cannot be sure how the server reads src.
	altered *lexer.Normalized
	normErr *Refusal
	// alteredName is set when a table name's text was changed for the
	// parser (see Normalize): the table cannot be named for sure.
	alteredName bool
	sites       []ident.Site
	// unbound are table references whose text could not be located; a
	// resolver that maps one of them makes the rewrite refuse.
	unbound []Table
	// cteShadows are CTE names that are also the names of tables of the
	// input and qualify columns (see cteQualifiers).
	cteShadows map[string]bool
	// aliases are the table aliases the statement defines (lower case).
	aliases map[string]bool
	// prepared are string literals of PREPARE ... FROM '...'.
	prepared []preparedSite
	// stmtStarts and stmtDBs give, for each statement, where it starts in
	// src and the current database it runs in (a USE changes it for the
	// statements after it).
	stmtStarts []int
	stmtDBs    []string
	// loose are names in statements of class "other" that no site
	// covers: the parser may keep table names of admin statements out of
	// its tree (OPTIMIZE TABLE t), so a mapped one refuses the rewrite.
	loose []looseName
	// stmtAliases are each statement's table aliases (lower case).
	stmtAliases []map[string]bool
	// stmtDeclared are, for each statement, the names its tree declares
	// as no table (see declaredNames), for the safety net of collectLoose.
	stmtDeclared []map[string]bool
	parseErr     error
	// parts, for an input holding CREATE PROCEDURE, are its statements as
	// the engine split it (routine.go); sites are then theirs.
	parts []part
	// endDB is the current database after the input (a USE changes it).
	endDB string
}

// mappedInAnyDB reports whether an unqualified name is mapped in any
// database current during the input.
func (a *Analysis) mappedInAnyDB(r Resolver, name string) (Table, bool) {
	for _, db := range append([]string{a.opts.DB}, a.stmtDBs...) {
		if t := (Table{DB: db, Name: name}); mapped(r, t) {
			return t, true
		}
	}
	return Table{}, false
}

// stmtAt is the index of the statement holding byte offset pos.
func (a *Analysis) stmtAt(pos int) int {
	i := 0
	for j, start := range a.stmtStarts {
		if start > pos {
			break
		}
		i = j
	}
	return i
}

// mappedAny reports whether t is mapped, trying every database current
// during the input when t.DB is empty.
func (a *Analysis) mappedAny(r Resolver, t Table) (Table, bool) {
	if t.DB != "" {
		return t, mapped(r, t)
	}
	return a.mappedInAnyDB(r, t.Name)
}

// dbAt is the current database for a name at byte offset pos.
func (a *Analysis) dbAt(pos int) string {
	db := a.opts.DB
	for i, start := range a.stmtStarts {
		if start > pos {
			break
		}
		db = a.stmtDBs[i]
	}
	return db
}

// preparedSite is the literal of PREPARE name FROM '...' and the analysis of
// the statement it holds.
type preparedSite struct {
	start, end int
	inner      *Analysis
}

const (
	maxIdentifierLength  = 64
	defaultCacheCapacity = 4096
)

// Refusal is a statement the engine will not let through, with the MySQL
// error the client should get (refusal.Refusal).
type Refusal = refusal.Refusal

// Refuse is the proxy's refusal with code, the server's SQLSTATE for it
// and a message that says the proxy refused.
func Refuse(code uint16, format string, args ...any) *Refusal {
	return refusal.Refuse(code, format, args...)
}

// ServerRefusal is a refusal worded as the server words the error (see
// refusal.ServerRefusal).
func ServerRefusal(code uint16, format string, args ...any) *Refusal {
	return refusal.ServerRefusal(code, format, args...)
}

// ServerSyntaxError reports whether the server's error code in answer to
// SyntaxCheck's PREPARE means that the server rejects the text itself (see
// refusal.ServerSyntaxError).
func ServerSyntaxError(code uint16) bool { return refusal.ServerSyntaxError(code) }

// Engine analyses and rewrites statements. It is safe for concurrent use.
type Engine struct {
	parsers  sync.Pool
	scratch  sync.Pool // *ident.Scratch
	reserved map[string]bool
	// keywords are all the parser's keywords (lower case).
	keywords map[string]bool
	cache    *cache
}

// NewEngine returns an engine with an analysis cache of the given number
// of entries (0 for the default).
func NewEngine(cacheEntries int) *Engine {
	registerCollations()
	if cacheEntries <= 0 {
		cacheEntries = defaultCacheCapacity
	}
	e := &Engine{reserved: map[string]bool{}, keywords: map[string]bool{}, cache: newCache(cacheEntries)}
	e.parsers.New = func() any { return parser.New() }
	e.scratch.New = func() any { return &ident.Scratch{} }
	for _, k := range parser.Keywords {
		e.keywords[strings.ToLower(k.Word)] = true
		if k.Reserved {
			e.reserved[strings.ToLower(k.Word)] = true
		}
	}
	return e
}

// Analyze classifies sql and locates its table references. Results are
// cached by text and options.
func (e *Engine) Analyze(sql string, opts Options) *Analysis {
	key := cacheKey{sql: sql, opts: opts}
	if a := e.cache.get(key); a != nil {
		return a
	}
	a := e.analyze(sql, opts)
	e.cache.put(key, a)
	return a
}

// parse parses sql with a pooled parser. The parser reuses its memory on
// the next parse, so the statements are valid only until release is called
// (release is never nil).
func (e *Engine) parse(sql string, opts Options) (stmts []ast.StmtNode, release func(), err error) {
	p := e.parsers.Get().(*parser.Parser)
	release = func() {}
	defer func() {
		// The parser's value driver panics on some literals (very long
		// decimals): such input is unparseable, never a crash. The parser
		// is not reused after a panic.
		if r := recover(); r != nil {
			stmts, err = nil, fmt.Errorf("parser failed: %v", r)
			return
		}
		release = func() { e.parsers.Put(p) }
	}()
	var mode mysql.SQLMode
	if opts.ANSIQuotes {
		mode |= mysql.ModeANSIQuotes
	}
	if opts.NoBackslashEscapes {
		mode |= mysql.ModeNoBackslashEscapes
	}
	p.SetSQLMode(mode)
	stmts, _, err = p.ParseSQL(sql)
	return stmts, release, err
}

// Result is a rewritten input.
type Result struct {
	SQL      string
	Changed  bool
	Analysis *Analysis
	// Renames are the names the rewrite replaced, as written and as sent
	// (those of the statement a PREPARE or EXECUTE IMMEDIATE literal holds
	// included): the server labels expression columns with their text as
	// sent, so labels can be told back in the client's words.
	Renames []Rename
	// Splices are where the text changed, in order: the server quotes the
	// text it was sent in some errors, which Original reads back in the
	// client's.
	Splices []Splice
}

// Rename is one name replaced in the text (splice.Rename).
type Rename = splice.Rename

// Splice is one replacement: the client's text[Start:End] became the sent
// text[SentStart:SentEnd] (splice.Splice).
type Splice = splice.Splice

// Sent is the offset in the text sent of the offset off of the client's
// text (see splice.Sent).
func Sent(splices []Splice, off int) int { return splice.Sent(splices, off) }

// Original is the offset in the client's text of the offset off of the
// text sent (see splice.Original).
func Original(splices []Splice, off int) int { return splice.Original(splices, off) }

// Rewrite analyses sql and passes every table reference through r. A
// statement the engine cannot prove safe to rewrite is refused with a
// *Refusal; it is never returned unrewritten when r maps a table it names.
func (e *Engine) Rewrite(sql string, opts Options, r Resolver) (*Result, error) {
	a := e.Analyze(sql, opts)
	return a.Rewrite(r)
}

// Rewrite applies r to an analysis. A nil r means no sandbox: the input
// passes through unchanged.
func (a *Analysis) Rewrite(r Resolver) (*Result, error) {
	return a.rewrite(r, true)
}

// rewrite is Rewrite; top says a is the client's input, not a text it
// holds (PREPARE … FROM '…'), which runs later.
func (a *Analysis) rewrite(r Resolver, top bool) (*Result, error) {
	if r == nil {
		return &Result{SQL: a.clientSrc(), Analysis: a}, nil
	}
	reps, err := a.replacements(r)
	if err != nil {
		return nil, a.clientRefusal(err)
	}
	if top && a.parts == nil && a.parseErr == nil {
		reps = append(reps, a.countsReps(r)...)
	}
	if err := splice.Overlapping(reps); err != nil {
		return nil, err
	}
	if a.client != nil {
		return a.buildClient(reps)
	}
	return a.build(reps), nil
}

// clientSrc is the client's text as it sent it.
func (a *Analysis) clientSrc() string {
	if a.client != nil {
		return a.client.Orig
	}
	return a.src
}

// clientRefusal turns the text a refusal of a decoded text asks the server
// about (CheckText, decoded) back into the client's character set: the
// server reads it in that one. Without such a text the refusal stands
// without the server's check. The refusal is copied: analyses, and the
// refusals they keep, are shared through the cache.
func (a *Analysis) clientRefusal(err error) error {
	rf, ok := err.(*Refusal)
	if a.client == nil || !ok || rf.CheckText == "" {
		return err
	}
	c := *rf
	text, encErr := a.client.Encode(rf.CheckText)
	if encErr != nil {
		c.CheckText, c.ServerCheck = "", false
	} else {
		c.CheckText = text
	}
	return &c
}

// buildClient is build for a decoded text: reps, at offsets of the decoded
// text, are spliced into the client's bytes, their texts written in its
// character set.
func (a *Analysis) buildClient(reps []splice.Replacement) (*Result, error) {
	ct := a.client
	for i, rp := range reps {
		text, err := ct.Encode(rp.Text)
		if err != nil {
			return nil, Refuse(wire.ErUnknown, "the rewritten statement cannot be sent in the connection's character set: %v; "+
				"send it in utf8mb4", err)
		}
		start, end := ct.Original(rp.Start), ct.Original(rp.End)
		if ct.Offs != nil && (ct.Offs[start] != rp.Start || ct.Offs[end] != rp.End) {
			return nil, Refuse(wire.ErUnknown, "the proxy would rewrite part of a character of this statement; send it in utf8mb4")
		}
		reps[i] = splice.Replacement{Start: start, End: end, Text: text, Renames: rp.Renames}
	}
	b := &Analysis{src: ct.Orig}
	res := b.build(reps)
	res.Analysis = a
	return res, nil
}

// replacements checks that the input can be rewritten through r and
// returns what to put where in its text.
func (a *Analysis) replacements(r Resolver) ([]splice.Replacement, error) {
	if a.normErr != nil {
		return nil, a.normErr
	}
	if a.alteredName {
		return nil, Refuse(wire.ErUnknown, "a table is named with a backslash in a \"quoted\" name, which the proxy cannot "+
			"read back exactly; quote the name with backquotes")
	}
	if a.parts != nil {
		return a.partReps(r)
	}
	if a.parseErr != nil {
		if err := a.unparsedThrough(r); err != nil {
			return nil, err
		}
		return a.globalReps(r), nil
	}
	if err := a.locatable(r); err != nil {
		return nil, err
	}
	rr, _ := r.(RoutineResolver)
	if rr != nil {
		if reps, ok, err := a.flushNoOp(); ok {
			return reps, err
		}
	}
	routines, err := a.statementReps(r, rr)
	if err != nil {
		return nil, err
	}
	reps, err := a.splice(r)
	if err != nil {
		return nil, err
	}
	calls, err := a.callReps(r)
	if err != nil {
		return nil, err
	}
	reps = append(reps, calls...)
	reps = append(reps, a.namedColumns(reps)...)
	xa, _, err := a.xaReps(r)
	if err != nil {
		return nil, err
	}
	reps = append(reps, xa...)
	dbs, err := a.databaseReps(r)
	if err != nil {
		return nil, err
	}
	reps = append(reps, dbs...)
	reps = append(reps, a.globalReps(r)...)
	return append(reps, routines...), nil
}

// unparsedThrough decides about a text the parser rejected: it passes
// unchanged only when it names nothing r maps and calls no function r
// would place (a call cannot be located for sure in such a text: it would
// run what is not placed).
func (a *Analysis) unparsedThrough(r Resolver) error {
	if err := a.refuseUnparseable(r); err != nil {
		return err
	}
	fr, ok := r.(FunctionResolver)
	if !ok {
		return nil
	}
	for _, st := range a.Statements {
		for _, f := range st.Funcs {
			if _, placed, err := fr.ResolveFunction(f, st.DB); err != nil || placed {
				return cmp.Or(err, error(Refuse(wire.ErUnknown, "this statement calls the stored function %s but the proxy "+
					"cannot parse it, so it cannot redirect the call to the sandbox; %s", quote.Ident(f.Name), unparsedHint)))
			}
		}
	}
	return nil
}

// locatable refuses an input one of whose tables r maps but whose every
// reference to it the engine cannot place in the text: names it could not
// locate, loose names, and a CTE that shadows a mapped table.
func (a *Analysis) locatable(r Resolver) error {
	for _, t := range a.unbound {
		if mapped(r, t) {
			// The server's own error when it rejects the text too (a name
			// not valid in the client's character set: 1300).
			return serverCheck(Refuse(wire.ErUnknown, "cannot locate every reference to %s in the statement text, so it "+
				"cannot be redirected to the sandbox; simplify the statement (e.g. qualify or backquote the table name)", t.Quoted()))
		}
	}
	for _, l := range a.loose {
		if mapped(r, l.t) {
			return a.looseRefusal(l)
		}
	}
	for name := range a.cteShadows {
		// A column qualifier that could name either needs no rewrite when
		// the table keeps its name in the sandbox: either way it still
		// names what it did.
		if t, ok := a.mappedInAnyDB(r, name); ok && !keepsName(r, t) {
			return Refuse(wire.ErUnknown, "the common table expression %s has the name of a sandboxed table that the "+
				"statement also reads, and a column qualified with that name could be either; rename the CTE", quote.Ident(name))
		}
	}
	return nil
}

// statementReps are the replacements of the input's trigger and routine
// statements (rr, nil when r places no routine); it refuses a statement
// whose effects the proxy cannot prove.
func (a *Analysis) statementReps(r Resolver, rr RoutineResolver) ([]splice.Replacement, error) {
	var routines []splice.Replacement
	for i := range a.Statements {
		st := &a.Statements[i]
		var reps []splice.Replacement
		var err error
		switch {
		case st.Trigger != nil:
			reps, err = a.triggerReps(st, r)
		case st.Routine != nil && rr != nil && (st.Kind == KindCall || st.Kind == KindDropProcedure || st.Kind == KindDropFunction ||
			st.Kind == KindAlterFunction || st.Kind == KindAlterProcedure || st.Kind == KindShowCreateFunction || st.Kind == KindShowCreateProcedure):
			reps, err = a.routineReps(st, rr)
		case (st.Kind == KindDropFunction || strings.HasPrefix(string(st.Kind), "ALTER ")) && st.Routine != nil && rr == nil:
			err = Refuse(wire.ErUnknown, "%s acts on a stored routine the proxy cannot place here; run it on a direct connection", st.Kind)
		case st.Unprovable != "":
			err = a.unprovable(st)
		}
		if err != nil {
			return nil, err
		}
		routines = append(routines, reps...)
	}
	return routines, nil
}

// unprovable is the refusal of a statement whose effects the proxy cannot
// confine to the sandbox (a question for the server when it may reject
// the text first).
func (a *Analysis) unprovable(st *Statement) error {
	hint := st.hint
	if hint == "" {
		hint = "run its statements one by one instead"
	}
	rf := Refuse(wire.ErUnknown, "%s, so its effects cannot be confined to the sandbox; %s", st.Unprovable, hint)
	if st.serverCheck && len(a.Statements) == 1 {
		serverCheck(rf)
		if st.Kind == KindExecuteImmediate && len(a.prepared) == 1 {
			// The server checks the text it runs (more than one
			// statement, a ? where the grammar takes none).
			rf.CheckText = a.prepared[0].inner.src
		}
	}
	return rf
}

// namedColumns keeps the names of the columns a view or a table made from
// a query gets from its select list's expressions: the server names such a
// column with the expression's text as sent, so an expression the rewrite
// changes gets its text as the client wrote it as an alias (but for a text
// longer than a name may be, which the server names Name_exp_N either way).
//
// A column of information_schema is named as the select list writes it
// (table_name, not TABLE_NAME), unlike a view's, which has its view's name
// for it: when the rewrite sends a query of information_schema only to the
// sandbox's views of it, each column reference gets the name as written as
// an alias too.
func (a *Analysis) namedColumns(reps []splice.Replacement) []splice.Replacement {
	var out []splice.Replacement
	for _, st := range a.Statements {
		switch st.Kind {
		case KindCreateView, KindAlterView, KindCreateTable:
		default:
			continue
		}
		info := len(reps) > 0 && readsInfoSchemaOnly(st)
		for i, l := range st.Labels {
			changed := false
			for _, rp := range reps {
				changed = changed || rp.Start >= l[0] && rp.End <= l[1] && rp.End > rp.Start
			}
			text := a.src[l[0]:l[1]]
			if i < len(st.labelColumns) && st.labelColumns[i] {
				// A column is named by its name (t.a is a), as written
				// for a table's or information_schema's.
				if name, ok := lexer.ColumnName(text, a.opts.ANSIQuotes); ok && (changed || info) {
					out = append(out, splice.Replacement{Start: l[1], End: l[1], Text: " AS " + quote.Ident(name)})
				}
				continue
			}
			if changed && utf8.RuneCountInString(text) <= maxIdentifierLength && !strings.HasSuffix(text, " ") {
				out = append(out, splice.Replacement{Start: l[1], End: l[1], Text: " AS " + quote.Ident(text)})
			}
		}
	}
	return out
}

// readsInfoSchemaOnly reports whether every table st reads, at least one,
// is one of information_schema's.
func readsInfoSchemaOnly(st Statement) bool {
	for _, t := range st.Reads {
		if !strings.EqualFold(t.DB, "information_schema") {
			return false
		}
	}
	return len(st.Reads) > 0
}

// flushNoOp is, in a sandbox (a RoutineResolver places routines), the
// rewrite of FLUSH TABLE[S] t[, …]: DO 0, which does what the client can
// see of it — nothing — without closing production's tables or needing
// the RELOAD privilege. ok is false for an input without one; one among
// other statements is refused.
func (a *Analysis) flushNoOp() ([]splice.Replacement, bool, error) {
	for _, st := range a.Statements {
		if st.Kind != KindFlushTables {
			continue
		}
		if len(a.Statements) > 1 {
			return nil, true, Refuse(wire.ErUnknown, "FLUSH TABLES is answered alone in a sandbox; send it as a statement of its own")
		}
		return []splice.Replacement{{Start: 0, End: len(a.src), Text: "DO 0"}}, true, nil
	}
	return nil, false, nil
}

// partReps are the replacements of an input the engine split itself: each
// piece's, and each CREATE PROCEDURE's through a RoutineResolver.
func (a *Analysis) partReps(r Resolver) ([]splice.Replacement, error) {
	rr, _ := r.(RoutineResolver)
	var reps []splice.Replacement
	for _, p := range a.parts {
		st := &a.Statements[p.stmt]
		if st.Unprovable != "" && (p.sub == nil || p.sub.parseErr != nil || p.sub.normErr != nil) {
			rf := Refuse(wire.ErUnknown, "%s, so its effects cannot be confined to the sandbox", st.Unprovable)
			if st.serverCheck {
				serverCheck(rf)
			}
			return nil, rf
		}
		if p.sub == nil {
			if rr == nil {
				return nil, Refuse(wire.ErUnknown, "a stored routine's definition runs statements the proxy cannot confine here")
			}
			rs, err := a.routineReps(st, rr)
			if err != nil {
				return nil, err
			}
			reps = append(reps, rs...)
			continue
		}
		rs, err := p.sub.replacements(r)
		if err != nil {
			return nil, err
		}
		for _, rp := range rs {
			rp.Start += p.start
			rp.End += p.start
			reps = append(reps, rp)
		}
	}
	return reps, nil
}

// norm is the lookup key of a table under the session's
// lower_case_table_names: exact with case-sensitive names, else lower case.
func (a *Analysis) norm(t Table) Table {
	if a.opts.CaseSensitiveNames {
		return t
	}
	return Table{DB: strings.ToLower(t.DB), Name: strings.ToLower(t.Name)}
}

// splice resolves every table (write if any reference writes it), maps
// qualifiers to the table they name in their statement, rewrites PREPARE
// literals, and builds the output.
func (a *Analysis) splice(r Resolver) ([]splice.Replacement, error) {
	sp, err := a.resolveSites(r)
	if err != nil {
		return nil, err
	}
	reps := make([]splice.Replacement, 0, len(a.sites)+len(a.prepared))
	for _, s := range a.sites {
		var err error
		switch s.Kind {
		case collect.RefTable, collect.RefTarget:
			reps, err = sp.table(reps, s)
		case collect.RefQualifier:
			reps, err = sp.qualifier(reps, s)
		}
		if err != nil {
			return nil, err
		}
	}
	return a.preparedReplacements(reps, r)
}

// resolvedTable is a table the input names, where r maps it, and its first
// site.
type resolvedTable struct {
	key, phys Table
	first     ident.Site
	write     bool
}

// splicing is the input's tables resolved. Sites are few: slices with
// linear search beat maps here.
type splicing struct {
	a    *Analysis
	tabs []resolvedTable
}

// resolveSites resolves each table the sites name once (for writing if
// any site writes it).
func (a *Analysis) resolveSites(r Resolver) (*splicing, error) {
	sp := &splicing{a: a, tabs: make([]resolvedTable, 0, len(a.sites))}
	for _, s := range a.sites {
		if s.Kind == collect.RefQualifier {
			continue
		}
		k := a.norm(s.Table)
		if i := sp.find(k); i >= 0 {
			sp.tabs[i].write = sp.tabs[i].write || s.Write
			continue
		}
		sp.tabs = append(sp.tabs, resolvedTable{key: k, first: s, write: s.Write})
	}
	for i := range sp.tabs {
		p, ok, err := r.Resolve(sp.tabs[i].first.Table, sp.tabs[i].write)
		if err != nil {
			return nil, err
		}
		if !ok {
			p = sp.tabs[i].first.Table
		} else if err := validPhysical(p); err != nil {
			return nil, err
		}
		sp.tabs[i].phys = p
	}
	return sp, nil
}

// find is the index of logical table k in tabs, -1 when absent.
func (sp *splicing) find(k Table) int {
	for i := range sp.tabs {
		if sp.tabs[i].key == k {
			return i
		}
	}
	return -1
}

// physOf is the physical table k resolves to.
func (sp *splicing) physOf(k Table) (Table, bool) {
	if i := sp.find(k); i >= 0 {
		return sp.tabs[i].phys, true
	}
	return Table{}, false
}

// candidates are the distinct unaliased tables of statement stmt whose
// name is ln: what an unqualified column qualifier can name.
func (sp *splicing) candidates(stmt int, ln string) []Table {
	var out []Table
	for _, s := range sp.a.sites {
		if s.Kind == collect.RefQualifier || s.Aliased || s.Stmt != stmt {
			continue
		}
		if k := sp.a.norm(s.Table); k.Name == ln && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// allKeepName reports whether every table of ts keeps its name where r
// maps it: a qualifier naming any of them, or an alias, stays valid.
func (sp *splicing) allKeepName(ts []Table) bool {
	for _, t := range ts {
		if p, found := sp.physOf(t); !found || !strings.EqualFold(p.Name, t.Name) {
			return false
		}
	}
	return true
}

// table replaces a table's name with where it maps (keeping its name as
// an alias when the physical name differs).
func (sp *splicing) table(reps []splice.Replacement, s ident.Site) ([]splice.Replacement, error) {
	a := sp.a
	p, _ := sp.physOf(a.norm(s.Table))
	if p == s.Table {
		return reps, nil
	}
	if src := a.text[s.Start:s.End]; lexer.CallParen(a.src, s.End, a.opts.IgnoreSpace) && lexer.FunctionKeyword(strings.ToUpper(src)) {
		// The server reads a function's keyword right before "(" as the
		// function: a syntax error the rewrite would mend.
		return nil, serverCheck(Refuse(wire.ErUnknown, "%s right before \"(\" is the server's function, not a table; "+
			"quote the name", src))
	}
	reps = append(reps, splice.Replacement{Start: s.Start, End: s.End, Text: quote.Ident(p.DB) + "." + quote.Ident(p.Name)})
	if s.AliasAt > 0 && p.Name != s.Table.Name {
		reps = append(reps, splice.Replacement{Start: s.AliasAt, End: s.AliasAt, Text: " AS " + quote.Ident(s.Table.Name)})
	}
	return reps, nil
}

// qualifier maps a column qualifier to the table it names in its
// statement, where that table maps.
func (sp *splicing) qualifier(reps []splice.Replacement, s ident.Site) ([]splice.Replacement, error) {
	a := sp.a
	k := a.norm(s.Table)
	if !s.Qualified {
		ln := k.Name
		cands := sp.candidates(s.Stmt, ln)
		if s.Stmt < len(a.stmtAliases) && a.stmtAliases[s.Stmt][strings.ToLower(ln)] {
			if len(cands) > 0 && !sp.allKeepName(cands) {
				return nil, Refuse(wire.ErUnknown, "%s is both a table and a table alias in this statement, so the "+
					"column qualifier %s is ambiguous; give the table a different alias", quote.Ident(s.Table.Name), quote.Ident(s.Table.Name))
			}
			return reps, nil // the alias stays valid after its table is renamed
		}
		switch {
		case len(cands) == 0:
			return reps, nil // an outer table or a name the server will reject anyway
		case len(cands) == 1:
			k = cands[0]
		case sp.allKeepName(cands):
			// Whichever table of its name the server takes it for (by
			// query block, as it does), each keeps that name where it
			// maps: the qualifier names it as before.
			return reps, nil
		default:
			return nil, Refuse(wire.ErUnknown, "the column qualifier %s could name more than one table; "+
				"qualify it with the database or use table aliases", quote.Ident(s.Table.Name))
		}
	}
	p, found := sp.physOf(k)
	if !found || a.norm(p) == k {
		return reps, nil
	}
	if src := a.text[s.Start:s.End]; !s.Qualified && (src == p.Name || src == quote.Ident(p.Name)) {
		// The table keeps its name in its new database: the qualifier
		// still names it, and expression labels such as COUNT(t.id) stay
		// as the client wrote them.
		return reps, nil
	}
	text := quote.Ident(p.Name)
	if s.Qualified {
		text = quote.Ident(p.DB) + "." + text
	}
	return append(reps, splice.Replacement{Start: s.Start, End: s.End, Text: text}), nil
}

// preparedReplacements rewrites the texts PREPARE … FROM '…' holds.
func (a *Analysis) preparedReplacements(reps []splice.Replacement, r Resolver) ([]splice.Replacement, error) {
	for _, p := range a.prepared {
		if len(p.inner.Statements) != 1 {
			// The server prepares one statement only: its own error, when
			// it rejects the text as the proxy expects.
			r := serverCheck(Refuse(wire.ErUnknown, "PREPARE ... FROM '...' holds more than one statement; prepare them one at a time"))
			r.CheckText = p.inner.src
			return nil, r
		}
		if _, ok := r.(DatabaseResolver); ok && changesDatabase(p.inner) {
			return nil, Refuse(wire.ErUnsupportedPS, "a prepared CREATE, DROP or ALTER DATABASE cannot run in a sandbox; send it as a plain statement")
		}
		res, err := p.inner.rewrite(r, false)
		var rf *Refusal
		if errors.As(err, &rf) && rf.ServerCheck && rf.CheckText == "" {
			// The server checks the text it prepares: that text, not the
			// PREPARE statement, is the one to ask it about.
			rf.CheckText = p.inner.src
		}
		if err != nil {
			return nil, err
		}
		if res.Changed {
			reps = append(reps, splice.Replacement{Start: p.start, End: p.end, Text: lexer.Quote(res.SQL, !a.opts.NoBackslashEscapes),
				Renames: res.Renames})
		}
	}
	return reps, nil
}

// keepsName reports whether r maps t to a table of the same name (in
// another database), which an unqualified column qualifier still names.
func keepsName(r Resolver, t Table) bool {
	p, _, err := r.Resolve(t, false)
	return err == nil && strings.EqualFold(p.Name, t.Name)
}

// build splices reps into the client's text.
func (a *Analysis) build(reps []splice.Replacement) *Result {
	if len(reps) == 0 {
		return &Result{SQL: a.src, Analysis: a}
	}
	sql, renames, splices := splice.Apply(a.src, reps)
	return &Result{SQL: sql, Changed: true, Analysis: a, Renames: renames, Splices: splices}
}

// mapped reports whether r redirects t. Resolve errors count as mapped:
// the caller refuses either way.
func mapped(r Resolver, t Table) bool {
	if o, ok := r.(OwnNames); ok && o.OwnOnly(t) {
		return false
	}
	_, ok, err := r.Resolve(t, false)
	return ok || err != nil
}

// refuseUnparseable decides about a statement the parser rejected: it may
// pass only if it names no table r maps and cannot write (it starts like a
// read). Anything else is refused: a sandbox needs its writes rewritten.
func (a *Analysis) refuseUnparseable(r Resolver) error {
	u := forms.Unparsed{Text: a.text, Toks: lexer.Lex(a.text, lexer.Options{ANSIQuotes: a.opts.ANSIQuotes, NoBackslashEscapes: a.opts.NoBackslashEscapes})}
	u.First = u.FirstWord()
	readLike := u.ReadLike()
	for i, t := range u.Toks {
		if t.Kind == lexer.Punct && a.text[t.Start] == ';' && i < len(u.Toks)-1 {
			return Refuse(wire.ErUnknown, "the proxy cannot parse this input (%s) and it holds more than one statement, "+
				"so it cannot tell what the others do; send the statements one at a time", firstLine(a.parseErr.Error()))
		}
	}
	for i, t := range u.Toks {
		if t.Kind != lexer.Ident {
			continue
		}
		if forms.IsWriteKeyword(u.Word(i)) {
			readLike = false
		}
		if hazard := u.Hazard(i); hazard != "" {
			return serverCheck(Refuse(wire.ErUnknown, "the proxy cannot parse this statement (%s) and %s; %s",
				firstLine(a.parseErr.Error()), hazard, unparsedHint))
		}
	}
	if !readLike {
		rf := serverCheck(Refuse(wire.ErUnknown, "the proxy cannot parse this statement (%s), so it cannot confine its writes "+
			"to the sandbox; %s", firstLine(a.parseErr.Error()), unparsedHint))
		rf.ServerErrors = forms.ServerErrors(a.text, u.Toks)
		return rf
	}
	hint := unparsedHint
	for i := range u.Toks {
		if u.Word(i) == "PREVIOUS" && u.Word(i+1) == "VALUE" {
			hint = "write LASTVAL(seq) for PREVIOUS VALUE FOR seq"
		}
	}
	for _, ch := range ident.Chains(a.text, u.Toks, nil) {
		for _, t := range ident.Tables(a.text, u.Toks, ch) {
			if mt, ok := a.mappedAny(r, t); ok {
				return serverCheck(Refuse(wire.ErUnknown, "this statement names the sandboxed table %s but the proxy cannot parse it "+
					"(%s), so it cannot be redirected to the sandbox; %s", mt.Quoted(), firstLine(a.parseErr.Error()), hint))
			}
		}
	}
	return nil
}

// firstLine is s up to its first line break.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// Unparsed reports whether the parser rejected the text.
func (a *Analysis) Unparsed() bool { return a.parseErr != nil }

// Analyzes reports whether sql starts with MariaDB's ANALYZE [FORMAT=JSON]
// of a statement (see recovery.Analyzes).
func Analyzes(sql string) bool { return recovery.Analyzes(sql) }

// Analyzes reports whether the input is one statement that ANALYZE runs
// and explains (see Analyzes): the text of a PREPARE's Inner included.
func (a *Analysis) Analyzes() bool {
	return len(a.Statements) == 1 && recovery.Analyzes(a.src)
}

// StatementEndBefore reports whether the text has a ';' outside strings,
// names and comments before offset off or at it: a statement ends there,
// which the server runs before it reads what follows.
func (a *Analysis) StatementEndBefore(off int) bool {
	if ct := a.client; ct != nil && ct.Offs != nil {
		off = ct.Offs[min(max(off, 0), len(ct.Orig))] // off is in the client's bytes
	}
	for _, t := range lexer.Lex(a.text, lexer.Options{ANSIQuotes: a.opts.ANSIQuotes, NoBackslashEscapes: a.opts.NoBackslashEscapes}) {
		if int(t.Start) > off {
			return false
		}
		if t.Kind == lexer.Punct && a.text[t.Start] == ';' {
			return true
		}
	}
	return false
}

// validPhysical checks a resolver's answer is a usable identifier pair.
func validPhysical(p Table) error {
	for _, s := range []string{p.DB, p.Name} {
		if s == "" || len(s) > maxIdentifierLength || strings.HasSuffix(s, " ") || strings.ContainsRune(s, 0) {
			return Refuse(wire.ErWrongTableName, "invalid physical table name %s", p.Quoted())
		}
	}
	return nil
}

// looseRefusal is the refusal of a statement naming a sandboxed table where
// no reference accounts for it: for what the statement is when the engine
// knows a better reason.
func (a *Analysis) looseRefusal(l looseName) *Refusal {
	var st Statement
	if l.stmt < len(a.Statements) {
		st = a.Statements[l.stmt]
	}
	switch {
	case st.Outside != "":
		return Refuse(wire.ErUnknown, "%s", st.Outside)
	case st.privileges:
		return Refuse(wire.ErUnknown, "this account or privilege statement names the sandboxed table %s, but privileges are "+
			"the server's, not the sandbox's: the proxy does not rewrite them; run it on a direct connection", l.t.Quoted())
	}
	return Refuse(wire.ErUnknown, "the proxy does not know how this statement uses the sandboxed table %s, "+
		"so it cannot confine it to the sandbox", l.t.Quoted())
}

// unparsedHint is what the refusal of a statement the engine cannot parse
// tells the client to do.
const unparsedHint = "the proxy does not read this form of the statement: write it in a form it reads " +
	"(docs/SANDBOXES.md lists the MariaDB forms it reads) or run it on a direct connection"

// serverCheck marks r as a refusal the server's own error should replace
// when the server rejects the text too (see Refusal.ServerCheck).
func serverCheck(r *Refusal) *Refusal {
	r.ServerCheck = true
	return r
}

// checkStatement is the name of the prepared statement SyntaxCheck uses.
const checkStatement = "__sqlfork_syntax_check"

// SyntaxCheck returns the statements that ask the server whether it reads
// sql, a text the engine refused with ServerCheck: PREPARE of the text (for
// a session with opts) and the DEALLOCATE to send after a PREPARE that
// succeeded. PREPARE runs nothing; it reads the text and resolves its
// names, taking metadata locks on the tables it names until the
// transaction ends, so callers should ask only outside a transaction.
func SyntaxCheck(sql string, opts Options) (prepare, deallocate string) {
	return "PREPARE " + checkStatement + " FROM " + lexer.Quote(sql, !opts.NoBackslashEscapes),
		"DEALLOCATE PREPARE " + checkStatement
}
