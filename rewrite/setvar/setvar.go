// Package setvar reads the assignments of a SET statement as the server
// reads them: which variable each sets, in which scope, and the text of
// the value it gives.
package setvar

import (
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

// Scope is the scope an assignment sets a variable in.
type Scope uint8

// Scopes.
const (
	// Session: SET x, SET SESSION | LOCAL x, @@x, @@session.x, @@local.x.
	Session Scope = iota
	// Global: SET GLOBAL x, @@global.x.
	Global
	// User: @x, a user variable.
	User
)

// Assignment is one variable a SET statement assigns.
type Assignment struct {
	Scope Scope
	// Name is the variable's name as written (without @, @@ or a scope).
	Name string
	// Target is the text naming the variable, scope included (GLOBAL x,
	// @@global.x); Value the value's text.
	Target, Value string
	// Default: the value is DEFAULT.
	Default bool
}

// notVariables are the words after SET (and a scope) that start another
// statement than an assignment of variables.
var notVariables = map[string]bool{
	"NAMES": true, "CHARACTER": true, "CHARSET": true, "PASSWORD": true, "ROLE": true, "DEFAULT": true,
	"TRANSACTION": true, "STATEMENT": true,
}

// scopeWords are the scope keywords that carry to the assignments after
// them.
var scopeWords = map[string]Scope{"GLOBAL": Global, "SESSION": Session, "LOCAL": Session}

// Read reads the SET statement text (normalized: comments blanked, read
// with o). ok is false for a text that is not a plain SET of variables
// the reader knows how to read: SET NAMES, CHARACTER SET, PASSWORD, ROLE,
// DEFAULT ROLE, TRANSACTION, STATEMENT … FOR, a structured variable
// (keycache.key_buffer_size), a scope the server does not know.
func Read(text string, o lexer.Options) ([]Assignment, bool) {
	var toks []lexer.Token
	for _, t := range lexer.Lex(text, o) {
		if t.Kind == lexer.Comment {
			continue
		}
		if t.Kind == lexer.Punct && text[t.Start] == ';' {
			break
		}
		toks = append(toks, t)
	}
	if len(toks) < 2 || !strings.EqualFold(tokText(text, toks[0]), "SET") {
		return nil, false
	}
	var out []Assignment
	scope := Session
	for _, part := range splitTop(text, toks[1:]) {
		a, next, ok := readOne(text, part, scope)
		if !ok {
			return nil, false
		}
		scope = next
		out = append(out, a)
	}
	return out, len(out) > 0
}

// readOne reads one assignment (toks, up to its comma) in the scope the
// ones before it carry; next is the scope it carries to the next.
func readOne(text string, toks []lexer.Token, scope Scope) (a Assignment, next Scope, ok bool) {
	if len(toks) == 0 {
		return a, scope, false
	}
	first := 0
	if toks[0].Kind == lexer.Ident {
		if sc, isScope := scopeWords[strings.ToUpper(tokText(text, toks[0]))]; isScope && len(toks) > 1 {
			scope, first = sc, 1
		}
	}
	a.Scope = scope
	i, ok := a.readTarget(text, toks, first)
	if !ok {
		return a, scope, false
	}
	a.Target = text[toks[0].Start:toks[i-1].End]
	// = or :=
	switch {
	case i < len(toks) && lexer.PunctAt(text, toks, i, '='):
		i++
	case i+1 < len(toks) && lexer.PunctAt(text, toks, i, ':') && lexer.PunctAt(text, toks, i+1, '=') && toks[i].End == toks[i+1].Start:
		i += 2
	default:
		return a, scope, false
	}
	if i >= len(toks) {
		return a, scope, false
	}
	a.Value = text[toks[i].Start:toks[len(toks)-1].End]
	a.Default = i == len(toks)-1 && toks[i].Kind == lexer.Ident && strings.EqualFold(a.Value, "DEFAULT")
	return a, scope, true
}

// readTarget reads the variable toks[i:] name into a (its name and, for
// @@scope.x and @x, its scope); it returns the index after it.
func (a *Assignment) readTarget(text string, toks []lexer.Token, i int) (int, bool) {
	t := toks[i]
	switch t.Kind {
	case lexer.Ident, lexer.Quoted:
		name := lexer.IdentText(text, t)
		if t.Kind == lexer.Ident && notVariables[strings.ToUpper(name)] {
			return 0, false
		}
		a.Name = name
		return i + 1, !strings.Contains(name, ".") && !dotAfter(text, toks, i+1)
	case lexer.Variable:
		v := tokText(text, t)
		if !strings.HasPrefix(v, "@@") {
			a.Scope, a.Name = User, v[1:]
			return i + 1, v != "@" && v != "?"
		}
		a.Scope = Session
		name := v[2:]
		if dot := strings.IndexByte(name, '.'); dot >= 0 {
			switch strings.ToLower(name[:dot]) {
			case "global":
				a.Scope = Global
			case "session", "local":
			default:
				return 0, false // a structured variable
			}
			name = name[dot+1:]
		}
		if name == "" && i+1 < len(toks) && toks[i+1].Kind == lexer.Quoted && toks[i+1].Start == t.End {
			name, i = lexer.IdentText(text, toks[i+1]), i+1 // @@global.`x`
		}
		a.Name = name
		return i + 1, name != "" && !strings.Contains(name, ".") && !dotAfter(text, toks, i+1)
	}
	return 0, false
}

// dotAfter reports a '.' at toks[i]: a structured variable's name goes on.
func dotAfter(text string, toks []lexer.Token, i int) bool {
	return i < len(toks) && lexer.PunctAt(text, toks, i, '.')
}

// splitTop cuts toks at the commas outside parentheses.
func splitTop(text string, toks []lexer.Token) [][]lexer.Token {
	var out [][]lexer.Token
	depth, start := 0, 0
	for i, t := range toks {
		if t.Kind != lexer.Punct {
			continue
		}
		switch text[t.Start] {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, toks[start:i])
				start = i + 1
			}
		}
	}
	return append(out, toks[start:])
}

// tokText is the text of t.
func tokText(text string, t lexer.Token) string { return text[t.Start:t.End] }

// Text is the SET statement of the assignments as, in order; "" for none.
func Text(as []Assignment) string {
	if len(as) == 0 {
		return ""
	}
	parts := make([]string, len(as))
	for i, a := range as {
		parts[i] = a.Target + " = " + a.Value
	}
	return "SET " + strings.Join(parts, ", ")
}
