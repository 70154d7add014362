package integration

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/integration/testdb"
	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// SANDBOX DIFF / EXPORT / PROMOTE end to end. What a sandbox changed is
// checked against what the test computes itself: the sandbox's tables read
// through the proxy and production's read directly (production is idle
// while a workload runs, so the difference of the two is exactly the
// sandbox's changes). An export is applied to a second MariaDB holding a
// copy of production as it was at the fork (the replica; the export names
// tables with their production database), which must then hold what the
// sandbox holds.

// diffAccount is a way into sandboxes through one of the test's proxies.
type diffAccount struct {
	name string
	h    *proxyHandle
	// user and password log in to the proxy (a tag may follow the user).
	user, password string
	// dsn is a connection's DSN in database db, in the sandbox tag names
	// (none when tag is "").
	dsn func(tag, db string) string
}

// diffEnv is production (the shared server) behind a proxy logging in
// with the least-privilege account and one with an ALL PRIVILEGES account,
// and, when asked for, a replica server.
type diffEnv struct {
	prod, replica *testdb.Server
	accts         []diffAccount
}

// newDiffEnv starts the proxies in mode (mutate changes both configs) and
// the replica if replica is set.
func newDiffEnv(t *testing.T, mode string, replica bool, mutate func(*proxy.Config)) *diffEnv {
	t.Helper()
	prod, least := sandboxProxy(t, mode, mutate)
	all := startTestProxy(t, prod.Addr, prod, func(c *proxy.Config) {
		c.Mode = mode
		c.Sandbox.ReapInterval = 500 * time.Millisecond
		if mutate != nil {
			mutate(c)
		}
	})
	tagged := func(user, tag string) string {
		if tag == "" {
			return user
		}
		return user + "+" + tag
	}
	e := &diffEnv{prod: prod, accts: []diffAccount{
		{"least-privilege", least, sandboxUser, sandboxPassword, func(tag, db string) string { return least.userDSN(tagged(sandboxUser, tag), db) }},
		{"all-privileges", all, prod.User, prod.Password, func(tag, db string) string {
			return fmt.Sprintf("%s:%s@tcp(%s)/%s", tagged(prod.User, tag), prod.Password, all.addr, db)
		}},
	}}
	if replica {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		e.replica = testdb.StartForTest(ctx, t, testdb.Options{})
	}
	return e
}

// database makes database name from schema on production and on the
// replica (if any), lets the least-privilege account read it (and see its
// triggers), and drops it when the test ends.
func (e *diffEnv) database(t *testing.T, name, schema string) {
	t.Helper()
	for _, srv := range []*testdb.Server{e.prod, e.replica} {
		if srv == nil {
			continue
		}
		root := openDB(t, srv.DSN("")+"?multiStatements=true")
		if _, err := root.Exec("DROP DATABASE IF EXISTS `" + name + "`; CREATE DATABASE `" + name +
			"` CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci; USE `" + name + "`;" + schema); err != nil {
			t.Fatalf("database %s: %v", name, err)
		}
		t.Cleanup(func() { _, _ = root.Exec("DROP DATABASE IF EXISTS `" + name + "`") })
	}
	root := openDB(t, e.prod.DSN(""))
	mustExecDB(t, root, "GRANT SELECT, SHOW VIEW, TRIGGER ON `"+name+"`.* TO '"+sandboxUser+"'@'%'")
	t.Cleanup(func() { _, _ = root.Exec("REVOKE ALL PRIVILEGES ON `" + name + "`.* FROM '" + sandboxUser + "'@'%'") })
}

// short is the account's name up to its first '-', for the names of what a
// test makes for it.
func (a diffAccount) short() string { return strings.Split(a.name, "-")[0] }

// eachAccount runs, for each account, a subtest named after it with a
// connection of the sandbox named db, in database db: prefix and the
// account's short name, made with schema.
func (e *diffEnv) eachAccount(t *testing.T, prefix, schema string, run func(t *testing.T, db string, sb *sql.Conn)) {
	for _, acct := range e.accts {
		t.Run(acct.name, func(t *testing.T) {
			db := prefix + acct.short()
			e.database(t, db, schema)
			run(t, db, conn(t, openDB(t, acct.dsn(db, db))))
		})
	}
}

// promoteRights: SANDBOX PROMOTE applies only what the promoting user's
// own account may do on production. The least-privilege account, which
// only reads production, is refused (1142, naming what it lacks) and
// production's tables of dbs stay as they were; it is then given the
// rights of a writer on dbs, for the rest of the test. The ALL PRIVILEGES
// account has them already.
func promoteRights(t *testing.T, root *sql.DB, acct diffAccount, c execer, dbs ...string) {
	t.Helper()
	promoteRightsFor(t, root, acct, c, "SANDBOX PROMOTE STRATEGY OURS", dbs...)
}

// execer runs statements.
type execer interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}

// promoteRightsFor is promoteRights with promote the statement refused.
func promoteRightsFor(t *testing.T, root *sql.DB, acct diffAccount, c execer, promote string, dbs ...string) {
	t.Helper()
	if acct.name != "least-privilege" {
		return
	}
	before := map[string]string{}
	for _, d := range dbs {
		before[d] = strings.Join(tableNames(t, root, d), ",") + ":" + databaseChecksum(t, root, d)
	}
	_, err := c.ExecContext(context.Background(), promote)
	if e := mysqlErr(err); !strings.HasPrefix(e, "1142 (42000)") || !strings.Contains(e, "may not do on production") {
		t.Errorf("PROMOTE by an account that only reads production: %s, want 1142 naming what it lacks", e)
	}
	for _, d := range dbs {
		if after := strings.Join(tableNames(t, root, d), ",") + ":" + databaseChecksum(t, root, d); after != before[d] {
			t.Errorf("a PROMOTE refused for its rights changed production's %s", d)
		}
		grant := "INSERT, UPDATE, DELETE, CREATE, DROP, ALTER, INDEX, CREATE VIEW ON `" + d + "`.* TO '" + sandboxUser + "'@'%'"
		mustExecDB(t, root, "GRANT "+grant)
		t.Cleanup(func() { _, _ = root.Exec("REVOKE " + strings.Replace(grant, " TO ", " FROM ", 1)) })
	}
}

// databaseChecksum is CHECKSUM TABLE of every base table of db, in order.
func databaseChecksum(t *testing.T, root *sql.DB, db string) string {
	t.Helper()
	_, rows := queryRows(t, root, "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = '"+db+"' AND TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_NAME")
	var sums []string
	for _, r := range rows {
		_, cs := queryRows(t, root, "CHECKSUM TABLE `"+db+"`.`"+r[0].String+"`")
		sums = append(sums, r[0].String+"="+cs[0][1].String)
	}
	return strings.Join(sums, " ")
}

// rowQuerier is a connection or pool.
type rowQuerier interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}

// queryRows runs q and returns its rows as nullable strings.
func queryRows(t *testing.T, c rowQuerier, q string) ([]string, [][]sql.NullString) {
	t.Helper()
	rows, err := c.QueryContext(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %s", q, mysqlErr(err))
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]sql.NullString
	for rows.Next() {
		vals, err := scanStrings(rows)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, vals)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %s", q, mysqlErr(err))
	}
	return cols, out
}

// rowText is a row as one comparable line.
func rowText(vals []sql.NullString) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = "NULL"
		if v.Valid {
			parts[i] = strconv.Quote(v.String)
		}
	}
	return strings.Join(parts, ",")
}

// diffSpec is a table of a diff test: its key, its columns, and how DIFF
// SUMMARY says it is diffed.
type diffSpec struct {
	name string
	key  []string // nil: no key (rows compared as a multiset)
	ci   bool     // the key compares case-insensitively
	// binKey: the key's values are bytes (base64 in DIFF's JSON).
	binKey bool
	cols   []string
	// keyKind and method are DIFF SUMMARY's.
	keyKind, method string
	// json: DIFF's before and after are checked column by column (the
	// table has only columns whose text JSON gives back as is).
	json bool
}

// dumpedRow is a row read by a spec: its key (for keyed tables), its
// values in the spec's column order, and as one line.
type dumpedRow struct {
	key  string
	vals []sql.NullString
	line string
}

// readSpec reads every row of db.<spec> on c.
func readSpec(t *testing.T, c rowQuerier, db string, s diffSpec) []dumpedRow {
	t.Helper()
	cols := make([]string, len(s.cols))
	for i, n := range s.cols {
		cols[i] = "`" + n + "`"
	}
	_, rows := queryRows(t, c, "SELECT "+strings.Join(cols, ", ")+" FROM `"+db+"`.`"+s.name+"`")
	out := make([]dumpedRow, 0, len(rows))
	for _, r := range rows {
		d := dumpedRow{vals: r, line: rowText(r)}
		if s.key != nil {
			parts := make([]string, len(s.key))
			for i, k := range s.key {
				parts[i] = r[slices.Index(s.cols, k)].String
			}
			d.key = strings.Join(parts, "\x1f")
			if s.ci {
				d.key = strings.ToLower(d.key)
			}
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].line < out[j].line })
	return out
}

// wantDiff is a table's expected changes.
type wantDiff struct {
	ins, upd, del int64
	ops           map[string]string // key -> insert, update, delete
	prod, sb      map[string]dumpedRow
}

func (w wantDiff) total() int64 { return w.ins + w.upd + w.del }

// expectDiff is the difference of the sandbox's rows from production's:
// by key, or as multisets of rows for a table without one.
func expectDiff(s diffSpec, prod, sb []dumpedRow) wantDiff {
	w := wantDiff{ops: map[string]string{}, prod: map[string]dumpedRow{}, sb: map[string]dumpedRow{}}
	if s.key == nil {
		n := map[string]int64{}
		for _, r := range sb {
			n[r.line]++
		}
		for _, r := range prod {
			n[r.line]--
		}
		for _, v := range n {
			if v > 0 {
				w.ins += v
			} else {
				w.del -= v
			}
		}
		return w
	}
	for _, r := range prod {
		w.prod[r.key] = r
	}
	for _, r := range sb {
		w.sb[r.key] = r
		old, ok := w.prod[r.key]
		switch {
		case !ok:
			w.ins++
			w.ops[r.key] = "insert"
		case old.line != r.line:
			w.upd++
			w.ops[r.key] = "update"
		}
	}
	for k := range w.prod {
		if _, ok := w.sb[k]; !ok {
			w.del++
			w.ops[k] = "delete"
		}
	}
	return w
}

// sumRow is a row of SANDBOX DIFF SUMMARY.
type sumRow struct {
	change                   string
	ins, upd, del, conflicts int64
	keyKind, method, note    string
}

var diffSummaryCols = "table_name,change,rows_inserted,rows_updated,rows_deleted,conflicts,key_kind,method,note"

// diffSummary runs a SANDBOX DIFF SUMMARY statement, by table.
func diffSummary(t *testing.T, c rowQuerier, q string) map[string]sumRow {
	t.Helper()
	cols, rows := queryRows(t, c, q)
	if got := strings.Join(cols, ","); got != diffSummaryCols {
		t.Fatalf("%s: columns %s, want %s", q, got, diffSummaryCols)
	}
	out := map[string]sumRow{}
	for _, r := range rows {
		n := func(i int) int64 {
			v, err := strconv.ParseInt(r[i].String, 10, 64)
			if err != nil {
				t.Fatalf("%s: column %d of %v: %v", q, i, r, err)
			}
			return v
		}
		if _, dup := out[r[0].String]; dup {
			t.Errorf("%s: table %s listed twice", q, r[0].String)
		}
		out[r[0].String] = sumRow{change: r[1].String, ins: n(2), upd: n(3), del: n(4), conflicts: n(5), keyKind: r[6].String,
			method: r[7].String, note: r[8].String}
	}
	return out
}

// detailRow is a row of SANDBOX DIFF.
type detailRow struct {
	table, op                      string
	key, before, after, production sql.NullString
}

var diffDetailCols = "table_name,op,key,before,after,production"

// diffDetail runs a SANDBOX DIFF statement.
func diffDetail(t *testing.T, c rowQuerier, q string) []detailRow {
	t.Helper()
	cols, rows := queryRows(t, c, q)
	if got := strings.Join(cols, ","); got != diffDetailCols {
		t.Fatalf("%s: columns %s, want %s", q, got, diffDetailCols)
	}
	out := make([]detailRow, len(rows))
	for i, r := range rows {
		out[i] = detailRow{table: r[0].String, op: r[1].String, key: r[2], before: r[3], after: r[4], production: r[5]}
	}
	return out
}

// jsonObject decodes a JSON object, numbers as text.
func jsonObject(s string) (map[string]any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

// jsonText is a JSON value as the server writes the column's text (ok
// false for NULL).
func jsonText(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", false
	case json.Number:
		return x.String(), true
	case string:
		return x, true
	}
	return fmt.Sprint(v), true
}

// specKey is the key of a DIFF row's key JSON, as readSpec makes keys.
func specKey(s diffSpec, js string) (string, error) {
	m, err := jsonObject(js)
	if err != nil {
		return "", err
	}
	parts := make([]string, len(s.key))
	for i, k := range s.key {
		v, ok := m[k]
		if !ok {
			return "", fmt.Errorf("no column %s in key %s", k, js)
		}
		parts[i], _ = jsonText(v)
		if s.binKey {
			b, err := base64.StdEncoding.DecodeString(parts[i])
			if err != nil {
				return "", fmt.Errorf("key %s: %v", js, err)
			}
			parts[i] = string(b)
		}
	}
	key := strings.Join(parts, "\x1f")
	if s.ci {
		key = strings.ToLower(key)
	}
	return key, nil
}

// sameAsRow checks a DIFF row image (JSON) against a row read by the spec.
func sameAsRow(s diffSpec, js string, row dumpedRow) error {
	m, err := jsonObject(js)
	if err != nil {
		return err
	}
	for i, c := range s.cols {
		v, ok := m[c]
		if !ok {
			return fmt.Errorf("column %s missing", c)
		}
		got, valid := jsonText(v)
		if want := row.vals[i]; valid != want.Valid || valid && got != want.String {
			return fmt.Errorf("column %s is %q (valid %v), the table has %q (valid %v)", c, got, valid, want.String, want.Valid)
		}
	}
	return nil
}

// sandboxExport runs SANDBOX EXPORT (q) and returns its statements.
func sandboxExport(t *testing.T, c rowQuerier, q string) []string {
	t.Helper()
	cols, rows := queryRows(t, c, q)
	if strings.Join(cols, ",") != "statement" {
		t.Fatalf("%s: columns %v, want statement", q, cols)
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		if !r[0].Valid || r[0].String == "" {
			t.Errorf("%s: row %d is empty", q, i)
		}
		out[i] = r[0].String
	}
	return out
}

// applyExport runs an export's statements on srv, on one connection, in
// order (its comments are skipped), on after a failure; false when one
// failed.
func applyExport(t *testing.T, srv *testdb.Server, stmts []string) bool {
	t.Helper()
	ctx := context.Background()
	pool := openDB(t, srv.DSN(""))
	c, err := pool.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ok := true
	for i, s := range stmts {
		if strings.HasPrefix(s, "-- ") {
			continue
		}
		if _, err := c.ExecContext(ctx, s); err != nil {
			t.Errorf("export statement %d of %d failed on the copy of production: %s\n  %s", i+1, len(stmts), mysqlErr(err), abbrev(s, 600))
			ok = false
		}
	}
	return ok
}

func abbrev(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

var autoIncrement = regexp.MustCompile(` AUTO_INCREMENT=\d+`)

// tableState is a table's definition (AUTO_INCREMENT aside) and its rows,
// sorted, as one text.
func tableState(t *testing.T, c rowQuerier, db, table string) string {
	t.Helper()
	_, def := queryRows(t, c, "SHOW CREATE TABLE `"+db+"`.`"+table+"`")
	_, rows := queryRows(t, c, "SELECT * FROM `"+db+"`.`"+table+"`")
	lines := make([]string, len(rows))
	for i, r := range rows {
		lines[i] = rowText(r)
	}
	sort.Strings(lines)
	return autoIncrement.ReplaceAllString(def[0][1].String, "") + "\nrows:\n" + strings.Join(lines, "\n")
}

// tableChecksum is CHECKSUM TABLE's value.
func tableChecksum(t *testing.T, c rowQuerier, table string) string {
	t.Helper()
	_, rows := queryRows(t, c, "CHECKSUM TABLE "+table)
	if len(rows) != 1 || len(rows[0]) != 2 {
		t.Fatalf("CHECKSUM TABLE %s: %v", table, rows)
	}
	return rows[0][1].String
}

// tableNames lists db's tables as c sees them.
func tableNames(t *testing.T, c rowQuerier, db string) []string {
	t.Helper()
	out := column(t, c, "SHOW TABLES FROM `"+db+"`")
	sort.Strings(out)
	return out
}

// checkDiff checks DIFF SUMMARY and DIFF (on c, the sandbox's connection)
// against the differences of the sandbox's tables from production's.
func checkDiff(t *testing.T, c *sql.Conn, prodRoot *sql.DB, db string, specs []diffSpec) {
	t.Helper()
	want := map[string]wantDiff{}
	for _, s := range specs {
		want[s.name] = expectDiff(s, readSpec(t, prodRoot, db, s), readSpec(t, c, db, s))
	}
	sum := diffSummary(t, c, "SANDBOX DIFF SUMMARY")
	for _, s := range specs {
		w, got := want[s.name], sum[db+"."+s.name]
		delete(sum, db+"."+s.name)
		if w.total() == 0 {
			if got != (sumRow{}) {
				t.Errorf("DIFF SUMMARY lists %s, which the sandbox did not change: %+v", s.name, got)
			}
			continue
		}
		if got.ins != w.ins || got.upd != w.upd || got.del != w.del || got.conflicts != 0 {
			t.Errorf("DIFF SUMMARY %s: inserted %d updated %d deleted %d conflicts %d, want %d %d %d 0 (%+v)",
				s.name, got.ins, got.upd, got.del, got.conflicts, w.ins, w.upd, w.del, got)
		}
		if got.change != "forked" || got.keyKind != s.keyKind || got.method != s.method {
			t.Errorf("DIFF SUMMARY %s: change %q key_kind %q method %q, want forked %q %q", s.name, got.change, got.keyKind, got.method, s.keyKind, s.method)
		}
	}
	for name, r := range sum {
		t.Errorf("DIFF SUMMARY lists %s, which the test did not touch: %+v", name, r)
	}
	var counts []string
	for _, s := range specs {
		if w := want[s.name]; w.total() > 0 {
			counts = append(counts, fmt.Sprintf("%s +%d ~%d -%d", s.name, w.ins, w.upd, w.del))
		}
	}
	t.Logf("changes: %s", strings.Join(counts, ", "))

	detail := diffDetail(t, c, "SANDBOX DIFF")
	byTable := map[string][]detailRow{}
	for _, r := range detail {
		byTable[r.table] = append(byTable[r.table], r)
		for _, js := range []sql.NullString{r.key, r.before, r.after} {
			if js.Valid && !json.Valid([]byte(js.String)) {
				t.Errorf("DIFF %s %s: not valid JSON: %q", r.table, r.op, abbrev(js.String, 200))
			}
		}
		if r.production.Valid {
			t.Errorf("DIFF %s %s %s: production %s, without any change in production", r.table, r.op, r.key.String, r.production.String)
		}
		want := map[string][2]bool{"insert": {false, true}, "update": {true, true}, "delete": {true, false}}
		if w, ok := want[r.op]; !ok || w[0] != r.before.Valid || w[1] != r.after.Valid {
			t.Errorf("DIFF %s: op %q with before %v after %v", r.table, r.op, r.before.Valid, r.after.Valid)
		}
	}
	for _, s := range specs {
		rows, w := byTable[db+"."+s.name], want[s.name]
		delete(byTable, db+"."+s.name)
		if s.key == nil {
			var ins, del int64
			for _, r := range rows {
				switch r.op {
				case "insert":
					ins++
				case "delete":
					del++
				}
			}
			if ins != w.ins || del != w.del {
				t.Errorf("DIFF %s (no key): %d inserted and %d deleted rows, want %d and %d", s.name, ins, del, w.ins, w.del)
			}
			continue
		}
		seen := map[string]bool{}
		for _, r := range rows {
			k, err := specKey(s, r.key.String)
			if err != nil {
				t.Errorf("DIFF %s: key %q: %v", s.name, r.key.String, err)
				continue
			}
			if seen[k] {
				t.Errorf("DIFF %s: key %s listed twice", s.name, r.key.String)
			}
			seen[k] = true
			if w.ops[k] != r.op {
				t.Errorf("DIFF %s: key %s %s, want %q", s.name, r.key.String, r.op, w.ops[k])
				continue
			}
			if !s.json {
				continue
			}
			if r.before.Valid {
				if err := sameAsRow(s, r.before.String, w.prod[k]); err != nil {
					t.Errorf("DIFF %s key %s: before %s: %v", s.name, r.key.String, r.before.String, err)
				}
			}
			if r.after.Valid {
				if err := sameAsRow(s, r.after.String, w.sb[k]); err != nil {
					t.Errorf("DIFF %s key %s: after %s: %v", s.name, r.key.String, r.after.String, err)
				}
			}
		}
		for k, op := range w.ops {
			if !seen[k] {
				t.Errorf("DIFF %s misses key %q (%s)", s.name, k, op)
			}
		}
	}
	for name, rows := range byTable {
		t.Errorf("DIFF lists %d rows of %s, which the test did not touch", len(rows), name)
	}
}

// compareWithReplica checks that the replica's tables (or production's,
// after a promote) hold what the sandbox's do: definitions, rows, and
// CHECKSUM TABLE's (the sandbox's read through the proxy).
func compareWithReplica(t *testing.T, sb *sql.Conn, replica *sql.DB, db string, tables []string, what string) {
	t.Helper()
	for _, n := range tables {
		want, got := tableState(t, sb, db, n), tableState(t, replica, db, n)
		if want != got {
			t.Errorf("%s: %s.%s differs (sandbox, then the other side):\n%s", what, db, n, lineDiff(want, got))
			continue
		}
		q := "`" + db + "`.`" + n + "`"
		if a, b := tableChecksum(t, sb, q), tableChecksum(t, replica, q); a != b {
			t.Errorf("%s: CHECKSUM TABLE %s: sandbox %s, the other side %s", what, q, a, b)
		}
	}
}

// ---- TestDiffRandomDML ----

// dmlSchema is the production of the random DML test: keys of every kind,
// columns of many types, foreign keys with RESTRICT and with CASCADE.
const dmlSchema = `
CREATE TABLE t_int (
  id INT AUTO_INCREMENT PRIMARY KEY,
  dc DECIMAL(14,3), f FLOAT, d DOUBLE, dt DATETIME(6), ts TIMESTAMP(6) NULL DEFAULT NULL, dd DATE,
  bl BLOB, vb VARBINARY(16), tx TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci,
  l1 VARCHAR(40) CHARACTER SET latin1 COLLATE latin1_swedish_ci,
  e ENUM('a','b','c'), s SET('x','y','z'), j JSON, bt BIT(8),
  g INT AS (id * 2) VIRTUAL,
  gs VARCHAR(80) AS (CONCAT(IFNULL(e, '-'), ':', IFNULL(LEFT(l1, 3), '-'))) STORED);
CREATE TABLE t_comp (a INT NOT NULL, b VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL, v INT, note VARCHAR(40),
  PRIMARY KEY (a, b));
CREATE TABLE t_ci (k VARCHAR(20) COLLATE utf8mb4_general_ci NOT NULL PRIMARY KEY, v INT, tx TEXT);
CREATE TABLE t_uniq (id INT NULL, code VARCHAR(20) CHARACTER SET ascii COLLATE ascii_bin NOT NULL, v DOUBLE, UNIQUE KEY uq_code (code));
CREATE TABLE t_nokey (a INT, b VARCHAR(20) COLLATE utf8mb4_general_ci, c DOUBLE, bn BLOB);
CREATE TABLE t_bkey (k VARBINARY(8) NOT NULL PRIMARY KEY, v INT);
CREATE TABLE t_dkey (d DATETIME(6) NOT NULL, n DECIMAL(6,2) NOT NULL, v VARCHAR(10), PRIMARY KEY (d, n));
CREATE TABLE parent (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL);
CREATE TABLE child_r (id INT PRIMARY KEY, pid INT NOT NULL, v INT,
  changed TIMESTAMP(6) NOT NULL DEFAULT '2000-01-01 00:00:00' ON UPDATE CURRENT_TIMESTAMP(6),
  CONSTRAINT fk_r FOREIGN KEY (pid) REFERENCES parent (id) ON DELETE RESTRICT ON UPDATE RESTRICT);
CREATE TABLE child_c (id INT PRIMARY KEY, pid INT, v INT,
  CONSTRAINT fk_c FOREIGN KEY (pid) REFERENCES parent (id) ON DELETE CASCADE);
INSERT INTO t_ci VALUES ('alpha', 1, 'first'), ('Beta', 2, 'second'), ('gamma', 3, NULL), ('delta', 4, 'Dé'), ('EPSILON', 5, 'ε');
INSERT INTO t_uniq VALUES (1, 'c01', 1.5), (NULL, 'c02', NULL), (3, 'c03', -2e10), (4, 'c04', 0.1), (5, 'c05', 5),
  (NULL, 'c06', 6), (7, 'c07', 7.25), (8, 'c08', 8), (9, 'c09', 9), (10, 'c10', 1e-5);
INSERT INTO t_nokey VALUES (1, 'a', 1.5, NULL), (1, 'a', 1.5, NULL), (1, 'A', 1.5, X'00'), (2, 'b', NULL, X'FF00'),
  (NULL, NULL, NULL, NULL), (3, 'c', 0.1, X''), (3, 'c', 0.1, X''), (4, 'ü', -1, X'C3');
INSERT INTO t_bkey VALUES (X'00', 1), (X'6162', 2), (X'FF', 3), (X'', 4);
INSERT INTO t_dkey VALUES ('0000-00-00 00:00:00', 0, 'zero'), ('2024-02-29 23:59:59.999999', -1.5, 'leap'), ('1000-01-01 00:00:00.000001', 99.99, 'old');
INSERT INTO parent VALUES (1, 'p1'), (2, 'p2'), (3, 'p3'), (4, 'p4'), (5, 'p5'), (6, 'p6');
INSERT INTO child_r (id, pid, v) VALUES (1, 1, 10), (2, 1, 20), (3, 2, 30), (4, 3, 40), (5, 4, 50), (6, 4, 60), (7, 1, 70),
  (8, 2, 80), (9, 3, 90), (10, 4, 100);
INSERT INTO child_c VALUES (1, 1, 1), (2, 2, 2), (3, 3, 3), (4, 4, 4), (5, 5, 5), (6, 6, 6), (7, 1, 7), (8, 2, 8), (9, 5, 9), (10, 6, 10);`

// dmlSpecs are dmlSchema's tables.
var dmlSpecs = []diffSpec{
	{name: "child_c", key: []string{"id"}, cols: []string{"id", "pid", "v"}, keyKind: "primary", method: "capture", json: true}, // its cascades captured on parent
	{name: "child_r", key: []string{"id"}, cols: []string{"id", "pid", "v", "changed"}, keyKind: "primary", method: "capture"},
	{name: "parent", key: []string{"id"}, cols: []string{"id", "name"}, keyKind: "primary", method: "capture", json: true},
	{name: "t_ci", key: []string{"k"}, ci: true, cols: []string{"k", "v", "tx"}, keyKind: "primary", method: "capture", json: true},
	{name: "t_comp", key: []string{"a", "b"}, cols: []string{"a", "b", "v", "note"}, keyKind: "primary", method: "capture", json: true},
	{name: "t_int", key: []string{"id"}, cols: []string{"id", "dc", "f", "d", "dt", "ts", "dd", "bl", "vb", "tx", "l1", "e", "s", "j", "bt", "g", "gs"},
		keyKind: "primary", method: "capture"},
	{name: "t_nokey", cols: []string{"a", "b", "c", "bn"}, keyKind: "row", method: "compare"},
	{name: "t_bkey", key: []string{"k"}, binKey: true, cols: []string{"k", "v"}, keyKind: "primary", method: "capture"},
	{name: "t_dkey", key: []string{"d", "n"}, cols: []string{"d", "n", "v"}, keyKind: "primary", method: "capture", json: true},
	{name: "t_uniq", key: []string{"code"}, cols: []string{"id", "code", "v"}, keyKind: "unique:uq_code", method: "capture"},
}

// dmlGen makes a seeded random DML workload over dmlSchema.
type dmlGen struct {
	r    *rand.Rand
	next int
}

func (g *dmlGen) n(k int) int { return g.r.Intn(k) }

func (g *dmlGen) one(xs ...string) string { return xs[g.r.Intn(len(xs))] }

// sqlQuote is s as a string literal.
func sqlQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\x00", `\0`, "\n", `\n`, "\r", `\r`).Replace(s) + "'"
}

func (g *dmlGen) nullOr(v string) string {
	if g.n(10) == 0 {
		return "NULL"
	}
	return v
}

// bytesLit is a hexadecimal literal of up to max random bytes, often not
// UTF-8.
func (g *dmlGen) bytesLit(maxLen int) string {
	b := make([]byte, g.n(maxLen+1))
	g.r.Read(b)
	if len(b) > 0 && g.n(2) == 0 {
		b[0] = 0xff
	}
	return fmt.Sprintf("X'%X'", b)
}

var dmlTexts = []string{"😀 smile", "日本語のテキスト", "Ünïcødé", "line\nbreak", `back\slash`, `quote'd "both"`, "", "tab\there",
	"🏳️‍🌈 flag", "ABC", "abc", "Straße", "nul\x00byte", "ctrl-z \x1a", "cr\r\n"}

var tIntCols = []string{"dc", "f", "d", "dt", "ts", "dd", "bl", "vb", "tx", "l1", "e", "s", "j", "bt"}

// tIntVal is a random value of a t_int column.
func (g *dmlGen) tIntVal(col string) string {
	switch col {
	case "dc":
		return g.nullOr(fmt.Sprintf("%d.%03d", g.n(2000000)-1000000, g.n(1000)))
	case "f":
		return g.nullOr(g.one("0.1", "-1.5e-7", "1234567.9", "3.4e38", "0", strconv.FormatFloat(float64(float32(g.r.Float64()*1000)), 'g', -1, 32)))
	case "d":
		return g.nullOr(g.one("0.1", "1e300", "-2.5e-300", strconv.FormatFloat(g.r.NormFloat64()*1e6, 'g', -1, 64),
			strconv.FormatFloat(g.r.Float64(), 'g', -1, 64)))
	case "dt":
		if g.n(8) == 0 {
			return "'0000-00-00 00:00:00'"
		}
		return g.nullOr(fmt.Sprintf("'%04d-%02d-%02d %02d:%02d:%02d.%06d'", 1000+g.n(9000), 1+g.n(12), 1+g.n(28), g.n(24), g.n(60), g.n(60), g.n(1000000)))
	case "ts":
		if g.n(8) == 0 {
			return "'0000-00-00 00:00:00'"
		}
		return g.nullOr(fmt.Sprintf("'%04d-%02d-%02d %02d:%02d:%02d.%06d'", 1980+g.n(50), 1+g.n(12), 1+g.n(28), g.n(24), g.n(60), g.n(60), g.n(1000000)))
	case "dd":
		return g.nullOr(g.one("'0000-00-00'", "'2024-02-29'", "'1000-01-01'", "'9999-12-31'", "'2011-00-00'",
			fmt.Sprintf("'%04d-%02d-%02d'", 1900+g.n(200), 1+g.n(12), 1+g.n(28))))
	case "bl":
		return g.nullOr(g.bytesLit(40))
	case "vb":
		return g.nullOr(g.bytesLit(16))
	case "tx":
		return g.nullOr(sqlQuote(g.one(dmlTexts...)))
	case "l1":
		return g.nullOr(sqlQuote(g.one("café", "Ñandú", "naïve", "ÆØÅ æøå", "plain", "", "Straße")))
	case "e":
		return g.nullOr(g.one("'a'", "'b'", "'c'"))
	case "s":
		return g.nullOr(g.one("''", "'x'", "'x,z'", "'y,z'", "'x,y,z'"))
	case "j":
		return g.nullOr(sqlQuote(g.one(`{"k": [1, 2.5, "😀"], "n": null}`, `[]`, `"str"`, `{"a": {"b": true}}`, `12.50`)))
	case "bt":
		return g.nullOr(strconv.Itoa(g.n(256)))
	}
	panic(col)
}

// tIntRow is a whole t_int row's values (id first: a key or NULL).
func (g *dmlGen) tIntRow(id string) string {
	vals := []string{id}
	for _, c := range tIntCols {
		vals = append(vals, g.tIntVal(c))
	}
	return "(" + strings.Join(vals, ", ") + ")"
}

const tIntInsert = "(id, dc, f, d, dt, ts, dd, bl, vb, tx, l1, e, s, j, bt)"

func (g *dmlGen) ciKey() string {
	return sqlQuote(g.one("alpha", "Alpha", "ALPHA", "beta", "BETA", "gamma", "delta", "Delta", "epsilon", "zeta", "Eta"))
}

func (g *dmlGen) compKey() (string, string) {
	return strconv.Itoa(1 + g.n(6)), sqlQuote(g.one("x", "y", "z", "w", "X"))
}

func (g *dmlGen) code() string { return fmt.Sprintf("'c%02d'", 1+g.n(16)) }

// action is one step of the workload: one or a few statements.
func (g *dmlGen) action(tx bool) []string {
	id := func(n int) string { return strconv.Itoa(1 + g.n(n)) }
	switch k := g.n(100); {
	case k < 8:
		return []string{"INSERT INTO t_int " + tIntInsert + " VALUES " + g.tIntRow(g.one("NULL", id(40)))}
	case k < 16:
		c1, c2 := tIntCols[g.n(len(tIntCols))], tIntCols[g.n(len(tIntCols))]
		set := c1 + " = " + g.tIntVal(c1)
		if c2 != c1 {
			set += ", " + c2 + " = " + g.tIntVal(c2)
		}
		return []string{"UPDATE t_int SET " + set + " WHERE id = " + id(30)}
	case k < 20:
		a := 1 + g.n(30)
		return []string{fmt.Sprintf("UPDATE t_int SET d = d * 1.1 + 1, dc = dc + 0.5, f = f / 3, tx = CONCAT(IFNULL(tx, ''), '·') WHERE id BETWEEN %d AND %d", a, a+4)}
	case k < 23:
		if g.n(2) == 0 {
			return []string{"DELETE FROM t_int WHERE id = " + id(40)}
		}
		a := 1 + g.n(40)
		return []string{fmt.Sprintf("DELETE FROM t_int WHERE id BETWEEN %d AND %d", a, a+2)}
	case k < 26:
		return []string{"REPLACE INTO t_int " + tIntInsert + " VALUES " + g.tIntRow(id(40))}
	case k < 29:
		return []string{fmt.Sprintf("INSERT INTO t_int (id, tx, f) VALUES (%s, %s, %s) ON DUPLICATE KEY UPDATE tx = VALUES(tx), f = f + 1",
			id(40), g.tIntVal("tx"), g.tIntVal("f"))}
	case k < 31:
		return []string{"UPDATE t_int SET id = id + 100 WHERE id = " + id(30)}
	case k < 34:
		// An update set back: no change in the end.
		if g.n(2) == 0 {
			k := id(30)
			return []string{"UPDATE t_int SET dc = dc + 1, bt = bt ^ 1 WHERE id = " + k, "UPDATE t_int SET dc = dc - 1, bt = bt ^ 1 WHERE id = " + k}
		}
		a, b := g.compKey()
		where := " WHERE a = " + a + " AND b = " + b
		return []string{"UPDATE t_comp SET v = v + 7, note = CONCAT(IFNULL(note, ''), '!')" + where,
			"UPDATE t_comp SET v = v - 7, note = LEFT(note, CHAR_LENGTH(note) - 1)" + where}
	case k < 36:
		// Inserted, then deleted.
		g.next++
		switch g.n(3) {
		case 0:
			k := strconv.Itoa(500 + g.next)
			return []string{"INSERT INTO t_int " + tIntInsert + " VALUES " + g.tIntRow(k), "DELETE FROM t_int WHERE id = " + k}
		case 1:
			return []string{fmt.Sprintf("INSERT INTO t_ci VALUES ('tmp%d', 1, 'x')", g.next), fmt.Sprintf("DELETE FROM t_ci WHERE k = 'TMP%d'", g.next)}
		default:
			return []string{"INSERT INTO t_nokey VALUES (99, 'gone', 1, X'FF')", "DELETE FROM t_nokey WHERE a = 99"}
		}
	case k < 44:
		a, b := g.compKey()
		where := " WHERE a = " + a + " AND b = " + b
		switch g.n(6) {
		case 0:
			return []string{fmt.Sprintf("INSERT INTO t_comp VALUES (%s, %s, %d, %s)", a, b, g.n(100), g.nullOr(sqlQuote(g.one(dmlTexts...))))}
		case 1:
			return []string{fmt.Sprintf("UPDATE t_comp SET v = %d, note = %s", g.n(100), g.nullOr(sqlQuote(g.one(dmlTexts...)))) + where}
		case 2:
			return []string{"UPDATE t_comp SET b = " + sqlQuote(g.one("x", "y", "z", "w", "X", "Y")) + where}
		case 3:
			return []string{"DELETE FROM t_comp" + where}
		case 4:
			return []string{fmt.Sprintf("REPLACE INTO t_comp VALUES (%s, %s, %d, 'replaced')", a, b, g.n(100))}
		default:
			return []string{fmt.Sprintf("INSERT INTO t_comp (a, b, v, note) SELECT id %% 6 + 1, 'z', id, LEFT(l1, 40) FROM t_int WHERE id BETWEEN %d AND %d "+
				"ON DUPLICATE KEY UPDATE v = VALUES(v), note = VALUES(note)", 1+g.n(30), 4+g.n(30))}
		}
	case k < 52:
		key := g.ciKey()
		switch g.n(6) {
		case 0:
			return []string{fmt.Sprintf("INSERT INTO t_ci VALUES (%s, %d, %s) ON DUPLICATE KEY UPDATE v = v + 1", key, g.n(50), g.nullOr(sqlQuote(g.one(dmlTexts...))))}
		case 1:
			return []string{"UPDATE t_ci SET k = " + g.one("UPPER(k)", "LOWER(k)", "CONCAT(UPPER(LEFT(k, 1)), SUBSTRING(k, 2))") + " WHERE k = " + key}
		case 2:
			return []string{"UPDATE t_ci SET k = CONCAT(k, '2') WHERE k = " + key}
		case 3:
			if g.n(2) == 0 { // only the case of a text changes
				return []string{"UPDATE t_ci SET tx = " + g.one("UPPER(tx)", "LOWER(tx)") + " WHERE k = " + key,
					"UPDATE t_int SET l1 = " + g.one("UPPER(l1)", "LOWER(l1)") + " WHERE id = " + id(30)}
			}
			return []string{"UPDATE t_ci SET tx = " + g.one("UPPER(tx)", "LOWER(tx)", sqlQuote(g.one(dmlTexts...))) + ", v = v + 1 WHERE k = " + key}
		case 4:
			return []string{"DELETE FROM t_ci WHERE k = " + key}
		default:
			return []string{fmt.Sprintf("REPLACE INTO t_ci VALUES (%s, %d, 'replaced')", key, g.n(50))}
		}
	case k < 58:
		code := g.code()
		switch g.n(6) {
		case 0:
			return []string{fmt.Sprintf("INSERT INTO t_uniq VALUES (%s, %s, %s)", g.one("NULL", id(20)), code, g.tIntVal("d"))}
		case 1:
			return []string{"UPDATE t_uniq SET code = " + g.code() + " WHERE code = " + code}
		case 2:
			return []string{"UPDATE t_uniq SET v = v * 2, id = " + g.one("NULL", id(20)) + " WHERE code = " + code}
		case 3:
			return []string{"DELETE FROM t_uniq WHERE code = " + code}
		case 4:
			return []string{fmt.Sprintf("REPLACE INTO t_uniq VALUES (%s, %s, %s)", id(20), code, g.tIntVal("d"))}
		default:
			return []string{fmt.Sprintf("INSERT INTO t_uniq VALUES (%s, %s, 1) ON DUPLICATE KEY UPDATE v = VALUES(v) + IFNULL(v, 0)", id(20), code)}
		}
	case k < 66:
		a := strconv.Itoa(g.n(5))
		switch g.n(5) {
		case 0:
			row := fmt.Sprintf("(%s, %s, %s, %s)", a, sqlQuote(g.one("a", "A", "b", "ü", "Ü")), g.one("1.5", "NULL", "0.1", "-1"), g.nullOr(g.bytesLit(3)))
			return []string{"INSERT INTO t_nokey VALUES " + row + ", " + row}
		case 1:
			return []string{"UPDATE t_nokey SET c = c + 1 WHERE a = " + a}
		case 2:
			return []string{"DELETE FROM t_nokey WHERE a = " + a + " LIMIT 1"}
		case 3:
			return []string{"DELETE FROM t_nokey WHERE b = 'A' AND a = " + a}
		default:
			return []string{"UPDATE t_nokey SET b = UPPER(b), bn = CONCAT(IFNULL(bn, ''), X'80') WHERE a = " + a}
		}
	case k < 80:
		p := id(10)
		switch g.n(9) {
		case 0:
			return []string{fmt.Sprintf("INSERT INTO parent VALUES (%s, 'p%s')", p, p)}
		case 1:
			return []string{fmt.Sprintf("UPDATE parent SET name = 'n%d' WHERE id = %s", g.n(100), p)}
		case 2:
			return []string{"DELETE FROM parent WHERE id = " + p} // RESTRICT refuses, or child_c's rows go too
		case 3:
			return []string{fmt.Sprintf("INSERT INTO child_r (id, pid, v) VALUES (%s, %s, %d)", id(20), p, g.n(100))}
		case 4:
			return []string{fmt.Sprintf("UPDATE child_r SET pid = %s, v = v + 1 WHERE id = %s", p, id(20))}
		case 5:
			return []string{fmt.Sprintf("INSERT INTO child_c VALUES (%s, %s, %d) ON DUPLICATE KEY UPDATE v = v + 1", id(20), p, g.n(100))}
		case 6:
			return []string{"DELETE FROM child_c WHERE id = " + id(20)}
		case 7:
			return []string{"UPDATE child_r c JOIN parent p ON p.id = c.pid SET c.v = c.v + 1, p.name = CONCAT(LEFT(p.name, 15), '+') WHERE p.id = " + p}
		default:
			return []string{"DELETE c FROM child_c c JOIN parent p ON p.id = c.pid WHERE p.name LIKE '%+%' AND c.v > " + strconv.Itoa(g.n(10))}
		}
	case k < 84:
		return []string{"UPDATE t_comp c JOIN t_int i ON i.id = c.a SET c.note = LEFT(i.l1, 40), i.dc = i.dc + c.a WHERE c.b = " + sqlQuote(g.one("x", "y", "z"))}
	case k < 90 && tx:
		stmts := []string{"BEGIN"}
		for range 1 + g.n(3) {
			stmts = append(stmts, g.action(false)...)
		}
		return append(stmts, g.one("ROLLBACK", "ROLLBACK", "COMMIT"))
	case k < 92 && tx:
		// Part of a transaction rolled back to a savepoint.
		stmts := append([]string{"BEGIN"}, g.action(false)...)
		stmts = append(stmts, "SAVEPOINT s1")
		for range 1 + g.n(3) {
			stmts = append(stmts, g.action(false)...)
		}
		return append(stmts, "ROLLBACK TO SAVEPOINT s1", g.one("COMMIT", "ROLLBACK"))
	case k < 94:
		a := 1 + g.n(30)
		return []string{fmt.Sprintf("INSERT INTO t_nokey (a, b, c, bn) SELECT id %% 3, LEFT(tx, 20), d, vb FROM t_int WHERE id BETWEEN %d AND %d", a, a+2)}
	case k < 96:
		b := sqlQuote(g.one("\x00", "\xff", "\x00\xff", "ab", "ABC", "\xff\x00\xff\x00", " ", ""))
		switch g.n(4) {
		case 0:
			return []string{fmt.Sprintf("INSERT INTO t_bkey VALUES (%s, %d) ON DUPLICATE KEY UPDATE v = v + 1", b, g.n(100))}
		case 1:
			return []string{"UPDATE t_bkey SET k = CONCAT(k, X'00') WHERE k = " + b}
		case 2:
			return []string{"DELETE FROM t_bkey WHERE k = " + b}
		default:
			return []string{fmt.Sprintf("UPDATE t_bkey SET v = %d WHERE k = %s", g.n(100), b)}
		}
	case k < 98:
		d := g.one("'0000-00-00 00:00:00'", "'2024-02-29 23:59:59.999999'", "'1000-01-01 00:00:00.000001'", "'2038-01-19 03:14:08'")
		n := g.one("0", "-1.5", "99.99", "0.01")
		switch g.n(4) {
		case 0:
			return []string{fmt.Sprintf("INSERT INTO t_dkey VALUES (%s, %s, %s)", d, n, sqlQuote(g.one("x", "ü", "")))}
		case 1:
			return []string{fmt.Sprintf("UPDATE t_dkey SET n = n + 1 WHERE d = %s AND n = %s", d, n)}
		case 2:
			return []string{fmt.Sprintf("DELETE FROM t_dkey WHERE d = %s", d)}
		default:
			return []string{fmt.Sprintf("UPDATE t_dkey SET v = %s WHERE d = %s", sqlQuote(g.one("y", "ß", "😀")), d)}
		}
	default:
		switch g.n(4) {
		case 0: // a key changed, then back
			k := id(30)
			return []string{"UPDATE t_int SET id = id + 200 WHERE id = " + k, "UPDATE t_int SET id = id - 200 WHERE id = 200 + " + k}
		case 1: // many rows at once (the export writes them in batches)
			return []string{"INSERT IGNORE INTO t_comp (a, b, v) SELECT 100 + x.id * 50 + y.id, 'bulk', x.id FROM t_int x JOIN t_int y"}
		case 2:
			return []string{fmt.Sprintf("DELETE FROM t_comp WHERE b = 'bulk' AND v %% 3 = %d", g.n(3)),
				"UPDATE t_comp SET note = 'bulk' WHERE b = 'bulk' AND v % 2 = 0"}
		default: // a big value
			return []string{fmt.Sprintf("UPDATE t_int SET tx = REPEAT('é😀', %d) WHERE id = %s", 3000+g.n(7000), id(30))}
		}
	}
}

// dmlSeed is the production rows of t_int and t_comp for a seed.
func dmlSeed(seed int64) string {
	g := &dmlGen{r: rand.New(rand.NewSource(seed * 7919))}
	var rows []string
	for i := 1; i <= 20; i++ {
		rows = append(rows, g.tIntRow(strconv.Itoa(i)))
	}
	var comp []string
	for a := 1; a <= 4; a++ {
		for _, b := range []string{"x", "y", "z"} {
			comp = append(comp, fmt.Sprintf("(%d, '%s', %d, %s)", a, b, a*10, g.nullOr(sqlQuote(g.one(dmlTexts...)))))
		}
	}
	return "INSERT INTO t_int " + tIntInsert + " VALUES " + strings.Join(rows, ", ") + "; INSERT INTO t_comp VALUES " + strings.Join(comp, ", ") + ";"
}

// dmlErrors are the errors the random workload may meet: duplicate keys,
// foreign keys, NULL in a NOT NULL column, values out of range.
var dmlErrors = map[uint16]bool{1062: true, 1451: true, 1452: true, 1048: true, 1264: true}

// TestDiffRandomDML runs seeded random DML through a sandbox over tables
// with keys of every kind and columns of many types, then checks DIFF
// SUMMARY and DIFF against the differences of the sandbox's tables from
// production's, and that its EXPORT, applied to a copy of production,
// gives the sandbox's tables — and again when applied a second time.
func TestDiffRandomDML(t *testing.T) {
	prod, _ := env(t)
	e := newDiffEnv(t, "transparent", true, func(c *proxy.Config) { c.PromoteUser, c.PromotePassword = prod.User, prod.Password })
	prodRoot := openDB(t, e.prod.DSN(""))
	replicaRoot := openDB(t, e.replica.DSN(""))
	seeds := map[string][]int64{"least-privilege": {1, 2, 3, 6}, "all-privileges": {4, 5}}
	for _, acct := range e.accts {
		for _, seed := range seeds[acct.name] {
			t.Run(fmt.Sprintf("%s/seed%d", acct.name, seed), func(t *testing.T) {
				name := fmt.Sprintf("diffdml%d", seed)
				e.database(t, name, dmlSchema+dmlSeed(seed))
				before := map[string]string{}
				for _, s := range dmlSpecs {
					before[s.name] = tableState(t, prodRoot, name, s.name)
				}
				c := conn(t, openDB(t, acct.dsn(name, name)))
				g := &dmlGen{r: rand.New(rand.NewSource(seed))}
				errs := map[uint16]int{}
				n := 0
				for range 250 {
					for _, q := range g.action(true) {
						n++
						_, err := c.ExecContext(context.Background(), q)
						if err == nil {
							continue
						}
						code := mysqlErrCode(err)
						if !dmlErrors[code] {
							t.Errorf("%s: %s", q, mysqlErr(err))
						}
						errs[code]++
					}
				}
				mustExecC(t, c, "COMMIT")
				t.Logf("%d statements; expected errors: %v", n, errs)

				checkDiff(t, c, prodRoot, name, dmlSpecs)

				stmts := sandboxExport(t, c, "SANDBOX EXPORT")
				tables := make([]string, len(dmlSpecs))
				for i, s := range dmlSpecs {
					tables[i] = s.name
				}
				applyExport(t, e.replica, stmts)
				compareWithReplica(t, c, replicaRoot, name, tables, "export applied once")
				// Keyed tables are written idempotently; rows of a table
				// without a key would be written twice (the export says so).
				var keyed []string
				for _, s := range dmlSpecs {
					if s.key != nil {
						keyed = append(keyed, s.name)
					}
				}
				applyExport(t, e.replica, stmts)
				compareWithReplica(t, c, replicaRoot, name, keyed, "export applied twice")
				for _, s := range dmlSpecs {
					if after := tableState(t, prodRoot, name, s.name); after != before[s.name] {
						t.Errorf("production's %s changed:\n%s", s.name, lineDiff(before[s.name], after))
					}
				}
				if t.Failed() {
					t.Logf("export:\n%s", abbrev(strings.Join(stmts, ";\n"), 20000))
				}

				// PROMOTE: production did not change since the fork, so no
				// row conflicts. Every strategy refuses the tables compared
				// whole unless OVERWRITE names them; then all is applied.
				var compared []string
				sum := diffSummary(t, c, "SANDBOX DIFF SUMMARY")
				for _, s := range dmlSpecs {
					if s.method == "compare" && sum[name+"."+s.name] != (sumRow{}) {
						compared = append(compared, name+"."+s.name)
					}
				}
				promote := "SANDBOX PROMOTE STRATEGY OURS"
				if len(compared) > 0 {
					promote += " OVERWRITE " + strings.Join(compared, ", ")
				}
				promoteRightsFor(t, prodRoot, acct, c, promote, name)
				_, err := c.ExecContext(context.Background(), "SANDBOX PROMOTE STRATEGY OURS")
				switch e := mysqlErr(err); {
				case len(compared) > 0 && (!strings.HasPrefix(e, "1105") || !strings.Contains(e, "cannot be told from production's changes")):
					t.Errorf("PROMOTE STRATEGY OURS with tables compared whole: %s, want 1105 saying they cannot be told", e)
				case len(compared) == 0 && err != nil:
					t.Errorf("PROMOTE STRATEGY OURS: %s", e)
				}
				if len(compared) > 0 {
					for _, s := range dmlSpecs {
						if after := tableState(t, prodRoot, name, s.name); after != before[s.name] {
							t.Errorf("a refused PROMOTE changed production's %s:\n%s", s.name, lineDiff(before[s.name], after))
						}
					}
					mustExecC(t, c, promote)
				}
				compareWithReplica(t, c, prodRoot, name, tables, "production after PROMOTE")
				_, audit := queryRows(t, prodRoot, "SELECT outcome, conflicts FROM _sqlfork_meta.promotes WHERE name = '"+name+"' ORDER BY id DESC LIMIT 1")
				if len(audit) != 1 || audit[0][0].String != "committed" || audit[0][1].String != "0" {
					t.Errorf("the audit of PROMOTE STRATEGY OURS: %v, want committed with 0 conflicts", audit)
				}
			})
		}
	}
}

// mysqlErrCode is a server error's number (0 for others).
func mysqlErrCode(err error) uint16 {
	var code uint16
	if _, e := fmt.Sscanf(mysqlErr(err), "%d", &code); e != nil {
		return 0
	}
	return code
}

// TestDiffExportCaseOnlyKeyChange: a key of a case-insensitive collation
// whose spelling alone the sandbox changed is an update in DIFF, and the
// export must give production the new spelling.
func TestDiffExportCaseOnlyKeyChange(t *testing.T) {
	e := newDiffEnv(t, "transparent", true, nil)
	replicaRoot := openDB(t, e.replica.DSN(""))
	e.eachAccount(t, "diffcase_", "CREATE TABLE t (k VARCHAR(10) COLLATE utf8mb4_general_ci PRIMARY KEY, v INT); INSERT INTO t VALUES ('abc', 1), ('def', 2);",
		func(t *testing.T, name string, c *sql.Conn) {
			mustExecC(t, c, "UPDATE t SET k = 'ABC' WHERE k = 'abc'")
			mustExecC(t, c, "REPLACE INTO t VALUES ('Def', 2)")
			d := diffDetail(t, c, "SANDBOX DIFF")
			var got []string
			for _, r := range d {
				got = append(got, r.op+" "+r.key.String+" "+r.after.String)
			}
			want := []string{`update {"k": "abc"} {"k": "ABC", "v": 1}`, `update {"k": "def"} {"k": "Def", "v": 2}`}
			if !slices.Equal(got, want) {
				t.Errorf("SANDBOX DIFF:\n %s\nwant\n %s", strings.Join(got, "\n "), strings.Join(want, "\n "))
			}
			stmts := sandboxExport(t, c, "SANDBOX EXPORT")
			applyExport(t, e.replica, stmts)
			compareWithReplica(t, c, replicaRoot, name, []string{"t"}, "export")
			if t.Failed() {
				t.Logf("export:\n%s", strings.Join(stmts, ";\n"))
			}
		})
}

// ---- TestDiffDDL ----

// ddlWant is a table's row of DIFF SUMMARY in a DDL case (zero: not
// checked, only listed).
type ddlWant struct {
	change, method string
	ins, upd, del  int64
}

// ddlCase is a DDL workload: production (database db, and db2 empty), the
// sandbox's statements ($2 stands for db2) and DIFF SUMMARY's rows (by
// table, $ and $2 for the databases).
type ddlCase struct {
	schema string
	steps  []string
	wants  map[string]ddlWant
}

// runDDLCase runs c through a sandbox of acct in databases db and db2,
// then checks DIFF SUMMARY, DIFF's DDL rows, the export applied to a copy
// of production, and PROMOTE (refused by FAIL and THEIRS, which cannot
// check tables compared whole or dropped; OURS gives production the
// sandbox's tables).
func runDDLCase(t *testing.T, e *diffEnv, acct diffAccount, db string, c ddlCase) {
	db2 := db + "_o"
	names := strings.NewReplacer("$2", db2, "$", db)
	e.database(t, db, c.schema)
	e.database(t, db2, "")
	prodRoot := openDB(t, e.prod.DSN(""))
	replicaRoot := openDB(t, e.replica.DSN(""))
	sc := conn(t, openDB(t, acct.dsn(db, db)))
	for _, q := range c.steps {
		mustExecC(t, sc, names.Replace(q))
	}
	wants := map[string]ddlWant{}
	for n, w := range c.wants {
		wants[names.Replace(n)] = w
	}
	sum := diffSummary(t, sc, "SANDBOX DIFF SUMMARY")
	for name, w := range wants {
		got, ok := sum[name]
		switch {
		case !ok:
			t.Errorf("DIFF SUMMARY does not list %s", name)
		case w == ddlWant{}:
			t.Logf("DIFF SUMMARY %s: %+v", name, got)
		case got.change != w.change || got.method != w.method || got.ins != w.ins || got.upd != w.upd || got.del != w.del:
			t.Errorf("DIFF SUMMARY %s: %+v, want %+v", name, got, w)
		}
	}
	for name, r := range sum {
		if _, ok := wants[name]; !ok {
			t.Errorf("DIFF SUMMARY lists %s: %+v", name, r)
		}
	}
	ddl := map[string]string{}
	for _, r := range diffDetail(t, sc, "SANDBOX DIFF") {
		if r.op == "ddl" {
			ddl[r.table] += r.after.String + ";"
		}
	}
	for name, w := range wants {
		if w == (ddlWant{}) {
			continue
		}
		prefix := map[string]string{"altered": "ALTER TABLE ", "dropped": "DROP TABLE ", "created": "CREATE TABLE "}[w.change]
		if got := ddl[name]; prefix == "" && got != "" || prefix != "" && !strings.HasPrefix(got, prefix) {
			t.Errorf("DIFF's DDL for %s (%s): %q", name, w.change, got)
		}
	}

	stmts := sandboxExport(t, sc, "SANDBOX EXPORT")
	applyExport(t, e.replica, stmts)
	for _, d := range []string{db, db2} {
		want, got := tableNames(t, sc, d), tableNames(t, replicaRoot, d)
		if !slices.Equal(want, got) {
			t.Errorf("tables of %s: sandbox %v, copy of production with the export %v", d, want, got)
		}
		compareWithReplica(t, sc, replicaRoot, d, want, "export")
	}
	if t.Failed() {
		t.Logf("export:\n%s", strings.Join(stmts, ";\n"))
	}

	promoteDDLCase(t, prodRoot, acct, sc, sum, db, db2)
	for _, d := range []string{db, db2} {
		want, got := tableNames(t, sc, d), tableNames(t, prodRoot, d)
		if !slices.Equal(want, got) {
			t.Errorf("tables of %s: sandbox %v, production after PROMOTE %v", d, want, got)
		}
		compareWithReplica(t, sc, prodRoot, d, want, "production after PROMOTE")
	}
}

// promoteDDLCase promotes a DDL case's sandbox (DIFF SUMMARY sum): FAIL
// and THEIRS are refused (1105) when a table was dropped or is compared
// whole, so is OURS when it does not name the tables compared whole in
// OVERWRITE, and production is left as it was; OURS with them named
// promotes.
func promoteDDLCase(t *testing.T, prodRoot *sql.DB, acct diffAccount, sc *sql.Conn, sum map[string]sumRow, db, db2 string) {
	t.Helper()
	var whole []string
	refused := false
	for name, r := range sum {
		if r.method == "compare" {
			whole = append(whole, name)
		}
		refused = refused || r.method == "compare" || r.method == "dropped"
	}
	slices.Sort(whole)
	before := strings.Join(tableNames(t, prodRoot, db), ",")
	strategies := []string{"FAIL", "THEIRS"}
	if len(whole) > 0 {
		strategies = append(strategies, "OURS")
	}
	for _, strategy := range strategies {
		if !refused {
			break
		}
		_, err := sc.ExecContext(context.Background(), "SANDBOX PROMOTE STRATEGY "+strategy)
		if e := mysqlErr(err); !strings.HasPrefix(e, "1105") {
			t.Errorf("PROMOTE STRATEGY %s of altered and dropped tables: %s, want 1105", strategy, e)
		}
	}
	if after := strings.Join(tableNames(t, prodRoot, db), ","); after != before {
		t.Errorf("a refused PROMOTE changed production's tables: %s, then %s", before, after)
	}
	promote := "SANDBOX PROMOTE STRATEGY OURS"
	if len(whole) > 0 {
		promote += " OVERWRITE " + strings.Join(whole, ", ")
	}
	promoteRightsFor(t, prodRoot, acct, sc, promote, db, db2)
	if _, err := sc.ExecContext(context.Background(), promote); err != nil {
		t.Errorf("%s: %s", promote, mysqlErr(err))
	}
}

// ddlEnv is newDiffEnv with a replica and the promote account.
func ddlEnv(t *testing.T) *diffEnv {
	prod, _ := env(t)
	return newDiffEnv(t, "transparent", true, func(c *proxy.Config) { c.PromoteUser, c.PromotePassword = prod.User, prod.Password })
}

// TestDiffDDL: tables the sandbox created, dropped, altered, truncated and
// renamed (within a database and to another) are listed by DIFF SUMMARY
// as such, with DDL in DIFF; the sandbox's writes after its DDL never fail
// on the capture triggers (1054 after ALTER, 1435 on RENAME to another
// database); and the export, applied to a copy of production, gives the
// sandbox's tables (definitions and rows), as PROMOTE does.
func TestDiffDDL(t *testing.T) {
	e := ddlEnv(t)
	c := ddlCase{
		schema: `
CREATE TABLE a (id INT PRIMARY KEY, v INT, w VARCHAR(20));
CREATE TABLE b (id INT PRIMARY KEY, v INT, w VARCHAR(20));
CREATE TABLE c (id INT PRIMARY KEY, v INT NOT NULL, w VARCHAR(20));
CREATE TABLE c2 (id INT PRIMARY KEY, v INT);
CREATE TABLE d (id INT PRIMARY KEY, v INT);
CREATE TABLE d2 (id INT PRIMARY KEY, v INT);
CREATE TABLE e (id INT PRIMARY KEY, w VARCHAR(20));
CREATE TABLE e2 (id INT PRIMARY KEY, w VARCHAR(20));
CREATE TABLE f (id INT PRIMARY KEY, v INT);
CREATE TABLE g (id INT PRIMARY KEY, v INT);
CREATE TABLE h (id INT PRIMARY KEY, v INT, w VARCHAR(20));
INSERT INTO a VALUES (1, 10, 'one'), (2, 20, 'two'), (3, 30, 'three'), (4, 40, 'four'), (5, 50, 'five');
INSERT INTO b SELECT * FROM a;
INSERT INTO c SELECT * FROM a;
INSERT INTO h SELECT * FROM a;
INSERT INTO c2 VALUES (1, 1), (2, 2);
INSERT INTO d VALUES (1, 1), (2, 2);
INSERT INTO d2 VALUES (1, 1);
INSERT INTO e VALUES (1, 'one'), (2, 'two'), (3, 'three'), (4, 'four');
INSERT INTO e2 VALUES (1, 'one'), (2, 'two'), (3, 'three');
INSERT INTO f VALUES (1, 1), (2, 2), (3, 3);
INSERT INTO g VALUES (1, 1), (2, 2);`,
		steps: []string{
			"UPDATE a SET v = 11 WHERE id = 1",
			"ALTER TABLE a ADD COLUMN extra INT NOT NULL DEFAULT 7 AFTER v",
			"UPDATE a SET extra = 8 WHERE id = 2",
			"INSERT INTO a (id, v, extra, w) VALUES (6, 60, 9, 'six')",
			"DELETE FROM a WHERE id = 3",
			"UPDATE b SET v = v + 1 WHERE id = 1",
			"ALTER TABLE b DROP COLUMN w",
			"UPDATE b SET v = 0 WHERE id = 2",
			"DELETE FROM b WHERE id = 4",
			"INSERT INTO b VALUES (6, 60)",
			"INSERT INTO c VALUES (6, 60, 'six')",
			"ALTER TABLE c ADD INDEX iv (v), MODIFY v BIGINT NOT NULL DEFAULT 0",
			"UPDATE c SET v = v * 10 WHERE id = 1",
			"ALTER TABLE c2 ADD INDEX iv (v)", // an index alone
			"UPDATE c2 SET v = 10 WHERE id = 1",
			"UPDATE d SET v = 9 WHERE id = 1",
			"DROP TABLE d",
			"DROP TABLE d2", // without a write before
			"UPDATE e SET w = 'uno' WHERE id = 1",
			"TRUNCATE TABLE e",
			"INSERT INTO e VALUES (1, 'one'), (9, 'nine')",
			"TRUNCATE TABLE e2", // without a write before
			"INSERT INTO e2 VALUES (5, 'x')",
			"UPDATE f SET v = 10 WHERE id = 1",
			"RENAME TABLE f TO f_renamed",
			"UPDATE f_renamed SET v = 20 WHERE id = 2",
			"INSERT INTO f_renamed VALUES (4, 4)",
			"UPDATE g SET v = 10 WHERE id = 1",
			"RENAME TABLE g TO $2.g",
			"INSERT INTO $2.g VALUES (3, 3)",
			"DELETE FROM $2.g WHERE id = 2",
			"ALTER TABLE h RENAME COLUMN w TO w2",
			"UPDATE h SET v = v + 1, w2 = 'eins' WHERE id = 1",
			"CREATE TABLE newt (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(20) NOT NULL, KEY (name))",
			"INSERT INTO newt (name) VALUES ('x'), ('y'), ('z')",
			"UPDATE newt SET name = 'yy' WHERE id = 2",
			"CREATE TABLE newchild (id INT PRIMARY KEY, aid INT, CONSTRAINT fk_newchild_a FOREIGN KEY (aid) REFERENCES a (id))",
			"INSERT INTO newchild VALUES (1, 6), (2, 1)",
			// Two new tables whose foreign keys point at each other: the
			// first one created names a table not there yet.
			"CREATE TABLE cyca (id INT PRIMARY KEY, b_id INT)",
			"CREATE TABLE cycb (id INT PRIMARY KEY, a_id INT, CONSTRAINT fk_cycb_a FOREIGN KEY (a_id) REFERENCES cyca (id))",
			"ALTER TABLE cyca ADD CONSTRAINT fk_cyca_b FOREIGN KEY (b_id) REFERENCES cycb (id)",
			"INSERT INTO cyca VALUES (1, NULL), (2, NULL)",
			"INSERT INTO cycb VALUES (1, 1), (2, 2)",
			"UPDATE cyca SET b_id = 2 WHERE id = 1",
		},
		wants: map[string]ddlWant{
			"$.a":         {"altered", "capture", 1, 2, 1}, // the capture follows the ALTERs: extra's backfill of id 2 is an update
			"$.b":         {"altered", "capture", 1, 2, 1},
			"$.c":         {"altered", "capture", 1, 1, 0}, // a type widened: the capture follows
			"$.c2":        {"altered", "capture", 0, 1, 0},
			"$.d":         {"dropped", "dropped", 0, 0, 0},
			"$.d2":        {"dropped", "dropped", 0, 0, 0},
			"$.e":         {"forked", "compare", 1, 0, 3},
			"$.e2":        {"forked", "compare", 1, 0, 3},
			"$.f":         {"dropped", "dropped", 0, 0, 0},
			"$.f_renamed": {"created", "created", 4, 0, 0},
			"$.g":         {"dropped", "dropped", 0, 0, 0},
			"$2.g":        {"created", "created", 2, 0, 0},
			"$.h":         {"altered", "compare", 0, 1, 0}, // a column renamed: the capture stops
			"$.newt":      {"created", "created", 3, 0, 0},
			"$.newchild":  {"created", "created", 2, 0, 0},
			"$.cyca":      {"created", "created", 2, 0, 0},
			"$.cycb":      {"created", "created", 2, 0, 0},
		},
	}
	for _, acct := range e.accts {
		t.Run(acct.name, func(t *testing.T) { runDDLCase(t, e, acct, "diffddl_"+acct.short(), c) })
	}
}

// TestDiffDDLMore: more DDL, each case alone: table options changed, an
// altered table without a key emptied, another primary key, a table
// dropped and made again otherwise.
func TestDiffDDLMore(t *testing.T) {
	e := ddlEnv(t)
	cases := map[string]ddlCase{
		"options": {
			schema: "CREATE TABLE k (id INT PRIMARY KEY, v INT); INSERT INTO k VALUES (1, 1), (2, 2);",
			steps:  []string{"ALTER TABLE k COMMENT = 'changed'", "UPDATE k SET v = 10 WHERE id = 1"},
			wants:  map[string]ddlWant{"$.k": {"altered", "capture", 0, 1, 0}},
		},
		"keyless-emptied": {
			schema: "CREATE TABLE k (a INT, b INT); INSERT INTO k VALUES (1, 1), (2, 2);",
			steps:  []string{"ALTER TABLE k ADD COLUMN c INT", "DELETE FROM k"},
			wants:  map[string]ddlWant{"$.k": {"altered", "compare", 0, 0, 2}},
		},
		"new-key": {
			schema: "CREATE TABLE k (id INT PRIMARY KEY, v INT); INSERT INTO k VALUES (1, 1), (2, 2);",
			steps:  []string{"ALTER TABLE k DROP PRIMARY KEY, ADD PRIMARY KEY (id, v)", "INSERT INTO k VALUES (1, 99)"},
			wants:  map[string]ddlWant{"$.k": {"altered", "compare", 1, 0, 0}},
		},
		"dropped-and-made-again": {
			schema: "CREATE TABLE k (id INT PRIMARY KEY, v INT); INSERT INTO k VALUES (1, 1), (2, 2);",
			steps:  []string{"DROP TABLE k", "CREATE TABLE k (id INT PRIMARY KEY, x VARCHAR(10))", "INSERT INTO k VALUES (1, 'new')"},
			wants:  map[string]ddlWant{"$.k": {}}, // whatever DIFF calls it: the export must give the sandbox's table
		},
	}
	names := slices.Sorted(maps.Keys(cases))
	for _, acct := range e.accts {
		for i, n := range names {
			t.Run(acct.name+"/"+n, func(t *testing.T) {
				runDDLCase(t, e, acct, fmt.Sprintf("diffddl%d_%s", i, acct.short()), cases[n])
			})
		}
	}
}

// ---- TestDiffHidesCaptureTriggers ----

const trgSchema = `
CREATE TABLE t (id INT PRIMARY KEY, v INT);
CREATE TABLE log (id INT AUTO_INCREMENT PRIMARY KEY, msg VARCHAR(100));
INSERT INTO t VALUES (1, 1), (2, 2), (3, 3);
CREATE TRIGGER t_bi BEFORE INSERT ON t FOR EACH ROW SET NEW.v = IFNULL(NEW.v, 0);
CREATE TRIGGER t_ai1 AFTER INSERT ON t FOR EACH ROW INSERT INTO log (msg) VALUES (CONCAT('ai1 ', NEW.id));
CREATE TRIGGER t_ai2 AFTER INSERT ON t FOR EACH ROW INSERT INTO log (msg) VALUES (CONCAT('ai2 ', NEW.id));
CREATE TRIGGER t_au AFTER UPDATE ON t FOR EACH ROW INSERT INTO log (msg) VALUES (CONCAT('au ', OLD.v, '>', NEW.v));`

// showTriggers is SHOW TRIGGERS without the columns a sandbox's copy may
// not share with a direct copy (Statement: its tables qualified; Created;
// Definer: the proxy's account).
func showTriggers(ctx context.Context, t *testing.T, c *sql.Conn, q string) string {
	rows, err := c.QueryContext(ctx, q)
	if err != nil {
		return errOutcome(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var b strings.Builder
	for rows.Next() {
		vals, err := scanStrings(rows)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			switch cols[i] {
			case "Statement", "Created", "Definer":
				continue
			}
			b.WriteString(cols[i] + "=" + v.String + " ")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestDiffHidesCaptureTriggers: the capture triggers of a fork are not the
// sandbox's: SHOW TRIGGERS and information_schema.TRIGGERS (names, order)
// show what a direct copy of the database shows — production's triggers
// copied into the fork, and the sandbox's own, made after capture began
// (with and without FOLLOWS/PRECEDES) — and their names are unknown to the
// sandbox's trigger statements, as on a direct copy; changes are captured
// all along.
func TestDiffHidesCaptureTriggers(t *testing.T) {
	e := newDiffEnv(t, "transparent", true, nil)
	ctx := context.Background()
	prodRoot := openDB(t, e.prod.DSN(""))
	e.eachAccount(t, "difftrg_", trgSchema, func(t *testing.T, db string, sc *sql.Conn) {
		dc := conn(t, openDB(t, e.replica.DSN(db)))
		listings := []string{
			"SHOW TRIGGERS",
			"SHOW TRIGGERS LIKE 't'",
			"SHOW TRIGGERS FROM " + db + " WHERE `Table` = 'log'",
		}
		queries := []string{
			objTriggers,
			"SELECT TRIGGER_NAME, ACTION_ORDER, ACTION_TIMING, EVENT_MANIPULATION FROM information_schema.TRIGGERS WHERE EVENT_OBJECT_SCHEMA = '" + db + "' ORDER BY 1",
			"SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_NAME LIKE '\\_sqlfork%'",
			"SELECT COUNT(*), MAX(ACTION_ORDER) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() AND EVENT_OBJECT_TABLE = 't' AND ACTION_TIMING = 'AFTER'",
		}
		compare := func(step string) {
			t.Helper()
			for _, q := range listings {
				if want, got := showTriggers(ctx, t, dc, q), showTriggers(ctx, t, sc, q); want != got {
					t.Errorf("after %s, %s:\n direct:  %s\n sandbox: %s", step, q, want, got)
				}
			}
			for _, q := range queries {
				if want, got := diffOutcome(ctx, dc, q, nil, true), diffOutcome(ctx, sc, q, nil, true); want != got {
					t.Errorf("after %s, %s:\n direct:  %s\n sandbox: %s", step, q, want, got)
				}
			}
		}
		both := func(q string) {
			t.Helper()
			if want, got := objOutcome(ctx, dc, q), objOutcome(ctx, sc, q); want != got {
				t.Errorf("%s:\n direct:  %s\n sandbox: %s", q, want, got)
			}
		}
		both("UPDATE t SET v = 10 WHERE id = 1") // forks t (and log, which its trigger writes)
		compare("the fork")
		// The capture is there (else the rest proves nothing).
		var capture string
		_ = prodRoot.QueryRow("SELECT MIN(TRIGGER_NAME) FROM information_schema.TRIGGERS WHERE EVENT_OBJECT_SCHEMA LIKE ? AND EVENT_OBJECT_TABLE = 't' "+
			"AND TRIGGER_NAME LIKE '\\_sqlfork\\_%\\_ai'", "\\_sqlfork\\_%\\_"+db).Scan(&capture)
		if capture == "" {
			t.Fatal("the fork of t has no capture trigger")
		}
		both("CREATE TRIGGER t_ai3 AFTER INSERT ON t FOR EACH ROW INSERT INTO log (msg) VALUES (CONCAT('ai3 ', NEW.id))")
		compare("CREATE TRIGGER t_ai3")
		both("CREATE TRIGGER t_ai0 AFTER INSERT ON t FOR EACH ROW PRECEDES t_ai1 INSERT INTO log (msg) VALUES (CONCAT('ai0 ', NEW.id))")
		both("CREATE TRIGGER t_au2 AFTER UPDATE ON t FOR EACH ROW FOLLOWS t_au INSERT INTO log (msg) VALUES ('au2')")
		both("CREATE TRIGGER t_ad AFTER DELETE ON t FOR EACH ROW INSERT INTO log (msg) VALUES (CONCAT('ad ', OLD.id))")
		both("CREATE TRIGGER t_bd BEFORE DELETE ON t FOR EACH ROW SET @deleting = OLD.id")
		compare("CREATE TRIGGER t_ai0, t_au2, t_ad, t_bd")
		both("INSERT INTO t (id) VALUES (10)")
		both("UPDATE t SET v = 20 WHERE id = 2")
		both("DELETE FROM t WHERE id = 3")
		both("SELECT id, msg FROM log ORDER BY id")
		both("DROP TRIGGER t_ai1")
		both("CREATE TRIGGER log_ai AFTER INSERT ON log FOR EACH ROW SET @last_log = NEW.id")
		compare("DROP TRIGGER t_ai1, CREATE TRIGGER log_ai")
		// The capture's triggers are not the sandbox's: statements naming
		// one are refused (the proxy's prefix is reserved: 1044, as for
		// any name starting with it; or the server's 1360 for a
		// trigger that does not exist) and leave it be.
		for _, q := range []string{
			"SHOW CREATE TRIGGER " + capture,
			"DROP TRIGGER " + capture,
			"DROP TRIGGER IF EXISTS " + db + "." + capture,
			"CREATE OR REPLACE TRIGGER " + capture + " BEFORE INSERT ON t FOR EACH ROW SET @x = 1",
		} {
			_, err := sc.ExecContext(ctx, q)
			if e := mysqlErr(err); !strings.HasPrefix(e, "1044") && !strings.HasPrefix(e, "1360") {
				t.Errorf("%s: %s, want 1044 or 1360", q, e)
			}
		}
		var n int
		_ = prodRoot.QueryRow("SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE EVENT_OBJECT_SCHEMA LIKE ? AND EVENT_OBJECT_TABLE = 't' "+
			"AND TRIGGER_NAME LIKE ? AND ACTION_TIMING = 'AFTER'", "\\_sqlfork\\_%\\_"+db, strings.TrimSuffix(capture, "_ai")+"\\_a_").Scan(&n)
		if n != 3 {
			t.Errorf("the fork of t has %d capture triggers left, want 3", n)
		}
		compare("statements naming a capture trigger")
		both("INSERT INTO t (id, v) VALUES (11, 11)")
		both("SELECT id, msg FROM log ORDER BY id")
		sum := diffSummary(t, sc, "SANDBOX DIFF SUMMARY FOR t")
		if got, want := sum[db+".t"], (sumRow{change: "forked", ins: 2, upd: 2, del: 1, keyKind: "primary", method: "capture"}); got != want {
			t.Errorf("DIFF SUMMARY FOR t: %+v, want %+v", got, want)
		}
	})
}

// ---- TestPromoteStrategies ----

const promoteSchema = `
CREATE TABLE items (id INT PRIMARY KEY, v INT, note VARCHAR(20));
CREATE TABLE tags (id INT PRIMARY KEY, label VARCHAR(20));
INSERT INTO items VALUES (1, 10, 'n1'), (2, 20, 'n2'), (3, 30, 'n3'), (4, 40, 'n4'), (5, 50, 'n5'), (6, 60, 'n6'), (7, 70, 'n7'),
  (8, 80, 'n8'), (9, 90, 'n9'), (10, 100, 'n10');
INSERT INTO tags VALUES (1, 'a'), (2, 'b');`

// promoteSandbox are the sandbox's changes of the promote test, and
// promoteProduction production's own since the fork: rows 1, 3, 5 and 11
// conflict (production changed them differently), rows 2, 7 and 13
// converge (production made the sandbox's change too), row 8 only
// production changed, row 9 both changed in different columns (they
// merge).
var promoteSandbox = []string{
	"UPDATE items SET v = 111 WHERE id = 1",
	"UPDATE items SET v = 222 WHERE id = 2",
	"UPDATE items SET v = 333 WHERE id = 3",
	"UPDATE items SET v = 444 WHERE id = 4",
	"DELETE FROM items WHERE id IN (5, 6, 7)",
	"UPDATE items SET v = 909 WHERE id = 9",
	"INSERT INTO items VALUES (11, 1100, 's11'), (12, 1200, 's12'), (13, 1300, 's13')",
	"INSERT INTO tags VALUES (3, 'c')",
}

var promoteProduction = []string{
	"UPDATE items SET v = 999 WHERE id = 1",
	"UPDATE items SET v = 222 WHERE id = 2",
	"DELETE FROM items WHERE id = 3",
	"UPDATE items SET note = 'p5' WHERE id = 5",
	"DELETE FROM items WHERE id = 7",
	"INSERT INTO items VALUES (11, 1111, 'p11'), (13, 1300, 's13')",
	"UPDATE items SET note = 'p8' WHERE id = 8",
	"UPDATE items SET note = 'p9' WHERE id = 9",
}

// promoteConflicts are the keys that conflict.
var promoteConflicts = []string{"1", "11", "3", "5"}

// promoteWant is production's items after a promote by strategy, and the
// audit's counts (inserted, updated, deleted).
var promoteWant = map[string]struct {
	items         string
	ins, upd, del int64
}{
	// Production as the test changed it.
	"FAIL": {items: "1:999:n1 2:222:n2 4:40:n4 5:50:p5 6:60:n6 8:80:p8 9:90:p9 10:100:n10 11:1111:p11 13:1300:s13"},
	// The sandbox's changes but where production changed the same cells
	// (or deleted the row, or made one of the key) differently.
	"THEIRS": {items: "1:999:n1 2:222:n2 4:444:n4 5:50:p5 8:80:p8 9:909:p9 10:100:n10 11:1111:p11 12:1200:s12 13:1300:s13",
		ins: 3, upd: 3, del: 2},
	// The sandbox's values wherever it changed one; production's own
	// changes to other columns stay.
	"OURS": {items: "1:111:n1 2:222:n2 3:333:n3 4:444:n4 8:80:p8 9:909:p9 10:100:n10 11:1100:s11 12:1200:s12 13:1300:s13",
		ins: 4, upd: 5, del: 3},
}

// itemsText is production's items as id:v:note, by id.
func itemsText(t *testing.T, root *sql.DB, db string) string {
	t.Helper()
	_, rows := queryRows(t, root, "SELECT id, v, note FROM `"+db+"`.items ORDER BY id")
	parts := make([]string, len(rows))
	for i, r := range rows {
		parts[i] = r[0].String + ":" + r[1].String + ":" + r[2].String
	}
	return strings.Join(parts, " ")
}

// conflictKeys are the ids in a message's {"id": n} keys, sorted.
func conflictKeys(s string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`\{"id": (\d+)\}`).FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	sort.Strings(out)
	return out
}

// TestPromoteStrategies: a sandbox and production both changed rows since
// the fork. DIFF lists the conflicts with production's rows; PROMOTE
// (FAIL) is refused naming exactly the conflicting keys and leaves
// production as it is, THEIRS keeps production's conflicting rows and
// applies the rest, OURS gives the sandbox's rows everywhere it changed
// one; each promote is audited and counted. PROMOTE needs a promote
// account (1290), and the sandbox's owner or an admin.
func TestPromoteStrategies(t *testing.T) {
	prod, _ := env(t)
	e := newDiffEnv(t, "transparent", false, func(c *proxy.Config) {
		c.PromoteUser, c.PromotePassword = prod.User, prod.Password
		c.Users = []proxy.User{{Name: "other", Password: sandboxPassword}, {Name: "boss", Password: sandboxPassword}}
		c.Sandbox.Admins = []string{"boss"}
	})
	root := openDB(t, prod.DSN(""))
	for _, acct := range e.accts {
		for _, strategy := range []string{"FAIL", "THEIRS", "OURS"} {
			t.Run(acct.name+"/"+strategy, func(t *testing.T) {
				name := "promo_" + acct.short() + "_" + strings.ToLower(strategy)
				e.database(t, name, promoteSchema)
				sc := conn(t, openDB(t, acct.dsn(name, name)))
				for _, q := range promoteSandbox {
					mustExecC(t, sc, q)
				}
				direct := openDB(t, prod.DSN(name))
				for _, q := range promoteProduction {
					mustExecDB(t, direct, q)
				}
				promoteRights(t, root, acct, sc, name)
				// DIFF shows the conflicts, with production's rows.
				sum := diffSummary(t, sc, "SANDBOX DIFF SUMMARY")
				if got, want := sum[name+".items"], (sumRow{change: "forked", ins: 3, upd: 5, del: 3, conflicts: 4, keyKind: "primary", method: "capture"}); got != want {
					t.Errorf("DIFF SUMMARY items: %+v, want %+v", got, want)
				}
				if got, want := sum[name+".tags"], (sumRow{change: "forked", ins: 1, keyKind: "primary", method: "capture"}); got != want {
					t.Errorf("DIFF SUMMARY tags: %+v, want %+v", got, want)
				}
				var detail []string
				for _, r := range diffDetail(t, sc, "SANDBOX DIFF FOR items") {
					detail = append(detail, r.op+" "+r.key.String+" "+r.production.String)
				}
				wantDetail := []string{
					`conflict {"id": 1} {"id": 1, "v": 999, "note": "n1"}`,
					`update {"id": 2} `,
					`conflict {"id": 3} `,
					`update {"id": 4} `,
					`conflict {"id": 5} {"id": 5, "v": 50, "note": "p5"}`,
					`delete {"id": 6} `,
					`delete {"id": 7} `,
					`update {"id": 9} `,
					`conflict {"id": 11} {"id": 11, "v": 1111, "note": "p11"}`,
					`insert {"id": 12} `,
					`insert {"id": 13} `,
				}
				if !slices.Equal(detail, wantDetail) {
					t.Errorf("SANDBOX DIFF FOR items:\n %s\nwant\n %s", strings.Join(detail, "\n "), strings.Join(wantDetail, "\n "))
				}

				before := itemsText(t, root, name)
				tagsBefore := checksum(t, prod, name+".tags")
				if strategy == "FAIL" {
					// Only the owner or an admin may promote.
					other := conn(t, openDB(t, acct.h.userDSN("other", name)))
					_, attachErr := other.ExecContext(context.Background(), "SANDBOX ATTACH "+name)
					_, err := other.ExecContext(context.Background(), "SANDBOX PROMOTE "+name+" STRATEGY OURS")
					if e := mysqlErr(err); !strings.HasPrefix(e, "1227") && e != mysqlErr(attachErr) {
						t.Errorf("PROMOTE by another user: %s, want 1227 or what ATTACH says (%s)", e, mysqlErr(attachErr))
					} else {
						t.Logf("PROMOTE by another user: %s", e)
					}
				}
				metric := func(name string, labels map[string]string) float64 { return acct.h.metric(t, name, labels) }
				low := strings.ToLower(strategy)
				outcome := map[string]string{"FAIL": "refused"}[strategy]
				if outcome == "" {
					outcome = "committed"
				}
				promotes0 := metric("sqlfork_sandbox_promotes_total", map[string]string{"strategy": low, "outcome": outcome})
				conflicts0 := metric("sqlfork_sandbox_promote_conflicts_total", map[string]string{"strategy": low})

				promoter, user := sc, ""
				if strategy == "OURS" { // an admin, from outside the sandbox
					promoter, user = conn(t, openDB(t, acct.h.userDSN("boss", name))), "boss"
				}
				_, err := promoter.ExecContext(context.Background(), "SANDBOX PROMOTE "+name+" STRATEGY "+strategy)
				if strategy == "FAIL" {
					e := mysqlErr(err)
					if !strings.HasPrefix(e, "1105") || !strings.Contains(e, "4 rows") {
						t.Errorf("PROMOTE STRATEGY FAIL: %s, want 1105 naming 4 conflicting rows", e)
					}
					if got := conflictKeys(e); !slices.Equal(got, promoteConflicts) {
						t.Errorf("PROMOTE STRATEGY FAIL names keys %v, want %v: %s", got, promoteConflicts, e)
					}
				} else if err != nil {
					t.Errorf("PROMOTE STRATEGY %s: %s", strategy, mysqlErr(err))
				}
				if got := itemsText(t, root, name); got != promoteWant[strategy].items {
					t.Errorf("production's items after PROMOTE STRATEGY %s:\n %s\nwant\n %s\n(before: %s)", strategy, got, promoteWant[strategy].items, before)
				}
				tagsWant := "1:a 2:b 3:c"
				if strategy == "FAIL" {
					tagsWant = "1:a 2:b"
					if got := checksum(t, prod, name+".tags"); got != tagsBefore {
						t.Errorf("a refused PROMOTE changed production's tags")
					}
				}
				_, tagRows := queryRows(t, root, "SELECT CONCAT(id, ':', label) FROM `"+name+"`.tags ORDER BY id")
				var tags []string
				for _, r := range tagRows {
					tags = append(tags, r[0].String)
				}
				if got := strings.Join(tags, " "); got != tagsWant {
					t.Errorf("production's tags after PROMOTE STRATEGY %s: %s, want %s", strategy, got, tagsWant)
				}

				// The audit, and the metrics.
				_, audit := queryRows(t, root, "SELECT user, via, strategy, outcome, conflicts, inserted, updated, deleted, IFNULL(error, ''), "+
					"finished_at IS NOT NULL FROM _sqlfork_meta.promotes WHERE name = '"+name+"' ORDER BY id")
				rows := 1
				if acct.name == "least-privilege" { // refused first for its rights (promoteRights)
					rows = 2
					if r := audit[0]; r[2].String != "OURS" || r[3].String != "refused" || !strings.Contains(r[8].String, "may not do on production") {
						t.Errorf("audit of the promote refused for its rights: %v", r)
					}
				}
				if len(audit) != rows {
					t.Fatalf("%d audit rows for %s, want %d: %v", len(audit), name, rows, audit)
				}
				a := audit[rows-1]
				if user == "" { // the owner
					user, _, _ = strings.Cut(acct.dsn("", ""), ":")
				}
				w := promoteWant[strategy]
				got := fmt.Sprintf("%s %s %s %s %s %s %s %s %s", a[0].String, a[1].String, a[2].String, a[3].String, a[4].String, a[5].String, a[6].String,
					a[7].String, a[9].String)
				want := fmt.Sprintf("%s sql %s %s 4 %d %d %d 1", user, strategy, outcome, w.ins, w.upd, w.del)
				if got != want {
					t.Errorf("audit row: %s, want %s (error %q)", got, want, a[8].String)
				}
				if strategy == "FAIL" && !strings.Contains(a[8].String, "PROMOTE refused") {
					t.Errorf("audit row of a refused promote: error %q", a[8].String)
				}
				if got := metric("sqlfork_sandbox_promotes_total", map[string]string{"strategy": low, "outcome": outcome}) - promotes0; got != 1 {
					t.Errorf("sqlfork_sandbox_promotes_total{strategy=%s,outcome=%s} grew by %v, want 1", low, outcome, got)
				}
				if got := metric("sqlfork_sandbox_promote_conflicts_total", map[string]string{"strategy": low}) - conflicts0; got != 4 {
					t.Errorf("sqlfork_sandbox_promote_conflicts_total{strategy=%s} grew by %v, want 4", low, got)
				}
			})
		}
	}

	t.Run("without-promote-account", func(t *testing.T) {
		_, h := sandboxProxy(t, "transparent", nil)
		name := "promo_none"
		e.database(t, name, promoteSchema)
		sc := conn(t, openDB(t, h.userDSN(sandboxUser+"+"+name, name)))
		mustExecC(t, sc, "UPDATE items SET v = 0 WHERE id = 1")
		_, err := sc.ExecContext(context.Background(), "SANDBOX PROMOTE")
		if e := mysqlErr(err); !strings.HasPrefix(e, "1290") {
			t.Errorf("PROMOTE without a promote account: %s, want 1290", e)
		}
		if got := itemsText(t, root, name); !strings.HasPrefix(got, "1:10:n1 ") {
			t.Errorf("production's items: %s", got)
		}
	})
}

// ---- TestDiffORMWorkloadExport ----

// autoSpecs are the specs of db's tables as c sees them: every column,
// the primary key.
func autoSpecs(t *testing.T, c rowQuerier, db string) []diffSpec {
	t.Helper()
	var specs []diffSpec
	for _, n := range tableNames(t, c, db) {
		s := diffSpec{name: n, keyKind: "primary", method: "capture"}
		where := " WHERE TABLE_SCHEMA = '" + db + "' AND TABLE_NAME = '" + n + "'"
		_, cols := queryRows(t, c, "SELECT COLUMN_NAME FROM information_schema.COLUMNS"+where+" ORDER BY ORDINAL_POSITION")
		for _, r := range cols {
			s.cols = append(s.cols, r[0].String)
		}
		_, key := queryRows(t, c, "SELECT COLUMN_NAME FROM information_schema.STATISTICS"+where+" AND INDEX_NAME = 'PRIMARY' ORDER BY SEQ_IN_INDEX")
		for _, r := range key {
			s.key = append(s.key, r[0].String)
		}
		if s.key == nil {
			t.Fatalf("%s.%s has no primary key", db, n)
		}
		specs = append(specs, s)
	}
	return specs
}

// ormWorkload is an ORM's workload, run n against a target.
type ormWorkload struct {
	name string
	run  func(t *testing.T, tg ormTarget, n int) string
}

// TestDiffORMWorkloadExport: production where an ORM's workload (GORM;
// SQLAlchemy too when Python has it) ran once, a sandbox where it runs
// again; DIFF matches the difference, and the export applied to a copy of
// production (where the workload ran once too) gives the sandbox's
// tables, twice.
func TestDiffORMWorkloadExport(t *testing.T) {
	e := newDiffEnv(t, "transparent", true, nil)
	prodRoot := openDB(t, e.prod.DSN(""))
	replicaRoot := openDB(t, e.replica.DSN(""))
	// Every ORM workload of orm_test.go: required with CI=true (as there),
	// otherwise those whose runtime is installed.
	ci := os.Getenv("CI") == "true"
	workloads := []ormWorkload{{"gorm", runGorm}}
	if _, err := os.Stat("/usr/bin/python3"); ci || err == nil && exec.Command("/usr/bin/python3", "-c", "import sqlalchemy, pymysql").Run() == nil {
		py := requireSQLAlchemy(t)
		workloads = append(workloads, ormWorkload{"sqlalchemy", func(t *testing.T, tg ormTarget, n int) string {
			return runSQLAlchemy(t, py, tg, n)
		}})
	} else {
		t.Log("no SQLAlchemy")
	}
	if _, err := exec.LookPath("npm"); ci || err == nil {
		requireMysql2(t)
		workloads = append(workloads, ormWorkload{"mysql2", runMysql2})
	} else {
		t.Log("no node")
	}
	if _, err := exec.LookPath("javac"); ci || err == nil {
		cp := requireConnectorJ(t, "orm/java/Workload.java")
		workloads = append(workloads, ormWorkload{"connj", func(t *testing.T, tg ormTarget, n int) string {
			return runConnectorJ(t, cp, tg, n)
		}})
	} else {
		t.Log("no javac")
	}
	for _, acct := range e.accts {
		for _, w := range workloads {
			t.Run(acct.name+"/"+w.name+"/fresh", func(t *testing.T) {
				// Production has no table yet: the sandbox creates them all.
				db := "diff" + w.name + "_f_" + acct.short()
				e.database(t, db, "")
				tag := "orm" + db
				holder := conn(t, openDB(t, acct.dsn(tag, db)))
				mustExecC(t, holder, "SELECT 1")
				w.run(t, ormTarget{acct.h.addr, acct.user + "+" + tag, acct.password, db}, 1)
				tables := tableNames(t, holder, db)
				sum := diffSummary(t, holder, "SANDBOX DIFF SUMMARY")
				for _, n := range tables {
					rows := queryString(t, holder, "SELECT COUNT(*) FROM `"+db+"`.`"+n+"`")
					if got := sum[db+"."+n]; got.change != "created" || got.method != "created" || fmt.Sprint(got.ins) != rows || got.upd+got.del+got.conflicts != 0 {
						t.Errorf("DIFF SUMMARY %s: %+v, want created with %s rows inserted", n, got, rows)
					}
				}
				if len(sum) != len(tables) {
					t.Errorf("DIFF SUMMARY lists %d tables, the sandbox has %v", len(sum), tables)
				}
				stmts := sandboxExport(t, holder, "SANDBOX EXPORT")
				applyExport(t, e.replica, stmts)
				if got := tableNames(t, replicaRoot, db); !slices.Equal(got, tables) {
					t.Errorf("tables after the export: %v, want %v", got, tables)
				}
				compareWithReplica(t, holder, replicaRoot, db, tables, "export applied once")
				applyExport(t, e.replica, stmts)
				compareWithReplica(t, holder, replicaRoot, db, tables, "export applied twice")
				if t.Failed() {
					t.Logf("export:\n%s", strings.Join(stmts, ";\n"))
				}
			})
			t.Run(acct.name+"/"+w.name+"/again", func(t *testing.T) {
				// Production where the workload ran once.
				db := "diff" + w.name + "_" + acct.short()
				e.database(t, db, "")
				want := w.run(t, ormTarget{e.prod.Addr, e.prod.User, e.prod.Password, db}, 1)
				if got := w.run(t, ormTarget{e.replica.Addr, e.replica.User, e.replica.Password, db}, 1); got != want {
					t.Fatalf("the workload on the copy of production:\n%s\nwant\n%s", got, want)
				}
				specs := autoSpecs(t, prodRoot, db)
				var tables []string
				for _, s := range specs {
					tables = append(tables, s.name)
					if a, b := tableState(t, prodRoot, db, s.name), tableState(t, replicaRoot, db, s.name); a != b {
						t.Fatalf("the copy of production's %s differs:\n%s", s.name, lineDiff(a, b))
					}
				}
				tag := "orm" + db
				holder := conn(t, openDB(t, acct.dsn(tag, db)))
				mustExecC(t, holder, "SELECT 1")
				w.run(t, ormTarget{acct.h.addr, acct.user + "+" + tag, acct.password, db}, 2)
				checkDiff(t, holder, prodRoot, db, specs)
				stmts := sandboxExport(t, holder, "SANDBOX EXPORT")
				applyExport(t, e.replica, stmts)
				compareWithReplica(t, holder, replicaRoot, db, tables, "export applied once")
				applyExport(t, e.replica, stmts)
				compareWithReplica(t, holder, replicaRoot, db, tables, "export applied twice")
				if t.Failed() {
					t.Logf("export:\n%s", strings.Join(stmts, ";\n"))
				}
			})
		}
	}
}

// ---- named sandboxes, FOR, transactions ----

// TestDiffNamedForAndTransaction: DIFF of one table (FOR db.t, FOR t in
// the current database), of a sandbox named from a connection outside it,
// of a sandbox without changes; refused for another user's sandbox, for a
// connection in no sandbox that names none, and inside a transaction
// (1179, as every SANDBOX statement).
func TestDiffNamedForAndTransaction(t *testing.T) {
	e := newDiffEnv(t, "explicit", false, func(c *proxy.Config) {
		c.Users = []proxy.User{{Name: "other", Password: sandboxPassword}}
	})
	for _, acct := range e.accts {
		t.Run(acct.name, func(t *testing.T) {
			db := "diffnamed_" + acct.short()
			e.database(t, db, "CREATE TABLE x (id INT PRIMARY KEY, v INT); CREATE TABLE y (id INT PRIMARY KEY, v INT);"+
				"INSERT INTO x VALUES (1, 1), (2, 2); INSERT INTO y VALUES (1, 1);")
			ctx := context.Background()
			a := conn(t, openDB(t, acct.dsn("", db)))
			b := conn(t, openDB(t, acct.dsn("", db)))
			mustExecC(t, a, "SANDBOX CREATE "+db+" TTL 1h")
			t.Cleanup(func() { _, _ = a.ExecContext(ctx, "SANDBOX DISCARD "+db) })
			if got := diffSummary(t, a, "SANDBOX DIFF SUMMARY"); len(got) != 0 {
				t.Errorf("DIFF SUMMARY of a sandbox without changes: %v", got)
			}
			if got := diffDetail(t, a, "SANDBOX DIFF"); len(got) != 0 {
				t.Errorf("DIFF of a sandbox without changes: %v", got)
			}
			mustExecC(t, a, "UPDATE x SET v = 10 WHERE id = 1")
			mustExecC(t, a, "INSERT INTO y VALUES (2, 2)")

			tables := func(sum map[string]sumRow) []string {
				var out []string
				for n := range sum {
					out = append(out, n)
				}
				sort.Strings(out)
				return out
			}
			detailOf := func(rows []detailRow) []string {
				var out []string
				for _, r := range rows {
					out = append(out, r.table+" "+r.op+" "+r.key.String)
				}
				return out
			}
			x, y := db+".x", db+".y"
			all := []string{x + " update {\"id\": 1}", y + " insert {\"id\": 2}"}
			for _, c := range []struct {
				on   *sql.Conn
				q    string
				want []string
			}{
				{a, "SANDBOX DIFF SUMMARY FOR " + db + ".x", []string{x}},
				{a, "SANDBOX DIFF SUMMARY FOR `" + db + "`.`y`", []string{y}},
				{a, "SANDBOX DIFF SUMMARY FOR y", []string{y}},
				{a, "SANDBOX DIFF SUMMARY", []string{x, y}},
				{b, "SANDBOX DIFF SUMMARY " + db, []string{x, y}},
				{b, "SANDBOX DIFF SUMMARY " + db + " FOR x", []string{x}},
			} {
				if got := tables(diffSummary(t, c.on, c.q)); !slices.Equal(got, c.want) {
					t.Errorf("%s: tables %v, want %v", c.q, got, c.want)
				}
			}
			// A table that exists nowhere is the server's 1146, not an
			// empty diff.
			rows, err := a.QueryContext(context.Background(), "SANDBOX DIFF SUMMARY FOR "+db+".nosuch")
			if err == nil {
				rows.Close()
			}
			if e := mysqlErr(err); !strings.HasPrefix(e, "1146 (42S02)") {
				t.Errorf("SANDBOX DIFF SUMMARY FOR %s.nosuch: %s, want 1146", db, e)
			}
			for _, c := range []struct {
				on   *sql.Conn
				q    string
				want []string
			}{
				{a, "SANDBOX DIFF", all},
				{b, "SANDBOX DIFF " + db, all},
				{b, "SANDBOX DIFF " + db + " FOR " + db + ".x", all[:1]},
				{a, "SANDBOX DIFF FOR y", all[1:]},
			} {
				if got := detailOf(diffDetail(t, c.on, c.q)); !slices.Equal(got, c.want) {
					t.Errorf("%s: %v, want %v", c.q, got, c.want)
				}
			}
			if a, b := sandboxExport(t, a, "SANDBOX EXPORT"), sandboxExport(t, b, "SANDBOX EXPORT "+db); !slices.Equal(a, b) {
				t.Errorf("SANDBOX EXPORT from inside:\n%s\nnamed from outside:\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
			}

			// Refusals.
			other := conn(t, openDB(t, acct.h.userDSN("other", db)))
			for _, c := range []struct {
				on   *sql.Conn
				q    string
				want string
			}{
				{b, "SANDBOX DIFF", "1105"},
				{b, "SANDBOX EXPORT", "1105"},
				{b, "SANDBOX DIFF nosuch_sandbox", "1105"},
				{other, "SANDBOX DIFF " + db, "1105"},
				{other, "SANDBOX EXPORT " + db, "1105"},
				{a, "SANDBOX DIFF FOR", "1064"},
				{a, "SANDBOX DIFF SUMMARY " + db + " FOR x extra", "1064"},
			} {
				_, err := c.on.ExecContext(ctx, c.q)
				if e := mysqlErr(err); !strings.HasPrefix(e, c.want) {
					t.Errorf("%s: %s, want %s", c.q, e, c.want)
				}
			}
			mustExecC(t, a, "BEGIN")
			mustExecC(t, a, "UPDATE x SET v = 11 WHERE id = 1")
			for _, q := range []string{"SANDBOX DIFF", "SANDBOX DIFF SUMMARY", "SANDBOX DIFF " + db + " FOR x", "SANDBOX EXPORT", "SANDBOX PROMOTE"} {
				_, err := a.ExecContext(ctx, q)
				if e := mysqlErr(err); !strings.HasPrefix(e, "1179") {
					t.Errorf("%s in a transaction: %s, want 1179", q, e)
				}
			}
			mustExecC(t, a, "ROLLBACK")
			// The rolled-back change is not in the diff.
			if got := detailOf(diffDetail(t, a, "SANDBOX DIFF")); !slices.Equal(got, all) {
				t.Errorf("SANDBOX DIFF after a rolled-back transaction: %v, want %v", got, all)
			}
			for _, kind := range []string{"summary", "detail", "export"} {
				if n := acct.h.metric(t, "sqlfork_sandbox_diff_seconds", map[string]string{"kind": kind}); n < 2 {
					t.Errorf("sqlfork_sandbox_diff_seconds{kind=%s} has %v samples, want at least 2", kind, n)
				}
			}
		})
	}
}

// TestDiffDDLInTransaction: DDL on a table the sandbox's open transaction
// has written (the server commits the transaction first, as on any
// connection) does not wait on the proxy's own work on the fork's capture
// triggers (which would wait for the transaction's locks: lock_wait_timeout,
// a day by default).
func TestDiffDDLInTransaction(t *testing.T) {
	e := newDiffEnv(t, "transparent", false, nil)
	prodRoot := openDB(t, e.prod.DSN(""))
	ddl := []string{
		"ALTER TABLE t ADD COLUMN x INT",
		"TRUNCATE TABLE t",
		"DROP TABLE t",
		"RENAME TABLE t TO t2",
		"CREATE TRIGGER t_ai AFTER INSERT ON t FOR EACH ROW SET @x = NEW.id",
	}
	for _, acct := range e.accts {
		for i, q := range ddl {
			t.Run(acct.name+"/"+strings.Fields(q)[0]+"_"+strings.Fields(q)[1], func(t *testing.T) {
				db := fmt.Sprintf("diffddltx%d_%s", i, acct.short())
				e.database(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v INT); INSERT INTO t VALUES (1, 1), (2, 2);")
				c := conn(t, openDB(t, acct.dsn(db, db)))
				mustExecC(t, c, "UPDATE t SET v = 10 WHERE id = 2") // forked, captured
				mustExecC(t, c, "BEGIN")
				mustExecC(t, c, "UPDATE t SET v = 20 WHERE id = 1")
				ctx, cancel := context.WithTimeout(context.Background(), 6*time.Second)
				defer cancel()
				// What the server's connections wait for, should it hang.
				waits := make(chan string, 1)
				go func() {
					select {
					case <-ctx.Done():
						waits <- ""
						return
					case <-time.After(3 * time.Second):
					}
					var b strings.Builder
					rows, err := prodRoot.Query("SELECT COMMAND, STATE, LEFT(INFO, 120) FROM information_schema.PROCESSLIST WHERE STATE LIKE 'Waiting%' ORDER BY ID")
					if err == nil {
						for rows.Next() {
							var cmd, state, info sql.NullString
							_ = rows.Scan(&cmd, &state, &info)
							fmt.Fprintf(&b, "\n  %s | %s | %s", cmd.String, state.String, info.String)
						}
						rows.Close()
					}
					waits <- b.String()
				}()
				start := time.Now()
				_, err := c.ExecContext(ctx, q)
				cancel()
				if err != nil {
					t.Fatalf("%s after a write in an open transaction: %s (after %s); waiting on the server:%s", q, mysqlErr(err),
						time.Since(start).Round(time.Millisecond), <-waits)
				}
				if got := diffSummary(t, c, "SANDBOX DIFF SUMMARY"); len(got) == 0 {
					t.Errorf("DIFF SUMMARY after %s lists nothing", q)
				}
			})
		}
	}
}
