package session

import (
	"context"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/infoschema"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Triggers a sandbox defines and drops. A trigger is in its table's
// database, and a sandbox's table is in the sandbox's database for its
// logical one (SandboxSchema), so the sandbox's triggers are there:
//
//   - CREATE TRIGGER forks its table first (whole, with production's keys
//     and triggers: the new trigger runs after those of its timing and
//     event, as on the server; a table the sandbox created or placed is
//     used as it is, a production view is copied, for the server's 1347),
//     and every table its body names (forkBody, as for CREATE PROCEDURE:
//     the body keeps the names it was made with); the statement is then
//     sent with the trigger's name in the sandbox's database, its table
//     the fork, its body rewritten to the sandbox, and DEFINER =
//     CURRENT_USER (its definer is the session's upstream account, which
//     makes it). Its body is checked like a production trigger's a fork
//     copies (bodyHazard): calls of stored procedures or functions, reads
//     of information_schema, what reaches outside the database are refused.
//   - DROP TRIGGER drops the sandbox's trigger of that name.
//   - Trigger names are per database: when production has a trigger of the
//     name on a table the sandbox does not hold, that table is forked first
//     (its copy of the trigger with it), so that CREATE TRIGGER meets it
//     (1359, or OR REPLACE replaces it) and DROP TRIGGER drops the copy —
//     the sandbox no longer runs it, production keeps it — as on a private
//     copy of the database. A name neither has gets the server's 1360.
//   - SHOW CREATE TRIGGER shows the sandbox's trigger, or production's when
//     the sandbox does not hold its table.
//
// The server shows a table's triggers only to accounts with the TRIGGER
// privilege on it: production's triggers the proxy's account cannot see
// are, to the sandbox, not there.

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
	why, _, err := s.m.fk.BodyHazard(ctx, st.Routine.DB(st.DB), st) // its functions are placed with its tables (forkBody)
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

// forkTrigger makes ready what a trigger statement needs in the sandbox
// (see above); for SHOW CREATE TRIGGER it marks in p a trigger that is
// production's.
func (s *Session) forkTrigger(ctx context.Context, st rewrite.Statement, p *Plan) error {
	db := st.Routine.DB(st.DB)
	if db == "" {
		return errNoDatabase()
	}
	prod, err := s.m.productionTriggers(ctx, db, st.Routine.Name)
	if err != nil {
		return err
	}
	if st.Kind == rewrite.KindShowCreateTrigger {
		for _, u := range prod {
			if e, ok := s.sb.Resolve(s.m.names.Key(u)); !ok || e.Kind == sandbox.KindAbsent {
				p.productionTrigger = true
			}
		}
		return nil
	}
	p.locks = true
	for _, u := range prod {
		if _, _, err := s.ensure(ctx, u, forker.Full); err != nil {
			return err
		}
	}
	if st.Kind != rewrite.KindCreateTrigger {
		return nil
	}
	t := st.Trigger.Table
	isView, err := s.ensureView(ctx, t, viewAlways, 0)
	if err != nil {
		return err
	}
	if !isView {
		if _, _, err := s.ensure(ctx, t, forker.Full); err != nil {
			return err
		}
	}
	return s.forkBody(ctx, st, true)
}

// productionTriggers are the tables of production's triggers called name
// in db, as the proxy's account sees them (the server compares trigger
// names exactly or not as the file system does: a table too many is
// forked rather than one too few).
func (m *Manager) productionTriggers(ctx context.Context, db, name string) ([]rewrite.Table, error) {
	db = m.names.Norm(rewrite.Table{DB: db}).DB
	if m.names.IsProxySchema(db) || infoschema.Virtual(rewrite.Table{DB: db}) {
		return nil, nil
	}
	var out []rewrite.Table
	err := m.reg.WithConn(ctx, func(c SideConn) error {
		rows, err := c.Query(ctx, "SELECT EVENT_OBJECT_SCHEMA, EVENT_OBJECT_TABLE FROM information_schema.TRIGGERS WHERE EVENT_OBJECT_SCHEMA = "+
			quote.String(db)+" AND TRIGGER_NAME = "+quote.String(name))
		for _, r := range rows {
			out = append(out, rewrite.Table{DB: sideconn.Str(r[0]), Name: sideconn.Str(r[1])})
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ResolveTrigger implements rewrite.TriggerResolver: a sandbox's triggers
// are in its databases for their logical ones; SHOW CREATE TRIGGER of a
// production trigger whose table the sandbox does not hold names
// production's.
func (r resolver) ResolveTrigger(st *rewrite.Statement) (string, bool, error) {
	db := st.Routine.DB(st.DB)
	switch {
	case db == "":
		return "", false, errNoDatabase()
	case st.Kind == rewrite.KindShowCreateTrigger && r.productionTrigger:
		return "", false, nil
	}
	return r.s.routineDB(db), true, nil
}
