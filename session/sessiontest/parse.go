package sessiontest

import (
	"fmt"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/quote/model"
)

// token is a word, a back-quoted name ('q'), a string ('s'), a number
// ('n') or punctuation ('p'); text is unquoted.
type token struct {
	kind byte // 'w', 'q', 's', 'n', 'p'
	text string
}

// is reports the word w (any case).
func (t token) is(w string) bool { return t.kind == 'w' && strings.EqualFold(t.text, w) }

// tokenize splits the statements the manager sends into tokens.
func tokenize(sql string) ([]token, error) {
	var out []token
	for i := 0; i < len(sql); {
		// A string as MariaDB reads it: quoted, or in hexadecimal with an
		// introducer, as quote.String writes what is not plain ASCII.
		if text, n, ok := model.ReadString(sql[i:], model.Mode{}); ok {
			out = append(out, token{'s', text})
			i += n
			continue
		}
		c := sql[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '`':
			text, n, ok := model.ReadIdent(sql[i:])
			if !ok {
				return nil, fmt.Errorf("unterminated %c", c)
			}
			out = append(out, token{'q', text})
			i += n
		case c == '\'':
			return nil, fmt.Errorf("unterminated %c", c)
		case c >= '0' && c <= '9':
			j := i
			for j < len(sql) && sql[j] >= '0' && sql[j] <= '9' {
				j++
			}
			out = append(out, token{'n', sql[i:j]})
			i = j
		case wordByte(c):
			j := i
			for j < len(sql) && (wordByte(sql[j]) || sql[j] >= '0' && sql[j] <= '9') {
				j++
			}
			out = append(out, token{'w', sql[i:j]})
			i = j
		case strings.HasPrefix(sql[i:], "<>"):
			out = append(out, token{'p', "<>"})
			i += 2
		case strings.IndexByte("(),.*=<>+;", c) >= 0:
			out = append(out, token{'p', string(c)})
			i++
		default:
			return nil, fmt.Errorf("unexpected %q", c)
		}
	}
	return out, nil
}

func wordByte(c byte) bool {
	return c == '_' || c == '$' || c == '@' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// parseLiteral reads a whole text as one literal.
func parseLiteral(s string) (*string, bool) {
	toks, err := tokenize(s)
	if err != nil {
		return nil, false
	}
	p := &parser{toks: toks}
	v, ok := p.literal()
	return v, ok && p.end()
}

// parseQName reads a whole text as a qualified name.
func parseQName(s string) (db, name string, err error) {
	toks, err := tokenize(s)
	if err != nil {
		return "", "", fmt.Errorf("%w: %w", errUnknown, err)
	}
	p := &parser{toks: toks}
	db, name, ok := p.qname()
	if !ok || !p.end() {
		return "", "", fmt.Errorf("%w: not a qualified name: %s", errUnknown, s)
	}
	return db, name, nil
}

// parser walks tokens.
type parser struct {
	toks []token
	i    int
}

func (p *parser) peek() token {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return token{}
}

// end reports the end of the statement.
func (p *parser) end() bool { return p.i == len(p.toks) }

// word consumes the words ws if they come next, in order.
func (p *parser) word(ws ...string) bool {
	for k, w := range ws {
		if p.i+k >= len(p.toks) || !p.toks[p.i+k].is(w) {
			return false
		}
	}
	p.i += len(ws)
	return true
}

// punct consumes the punctuation s if it comes next.
func (p *parser) punct(s string) bool {
	if t := p.peek(); t.kind == 'p' && t.text == s {
		p.i++
		return true
	}
	return false
}

// name consumes a name, quoted or not.
func (p *parser) name() (string, bool) {
	if t := p.peek(); t.kind == 'w' || t.kind == 'q' {
		p.i++
		return t.text, true
	}
	return "", false
}

// qname consumes db.name (the manager always qualifies).
func (p *parser) qname() (db, name string, ok bool) {
	if db, ok = p.name(); !ok || !p.punct(".") {
		return "", "", false
	}
	name, ok = p.name()
	return db, name, ok
}

// literal consumes a string, a number or NULL (nil).
func (p *parser) literal() (*string, bool) {
	t := p.peek()
	switch {
	case t.kind == 's' || t.kind == 'n':
		p.i++
		v := t.text
		return &v, true
	case t.is("NULL"):
		p.i++
		return nil, true
	}
	return nil, false
}

// namePair consumes db.a word db.b, the statement's whole rest.
func (p *parser) namePair(word string) (adb, a, bdb, b string, ok bool) {
	if adb, a, ok = p.qname(); !ok || !p.word(word) {
		return "", "", "", "", false
	}
	if bdb, b, ok = p.qname(); !ok || !p.end() {
		return "", "", "", "", false
	}
	return adb, a, bdb, b, true
}

// list consumes item [, item …]: what item reads, false where an item is
// missing.
func list[T any](p *parser, item func() (T, bool)) ([]T, bool) {
	var out []T
	for {
		v, ok := item()
		if !ok {
			return nil, false
		}
		out = append(out, v)
		if !p.punct(",") {
			return out, true
		}
	}
}

// parenList consumes ( item, … ).
func parenList[T any](p *parser, item func() (T, bool)) ([]T, bool) {
	if !p.punct("(") {
		return nil, false
	}
	out, ok := list(p, item)
	if !ok || !p.punct(")") {
		return nil, false
	}
	return out, true
}

// nameList consumes ( name, … ).
func (p *parser) nameList() ([]string, bool) { return parenList(p, p.name) }

// literalList consumes ( literal, … ).
func (p *parser) literalList() ([]*string, bool) { return parenList(p, p.literal) }

// definitions consumes the rest of a CREATE TABLE's ( … ) list and returns
// its items; what follows the list (table options) is skipped.
func (p *parser) definitions() [][]token {
	var out [][]token
	var cur []token
	depth := 1
	for ; p.i < len(p.toks); p.i++ {
		t := p.toks[p.i]
		switch {
		case t.kind == 'p' && t.text == "(":
			depth++
		case t.kind == 'p' && t.text == ")":
			depth--
			if depth == 0 {
				p.i = len(p.toks)
				return append(out, cur)
			}
		case t.kind == 'p' && t.text == "," && depth == 1:
			out = append(out, cur)
			cur = nil
			continue
		}
		cur = append(cur, t)
	}
	return append(out, cur)
}

// selectItem consumes one item of a SELECT list: col, COUNT(*),
// a + b, COALESCE(a, literal) or a < literal.
func (p *parser) selectItem() (selectItem, bool) {
	if p.word("COUNT") {
		return selectItem{op: "count"}, p.punct("(") && p.punct("*") && p.punct(")")
	}
	if p.word("COALESCE") {
		if !p.punct("(") {
			return selectItem{}, false
		}
		a, ok := p.name()
		if !ok || !p.punct(",") {
			return selectItem{}, false
		}
		v, ok := p.literal()
		return selectItem{op: "coalesce", a: a, lit: v}, ok && p.punct(")")
	}
	a, ok := p.name()
	if !ok {
		return selectItem{}, false
	}
	switch {
	case p.punct("+"):
		b, ok := p.name()
		return selectItem{op: "sum", a: a, b: b}, ok
	case p.punct("<"):
		v, ok := p.literal()
		return selectItem{op: "less", a: a, lit: v}, ok
	}
	return selectItem{op: "col", a: a}, true
}

// where consumes [WHERE col op literal [AND …]].
func (p *parser) where() ([]cond, bool) {
	if !p.word("WHERE") {
		return nil, true
	}
	var out []cond
	for {
		col, ok := p.name()
		if !ok {
			return nil, false
		}
		var op string
		switch {
		case p.punct("="):
			op = "="
		case p.punct("<>"):
			op = "<>"
		case p.punct("<"):
			op = "<"
		case p.punct(">"):
			op = ">"
		case p.word("LIKE"):
			op = "LIKE"
		default:
			return nil, false
		}
		v, ok := p.literal()
		if !ok {
			return nil, false
		}
		c := cond{col: col, op: op, lit: v, esc: '\\'}
		if op == "LIKE" && p.word("ESCAPE") {
			e, ok := p.literal()
			if !ok {
				return nil, false
			}
			c.esc = escapeOf(e)
		}
		out = append(out, c)
		if !p.word("AND") {
			return out, true
		}
	}
}
