package rewrite

import (
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite/body"
	"github.com/sqlfork/sqlfork-proxy/rewrite/forms"
	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
	"github.com/sqlfork/sqlfork-proxy/rewrite/splice"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Triggers. The parser does not read MariaDB's trigger statements; the
// engine reads them by their words, where the grammar (sql_yacc.yy,
// trigger_tail) fixes every name:
//
//	CREATE [OR REPLACE] [DEFINER = user] TRIGGER [IF NOT EXISTS] [db.]name
//	  {BEFORE | AFTER} {INSERT | UPDATE | DELETE} ON [db.]table FOR EACH ROW
//	  [{FOLLOWS | PRECEDES} other] body
//	DROP TRIGGER [IF EXISTS] [db.]name
//	SHOW CREATE TRIGGER [db.]name
//
// A trigger is in its table's database; a table written without its
// database is in the trigger's (the current database when the trigger's
// name is not qualified either), as the server reads it. The body is read
// like a procedure's (routine.go), with the trigger's database current, as
// the server runs it; NEW.col and OLD.col read as column qualifiers.
//
// A resolver that places triggers (TriggerResolver) gets the statement
// rewritten: the trigger's name in the database it chooses, the table
// where it maps it, the DEFINER clause replaced by CURRENT_USER (the
// trigger's definer is the account that makes it, as without the clause),
// and every table of the body where it maps it. Any other resolver refuses CREATE and DROP TRIGGER and leaves
// SHOW CREATE TRIGGER as written.

// Trigger is what a trigger statement says of its trigger besides its name
// (Statement.Routine: Schema and Name, and for CREATE TRIGGER its body).
type Trigger struct {
	// Table is CREATE TRIGGER's table, with the database it is in.
	Table Table
	// Timing is BEFORE or AFTER, Event INSERT, UPDATE or DELETE (CREATE
	// TRIGGER; upper case).
	Timing, Event string
	// Order is FOLLOWS or PRECEDES, Other the trigger it names ("" for
	// neither).
	Order, Other string
	// OrReplace, IfNotExists and IfExists are the statement's clauses.
	OrReplace, IfNotExists, IfExists bool
	// Followed marks a CREATE TRIGGER that is not its input's one
	// statement, when the engine cannot read it (Statement.Unprovable):
	// its refusal is not the server's to check. (An input holding a
	// CREATE TRIGGER the engine reads and other statements is split,
	// analyzePieces.)
	Followed bool
	// Definer is the DEFINER clause's account as written ("" without one).
	Definer string
	// bodyEnd is the index of the token after the body of a CREATE
	// TRIGGER the engine read (in the tokens it was read from).
	bodyEnd int
	// tableStart and tableEnd are where Table's name is in the text,
	// definerStart and definerEnd the DEFINER clause and the space after
	// it (0, 0 without one).
	tableStart, tableEnd     int
	definerStart, definerEnd int
}

// TriggerResolver is a Resolver that also places triggers: the database
// the trigger a CREATE TRIGGER, DROP TRIGGER or SHOW CREATE TRIGGER
// statement st names is in (an error refuses the statement; ok false leaves
// the name as written). A CREATE TRIGGER's table and body are then
// rewritten through the same resolver, which must map every table they
// name.
type TriggerResolver interface {
	Resolver
	ResolveTrigger(st *Statement) (db string, ok bool, err error)
}

// triggerStatement fills a with CREATE TRIGGER, DROP TRIGGER or SHOW
// CREATE TRIGGER when text (tokens toks) is one; ok is false for any other
// statement. A trigger statement the engine cannot read is one, its
// Unprovable saying why.
func (e *Engine) triggerStatement(a *Analysis, text string, toks []lexer.Token) bool {
	w := func(i int) string { return lexer.Word(text, toks, i) }
	st := Statement{DB: a.opts.DB, Trigger: &Trigger{}}
	var why string
	switch {
	case w(0) == "SHOW" && w(1) == "CREATE" && w(2) == "TRIGGER":
		st.Class, st.Kind = ClassRead, KindShowCreateTrigger
		why = st.triggerName(text, toks, 3, false)
	case w(0) == "DROP" && w(1) == "TRIGGER":
		st.Class, st.Kind = ClassRoutine, KindDropTrigger
		why = st.triggerName(text, toks, 2, true)
	default:
		if k, _ := body.CreateAt(text, toks, 0); k != "TRIGGER" {
			return false
		}
		st.Class, st.Kind = ClassRoutine, KindCreateTrigger
		why = e.createTrigger(a, &st, text, toks)
	}
	if why != "" {
		st.Unprovable, st.hint = why, "run it on a direct connection"
	}
	a.one(st)
	return true
}

// triggerName reads [IF EXISTS] [db.]name at toks[i], the whole rest of
// DROP TRIGGER (ifExists) or SHOW CREATE TRIGGER but a final ';'; a
// non-empty result says what the engine cannot read.
func (st *Statement) triggerName(text string, toks []lexer.Token, i int, ifExists bool) string {
	if ifExists && lexer.Word(text, toks, i) == "IF" && lexer.Word(text, toks, i+1) == "EXISTS" {
		st.Trigger.IfExists = true
		i += 2
	}
	r, next, ok := routineName(text, toks, i)
	if !ok || !body.OnlyEnd(text, toks, next) {
		return "the proxy cannot read the name of the trigger " + string(st.Kind) + " names"
	}
	st.Routine = r
	return ""
}

// createTrigger reads CREATE TRIGGER into st; a non-empty result says
// what the engine cannot read.
func (e *Engine) createTrigger(a *Analysis, st *Statement, text string, toks []lexer.Token) string {
	w := func(i int) string { return lexer.Word(text, toks, i) }
	tr := st.Trigger
	i, why := tr.header(text, toks)
	if why != "" {
		return why
	}
	r, j, ok := routineName(text, toks, i)
	if !ok {
		return "the proxy cannot read the name of this trigger"
	}
	st.Routine = r
	db := r.DB(a.opts.DB)
	tr.Timing, tr.Event = w(j), w(j+1)
	if tr.Timing != "BEFORE" && tr.Timing != "AFTER" || tr.Event != "INSERT" && tr.Event != "UPDATE" && tr.Event != "DELETE" ||
		w(j+2) != "ON" {
		return "the proxy cannot read when this trigger runs"
	}
	s, j, ok := forms.TableNameAt(text, toks, j+3, db)
	if !ok || w(j) != "FOR" || w(j+1) != "EACH" || w(j+2) != "ROW" {
		return "the proxy cannot read the table of this trigger"
	}
	tr.Table, tr.tableStart, tr.tableEnd = s.Table, s.Start, s.End
	j += 3
	if w(j) == "FOLLOWS" || w(j) == "PRECEDES" {
		if j+1 >= len(toks) || toks[j+1].Kind != lexer.Ident && toks[j+1].Kind != lexer.Quoted && toks[j+1].Kind != lexer.String {
			return "the proxy cannot read the trigger this one " + w(j)
		}
		tr.Order, tr.Other = w(j), lexer.IdentText(text, toks[j+1])
		if toks[j+1].Kind == lexer.String {
			tr.Other = lexer.Unquote(text[toks[j+1].Start:toks[j+1].End], !a.opts.NoBackslashEscapes)
		}
		j += 2
	}
	return e.triggerBody(a, st, toks, j, db)
}

// triggerEnd is, for a CREATE TRIGGER at toks[i] (the statement's first
// token) read with db current, the index of the token after its body; ok
// is false when the engine cannot read the trigger, and so where it ends.
// The server reads a body that is one statement to its ';': in
// `… FOR EACH ROW SET @a = 1; SELECT 2` the SELECT is a statement of its
// own.
func (e *Engine) triggerEnd(text string, toks []lexer.Token, i int, opts Options) (end int, ok bool) {
	a := &Analysis{src: text, text: text, opts: opts}
	st := Statement{DB: opts.DB, Trigger: &Trigger{}}
	if why := e.createTrigger(a, &st, text, toks[i:]); why != "" && !st.Trigger.Followed {
		return 0, false
	}
	return i + st.Trigger.bodyEnd, true
}

// header reads CREATE [OR REPLACE] [DEFINER = user] TRIGGER [IF NOT
// EXISTS]: the index of the trigger's name.
func (tr *Trigger) header(text string, toks []lexer.Token) (int, string) {
	w := func(i int) string { return lexer.Word(text, toks, i) }
	i := 1
	if w(i) == "OR" && w(i+1) == "REPLACE" {
		tr.OrReplace = true
		i += 2
	}
	if w(i) == "DEFINER" && lexer.PunctAt(text, toks, i+1, '=') {
		// As body.CreateAt reads it: CURRENT_USER [()], or a name and
		// an optional @host.
		j := i + 2
		switch {
		case w(j) == "CURRENT_USER":
			j++
			if lexer.PunctAt(text, toks, j, '(') && lexer.PunctAt(text, toks, j+1, ')') {
				j += 2
			}
		default:
			j++
			if j < len(toks) && toks[j].Kind == lexer.Variable {
				j++
			}
		}
		if j >= len(toks) {
			return 0, "the proxy cannot read the definer of this trigger"
		}
		tr.Definer = text[toks[i+2].Start:toks[j-1].End]
		tr.definerStart, tr.definerEnd = int(toks[i].Start), int(toks[j].Start)
		i = j
	}
	if w(i) != "TRIGGER" {
		return 0, "the proxy cannot read this CREATE TRIGGER"
	}
	i++
	if w(i) == "IF" && w(i+1) == "NOT" && w(i+2) == "EXISTS" {
		tr.IfNotExists = true
		i += 3
	}
	return i, ""
}

// triggerBody reads the body of CREATE TRIGGER from toks[i], with db
// current, like a procedure's: what its statements read and write are
// st's, the table the trigger is on is written.
func (e *Engine) triggerBody(a *Analysis, st *Statement, toks []lexer.Token, i int, db string) string {
	r := st.Routine
	br := e.newBodyReader(a, toks, db, r)
	end, why := br.Statement(i, 0)
	st.Trigger.bodyEnd = end
	switch {
	case why != "":
		return why + " (in the body of trigger " + quote.Ident(r.Name) + ")"
	case !body.OnlyEnd(a.text, toks, end):
		st.Trigger.Followed = true
		return "the proxy reads CREATE TRIGGER sent alone, not with other statements"
	}
	st.Writes = append(st.Writes, st.Trigger.Table)
	for _, b := range r.Body {
		for _, bs := range b.Statements {
			st.takeBody(bs)
			// A CALL is refused by the rewrite (triggerReps), as a
			// statement that would run a procedure's statements.
			if bs.Unprovable != "" && st.Unprovable == "" && !(bs.Kind == KindCall && bs.Routine != nil) {
				return bs.Unprovable + " (in the body of trigger " + quote.Ident(r.Name) + ")"
			}
		}
	}
	return ""
}

// triggerReps are the rewrites of a trigger statement st through r (see
// above).
func (a *Analysis) triggerReps(st *Statement, r Resolver) ([]splice.Replacement, error) {
	tr, _ := r.(TriggerResolver)
	if st.Kind == KindShowCreateTrigger && (tr == nil || st.Unprovable != "") {
		return nil, nil // names no table: as written
	}
	if tr == nil {
		return nil, Refuse(wire.ErUnknown, "%s acts on a trigger, whose statements the proxy cannot confine here; "+
			"run it on a direct connection", st.Kind)
	}
	if st.Unprovable != "" {
		rf := Refuse(wire.ErUnknown, "%s, so its effects cannot be confined to the sandbox; %s", st.Unprovable, st.hint)
		if !st.Trigger.Followed {
			// The text's one statement: the server's own error when it
			// rejects it too (a syntax error in the body).
			serverCheck(rf)
		}
		return nil, rf
	}
	db, ok, err := tr.ResolveTrigger(st)
	if err != nil || !ok {
		return nil, err
	}
	reps, err := a.routineReps(st, placedRoutine{Resolver: r, db: db})
	if err != nil || st.Kind != KindCreateTrigger {
		return reps, err
	}
	t := st.Trigger
	phys, ok, err := r.Resolve(t.Table, true)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, Refuse(wire.ErOptionPreventsStatement, "the trigger %s is on %s, which the proxy cannot place in the sandbox",
			quote.Ident(st.Routine.Name), t.Table.Quoted())
	}
	reps = append(reps, splice.Replacement{Start: t.tableStart, End: t.tableEnd, Text: phys.Quoted()})
	if t.definerEnd > t.definerStart {
		// The account that makes the trigger is its definer, as without
		// the clause (a replacement is never empty: see Result.Renames).
		reps = append(reps, splice.Replacement{Start: t.definerStart, End: t.definerEnd, Text: "DEFINER = CURRENT_USER "})
	}
	return reps, nil
}

// placedRoutine places the routine of a statement in db: the trigger
// statements' names, through routineReps.
type placedRoutine struct {
	Resolver
	db string
}

// ResolveRoutine implements RoutineResolver: the trigger in db, and a
// procedure its body calls where the resolver places it (or, for a
// resolver that places none, in db).
func (p placedRoutine) ResolveRoutine(st *Statement) (string, error) {
	if rr, ok := p.Resolver.(RoutineResolver); ok && st.Kind == KindCall {
		return rr.ResolveRoutine(st)
	}
	return p.db, nil
}

// ResolveFunction implements FunctionResolver: the functions the body
// calls where the resolver places them.
func (p placedRoutine) ResolveFunction(f Func, db string) (string, bool, error) {
	if fr, ok := p.Resolver.(FunctionResolver); ok {
		return fr.ResolveFunction(f, db)
	}
	return "", false, nil
}
