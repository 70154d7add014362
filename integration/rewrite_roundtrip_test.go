package integration

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/sqlfork/sqlfork-proxy/integration/testdb"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/rewrite/corpus"
)

// TestRewriteRoundTripMariaDB sends the engine's output for every corpus
// case to a real MariaDB and checks that it parses and names only tables
// that exist: the physical tables of corpus.Resolver and the unmapped
// tables. The mapped logical tables (app.users, ...) are deliberately not
// created, so an output that still names one fails with 1146 (or 1051,
// 1109, or 1054 for a column qualifier).
//
// Nothing is executed that could be checked without executing it: DML is
// only prepared (COM_STMT_PREPARE opens its tables). Statements whose
// prepare does not open their tables (DDL, SHOW, LOCK TABLES) or that
// cannot be prepared (1295) are executed on a private server, with the
// schema rebuilt afterwards. LOAD DATA is only prepared (that opens its
// table), so no file is ever sent. Server errors raised after the tables
// were found (a missing index, a column count) are tolerated and listed;
// a syntax error the input has too skips the case (MariaDB rejects it).
func TestRewriteRoundTripMariaDB(t *testing.T) {
	testdb.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// A dedicated server: the shared one has app.users and other.things,
	// which must not exist here. Table names are case-insensitive, like
	// the corpus resolver.
	srv := testdb.StartForTest(ctx, t, testdb.Options{Logf: t.Logf, ExtraArgs: []string{"--lower-case-table-names=1"}})
	db := openDB(t, directDSN(srv, "", "lock_wait_timeout=10", "innodb_lock_wait_timeout=10"))
	db.SetMaxIdleConns(0) // every *sql.Conn closed is a session ended (locks, variables)

	cases := corpus.Cases()
	sch := newRTSchema(cases)
	sch.reset(ctx, t, db, nil, nil)

	e := rewrite.NewEngine(0)
	rt := &roundTrip{t: t, ctx: ctx, db: db, sch: sch, skipped: map[string]int{}, tolerated: map[string]int{}}

	rt.negativeControls(cases)

	for _, c := range cases {
		cdb := c.DB
		if cdb == "" {
			cdb = "app"
		}
		if c.NoServer != "" {
			rt.skip("marked NoServer in the corpus")
			continue
		}
		res, err := e.Rewrite(c.SQL, rewrite.Options{DB: cdb, Server: rewrite.Server{Flavor: rewrite.MariaDB, Version: corpus.ServerVersion}}, rtResolver{})
		if err != nil {
			var r *rewrite.Refusal
			if errors.As(err, &r) {
				rt.skip("refused by the engine")
				continue
			}
			t.Errorf("case %q (db %s): rewrite error that is not a refusal: %v", c.SQL, cdb, err)
			continue
		}
		if c.Class == "sandbox" || res.Analysis != nil && len(res.Analysis.Statements) > 0 &&
			res.Analysis.Statements[0].Class == rewrite.ClassSandbox {
			rt.skip("SANDBOX statement, answered by the proxy itself")
			continue
		}
		rt.checkCase(c.SQL, cdb, res.SQL)
	}

	var skips, tols []string
	for r, n := range rt.skipped {
		skips = append(skips, fmt.Sprintf("%d %s", n, r))
	}
	for r, n := range rt.tolerated {
		tols = append(tols, fmt.Sprintf("%d× %s", n, r))
	}
	sort.Strings(skips)
	sort.Strings(tols)
	t.Logf("round trip: %d cases checked on MariaDB (%d statements), %d prepared only, %d executed, %d skipped (%s); "+
		"tolerated errors: %s; test schema grown at run time: %s",
		rt.checked, rt.statements, rt.prepared, rt.executed, rt.nSkipped, strings.Join(skips, "; "),
		orNone(strings.Join(tols, "; ")), orNone(strings.Join(sch.grown, ", ")))
	if rt.checked == 0 {
		t.Fatal("no corpus case was checked")
	}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// rtResolver is corpus.Resolver as a rewrite.Resolver (case-insensitive).
type rtResolver struct{}

func (rtResolver) Resolve(t rewrite.Table, write bool) (rewrite.Table, bool, error) {
	p, ok := corpus.Resolver[[2]string{strings.ToLower(t.DB), strings.ToLower(t.Name)}]
	if !ok {
		return rewrite.Table{}, false, nil
	}
	return rewrite.Table{DB: p[0], Name: p[1]}, true, nil
}

// isLogical reports whether db.name is a table the resolver maps.
func isLogical(db, name string) bool {
	_, ok := corpus.Resolver[[2]string{strings.ToLower(db), strings.ToLower(name)}]
	return ok
}

// isLogicalName reports whether name is a mapped table in any database (for
// column qualifiers, whose database the error message may not give).
func isLogicalName(name string) bool {
	for k := range corpus.Resolver {
		if strings.EqualFold(k[1], name) {
			return true
		}
	}
	return false
}

type rtTable struct{ db, name string }

func (t rtTable) String() string { return t.db + "." + t.name }

// rtSchema is the test schema: every physical table of the resolver and
// every unmapped table the corpus names, each with every column the corpus
// uses (a superset, so that prepares resolve their columns).
type rtSchema struct {
	dbs      map[string]bool
	tables   map[rtTable]bool
	physical map[rtTable]bool
	cols     []string // in creation order
	colSet   map[string]bool
	grown    []string // tables and columns added because a statement needed them
}

// baseColumns are the columns with a meaningful type; any other column a
// corpus statement names is added as VARCHAR(64).
var baseColumns = [][2]string{
	{"id", "BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY"},
	{"name", "VARCHAR(100)"}, {"email", "VARCHAR(128)"}, {"total", "DECIMAL(12,2)"},
	{"title", "VARCHAR(200)"}, {"body", "TEXT"}, {"status", "VARCHAR(32)"}, {"note", "VARCHAR(255)"},
	{"created_at", "DATETIME"}, {"updated_at", "DATETIME"}, {"deleted_at", "DATETIME"},
	{"comments_count", "INT"}, {"balance", "DECIMAL(12,2)"}, {"amount", "DECIMAL(12,2)"},
	{"quantity", "INT"}, {"price", "DECIMAL(12,2)"}, {"label", "VARCHAR(64)"}, {"a", "INT"},
}

func newRTSchema(cases []corpus.Case) *rtSchema {
	s := &rtSchema{dbs: map[string]bool{"app": true, "other": true, "shop": true, "sbx": true},
		tables: map[rtTable]bool{}, physical: map[rtTable]bool{}, colSet: map[string]bool{}}
	for k, v := range corpus.Resolver {
		s.dbs[k[0]] = true
		p := rtTable{v[0], v[1]}
		s.dbs[p.db] = true
		s.tables[p] = true
		s.physical[p] = true
	}
	add := func(db, name string) {
		t := rtTable{strings.ToLower(db), strings.ToLower(name)}
		if t.db == "" || t.name == "" || isLogical(t.db, t.name) || s.tables[t] {
			return
		}
		s.dbs[t.db] = true
		s.tables[t] = true
	}
	add("app", "products")
	add("app", "audit")
	for _, c := range cases {
		if c.DB != "" {
			s.dbs[strings.ToLower(c.DB)] = true
		}
		for _, list := range []string{c.Reads, c.Writes} {
			for _, name := range strings.Split(list, ",") {
				if db, tbl, ok := strings.Cut(strings.TrimSpace(name), "."); ok {
					add(db, tbl)
				}
			}
		}
	}
	for _, bc := range baseColumns {
		s.addColumn(bc[0])
	}
	// Every column any corpus statement names (the TiDB parser's view;
	// statements it cannot parse add theirs on demand, see grow).
	p := parser.New()
	for _, c := range cases {
		stmts, _, err := p.ParseSQL(c.SQL)
		if err != nil {
			continue
		}
		cc := &columnCollector{}
		for _, st := range stmts {
			st.Accept(cc)
		}
		for _, col := range cc.cols {
			s.addColumn(col)
		}
	}
	return s
}

func (s *rtSchema) addColumn(name string) bool {
	name = strings.ToLower(name)
	if name == "" || s.colSet[name] {
		return false
	}
	s.colSet[name] = true
	s.cols = append(s.cols, name)
	return true
}

func columnType(name string) string {
	for _, bc := range baseColumns {
		if bc[0] == name {
			return bc[1]
		}
	}
	if strings.HasSuffix(name, "id") {
		return "BIGINT UNSIGNED" // user_id, authorId: foreign keys to id must have its type
	}
	return "VARCHAR(64)"
}

func (s *rtSchema) createTableSQL(t rtTable, skipCols map[string]bool) string {
	var defs []string
	for _, c := range s.cols {
		if skipCols[c] {
			continue
		}
		defs = append(defs, quoteID(c)+" "+columnType(c))
	}
	if len(defs) == 0 || skipCols["id"] {
		defs = append(defs, "`sqlfork_rt_pad` INT")
	}
	return fmt.Sprintf("CREATE TABLE %s.%s (%s) ENGINE=InnoDB", quoteID(t.db), quoteID(t.name), strings.Join(defs, ", "))
}

func quoteID(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// reset drops and recreates every test database, leaving out the tables in
// skipTables and the columns in skipCols (those a DDL statement about to
// run creates).
func (s *rtSchema) reset(ctx context.Context, t *testing.T, db *sql.DB, skipTables map[rtTable]bool, skipCols map[string]bool) {
	t.Helper()
	var q []string
	var dbs []string
	for d := range s.dbs {
		dbs = append(dbs, d)
	}
	sort.Strings(dbs)
	for _, d := range dbs {
		q = append(q, "DROP DATABASE IF EXISTS "+quoteID(d), "CREATE DATABASE "+quoteID(d))
	}
	var tables []rtTable
	for tb := range s.tables {
		if !skipTables[tb] {
			tables = append(tables, tb)
		}
	}
	sort.Slice(tables, func(i, j int) bool { return tables[i].String() < tables[j].String() })
	for _, tb := range tables {
		q = append(q, s.createTableSQL(tb, skipCols))
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, stmt := range q {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("test schema: %s: %s", stmt, mysqlErr(err))
		}
	}
}

// columnCollector gathers every column name a statement mentions.
type columnCollector struct{ cols []string }

func (c *columnCollector) Enter(n ast.Node) (ast.Node, bool) {
	if cn, ok := n.(*ast.ColumnName); ok {
		c.cols = append(c.cols, cn.Name.L)
	}
	return n, false
}

func (c *columnCollector) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// roundTrip is the state of one run.
type roundTrip struct {
	t   *testing.T
	ctx context.Context
	db  *sql.DB
	sch *rtSchema

	dirty                                             bool // the schema was changed by an executed statement
	checked, statements, prepared, executed, nSkipped int
	skipped, tolerated                                map[string]int
}

func (rt *roundTrip) skip(reason string) {
	rt.nSkipped++
	rt.skipped[reason]++
}

// stmtMode is how one output statement is checked.
type stmtMode int

const (
	modePrepare  stmtMode = iota // prepare only: the prepare opens every table
	modeRead                     // prepare, then run it (a harmless read whose prepare opens nothing)
	modeDDL                      // prepare, then run it on a fresh schema (its prepare opens nothing)
	modeLock                     // prepare, then run it and UNLOCK TABLES
	modeFallback                 // prepare; run it only if it cannot be prepared (1295)
)

type rtStmt struct {
	text string
	node ast.StmtNode // nil when the TiDB parser cannot parse the output
	mode stmtMode
}

func modeOf(n ast.StmtNode) stmtMode {
	switch x := n.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt, *ast.InsertStmt, *ast.UpdateStmt, *ast.DeleteStmt, *ast.LoadDataStmt:
		return modePrepare
	case *ast.ExplainStmt:
		if _, ok := x.Stmt.(*ast.ShowStmt); ok { // DESCRIBE t
			return modeRead
		}
		return modePrepare
	case *ast.ShowStmt, *ast.AnalyzeTableStmt:
		return modeRead
	case *ast.CreateTableStmt, *ast.AlterTableStmt, *ast.DropTableStmt, *ast.TruncateTableStmt,
		*ast.CreateIndexStmt, *ast.DropIndexStmt, *ast.RenameTableStmt, *ast.CreateViewStmt,
		*ast.OptimizeTableStmt, *ast.RepairTableStmt, *ast.CreateSequenceStmt, *ast.AlterSequenceStmt,
		*ast.DropSequenceStmt:
		return modeDDL
	case *ast.LockTablesStmt:
		return modeLock
	}
	return modeFallback
}

// split cuts an output into statements with the TiDB parser (independent
// of the engine's own splicing). An output it cannot parse is one
// statement, unless it holds a ';' outside quotes and comments.
func split(out string) ([]rtStmt, error) {
	stmts, _, err := parser.New().ParseSQL(out)
	if err != nil {
		if hasTopLevelSemicolon(out) {
			return nil, fmt.Errorf("multi-statement output the TiDB parser cannot split")
		}
		return []rtStmt{{text: out, mode: modeFallback}}, nil
	}
	if len(stmts) == 1 {
		return []rtStmt{{text: out, node: stmts[0], mode: modeOf(stmts[0])}}, nil
	}
	var r []rtStmt
	for _, s := range stmts {
		text := strings.TrimSpace(s.Text())
		text = strings.TrimSpace(strings.TrimSuffix(text, ";"))
		if text == "" || !strings.Contains(out, text) {
			return nil, fmt.Errorf("cannot recover the text of a statement of a multi-statement output")
		}
		r = append(r, rtStmt{text: text, node: s, mode: modeOf(s)})
	}
	return r, nil
}

func hasTopLevelSemicolon(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\'' || c == '"' || c == '`':
			for i++; i < len(s) && s[i] != c; i++ {
				if s[i] == '\\' && c != '`' {
					i++
				}
			}
		case c == '#' || c == '-' && strings.HasPrefix(s[i:], "-- "):
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '/' && strings.HasPrefix(s[i:], "/*") && !strings.HasPrefix(s[i:], "/*!") && !strings.HasPrefix(s[i:], "/*M!"):
			if j := strings.Index(s[i+2:], "*/"); j >= 0 {
				i += j + 3
			} else {
				i = len(s)
			}
		case c == ';':
			return strings.TrimSpace(s[i+1:]) != ""
		}
	}
	return false
}

// ddlCreates lists what DDL statements create, so a fresh schema can leave
// them out: CREATE TABLE/VIEW/SEQUENCE targets, RENAME targets, columns
// that ALTER TABLE adds or renames to.
func ddlCreates(stmts []rtStmt, curDB string) (map[rtTable]bool, map[string]bool) {
	tables, cols := map[rtTable]bool{}, map[string]bool{}
	name := func(tn *ast.TableName) {
		if tn == nil {
			return
		}
		d := tn.Schema.L
		if d == "" {
			d = strings.ToLower(curDB)
		}
		tables[rtTable{d, tn.Name.L}] = true
	}
	for _, s := range stmts {
		switch x := s.node.(type) {
		case *ast.UseStmt:
			curDB = x.DBName
		case *ast.CreateTableStmt:
			name(x.Table)
		case *ast.CreateViewStmt:
			name(x.ViewName)
		case *ast.CreateSequenceStmt:
			name(x.Name)
		case *ast.RenameTableStmt:
			// RENAME a TO b, c TO a: a must exist (it is renamed away
			// before c takes its name), b must not.
			renamedAway := map[*ast.TableName]bool{}
			for i, tt := range x.TableToTables {
				for _, earlier := range x.TableToTables[:i] {
					if strings.EqualFold(earlier.OldTable.Name.O, tt.NewTable.Name.O) &&
						strings.EqualFold(earlier.OldTable.Schema.O, tt.NewTable.Schema.O) {
						renamedAway[tt.NewTable] = true
					}
				}
				if !renamedAway[tt.NewTable] {
					name(tt.NewTable)
				}
			}
		case *ast.AlterTableStmt:
			for _, spec := range x.Specs {
				name(spec.NewTable)
				switch spec.Tp {
				case ast.AlterTableAddColumns:
					for _, cd := range spec.NewColumns {
						cols[cd.Name.Name.L] = true
					}
				case ast.AlterTableChangeColumn:
					for _, cd := range spec.NewColumns {
						if spec.OldColumnName == nil || cd.Name.Name.L != spec.OldColumnName.Name.L {
							cols[cd.Name.Name.L] = true
						}
					}
				case ast.AlterTableRenameColumn:
					if spec.NewColumnName != nil {
						cols[spec.NewColumnName.Name.L] = true
					}
				}
			}
		}
	}
	return tables, cols
}

// checkCase checks one engine output, with current database cdb.
func (rt *roundTrip) checkCase(in, cdb, out string) {
	t := rt.t
	stmts, err := split(out)
	if err != nil {
		rt.skip(err.Error())
		t.Logf("skipped %q: %v", out, err)
		return
	}
	for attempt := 0; ; attempt++ {
		needFresh := false
		for _, s := range stmts {
			needFresh = needFresh || s.mode == modeDDL
		}
		if needFresh {
			skipTables, skipCols := ddlCreates(stmts, cdb)
			rt.sch.reset(rt.ctx, t, rt.db, skipTables, skipCols)
			rt.dirty = true
		} else if rt.dirty {
			rt.sch.reset(rt.ctx, t, rt.db, nil, nil)
			rt.dirty = false
		}
		o := rt.runCase(in, cdb, stmts)
		if o.grew && attempt < 20 {
			continue // the test schema lacked an unmapped table or a column: retry with it
		}
		if o.skip != "" {
			rt.skip(o.skip)
			t.Logf("skipped (%s): %s", o.skip, in)
			return
		}
		rt.checked++
		rt.statements += len(stmts)
		if o.failure != "" {
			t.Errorf("round trip failed:\n case   %s\n db     %s\n output %s\n %s", in, cdb, out, o.failure)
		}
		if o.executed {
			rt.executed++
		} else {
			rt.prepared++
		}
		return
	}
}

// outcome is the result of checking one case.
type outcome struct {
	executed bool   // some statement was executed, not only prepared
	failure  string // why the case fails ("" if it passes)
	grew     bool   // the test schema was extended: check again
	skip     string // why the case cannot be checked
}

// runCase checks the statements of one output on a fresh session.
func (rt *roundTrip) runCase(in, cdb string, stmts []rtStmt) (o outcome) {
	ctx, cancel := context.WithTimeout(rt.ctx, 30*time.Second)
	defer cancel()
	conn, err := rt.db.Conn(ctx)
	if err != nil {
		rt.t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "USE "+quoteID(cdb)); err != nil {
		rt.t.Fatalf("USE %s: %s", cdb, mysqlErr(err))
	}
	cur := cdb
	for i, s := range stmts {
		run := s.mode != modePrepare && s.mode != modeFallback
		st, err := conn.PrepareContext(ctx, s.text)
		if err == nil {
			st.Close()
		} else if code(err) == 1295 {
			// "This command is not supported in the prepared statement
			// protocol yet": run it instead (session/transaction
			// statements: harmless on this throwaway session).
			run, err = true, nil
		}
		if err == nil && run {
			o.executed = true
			if s.mode != modeRead {
				rt.dirty = true
			}
			err = execDrain(ctx, conn, s.text)
			if err == nil {
				err = warningsAsError(ctx, conn)
			}
			if s.mode == modeLock {
				if _, uerr := conn.ExecContext(ctx, "UNLOCK TABLES"); uerr != nil {
					rt.t.Fatalf("UNLOCK TABLES: %s", mysqlErr(uerr))
				}
			}
		}
		if err != nil {
			if code(err) == 1064 && inputRejected(ctx, conn, in, i, len(stmts)) {
				o.skip = "the input itself is not MariaDB syntax (the corpus could mark it NoServer)"
				return o
			}
			verdict, grew := rt.judge(in, cur, s, err)
			if grew {
				o.grew = true
				return o
			}
			if verdict == "" {
				rt.t.Logf("tolerated: %s\n  statement %s", rtErr(err), s.text)
			}
			if verdict != "" {
				o.failure = fmt.Sprintf("statement %s\n error  %s\n (%s)", s.text, rtErr(err), verdict)
				return o
			}
		}
		if u, ok := s.node.(*ast.UseStmt); ok && err == nil {
			if _, uerr := conn.ExecContext(ctx, "USE "+quoteID(u.DBName)); uerr == nil {
				cur = u.DBName // later statements are prepared in this database
			}
		}
	}
	if o.executed {
		o.failure = rt.logicalTablesExist(ctx)
	}
	return o
}

// inputRejected reports whether MariaDB rejects the syntax of the input
// statement the i-th of n output statements comes from: then a syntax
// error in the output is not the engine's doing.
func inputRejected(ctx context.Context, conn *sql.Conn, in string, i, n int) bool {
	text := in
	if n > 1 {
		stmts, _, err := parser.New().ParseSQL(in)
		if err != nil || len(stmts) != n {
			return false
		}
		text = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(stmts[i].Text()), ";"))
	}
	st, err := conn.PrepareContext(ctx, text)
	if err == nil {
		st.Close()
	}
	return code(err) == 1064
}

// execDrain runs q over the text protocol and reads any result set.
func execDrain(ctx context.Context, conn *sql.Conn, q string) error {
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	for rows.Next() {
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return err
	}
	return rows.Close()
}

// warningsAsError turns a warning about a missing table (DROP TABLE IF
// EXISTS of a table that is not there, say) into an error to judge.
func warningsAsError(ctx context.Context, conn *sql.Conn) error {
	rows, err := conn.QueryContext(ctx, "SHOW WARNINGS")
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var level, msg string
		var c uint16
		if err := rows.Scan(&level, &c, &msg); err != nil {
			return err
		}
		if c == 1051 || c == 1146 || c == 1109 {
			return &serverWarning{mysql.MySQLError{Number: c, Message: msg + " (warning)"}}
		}
	}
	return rows.Err()
}

// logicalTablesExist fails when an executed statement created a mapped
// logical table (an unrewritten CREATE TABLE, say).
func (rt *roundTrip) logicalTablesExist(ctx context.Context) string {
	rows, err := rt.db.QueryContext(ctx, "SELECT table_schema, table_name FROM information_schema.tables")
	if err != nil {
		rt.t.Fatal(err)
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var d, n string
		if err := rows.Scan(&d, &n); err != nil {
			rt.t.Fatal(err)
		}
		if isLogical(d, n) {
			found = append(found, d+"."+n)
		}
	}
	if len(found) > 0 {
		return "the statement created the mapped logical table(s) " + strings.Join(found, ", ") + " instead of the physical one"
	}
	return ""
}

// serverWarning is a SHOW WARNINGS row judged like an error.
type serverWarning struct{ mysql.MySQLError }

func (w *serverWarning) Error() string { return w.MySQLError.Error() }

func code(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

var quotedRE = regexp.MustCompile(`'((?:[^']|'')*)'`)

// firstQuoted returns the first '...' of a server message.
func firstQuoted(msg string) string {
	if m := quotedRE.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	return ""
}

// tolerated are server errors raised after every table of the statement
// was found: the test schema is not the one the statement was written for
// (it lacks an index, a partition, a prepared statement...).
var tolerated = map[uint16]string{
	1052: "ambiguous column (every test table has every column)",
	1075: "incorrect table definition (auto-increment column)",
	1091: "cannot drop an index, key or foreign key the test schema lacks",
	1136: "column count does not match value count",
	1176: "index hint names an index the test schema lacks",
	1243: "unknown prepared statement handler",
	1747: "PARTITION clause on a non-partitioned test table",
	4124: "FOR SYSTEM_TIME on a table without system versioning",
}

// judge classifies a server error about statement s. verdict is "" for an
// error that is tolerated (recorded), else why it is a failure. grew
// reports that the test schema lacked an unmapped table or a column the
// statement needs and has been extended (the caller retries).
func (rt *roundTrip) judge(in, cur string, s rtStmt, err error) (verdict string, grew bool) {
	var me *mysql.MySQLError
	var w *serverWarning
	switch {
	case errors.As(err, &w):
		me = &w.MySQLError
	case !errors.As(err, &me):
		return "not a server error", false
	}
	msg := me.Message
	if reason, ok := tolerated[me.Number]; ok {
		rt.tolerated[fmt.Sprintf("%d %s", me.Number, reason)]++
		return "", false
	}
	switch me.Number {
	case 1064:
		return "SYNTAX ERROR: the output does not parse on MariaDB, the input does", false
	case 1146, 1051, 1109: // table doesn't exist / unknown table / unknown table in multi-delete
		name := firstQuoted(msg)
		d, n, ok := strings.Cut(name, ".")
		if !ok {
			d, n = cur, name
		}
		if isLogical(d, n) {
			return fmt.Sprintf("ENGINE BUG: the output names the mapped logical table %s.%s", d, n), false
		}
		if w != nil {
			// DROP ... IF EXISTS of an unmapped table that is not there
			// (a TEMPORARY table, say): not about the rewrite.
			rt.tolerated["IF EXISTS note about an unmapped table"]++
			return "", false
		}
		tb := rtTable{strings.ToLower(d), strings.ToLower(n)}
		if rt.sch.tables[tb] {
			return "a test table is missing (was it dropped and not recreated?)", false
		}
		if physicalName(n) || !containsFold(in, n) {
			return fmt.Sprintf("the output names %s, which is neither a physical table nor a table of the input", tb), false
		}
		// An unmapped table of the input the test schema lacks: add it.
		rt.sch.tables[tb] = true
		rt.sch.dbs[tb.db] = true
		rt.sch.grown = append(rt.sch.grown, "table "+tb.String())
		rt.dirty = true
		return "", true
	case 1054: // unknown column: 'col', 'qual.col' or 'db.qual.col'
		parts := strings.Split(firstQuoted(msg), ".")
		col := parts[len(parts)-1]
		if !rt.sch.colSet[strings.ToLower(col)] && containsFold(in, col) {
			rt.sch.addColumn(col)
			rt.sch.grown = append(rt.sch.grown, "column "+col)
			rt.dirty = true
			return "", true
		}
		if len(parts) >= 2 && isLogicalName(parts[len(parts)-2]) {
			return fmt.Sprintf("ENGINE BUG: the column qualifier %s still names the mapped logical table", parts[len(parts)-2]), false
		}
		return "unknown column", false
	case 1005, 1215, 1822, 1824: // foreign key errors: MariaDB says errno 150 for a missing parent table too
		for _, ref := range referencedTables(s.node, cur) {
			if isLogical(ref.db, ref.name) {
				return fmt.Sprintf("ENGINE BUG: the foreign key still references the mapped logical table %s", ref), false
			}
			if !rt.sch.tables[ref] {
				return fmt.Sprintf("the foreign key references %s, which the test schema lacks", ref), false
			}
		}
		if s.node != nil && strings.Contains(msg, "errno: 150") {
			rt.tolerated["foreign key MariaDB finds incorrectly formed (its parent tables exist)"]++
			return "", false
		}
	}
	return "unexpected server error", false
}

// referencedTables lists the parent tables of the foreign keys n defines.
func referencedTables(n ast.Node, cur string) []rtTable {
	if n == nil {
		return nil
	}
	c := &referenceCollector{cur: strings.ToLower(cur)}
	n.Accept(c)
	return c.refs
}

type referenceCollector struct {
	cur  string
	refs []rtTable
}

func (c *referenceCollector) Enter(n ast.Node) (ast.Node, bool) {
	if r, ok := n.(*ast.ReferenceDef); ok && r.Table != nil {
		d := r.Table.Schema.L
		if d == "" {
			d = c.cur
		}
		c.refs = append(c.refs, rtTable{d, r.Table.Name.L})
	}
	return n, false
}

func (c *referenceCollector) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// rtErr formats a server error or warning.
func rtErr(err error) string {
	var w *serverWarning
	if errors.As(err, &w) {
		return mysqlErr(&w.MySQLError)
	}
	return mysqlErr(err)
}

func physicalName(n string) bool {
	for _, v := range corpus.Resolver {
		if strings.EqualFold(v[1], n) {
			return true
		}
	}
	return false
}

func containsFold(s, sub string) bool {
	return sub != "" && strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

// negativeControls prove the checks can fail: the unrewritten text of a
// case reading app.users must be rejected with 1146 and judged an engine
// bug, and so must a column qualifier left unrewritten.
func (rt *roundTrip) negativeControls(cases []corpus.Case) {
	t := rt.t
	var orig string
	for _, c := range cases {
		if c.Class == "read" && c.Reads == "app.users" && (c.DB == "" || c.DB == "app") && c.Refuse == "" &&
			c.NoServer == "" && c.Want != "" && !strings.Contains(c.SQL, ";") {
			orig = c.SQL
			break
		}
	}
	if orig == "" {
		t.Fatal("negative control: no corpus case reads app.users")
	}
	for _, ctl := range []struct {
		sql  string
		want uint16
	}{
		{orig, 1146},
		{"SELECT users.id FROM `sbx`.`s1_users`", 1054},
	} {
		conn, err := rt.db.Conn(rt.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.ExecContext(rt.ctx, "USE app"); err != nil {
			t.Fatal(err)
		}
		st, err := conn.PrepareContext(rt.ctx, ctl.sql)
		if err == nil {
			st.Close()
		}
		conn.Close()
		if code(err) != ctl.want {
			t.Fatalf("negative control: preparing %q gave %v, want error %d", ctl.sql, mysqlErr(err), ctl.want)
		}
		verdict, grew := rt.judge(ctl.sql, "app", rtStmt{text: ctl.sql}, err)
		if grew || !strings.HasPrefix(verdict, "ENGINE BUG") {
			t.Fatalf("negative control: %q (%s) judged %q, grew=%v; want an engine bug", ctl.sql, mysqlErr(err), verdict, grew)
		}
		t.Logf("negative control: %q -> %s", ctl.sql, mysqlErr(err))
	}
}
