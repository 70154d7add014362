package rewrite

import (
	"strings"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
	"github.com/sqlfork/sqlfork-proxy/rewrite/splice"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Stored functions. A call names its function as a table is named, by an
// identifier chain (f or db.f) right before "(": a resolver that places
// functions (FunctionResolver) gets each call of a function it places
// rewritten to name the database it chooses, the way table references
// are. Calls are located in the text only when such a resolver asks, by
// their tokens: every chain of one or two names before "(" that no table
// reference covers and that names a function the statement calls. A
// statement whose calls of a placed function the engine cannot all locate
// is refused.

// FunctionResolver is a Resolver that also places stored functions: the
// database a call of f must name, in a statement whose current database is
// db; ok false leaves the call as written (one of the server's own
// functions, say).
type FunctionResolver interface {
	Resolver
	ResolveFunction(f Func, db string) (phys string, ok bool, err error)
}

// callSite is where a call's function name (with its qualifier) is in the
// text, and what it names.
type callSite struct {
	start, end int
	f          Func
	stmt       int
}

// callSites locates the calls of the analysis's functions in its text.
func (a *Analysis) callSites() []callSite {
	toks := lexer.Lex(a.text, lexer.Options{ANSIQuotes: a.opts.ANSIQuotes, NoBackslashEscapes: a.opts.NoBackslashEscapes})
	isName := func(i int) bool {
		return i >= 0 && i < len(toks) && (toks[i].Kind == lexer.Ident || toks[i].Kind == lexer.Quoted)
	}
	adjacentDot := func(i int) bool { // toks[i] is a '.' touching the names on both sides
		return lexer.PunctAt(a.text, toks, i, '.') && i > 0 && i+1 < len(toks) && toks[i-1].End == toks[i].Start && toks[i].End == toks[i+1].Start
	}
	covered := func(pos int) bool {
		for _, s := range a.sites {
			if pos >= s.Start && pos < s.End {
				return true
			}
		}
		return false
	}
	var out []callSite
	for i := range toks {
		if !isName(i) || adjacentDot(i-1) {
			continue // not a chain's first name
		}
		f, next := Func{Name: lexer.IdentText(a.text, toks[i])}, i+1
		if adjacentDot(next) && isName(next+1) {
			f.Schema, f.Name = f.Name, lexer.IdentText(a.text, toks[next+1])
			next += 2
		}
		if !lexer.PunctAt(a.text, toks, next, '(') || adjacentDot(next) || covered(int(toks[i].Start)) {
			continue
		}
		out = append(out, callSite{start: int(toks[i].Start), end: int(toks[next-1].End), f: f, stmt: a.stmtAt(int(toks[i].Start))})
	}
	return out
}

// callReps are the rewrites of the calls of functions r places, when it
// is a FunctionResolver. Any other resolver cannot place a function the
// statement names with its database, which is a stored one: refused.
func (a *Analysis) callReps(r Resolver) ([]splice.Replacement, error) {
	fr, ok := r.(FunctionResolver)
	if !ok {
		for _, st := range a.Statements {
			for _, f := range st.Funcs {
				if f.Schema != "" {
					return nil, Refuse(wire.ErUnknown, "the statement calls the stored function %s, whose statements the proxy "+
						"cannot see, so its effects cannot be confined to the sandbox", f.String())
				}
			}
		}
		return nil, nil
	}
	type placed struct {
		f     Func
		stmt  int
		calls int // how many calls of it the statement makes
		phys  string
	}
	var want []placed
	same := func(x, y Func) bool {
		return strings.EqualFold(x.Schema, y.Schema) && strings.EqualFold(x.Name, y.Name)
	}
	for si, st := range a.Statements {
		if st.Routine != nil && len(st.Routine.Body) > 0 {
			continue // a body's calls are its statements', placed with them (routineReps)
		}
	funcs:
		for _, f := range st.Funcs[:len(st.Funcs)-st.innerFuncs] {
			for i := range want {
				if want[i].stmt == si && same(want[i].f, f) {
					want[i].calls++
					continue funcs
				}
			}
			phys, ok, err := fr.ResolveFunction(f, st.DB)
			if err != nil {
				return nil, err
			}
			if ok {
				if len(phys) > maxIdentifierLength {
					return nil, Refuse(wire.ErWrongTableName, "invalid database name %s", quote.Ident(phys))
				}
				want = append(want, placed{f: f, stmt: si, calls: 1, phys: phys})
			}
		}
	}
	if len(want) == 0 {
		return nil, nil
	}
	sites := a.callSites()
	var reps []splice.Replacement
	for _, w := range want {
		found := 0
		for _, c := range sites {
			if c.stmt == w.stmt && same(c.f, w.f) {
				found++
				reps = append(reps, splice.Replacement{Start: c.start, End: c.end, Text: quote.Ident(w.phys) + "." + quote.Ident(w.f.Name)})
			}
		}
		if found < w.calls {
			return nil, Refuse(wire.ErUnknown, "cannot locate every call of the function %s in the statement text, so it cannot "+
				"be redirected to the sandbox; write the call as name(…) or db.name(…)", quote.Ident(w.f.Name))
		}
	}
	return reps, nil
}
