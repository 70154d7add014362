package capture

import (
	"context"
	"fmt"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
)

// InsertIDVar is the user variable the capture's AFTER INSERT trigger on
// phys sets to each inserted row's AUTO_INCREMENT value
// (forker.InsertIDVar), when every trigger of phys is the proxy's: only
// for those does a copy of the database answer a statement's last insert
// id with the last row's where the fork answers 0 (a table with triggers
// of its own answers 0 on a copy too). It is "" otherwise: a table the
// sandbox or production gave triggers, one without an AUTO_INCREMENT
// column or whose changes are not captured, a fork whose trigger an older
// proxy made (its body sets no variable).
func (m *Tracker) InsertIDVar(ctx context.Context, c sideconn.Conn, phys rewrite.Table) (string, error) {
	rows, err := c.Query(ctx, "SELECT TRIGGER_NAME, ACTION_TIMING, EVENT_MANIPULATION, ACTION_STATEMENT FROM information_schema.TRIGGERS "+
		"WHERE EVENT_OBJECT_SCHEMA = "+quote.String(phys.DB)+" AND EVENT_OBJECT_TABLE = "+quote.String(phys.Name))
	if err != nil {
		return "", fmt.Errorf("read the triggers of %s: %w", phys, err)
	}
	prefix := strings.ToLower(m.cfg.Prefix) + "_"
	found := ""
	for _, r := range rows {
		name := sideconn.Str(r[0])
		if !strings.HasPrefix(strings.ToLower(name), prefix) {
			return "", nil
		}
		base, ok := strings.CutSuffix(name, Suffix("INSERT"))
		if !ok || sideconn.Str(r[1]) != "AFTER" || sideconn.Str(r[2]) != "INSERT" {
			continue
		}
		if v := forker.InsertIDVarOf(base); forker.SetsInsertID(sideconn.Str(r[3]), v) {
			found = v
		}
	}
	return found, nil
}
