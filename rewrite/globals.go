package rewrite

import (
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
	"github.com/sqlfork/sqlfork-proxy/rewrite/setvar"
	"github.com/sqlfork/sqlfork-proxy/rewrite/splice"
)

// GlobalResolver is a Resolver that holds values of the server's global
// variables of its own (a sandbox's SET GLOBAL): a read of @@GLOBAL.name
// is replaced by the expression Global returns (ok false leaves the read
// to the server).
type GlobalResolver interface {
	Resolver
	Global(name string) (expr string, ok bool)
}

// Text is the input as the server reads it (comments blanked, executable
// comments opened), at the offsets of the client's text.
func (a *Analysis) Text() string { return a.text }

// Assignments reads the input, one SET statement, as its assignments (see
// setvar.Read); ok is false for any other input.
func (a *Analysis) Assignments() ([]setvar.Assignment, bool) {
	if len(a.Statements) != 1 || a.parseErr != nil {
		return nil, false
	}
	if k := a.Statements[0].Kind; k != KindSet && k != KindSetGlobal {
		return nil, false
	}
	return setvar.Read(a.text, lexer.Options{ANSIQuotes: a.opts.ANSIQuotes, NoBackslashEscapes: a.opts.NoBackslashEscapes})
}

// ReadsGlobal reports whether the input reads @@GLOBAL.name (lower case),
// outside a SET GLOBAL statement.
func (a *Analysis) ReadsGlobal(name string) bool {
	for _, s := range a.globalSites() {
		if s.name == name {
			return true
		}
	}
	return false
}

// globalSite is a read of @@GLOBAL.name at text[start:end].
type globalSite struct {
	start, end int
	name       string
}

// globalSites are the input's reads of @@GLOBAL.x: none in a SET GLOBAL
// statement (which the proxy answers itself) or in a statement that makes
// a stored program (whose body reads the variable when it runs).
func (a *Analysis) globalSites() []globalSite {
	if a.parts != nil || !strings.Contains(strings.ToLower(a.text), "@@global.") {
		return nil
	}
	for _, st := range a.Statements {
		switch st.Kind {
		case KindSetGlobal, KindCreateProcedure, KindCreateFunction, KindCreateTrigger, KindCreateView, KindCompound:
			return nil
		}
	}
	text := a.text
	toks := lexer.Lex(text, lexer.Options{ANSIQuotes: a.opts.ANSIQuotes, NoBackslashEscapes: a.opts.NoBackslashEscapes})
	var out []globalSite
	for i, t := range toks {
		v := text[t.Start:t.End]
		if t.Kind != lexer.Variable || len(v) < 9 || !strings.EqualFold(v[:9], "@@global.") {
			continue
		}
		s := globalSite{start: int(t.Start), end: int(t.End), name: strings.ToLower(v[9:])}
		if s.name == "" && i+1 < len(toks) && toks[i+1].Kind == lexer.Quoted && toks[i+1].Start == t.End {
			s.end, s.name = int(toks[i+1].End), strings.ToLower(lexer.IdentText(text, toks[i+1]))
		}
		if s.name != "" && !strings.Contains(s.name, ".") {
			out = append(out, s)
		}
	}
	return out
}

// globalReps are the replacements of the input's reads of the globals r
// holds.
func (a *Analysis) globalReps(r Resolver) []splice.Replacement {
	gr, ok := r.(GlobalResolver)
	if !ok {
		return nil
	}
	var reps []splice.Replacement
	for _, s := range a.globalSites() {
		if expr, ok := gr.Global(s.name); ok {
			reps = append(reps, splice.Replacement{Start: s.start, End: s.end, Text: expr})
		}
	}
	return reps
}
