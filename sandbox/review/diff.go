package review

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/capture"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"github.com/sqlfork/sqlfork-proxy/tabledef"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// SANDBOX DIFF: what a sandbox changed, against production as of each
// table's fork. A captured fork (capture.go) is diffed three ways, by its
// key: the row at fork time (the side table), the sandbox's row (the fork)
// and production's row now. Only the rows the sandbox changed are read.
// Other tables are compared whole with production (method "compare"):
// forks without capture, tables without a key (compared as multisets of
// whole rows), tables the sandbox altered; a table the sandbox created has
// every row inserted. All is read on one side connection in one
// consistent snapshot.

// Diff methods, as DIFF shows them.
const (
	methodCapture = "capture"
	methodCompare = "compare"
	methodCreated = "created"
	methodDropped = "dropped"
	methodView    = "view" // a view: DDL only
	// methodSequence: a sequence the sandbox used; not diffed.
	methodSequence = "sequence"
)

// maxDiffRows bounds the rows of one DIFF or EXPORT answer, which the
// proxy holds in memory.
const maxDiffRows = 200000

// diffTable is one table of a sandbox's diff and how it is diffed.
type diffTable struct {
	logical rewrite.Table
	e       *sandbox.Entry
	capture capture.Info
	// fork is the shape of the sandbox's table, prod production's (prodOK
	// when production has the table), base production's when it was forked
	// (for a captured fork: production's columns changed since unless
	// base's are prod's).
	fork, prod, base forker.Shape
	prodOK           bool
	change           string // forked, created, dropped, altered
	method           string
	// key is the key rows are matched by (nil: whole rows), keyKind its
	// kind as DIFF shows it.
	key     []string
	keyKind string
	note    string
	// alterPre and alterPost are an altered table's ALTER TABLE
	// statements, before and after its rows (alterStatements).
	alterPre, alterPost []string
}

// diffRow is one changed row of a table (or one DDL statement).
type diffRow struct {
	op, conflictOp                 string // op: insert, update, delete, ddl; conflictOp "conflict" when production changed it too
	key, before, after, production *string
	// lits are, for EXPORT, the row's SQL literals: the key's (keyLits)
	// and every column's of the sandbox's row (afterLits, in the order of
	// the fork's stored columns).
	keyLits, afterLits []string
	// beforeLits are, for a captured fork, the literals of the row at fork
	// time (PROMOTE compares production's with them).
	beforeLits []string
	count      int // keyless: how many such rows (1 otherwise)
	// prodMissing: production has no row of the key (an update of a row
	// production deleted since the fork is written as an insert).
	prodMissing bool
	// theirs are the columns of an update a promote leaves as production
	// has them (THEIRS: both changed them, differently).
	theirs []int
}

// tableDiff is a table's changes.
type tableDiff struct {
	t *diffTable
	rowCounts
	conflicts, ddl int64
	rows           []diffRow
}

// rowCounts are the rows inserted, updated and deleted.
type rowCounts struct{ ins, upd, del int64 }

// add counts n rows of op (insert, update or delete).
func (rc *rowCounts) add(op string, n int64) {
	switch op {
	case "insert":
		rc.ins += n
	case "update":
		rc.upd += n
	case "delete":
		rc.del += n
	}
}

// differ reads diffs on one side connection.
type differ struct {
	m  *Reviewer
	c  sideconn.Conn
	sb *registry.Sandbox
	// dbs are the databases the sandbox made or dropped (exportPlan).
	dbs []dbDiff
	// export asks for the rows' literals too.
	export bool
	// budget is the rows still allowed in the answer.
	budget int
	// perTable, when set, caps each query of a table's changed rows at
	// that many (DiffRows).
	perTable int
}

// diffTables lists the tables of sb that a diff looks at (only: just that
// one, if set), ordered by name.
func (d *differ) diffTables(ctx context.Context, only *rewrite.Table) ([]*diffTable, error) {
	caps, err := d.m.caps.Load(ctx, d.c, d.sb.ID)
	if err != nil {
		return nil, err
	}
	entries := d.sb.Entries()
	slices.SortFunc(entries, func(a, b *sandbox.Entry) int {
		return cmp.Or(cmp.Compare(a.Logical.DB, b.Logical.DB), cmp.Compare(a.Logical.Name, b.Logical.Name))
	})
	var out []*diffTable
	for _, e := range entries {
		switch e.Kind {
		case sandbox.KindFork, sandbox.KindSchema, sandbox.KindCreated, sandbox.KindDropped:
		default:
			continue
		}
		if only != nil && d.m.names.Key(e.Logical) != d.m.names.Key(d.m.names.Norm(*only)) {
			continue
		}
		dt, err := d.plan(ctx, e, caps[d.m.names.Key(e.Logical)])
		if err != nil {
			return nil, err
		}
		if dt != nil {
			out = append(out, dt)
		}
	}
	return out, nil
}

// exists refuses, as the server would (1146), a DIFF FOR a table that
// neither the sandbox nor production has; one the sandbox did not change
// has an empty diff.
func (d *differ) exists(ctx context.Context, t rewrite.Table) error {
	t = d.m.names.Norm(t)
	if e, ok := d.sb.Resolve(d.m.names.Key(t)); ok && e.Kind != sandbox.KindDropped {
		return nil
	}
	switch _, err := forker.ReadShape(ctx, d.c, t); {
	case err == forker.ErrNoSource:
		return rewrite.Refuse(wire.ErNoSuchTable, "Table '%s' doesn't exist", tableName(t))
	default:
		return err
	}
}

// plan decides how e's table is diffed (nil: it has nothing to diff, as a
// table created then dropped in the sandbox).
func (d *differ) plan(ctx context.Context, e *sandbox.Entry, ci capture.Info) (*diffTable, error) {
	dt := &diffTable{logical: e.Logical, e: e, capture: ci, change: "forked"}
	var err error
	dt.prod, err = forker.ReadShape(ctx, d.c, e.Logical)
	switch {
	case err == nil:
		dt.prodOK = true
	case err != forker.ErrNoSource:
		return nil, err
	}
	if e.Kind == sandbox.KindDropped {
		if !dt.prodOK {
			return nil, nil
		}
		dt.change, dt.method, dt.keyKind = "dropped", methodDropped, dt.prod.KeyKind
		if dt.prod.View {
			dt.method, dt.keyKind = methodView, "view"
		}
		return dt, nil
	}
	dt.fork, err = forker.ReadShape(ctx, d.c, e.Phys)
	if err == forker.ErrNoSource {
		return nil, nil // dropped by a statement not refreshed yet
	} else if err != nil {
		return nil, err
	}
	if err := d.markJSON(ctx, e.Phys, &dt.fork); err != nil {
		return nil, err
	}
	if dt.fork.Sequence || dt.prodOK && dt.prod.Sequence {
		// Its values are not rows to diff: an export says so.
		dt.method, dt.keyKind, dt.note = methodSequence, "sequence", "a sequence: its next value is not exported"
		return dt, nil
	}
	if dt.fork.View {
		// A view the sandbox made (or made again): its definition only.
		dt.change, dt.method, dt.keyKind = "created", methodView, "view"
		if dt.prodOK {
			dt.change = "altered"
		}
		return dt, nil
	}
	if e.Kind == sandbox.KindCreated || !dt.prodOK {
		dt.change, dt.method = "created", methodCreated
		dt.key, dt.keyKind = dt.fork.Key, dt.fork.KeyKind
		return dt, nil
	}
	return d.planFork(ctx, dt, ci)
}

// planFork is plan for a fork of a production table: altered or not, by
// row (capture) or compared whole.
func (d *differ) planFork(ctx context.Context, dt *diffTable, ci capture.Info) (*diffTable, error) {
	switch {
	case strings.HasPrefix(ci.Reason, capture.SandboxDDL):
		// The sandbox's DDL: altered when its definition is not
		// production's (columns, keys, constraints, table options).
		var err error
		if dt.alterPre, dt.alterPost, err = d.alterStatements(ctx, dt); err != nil {
			return nil, err
		}
		if len(dt.alterPre)+len(dt.alterPost) > 0 {
			dt.change = "altered"
		}
	case !sameColumns(dt.fork, dt.prod):
		dt.note = "production's table changed since the fork; "
	}
	if ci.State == capture.Rows {
		dt.method, dt.key, dt.keyKind = methodCapture, ci.Key, ci.KeyKind
		dt.base = dt.fork
		if dt.change == "altered" {
			// The capture followed the sandbox's ALTER: production's
			// columns then are the fork's at the fork.
			dt.base = forker.Shape{Columns: ci.Base, Key: ci.Key}
		}
		return dt, nil
	}
	dt.method = methodCompare
	dt.note += cmp.Or(ci.Reason, "forked before changes were captured") + dt.newColumnsNote()
	// Rows are matched by a key both tables have: production's index makes
	// the match a join by key, not a scan per row.
	if len(dt.fork.Key) > 0 && slices.EqualFunc(dt.fork.Key, dt.prod.Key, strings.EqualFold) {
		dt.key, dt.keyKind = dt.fork.Key, dt.fork.KeyKind
	} else {
		dt.keyKind = "row"
	}
	return dt, nil
}

// newColumnsNote tells, for an altered table compared whole, which of its
// columns production lacks: rows are compared on the columns both have,
// so a row whose only change is in one of those is in no row of the diff,
// though PROMOTE … OVERWRITE writes every row whole ("" when there are
// none).
func (dt *diffTable) newColumnsNote() string {
	if dt.change != "altered" {
		return ""
	}
	var names []string
	for _, c := range dt.fork.Stored() {
		if _, ok := dt.prod.Column(c.Name); !ok {
			names = append(names, quote.Ident(c.Name))
		}
	}
	if len(names) == 0 {
		return ""
	}
	return "; rows are compared on the columns production has: a change only in " + strings.Join(names, ", ") +
		" (not in production) shows in no row, and OVERWRITE writes every row whole"
}

// whole reports an altered table compared whole: its rows are written
// whole (every row the sandbox has upserted, and deleted those it has not).
func (dt *diffTable) whole() bool { return dt.change == "altered" && dt.method == methodCompare }

// markJSON marks the JSON columns of s, t's shape: those MariaDB checks
// with json_valid (its JSON type is a LONGTEXT with that check).
func (d *differ) markJSON(ctx context.Context, t rewrite.Table, s *forker.Shape) error {
	rows, err := d.c.Query(ctx, "SELECT CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = "+
		quote.String(t.DB)+" AND TABLE_NAME = "+quote.String(t.Name)+" AND LEVEL = 'Column'")
	if err != nil {
		return fmt.Errorf("read the checks of %s: %w", t, err)
	}
	for _, r := range rows {
		m := jsonCheck.FindStringSubmatch(sideconn.Str(r[0]))
		if m == nil {
			continue
		}
		name := strings.ReplaceAll(m[1], "``", "`")
		for i := range s.Columns {
			if strings.EqualFold(s.Columns[i].Name, name) {
				s.Columns[i].JSON = true
			}
		}
	}
	return nil
}

// jsonCheck matches the column check of a JSON column.
var jsonCheck = regexp.MustCompile("^json_valid\\(`((?:[^`]|``)+)`\\)$")

// sameColumns reports whether two shapes have the same columns, types and
// key.
func sameColumns(a, b forker.Shape) bool {
	return slices.EqualFunc(a.Columns, b.Columns, func(x, y forker.Column) bool {
		return strings.EqualFold(x.Name, y.Name) && x.Type == y.Type && x.Generated == y.Generated
	}) && slices.EqualFunc(a.Key, b.Key, strings.EqualFold)
}

// shared are the stored columns of a that b has too.
func shared(a, b forker.Shape) []forker.Column {
	var out []forker.Column
	for _, c := range a.Stored() {
		if bc, ok := b.Column(c.Name); ok && !bc.Generated {
			out = append(out, c)
		}
	}
	return out
}

// col is alias.`name`.
func col(alias, name string) string { return alias + "." + quote.Ident(name) }

// eqSQL is true when rows x and y hold the same values in cols: bytes for
// character columns (a change of case is a change), typed otherwise.
func eqSQL(x, y string, cols []forker.Column) string {
	if len(cols) == 0 {
		return "TRUE"
	}
	parts := make([]string, len(cols))
	for i, c := range cols {
		a, b := col(x, c.Name), col(y, c.Name)
		if c.Charset != "" {
			a, b = "BINARY "+a, "BINARY "+b
		}
		parts[i] = a + " <=> " + b
	}
	return "(" + strings.Join(parts, " AND ") + ")"
}

// onSQL joins y to x by key.
func onSQL(x, y string, key []string) string {
	parts := make([]string, len(key))
	for i, k := range key {
		parts[i] = col(y, k) + " = " + col(x, k)
	}
	return strings.Join(parts, " AND ")
}

// jsonValue is column c of alias as a JSON value: bytes in base64, BIT
// as a number, text in UTF-8 (JSON_OBJECT refuses text of character sets
// it cannot mix, sjis beside latin1 say: 1271).
func jsonValue(alias string, c forker.Column) string {
	v := col(alias, c.Name)
	switch {
	case c.JSON:
		// As JSON also where the value's table lost the type (a side
		// table's LONGTEXT): one form in every image.
		return "JSON_EXTRACT(" + v + ", '$')"
	case c.DataType == "bit":
		return "CAST(" + v + " AS UNSIGNED)"
	case c.Binary():
		return "TO_BASE64(" + v + ")"
	case c.Charset != "" && c.DataType != "json" && !strings.EqualFold(c.Charset, "utf8mb4"):
		return "CONVERT(" + v + " USING utf8mb4)"
	}
	return v
}

// jsonSQL is the JSON object of cols of alias.
func jsonSQL(alias string, cols []forker.Column) string {
	parts := make([]string, 0, 2*len(cols))
	for _, c := range cols {
		parts = append(parts, quote.String(c.Name), jsonValue(alias, c))
	}
	return "JSON_OBJECT(" + strings.Join(parts, ", ") + ")"
}

// litSQL is column c of alias as an SQL literal that gives its value back
// whatever the sql_mode and character set it is read in (as quote.String):
// text of printable ASCII but quotes and backslashes quoted, any other text
// in hexadecimal with its character set's introducer (its own bytes, so
// that every character set round-trips), bytes in hexadecimal, a DOUBLE's
// digits for FLOAT, NULL for NULL. checkLiterals checks what the server
// gave.
func litSQL(alias string, c forker.Column) string {
	v := col(alias, c.Name)
	switch {
	case c.DataType == "bit":
		return "IFNULL(CAST(" + v + " AS UNSIGNED), 'NULL')"
	case c.Binary():
		return "IF(" + v + " IS NULL, 'NULL', CONCAT('X''', HEX(" + v + "), ''''))"
	case c.Float():
		return "QUOTE(CAST(" + v + " AS DOUBLE))"
	case exactNumber(c.DataType):
		return "IFNULL(CAST(" + v + " AS CHAR), 'NULL')"
	case c.Charset != "" && introducer.MatchString(c.Charset) && notASCII[c.Charset]:
		return "IF(" + v + " IS NULL, 'NULL', CONCAT('_" + c.Charset + " X''', HEX(" + v + "), ''''))"
	case c.Charset != "" && introducer.MatchString(c.Charset):
		return "IF(" + v + " IS NULL, 'NULL', IF(HEX(" + v + ") REGEXP '" + plainHex + "', CONCAT('''', " + v + ", ''''), " +
			"CONCAT('_" + c.Charset + " X''', HEX(" + v + "), '''')))"
	}
	return "QUOTE(" + v + ")"
}

// plainHex matches the HEX() of text whose bytes are printable ASCII but
// the quote (27) and the backslash (5C): quoted as they are, they read the
// same in every sql_mode.
const plainHex = "^(2[0-689A-F]|[346][0-9A-F]|5[0-9ABD-F]|7[0-9A-E])*$"

// freeAlias is base, with underscores after it until no column of cols
// has the name: an alias of the proxy's own beside the table's columns.
func freeAlias(base string, cols []forker.Column) string {
	for slices.ContainsFunc(cols, func(c forker.Column) bool { return strings.EqualFold(c.Name, base) }) {
		base += "_"
	}
	return base
}

// notASCII are the character sets whose bytes of printable ASCII are not
// all ASCII's characters (swe7 has letters at [ \ ] { | }): their text is
// always written in hexadecimal.
var notASCII = map[string]bool{"swe7": true}

// introducer matches the character set names that are an introducer's.
var introducer = regexp.MustCompile(`^[a-z0-9]+$`)

// safeLiteral matches the literals litSQL gives: NULL, a number, plain
// quoted text, bytes or text in hexadecimal. A value the proxy writes into
// SQL is data only if it has one of these forms; anything else is refused.
var safeLiteral = regexp.MustCompile(`^(NULL|-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?|'[ -&(-\[\]-~]*'|(_[a-z0-9]+ )?X'[0-9A-F]*')$`)

// checkLiterals refuses a row whose literals are not all safeLiteral's.
func checkLiterals(t rewrite.Table, lits []string) error {
	for _, l := range lits {
		if !safeLiteral.MatchString(l) {
			return fmt.Errorf("diff %s: a value the server gave as %.40q is not a literal the proxy writes: refused", t, l)
		}
	}
	return nil
}

// exactNumber reports integer and DECIMAL types, whose text is their value.
func exactNumber(dataType string) bool {
	switch dataType {
	case "tinyint", "smallint", "mediumint", "int", "integer", "bigint", "decimal", "numeric":
		return true
	}
	return false
}

// keyColumns are the columns of key in shape s.
func keyColumns(s forker.Shape, key []string) []forker.Column {
	out := make([]forker.Column, 0, len(key))
	for _, k := range key {
		if c, ok := s.Column(k); ok {
			out = append(out, c)
		}
	}
	return out
}

// selectList builds a query's select list: the op, key, before, after and
// production JSON, then (export) the key's and the sandbox row's literals.
type selectList struct {
	exprs []string
}

func (l *selectList) add(e ...string) { l.exprs = append(l.exprs, e...) }

func (l *selectList) String() string { return strings.Join(l.exprs, ", ") }

// diffOne reads the changes of one table.
func (d *differ) diffOne(ctx context.Context, dt *diffTable, detail bool) (*tableDiff, error) {
	td := &tableDiff{t: dt}
	switch dt.method {
	case methodSequence:
		return td, nil
	case methodDropped, methodView:
		td.ddl = 1
		return td, nil
	case methodCreated:
		td.ddl = 1
		return td, d.created(ctx, td, detail)
	case methodCapture:
		if dt.change == "altered" {
			td.ddl = 1
		}
		return td, d.captured(ctx, td, detail)
	}
	if dt.change == "altered" {
		td.ddl = 1
	}
	if dt.key == nil {
		return td, d.rowsCompared(ctx, td, detail)
	}
	return td, d.keysCompared(ctx, td, detail)
}

// query runs q and counts its rows against the answer's budget, or, with
// a cap of rows per table (perTable), answers that many at most.
func (d *differ) query(ctx context.Context, q string, limited bool) ([][]*string, error) {
	if limited && d.perTable > 0 {
		q += " LIMIT " + strconv.Itoa(min(d.perTable, d.budget+1))
	} else if limited {
		q += " LIMIT " + strconv.Itoa(d.budget+1)
	}
	rows, err := d.c.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	if limited {
		if len(rows) > d.budget {
			return nil, rewrite.Refuse(wire.ErUnknown, "the diff has more than %d rows; use SANDBOX DIFF SUMMARY or "+
				"SANDBOX DIFF … FOR db.table", maxDiffRows)
		}
		d.budget -= len(rows)
	}
	return rows, nil
}

// rowTail adds, for export, the literals of the key (from alias ka) and of
// the sandbox's row (alias fa; NULLs when it has none).
func (d *differ) rowTail(l *selectList, dt *diffTable, ka, fa string) {
	if !d.export {
		return
	}
	for _, c := range keyColumns(dt.fork, dt.key) {
		l.add(litSQL(ka, c))
	}
	for _, c := range dt.fork.Stored() {
		l.add(litSQL(fa, c))
	}
	if dt.method == methodCapture {
		for _, c := range dt.fork.Stored() {
			l.add(litSQL("c", c))
		}
	}
}

// scan turns a query's rows (op, key, before, after, production, then
// the literals of rowTail) into td's rows.
func (d *differ) scan(td *tableDiff, rows [][]*string, conflictCol bool) error {
	nk := len(keyColumns(td.t.fork, td.t.key))
	for _, r := range rows {
		dr := diffRow{op: sideconn.Str(r[0]), key: r[1], before: r[2], after: r[3], production: r[4], count: 1}
		i := 5
		if conflictCol {
			if sideconn.Str(r[5]) == "1" {
				dr.conflictOp = "conflict"
			}
			dr.prodMissing = sideconn.Str(r[6]) == "1"
			i = 7
		}
		if d.export {
			for j := range nk {
				dr.keyLits = append(dr.keyLits, sideconn.Str(r[i+j]))
			}
			ns := len(td.t.fork.Stored())
			for _, v := range r[i+nk : i+nk+ns] {
				dr.afterLits = append(dr.afterLits, sideconn.Str(v))
			}
			for _, v := range r[i+nk+ns:] {
				dr.beforeLits = append(dr.beforeLits, sideconn.Str(v))
			}
		}
		if err := checkLiterals(td.t.logical, slices.Concat(dr.keyLits, dr.afterLits, dr.beforeLits)); err != nil {
			return err
		}
		td.count(dr)
		td.rows = append(td.rows, dr)
	}
	return nil
}

func (td *tableDiff) count(dr diffRow) {
	td.add(dr.op, int64(dr.count))
	if dr.conflictOp != "" {
		td.conflicts++
	}
}

// captured diffs a captured fork three ways.
func (d *differ) captured(ctx context.Context, td *tableDiff, detail bool) error {
	dt := td.t
	side := dt.capture.Side.Quoted()
	marker := col("c", d.m.cfg.Prefix+"_existed")
	cols := dt.fork.Stored()
	if len(dt.fork.Key) == 0 || len(dt.key) == 0 || len(keyColumns(dt.fork, dt.key)) != len(dt.key) {
		return fmt.Errorf("the capture key of %s is gone", dt.logical)
	}
	k0 := dt.key[0]
	// Production's table, or an empty one like the fork when production
	// no longer has the key (dropped, or altered since the fork).
	prod := dt.logical.Quoted()
	rcols := shared(dt.fork, dt.prod)
	if len(keyColumns(dt.prod, dt.key)) != len(dt.key) {
		prod, rcols = "(SELECT * FROM "+dt.e.Phys.Quoted()+" LIMIT 0)", cols
	}
	ourOp := "CASE WHEN " + marker + " = 0 THEN 'insert' WHEN " + col("f", k0) + " IS NULL THEN 'delete' ELSE 'update' END"
	conflict := conflictSQL(marker, k0, rcols)
	from := " FROM " + side + " c LEFT JOIN " + dt.e.Phys.Quoted() + " f ON " + onSQL("c", "f", dt.key) +
		" LEFT JOIN " + prod + " r ON " + onSQL("c", "r", dt.key) +
		" WHERE (" + marker + " = 0 AND " + col("f", k0) + " IS NOT NULL) OR (" + marker + " = 1 AND (" + col("f", k0) +
		" IS NULL OR NOT " + eqSQL("c", "f", cols) + "))"
	if !detail {
		rows, err := d.query(ctx, "SELECT op, SUM(cf), COUNT(*) FROM (SELECT "+ourOp+" op, "+conflict+" cf"+from+") d GROUP BY op", false)
		if err != nil {
			return fmt.Errorf("diff %s: %w", dt.logical, err)
		}
		for _, r := range rows {
			td.add(sideconn.Str(r[0]), sideconn.Num(r[2])) // one row per op
			td.conflicts += sideconn.Num(r[1])
		}
		return nil
	}
	l := &selectList{}
	l.add(ourOp, jsonSQL("c", keyColumns(dt.fork, dt.key)), "IF("+marker+" = 1, "+jsonSQL("c", cols)+", NULL)",
		"IF("+col("f", k0)+" IS NULL, NULL, "+jsonSQL("f", cols)+")",
		"IF("+conflict+" AND "+col("r", k0)+" IS NOT NULL, "+jsonSQL("r", rcols)+", NULL)", conflict, col("r", k0)+" IS NULL")
	d.rowTail(l, dt, "c", "f")
	order := make([]string, len(dt.key))
	for i, k := range dt.key {
		order[i] = col("c", k)
	}
	rows, err := d.query(ctx, "SELECT "+l.String()+from+" ORDER BY "+strings.Join(order, ", "), true)
	if err != nil {
		return fmt.Errorf("diff %s: %w", dt.logical, err)
	}
	return d.scan(td, rows, true)
}

// conflictSQL is true for a captured row (side table c, its marker, the
// fork f, production r, matched by key column k0) that both the sandbox
// and production changed since the fork, differently, as a three-way
// merge by cell sees it: both inserted the key, with other values; the
// sandbox deleted a row production changed, or changed a row production
// deleted; or both changed one column (of cols) to different values.
// Changes to different columns of a row merge: no conflict.
func conflictSQL(marker, k0 string, cols []forker.Column) string {
	cells := make([]string, 0, len(cols))
	for _, c := range cols {
		b, f, r := col("c", c.Name), col("f", c.Name), col("r", c.Name)
		if c.Charset != "" {
			b, f, r = "BINARY "+b, "BINARY "+f, "BINARY "+r
		}
		cells = append(cells, "(NOT "+b+" <=> "+f+" AND NOT "+b+" <=> "+r+" AND NOT "+f+" <=> "+r+")")
	}
	cell := "FALSE"
	if len(cells) > 0 {
		cell = "(" + strings.Join(cells, " OR ") + ")"
	}
	fk, rk := col("f", k0), col("r", k0)
	return "(CASE WHEN " + marker + " = 0 THEN " + rk + " IS NOT NULL AND NOT " + eqSQL("f", "r", cols) +
		" WHEN " + fk + " IS NULL THEN " + rk + " IS NOT NULL AND NOT " + eqSQL("c", "r", cols) +
		" WHEN " + rk + " IS NULL THEN TRUE ELSE " + cell + " END)"
}

// created lists every row of a table the sandbox created as inserted.
func (d *differ) created(ctx context.Context, td *tableDiff, detail bool) error {
	dt := td.t
	if !detail {
		rows, err := d.query(ctx, "SELECT COUNT(*) FROM "+dt.e.Phys.Quoted(), false)
		if err != nil {
			return fmt.Errorf("diff %s: %w", dt.logical, err)
		}
		td.ins = sideconn.Num(rows[0][0])
		return nil
	}
	cols := dt.fork.Stored()
	keyCols := keyColumns(dt.fork, dt.key)
	if len(keyCols) == 0 {
		keyCols = cols
	}
	l := &selectList{}
	l.add("'insert'", jsonSQL("f", keyCols), "NULL", jsonSQL("f", cols), "NULL")
	d.rowTail(l, dt, "f", "f")
	rows, err := d.query(ctx, "SELECT "+l.String()+" FROM "+dt.e.Phys.Quoted()+" f"+orderByCols("f", keyCols), true)
	if err != nil {
		return fmt.Errorf("diff %s: %w", dt.logical, err)
	}
	return d.scan(td, rows, false)
}

func orderByCols(alias string, cols []forker.Column) string {
	if len(cols) == 0 {
		return ""
	}
	o := make([]string, len(cols))
	for i, c := range cols {
		o[i] = col(alias, c.Name)
	}
	return " ORDER BY " + strings.Join(o, ", ")
}

// keysCompared compares a fork with production by a key both have: rows
// only the fork has are inserted, rows only production has deleted, rows
// whose shared columns differ updated.
func (d *differ) keysCompared(ctx context.Context, td *tableDiff, detail bool) error {
	dt := td.t
	cols, rcols := dt.fork.Stored(), shared(dt.fork, dt.prod)
	k0 := dt.key[0]
	f, r := dt.e.Phys.Quoted(), dt.logical.Quoted()
	keyCols := keyColumns(dt.fork, dt.key)
	if !detail {
		q := "SELECT (SELECT COUNT(*) FROM " + f + " f LEFT JOIN " + r + " r ON " + onSQL("f", "r", dt.key) + " WHERE " + col("r", k0) + " IS NULL), " +
			"(SELECT COUNT(*) FROM " + f + " f JOIN " + r + " r ON " + onSQL("f", "r", dt.key) + " WHERE NOT " + eqSQL("f", "r", rcols) + "), " +
			"(SELECT COUNT(*) FROM " + r + " r LEFT JOIN " + f + " f ON " + onSQL("r", "f", dt.key) + " WHERE " + col("f", k0) + " IS NULL)"
		rows, err := d.query(ctx, q, false)
		if err != nil {
			return fmt.Errorf("diff %s: %w", dt.logical, err)
		}
		td.ins, td.upd, td.del = sideconn.Num(rows[0][0]), sideconn.Num(rows[0][1]), sideconn.Num(rows[0][2])
		return nil
	}
	part := func(op, from, ka, before, after, fa string) string {
		l := &selectList{}
		l.add("'"+op+"'", jsonSQL(ka, keyCols), before, after, "NULL")
		d.rowTail(l, dt, ka, fa)
		return "SELECT " + l.String() + from
	}
	rjson := jsonSQL("r", rcols)
	q := part("insert", " FROM "+f+" f LEFT JOIN "+r+" r ON "+onSQL("f", "r", dt.key)+" WHERE "+col("r", k0)+" IS NULL", "f", "NULL", jsonSQL("f", cols), "f") +
		" UNION ALL " + part("update", " FROM "+f+" f JOIN "+r+" r ON "+onSQL("f", "r", dt.key)+" WHERE NOT "+eqSQL("f", "r", rcols), "f", rjson, jsonSQL("f", cols), "f") +
		" UNION ALL " + part("delete", " FROM "+r+" r LEFT JOIN "+f+" f ON "+onSQL("r", "f", dt.key)+" WHERE "+col("f", k0)+" IS NULL", "r", rjson, "NULL", "f")
	rows, err := d.query(ctx, q+" ORDER BY 2", true)
	if err != nil {
		return fmt.Errorf("diff %s: %w", dt.logical, err)
	}
	return d.scan(td, rows, false)
}

// rowsCompared compares a table without a key both have as multisets of
// whole rows (their shared columns): a row more in the fork is inserted,
// a row more in production deleted.
func (d *differ) rowsCompared(ctx context.Context, td *tableDiff, detail bool) error {
	dt := td.t
	cols := shared(dt.fork, dt.prod)
	if len(cols) == 0 {
		return fmt.Errorf("diff %s: the sandbox's table and production's share no column", dt.logical)
	}
	names := make([]string, len(cols))
	group := make([]string, len(cols))
	pick := make([]string, len(cols))
	for i, c := range cols {
		names[i] = quote.Ident(c.Name)
		group[i] = col("x", c.Name)
		if c.Charset != "" {
			group[i] = "BINARY " + group[i]
		}
		pick[i] = "MIN(" + col("x", c.Name) + ") AS " + quote.Ident(c.Name)
	}
	list := strings.Join(names, ", ")
	n := quote.Ident(freeAlias("sqlfork_n", cols)) // the rows' count, named as no column is
	inner := "SELECT " + strings.Join(pick, ", ") + ", SUM(x." + n + ") AS " + n + " FROM (SELECT " + list + ", 1 AS " + n + " FROM " +
		dt.e.Phys.Quoted() + " UNION ALL SELECT " + list + ", -1 FROM " + dt.logical.Quoted() + ") x GROUP BY " + strings.Join(group, ", ") +
		" HAVING SUM(x." + n + ") <> 0"
	if !detail {
		rows, err := d.query(ctx, "SELECT SUM(GREATEST("+n+", 0)), SUM(GREATEST(-"+n+", 0)) FROM ("+inner+") d", false)
		if err != nil {
			return fmt.Errorf("diff %s: %w", dt.logical, err)
		}
		td.ins, td.del = sideconn.Num(rows[0][0]), sideconn.Num(rows[0][1])
		return nil
	}
	l := &selectList{}
	l.add("IF(d."+n+" > 0, 'insert', 'delete')", jsonSQL("d", cols), "IF(d."+n+" < 0, "+jsonSQL("d", cols)+", NULL)",
		"IF(d."+n+" > 0, "+jsonSQL("d", cols)+", NULL)", "NULL", "ABS(d."+n+")")
	if d.export {
		for _, c := range cols {
			l.add(litSQL("d", c))
		}
	}
	rows, err := d.query(ctx, "SELECT "+l.String()+" FROM ("+inner+") d ORDER BY 2", true)
	if err != nil {
		return fmt.Errorf("diff %s: %w", dt.logical, err)
	}
	for _, r := range rows {
		n, _ := strconv.Atoi(sideconn.Str(r[5]))
		if d.budget -= n - 1; d.budget < 0 { // each of the n rows is one of the answer's
			return rewrite.Refuse(wire.ErUnknown, "the diff has more than %d rows; use SANDBOX DIFF SUMMARY or SANDBOX DIFF … FOR db.table", maxDiffRows)
		}
		dr := diffRow{op: sideconn.Str(r[0]), key: r[1], before: r[2], after: r[3], count: n}
		if d.export {
			for _, v := range r[6:] {
				dr.afterLits = append(dr.afterLits, sideconn.Str(v))
			}
			if err := checkLiterals(dt.logical, dr.afterLits); err != nil {
				return err
			}
		}
		td.count(dr)
		td.rows = append(td.rows, dr)
	}
	return nil
}

// ddl is the statement that makes production's table what the sandbox's
// is, for a created, dropped or altered table ("" for none).
func (d *differ) ddl(ctx context.Context, dt *diffTable) (string, error) {
	switch {
	case dt.method == methodView && dt.change == "dropped":
		return "DROP VIEW IF EXISTS " + dt.logical.Quoted(), nil
	case dt.method == methodView:
		return d.createView(ctx, dt)
	}
	switch dt.change {
	case "dropped":
		return "DROP TABLE IF EXISTS " + dt.logical.Quoted(), nil
	case "created":
		text, err := d.createTable(ctx, dt.e.Phys)
		if err != nil {
			return "", err
		}
		name := quote.Ident(dt.e.Phys.Name)
		rest, ok := strings.CutPrefix(text, "CREATE TABLE "+name)
		if !ok {
			return "", fmt.Errorf("read the definition of %s: unexpected %.60q", dt.logical, text)
		}
		return "CREATE TABLE IF NOT EXISTS " + dt.logical.Quoted() + d.logicalNames(rest), nil
	case "altered":
		return d.alter(dt), nil
	}
	return "", nil
}

// createTable is SHOW CREATE TABLE t's text.
func (d *differ) createTable(ctx context.Context, t rewrite.Table) (string, error) {
	rows, err := d.c.Query(ctx, "SHOW CREATE TABLE "+t.Quoted())
	if err != nil {
		return "", fmt.Errorf("read the definition of %s: %w", t, err)
	}
	if len(rows) != 1 || len(rows[0]) < 2 {
		return "", fmt.Errorf("read the definition of %s: no row", t)
	}
	return sideconn.Str(rows[0][1]), nil
}

// logicalNames tells the sandbox's databases in text back as the
// databases they stand for.
func (d *differ) logicalNames(text string) string {
	return tabledef.ReplaceQualifiers(text, d.sb.LogicalDBs())
}

// viewHead is what SHOW CREATE VIEW writes before VIEW: ALGORITHM, DEFINER
// and SQL SECURITY clauses.
var viewHead = regexp.MustCompile("^CREATE (ALGORITHM=\\w+ )?(DEFINER=`(?:[^`]|``)*`@`(?:[^`]|``)*` )?(SQL SECURITY \\w+ )?VIEW ")

// createView is CREATE OR REPLACE VIEW of the sandbox's view, its names
// told back, without its DEFINER and with SQL SECURITY INVOKER: it reads
// with the rights of whoever reads it, never with those of the account that
// ran the export (the promote account, say).
func (d *differ) createView(ctx context.Context, dt *diffTable) (string, error) {
	rows, err := d.c.Query(ctx, "SHOW CREATE VIEW "+dt.e.Phys.Quoted())
	if err != nil {
		return "", fmt.Errorf("read the definition of %s: %w", dt.logical, err)
	}
	if len(rows) != 1 || len(rows[0]) < 2 {
		return "", fmt.Errorf("read the definition of %s: no row", dt.logical)
	}
	text := sideconn.Str(rows[0][1])
	m := viewHead.FindStringSubmatch(text)
	if m == nil {
		return "", fmt.Errorf("read the definition of %s: unexpected %.60q", dt.logical, text)
	}
	rest := strings.TrimPrefix(text[len(m[0]):], dt.e.Phys.Quoted())
	return "CREATE OR REPLACE " + m[1] + "SQL SECURITY INVOKER VIEW " + dt.logical.Quoted() + d.logicalNames(rest), nil
}
