package session

import (
	"context"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/infoschema"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Triggers a sandbox defines and drops are placed by sandbox/objects
// (Placer.ForkTrigger: the trigger in the sandbox's database for its
// logical one, its table and the tables its body names forked first). The
// session refuses before what the sandbox cannot hold (confinedTrigger).

// sandboxTrigger reports the trigger statements a sandbox runs on its own
// tables.
func sandboxTrigger(st rewrite.Statement) bool {
	return st.Trigger != nil && (st.Kind == rewrite.KindCreateTrigger || st.Kind == rewrite.KindDropTrigger)
}

// confinedTrigger refuses, in a sandbox, a trigger statement the sandbox
// cannot hold: one the engine cannot read, a trigger on a system table (as
// the server refuses it), a body that would reach beyond the sandbox.
func (s *Session) confinedTrigger(ctx context.Context, st rewrite.Statement) error {
	if !sandboxTrigger(st) {
		return nil
	}
	if st.Unprovable != "" {
		// The server's own error when it rejects the text too (a syntax
		// error; serverVerdict), if the text is the one statement.
		r := rewrite.Refuse(wire.ErOptionPreventsStatement, "%s, so its effects cannot be confined to the sandbox; "+
			"send it alone in a form the proxy reads, or run it on a direct connection", st.Unprovable)
		r.ServerCheck = !st.Trigger.Followed
		return r
	}
	if st.Kind != rewrite.KindCreateTrigger {
		return nil
	}
	if err := s.systemTable(ctx, st.Trigger.Table); err != nil {
		return err
	}
	why, _, err := s.m.fk.BodyHazard(ctx, st.Routine.DB(st.DB), st) // its functions are placed with its tables (Placer.ForkBody)
	if err != nil {
		return err
	}
	if why != "" {
		return rewrite.Refuse(wire.ErOptionPreventsStatement, "the trigger %s cannot be made in the sandbox: its body %s; "+
			"test it on a direct connection, or simplify its body", quote.Ident(st.Routine.Name), strings.TrimPrefix(why, "it "))
	}
	// The body's statements are the sandbox's statements too.
	for _, b := range st.Routine.Body {
		if err := s.bodyAllowed(b); err != nil {
			return err
		}
		if err := s.confined(ctx, b); err != nil {
			return err
		}
	}
	return nil
}

// systemTable is the server's error for a trigger on a table of the mysql,
// information_schema or performance_schema database, which no sandbox
// holds (nil for other tables).
func (s *Session) systemTable(ctx context.Context, t rewrite.Table) error {
	switch {
	case s.m.names.Norm(t).DB == "mysql":
		return rewrite.ServerRefusal(wire.ErNoTriggersOnSystem, "Triggers can not be created on system tables")
	case !infoschema.Virtual(t):
		return nil
	}
	who := "the proxy's account"
	if s.up != nil {
		r, err := s.up.Query(ctx, "SELECT SUBSTRING_INDEX(CURRENT_USER(), '@', 1), SUBSTRING_INDEX(CURRENT_USER(), '@', -1)")
		if err != nil {
			return err
		}
		if len(r.Rows) == 1 && len(r.Rows[0]) == 2 {
			who = "'" + sideconn.Str(r.Rows[0][0]) + "'@'" + sideconn.Str(r.Rows[0][1]) + "'"
		}
	}
	return rewrite.ServerRefusal(wire.ErDBAccessDenied, "Access denied for user %s to database '%s'", who, strings.ToLower(t.DB))
}
