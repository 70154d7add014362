package rewrite

import (
	"strconv"
	"strings"
	"time"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Policy is a set of guardrails checked on every statement (from the design
// notes: deny statement classes, deny multi-statements, bound statement time
// and returned rows, keep clients out of the proxy's own schemas).
type Policy struct {
	// DenyClasses refuses statements of these classes.
	DenyClasses []Class
	// DenyMultiStatements refuses inputs holding more than one statement.
	DenyMultiStatements bool
	// InternalSchemas are the proxy's own databases; any reference to one
	// is refused.
	InternalSchemas []string
	// InternalPrefix, if set, makes every database whose name starts
	// with it internal (the proxy's sandbox and registry schemas).
	InternalPrefix string
	// StatementTimeout, if positive, is injected into reads and writes.
	StatementTimeout time.Duration
}

// Reasons of the refusals Check makes for guardrails (Refusal.Reason).
const (
	ReasonDenyStatements      = "deny_statements"
	ReasonDenyMultiStatements = "deny_multi_statements"
	ReasonStatementTimeout    = "statement_timeout"
)

// Check returns a *Refusal when a violates the policy.
func (p *Policy) Check(a *Analysis) error {
	if p == nil {
		return nil
	}
	if a.normErr != nil {
		// Names the server will read cannot be listed: nothing can be
		// shown to keep out of the proxy's schemas.
		return a.normErr
	}
	if p.DenyMultiStatements && len(a.Statements) > 1 {
		r := Refuse(wire.ErOptionPreventsStatement, "multi-statement input is denied by the deny-multi-statements guardrail; send the statements one at a time")
		r.Reason = ReasonDenyMultiStatements
		return r
	}
	for _, st := range a.Statements {
		for _, v := range st.SetStatement {
			if v == "max_statement_time" && p.StatementTimeout > 0 {
				r := Refuse(wire.ErOptionPreventsStatement, "the statement-timeout guardrail (%s) sets max_statement_time itself; "+
					"leave it out of SET STATEMENT", p.StatementTimeout)
				r.Reason = ReasonStatementTimeout
				return r
			}
		}
		for _, c := range p.DenyClasses {
			if st.Class == c {
				what := strings.ToUpper(c.String())
				if st.Kind != "" {
					what = string(st.Kind) + " (" + c.String() + ")"
				}
				r := Refuse(wire.ErOptionPreventsStatement, "%s statements are denied by the deny-statements guardrail; ask the operator if you need them", what)
				r.Reason = ReasonDenyStatements
				return r
			}
		}
	}
	if p.InternalPrefix != "" {
		if s, ok := a.namesPrefix(p.InternalPrefix); ok {
			return Refuse(wire.ErDBAccessDenied, "access to the proxy's internal database %s is denied", quote.Ident(s))
		}
	}
	for _, schema := range p.InternalSchemas {
		if schema == "" {
			continue
		}
		if strings.EqualFold(a.opts.DB, schema) || containsFold(a.text, schema) && a.namesSchema(schema) {
			return Refuse(wire.ErDBAccessDenied, "access to the proxy's internal database %s is denied", quote.Ident(schema))
		}
	}
	return nil
}

// namesSchema reports whether schema appears as an identifier in the
// statement or as the database of one of its tables.
func (a *Analysis) namesSchema(schema string) bool {
	for _, st := range a.Statements {
		for _, t := range append(append([]Table{}, st.Reads...), st.Writes...) {
			if strings.EqualFold(t.DB, schema) {
				return true
			}
		}
	}
	for _, t := range lexer.Lex(a.text, lexer.Options{ANSIQuotes: a.opts.ANSIQuotes, NoBackslashEscapes: a.opts.NoBackslashEscapes}) {
		if (t.Kind == lexer.Ident || t.Kind == lexer.Quoted) && strings.EqualFold(lexer.IdentText(a.text, t), schema) {
			return true
		}
	}
	for _, p := range a.prepared {
		if p.inner.namesSchema(schema) {
			return true
		}
	}
	return false
}

// namesPrefix reports a database name starting with prefix that the input
// uses: the current database, a table's database, or any identifier
// (fail closed: a column spelled like one is refused too).
func (a *Analysis) namesPrefix(prefix string) (string, bool) {
	has := func(s string) bool { return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) }
	if has(a.opts.DB) {
		return a.opts.DB, true
	}
	if !containsFold(a.text, prefix) {
		return "", false
	}
	for _, st := range a.Statements {
		for _, t := range append(append([]Table{}, st.Reads...), st.Writes...) {
			if has(t.DB) {
				return t.DB, true
			}
		}
	}
	for _, t := range lexer.Lex(a.text, lexer.Options{ANSIQuotes: a.opts.ANSIQuotes, NoBackslashEscapes: a.opts.NoBackslashEscapes}) {
		if s := lexer.IdentText(a.text, t); (t.Kind == lexer.Ident || t.Kind == lexer.Quoted) && has(s) {
			return s, true
		}
	}
	// The statement of PREPARE … FROM '…' or EXECUTE IMMEDIATE '…'.
	for _, p := range a.prepared {
		if s, ok := p.inner.namesPrefix(prefix); ok {
			return s, true
		}
	}
	return "", false
}

// containsFold reports whether s holds sub, ignoring case.
func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

// WithTimeout returns sql with the policy's statement timeout injected, for
// a single read or write statement: MariaDB gets a SET STATEMENT
// max_statement_time=… FOR prefix, MySQL a MAX_EXECUTION_TIME hint in a
// SELECT. Other inputs are returned unchanged.
func (p *Policy) WithTimeout(sql string, a *Analysis, f Flavor) string {
	if p == nil || p.StatementTimeout <= 0 || len(a.Statements) != 1 {
		return sql
	}
	c := a.Statements[0].Class
	if c != ClassRead && c != ClassWrite {
		return sql
	}
	switch f {
	case MariaDB:
		secs := strconv.FormatFloat(p.StatementTimeout.Seconds(), 'f', -1, 64)
		if a.Statements[0].SetStatement != nil {
			// The client's own SET STATEMENT (which may not set
			// max_statement_time then, Check): one more setting in it.
			toks := lexer.Lex(sql, lexer.Options{ANSIQuotes: a.opts.ANSIQuotes, NoBackslashEscapes: a.opts.NoBackslashEscapes})
			seen := 0
			for _, t := range toks {
				if t.Kind == lexer.Comment {
					continue
				}
				if seen++; seen == 2 && t.Kind == lexer.Ident && strings.EqualFold(sql[t.Start:t.End], "STATEMENT") {
					return sql[:t.End] + " max_statement_time=" + secs + "," + sql[t.End:]
				}
				if seen == 2 {
					break
				}
			}
			return sql
		}
		return "SET STATEMENT max_statement_time=" + secs + " FOR " + sql
	case MySQL:
		if c != ClassRead {
			return sql
		}
		toks := lexer.Lex(sql, lexer.Options{ANSIQuotes: a.opts.ANSIQuotes, NoBackslashEscapes: a.opts.NoBackslashEscapes})
		for _, t := range toks {
			if t.Kind == lexer.Comment {
				continue
			}
			if t.Kind == lexer.Ident && strings.EqualFold(sql[t.Start:t.End], "SELECT") {
				ms := p.StatementTimeout.Milliseconds()
				return sql[:t.End] + " /*+ MAX_EXECUTION_TIME(" + strconv.FormatInt(ms, 10) + ") */" + sql[t.End:]
			}
			break
		}
	}
	return sql
}

// SplitStatements cuts a multi-statement input at its top-level semicolons
// (not inside quotes or comments) and returns the statements as written,
// without the semicolons, surrounding blanks and empty statements. It does
// not know compound statements (BEGIN … END bodies), so callers use it only
// for inputs they otherwise could not handle.
func SplitStatements(sql string, opts Options) []string {
	text, err := Normalize(sql, opts)
	if err != nil {
		return nil
	}
	var out []string
	start := 0
	add := func(end int) {
		if s := strings.TrimSpace(sql[start:end]); s != "" {
			out = append(out, s)
		}
	}
	for _, t := range lexer.Lex(text, lexer.Options{ANSIQuotes: opts.ANSIQuotes, NoBackslashEscapes: opts.NoBackslashEscapes}) {
		if t.Kind == lexer.Punct && text[t.Start] == ';' {
			add(int(t.Start))
			start = int(t.End)
		}
	}
	add(len(sql))
	return out
}

// IsSandboxStatement reports whether sql starts with the SANDBOX keyword.
func IsSandboxStatement(sql string) bool { return isSandboxStatement(sql) }

// Identifiers lists the identifiers of sql as written (back-quoted ones
// unquoted), in order.
func Identifiers(sql string, opts Options) []string {
	var out []string
	sql, err := Normalize(sql, opts)
	if err != nil {
		return nil
	}
	for _, t := range lexer.Lex(sql, lexer.Options{ANSIQuotes: opts.ANSIQuotes, NoBackslashEscapes: opts.NoBackslashEscapes}) {
		if t.Kind == lexer.Ident || t.Kind == lexer.Quoted && (sql[t.Start] == '`' || opts.ANSIQuotes && sql[t.Start] == '"') {
			out = append(out, lexer.IdentText(sql, t))
		}
	}
	return out
}
