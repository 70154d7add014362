package rewrite

import (
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite/body"
	"github.com/sqlfork/sqlfork-proxy/rewrite/collect"
	"github.com/sqlfork/sqlfork-proxy/rewrite/forms"
	"github.com/sqlfork/sqlfork-proxy/rewrite/ident"
	"github.com/sqlfork/sqlfork-proxy/rewrite/kind"
	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
	"github.com/sqlfork/sqlfork-proxy/rewrite/recovery"
)

// MariaDB statements the parser does not read at all, read by the engine
// from their words when every name they hold sits in a place the grammar
// fixes (sql/sql_yacc.yy):
//
//   - CREATE TRIGGER, DROP TRIGGER and SHOW CREATE TRIGGER (trigger.go);
//   - stored-program definitions other than procedures and triggers, and
//     their drops (CREATE [OR REPLACE] [DEFINER = …] [AGGREGATE] FUNCTION |
//     EVENT | PACKAGE, DROP / ALTER FUNCTION | EVENT | PACKAGE, ALTER
//     PROCEDURE): class routine; their bodies are not read, so a resolver
//     refuses them (the session refuses stored-routine statements in a
//     sandbox anyway);
//   - statements that name no table: XA …, GET [CURRENT | STACKED]
//     DIAGNOSTICS …, SIGNAL / RESIGNAL …, BACKUP STAGE …, SHOW CREATE
//     FUNCTION | TRIGGER | EVENT | PACKAGE [BODY] name, SHOW FUNCTION |
//     PROCEDURE | PACKAGE [BODY] CODE name — only when every token is a
//     word, literal, variable, '=', ',' or '.' (no parenthesis, so no
//     subquery and no function call);
//   - the table maintenance statements CHECK, CHECKSUM, REPAIR, ANALYZE and
//     OPTIMIZE TABLE[S] t[, …] with their option words (and ANALYZE's
//     PERSISTENT FOR column and index lists), CHECK VIEW v[, …] [FOR
//     UPGRADE], REPAIR VIEW v[, …] [FROM MYSQL], CACHE INDEX and LOAD
//     INDEX INTO CACHE: each name of the list is a table (a view);
//   - DROP [TEMPORARY] TABLE[S] [IF EXISTS] t[, …] [WAIT n | NOWAIT]
//     [RESTRICT | CASCADE] whose names are words MariaDB does not reserve
//     and the parser does (DROP TABLE option): each name is a table;
//   - CREATE [OR REPLACE] [TEMPORARY] TABLE [IF NOT EXISTS] t … and ALTER
//     [ONLINE] [IGNORE] TABLE [IF EXISTS] t … in forms the parser does not
//     know (column and table options of MariaDB's), when nothing after the
//     table's name can name another table: no SELECT, LIKE, REFERENCES,
//     UNION, sequence function, RENAME, EXCHANGE, qualified name, second
//     TABLE, and only engines that keep to their own data;
//   - BACKUP LOCK t (t is a table, read under a metadata lock; class
//     other, which a sandbox refuses);
//   - HANDLER t OPEN [[AS] name] (t is a table, read, and forked first as
//     a table read under locks is: the handler's reads then reach the
//     sandbox's copy), HANDLER name READ … and HANDLER name CLOSE (name is
//     a handler's, no table; no subquery);
//   - EXECUTE IMMEDIATE 'text' (read like PREPARE … FROM 'text'), and with
//     anything but a string literal: dynamic SQL; so is PREPARE s FROM an
//     expression the parser does not read (CONCAT(…), a subquery).
//
// Anything else stays unparseable.

// recognize fills a with the one statement of text (its tokens toks) when
// it is one of the forms above; ok is false otherwise.
func (e *Engine) recognize(a *Analysis, text string, toks []lexer.Token) bool {
	// A single statement: a ';' may only end it.
	n := len(toks)
	for n > 0 && lexer.PunctAt(text, toks, n-1, ';') {
		n--
	}
	if n == 0 {
		return false
	}
	if e.triggerStatement(a, text, toks) {
		return true // trigger.go
	}
	if st, ok := e.storedProgram(a, text, toks, n); ok {
		a.one(st)
		return true
	}
	for i := 0; i < n; i++ {
		if lexer.PunctAt(text, toks, i, ';') || toks[i].Kind == lexer.Comment {
			return false
		}
	}
	toks = toks[:n]
	// SET STATEMENT var = value, … FOR <statement>, with the variables the
	// recovery lets through (recovery.SetStatementPrefix): the statement
	// after FOR is read as if sent alone, and keeps the settings.
	var settings []string
	if lexer.Word(text, toks, 0) == "SET" && lexer.Word(text, toks, 1) == "STATEMENT" {
		end, vars, ok := recovery.SetStatementPrefix(text, toks, 2)
		if !ok || end+1 >= len(toks) || recovery.ModeForLaterText(text, toks, end+1, vars) {
			return false
		}
		toks, settings = toks[end+1:], vars
	}
	st := &Statement{DB: a.opts.DB}
	for _, form := range [...]func(*Engine, *Analysis, *Statement, string, []lexer.Token) formResult{
		(*Engine).sessionForm, (*Engine).tableForm, (*Engine).namelessForm,
	} {
		switch form(e, a, st, text, toks) {
		case formNone:
			continue
		case formFails:
			return false
		case formBuilt:
			a.one(*st)
		}
		if settings != nil && len(a.Statements) == 1 {
			a.Statements[0].SetStatement = settings
		}
		return true
	}
	return false
}

// formResult is what a reader of MariaDB forms made of a text.
type formResult int

const (
	formNone  formResult = iota // not its form: the next reader's
	formFails                   // its form, unreadable: the text stays unparseable
	formBuilt                   // the statement it filled in is the input's
	formDone                    // it filled in the analysis itself
)

// one makes st the input's one statement.
func (a *Analysis) one(st Statement) {
	a.Statements = []Statement{st}
	a.stmtStarts, a.stmtDBs = []int{0}, []string{st.DB}
	a.stmtAliases = []map[string]bool{nil}
}

// storedProgram reads DROP / ALTER of a routine, and statements that
// define a stored program, whose body the proxy does not read (toks[:n]
// the statement without its final ';').
func (e *Engine) storedProgram(a *Analysis, text string, toks []lexer.Token, n int) (Statement, bool) {
	st := Statement{DB: a.opts.DB}
	if kind, r := routineChange(text, toks[:n]); r != nil {
		st.Class, st.Kind, st.Routine = ClassRoutine, kind, r
		return st, true
	}
	kind := storedProgramKind(e, text, toks)
	if kind == "" {
		return st, false
	}
	// A body may hold ';': the input is refused under a resolver whatever
	// follows, so where it ends does not matter.
	st.Class, st.Kind = ClassRoutine, kind
	st.Unprovable = string(kind) + " acts on a stored function, procedure, trigger, event or package, whose statements the proxy does not see"
	st.hint = "run it on a direct connection"
	st.Funcs, st.Names = e.textNames(text, a.opts)
	return st, true
}

// sessionForm reads EXECUTE … USING, PREPARE … FROM an expression, privilege statements, CREATE / ALTER
// / DROP SERVER, view DDL, CREATE / ALTER DATABASE, EXECUTE IMMEDIATE and
// HANDLER.
func (e *Engine) sessionForm(a *Analysis, st *Statement, text string, toks []lexer.Token) formResult {
	word := func(i int) string { return lexer.Word(text, toks, i) }
	switch w0 := word(0); {
	case w0 == "EXECUTE" && word(1) != "IMMEDIATE" && len(toks) > 1 && (toks[1].Kind == lexer.Ident || toks[1].Kind == lexer.Quoted) &&
		(len(toks) == 2 || word(2) == "USING"):
		// EXECUTE s USING <expressions the parser does not read>: the
		// names its values could hold are the statement's.
		st.Class = ClassSession
		st.Unprovable = "EXECUTE runs a statement prepared with SQL PREPARE, which the proxy cannot see"
		st.Handle, st.HandleOp = strings.ToLower(lexer.IdentText(text, toks[1])), "EXECUTE"
		if len(toks) > 3 {
			st.Funcs, st.Names = e.textNames(text[toks[3].End:], a.opts)
		}
	case forms.Privileges(text, toks):
		st.Class, st.Kind, st.privileges = ClassOther, Kind(w0+" "+word(1)), true
		if w0 == "GRANT" || w0 == "REVOKE" {
			st.Kind = Kind(w0)
		}
		a.one(*st)
		a.privilegeNames(text, toks)
		return formDone
	case (w0 == "CREATE" || w0 == "ALTER" || w0 == "DROP") && (word(1) == "SERVER" || word(1) == "OR" && word(3) == "SERVER"):
		st.Class, st.Kind = ClassOther, Kind(w0+" SERVER")
		st.Outside = w0 + " SERVER defines a server FEDERATED and SPIDER tables reach, outside any sandbox; run it on a direct connection"
		st.Unprovable, st.hint = w0+" SERVER defines a server other tables reach", "run it on a direct connection"
	case (w0 == "ALTER" || w0 == "CREATE") && e.viewDDL(a, text, toks):
		return formDone
	case w0 == "CREATE" && word(1) == "OR" && word(2) == "REPLACE" && (word(3) == "DATABASE" || word(3) == "SCHEMA"):
		// CREATE OR REPLACE DATABASE drops the database it replaces and
		// every table in it, then makes it: DDL that names no table, which
		// a sandbox runs on a database of its own (DatabaseResolver).
		name, _, ok := forms.DatabaseDDL(text, append([]lexer.Token{toks[0]}, toks[3:]...))
		if !ok {
			return formFails
		}
		st.Class, st.Kind, st.Database = ClassDDL, kind.CreateOrReplaceDatabase, name
	case (w0 == "CREATE" || w0 == "ALTER") && (word(1) == "DATABASE" || word(1) == "SCHEMA"):
		name, ifNotExists, ok := forms.DatabaseDDL(text, toks)
		if !ok {
			return formFails
		}
		st.Class, st.Kind = ClassDDL, Kind(w0+" DATABASE")
		if w0 == "CREATE" {
			st.Database, st.IfNotExists = name, ifNotExists
		}
	case w0 == "PREPARE" && len(toks) > 3 && (toks[1].Kind == lexer.Ident || toks[1].Kind == lexer.Quoted) && word(2) == "FROM" &&
		!(len(toks) == 4 && toks[3].Kind == lexer.String):
		// PREPARE s FROM <expression> (MariaDB's grammar takes any): a
		// text the server builds when it runs the statement.
		st.Class = ClassSession
		st.Handle, st.HandleOp = strings.ToLower(lexer.IdentText(text, toks[1])), "PREPARE"
		st.Unprovable = "PREPARE ... FROM an expression is dynamic SQL the proxy cannot see"
		st.hint = "run its statements one by one instead"
		st.Funcs, st.Names = e.textNames(text[toks[3].Start:], a.opts)
	case w0 == "EXECUTE" && word(1) == "IMMEDIATE" && forms.ImmediateLiteral(text, toks):
		if e.executeImmediate(a, text, toks[2]) {
			return formDone
		}
		return formFails
	case w0 == "EXECUTE" && word(1) == "IMMEDIATE":
		st.Class, st.Kind = ClassSession, KindExecuteImmediate
		st.Unprovable = "EXECUTE IMMEDIATE of an expression (or with USING values other than literals and variables) " +
			"is dynamic SQL the proxy cannot see"
		st.hint = "send the statement itself, or EXECUTE IMMEDIATE a string literal"
		st.serverCheck = true // USING (SELECT …): the server's parser refuses it
	case w0 == "HANDLER":
		if !e.handler(a, st, text, toks) {
			return formFails
		}
	default:
		return formNone
	}
	return formBuilt
}

// tableForm reads CACHE / LOAD INDEX, DROP TABLE, CREATE / ALTER TABLE and
// table maintenance.
func (e *Engine) tableForm(a *Analysis, st *Statement, text string, toks []lexer.Token) formResult {
	word := func(i int) string { return lexer.Word(text, toks, i) }
	db := a.opts.DB
	switch w0 := word(0); {
	case w0 == "CACHE" && word(1) == "INDEX", w0 == "LOAD" && word(1) == "INDEX":
		sites, ok := forms.KeyCacheTables(text, toks, db)
		if !ok {
			return formFails
		}
		st.Class, st.Kind = ClassOther, Kind(w0+" INDEX")
		for _, s := range sites {
			st.Reads = append(st.Reads, s.Table)
		}
		a.sites = sites
	case w0 == "LOAD" && word(1) == "XML":
		if !e.loadXML(a, st, text, toks) {
			return formFails
		}
	case w0 == "BACKUP" && word(1) == "LOCK":
		s, ok := e.backupLock(text, toks, db)
		if !ok {
			return formFails
		}
		st.Class, st.Kind = ClassOther, kind.BackupLock
		st.Reads, st.Locked = []Table{s.Table}, []Table{s.Table}
		a.sites = []ident.Site{s}
	case w0 == "DROP" && (word(1) == "TABLE" || word(1) == "TABLES" || word(1) == "TEMPORARY"):
		sites, temporary, ok := e.dropTables(text, toks, db)
		if !ok {
			return formFails
		}
		st.Class, st.Kind, st.Temporary = ClassDDL, KindDropTable, temporary
		for _, s := range sites {
			st.Writes = append(st.Writes, s.Table)
		}
		a.sites = sites
	case w0 == "ALTER" && e.convertPartition(a, st, text, toks):
	case w0 == "CREATE" || w0 == "ALTER":
		s, kind, temporary, ok := forms.TableDDL(text, toks, db)
		if !ok {
			return formFails
		}
		st.Class, st.Kind, st.Temporary = ClassDDL, kind, temporary
		st.Writes = []Table{s.Table}
		st.Funcs, _ = e.textNames(text, a.opts)
		a.sites = []ident.Site{s}
	case kind.Maintenance(w0) != "":
		sites, ok := forms.MaintenanceTables(text, toks, db)
		if !ok {
			return formFails
		}
		st.Class, st.Kind = ClassOther, kind.Maintenance(w0)
		for _, s := range sites {
			if s.Write {
				st.Writes = append(st.Writes, s.Table)
			} else {
				st.Reads = append(st.Reads, s.Table)
			}
		}
		a.sites = sites
	default:
		return formNone
	}
	return formBuilt
}

// namelessForm reads the statements that name no table (kind.Nameless).
func (e *Engine) namelessForm(a *Analysis, st *Statement, text string, toks []lexer.Token) formResult {
	k, class := kind.Nameless(text, toks)
	if k == "" {
		return formFails
	}
	st.Class, st.Kind = class, k
	if k == KindXa {
		st.XA, _ = readXA(text, toks, a.opts)
	}
	if k == KindBegin {
		st.Start = collect.TransactionStart(text, lexer.Options{ANSIQuotes: a.opts.ANSIQuotes, NoBackslashEscapes: a.opts.NoBackslashEscapes})
	}
	if t := kind.StatisticsTable(text, toks); t != "" {
		// What the server shows is that information_schema table's:
		// named, for the session's checks of what a sandbox may see.
		st.Names = []Table{{DB: "information_schema", Name: t}}
	}
	if k == KindShowCreateFunction {
		if r, next, ok := routineName(text, toks, 3); ok && next == len(toks) {
			st.Routine = r
		}
	}
	return formBuilt
}

// backupLock reads BACKUP LOCK t, the whole of toks: t (a table_ident, a
// name MariaDB does not reserve or a quoted one), whose metadata lock
// keeps its DDL out until BACKUP UNLOCK.
func (e *Engine) backupLock(text string, toks []lexer.Token, db string) (ident.Site, bool) {
	for j := 2; j < len(toks); j += 2 {
		if toks[j].Kind == lexer.Ident && !forms.Unreserved(lexer.Word(text, toks, j)) && e.reserved[strings.ToLower(lexer.IdentText(text, toks[j]))] {
			return ident.Site{}, false
		}
	}
	s, next, ok := forms.TableNameAt(text, toks, 2, db)
	return s, ok && next == len(toks)
}

// routineChange reads DROP FUNCTION [IF EXISTS] [db.]name and ALTER
// {FUNCTION | PROCEDURE} [db.]name characteristics, the whole of toks: the
// statement's kind and the routine it names, nil for any other statement.
func routineChange(text string, toks []lexer.Token) (Kind, *Routine) {
	w0, w1 := lexer.Word(text, toks, 0), lexer.Word(text, toks, 1)
	switch {
	case w0 == "DROP" && w1 == "FUNCTION":
		i := 2
		if lexer.Word(text, toks, i) == "IF" && lexer.Word(text, toks, i+1) == "EXISTS" {
			i += 2
		}
		if r, next, ok := routineName(text, toks, i); ok && next == len(toks) {
			return KindDropFunction, r
		}
	case w0 == "ALTER" && (w1 == "FUNCTION" || w1 == "PROCEDURE"):
		r, next, ok := routineName(text, toks, 2)
		if !ok {
			return "", nil
		}
		// Characteristics: words and a COMMENT's string only.
		for _, t := range toks[next:] {
			if t.Kind != lexer.Ident && t.Kind != lexer.String {
				return "", nil
			}
		}
		return Kind("ALTER " + w1), r
	}
	return "", nil
}

// storedProgramKind names the statement at toks[0] when it creates, drops
// or alters a stored program other than a procedure (ALTER PROCEDURE
// included): "CREATE FUNCTION", "DROP TRIGGER", …; "" otherwise.
func storedProgramKind(e *Engine, text string, toks []lexer.Token) Kind {
	word := func(i int) string { return lexer.Word(text, toks, i) }
	if k, next := body.CreateAt(text, toks, 0); k != "" && k != "PROCEDURE" && next > 0 {
		return Kind("CREATE " + k)
	}
	switch word(0) {
	case "DROP":
		switch k := word(1); k {
		case "FUNCTION", "TRIGGER", "EVENT", "PACKAGE":
			return Kind("DROP " + k)
		}
	case "ALTER":
		switch k := word(1); k {
		case "FUNCTION", "EVENT", "PROCEDURE":
			return Kind("ALTER " + k)
		}
		if word(1) == "DEFINER" && lexer.PunctAt(text, toks, 2, '=') {
			for i := 3; i < len(toks) && i < 8; i++ {
				if word(i) == "EVENT" {
					return KindAlterEvent
				}
			}
		}
	}
	return ""
}

// executeImmediate reads EXECUTE IMMEDIATE 'text' like PREPARE … FROM
// 'text' (bindPrepared): the text is analysed as a statement of its own and
// rewritten inside the literal; the statement has the class of the one it
// runs.
func (e *Engine) executeImmediate(a *Analysis, text string, lit lexer.Token) bool {
	db := a.opts.DB
	st := Statement{DB: db, Class: ClassSession, Kind: KindExecuteImmediate}
	a.stmtStarts, a.stmtDBs = []int{0}, []string{db}
	a.stmtAliases = []map[string]bool{nil}
	if a.altered != nil && a.altered.AlteredIn(int(lit.Start), int(lit.End)) {
		st.Unprovable = "the text of EXECUTE IMMEDIATE '...' holds multi-byte characters the proxy cannot read back exactly (send it in utf8mb4)"
		a.Statements = []Statement{st}
		return true
	}
	inner := e.analyze(lexer.Unquote(text[lit.Start:lit.End], !a.opts.NoBackslashEscapes), a.opts)
	a.prepared = []preparedSite{{start: int(lit.Start), end: int(lit.End), inner: inner}}
	st.Reads, st.Writes = inner.reads(), inner.writes()
	if why := immediateRefused(inner); why != "" {
		st.Unprovable = why
		st.hint = "send the statement itself"
		// The server's error when it rejects the text (a syntax error).
		st.serverCheck = true
	} else {
		st.Class, st.Temporary = inner.Statements[0].Class, inner.Statements[0].Temporary
		if st.Class == ClassDDL {
			// The session knows a CREATE VIEW by its kind, which is
			// EXECUTE IMMEDIATE here: the tables a DDL statement reads
			// are forked first (Locked) as a CREATE VIEW's are, so a
			// view made this way stays in the sandbox too.
			st.Locked = append(st.Locked, st.Reads...)
		}
	}
	st.takeInner(inner)
	for _, is := range inner.Statements {
		if st.Unprovable == "" && is.Unprovable != "" {
			st.Unprovable = is.Unprovable
		}
	}
	a.Statements = []Statement{st}
	return true
}

// immediateRefused says why the statement EXECUTE IMMEDIATE runs is not
// let through ("" when it is): it must be one plain read, write or DDL
// statement, not one the proxy answers or watches by its kind (SHOW, KILL,
// USE, SET, transactions, CREATE DATABASE, procedures, SANDBOX), which the
// session sees only when sent itself.
func immediateRefused(inner *Analysis) string {
	if len(inner.Statements) != 1 {
		return "EXECUTE IMMEDIATE runs more than one statement"
	}
	is := inner.Statements[0]
	switch {
	case is.Class != ClassRead && is.Class != ClassWrite && is.Class != ClassDDL,
		is.Kind.IsShow(), is.Show != nil, is.Kill != nil, is.Routine != nil, is.Database != "":
		return "EXECUTE IMMEDIATE runs a " + strings.TrimSpace(string(is.Kind)+" statement") + " the proxy must see sent itself"
	}
	return ""
}

// dropTables reads DROP [TEMPORARY] TABLE[S] [IF EXISTS] t[, …] [WAIT n |
// NOWAIT] [RESTRICT | CASCADE], the whole of toks: the tables' sites, each
// written (dropped), and whether TEMPORARY is given. A name must be quoted
// or a word MariaDB does not reserve: one the parser does not reserve
// either, or one of unreservedWords (a reserved one is the server's syntax
// error, not a table).
func (e *Engine) dropTables(text string, toks []lexer.Token, db string) (sites []ident.Site, temporary, ok bool) {
	word := func(i int) string { return lexer.Word(text, toks, i) }
	i := 1
	if word(i) == "TEMPORARY" {
		temporary = true
		i++
	}
	if word(i) != "TABLE" && word(i) != "TABLES" {
		return nil, false, false
	}
	i++
	if word(i) == "IF" && word(i+1) == "EXISTS" {
		i += 2
	}
	name := func(j int) bool {
		if j >= len(toks) {
			return false
		}
		t := toks[j]
		return t.Kind == lexer.Quoted || t.Kind == lexer.Ident && (forms.Unreserved(word(j)) || !e.reserved[strings.ToLower(text[t.Start:t.End])])
	}
	sites, i, ok = forms.TableNamesAt(text, toks, i, db, true, func(j int) bool {
		return name(j) && (!lexer.PunctAt(text, toks, j+1, '.') || name(j+2))
	})
	if !ok {
		return nil, false, false
	}
	switch {
	case word(i) == "WAIT" && i+1 < len(toks) && toks[i+1].Kind == lexer.Number:
		i += 2
	case word(i) == "NOWAIT":
		i++
	}
	if word(i) == "RESTRICT" || word(i) == "CASCADE" {
		i++
	}
	return sites, temporary, i == len(toks)
}

// privilegeNames records every name of an account or privilege statement
// (but users before @host) as loose: a GRANT may name a table anywhere, and
// one naming a sandboxed table is refused (see looseRefusal).
func (a *Analysis) privilegeNames(text string, toks []lexer.Token) {
	chains := ident.Chains(text, toks, nil)
	declared := ident.Declared(text, toks, chains)
	for ci, ch := range chains {
		if declared[ci] {
			continue
		}
		for _, t := range ident.Tables(text, toks, ch) {
			if t.DB == "" {
				t.DB = a.opts.DB
			}
			a.loose = append(a.loose, looseName{t, 0})
		}
	}
}

// viewDDL reads ALTER | CREATE [OR REPLACE] [ALGORITHM = a] [DEFINER = u]
// [SQL SECURITY s] VIEW [IF NOT EXISTS] v [(columns)] AS query: the view is
// written, the query analysed as a statement of its own (its sites moved to
// their place in the text), and the tables it reads are forked first, as
// for CREATE VIEW (Locked), so the view stays in the sandbox. ok is false
// when the query is not one plain read the engine locates completely.
func (e *Engine) viewDDL(a *Analysis, text string, toks []lexer.Token) bool {
	word := func(i int) string { return lexer.Word(text, toks, i) }
	i := 1
	for i < len(toks) && word(i) != "VIEW" {
		if word(i) == "AS" || lexer.PunctAt(text, toks, i, '(') || lexer.PunctAt(text, toks, i, ';') {
			return false
		}
		i++
	}
	if word(i) != "VIEW" {
		return false
	}
	db := a.opts.DB
	if word(i+1) == "IF" && word(i+2) == "NOT" && word(i+3) == "EXISTS" {
		i += 3
	}
	view, next, ok := forms.TableNameAt(text, toks, i+1, db)
	if !ok {
		return false
	}
	view.Write = true
	if lexer.PunctAt(text, toks, next, '(') {
		if next, ok = forms.ParenNames(text, toks, next); !ok {
			return false
		}
	}
	if word(next) != "AS" || next+1 >= len(toks) {
		return false
	}
	start := int(toks[next+1].Start)
	inner := e.analyze(text[start:], a.opts)
	if len(inner.Statements) != 1 || inner.Statements[0].Class != ClassRead || inner.parseErr != nil || inner.normErr != nil ||
		inner.alteredName || len(inner.unbound) > 0 || len(inner.loose) > 0 || len(inner.cteShadows) > 0 ||
		len(inner.prepared) > 0 || inner.parts != nil || inner.Statements[0].Unprovable != "" || inner.Statements[0].Show != nil {
		return false
	}
	is := inner.Statements[0]
	st := Statement{DB: db, Class: ClassDDL, Kind: Kind(word(0) + " VIEW"), Writes: []Table{view.Table}, Reads: is.Reads, Funcs: is.Funcs,
		Locked: is.Reads, Outside: is.Outside}
	a.sites = append(a.sites, view)
	for _, s := range inner.sites {
		s.Start += start
		s.End += start
		a.sites = append(a.sites, s)
	}
	a.Statements = []Statement{st}
	a.stmtStarts, a.stmtDBs = []int{0}, []string{db}
	a.stmtAliases = inner.stmtAliases
	return true
}

// handler reads HANDLER t OPEN [[AS] name], HANDLER name READ … and
// HANDLER name CLOSE into st (see above); ok is false for anything else.
func (e *Engine) handler(a *Analysis, st *Statement, text string, toks []lexer.Token) bool {
	word := func(i int) string { return lexer.Word(text, toks, i) }
	db := a.opts.DB
	s, next, ok := forms.TableNameAt(text, toks, 1, db)
	if !ok {
		return false
	}
	switch word(next) {
	case "OPEN":
		rest := toks[next+1:]
		switch {
		case len(rest) == 0:
		case len(rest) == 1 && (rest[0].Kind == lexer.Ident || rest[0].Kind == lexer.Quoted) && word(next+1) != "AS",
			len(rest) == 2 && word(next+1) == "AS" && (rest[1].Kind == lexer.Ident || rest[1].Kind == lexer.Quoted):
		default:
			return false
		}
		st.Class, st.Kind = ClassRead, KindHandlerOpen
		st.Reads, st.Locked = []Table{s.Table}, []Table{s.Table}
		if len(rest) == 0 {
			s.AliasAt = int(toks[next].End) // the handler is named after the table
		}
		a.sites = []ident.Site{s}
		return true
	case "READ":
		for i := next + 1; i < len(toks); i++ {
			switch {
			case word(i) == "SELECT":
				return false
			case toks[i].Kind == lexer.Ident || toks[i].Kind == lexer.Quoted:
				if i+1 < len(toks) && lexer.PunctAt(text, toks, i+1, '(') && !e.keywords[strings.ToLower(text[toks[i].Start:toks[i].End])] {
					return false // a call, which may be a stored function's
				}
			}
		}
		st.Class, st.Kind = ClassRead, KindHandlerRead
		return !s.Qualified
	case "CLOSE":
		st.Class, st.Kind = ClassSession, KindHandlerClose
		return next+1 == len(toks) && !s.Qualified
	}
	return false
}
