package rewrite

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite/body"
	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
	"github.com/sqlfork/sqlfork-proxy/rewrite/recovery"
	"github.com/sqlfork/sqlfork-proxy/rewrite/splice"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Stored procedures. The parser reads little of MariaDB's compound
// statements (no DO, SIGNAL or SELECT … INTO a variable in a body), so the
// engine reads CREATE PROCEDURE itself: the header (name, parameters,
// characteristics) by its words, the body by its compound structure —
// BEGIN … END blocks, DECLARE of variables, conditions and cursors, SIGNAL
// and RESIGNAL, OPEN, FETCH, CLOSE — and every other statement of the body
// as a statement of its own, analysed like any input (with the procedure's
// database current, as the server runs it). What it does not read (IF,
// CASE, loops, labels, handlers, RETURN) makes the definition unprovable.
//
// A resolver that places routines (RoutineResolver) gets CREATE PROCEDURE,
// DROP PROCEDURE and CALL rewritten to name the routine in the database it
// chooses, and the body's every table reference to the table it maps; any
// other resolver refuses them, as before.

// Routine is the stored procedure a CREATE PROCEDURE, DROP PROCEDURE or
// CALL statement names.
type Routine struct {
	// Schema is the procedure's database as written ("" when unqualified:
	// the statement's current database), Name its name.
	Schema, Name string
	// nameStart and nameEnd are where the name (with its qualifier) is in
	// the text.
	nameStart, nameEnd int
	// Body are the statements of a CREATE PROCEDURE's body the engine
	// reads as statements of their own, each analysed alone, in order.
	Body []*Analysis
	// bodyAt are the offsets of Body's texts in the input's.
	bodyAt []int
}

// DB is the database the routine is in, for a statement whose current
// database is current.
func (r *Routine) DB(current string) string {
	if r.Schema != "" {
		return r.Schema
	}
	return current
}

// RoutineResolver is a Resolver that also places stored procedures: the
// database a CREATE PROCEDURE, DROP PROCEDURE or CALL statement st must
// name its procedure in (an error refuses the statement; "" leaves the
// name as written, for SHOW CREATE of a routine the resolver does not
// place). A CREATE
// PROCEDURE's body is then rewritten through the same resolver, which must
// map every table it names.
type RoutineResolver interface {
	Resolver
	ResolveRoutine(st *Statement) (db string, err error)
}

// part is a statement of an input the engine split itself (one holding
// CREATE PROCEDURE): a piece analysed alone, or a CREATE PROCEDURE.
type part struct {
	start int
	sub   *Analysis // nil for a CREATE PROCEDURE
	stmt  int       // index of the part's (first) statement
}

// OneCompound reports whether sql holds no statement after the compound
// statement it starts with (BEGIN NOT ATOMIC … END [label]): its BEGIN …
// END and CASE … END [CASE] pairs, counted in its tokens (quotes and
// comments skipped), close at its last END. An input of two blocks is no
// one statement for the server. A text it cannot lex is not one.
func OneCompound(sql string, opts Options) bool {
	text, err := Normalize(sql, opts)
	if err != nil {
		return false
	}
	toks := lexer.Lex(text, lexer.Options{ANSIQuotes: opts.ANSIQuotes, NoBackslashEscapes: opts.NoBackslashEscapes})
	depth := 0
	for i := range toks {
		switch lexer.Word(text, toks, i) {
		case "BEGIN", "CASE":
			if lexer.Word(text, toks, i-1) != "END" { // END CASE closes a CASE
				depth++
			}
		case "END":
			switch lexer.Word(text, toks, i+1) {
			case "IF", "LOOP", "WHILE", "REPEAT", "FOR":
				continue // closes what is not counted
			}
			if depth--; depth == 0 {
				j := i + 1
				if toks := toks[j:]; len(toks) > 0 && toks[0].Kind == lexer.Ident && lexer.Word(text, toks, 0) != "" {
					j++ // END label, END CASE
				}
				for ; j < len(toks); j++ {
					if !lexer.PunctAt(text, toks, j, ';') {
						return false
					}
				}
				return true
			}
			if depth < 0 {
				return false
			}
		}
	}
	return false
}

// hasCreateProcedure reports whether a statement of the input (tokens of
// its normalized text) is CREATE PROCEDURE or CREATE [AGGREGATE] FUNCTION
// (of a stored function), or CREATE TRIGGER with other statements before
// or after it (a CREATE TRIGGER alone is read by triggerStatement).
func (e *Engine) hasCreateProcedure(text string, toks []lexer.Token, opts Options) bool {
	start := true
	for i := range toks {
		if at, _ := body.Settings(text, toks, i, lexer.Options{ANSIQuotes: opts.ANSIQuotes, NoBackslashEscapes: opts.NoBackslashEscapes}); start && body.CreatesRoutine(text, toks, at) != "" {
			return true
		}
		if start && body.CreatesTrigger(text, toks, i) {
			if i > 0 {
				return true
			}
			end, ok := e.triggerEnd(text, toks, i, opts)
			return ok && !body.OnlyEnd(text, toks, end)
		}
		start = lexer.PunctAt(text, toks, i, ';')
	}
	return false
}

// analyzePieces analyses an input holding CREATE PROCEDURE (or CREATE
// TRIGGER with other statements): split at its statements' ends (a CREATE
// PROCEDURE or TRIGGER ends with its body), each piece analysed alone
// (with the current database a USE before it set), each CREATE PROCEDURE
// read by analyzeProcedure, each CREATE TRIGGER as when it is sent alone.
func (e *Engine) analyzePieces(a *Analysis, toks []lexer.Token) {
	ps := &pieces{e: e, a: a, toks: toks, db: a.opts.DB}
	for i := 0; i < len(toks); {
		if lexer.PunctAt(a.text, toks, i, ';') {
			i++
			continue
		}
		next, stop := ps.piece(i)
		if stop {
			return
		}
		i = next
	}
	a.endDB = ps.db
}

// pieces is analyzePieces' walk: the input's tokens and the current
// database.
type pieces struct {
	e    *Engine
	a    *Analysis
	toks []lexer.Token
	db   string
}

// piece reads the piece at toks[i]; next is where the next starts, stop
// is true when nothing after it is read.
func (ps *pieces) piece(i int) (next int, stop bool) {
	a, text, toks := ps.a, ps.a.text, ps.toks
	start := int(toks[i].Start)
	at, settings := body.Settings(text, toks, i, lexer.Options{ANSIQuotes: a.opts.ANSIQuotes, NoBackslashEscapes: a.opts.NoBackslashEscapes})
	if k := body.CreatesRoutine(text, toks, at); k != "" {
		return ps.routine(start, at, k, settings)
	}
	if at == i && body.CreatesTrigger(text, toks, i) {
		return ps.trigger(i, start)
	}
	if recovery.JunkAt(text, toks, i, ps.e.keywords) {
		// A syntax error for sure stops the input: it and the rest are
		// one statement that reaches nothing (not analysed again, as the
		// rest may hold the CREATE PROCEDURE that brought it here).
		ps.junk(start)
		return 0, true
	}
	return ps.plain(i, start)
}

// add appends st, at offset start, with its piece's analysis sub.
func (ps *pieces) add(start int, sub *Analysis, st Statement) {
	a := ps.a
	a.parts = append(a.parts, part{start: start, sub: sub, stmt: len(a.Statements)})
	a.stmtStarts = append(a.stmtStarts, start)
	a.stmtDBs = append(a.stmtDBs, st.DB)
	a.Statements = append(a.Statements, st)
}

// junk makes the text from start one statement that reaches nothing.
func (ps *pieces) junk(start int) {
	ps.add(start, junkAnalysis(ps.a.text[start:], withDB(ps.a.opts, ps.db)), Statement{Class: ClassRead, Kind: KindSyntaxError, DB: ps.db})
	ps.a.endDB = ps.db
}

// routine reads CREATE [OR REPLACE] {PROCEDURE | FUNCTION} (k) at toks[at],
// its body with analyzeProcedure.
func (ps *pieces) routine(start, at int, k string, settings []string) (int, bool) {
	a, text, toks := ps.a, ps.a.text, ps.toks
	_, next := body.CreateAt(text, toks, at)
	st, end, junk := ps.e.analyzeProcedure(a, toks, next, ps.db, k == "FUNCTION")
	if junk {
		// Nested too deep for the server's parser: a syntax error for
		// sure, sent as it is (with the rest of the input).
		ps.junk(start)
		return 0, true
	}
	st.Kind, st.Class, st.DB, st.SetStatement = Kind("CREATE "+k), ClassRoutine, ps.db, settings
	// A body the proxy cannot read may be the server's syntax error: asked
	// when the input is this one statement as far as the text tells (it
	// starts the input and ends with END).
	st.serverCheck = end < 0 && len(a.Statements) == 0 && body.EndsWithEnd(text, toks)
	ps.add(start, nil, st)
	if st.Unprovable != "" || end < 0 {
		return 0, true
	}
	if end < len(toks) && !lexer.PunctAt(text, toks, end, ';') {
		a.Statements[len(a.Statements)-1].Unprovable = "the proxy cannot read where this CREATE PROCEDURE ends"
		return 0, true
	}
	return end, false
}

// trigger reads a CREATE TRIGGER piece at toks[i]: to the end of its
// body, read as when it is sent alone.
func (ps *pieces) trigger(i, start int) (int, bool) {
	a, text, toks := ps.a, ps.a.text, ps.toks
	tend, ok := ps.e.triggerEnd(text, toks, i, withDB(a.opts, ps.db))
	if !ok {
		ps.add(start, nil, Statement{Class: ClassRoutine, Kind: KindCreateTrigger, DB: ps.db, Trigger: &Trigger{Followed: true},
			Unprovable: "the proxy cannot read where this CREATE TRIGGER ends", hint: "send it alone, or run it on a direct connection"})
		return 0, true
	}
	if tend < len(toks) && !lexer.PunctAt(text, toks, tend, ';') {
		// Something after the body but before a ';': the server's syntax
		// error, the trigger read alone refuses it.
		tend = len(toks)
	}
	end := len(text)
	if tend < len(toks) {
		end = int(toks[tend].Start)
	}
	sub := ps.e.analyze(text[start:end], withDB(a.opts, ps.db))
	a.parts = append(a.parts, part{start: start, sub: sub, stmt: len(a.Statements)})
	for _, st := range sub.Statements {
		if st.Trigger != nil && st.Unprovable != "" {
			st.Trigger.Followed = true // not the input's one statement
		}
		a.stmtStarts = append(a.stmtStarts, start)
		a.stmtDBs = append(a.stmtDBs, st.DB)
		a.Statements = append(a.Statements, st)
	}
	return tend, false
}

// plain reads any other statement at toks[i], to its ';', as when it is
// sent alone; a USE there changes the database of the pieces after it.
func (ps *pieces) plain(i, start int) (int, bool) {
	a, text, toks := ps.a, ps.a.text, ps.toks
	end := len(text)
	j := i
	for j < len(toks) && !lexer.PunctAt(text, toks, j, ';') {
		j++
	}
	if j < len(toks) {
		end = int(toks[j].Start)
	}
	sub := ps.e.analyze(text[start:end], withDB(a.opts, ps.db))
	if sub.parseErr != nil || sub.normErr != nil {
		ps.add(start, sub, Statement{Class: ClassUnparseable, DB: ps.db,
			Unprovable: "the proxy cannot parse a statement of this input and it holds a stored procedure's definition, so it cannot tell what the others do; send the statements one at a time"})
		return 0, true
	}
	a.parts = append(a.parts, part{start: start, sub: sub, stmt: len(a.Statements)})
	for k, st := range sub.Statements {
		a.stmtStarts = append(a.stmtStarts, start+sub.stmtStarts[min(k, len(sub.stmtStarts)-1)])
		a.stmtDBs = append(a.stmtDBs, st.DB)
		a.Statements = append(a.Statements, st)
	}
	ps.db = sub.endDB
	return j, false
}

// junkAnalysis is the analysis of text, a syntax error for sure and what
// follows it: one statement that reaches nothing.
func junkAnalysis(text string, opts Options) *Analysis {
	return &Analysis{src: text, text: text, opts: opts, endDB: opts.DB,
		Statements: []Statement{{Class: ClassRead, Kind: KindSyntaxError, DB: opts.DB}},
		stmtStarts: []int{0}, stmtDBs: []string{opts.DB}, stmtAliases: []map[string]bool{nil}}
}

// withDB is opts with another current database.
func withDB(opts Options, db string) Options {
	opts.DB = db
	return opts
}

// analyzeProcedure reads a CREATE PROCEDURE (or, with function, a CREATE
// FUNCTION) from its name (toks[i]) to the end of its body. end is the
// index of the token after the body, -1 when the statement cannot be read
// (st.Unprovable says why); junk is set when the server's parser surely
// refuses the statement (its body nests too deep for it).
func (e *Engine) analyzeProcedure(a *Analysis, toks []lexer.Token, i int, db string, function bool) (st Statement, end int, junk bool) {
	text := a.text
	w := func(j int) string { return lexer.Word(text, toks, j) }
	what := "procedure"
	if function {
		what = "function"
	}
	fail := func(why string) (Statement, int, bool) {
		st.Unprovable = why
		return st, -1, false
	}
	if w(i) == "IF" && w(i+1) == "NOT" && w(i+2) == "EXISTS" {
		i += 3
	}
	r, j, ok := routineName(text, toks, i)
	if !ok {
		return fail("the proxy cannot read the name of this " + what)
	}
	st.Routine = r
	// Parameters: ( … ) with balanced parentheses (types take some).
	if !lexer.PunctAt(text, toks, j, '(') {
		return fail("the proxy cannot read the parameters of this " + what)
	}
	params := j
	if j = lexer.Closing(text, toks, j); j == 0 {
		return fail("the proxy cannot read the parameters of this " + what)
	}
	j++
	if function {
		if j = body.ReturnType(text, toks, j); j < 0 {
			return fail("the proxy cannot read the return type of this function")
		}
	}
	if j = body.Characteristics(text, toks, j); j < 0 {
		return fail("the proxy cannot read the characteristics of this " + what)
	}
	br := e.newBodyReader(a, toks, r.DB(db), r)
	br.Function = function
	// Parameters of anchored types name tables too.
	if why := br.Anchors(params+1, j-1); why != "" {
		return fail(why)
	}
	end, why := br.Statement(j, 0)
	if br.TooDeep {
		return st, -1, true
	}
	if why != "" {
		return fail(why)
	}
	for _, b := range r.Body {
		for _, bs := range b.Statements {
			st.takeBody(bs)
			// A CALL in a body is placed like a CALL of the client's: the
			// RoutineResolver a CREATE PROCEDURE needs names where its
			// procedure is, and checks it there.
			if bs.Unprovable != "" && st.Unprovable == "" && !(bs.Kind == KindCall && bs.Routine != nil) {
				st.Unprovable = bs.Unprovable + " (in the body of " + what + " " + quote.Ident(r.Name) + ")"
			}
		}
	}
	return st, end, false
}

// routineName reads a routine's name (name or db.name) at toks[i]; next is
// the index after it.
func routineName(text string, toks []lexer.Token, i int) (r *Routine, next int, ok bool) {
	isName := func(j int) bool {
		return j < len(toks) && (toks[j].Kind == lexer.Ident || toks[j].Kind == lexer.Quoted)
	}
	if !isName(i) {
		return nil, 0, false
	}
	r = &Routine{Name: lexer.IdentText(text, toks[i]), nameStart: int(toks[i].Start), nameEnd: int(toks[i].End)}
	next = i + 1
	if lexer.PunctAt(text, toks, next, '.') && isName(next+1) && toks[next].Start == toks[i].End && toks[next+1].Start == toks[next].End {
		r.Schema, r.Name = r.Name, lexer.IdentText(text, toks[next+1])
		r.nameEnd = int(toks[next+1].End)
		next += 2
	}
	return r, next, true
}

// routineStatement fills st.Routine for DROP PROCEDURE, CALL and SHOW
// CREATE PROCEDURE, whose
// procedure's name is located in text (tokens toks) from the statement's
// start.
func routineStatement(st *Statement, s ast.StmtNode, text string, toks []lexer.Token, start int) {
	i := 0
	for i < len(toks) && int(toks[i].Start) < start {
		i++
	}
	w := func(j int) string { return lexer.Word(text, toks, j) }
	switch s.(type) {
	case *ast.DropProcedureStmt:
		if w(i) != "DROP" || w(i+1) != "PROCEDURE" {
			return
		}
		i += 2
		if w(i) == "IF" && w(i+1) == "EXISTS" {
			i += 2
		}
	case *ast.CallStmt:
		if w(i) != "CALL" {
			return
		}
		i++
	case *ast.ShowStmt:
		if w(i) != "SHOW" || w(i+1) != "CREATE" || w(i+2) != "PROCEDURE" {
			return
		}
		i += 3
	default:
		return
	}
	if r, _, ok := routineName(text, toks, i); ok {
		st.Routine = r
	}
}

// routineReps are the rewrites of a routine statement st (CALL, DROP or
// CREATE PROCEDURE) through rr: its name in the database rr chooses and,
// for CREATE PROCEDURE, every table of its body where rr maps it.
func (a *Analysis) routineReps(st *Statement, rr RoutineResolver) ([]splice.Replacement, error) {
	r := st.Routine
	db, err := rr.ResolveRoutine(st)
	if err != nil || db == "" {
		return nil, err // "": the routine stays where it is named
	}
	if len(db) > maxIdentifierLength {
		return nil, Refuse(wire.ErWrongTableName, "invalid database name %s", quote.Ident(db))
	}
	reps := []splice.Replacement{{Start: r.nameStart, End: r.nameEnd, Text: quote.Ident(db) + "." + quote.Ident(r.Name)}}
	for i, b := range r.Body {
		// The body runs with the procedure's database current, which is
		// not the one the resolver places it in: every table it names must
		// be placed, or it would name nothing of production's (but the
		// server's virtual schemas', named with their database).
		for _, bs := range b.Statements {
			for _, t := range append(append([]Table{}, bs.Reads...), bs.Writes...) {
				if _, ok, err := rr.Resolve(t, false); err != nil {
					return nil, err
				} else if !ok && !virtualSchema(t.DB) {
					return nil, Refuse(wire.ErOptionPreventsStatement, "the body of procedure %s names %s, which the proxy "+
						"cannot place in the sandbox", quote.Ident(r.Name), t.Quoted())
				}
			}
		}
		sub, err := b.replacements(rr)
		if err != nil {
			return nil, err
		}
		for _, rp := range sub {
			rp.Start += r.bodyAt[i]
			rp.End += r.bodyAt[i]
			reps = append(reps, rp)
		}
	}
	return reps, nil
}

// virtualSchema reports whether db is one of the server's virtual schemas,
// information_schema and performance_schema: a body names their tables
// with the database (the procedure's own is never one), whatever database
// is current, no fork holds them and no statement writes them, so one the
// resolver leaves where it is stays right in a body placed elsewhere (what
// a sandbox may read of them is the session's to check, as for any
// statement).
func virtualSchema(db string) bool {
	return strings.EqualFold(db, "information_schema") || strings.EqualFold(db, "performance_schema")
}

// analyzeCompound reads an input that is one compound statement with the
// procedure body's reader: each statement and expression of the block is
// analysed alone and rewritten in place (a part each). A block that runs
// dynamic SQL, or holds anything but reads, writes, DDL of tables and
// views (as a sandbox procedure's body holds them: the session prepares
// their tables before the block runs, see CompoundDDL) and plain SET of
// variables — statements the session must see sent alone (transactions,
// USE, SHOW, CALL, triggers, …) — is one statement refused for it. It
// reports false, leaving the input to the parser (which refuses it), when
// the reader cannot read the block, or it is not the whole input.
func (e *Engine) analyzeCompound(a *Analysis, toks []lexer.Token) bool {
	text := a.text
	if lexer.PunctAt(text, toks, 1, ':') {
		// MariaDB runs compound statements outside a stored program
		// unlabelled only (sp_proc_stmt_compound_ok): a label there is a
		// syntax error for sure. The input goes as it is, for the
		// server's own 1064.
		a.Statements = []Statement{{Class: ClassRead, Kind: KindSyntaxError, DB: a.opts.DB}}
		a.stmtStarts, a.stmtDBs, a.stmtAliases = []int{0}, []string{a.opts.DB}, []map[string]bool{nil}
		return true
	}
	r := &Routine{}
	b := e.newBodyReader(a, toks, a.opts.DB, r)
	end, why := b.Statement(0, 0)
	// refused makes the input one compound statement refused for why
	// (the session has the server check a block's syntax first).
	refused := func(why, hint string) bool {
		a.Statements = []Statement{{DB: a.opts.DB, Class: ClassWrite, Kind: KindCompound,
			Unprovable: "this compound statement (BEGIN NOT ATOMIC … END, or a block sent as a statement) " + why, hint: hint}}
		a.stmtStarts, a.stmtDBs = []int{0}, []string{a.opts.DB}
		return true
	}
	if b.Dynamic != "" {
		// Dynamic SQL: refused as such, whatever else the block holds.
		return refused("runs dynamic SQL: "+b.Dynamic, "dynamic SQL inside a compound statement or stored program is refused "+
			"in a sandbox, as the proxy cannot rewrite a text the server builds at run time; send the statements it would run one by one instead")
	}
	if why != "" {
		return false
	}
	for ; end < len(toks); end++ {
		if !lexer.PunctAt(text, toks, end, ';') {
			return false
		}
	}
	st := Statement{DB: a.opts.DB, Class: ClassRead, Kind: KindCompound}
	for _, sub := range r.Body {
		for _, bs := range sub.Statements {
			what := string(bs.Kind)
			if f := strings.Fields(sub.text); what == "" && len(f) > 0 {
				what = strings.ToUpper(f[0])
			}
			switch {
			case bs.Kind == KindSyntaxError:
				return false
			case bs.Unprovable != "":
				return refused("holds a statement the proxy cannot see through: "+bs.Unprovable,
					"send the block's statements one by one instead")
			case bs.Class == ClassWrite && bs.Show == nil && bs.Routine == nil:
				st.Class = ClassWrite
			case bs.Class == ClassRead && bs.Show == nil && bs.Routine == nil:
			case bs.Class == ClassSession && bs.Kind == KindSet && !bs.ChangesLexing && !bs.ChangesIsolation:
			case bs.Class == ClassDDL && bs.Show == nil && bs.Routine == nil && bs.Trigger == nil && !bs.ChangesLexing:
				// DDL of tables and views, as a procedure's body holds
				// it: the session forks or places its tables first.
				st.Class = ClassWrite
			default:
				// Statements the session must see sent alone:
				// transactions, USE, SHOW, CALL, DDL of routines and
				// triggers, settings that change how texts are read or
				// what they lock.
				return refused("holds "+what+", which the proxy runs in a sandbox only when it is sent as a statement of its own "+
					"(a block may hold reads, writes, DDL of tables and views and SET of variables)", "send that statement outside the block")
			}
			st.takeBody(bs)
		}
	}
	if len(st.Writes) > 0 {
		st.Class = ClassWrite
	}
	a.Statements = []Statement{st}
	a.stmtStarts, a.stmtDBs = []int{0}, []string{a.opts.DB}
	for i, sub := range r.Body {
		a.parts = append(a.parts, part{start: r.bodyAt[i], sub: sub})
	}
	return true
}

// CompoundBody is, for an input that is one compound statement sent as a
// statement (Kind "COMPOUND"), the analyses of its statements and
// expressions in the order they are written — each a statement of the
// block, or an expression read as SELECT expression — and nil for any
// other input.
func (a *Analysis) CompoundBody() []*Analysis {
	if len(a.Statements) != 1 || a.Statements[0].Kind != KindCompound {
		return nil
	}
	var body []*Analysis
	for _, p := range a.parts {
		if p.sub != nil {
			body = append(body, p.sub)
		}
	}
	return body
}

// CompoundDDL reports whether an input that is one compound statement
// sent as a statement holds DDL (which commits the open transaction where
// it runs, in the middle of the block).
func (a *Analysis) CompoundDDL() bool {
	for _, b := range a.CompoundBody() {
		for _, st := range b.Statements {
			if st.Class == ClassDDL {
				return true
			}
		}
	}
	return false
}

// takeBody adds to st, a statement holding a body (a procedure's, a
// compound statement's), what one statement of the body reads, writes,
// locks, calls and reaches.
func (st *Statement) takeBody(bs Statement) {
	st.Reads = append(st.Reads, bs.Reads...)
	st.Writes = append(st.Writes, bs.Writes...)
	st.Locked = append(st.Locked, bs.Locked...)
	st.Funcs = append(st.Funcs, bs.Funcs...)
	if st.Outside == "" {
		st.Outside = bs.Outside
	}
}
