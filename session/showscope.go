package session

import (
	"context"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

// showScope reads SHOW [GLOBAL | SESSION | LOCAL] {STATUS | VARIABLES}
// … (the text of a, one SHOW STATUS or SHOW VARIABLES): global says GLOBAL.
func showScope(a *rewrite.Analysis) (global bool) {
	text := a.Text()
	var words []string
	for _, t := range lexer.Lex(text, lexer.Options{}) {
		if t.Kind == lexer.Comment {
			continue
		}
		if t.Kind != lexer.Ident || len(words) == 2 {
			break
		}
		words = append(words, strings.ToUpper(text[t.Start:t.End]))
	}
	return len(words) == 2 && words[0] == "SHOW" && words[1] == "GLOBAL"
}

// answeredVarsShow plans, in a sandbox, the SHOW statements whose answer
// the sandbox's own state changes: SHOW GLOBAL VARIABLES once it set
// globals, SHOW [SESSION] STATUS once it flushed the status. ok is false
// for any other input.
func (s *Session) answeredVarsShow(a *rewrite.Analysis, sql string, prepared bool, p *Plan) (*Plan, bool) {
	if prepared || len(a.Statements) != 1 {
		return nil, false
	}
	switch a.Statements[0].Kind {
	case rewrite.KindShowVariables:
		if !showScope(a) || len(s.sb.Globals().All()) == 0 {
			return nil, false
		}
		p.answer = func(ctx context.Context) (*Reply, error) { return s.globalsShow(ctx, sql) }
	case rewrite.KindShowStatus:
		if showScope(a) || s.statusBase == nil {
			return nil, false
		}
		p.answer = func(ctx context.Context) (*Reply, error) { return s.statusShow(ctx, sql) }
	default:
		return nil, false
	}
	return p, true
}
