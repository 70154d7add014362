package rewrite

import (
	"github.com/sqlfork/sqlfork-proxy/rewrite/dynamic"
	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

// Dynamic is a PREPARE or EXECUTE IMMEDIATE input whose text is computed
// by an expression the proxy may compute first (dynamic.Dynamic).
type Dynamic = dynamic.Dynamic

// DynamicSQL reads sql, a single statement, as PREPARE name FROM
// <expression> or EXECUTE IMMEDIATE <expression> [USING …] whose
// expression (not a string literal) the proxy may compute first; ok is
// false for any other input.
func (e *Engine) DynamicSQL(sql string, opts Options) (*Dynamic, bool) {
	return dynamic.Read(sql, lexer.Options{ANSIQuotes: opts.ANSIQuotes, NoBackslashEscapes: opts.NoBackslashEscapes})
}

// ImmediateText reads sql, a single statement, as EXECUTE IMMEDIATE
// 'text' with no USING values, and returns the text it runs, when the
// server runs that text as it would run the text sent itself: the text is
// ASCII (read the same whatever the connection's character set), holds
// no placeholder (the server counts its ? against the USING values,
// 1210) and starts with no comment (an executable one may hold its first
// word) — but for the statements the server will not prepare (1295), which
// the caller tells with UnpreparableText. ok is false for any other input.
func (e *Engine) ImmediateText(sql string, opts Options) (string, bool) {
	return dynamic.LiteralText(sql, lexer.Options{ANSIQuotes: opts.ANSIQuotes, NoBackslashEscapes: opts.NoBackslashEscapes}, "EXECUTE", "IMMEDIATE")
}

// PreparedText is ImmediateText for PREPARE name FROM 'text': the text
// EXECUTE name (with no USING values) runs as if sent itself.
func (e *Engine) PreparedText(sql string, opts Options) (string, bool) {
	return dynamic.LiteralText(sql, lexer.Options{ANSIQuotes: opts.ANSIQuotes, NoBackslashEscapes: opts.NoBackslashEscapes}, "PREPARE", "", "FROM")
}

// BareExecute reports whether sql is EXECUTE name, with no USING values.
func (e *Engine) BareExecute(sql string, opts Options) bool {
	return dynamic.BareExecute(sql, lexer.Options{ANSIQuotes: opts.ANSIQuotes, NoBackslashEscapes: opts.NoBackslashEscapes})
}

// UnpreparableText reports whether text is a statement the server will not
// prepare (1295, ER_UNSUPPORTED_PS): PREPARE, EXECUTE [IMMEDIATE] and
// DEALLOCATE | DROP PREPARE (MariaDB 10.11 prepares any other). The server
// refuses it before it runs anything.
func UnpreparableText(text string, opts Options) bool {
	return dynamic.Unpreparable(text, lexer.Options{ANSIQuotes: opts.ANSIQuotes, NoBackslashEscapes: opts.NoBackslashEscapes})
}
