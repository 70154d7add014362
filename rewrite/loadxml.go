package rewrite

import (
	"github.com/sqlfork/sqlfork-proxy/rewrite/forms"
	"github.com/sqlfork/sqlfork-proxy/rewrite/ident"
	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

// LOAD XML [LOW_PRIORITY | CONCURRENT] INFILE 'file' [REPLACE | IGNORE]
// INTO TABLE t [CHARACTER SET cs] [ROWS IDENTIFIED BY 'tag'] [IGNORE n
// LINES | ROWS] [(column or @variable, …)] [SET column = expression, …],
// which the parser does not know: t is the one table it names and writes
// (LOAD DATA's grammar, sql_yacc.yy's load_data), and the file is on the
// database server, outside any sandbox, as LOAD DATA INFILE's is: the
// statement is read, and refused in a sandbox for it. Not LOCAL (the
// client sends the file, which the proxy relays for LOAD DATA only), and
// not a SET holding a subquery.

// KindLoadXML is LOAD XML's kind.
const KindLoadXML Kind = "LOAD XML"

// loadXML reads LOAD XML … into st (see above); ok is false for anything
// else.
func (e *Engine) loadXML(a *Analysis, st *Statement, text string, toks []lexer.Token) bool {
	word := func(i int) string { return lexer.Word(text, toks, i) }
	i := 2
	if w := word(i); w == "LOW_PRIORITY" || w == "CONCURRENT" {
		i++
	}
	if word(i) != "INFILE" || i+1 >= len(toks) || toks[i+1].Kind != lexer.String {
		return false
	}
	i += 2
	if w := word(i); w == "REPLACE" || w == "IGNORE" {
		i++
	}
	if word(i) != "INTO" || word(i+1) != "TABLE" {
		return false
	}
	s, next, ok := forms.TableNameAt(text, toks, i+2, a.opts.DB)
	if !ok || !loadXMLTail(text, toks, next) {
		return false
	}
	s.Write = true
	st.Class, st.Kind, st.Writes = ClassWrite, KindLoadXML, []Table{s.Table}
	st.Outside = "LOAD XML INFILE reads a file on the database server, outside any sandbox; load it from the client instead"
	st.Funcs, _ = e.textNames(text[toks[next-1].End:], a.opts)
	a.sites = []ident.Site{s}
	return true
}

// loadXMLTail reports whether toks from i hold LOAD XML's clauses after
// the table (see above) and no subquery.
func loadXMLTail(text string, toks []lexer.Token, i int) bool {
	for j := i; j < len(toks); j++ {
		if w := lexer.Word(text, toks, j); w == "SELECT" || w == "WITH" || w == "VALUES" || w == "TABLE" {
			return false
		}
	}
	word := func(j int) string { return lexer.Word(text, toks, j) }
	if (word(i) == "CHARACTER" && word(i+1) == "SET" || word(i) == "CHARSET") && i+2 < len(toks) {
		i += 3
		if word(i-3) == "CHARSET" {
			i--
		}
	}
	if word(i) == "ROWS" && word(i+1) == "IDENTIFIED" && word(i+2) == "BY" && i+3 < len(toks) && toks[i+3].Kind == lexer.String {
		i += 4
	}
	if word(i) == "IGNORE" && i+2 < len(toks) && toks[i+1].Kind == lexer.Number && (word(i+2) == "LINES" || word(i+2) == "ROWS") {
		i += 3
	}
	if lexer.PunctAt(text, toks, i, '(') {
		end := lexer.Closing(text, toks, i)
		if end <= 0 {
			return false
		}
		for j := i + 1; j < end; j++ {
			if t := toks[j]; t.Kind != lexer.Ident && t.Kind != lexer.Quoted && t.Kind != lexer.Variable && !lexer.PunctAt(text, toks, j, ',') {
				return false
			}
		}
		i = end + 1
	}
	return i == len(toks) || word(i) == "SET"
}
