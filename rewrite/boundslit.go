package rewrite

import (
	"sort"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

// literalText is the text a statement's literals are read from: the text
// the parser read, its tokens, where it differs from the client's inside
// literals, and the statement's span [lo, hi) in it.
type literalText struct {
	text    string
	toks    []lexer.Token
	altered *lexer.Normalized
	lo, hi  int
}

// literals are a statement's allowed literals (see Bounds).
//
// The parser gives a literal's value, not where it is written. A value that
// an allowed literal would spell is taken only when no literal of the
// statement's text that is not allowed could have given it: then the
// value came from a literal written exactly as the allowed one. A string
// that is not allowed (escapes, doubled or double quotes, an introducer,
// a neighbour, COLLATE) can give a value of printable ASCII without ', "
// or \ only as its characters without backslashes and quotes (every other
// escape gives a character such a value lacks); an integer only as its
// digits without leading zeros.
type literals struct {
	literalText
	scanned bool
	// ints and strs are what the statement's literals that are not
	// allowed could be read as: digits, and strings' characters.
	ints, strs map[string]bool
	// params are the statement's placeholders' places (Bounds.Params).
	params map[ast.ParamMarkerExpr]int
}

// literal is the text of e when it is an allowed literal ("NULL" for
// NULL); false otherwise.
func (l *literals) literal(e ast.ExprNode) (string, bool) {
	neg := false
	if u, ok := e.(*ast.UnaryOperationExpr); ok && u.Op == opcode.Minus {
		neg, e = true, u.V
	}
	if m, ok := e.(ast.ParamMarkerExpr); ok {
		if i, ok := l.params[m]; ok && !neg {
			return paramText(i), true
		}
		return "", false
	}
	v, ok := e.(ast.ValueExpr)
	if !ok {
		return "", false
	}
	flag := v.GetType().GetFlag()
	switch x := v.GetValue().(type) {
	case nil:
		return "NULL", !neg
	case int64:
		if flag&mysql.IsBooleanFlag != 0 || x < 0 {
			return "", false // TRUE, FALSE
		}
		return l.integer(strconv.FormatInt(x, 10), neg)
	case uint64:
		return l.integer(strconv.FormatUint(x, 10), neg)
	case string:
		if neg || flag&mysql.UnderScoreCharsetFlag != 0 || !plainString(x) {
			return "", false
		}
		if l.scan(); l.strs[x] {
			return "", false
		}
		return "'" + x + "'", true
	}
	return "", false
}

// integer is the text of the integer literal of the given digits (negated
// when neg).
func (l *literals) integer(digits string, neg bool) (string, bool) {
	if l.scan(); l.ints[digits] {
		return "", false
	}
	if neg && digits != "0" {
		return "-" + digits, true
	}
	return digits, true
}

// plainString reports whether s is printable ASCII without ', " or \.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '\'' || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// scan reads, once, what the statement's literals that are not allowed
// could be read as.
func (l *literals) scan() {
	if l.scanned {
		return
	}
	l.scanned = true
	toks := l.toks
	first := sort.Search(len(toks), func(i int) bool { return int(toks[i].Start) >= l.lo })
	for i := first; i < len(toks) && int(toks[i].End) <= l.hi; i++ {
		switch t := toks[i]; t.Kind {
		case lexer.Number:
			if s := l.text[t.Start:t.End]; len(s) > 1 && s[0] == '0' && strings.Trim(s, "0123456789") == "" {
				setKey(&l.ints, strings.TrimLeft(s[:len(s)-1], "0")+s[len(s)-1:])
			}
		case lexer.String:
			j := i + 1
			for j < len(toks) && toks[j].Kind == lexer.String {
				j++
			}
			if j > i+1 || !l.allowedString(i) {
				setKey(&l.strs, l.stringChars(toks[i:j]))
			}
			i = j - 1
		}
	}
}

// setKey adds k to the set *m.
func setKey(m *map[string]bool, k string) {
	if *m == nil {
		*m = map[string]bool{}
	}
	(*m)[k] = true
}

// allowedString reports whether the string token i, alone (no string
// next to it), is an allowed literal: quoted with ' around printable ASCII
// without ', " or \, not introduced (_utf8mb4 'x', N'x') nor followed by
// COLLATE, and read by the parser as the client wrote it.
func (l *literals) allowedString(i int) bool {
	t := l.toks[i]
	s := l.text[t.Start:t.End]
	if len(s) < 2 || s[0] != '\'' || s[len(s)-1] != '\'' || !plainString(s[1:len(s)-1]) {
		return false
	}
	if i > 0 && l.toks[i-1].Kind == lexer.Ident {
		if w := l.text[l.toks[i-1].Start:l.toks[i-1].End]; w[0] == '_' || w == "n" || w == "N" {
			return false
		}
	}
	if n := i + 1; n < len(l.toks) && l.toks[n].Kind == lexer.Ident && strings.EqualFold(l.text[l.toks[n].Start:l.toks[n].End], "COLLATE") {
		return false
	}
	return l.altered == nil || !l.altered.AlteredIn(int(t.Start), int(t.End))
}

// stringChars are the characters of the string tokens toks, read as one
// literal, without their prefixes (_charset, N, X), backslashes and quotes.
func (l *literals) stringChars(toks []lexer.Token) string {
	var b strings.Builder
	for _, t := range toks {
		s := l.text[t.Start:t.End]
		if q := strings.IndexAny(s, `'"`); q > 0 {
			s = s[q:]
		}
		for k := 0; k < len(s); k++ {
			if c := s[k]; c != '\\' && c != '\'' && c != '"' {
				b.WriteByte(c)
			}
		}
	}
	return b.String()
}
