package objects

import (
	"context"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/infoschema"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
)

// Triggers a sandbox defines and drops. A trigger is in its table's
// database, and a sandbox's table is in the sandbox's database for its
// logical one (sandbox.Schema), so the sandbox's triggers are there:
//
//   - CREATE TRIGGER forks its table first (whole, with production's keys
//     and triggers: the new trigger runs after those of its timing and
//     event, as on the server; a table the sandbox created or placed is
//     used as it is, a production view is copied, for the server's 1347),
//     and every table its body names (ForkBody, as for CREATE PROCEDURE:
//     the body keeps the names it was made with); the statement is then
//     sent with the trigger's name in the sandbox's database, its table
//     the fork, its body rewritten to the sandbox, and DEFINER =
//     CURRENT_USER (its definer is the session's upstream account, which
//     makes it). Its body is checked, by the session before, like a
//     production trigger's a fork copies (forking.Forker.BodyHazard): calls of stored procedures or functions, reads
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

// ForkTrigger makes ready what a trigger statement needs in the sandbox
// (see above). For SHOW CREATE TRIGGER it only reports whether the trigger
// is production's (production): the sandbox does not hold its table.
func (o *Placer) ForkTrigger(ctx context.Context, st rewrite.Statement) (production bool, err error) {
	db := st.Routine.DB(st.DB)
	if db == "" {
		return false, errNoDatabase()
	}
	prod, err := o.productionTriggers(ctx, db, st.Routine.Name)
	if err != nil {
		return false, err
	}
	if st.Kind == rewrite.KindShowCreateTrigger {
		for _, u := range prod {
			if e, ok := o.sb().Resolve(o.names.Key(u)); !ok || e.Kind == sandbox.KindAbsent {
				production = true
			}
		}
		return production, nil
	}
	for _, u := range prod {
		if _, _, err := o.host.Ensure(ctx, u, forker.Full); err != nil {
			return false, err
		}
	}
	if st.Kind != rewrite.KindCreateTrigger {
		return false, nil
	}
	t := st.Trigger.Table
	isView, err := o.ensureView(ctx, t, viewAlways, 0)
	if err != nil {
		return false, err
	}
	if !isView {
		if _, _, err := o.host.Ensure(ctx, t, forker.Full); err != nil {
			return false, err
		}
	}
	return false, o.ForkBody(ctx, st, true)
}

// productionTriggers are the tables of production's triggers called name
// in db, as the proxy's account sees them (the server compares trigger
// names exactly or not as the file system does: a table too many is
// forked rather than one too few).
func (o *Placer) productionTriggers(ctx context.Context, db, name string) ([]rewrite.Table, error) {
	db = o.names.Norm(rewrite.Table{DB: db}).DB
	if o.names.IsProxySchema(db) || infoschema.Virtual(rewrite.Table{DB: db}) {
		return nil, nil
	}
	var out []rewrite.Table
	err := o.reg.WithConn(ctx, func(c sideconn.Conn) error {
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

// ResolveTrigger is the session resolver's rewrite.TriggerResolver: a
// sandbox's triggers are in its databases for their logical ones; SHOW
// CREATE TRIGGER of a production trigger whose table the sandbox does not
// hold (production, as ForkTrigger reported) names production's.
func (o *Placer) ResolveTrigger(st *rewrite.Statement, production bool) (string, bool, error) {
	db := st.Routine.DB(st.DB)
	switch {
	case db == "":
		return "", false, errNoDatabase()
	case st.Kind == rewrite.KindShowCreateTrigger && production:
		return "", false, nil
	}
	return o.host.RoutineDB(db), true, nil
}
