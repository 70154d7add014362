package review

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/grants"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Need is one privilege a promote needs: priv on table t, or, with cols,
// on those columns.
type Need struct {
	Priv    string
	Table   rewrite.Table
	Columns []string
}

func (n Need) String() string {
	if n.Table.Name == "" {
		return n.Priv + " on database " + quote.Ident(n.Table.DB)
	}
	s := n.Priv + " on " + n.Table.Quoted()
	if len(n.Columns) > 0 {
		q := make([]string, len(n.Columns))
		for i, c := range n.Columns {
			q[i] = quote.Ident(c)
		}
		s += " (" + strings.Join(q, ", ") + ")"
	}
	return s
}

// PromoteCheck refuses needs the promoting user's account lacks; nil
// checks nothing (the admin API: an operator's promote).
type PromoteCheck func(ctx context.Context, needs []Need) error

// needs are the privileges the promote's statements need on production.
func (p *promotion) needs() []Need {
	var out []Need
	add := func(priv string, t rewrite.Table, cols ...string) {
		n := Need{Priv: priv, Table: t, Columns: cols}
		if !slices.ContainsFunc(out, func(o Need) bool { return o.String() == n.String() }) {
			out = append(out, n)
		}
	}
	databaseNeeds(p.dbs, add)
	for _, et := range p.order {
		if !et.changes() || et.skip != "" {
			continue
		}
		dt := et.td.t
		t := dt.logical
		switch {
		case dt.method == methodView && dt.change == "dropped":
			add("DROP", t)
			continue
		case dt.method == methodView:
			add("CREATE VIEW", t)
			if dt.prodOK {
				add("DROP", t)
			}
			continue
		case dt.method == methodSequence:
			continue
		case dt.change == "dropped":
			add("DROP", t)
			continue
		case dt.change == "created":
			add("CREATE", t)
			if dt.prodOK {
				add("DROP", t)
			}
		case dt.change == "altered":
			add("ALTER", t) // all MariaDB asks of ALTER TABLE on a table (keys, options and partitions too)
		}
		et.rowNeeds(add)
	}
	return out
}

// rowNeeds adds the privileges et's rows need: INSERT (with UPDATE for the
// upsert of a keyed table) of every column written, UPDATE of the columns
// and SELECT of the key read, DELETE.
func (et *exportTable) rowNeeds(add func(string, rewrite.Table, ...string)) {
	dt := et.td.t
	t := dt.logical
	names := columnNames(dt.fork.Stored())
	if dt.key == nil && dt.method == methodCompare && dt.change != "altered" {
		names = columnNames(shared(dt.fork, dt.prod))
	}
	keyCols := dt.key
	if dt.key == nil {
		keyCols = names // keyless rows are deleted by every value
	}
	inserts := dt.whole() && len(et.all) > 0
	var deletes bool
	var updated []string // the columns UPDATEs set
	for _, r := range et.td.rows {
		switch {
		case r.op == "insert", r.op == "update" && r.prodMissing:
			inserts = true
		case r.op == "update":
			for _, i := range changedColumns(r) {
				if i < len(names) && !slices.Contains(updated, names[i]) {
					updated = append(updated, names[i])
				}
			}
		case r.op == "delete":
			deletes = true
		}
	}
	deletes = deletes || len(et.gone)+len(et.clash) > 0 || dt.whole() && dt.key == nil
	if inserts {
		add("INSERT", t, names...)
		if dt.key != nil {
			add("UPDATE", t, names...) // ON DUPLICATE KEY UPDATE, and deferred foreign keys
		}
	}
	if len(updated) > 0 {
		add("UPDATE", t, updated...)
		add("SELECT", t, keyCols...)
	}
	if deletes {
		add("DELETE", t)
		add("SELECT", t, keyCols...)
	}
	if dt.method == methodCapture && len(et.td.rows) > 0 {
		add("SELECT", t, names...) // production's rows read under lock for conflicts
	}
}

func columnNames(cols []forker.Column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}

// MissingPrivileges refuses the needs gs does not allow, naming them.
func MissingPrivileges(gs grants.Set, account string, needs []Need) error {
	var missing []string
	for _, n := range needs {
		if !gs.Allows(n.Priv, n.Table.DB, n.Table.Name, n.Columns) {
			missing = append(missing, n.String())
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if len(missing) > 10 {
		missing = append(missing[:10], fmt.Sprintf("and %d more", len(missing)-10))
	}
	return rewrite.Refuse(wire.ErTableAccessDenied, "SANDBOX PROMOTE refused: your account %s may not do on production what the "+
		"sandbox changed: it lacks %s (the promote account carries out only what your own account could do; ask for the grants, "+
		"or have someone who holds them promote)", account, strings.Join(missing, ", "))
}
