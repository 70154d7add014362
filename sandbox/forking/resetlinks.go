package forking

import (
	"context"
	"fmt"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
)

// linkedTables adds to set (by key) every table of held, the sandbox's
// entries, that a foreign key or a trigger in the sandbox links to a table
// of set, transitively: a fork whose keys or triggers name a table's copy
// must go with it. Links are read from the sandbox's own databases — the
// keys linkForks gave the forks and those the sandbox made, the triggers
// copied from production and those it made —, the proxy's capture
// triggers aside. A trigger links its table to every table whose name
// and database its body holds (it may name more than it uses: the reset
// then takes more, never less).
func (m *Forker) linkedTables(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox, held, set map[string]*sandbox.Entry) error {
	byPhys := map[string]string{} // the key of a table's physical name → its logical key
	var schemas []string
	seen := map[string]bool{}
	for k, e := range held {
		switch e.Kind {
		case sandbox.KindFork, sandbox.KindSchema, sandbox.KindCreated:
		default:
			continue
		}
		byPhys[m.names.Key(e.Phys)] = k
		if !seen[e.Phys.DB] {
			seen[e.Phys.DB] = true
			schemas = append(schemas, quote.String(e.Phys.DB))
		}
	}
	if len(schemas) == 0 {
		return nil
	}
	in := " IN (" + strings.Join(schemas, ", ") + ")"
	links := map[string][]string{}
	link := func(a, b string) {
		if a != "" && b != "" && a != b {
			links[a], links[b] = append(links[a], b), append(links[b], a)
		}
	}
	rows, err := c.Query(ctx, "SELECT CONSTRAINT_SCHEMA, TABLE_NAME, UNIQUE_CONSTRAINT_SCHEMA, REFERENCED_TABLE_NAME "+
		"FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA"+in)
	if err != nil {
		return fmt.Errorf("read the sandbox's foreign keys: %w", err)
	}
	for _, r := range rows {
		link(byPhys[m.names.Key(rewrite.Table{DB: sideconn.Str(r[0]), Name: sideconn.Str(r[1])})],
			byPhys[m.names.Key(rewrite.Table{DB: sideconn.Str(r[2]), Name: sideconn.Str(r[3])})])
	}
	rows, err = c.Query(ctx, "SELECT TRIGGER_NAME, EVENT_OBJECT_SCHEMA, EVENT_OBJECT_TABLE, ACTION_STATEMENT "+
		"FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA"+in)
	if err != nil {
		return fmt.Errorf("read the sandbox's triggers: %w", err)
	}
	ours := strings.ToLower(m.cfg.Prefix) + "_"
	for _, r := range rows {
		if strings.HasPrefix(strings.ToLower(sideconn.Str(r[0])), ours) {
			continue // a capture trigger: it writes a side table
		}
		on := byPhys[m.names.Key(rewrite.Table{DB: sideconn.Str(r[1]), Name: sideconn.Str(r[2])})]
		body := sideconn.Str(r[3])
		for pk, k := range byPhys {
			db, name, _ := strings.Cut(pk, "\x00")
			// An unqualified name is in the trigger's own database.
			if namesWord(body, name) && (strings.EqualFold(db, sideconn.Str(r[1])) || namesWord(body, db)) {
				link(on, k)
			}
		}
	}
	todo := make([]string, 0, len(set))
	for k := range set {
		todo = append(todo, k)
	}
	for len(todo) > 0 {
		k := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for _, o := range links[k] {
			if _, in := set[o]; !in {
				set[o] = held[o]
				todo = append(todo, o)
			}
		}
	}
	return nil
}

// namesWord reports whether body holds word (in any case) as an
// identifier would stand there: not inside a longer one.
func namesWord(body, word string) bool {
	body, word = strings.ToLower(body), strings.ToLower(word)
	for i := 0; word != ""; {
		j := strings.Index(body[i:], word)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(word)
		if (start == 0 || !identByte(body[start-1])) && (end == len(body) || !identByte(body[end])) {
			return true
		}
		i = start + 1
	}
	return false
}

// identByte reports a byte an unquoted identifier may hold (any byte of a
// multi-byte character counts).
func identByte(b byte) bool {
	return b == '_' || b == '$' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= 0x80
}
