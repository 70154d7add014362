package forker

import (
	"context"
	"fmt"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/sqlname"
)

// Trigger is a table's trigger as information_schema.TRIGGERS describes it.
type Trigger struct {
	Name      string
	Timing    string // BEFORE, AFTER
	Event     string // INSERT, UPDATE, DELETE
	Body      string // ACTION_STATEMENT: a statement or a BEGIN … END block
	SQLMode   string // the sql_mode it was made (and runs) with
	Charset   string // CHARACTER_SET_CLIENT at its creation
	Collation string // COLLATION_CONNECTION at its creation
	// Precedes, when set, is a trigger of the same timing and event the
	// copy must run before (CreateTrigger).
	Precedes string
}

// Triggers lists t's triggers in the order the server runs them (per event
// and timing, by ACTION_ORDER). The server shows a table's triggers only to
// an account with the TRIGGER privilege on it.
func Triggers(ctx context.Context, c Conn, t sqlname.Table) ([]Trigger, error) {
	rows, err := c.Query(ctx, "SELECT TRIGGER_NAME, ACTION_TIMING, EVENT_MANIPULATION, ACTION_STATEMENT, SQL_MODE, "+
		"CHARACTER_SET_CLIENT, COLLATION_CONNECTION FROM information_schema.TRIGGERS WHERE EVENT_OBJECT_SCHEMA = "+
		quote.String(t.DB)+" AND EVENT_OBJECT_TABLE = "+quote.String(t.Name)+
		" ORDER BY EVENT_MANIPULATION, ACTION_TIMING, ACTION_ORDER")
	if err != nil {
		return nil, fmt.Errorf("triggers of %s: %w", t.Quoted(), err)
	}
	out := make([]Trigger, 0, len(rows))
	for _, r := range rows {
		out = append(out, Trigger{Name: str(r[0]), Timing: str(r[1]), Event: str(r[2]), Body: str(r[3]),
			SQLMode: str(r[4]), Charset: str(r[5]), Collation: str(r[6])})
	}
	return out, nil
}

// CreateTrigger makes trg on table (a fork) with body (trg's, rewritten to
// the sandbox), under the sql_mode and character set trg was made with,
// which it keeps and runs with. Made in the order Triggers lists them, a
// fork's triggers run in production's order.
func CreateTrigger(ctx context.Context, c Conn, trg Trigger, table sqlname.Table, body string) error {
	stmt := "CREATE TRIGGER " + quote.Ident(table.DB) + "." + quote.Ident(trg.Name) + " " + trg.Timing + " " +
		trg.Event + " ON " + table.Quoted() + " FOR EACH ROW "
	if trg.Precedes != "" {
		stmt += "PRECEDES " + quote.Ident(trg.Precedes) + " "
	}
	stmt += body
	if err := ExecWith(ctx, c, Modes{SQLMode: trg.SQLMode, Charset: trg.Charset, Collation: trg.Collation}, stmt); err != nil {
		return fmt.Errorf("create trigger %s on %s: %w", trg.Name, table.Quoted(), err)
	}
	return nil
}

// Modes are the session settings a stored object is made with, and keeps:
// how its text is read, and what its literals are. An empty one is left as
// the connection has it.
type Modes struct {
	SQLMode   string
	Charset   string // character_set_client
	Collation string // collation_connection
	Results   string // character_set_results
}

// ExecWith runs stmt on c with the settings in modes, then sets the
// connection's own back (c is a pooled side connection).
func ExecWith(ctx context.Context, c Conn, modes Modes, stmt string) error {
	_, err := ExecAllWith(ctx, c, modes, stmt)
	return err
}

// ExecAllWith runs stmts on c in turn with the settings in modes, then sets
// the connection's own back; it stops at the first error, and returns how
// many ran.
func ExecAllWith(ctx context.Context, c Conn, modes Modes, stmts ...string) (int, error) {
	n := 0
	err := WithModes(ctx, c, modes, func() error {
		for _, stmt := range stmts {
			if _, err := c.Exec(ctx, stmt); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

// WithModes runs f with c's settings those of modes, then sets the
// connection's own back.
func WithModes(ctx context.Context, c Conn, modes Modes, f func() error) error {
	var set []string
	for _, v := range [][2]string{{"sql_mode", modes.SQLMode}, {"character_set_client", modes.Charset},
		{"collation_connection", modes.Collation}, {"character_set_results", modes.Results}} {
		if v[1] != "" {
			set = append(set, v[0])
		}
	}
	if len(set) == 0 {
		return f()
	}
	rows, err := c.Query(ctx, "SELECT @@"+strings.Join(set, ", @@"))
	if err != nil {
		return err
	}
	if len(rows) != 1 || len(rows[0]) != len(set) {
		return fmt.Errorf("read the connection's %s", strings.Join(set, ", "))
	}
	want := map[string]string{"sql_mode": modes.SQLMode, "character_set_client": modes.Charset, "collation_connection": modes.Collation,
		"character_set_results": modes.Results}
	var to, back []string
	for i, name := range set {
		to = append(to, name+" = "+quote.String(want[name]))
		back = append(back, name+" = "+quote.String(str(rows[0][i])))
	}
	if _, err := c.Exec(ctx, "SET "+strings.Join(to, ", ")); err != nil {
		return err
	}
	err = f()
	if _, rerr := c.Exec(context.WithoutCancel(ctx), "SET "+strings.Join(back, ", ")); rerr != nil && err == nil {
		err = rerr
	}
	return err
}
