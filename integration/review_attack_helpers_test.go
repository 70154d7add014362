package integration

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/go-sql-driver/mysql"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
	"github.com/sqlfork/sqlfork-proxy/grants"
	"github.com/sqlfork/sqlfork-proxy/integration/testdb"
	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// The harness of the review-path attack suite (review_attack_test.go):
// production behind two proxies in transparent mode — one logging in
// upstream with the least-privilege everyday account, one with an ALL
// PRIVILEGES one — both promoting with production's ALL PRIVILEGES account,
// each with its admin API; a replica that exports are applied to with the
// mariadb client; and the invariant every case ends with: production, the
// proxy's registry and the machine's files are as before, but for what
// the case's own account could have done directly.

// rvToken is the admin API's bearer token; rvPassword the password of
// every server account the suite creates.
const rvToken, rvPassword = "rv-admin-token", "rv-pw"

// rvEnv is one top-level test's servers and proxies.
type rvEnv struct {
	tag               string // in the name of every database it makes
	prod, replica     *testdb.Server
	root, replicaRoot *sql.DB // their ALL PRIVILEGES account, multi-statements
	accts             []rvAcct
	// marker is a short directory (it fits in a name) the attacks aim
	// files at: DATA DIRECTORY, and the mariadb client's \! runs there.
	marker string
	n      atomic.Int64
}

// rvAcct is an everyday account's proxy.
type rvAcct struct {
	name, short    string
	h              *proxyHandle
	user, password string // its login through h
	api            string // the admin API's base URL
}

// newRVEnv starts the proxies in front of prod and, when asked for, a
// replica.
func newRVEnv(t *testing.T, tag string, prod *testdb.Server, replica bool) *rvEnv {
	t.Helper()
	e := &rvEnv{tag: tag, prod: prod, root: openDB(t, prod.DSN("")+"?multiStatements=true")}
	// The least-privilege account of docs/OPERATIONS.md, with the optional
	// SELECT on mysql.proc: production's routines are copied into sandboxes.
	rvExec(t, e.root, fmt.Sprintf("CREATE USER IF NOT EXISTS '%[1]s'@'%%' IDENTIFIED BY '%[2]s'; "+
		"GRANT SELECT ON mysql.func TO '%[1]s'@'%%'; GRANT SELECT ON mysql.proc TO '%[1]s'@'%%'; "+
		"GRANT ALL PRIVILEGES ON `%[3]s`.* TO '%[1]s'@'%%'",
		sandboxUser, sandboxPassword, grants.SandboxPattern("_sqlfork")))
	for _, a := range []rvAcct{
		{name: "least-privilege", short: "l", user: sandboxUser, password: sandboxPassword},
		{name: "all-privileges", short: "a", user: prod.User, password: prod.Password},
	} {
		a.h = startTestProxy(t, prod.Addr, prod, func(c *proxy.Config) {
			c.Mode = "transparent"
			c.UpstreamUser, c.UpstreamPassword = a.user, a.password
			c.PromoteUser, c.PromotePassword = prod.User, prod.Password
			c.Sandbox.ReapInterval = 500 * time.Millisecond
		})
		api := httptest.NewServer(adminapi.NewHandler(adminapi.Options{Sandboxes: a.h.srv.Admin(), Token: rvToken}))
		t.Cleanup(api.Close)
		a.api = api.URL
		e.accts = append(e.accts, a)
	}
	dir, err := os.MkdirTemp("/tmp", "rvm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	e.marker = dir
	if replica {
		e.replica = rvStartServer(t)
		e.replicaRoot = openDB(t, e.replica.DSN("")+"?multiStatements=true")
		rvExec(t, e.replicaRoot, "SET GLOBAL log_output = 'TABLE'")
	}
	return e
}

// rvStartServer starts a throwaway MariaDB of the test's own (not
// syncing its files: nothing of it outlives the test). Each top-level test
// has its own production: the invariant then reads only what its cases
// did, the tests run in parallel, and an attack that succeeds damages no
// server other tests use.
func rvStartServer(t *testing.T) *testdb.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := testdb.StartForTest(ctx, t, testdb.Options{ExtraArgs: []string{"--innodb-flush-method=nosync", "--innodb-doublewrite=0",
		"--innodb-flush-log-at-trx-commit=0"}})
	return s
}

// rvRun is one case run with one everyday account, in its own database.
type rvRun struct {
	e    *rvEnv
	acct rvAcct
	db   string
	dbs  []string // db and the further databases the schema made
	// schema made them (expanded); onReplica are statements run on the
	// replica since (production's own changes, mirrored); replicaUsed: an
	// export was applied to it since.
	schema      string
	onReplica   []string
	replicaUsed bool
	// before is production as the case starts; allowed the objects
	// (db.name) the case may change there.
	before  rvSnap
	allowed map[string]bool
}

// rvSchema is a case's production: sql runs as root in {db}, on
// production and the replica; dbs are further databases it makes ({db}
// expanded), which the everyday account may read too.
type rvSchema struct {
	sql string
	dbs []string
}

// each runs f once per everyday account, as subtests, each in a fresh
// database, with the invariant checked when f ends (also by t.Fatal).
func (e *rvEnv) each(t *testing.T, schema rvSchema, f func(t *testing.T, r *rvRun)) {
	for _, a := range e.accts {
		t.Run(a.name, func(t *testing.T) {
			r := e.start(t, a, schema)
			defer r.checkInvariant(t)
			f(t, r)
		})
	}
}

// rvEachCase runs run on each of cases in a subtest, of the name and on
// the schema setup gives for the case, once for each account (each).
func rvEachCase[C any](t *testing.T, e *rvEnv, cases []C, setup func(C) (string, rvSchema), run func(*testing.T, *rvRun, C)) {
	for _, c := range cases {
		name, schema := setup(c)
		t.Run(name, func(t *testing.T) {
			e.each(t, schema, func(t *testing.T, r *rvRun) { run(t, r, c) })
		})
	}
}

// start makes the run's databases and takes production's snapshot.
func (e *rvEnv) start(t *testing.T, a rvAcct, schema rvSchema) *rvRun {
	t.Helper()
	r := &rvRun{e: e, acct: a, db: fmt.Sprintf("rv%s%d%s", e.tag, e.n.Add(1), a.short), allowed: map[string]bool{}}
	t.Cleanup(e.clearMarker) // last: after the databases (and their files) are dropped
	r.dbs = []string{r.db}
	for _, d := range schema.dbs {
		r.dbs = append(r.dbs, r.expand(d))
	}
	r.schema = r.expand(schema.sql)
	for _, root := range []*sql.DB{e.root, e.replicaRoot} {
		if root != nil {
			r.makeDatabases(t, root)
			t.Cleanup(func() { _, _ = root.Exec(r.dropDatabases()) })
		}
	}
	for _, d := range r.dbs {
		grant := "SELECT, SHOW VIEW, TRIGGER ON " + escQI(rvGrantDB(d)) + ".*"
		rvExec(t, e.root, "GRANT "+grant+" TO '"+sandboxUser+"'@'%'")
		t.Cleanup(func() { _, _ = e.root.Exec("REVOKE " + grant + " FROM '" + sandboxUser + "'@'%'") })
	}
	r.before = rvSettled(t, e.root, e.marker)
	return r
}

// dropDatabases drops the run's databases.
func (r *rvRun) dropDatabases() string {
	drop := ""
	for _, d := range r.dbs {
		drop += "DROP DATABASE IF EXISTS " + escQI(d) + "; "
	}
	return drop
}

// makeDatabases makes the run's databases from its schema on root.
func (r *rvRun) makeDatabases(t *testing.T, root *sql.DB) {
	t.Helper()
	q := r.dropDatabases() + "CREATE DATABASE " + escQI(r.db) + "; USE " + escQI(r.db)
	if strings.TrimSpace(r.schema) != "" {
		q += "; " + r.schema
	}
	rvExec(t, root, q)
}

// resetReplica makes the run's databases on the replica again: a copy of
// production as the case started, with onReplica run since.
func (r *rvRun) resetReplica(t *testing.T) {
	t.Helper()
	r.makeDatabases(t, r.e.replicaRoot)
	for _, q := range r.onReplica {
		rvExec(t, r.e.replicaRoot, "USE "+escQI(r.db)+"; "+q)
	}
	r.replicaUsed = false
}

// rvGrantDB is a database-level GRANT's pattern for exactly the database
// name (its LIKE wildcards and backslashes escaped).
func rvGrantDB(name string) string {
	return strings.NewReplacer(`\`, `\\`, "_", `\_`, "%", `\%`).Replace(name)
}

// expand puts the run's names in s: {db}, {marker}.
func (r *rvRun) expand(s string) string {
	return strings.NewReplacer("{db}", r.db, "{marker}", r.e.marker).Replace(s)
}

// allow lets the case change objects (db.name, {db} expanded) of
// production: a promote the account had the rights to.
func (r *rvRun) allow(objs ...string) {
	for _, o := range objs {
		r.allowed[r.expand(o)] = true
	}
}

// rebase takes production's snapshot again: production itself changed
// (the test's own root statements), not the case.
func (r *rvRun) rebase(t *testing.T) { r.before = rvSettled(t, r.e.root, r.e.marker) }

// mayWrite reports whether the run's everyday account may write production
// itself (the ALL PRIVILEGES one): PROMOTE carries out only what the
// promoting account could do directly, so the least-privilege account's
// promotes are refused.
func (r *rvRun) mayWrite() bool { return r.acct.short == "a" }

// promote runs stmt (a SANDBOX PROMOTE) on sb: for an account that may
// write production it commits and production's tables are then the
// sandbox's; for one that may not, it is refused with 1142 (42000) and
// production is unchanged.
func (r *rvRun) promote(t *testing.T, sb *sql.Conn, stmt string, tables ...string) {
	t.Helper()
	_, err := rvTry(sb, stmt)
	if !r.mayWrite() {
		checkErr(t, stmt+" by an account that may not write production", err, []uint16{1142}, "42000", "")
		return
	}
	if err != nil {
		t.Fatalf("%s: %s", stmt, mysqlErr(err))
	}
	for _, tbl := range tables {
		r.allow("{db}." + tbl)
	}
	compareWithReplica(t, sb, r.e.root, r.db, tables, "production after the promote")
}

// checkInvariant compares production with the run's snapshot.
func (r *rvRun) checkInvariant(t *testing.T) {
	after := rvSettled(t, r.e.root, r.e.marker)
	for _, c := range r.before.diff(after) {
		if !r.allowed[c.key.obj] || c.key.kind == "files" {
			t.Errorf("invariant: production %s", c)
		}
	}
}

// clearMarker empties the marker directory (a failed case's files must
// not fail the next).
func (e *rvEnv) clearMarker() {
	ents, _ := os.ReadDir(e.marker)
	for _, d := range ents {
		_ = os.RemoveAll(filepath.Join(e.marker, d.Name()))
	}
}

// everyday is a connection of the run's everyday account through its
// proxy, in the run's database, in the sandbox named tag ("": anonymous).
func (r *rvRun) everyday(t *testing.T, tag string) *sql.Conn {
	t.Helper()
	user := r.acct.user
	if tag != "" {
		user += "+" + tag
	}
	return conn(t, openDB(t, fmt.Sprintf("%s:%s@tcp(%s)/%s", user, r.acct.password, r.acct.h.addr, r.db)))
}

// account creates the server account name_<db> with grants ({db}
// expanded) and returns its name; dropped when the test ends.
func (r *rvRun) account(t *testing.T, name string, grants ...string) string {
	t.Helper()
	user := name + "_" + r.db
	q := fmt.Sprintf("DROP USER IF EXISTS '%[1]s'@'%%'; CREATE USER '%[1]s'@'%%' IDENTIFIED BY '%[2]s'", user, rvPassword)
	for _, g := range grants {
		q += fmt.Sprintf("; GRANT %s TO '%s'@'%%'", r.expand(g), user)
	}
	rvExec(t, r.e.root, q)
	t.Cleanup(func() { _, _ = r.e.root.Exec("DROP USER IF EXISTS '" + user + "'@'%'") })
	r.before.privileges(r.e.root) // the account and its grants are the case's setup
	return user
}

// relayed creates an account as account does, with the grants a relayed
// sandbox account needs on the proxy's databases, and returns it with a
// connection through the run's proxy (relayed login; in the sandbox named
// tag, "" an anonymous one) and one straight to production, both in the
// run's database.
func (r *rvRun) relayed(t *testing.T, name, tag string, privileges ...string) (user string, proxied, direct *sql.Conn) {
	t.Helper()
	privileges = append(slices.Clone(privileges), "ALL PRIVILEGES ON `"+grants.SandboxPattern("_sqlfork")+"`.*")
	user = r.account(t, name, privileges...)
	login := user
	if tag != "" {
		login += "+" + tag
	}
	proxied = conn(t, openDB(t, fmt.Sprintf("%s:%s@tcp(%s)/%s", login, rvPassword, r.acct.h.addr, r.db)))
	return user, proxied, r.direct(t, user)
}

// direct is a connection of the account user (made by account) straight
// to production, in the run's database.
func (r *rvRun) direct(t *testing.T, user string) *sql.Conn {
	t.Helper()
	return conn(t, openDB(t, fmt.Sprintf("%s:%s@tcp(%s)/%s", user, rvPassword, r.e.prod.Addr, r.db)))
}

// rvExec runs q (several statements) or fails the test.
func rvExec(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("%s: %s", abbrev(q, 300), mysqlErr(err))
	}
}

// rvTry runs statements on c in order, until one fails: its index and
// error (-1, nil when all ran).
func rvTry(c *sql.Conn, stmts ...string) (int, error) {
	for i, s := range stmts {
		rows, err := c.QueryContext(context.Background(), s)
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
			rows.Close()
		}
		if err != nil {
			return i, err
		}
	}
	return -1, nil
}

// rvQuery reads every row of q as text (NULL as "NULL"); an error is
// one row "ERROR …", so that it shows in a comparison.
func rvQuery(c rowQuerier, q string) [][]string {
	rows, err := c.QueryContext(context.Background(), q)
	if err != nil {
		return [][]string{{"ERROR " + mysqlErr(err)}}
	}
	defer rows.Close()
	var out [][]string
	for rows.Next() {
		vals, err := scanStrings(rows)
		if err != nil {
			return append(out, []string{"ERROR " + err.Error()})
		}
		out = append(out, nullText(vals))
	}
	if err := rows.Err(); err != nil {
		out = append(out, []string{"ERROR " + mysqlErr(err)})
	}
	return out
}

// rvText is rows as lines of tab-separated columns.
func rvText(rows [][]string) string {
	lines := make([]string, len(rows))
	for i, r := range rows {
		lines[i] = strings.Join(r, "\t")
	}
	return strings.Join(lines, "\n")
}

// ---- the snapshot ----

// rvKey names a part of a snapshot: what (kind) of which object (db.name).
type rvKey struct{ kind, obj string }

// rvSnap is a server's state as the invariant compares it.
type rvSnap map[rvKey]string

// rvObjSchemas limits a schema column to production's databases, the
// system schemas mysql and sys, and the proxy's registry; schemas, when
// set, to those.
func rvObjSchemas(col string, schemas []string) string {
	if schemas != nil {
		return col + " IN (" + rvList(schemas) + ")"
	}
	return fmt.Sprintf("%[1]s NOT IN ('information_schema', 'performance_schema') AND (%[1]s NOT LIKE '\\_sqlfork%%' OR %[1]s = '_sqlfork_meta')", col)
}

// rvList is names as a list of string literals.
func rvList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = escQS(n)
	}
	return strings.Join(q, ", ")
}

// rvSnapshot reads srv's state (through root): every table's definition
// and checksum, views (definer and security included), triggers,
// routines, events, the system schemas' tables and privilege rows, and
// the files of dirs and of the test's working directory. schemas limits
// the databases read (nil: all but the proxy's sandboxes).
func rvSnapshot(t *testing.T, root *sql.DB, schemas []string, dirs ...string) rvSnap {
	t.Helper()
	s := rvSnap{}
	s.tables(root, schemas)
	// Views, triggers, routines, events, and the columns of the system
	// schemas' and the registry's tables, in one query: kind, object, text.
	q := "SELECT 'view', CONCAT(TABLE_SCHEMA, '.', TABLE_NAME), CONCAT_WS('\\t', VIEW_DEFINITION, CHECK_OPTION, IS_UPDATABLE, DEFINER, SECURITY_TYPE, ALGORITHM) " +
		"FROM information_schema.VIEWS WHERE " + rvObjSchemas("TABLE_SCHEMA", schemas) +
		" UNION ALL SELECT 'trigger', CONCAT(TRIGGER_SCHEMA, '.', TRIGGER_NAME), CONCAT_WS('\\t', EVENT_MANIPULATION, EVENT_OBJECT_SCHEMA, EVENT_OBJECT_TABLE, " +
		"ACTION_ORDER, ACTION_TIMING, ACTION_STATEMENT, DEFINER) FROM information_schema.TRIGGERS WHERE " + rvObjSchemas("TRIGGER_SCHEMA", schemas) +
		" UNION ALL SELECT 'routine', CONCAT(ROUTINE_SCHEMA, '.', ROUTINE_NAME), CONCAT_WS('\\t', ROUTINE_TYPE, ROUTINE_DEFINITION, SECURITY_TYPE, DEFINER, " +
		"DTD_IDENTIFIER) FROM information_schema.ROUTINES WHERE " + rvObjSchemas("ROUTINE_SCHEMA", schemas) +
		" UNION ALL SELECT 'event', CONCAT(EVENT_SCHEMA, '.', EVENT_NAME), CONCAT_WS('\\t', EVENT_DEFINITION, STATUS, DEFINER) FROM information_schema.EVENTS" +
		" UNION ALL SELECT 'columns', CONCAT(TABLE_SCHEMA, '.', TABLE_NAME), CONCAT_WS('\\t', ORDINAL_POSITION, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, " +
		"IFNULL(COLUMN_DEFAULT, 'NULL'), EXTRA) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA IN ('mysql', '_sqlfork_meta') OR " +
		"TABLE_SCHEMA = 'sys' AND TABLE_NAME = 'sys_config' ORDER BY 1, 2, 3"
	for _, r := range rvQuery(root, q) {
		if len(r) < 3 {
			s[rvKey{"objects", ""}] = strings.Join(r, " ")
			continue
		}
		s[rvKey{r[0], r[1]}] += r[2] + "\n"
	}
	s[rvKey{"schemata", ""}] = rvText(rvQuery(root, "SELECT SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME NOT LIKE '\\_sqlfork%' ORDER BY 1"))
	s.privileges(root)
	for _, d := range dirs {
		s[rvKey{"files", d}] = rvFiles(d, true)
	}
	if wd, err := os.Getwd(); err == nil {
		s[rvKey{"files", wd}] = rvFiles(wd, false)
	}
	return s
}

// rvPrivilegeRows are the mysql schema's rows that say who may do what:
// table, and the columns compared (not when grants were made).
var rvPrivilegeRows = map[string]string{
	"global_priv": "User, Host, Priv",
	"db": "Host, Db, User, Select_priv, Insert_priv, Update_priv, Delete_priv, Create_priv, Drop_priv, Grant_priv, References_priv, " +
		"Index_priv, Alter_priv, Create_tmp_table_priv, Lock_tables_priv, Create_view_priv, Show_view_priv, Create_routine_priv, " +
		"Alter_routine_priv, Execute_priv, Event_priv, Trigger_priv, Delete_history_priv",
	"tables_priv":   "Host, Db, User, Table_name, Grantor, Table_priv, Column_priv",
	"columns_priv":  "Host, Db, User, Table_name, Column_name, Column_priv",
	"procs_priv":    "Host, Db, User, Routine_name, Routine_type, Grantor, Proc_priv",
	"proxies_priv":  "Host, User, Proxied_host, Proxied_user, With_grant",
	"roles_mapping": "Host, User, Role, Admin_option",
	"func":          "name, ret, dl, type",
	"servers":       "Server_name, Host, Db, Username, Password, Port, Socket, Wrapper, Owner",
	"plugin":        "name, dl",
}

// rvSettled is production's snapshot (all schemas but the sandboxes')
// read until two reads in a row agree. information_schema.TABLES has been
// seen to leave out a table of the registry that existed before and after
// (a CI run: "_sqlfork_meta.settings" absent from one read only); a change
// the case made is still there on the next read, a transient omission is
// not.
func rvSettled(t *testing.T, root *sql.DB, dirs ...string) rvSnap {
	t.Helper()
	last := rvSnapshot(t, root, nil, dirs...)
	for range 4 {
		next := rvSnapshot(t, root, nil, dirs...)
		if len(last.diff(next)) == 0 {
			return next
		}
		last = next
	}
	return last
}

// privileges reads rvPrivilegeRows, in one query.
func (s rvSnap) privileges(root *sql.DB) {
	var parts []string
	for table, cols := range rvPrivilegeRows {
		s[rvKey{"rows", "mysql." + table}] = ""
		parts = append(parts, fmt.Sprintf("SELECT '%s', CONCAT_WS('\\t', %s) FROM mysql.%s", table, cols, table))
	}
	for _, r := range rvQuery(root, strings.Join(parts, " UNION ALL ")+" ORDER BY 1, 2") {
		if len(r) < 2 {
			s[rvKey{"rows", "mysql"}] = strings.Join(r, " ")
			continue
		}
		s[rvKey{"rows", "mysql." + r[0]}] += rvPwChanged.ReplaceAllString(r[1], "") + "\n"
	}
}

var rvPwChanged = regexp.MustCompile(`"password_last_changed":\s*\d+,?`)

// tables reads every table's row of information_schema.TABLES, and of
// production's tables (not mysql's, sys's or the registry's) the
// definition and checksum, and of sequences their state.
func (s rvSnap) tables(root *sql.DB, schemas []string) {
	var base []string
	for _, r := range rvQuery(root, "SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE, IFNULL(ENGINE, ''), IFNULL(CREATE_OPTIONS, ''), "+
		"IFNULL(TABLE_COLLATION, ''), TABLE_COMMENT FROM information_schema.TABLES WHERE "+rvObjSchemas("TABLE_SCHEMA", schemas)+" ORDER BY 1, 2") {
		if len(r) < 7 {
			s[rvKey{"tables", ""}] = strings.Join(r, " ")
			continue
		}
		obj, q := r[0]+"."+r[1], escQI(r[0])+"."+escQI(r[1])
		s[rvKey{"table", obj}] = strings.Join(r[2:], "\t")
		system := r[0] == "mysql" || r[0] == "sys" || r[0] == "_sqlfork_meta"
		switch {
		case system:
		case r[2] == "BASE TABLE" || r[2] == "SYSTEM VERSIONED":
			s[rvKey{"create", obj}] = autoIncrement.ReplaceAllString(rvText(rvQuery(root, "SHOW CREATE TABLE "+q)), "")
			base = append(base, obj)
			s[rvKey{"checksum", obj}] = q // replaced below
		case r[2] == "SEQUENCE":
			s[rvKey{"create", obj}] = rvText(rvQuery(root, "SHOW CREATE SEQUENCE "+q))
			s[rvKey{"rows", obj}] = rvText(rvQuery(root, "SELECT * FROM "+q))
		}
	}
	var names []string
	for _, obj := range base {
		names = append(names, s[rvKey{"checksum", obj}])
	}
	if len(names) == 0 {
		return
	}
	sums := rvQuery(root, "CHECKSUM TABLE "+strings.Join(names, ", "))
	for i, obj := range base {
		if i < len(sums) && len(sums[i]) == 2 {
			s[rvKey{"checksum", obj}] = sums[i][1]
		} else {
			s[rvKey{"checksum", obj}] = fmt.Sprint(sums)
		}
	}
}

// rvFiles lists the files under dir: all the way down with their sizes
// (recursive), or its entries' names (but *.go).
func rvFiles(dir string, recursive bool) string {
	var files []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			files = append(files, rel+"/")
			if !recursive {
				return filepath.SkipDir
			}
			return nil
		}
		if !recursive { // the working directory: names, but of its Go sources (edited meanwhile)
			if !strings.HasSuffix(rel, ".go") {
				files = append(files, rel)
			}
			return nil
		}
		size := int64(-1)
		if info, err := d.Info(); err == nil {
			size = info.Size()
		}
		files = append(files, fmt.Sprintf("%s %d", rel, size))
		return nil
	})
	sort.Strings(files)
	return strings.Join(files, "\n")
}

// rvChange is a part of a snapshot that differs.
type rvChange struct {
	key           rvKey
	before, after string
}

func (c rvChange) String() string {
	return fmt.Sprintf("%s %q changed:\n  before: %.400q\n  after:  %.400q", c.key.kind, c.key.obj, c.before, c.after)
}

// diff lists what differs between s (before) and after.
func (s rvSnap) diff(after rvSnap) []rvChange {
	var out []rvChange
	for k, v := range s {
		if w, ok := after[k]; !ok || w != v {
			out = append(out, rvChange{k, v, after[k]})
		}
	}
	for k, w := range after {
		if _, ok := s[k]; !ok {
			out = append(out, rvChange{k, "(none)", w})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].key.kind+out[i].key.obj < out[j].key.kind+out[j].key.obj
	})
	return out
}

// ---- exports applied with the mariadb client ----

// rvApplied is what one run of the mariadb client did with a script.
type rvApplied struct {
	exit   int
	stderr string
	ran    []string // the statements the server received from it, in order
}

// rvModes are the sql_modes an export is applied under: the server's
// default, and one where backslashes are text and " quotes names.
var rvModes = []string{"", "NO_BACKSLASH_ESCAPES,ANSI_QUOTES"}

// apply runs text with the mariadb client as root on the replica, in the
// marker directory, its session started under mode (a global sql_mode
// restored after; "" the server's own), and reads the general log for
// the statements the client sent.
func (e *rvEnv) apply(t *testing.T, text, mode string) rvApplied {
	t.Helper()
	ctx := context.Background()
	c := conn(t, e.replicaRoot)
	if mode != "" {
		old := queryString(t, c, "SELECT @@GLOBAL.sql_mode")
		mustExecC(t, c, "SET GLOBAL sql_mode = "+escQS(mode))
		defer mustExecC(t, c, "SET GLOBAL sql_mode = "+escQS(old))
	}
	mustExecC(t, c, "TRUNCATE TABLE mysql.general_log")
	mustExecC(t, c, "SET GLOBAL general_log = 1")
	file := filepath.Join(t.TempDir(), "export.sql")
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	res := rvClient(t, e.replica, file, e.marker)
	mustExecC(t, c, "SET GLOBAL general_log = 0")
	ran, err := firstColumn(ctx, c, "SELECT argument FROM mysql.general_log WHERE command_type = 'Query' AND user_host LIKE 'root[root]%'")
	if err != nil {
		t.Fatalf("general log: %s", mysqlErr(err))
	}
	res.ran = append(res.ran, ran...)
	return res
}

// rvClient runs the mariadb client as root on srv's socket with the script
// file as input, in dir.
func rvClient(t *testing.T, srv *testdb.Server, file, dir string) rvApplied {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	in, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	cmd := exec.CommandContext(ctx, mariadbCLI(t), "--no-defaults", "--default-character-set=utf8mb4", "--socket="+srv.Socket, "-u", "root")
	cmd.Dir, cmd.Stdin = dir, in
	cmd.Env = append(os.Environ(), "MYSQL_PWD=", "LC_ALL=C")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	exit, ok := exitStatus(ctx, err)
	if !ok {
		t.Fatalf("mariadb: %v\n%s", err, stderr.String())
	}
	return rvApplied{stderr: stderr.String(), exit: exit}
}

// rvStatements are an export's statements the client is to send: all but
// its comment lines, without the white space around them.
func rvStatements(stmts []string) []string {
	var out []string
	for _, s := range stmts {
		if !strings.HasPrefix(s, "-- ") {
			out = append(out, strings.TrimSpace(s))
		}
	}
	return out
}

// checkRan checks that the client sent exactly want, in order.
func checkRan(t *testing.T, what string, res rvApplied, want []string) {
	t.Helper()
	got := make([]string, len(res.ran))
	for i, s := range res.ran {
		got[i] = strings.TrimSpace(s)
	}
	if slices.Equal(got, want) {
		return
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	g, w := "(none)", "(none)"
	if i < len(got) {
		g = got[i]
	}
	if i < len(want) {
		w = want[i]
	}
	t.Errorf("%s: the mariadb client sent %d statements, the export holds %d; first difference at %d:\n  sent:   %.300q\n  export: %.300q",
		what, len(got), len(want), i+1, g, w)
}

// ---- errors, the CLI, terminal output ----

// rvErr is err as a server error (nil when it is not one).
func rvErr(err error) *mysql.MySQLError {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me
	}
	return nil
}

// checkErr checks that err is a server error numbered one of codes, with
// SQLSTATE state ("": any), whose message names mention ("": anything).
func checkErr(t *testing.T, what string, err error, codes []uint16, state, mention string) {
	t.Helper()
	me := rvErr(err)
	switch {
	case err == nil:
		t.Errorf("%s: succeeded, want error %v (SQLSTATE %s)", what, codes, state)
	case me == nil:
		t.Errorf("%s: %v, want server error %v (SQLSTATE %s)", what, err, codes, state)
	case !slices.Contains(codes, me.Number) || state != "" && string(me.SQLState[:]) != state:
		t.Errorf("%s: %s, want error %v (SQLSTATE %s)", what, mysqlErr(err), codes, state)
	case mention != "" && !strings.Contains(me.Message, mention):
		t.Errorf("%s: %s, want a message naming %s", what, mysqlErr(err), mention)
	}
}

// cli runs `sqlfork-proxy sandbox ARGS` against the account's admin API.
func (a rvAcct) cli(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(proxyBinary(t), append([]string{"sandbox", "--admin-url", a.api}, args...)...)
	cmd.Env = append(os.Environ(), "SQLFORK_ADMIN_TOKEN="+rvToken)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// rvControls lists the raw characters of out that drive a terminal: C0
// controls but the line feed, DEL, C1 controls, and the bidirectional
// overrides, embeddings and isolates.
func rvControls(out string) []string {
	var found []string
	for i, r := range out {
		bad := r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r <= 0x9f ||
			r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x200e || r == 0x200f
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(out[i:]); n == 1 {
				bad = true
			}
		}
		if bad {
			found = append(found, fmt.Sprintf("%U at byte %d (…%q…)", r, i, out[max(0, i-20):min(len(out), i+20)]))
		}
	}
	return found
}

// rvSystemName finds a system schema named in a statement: as `name`. or
// name. (information_schema, performance_schema, mysql, sys).
var rvSystemName = regexp.MustCompile("(?i)(`(mysql|sys|performance_schema|information_schema)`|\\b(mysql|sys|performance_schema|information_schema))\\s*\\.")
