package review

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
)

// SANDBOX EXPORT: the statements that turn production into the sandbox's
// state, from its diff, in an order foreign keys allow:
//
//  1. a header fixing how the text is read (utf8mb4, UTC, a sql_mode that
//     takes every value back and keeps AUTO_INCREMENT values as given);
//  2. CREATE TABLE IF NOT EXISTS of the tables the sandbox created, parents
//     first (one in a cycle of foreign keys, cut at it, with
//     foreign_key_checks off for that statement), and the first ALTER
//     TABLE of altered tables (drops, columns);
//  3. rows: inserts (INSERT … ON DUPLICATE KEY UPDATE, parents first),
//     updates (by key, parents first), deletes (by key, children first);
//     an altered table has all its rows written (by key: upserted, and the
//     keys it no longer has deleted; without a key: emptied and filled);
//  4. the keys and constraints altered tables gained, then DROP TABLE IF
//     EXISTS of the tables the sandbox dropped, children first.
//
// Keyed statements are idempotent: run twice, they leave the same rows.
// Rows of tables without a key are deleted one at a time (LIMIT 1) and
// inserted plainly: not idempotent, which the header says.

// exportBatch is how many rows one INSERT or DELETE statement carries at
// most, and exportBytes about how many bytes (max_allowed_packet is 16 MiB
// by default: rows of large BLOBs go a few at a time).
const (
	exportBatch = 100
	exportBytes = 1 << 20
)

// batches cuts vals into runs of at most exportBatch values and about
// exportBytes bytes (a longer value alone).
func batches(vals []string) [][]string {
	var out [][]string
	var cur []string
	size := 0
	for _, v := range vals {
		if len(cur) > 0 && (len(cur) == exportBatch || size+len(v) > exportBytes) {
			out = append(out, cur)
			cur, size = nil, 0
		}
		cur = append(cur, v)
		size += len(v)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// exportTable is one table of an export, with its diff.
type exportTable struct {
	td  *tableDiff
	ddl string
	// skip says why the table (a view) is left out: it names the proxy's
	// databases or the server's own schemas.
	skip string
	// pre and post are an altered table's ALTER statements.
	pre, post []string
	// all are, for an altered table, every row of the sandbox's table
	// (afterLits), and gone the keys of production rows it no longer has;
	// clash the keys of its rows deleted before the upserts (clash.go).
	all, gone, clash []diffRow
	// selfFKs are the foreign keys from the table to itself (rowOrder);
	// cycle marks a table in a cycle of foreign keys between tables, whose
	// order cannot put every parent first.
	selfFKs []forker.ForeignKey
	cycle   bool
	// deferFKs are the foreign keys to tables written after this one (a
	// cycle of foreign keys between tables, cut): its rows are inserted with
	// them NULL, and given their values after the other tables' rows
	// (deferredUpdates).
	deferFKs []forker.ForeignKey
	// reads are the tables a view reads (checkTable).
	reads []rewrite.Table
}

// exportPlan reads the diff of every table with what its export needs,
// parents first.
func (d *differ) exportPlan(ctx context.Context, tables []*diffTable) ([]*exportTable, error) {
	var ets []*exportTable
	var err error
	if d.dbs, err = d.databases(ctx); err != nil {
		return nil, err
	}
	for _, dt := range tables {
		td, err := d.diffOne(ctx, dt, true)
		if err != nil {
			return nil, err
		}
		et := &exportTable{td: td}
		if why := d.m.reservedSchema(dt.logical.DB); why != "" {
			et.skip = dt.logical.String() + " is in " + why + ", which is never exported or promoted"
			ets = append(ets, et)
			continue
		}
		if err := d.exportDDL(ctx, et); err != nil {
			return nil, err
		}
		if err := d.checkTable(et); err != nil {
			return nil, err
		}
		ets = append(ets, et)
	}
	d.skipReaders(ets)
	return d.fkOrder(ctx, ets)
}

// skipReaders leaves out the views that read a view or table left out
// (skip), in turn: made without it they would fail, or read production's.
func (d *differ) skipReaders(ets []*exportTable) {
	for changed := true; changed; {
		changed = false
		skipped := map[string]string{}
		for _, et := range ets {
			if et.skip != "" {
				skipped[d.m.names.Key(et.td.t.logical)] = et.td.t.logical.String()
			}
		}
		for _, et := range ets {
			if et.skip != "" || et.td.t.method != methodView {
				continue
			}
			for _, r := range et.reads {
				if name, ok := skipped[d.m.names.Key(d.m.names.Norm(sandbox.WithDB(r, et.td.t.logical.DB)))]; ok {
					et.skip = fmt.Sprintf("%s reads %s, which is not exported", et.td.t.logical, name)
					changed = true
					break
				}
			}
		}
	}
}

// label is a table as a message of the sandbox's names it: information_schema
// for the sandbox's views of it, a table the sandbox holds by its logical
// name, any other database of the proxy's unnamed.
func (d *differ) label(t rewrite.Table) string {
	switch {
	case strings.EqualFold(t.DB, sandbox.InfoSchema(d.m.cfg.Prefix, d.sb.ID)):
		return "information_schema." + t.Name
	case !d.m.names.IsProxySchema(t.DB):
		return t.String()
	}
	for _, e := range d.sb.Entries() {
		if strings.EqualFold(e.Phys.DB, t.DB) {
			return e.Logical.DB + "." + t.Name
		}
	}
	return "a database of the proxy's"
}

// exportDDL reads what the export of et's table needs besides its changed
// rows: its DDL, and for an altered table every row.
func (d *differ) exportDDL(ctx context.Context, et *exportTable) error {
	dt := et.td.t
	var err error
	switch {
	case dt.method == methodView, dt.change == "created", dt.change == "dropped":
		if et.ddl, err = d.ddl(ctx, dt); err != nil {
			return err
		}
		if dt.method != methodView && dt.change == "created" && dt.prodOK {
			// Dropped and made again in the sandbox: production's goes.
			et.pre = []string{"DROP TABLE IF EXISTS " + dt.logical.Quoted()}
		}
	case dt.change == "altered":
		et.pre, et.post = dt.alterPre, dt.alterPost
		if dt.whole() {
			return d.allRows(ctx, et)
		}
	}
	return nil
}

// checkTable reads back every DDL statement of et as the server will
// (checkGenerated). A view naming a reserved database is left out (skip);
// any other statement that is not what it was built as fails the export.
func (d *differ) checkTable(et *exportTable) error {
	dt := et.td.t
	check := func(stmt string, kinds ...rewrite.Kind) error {
		g, err := d.m.checkGenerated(stmt, dt.logical, d.label, kinds...)
		var ge *generatedError
		if errors.As(err, &ge) && ge.names && dt.method == methodView {
			et.skip = ge.what
			return nil
		}
		et.reads = g.reads
		return err
	}
	switch {
	case et.ddl == "":
	case dt.method == methodView && dt.change == "dropped":
		return check(et.ddl, rewrite.KindDropView)
	case dt.method == methodView:
		return check(et.ddl, rewrite.KindCreateView)
	case dt.change == "dropped":
		return check(et.ddl, rewrite.KindDropTable)
	default:
		if err := check(et.ddl, rewrite.KindCreateTable); err != nil {
			return err
		}
	}
	for _, s := range append(slices.Clone(et.pre), et.post...) {
		if err := check(s, rewrite.KindAlterTable, rewrite.KindDropTable); err != nil {
			return err
		}
	}
	return nil
}

// exportNotes are the comments an export starts with: what in it is not
// idempotent or not checked against production.
func exportNotes(order []*exportTable) []string {
	var notes []string
	for _, et := range order {
		dt := et.td.t
		if et.skip != "" {
			if et.changes() {
				notes = append(notes, "not exported: "+et.skip)
			}
			continue
		}
		switch {
		case dt.key == nil && dt.change != "dropped" && len(et.td.rows)+len(et.all) > 0:
			notes = append(notes, dt.logical.String()+" has no key: its rows are written by value, and running this twice writes them twice")
		case dt.note != "" && dt.method == methodCompare && len(et.td.rows) > 0:
			notes = append(notes, dt.logical.String()+" was compared whole with production ("+dt.note+"): rows production changed since the fork are put back")
		}
		if dt.method == methodSequence {
			notes = append(notes, "sequence "+dt.logical.String()+" was used in the sandbox: its next value is not exported")
			continue
		}
		if dt.change == "created" && dt.prodOK && dt.method != methodView {
			notes = append(notes, dt.logical.String()+": production has a table of this name, which the sandbox did not have or dropped: it is dropped and made again as the sandbox's")
		}
		if et.cycle && et.changes() {
			notes = append(notes, dt.logical.String()+" is in a cycle of foreign keys between tables: rows are inserted with the keys to tables written "+
				"later NULL and given them after; rows that reference each other cannot be deleted with the checks on (1451)")
		}
		if et.td.conflicts > 0 {
			notes = append(notes, fmt.Sprintf("%s: %d rows changed in production since the fork are overwritten (SANDBOX PROMOTE checks them)",
				dt.logical, et.td.conflicts))
		}
	}
	return notes
}

// commentLines are notes as the comment lines of an export: whatever names
// they hold, each stays one comment line (quote.Comment), which neither the
// server nor a client reading the script (the mariadb CLI) leaves early.
func commentLines(notes []string) []string {
	out := make([]string, len(notes))
	for i, n := range notes {
		out[i] = "-- " + quote.Comment(n)
	}
	return out
}

// exportHeader sets how an export's text is read.
var exportHeader = []string{
	"SET NAMES utf8mb4",
	"SET time_zone = '+00:00'",
	"SET sql_mode = 'NO_AUTO_VALUE_ON_ZERO,NO_ENGINE_SUBSTITUTION,ALLOW_INVALID_DATES'",
}

// exportSteps are an export's statements in its steps: DDL before the
// rows, the rows, DDL after them.
type exportSteps struct {
	pre, rows, post []string
}

// steps builds the statements of order (parents first), but of the tables
// left out (skip).
func (d *differ) steps(order []*exportTable) exportSteps {
	st := exportSteps{pre: databaseDDL(d.dbs)}
	order = slices.DeleteFunc(slices.Clone(order), func(et *exportTable) bool { return et.skip != "" })
	rev := slices.Clone(order)
	slices.Reverse(rev)
	for _, et := range order {
		st.pre = append(st.pre, et.pre...)
		if et.td.t.change == "created" && et.td.t.method != methodView {
			st.pre = append(st.pre, et.createStatements()...)
		}
	}
	for _, et := range order {
		et.deferCycles()
	}
	for _, op := range []string{"insert", "update"} {
		for _, et := range order {
			st.rows = append(st.rows, d.dml(et, op)...)
		}
	}
	for _, et := range order {
		if et.writesRows() {
			cols, names, rows := et.rowShape("insert")
			st.rows = append(st.rows, et.deferredUpdates(cols, names, rows)...)
		}
	}
	for _, et := range rev {
		st.rows = append(st.rows, d.dml(et, "delete")...)
	}
	for _, et := range order {
		st.post = append(st.post, et.post...)
	}
	// Views once their tables are there, and gone before tables go.
	for _, et := range order {
		if et.td.t.method == methodView && et.td.t.change != "dropped" {
			st.post = append(st.post, et.ddl)
		}
	}
	for _, et := range rev {
		if et.td.t.method == methodView && et.td.t.change == "dropped" {
			st.post = append(st.post, et.ddl)
		}
	}
	for _, et := range rev {
		if et.td.t.change == "dropped" && et.td.t.method != methodView {
			st.post = append(st.post, et.ddl)
		}
	}
	return st
}

// createStatements create et, a table the sandbox created. One whose
// foreign keys name a table written after it (a cycle of foreign keys
// between tables, cut at it: deferFKs) is created with foreign_key_checks
// off, as the server refuses a constraint on a table not there yet (1005,
// errno 150), and the setting is given back at once: the rows, written
// after every table is there, are checked.
func (et *exportTable) createStatements() []string {
	if len(et.deferFKs) == 0 {
		return []string{et.ddl}
	}
	return []string{"SET @sqlfork_fk_checks = @@foreign_key_checks, foreign_key_checks = 0", et.ddl,
		"SET foreign_key_checks = @sqlfork_fk_checks"}
}

// exportStatements are the statements of an export of tables.
func (d *differ) exportStatements(ctx context.Context, tables []*diffTable) ([]string, error) {
	order, err := d.exportPlan(ctx, tables)
	if err != nil {
		return nil, err
	}
	st := d.steps(order)
	objects, err := d.ownObjects(ctx)
	if err != nil {
		return nil, err
	}
	out := append(slices.Clone(exportHeader), commentLines(append(exportNotes(order), objects...))...)
	return append(append(append(out, st.pre...), st.rows...), st.post...), nil
}

// allRows reads every row of an altered table's fork, and (by key) the
// keys only production has.
func (d *differ) allRows(ctx context.Context, et *exportTable) error {
	dt := et.td.t
	rows, err := d.literalRows(ctx, dt, "f", dt.fork.Stored(), " FROM "+dt.e.Phys.Quoted()+" f")
	if err != nil {
		return err
	}
	for _, lits := range rows {
		et.all = append(et.all, diffRow{op: "insert", count: 1, afterLits: lits})
	}
	if dt.key == nil {
		return nil
	}
	if err := d.clashing(ctx, et); err != nil {
		return err
	}
	rows, err = d.literalRows(ctx, dt, "r", keyColumns(dt.prod, dt.key), " FROM "+dt.logical.Quoted()+" r LEFT JOIN "+
		dt.e.Phys.Quoted()+" f ON "+onSQL("r", "f", dt.key)+" WHERE "+col("f", dt.key[0])+" IS NULL")
	if err != nil {
		return err
	}
	for _, lits := range rows {
		et.gone = append(et.gone, diffRow{op: "delete", count: 1, keyLits: lits})
	}
	return nil
}

// literalRows reads the columns cols of alias as literals (litSQL), in the
// query whose FROM … is from: each row's, checked (checkLiterals).
func (d *differ) literalRows(ctx context.Context, dt *diffTable, alias string, cols []forker.Column, from string) ([][]string, error) {
	sel := make([]string, len(cols))
	for i, c := range cols {
		sel[i] = litSQL(alias, c)
	}
	rows, err := d.query(ctx, "SELECT "+strings.Join(sel, ", ")+from, true)
	if err != nil {
		return nil, fmt.Errorf("export %s: %w", dt.logical, err)
	}
	out := make([][]string, 0, len(rows))
	for _, r := range rows {
		lits := make([]string, len(r))
		for i, v := range r {
			lits[i] = sideconn.Str(v)
		}
		if err := checkLiterals(dt.logical, lits); err != nil {
			return nil, err
		}
		out = append(out, lits)
	}
	return out, nil
}

// fkOrder orders the tables parents first, by the foreign keys between
// them in the sandbox and in production (a cycle is cut where met).
func (d *differ) fkOrder(ctx context.Context, ets []*exportTable) ([]*exportTable, error) {
	byKey := map[string]*exportTable{}
	phys := map[string]string{} // physical key -> logical key
	for _, et := range ets {
		k := d.m.names.Key(et.td.t.logical)
		byKey[k] = et
		phys[d.m.names.Key(et.td.t.e.Phys)] = k
	}
	// Production's databases and this sandbox's: not the registry's nor
	// other sandboxes' (the read costs what the databases hold).
	own := strings.ToLower(sandbox.SchemaPrefix(d.m.cfg.Prefix, d.sb.ID))
	fks, err := forker.ForeignKeys(ctx, d.c, func(db string) bool {
		return d.m.names.IsProxySchema(db) && !strings.HasPrefix(strings.ToLower(db), own)
	})
	if err != nil {
		return nil, err
	}
	parents := map[string][]string{}
	type link struct {
		fk   forker.ForeignKey
		c, p string
	}
	var links []link
	for _, fk := range fks {
		c, p := d.m.names.Key(fk.Child), d.m.names.Key(fk.Parent)
		if l, ok := phys[c]; ok {
			c = l
		}
		if l, ok := phys[p]; ok {
			p = l
		}
		if _, ok := byKey[c]; !ok {
			continue
		}
		if c == p {
			byKey[c].addSelfFK(fk) // a tree: its rows are ordered by it (rowOrder)
			continue
		}
		if _, ok := byKey[p]; ok {
			parents[c] = append(parents[c], p)
			links = append(links, link{fk, c, p})
		}
	}
	var out []*exportTable
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(k string)
	visit = func(k string) {
		if state[k] == 1 {
			byKey[k].cycle = true // a cycle between tables: cut here
		}
		if state[k] != 0 {
			return
		}
		state[k] = 1
		for _, p := range parents[k] {
			visit(p)
		}
		state[k] = 2
		out = append(out, byKey[k])
	}
	for _, et := range ets {
		visit(d.m.names.Key(et.td.t.logical))
	}
	// A cycle cut: a child written before its parent writes its
	// foreign key NULL first, and its value once the parent's rows are in.
	pos := map[*exportTable]int{}
	for i, et := range out {
		pos[et] = i
	}
	for _, l := range links {
		if child := byKey[l.c]; pos[byKey[l.p]] > pos[child] {
			child.deferFKs = addFK(child.deferFKs, l.fk)
		}
	}
	return out, nil
}

// writesRows reports whether et's table has rows an export writes.
func (et *exportTable) writesRows() bool {
	dt := et.td.t
	return dt.change != "dropped" && dt.method != methodView && dt.method != methodSequence
}

// rowShape is what et's statements of kind op write: the columns, their
// names quoted, and the rows.
func (et *exportTable) rowShape(op string) (cols []forker.Column, names []string, rows []diffRow) {
	dt := et.td.t
	cols = dt.fork.Stored()
	if dt.key == nil && dt.method == methodCompare && dt.change != "altered" {
		cols = shared(dt.fork, dt.prod) // the columns rowsCompared wrote the rows with
	}
	names = make([]string, len(cols))
	for i, c := range cols {
		names[i] = quote.Ident(c.Name)
	}
	rows = et.td.rows
	if dt.whole() {
		rows = et.all
		if op == "delete" {
			rows = et.gone
		}
	}
	return cols, names, rows
}

// inserts reports whether r is written by an insert (an upsert): a row
// the sandbox inserted, every row of an altered table, an update of a row
// production no longer has.
func (et *exportTable) inserts(r diffRow) bool {
	return et.td.t.whole() || r.op == "insert" || r.op == "update" && r.prodMissing
}

// dml is et's statements of one kind: insert, update or delete.
func (d *differ) dml(et *exportTable, op string) []string {
	if !et.writesRows() {
		return nil
	}
	dt := et.td.t
	cols, names, rows := et.rowShape(op)
	switch {
	case op != "delete":
		rows, _ = parentsFirst(rows, cols, et.selfFKs, func(r diffRow) []string { return r.afterLits })
		return et.upserts(op, names, rows, et.deferredColumns(cols))
	case dt.key == nil:
		return keylessDeletes(dt, cols, names, rows)
	}
	return et.deletes(rows)
}

// upserts are et's inserts (op insert), or its updates: INSERT … ON
// DUPLICATE KEY UPDATE of the rows inserted, of every row of an altered
// table, and of those updated that production no longer has; UPDATE by key
// of the other updated rows.
func (et *exportTable) upserts(op string, names []string, rows []diffRow, deferred []int) []string {
	dt := et.td.t
	var out []string
	var vals []string
	for _, r := range rows {
		switch {
		case dt.whole() && op == "insert":
		case dt.whole():
			continue
		case op == "update" && r.op == "update" && r.prodMissing:
		case r.op != op || op == "update":
			continue
		}
		for range max(r.count, 1) {
			vals = append(vals, "("+strings.Join(withoutDeferred(r.afterLits, deferred), ", ")+")")
		}
	}
	if dt.whole() && dt.key == nil && op == "insert" {
		// Emptied, then filled with every row the sandbox has.
		out = append(out, "DELETE FROM "+dt.logical.Quoted())
	}
	if dt.whole() && op == "insert" {
		out = append(out, et.clashDeletes()...)
	}
	upd := make([]string, len(names))
	for i, n := range names {
		upd[i] = n + " = VALUES(" + n + ")"
	}
	for _, b := range batches(vals) {
		stmt := "INSERT INTO " + dt.logical.Quoted() + " (" + strings.Join(names, ", ") + ") VALUES " + strings.Join(b, ", ")
		if dt.key != nil {
			stmt += " ON DUPLICATE KEY UPDATE " + strings.Join(upd, ", ")
		}
		out = append(out, stmt)
	}
	if op != "update" || dt.whole() {
		return out
	}
	// The columns the sandbox changed (every column when the row's image at
	// the fork is unknown), the key's too: a key that changed only in case
	// (a _ci collation) is written with the sandbox's spelling. An UPDATE
	// fires production's UPDATE triggers only, as the sandbox's change did.
	for _, r := range rows {
		if r.op != "update" || r.prodMissing {
			continue
		}
		var set []string
		for _, i := range changedColumns(r) {
			set = append(set, names[i]+" = "+r.afterLits[i])
		}
		out = append(out, "UPDATE "+dt.logical.Quoted()+" SET "+strings.Join(set, ", ")+" WHERE "+keyWhere(dt.key, r.keyLits))
	}
	return out
}

// changedColumns are the indexes of the columns an updated row's values
// differ in from its image at the fork; every column when that image is
// unknown (a table compared whole) or equal. The columns a promote leaves
// as production has them (r.theirs) are not.
func changedColumns(r diffRow) []int {
	var out []int
	for i := range r.afterLits {
		if len(r.beforeLits) != len(r.afterLits) || r.afterLits[i] != r.beforeLits[i] {
			out = append(out, i)
		}
	}
	if len(out) == 0 {
		for i := range r.afterLits {
			out = append(out, i)
		}
	}
	return slices.DeleteFunc(out, func(i int) bool { return slices.Contains(r.theirs, i) })
}

// keylessDeletes delete, one at a time, the rows of a table without a key
// that the sandbox has fewer of.
func keylessDeletes(dt *diffTable, cols []forker.Column, names []string, rows []diffRow) []string {
	var out []string
	for _, r := range rows {
		if r.op != "delete" {
			continue
		}
		conds := make([]string, len(cols))
		for i, n := range names {
			conds[i] = n + " <=> " + r.afterLits[i]
			if cols[i].Charset != "" {
				conds[i] = "BINARY " + n + " <=> BINARY " + r.afterLits[i] // the row's bytes, not its collation's equal
			}
		}
		for range max(r.count, 1) {
			out = append(out, "DELETE FROM "+dt.logical.Quoted()+" WHERE "+strings.Join(conds, " AND ")+" LIMIT 1")
		}
	}
	return out
}

// deletes delete by key the rows of et the sandbox deleted: in batches, or
// for a table referencing itself one row at a time, children first (by
// their fork-time images when the diff has them).
func (et *exportTable) deletes(rows []diffRow) []string {
	dt := et.td.t
	var del []diffRow
	for i := len(rows) - 1; i >= 0; i-- { // children of a tree before their parents, when nothing better is known
		if rows[i].op == "delete" {
			del = append(del, rows[i])
		}
	}
	if len(et.selfFKs) == 0 {
		var keys []string
		for _, r := range del {
			keys = append(keys, keyTuple(r.keyLits))
		}
		var out []string
		for _, b := range batches(keys) {
			out = append(out, "DELETE FROM "+dt.logical.Quoted()+" WHERE "+keyList(dt.key)+" IN ("+strings.Join(b, ", ")+")")
		}
		return out
	}
	slices.Reverse(del)
	del, _ = parentsFirst(del, dt.fork.Stored(), et.selfFKs, func(r diffRow) []string { return r.beforeLits })
	slices.Reverse(del)
	out := make([]string, len(del))
	for i, r := range del {
		out[i] = "DELETE FROM " + dt.logical.Quoted() + " WHERE " + keyWhere(dt.key, r.keyLits)
	}
	return out
}

func keyWhere(key, lits []string) string {
	parts := make([]string, len(key))
	for i, k := range key {
		parts[i] = quote.Ident(k) + " = " + lits[i]
	}
	return strings.Join(parts, " AND ")
}

func keyList(key []string) string {
	q := make([]string, len(key))
	for i, k := range key {
		q[i] = quote.Ident(k)
	}
	if len(q) == 1 {
		return q[0]
	}
	return "(" + strings.Join(q, ", ") + ")"
}

func keyTuple(lits []string) string {
	if len(lits) == 1 {
		return lits[0]
	}
	return "(" + strings.Join(lits, ", ") + ")"
}

// ownObjects are notes naming the stored routines and triggers the sandbox
// made that production does not have: an export does not carry them yet
// (nor routines and triggers it replaced), which the note says.
func (d *differ) ownObjects(ctx context.Context) ([]string, error) {
	logical := d.sb.LogicalDBs()
	// Routines live in one table (mysql.proc); triggers are read per
	// database by name (their table's, which the sandbox's tables name):
	// a pattern makes MariaDB read every database's directory.
	own := sandbox.SchemaPrefix(d.m.cfg.Prefix, d.sb.ID)
	q := "SELECT s.ROUTINE_TYPE, s.ROUTINE_SCHEMA, s.ROUTINE_NAME FROM information_schema.ROUTINES s WHERE s.ROUTINE_SCHEMA LIKE " + quote.LikePrefix(own)
	for _, db := range slices.Sorted(maps.Keys(logical)) {
		if !strings.HasPrefix(db, own) {
			continue
		}
		q += " UNION ALL SELECT 'TRIGGER', t.TRIGGER_SCHEMA, t.TRIGGER_NAME FROM information_schema.TRIGGERS t WHERE t.EVENT_OBJECT_SCHEMA = " +
			quote.String(db) + " AND t.TRIGGER_NAME NOT LIKE " + quote.LikePrefix(d.m.cfg.Prefix)
	}
	rows, err := d.c.Query(ctx, q+" ORDER BY 1, 2, 3")
	if err != nil {
		return nil, fmt.Errorf("list the sandbox's routines and triggers: %w", err)
	}
	var names []string
	for _, r := range rows {
		kind, db, name := sideconn.Str(r[0]), sideconn.Str(r[1]), sideconn.Str(r[2])
		if l, ok := logical[db]; ok {
			db = l
		}
		var q string
		if kind == "TRIGGER" {
			q = "SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE EVENT_OBJECT_SCHEMA = " + quote.String(db) + " AND TRIGGER_NAME = " + quote.String(name)
		} else {
			q = "SELECT COUNT(*) FROM information_schema.ROUTINES WHERE ROUTINE_TYPE = " + quote.String(kind) + " AND ROUTINE_SCHEMA = " +
				quote.String(db) + " AND ROUTINE_NAME = " + quote.String(name)
		}
		n, err := d.c.Query(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("look up %s %s.%s in production: %w", kind, db, name, err)
		}
		if len(n) == 1 && sideconn.Str(n[0][0]) == "0" {
			names = append(names, strings.ToLower(kind)+" "+quote.Ident(db)+"."+quote.Ident(name))
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	return []string{"not exported: stored routines and triggers the sandbox made (" + strings.Join(names, ", ") +
		"), or replaced: run their CREATE statements on production yourself"}, nil
}
