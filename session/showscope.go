package session

import (
	"context"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

// showOf reads SHOW [GLOBAL | SESSION | LOCAL] {STATUS | VARIABLES} …, the
// text of a (the parser does not read every form: SHOW LOCAL STATUS):
// what is STATUS or VARIABLES ("" for any other text), global says GLOBAL.
func showOf(a *rewrite.Analysis) (what string, global bool) {
	text := a.Text()
	var words []string
	for _, t := range lexer.Lex(text, lexer.Options{}) {
		if t.Kind == lexer.Comment {
			continue
		}
		if t.Kind != lexer.Ident || len(words) == 3 {
			break
		}
		words = append(words, strings.ToUpper(text[t.Start:t.End]))
	}
	if len(words) < 2 || words[0] != "SHOW" {
		return "", false
	}
	switch words[1] {
	case "GLOBAL", "SESSION", "LOCAL":
		if len(words) == 3 {
			what, global = words[2], words[1] == "GLOBAL"
		}
	default:
		what = words[1]
	}
	if what != "STATUS" && what != "VARIABLES" {
		return "", false
	}
	return what, global
}

// answeredVarsShow plans, in a sandbox, the SHOW statements whose answer
// the sandbox's own state changes: SHOW GLOBAL VARIABLES once it set
// globals, SHOW [SESSION] STATUS once it flushed the status. ok is false
// for any other input.
func (s *Session) answeredVarsShow(a *rewrite.Analysis, sql string, prepared bool, p *Plan) (*Plan, bool) {
	if prepared || len(a.Statements) != 1 {
		return nil, false
	}
	switch what, global := showOf(a); {
	case what == "VARIABLES" && global && len(s.sb.Globals().All()) > 0:
		p.answer = func(ctx context.Context) (*Reply, error) { return asServer(s.globalsShow(ctx, sql)) }
	case what == "STATUS" && !global && s.statusBase != nil:
		p.answer = func(ctx context.Context) (*Reply, error) { return asServer(s.statusShow(ctx, sql)) }
	default:
		return nil, false
	}
	return p, true
}
