package registry

import (
	"context"
	"fmt"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/sandbox/globals"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
)

// Globals are the values the sandbox gave global variables (SET GLOBAL in
// it), shared by its connections. The registry keeps them (its globals
// table), so a connection to the sandbox through another proxy process, or
// after a restart, gets them too; they go with the sandbox.
func (sb *Sandbox) Globals() *globals.Set { return &sb.globals }

// SaveGlobals records vals as sb's values, in the registry and then in
// memory, and counts the change in the sandbox's generation (other
// processes read them again at their next check).
func (m *Registry) SaveGlobals(ctx context.Context, c sideconn.Conn, sb *Sandbox, vals []globals.Value) error {
	if err := m.Persist(ctx, c, sb); err != nil {
		return err
	}
	for _, v := range vals {
		text := "NULL"
		if v.Text != nil {
			text = quote.String(*v.Text)
		}
		if _, err := c.Exec(ctx, "REPLACE INTO "+m.names.Q("globals")+" (sandbox_id, name, type, value) VALUES ("+
			quote.String(sb.ID)+", "+quote.String(v.Name)+", "+quote.String(string(v.Type))+", "+text+")"); err != nil {
			return fmt.Errorf("record global %s of sandbox %s: %w", v.Name, sb.Name, err)
		}
		sb.mu.Lock() // with the count, as loadGlobals reads both
		sb.ownSaves++
		sb.globals.Put(v)
		sb.mu.Unlock()
	}
	return m.BumpGeneration(ctx, c, sb)
}

// loadGlobals reads sb's global values from the registry, and keeps them
// unless this process saved some since saves.
func (m *Registry) loadGlobals(ctx context.Context, c sideconn.Conn, sb *Sandbox, saves uint64) error {
	rows, err := c.Query(ctx, "SELECT name, type, value FROM "+m.names.Q("globals")+" WHERE sandbox_id = "+quote.String(sb.ID))
	if err != nil {
		return fmt.Errorf("read registry: %w", err)
	}
	vals := make([]globals.Value, 0, len(rows))
	for _, r := range rows {
		vals = append(vals, globals.Value{Name: sideconn.Str(r[0]), Type: globals.Type(sideconn.Str(r[1])), Text: r[2]})
	}
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.ownSaves == saves {
		sb.globals.Replace(vals)
	}
	return nil
}
