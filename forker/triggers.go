package forker

import (
	"context"
	"fmt"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
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
}

// Triggers lists t's triggers in the order the server runs them (per event
// and timing, by ACTION_ORDER). The server shows a table's triggers only to
// an account with the TRIGGER privilege on it.
func Triggers(ctx context.Context, c Conn, t rewrite.Table) ([]Trigger, error) {
	rows, err := c.Query(ctx, "SELECT TRIGGER_NAME, ACTION_TIMING, EVENT_MANIPULATION, ACTION_STATEMENT, SQL_MODE, "+
		"CHARACTER_SET_CLIENT, COLLATION_CONNECTION FROM information_schema.TRIGGERS WHERE EVENT_OBJECT_SCHEMA = "+
		rewrite.QuoteString(t.DB)+" AND EVENT_OBJECT_TABLE = "+rewrite.QuoteString(t.Name)+
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
func CreateTrigger(ctx context.Context, c Conn, trg Trigger, table rewrite.Table, body string) error {
	stmt := "CREATE TRIGGER " + rewrite.QuoteIdent(table.DB) + "." + rewrite.QuoteIdent(trg.Name) + " " + trg.Timing + " " +
		trg.Event + " ON " + table.Quoted() + " FOR EACH ROW " + body
	rows, err := c.Query(ctx, "SELECT @@sql_mode, @@character_set_client, @@collation_connection")
	if err != nil || len(rows) != 1 {
		return fmt.Errorf("create trigger %s on %s: %w", trg.Name, table.Quoted(), err)
	}
	own := fmt.Sprintf("SET sql_mode = %s, character_set_client = %s, collation_connection = %s",
		rewrite.QuoteString(str(rows[0][0])), rewrite.QuoteString(str(rows[0][1])), rewrite.QuoteString(str(rows[0][2])))
	set := []string{"sql_mode = " + rewrite.QuoteString(trg.SQLMode)}
	if trg.Charset != "" {
		set = append(set, "character_set_client = "+rewrite.QuoteString(trg.Charset))
	}
	if trg.Collation != "" {
		set = append(set, "collation_connection = "+rewrite.QuoteString(trg.Collation))
	}
	if _, err := c.Exec(ctx, "SET "+strings.Join(set, ", ")); err != nil {
		return fmt.Errorf("create trigger %s on %s: %w", trg.Name, table.Quoted(), err)
	}
	_, err = c.Exec(ctx, stmt)
	if _, rerr := c.Exec(context.WithoutCancel(ctx), own); rerr != nil && err == nil {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("create trigger %s on %s: %w", trg.Name, table.Quoted(), err)
	}
	return nil
}
