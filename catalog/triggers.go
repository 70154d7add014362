// Package catalog reads what production's catalog holds as the proxy needs
// it: for now, triggers with their bodies read by the rewrite engine.
package catalog

import (
	"context"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
)

// TriggerCopy is a production trigger to make on a table's fork, with its
// body read as a procedure body (the engine reads NEW.col and OLD.col as
// column qualifiers).
type TriggerCopy struct {
	Trigger forker.Trigger
	Body    *rewrite.Analysis
}

// triggerPrefix introduces a trigger body for the engine, which reads it
// as a procedure's.
const triggerPrefix = "CREATE PROCEDURE `sqlfork_trigger`() "

// Triggers reads production's triggers with the engine, as the server
// compares names (CaseSensitive) and as its version reads text (Server).
type Triggers struct {
	Engine        *rewrite.Engine
	CaseSensitive bool
	Server        rewrite.Server
}

// Read reads t's triggers and their bodies (none for a table
// production does not have).
func (r Triggers) Read(ctx context.Context, c sideconn.Conn, t rewrite.Table) ([]TriggerCopy, error) {
	trs, err := forker.Triggers(ctx, c, t)
	if err != nil {
		return nil, err
	}
	out := make([]TriggerCopy, 0, len(trs))
	for _, trg := range trs {
		mode := strings.ToUpper(trg.SQLMode)
		a := r.Engine.Analyze(triggerPrefix+trg.Body, rewrite.Options{DB: t.DB, CaseSensitiveNames: r.CaseSensitive,
			Server: r.Server, ANSIQuotes: strings.Contains(mode, "ANSI_QUOTES"), IgnoreSpace: strings.Contains(mode, "IGNORE_SPACE"),
			NoBackslashEscapes: strings.Contains(mode, "NO_BACKSLASH_ESCAPES"), Charset: trg.Charset})
		out = append(out, TriggerCopy{Trigger: trg, Body: a})
	}
	return out, nil
}

// BodyTables are the tables a trigger body names.
func BodyTables(a *rewrite.Analysis) []rewrite.Table {
	var out []rewrite.Table
	for _, bs := range BodyStatements(a) {
		out = append(out, bs.Writes...)
		out = append(out, bs.Reads...)
		out = append(out, bs.Locked...)
		out = append(out, bs.References...)
	}
	return out
}

// BodyStatements are the statements of the routine bodies a reads.
func BodyStatements(a *rewrite.Analysis) []rewrite.Statement {
	var out []rewrite.Statement
	for _, st := range a.Statements {
		if st.Routine == nil {
			continue
		}
		for _, b := range st.Routine.Body {
			out = append(out, b.Statements...)
		}
	}
	return out
}
