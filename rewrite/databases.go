package rewrite

import (
	"encoding/hex"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
	"github.com/sqlfork/sqlfork-proxy/rewrite/splice"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Databases of a sandbox's own. A resolver that places databases
// (DatabaseResolver) gets the database name of CREATE | DROP | ALTER
// DATABASE and of USE rewritten to the database it chooses, and, while the
// session's current database is one it placed (the server's current
// database is then the placed one), each call of DATABASE() or SCHEMA()
// sent as the logical name, so the client reads the name it chose.

// DatabaseResolver is a Resolver that also places databases.
type DatabaseResolver interface {
	Resolver
	// ResolveDatabase is where logical database db, named by a statement
	// of kind k, is: phys, when the resolver places it (ok), else as
	// written.
	ResolveDatabase(k Kind, db string) (phys string, ok bool, err error)
	// CurrentDatabase is the logical name of the session's current
	// database when the server's is one the resolver placed (ok).
	CurrentDatabase() (db string, ok bool)
}

// OwnNames is a DatabaseResolver that tells which names it places only
// because their database is its own: a reference to one the engine cannot
// place in the text is left as written, which reaches no table (production
// has no database of that name).
type OwnNames interface {
	OwnOnly(t Table) bool
}

// DatabaseStatement reports whether st names a database as its object:
// CREATE | DROP | ALTER DATABASE, USE.
func DatabaseStatement(st Statement) bool {
	switch st.Kind {
	case KindCreateDatabase, KindCreateOrReplaceDatabase, KindDropDatabase, KindAlterDatabase, KindUse, KindShowCreateDatabase:
		return true
	}
	return false
}

// databaseReps are the rewrites of the database names a DatabaseResolver
// places: the name a database statement names, and DATABASE() calls. A
// statement that changes a database must be the input's only one, with its
// name where the engine finds it: any other is refused, as it would reach
// the server's database of that name.
func (a *Analysis) databaseReps(r Resolver) ([]splice.Replacement, error) {
	dr, ok := r.(DatabaseResolver)
	if !ok {
		return nil, nil
	}
	var reps []splice.Replacement
	for _, st := range a.Statements {
		if !DatabaseStatement(st) {
			continue
		}
		rep, err := a.databaseRep(dr, st)
		if err != nil {
			return nil, err
		}
		if rep != nil {
			reps = append(reps, *rep)
		}
	}
	if db, ok := dr.CurrentDatabase(); ok && !a.defines() {
		reps = append(reps, a.currentDatabaseReps(db)...)
	}
	return reps, nil
}

// databaseRep is the rewrite of database statement st's name (nil: left
// as written).
func (a *Analysis) databaseRep(dr DatabaseResolver, st Statement) (*splice.Replacement, error) {
	changes := ChangesDatabase(st.Kind)
	alone := func() error {
		return Refuse(wire.ErOptionPreventsStatement, "%s runs in a sandbox only alone and with its database named plainly: "+
			"send it as its own statement", st.Kind)
	}
	start, end, name, found := a.databaseSite()
	if len(a.Statements) != 1 || !found && st.Kind != KindAlterDatabase {
		if changes {
			return nil, alone()
		}
		if _, placed, err := dr.ResolveDatabase(st.Kind, st.Database); err != nil || placed {
			return nil, errOr(err, alone())
		}
		return nil, nil
	}
	if !found {
		// ALTER DATABASE of the current database: its name is put in.
		switch {
		case end == 0:
			return nil, alone()
		case st.DB == "":
			return nil, nil // the server's 1046
		}
		name = st.DB
	}
	phys, placed, err := dr.ResolveDatabase(st.Kind, name)
	if err != nil || !placed {
		return nil, err
	}
	text := quote.Ident(phys)
	if !found {
		text = " " + text + " "
	}
	return &splice.Replacement{Start: start, End: end, Text: text}, nil
}

// errOr is err, or else def.
func errOr(err error, def error) error {
	if err != nil {
		return err
	}
	return def
}

// databaseSite is where the database name of the input's one database
// statement is: USE name, CREATE | DROP | ALTER {DATABASE | SCHEMA} [IF
// [NOT] EXISTS] name. found is false for ALTER DATABASE without a name
// (the current database's).
func (a *Analysis) databaseSite() (start, end int, name string, found bool) {
	toks := lexer.Lex(a.text, lexer.Options{ANSIQuotes: a.opts.ANSIQuotes, NoBackslashEscapes: a.opts.NoBackslashEscapes})
	i := 0
	for i < len(toks) && toks[i].Kind == lexer.Comment {
		i++
	}
	word := func() string { return lexer.Word(a.text, toks, i) }
	switch word() {
	case "USE":
		i++
	case "SHOW":
		i++
		if word() != "CREATE" {
			return 0, 0, "", false
		}
		fallthrough
	case "CREATE", "DROP", "ALTER":
		i++
		if word() == "OR" && lexer.Word(a.text, toks, i+1) == "REPLACE" {
			i += 2
		}
		if w := word(); w != "DATABASE" && w != "SCHEMA" {
			return 0, 0, "", false
		}
		i++
		if word() == "IF" {
			i++
			if word() == "NOT" {
				i++
			}
			if word() != "EXISTS" {
				return 0, 0, "", false
			}
			i++
		}
	default:
		return 0, 0, "", false
	}
	if w := word(); w == "CHARACTER" || w == "CHARSET" || w == "DEFAULT" || w == "COLLATE" || w == "COMMENT" {
		// ALTER DATABASE options, of the current database: where its name
		// goes.
		at := int(toks[i-1].End)
		return at, at, "", false
	}
	if i >= len(toks) || toks[i].Kind != lexer.Ident && toks[i].Kind != lexer.Quoted {
		return 0, 0, "", false
	}
	return int(toks[i].Start), int(toks[i].End), lexer.IdentText(a.text, toks[i]), true
}

// currentDatabaseReps send each call of DATABASE() or SCHEMA() as db, the
// logical name of the current database, in the server's type for it
// (utf8mb3).
func (a *Analysis) currentDatabaseReps(db string) []splice.Replacement {
	var reps []splice.Replacement
	text := "CONVERT(X'" + hex.EncodeToString([]byte(db)) + "' USING utf8mb3)"
	toks := lexer.Lex(a.text, lexer.Options{ANSIQuotes: a.opts.ANSIQuotes, NoBackslashEscapes: a.opts.NoBackslashEscapes})
	for _, c := range a.callSites() {
		if c.f.Schema != "" || !strings.EqualFold(c.f.Name, "DATABASE") && !strings.EqualFold(c.f.Name, "SCHEMA") {
			continue
		}
		for i, t := range toks {
			if int(t.Start) != c.start {
				continue
			}
			if lexer.PunctAt(a.text, toks, i+1, '(') && lexer.PunctAt(a.text, toks, i+2, ')') {
				reps = append(reps, splice.Replacement{Start: c.start, End: int(toks[i+2].End), Text: text})
			}
		}
	}
	return reps
}

// changesDatabase reports whether a statement of a is CREATE [OR REPLACE],
// DROP or ALTER DATABASE.
func changesDatabase(a *Analysis) bool {
	for _, st := range a.Statements {
		if ChangesDatabase(st.Kind) {
			return true
		}
	}
	return false
}

// ChangesDatabase reports whether statements of kind k change a database:
// CREATE [OR REPLACE], DROP or ALTER DATABASE.
func ChangesDatabase(k Kind) bool {
	switch k {
	case KindCreateDatabase, KindCreateOrReplaceDatabase, KindDropDatabase, KindAlterDatabase:
		return true
	}
	return false
}

// ChangesDatabase reports whether a statement of a is CREATE, DROP or ALTER
// DATABASE.
func (a *Analysis) ChangesDatabase() bool { return changesDatabase(a) }

// defines reports whether a statement of a defines a view, a stored
// routine or a trigger: a DATABASE() in its definition is read when it
// runs, in the database it runs in, and is left as written.
func (a *Analysis) defines() bool {
	for _, st := range a.Statements {
		switch st.Kind {
		case KindCreateView, KindAlterView, KindCreateProcedure, KindCreateFunction, KindCreateTrigger:
			return true
		}
	}
	return false
}
