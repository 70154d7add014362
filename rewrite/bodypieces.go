package rewrite

import (
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite/body"
	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

// bodyPieces analyses the pieces of a stored program's body its reader
// finds, each as an analysis of the body (Routine.Body) placed in the
// text.
type bodyPieces struct {
	e  *Engine
	a  *Analysis
	db string // the program's database: current while its body runs
	r  *Routine
	b  *body.Reader
}

// newBodyReader is a reader of a body in toks (of a.text) whose pieces
// are analysed in database db into r.Body.
func (e *Engine) newBodyReader(a *Analysis, toks []lexer.Token, db string, r *Routine) *body.Reader {
	p := &bodyPieces{e: e, a: a, db: db, r: r}
	p.b = &body.Reader{Text: a.text, Toks: toks, Analyzer: p}
	return p.b
}

// Table analyses the table name text[start:end] as the query SELECT *
// FROM <name>: the table is the body's, rewritten in place.
func (p *bodyPieces) Table(start, end int) string {
	if !p.piece("SELECT * FROM ", start, end, func(st Statement) bool { return len(st.Reads) == 1 }) {
		return "the proxy cannot read the table " + p.shown(start, end) + " of an anchored type in the body"
	}
	return ""
}

// Expr analyses the expression text[start:end] as the query SELECT
// <expression>: the tables its subqueries read are the body's.
func (p *bodyPieces) Expr(start, end int) string {
	if strings.TrimSpace(p.a.text[start:end]) == "" {
		return "the proxy cannot read an empty expression in the procedure's body"
	}
	if !p.piece("SELECT ", start, end, func(st Statement) bool { return st.Kind == KindSelect }) {
		return "the proxy cannot parse the expression " + p.shown(start, end) + " of the procedure's body"
	}
	return ""
}

// piece analyses text[start:end] as the query prefix+text[start:end] and,
// when it reads as one statement that fits, takes it as a piece of the
// body: its sites, offsets into the query, are placed so that they land in
// the piece's text. False when it does not read so.
func (p *bodyPieces) piece(prefix string, start, end int, fits func(Statement) bool) bool {
	sub := p.e.analyze(prefix+p.a.text[start:end], withDB(p.a.opts, p.db))
	if sub.parseErr != nil || sub.normErr != nil || len(sub.Statements) != 1 || !fits(sub.Statements[0]) {
		return false
	}
	p.r.Body = append(p.r.Body, sub)
	p.r.bodyAt = append(p.r.bodyAt, start-len(prefix))
	return true
}

// shown is text[start:end] as an error names it: its first line, spaces
// folded.
func (p *bodyPieces) shown(start, end int) string {
	return strings.Join(strings.Fields(firstLine(p.a.text[start:end])), " ")
}

// Statement analyses toks[from:to], a statement of the body, alone.
func (p *bodyPieces) Statement(from, to int) string {
	if from >= to {
		return "the proxy cannot read an empty statement in the procedure's body"
	}
	start, end := int(p.b.Toks[from].Start), int(p.b.Toks[to-1].End)
	sub := p.e.analyze(p.a.text[start:end], withDB(p.a.opts, p.db))
	w := func(j int) string { return lexer.Word(p.a.text, p.b.Toks, j) }
	if sub.parseErr != nil && w(from) == "PREPARE" && w(from+2) == "FROM" && from+3 < to && p.b.Toks[from+3].Kind != lexer.String {
		// PREPARE name FROM a local variable or an expression (MariaDB
		// takes any): a text the server builds at run time.
		p.b.Dynamic = "PREPARE ... FROM " + p.shown(int(p.b.Toks[from+3].Start), end) +
			" prepares a text built at run time (dynamic SQL), which the proxy cannot see"
		return p.b.Dynamic
	}
	if sub.parseErr != nil || sub.normErr != nil || len(sub.Statements) != 1 {
		return "the proxy cannot parse the statement " + p.shown(start, end) + " of the procedure's body"
	}
	if st := sub.Statements[0]; st.Unprovable != "" && (w(from) == "PREPARE" || w(from) == "EXECUTE") && p.b.Dynamic == "" {
		// PREPARE … FROM @variable, EXECUTE [IMMEDIATE]: dynamic SQL.
		p.b.Dynamic = st.Unprovable
	}
	p.r.Body = append(p.r.Body, sub)
	p.r.bodyAt = append(p.r.bodyAt, start)
	return ""
}
