package session

import (
	"context"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Dynamic SQL (rewrite/dynamic.go). PREPARE name FROM <expression> and
// EXECUTE IMMEDIATE <expression>, which the engine cannot see through,
// run the text the expression computes: when the proxy may compute it
// first, the session asks the server for its value on the client's own
// connection, just before, and plans the statement with that value as a
// string literal in the expression's place — what the server would have
// run. It does so only when the value comes back in the character set the
// client's text is read in (character_set_results is
// character_set_client), so the literal reads back as the same text.

// dynamicText is the input sql (analysed as a) with its dynamic text's
// expression replaced by the expression's value — sql itself when the
// value is NULL, which runs nothing; ok is false when sql is no such
// input, or one the engine reads anyway, or its value cannot be sent back
// as the same text.
func (s *Session) dynamicText(ctx context.Context, a *rewrite.Analysis, sql string, opts rewrite.Options) (string, bool, error) {
	if s.up == nil || len(a.Statements) != 1 || a.Statements[0].Unprovable == "" {
		return "", false, nil
	}
	d, ok := s.m.engine.DynamicSQL(sql, opts)
	if !ok {
		return "", false, nil
	}
	r, err := s.up.Query(ctx, "SELECT "+d.Expr+", @@character_set_client, @@character_set_results")
	if err != nil {
		return "", false, err
	}
	if len(r.Rows) != 1 || len(r.Rows[0]) != 3 {
		return "", false, nil
	}
	row := r.Rows[0]
	if row[1] == nil || row[2] == nil || *row[1] != *row[2] {
		return "", false, nil
	}
	if row[0] == nil {
		// NULL: no statement to run; the server answers with its syntax
		// error, as directly.
		return sql, true, nil
	}
	return d.With(row[0]), true, nil
}

// immediateItself is the text an EXECUTE IMMEDIATE 'text' input (sql,
// analysed as a) runs, to be planned as if the client had sent it, when
// the engine refuses the input as it is — a statement the proxy answers or
// watches by its kind (SHOW, USE, SET, transactions, routines, CREATE
// DATABASE, …) or one it does not read — and the server runs the text as
// it runs it sent itself (rewrite.ImmediateText): same rows, warnings,
// affected rows and effects. A text the server will not prepare is sent as
// it is (text is sql): the server refuses it with 1295 and runs nothing.
// ok is false for any other input.
func (s *Session) immediateItself(a *rewrite.Analysis, sql string, opts rewrite.Options) (string, bool, error) {
	if len(a.Statements) != 1 || a.Statements[0].Kind != rewrite.KindExecuteImmediate || a.Statements[0].Unprovable == "" {
		return "", false, nil
	}
	text, ok := s.m.engine.ImmediateText(sql, opts)
	if !ok {
		return "", false, nil
	}
	if rewrite.UnpreparableText(text, opts) {
		return sql, true, nil
	}
	in := s.m.engine.Analyze(text, opts)
	if len(in.Statements) != 1 {
		// More than one: the server's syntax error, or the proxy's refusal.
		return "", false, nil
	}
	if in.Statements[0].Class == rewrite.ClassSandbox {
		return "", false, rewrite.Refuse(wire.ErUnsupportedPS, "SANDBOX statements cannot be prepared; send them as plain queries")
	}
	return text, true, nil
}

// computedText is the text dynamic SQL in a stands for, when the proxy
// computes it first (dynamicText, immediateItself); ok is false when a is
// no such statement.
func (s *Session) computedText(ctx context.Context, a *rewrite.Analysis, sql string, opts rewrite.Options) (text string, ok bool, err error) {
	if text, ok, err := s.dynamicText(ctx, a, sql, opts); err != nil || ok {
		return text, ok, err
	}
	return s.immediateItself(a, sql, opts)
}
