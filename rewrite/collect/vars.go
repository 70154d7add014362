package collect

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

// Var is a variable a statement reads or sets.
type Var struct {
	// Name is the variable's name in lower case, without @, @@ or a
	// scope.
	Name string
	// System: a server variable (@@x, SET x = …); else a user variable
	// (@x).
	System bool
	// Set: the statement assigns it (SET, :=, INTO @x); else it reads it.
	Set bool
	// Global: a server variable of GLOBAL scope.
	Global bool
}

// variable records a variable an expression reads, or assigns (@x := …).
func (c *Collector) variable(x *ast.VariableExpr) {
	c.Vars = append(c.Vars, Var{Name: strings.ToLower(x.Name), System: x.IsSystem, Set: x.Value != nil, Global: x.IsGlobal})
}

// setVars records the variables a SET statement assigns; those of SET
// TRANSACTION (without SESSION or GLOBAL), which apply to the next
// transaction only, are its TxChars instead (nextTransaction).
func (c *Collector) setVars(x *ast.SetStmt) {
	if OneShot(x) {
		return
	}
	for _, v := range x.Variables {
		c.Vars = append(c.Vars, Var{Name: strings.ToLower(v.Name), System: v.IsSystem, Set: true, Global: v.IsGlobal})
	}
}

// OneShot reports SET TRANSACTION …, which sets the characteristics of the
// next transaction only (the parser gives SET TRANSACTION READ ONLY the
// same variable as SET SESSION TRANSACTION READ ONLY: the text tells).
func OneShot(x *ast.SetStmt) bool {
	for _, v := range x.Variables {
		if v.Name == "tx_isolation_one_shot" {
			return true
		}
	}
	w := words(x.Text(), 2)
	return len(w) == 2 && w[0] == "SET" && w[1] == "TRANSACTION"
}

// words are the first n bare words of a text, in upper case.
func words(text string, n int) []string {
	var out []string
	for _, t := range lexer.Lex(text, lexer.Options{}) {
		if t.Kind != lexer.Ident || len(out) == n {
			break
		}
		out = append(out, strings.ToUpper(text[t.Start:t.End]))
	}
	return out
}

// TextVars are the variables a text the parser cannot read names: every
// @x and @@x, each taken as both read and set.
func TextVars(text string, toks []lexer.Token) []Var {
	var out []Var
	for _, t := range toks {
		v := text[t.Start:t.End]
		if t.Kind != lexer.Variable || !strings.HasPrefix(v, "@") {
			continue
		}
		out = append(out, VarOfToken(v))
	}
	return out
}

// VarOfToken reads @x, @'x', @@x or @@session.x as a variable.
func VarOfToken(v string) Var {
	if strings.HasPrefix(v, "@@") {
		name, global := strings.ToLower(v[2:]), false
		for _, scope := range []string{"session.", "local.", "global."} {
			if strings.HasPrefix(name, scope) {
				name, global = name[len(scope):], scope == "global."
			}
		}
		return Var{Name: name, System: true, Set: true, Global: global}
	}
	return Var{Name: strings.ToLower(strings.Trim(v[1:], "`'\"")), Set: true}
}
