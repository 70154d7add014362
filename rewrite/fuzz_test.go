package rewrite

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/sqlfork/sqlfork-proxy/rewrite/collect"
	"github.com/sqlfork/sqlfork-proxy/rewrite/corpus"
)

// Fuzz targets. Seeds are every corpus statement; run one with e.g.
//
//	go test -run='^$' -fuzz=FuzzRewrite -fuzztime=60s ./rewrite/

var fuzzEngine = NewEngine(0)

// watchdog crashes the process, with every goroutine's stack, when the
// input is not done within fuzzHang: the fuzzer then records the input
// as failing instead of stalling. Call the returned func when done.
func watchdog(input string) (stop func()) {
	tm := time.AfterFunc(fuzzHang, func() {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		panic(fmt.Sprintf("no result after %s for input %q\n%s", fuzzHang, input, buf))
	})
	return func() { tm.Stop() }
}

const fuzzHang = 10 * time.Second

// FuzzRewrite runs any input through Engine.Rewrite under the corpus
// resolver with current database app. It must not panic; an input the
// parser accepts must give output the parser accepts; and no table the
// resolver maps may be left unmapped as the target of a write in the
// output.
func FuzzRewrite(f *testing.F) {
	for _, c := range corpus.Cases() {
		f.Add(c.SQL)
	}
	resolver := corpusResolver()
	f.Fuzz(func(t *testing.T, sql string) {
		defer watchdog(sql)()
		opts := Options{DB: "app", Server: Server{Flavor: MariaDB, Version: corpus.ServerVersion}}
		res, err := fuzzEngine.Rewrite(sql, opts, resolver)
		if err != nil {
			return // refusals are always safe
		}
		if res == nil {
			t.Fatalf("Rewrite(%q) returned neither a result nor an error", sql)
		}
		if st := res.Analysis.Statements; len(st) == 1 && st[0].Class == ClassSandbox {
			return // the session answers SANDBOX statements: they never reach the server
		}
		// Both texts are judged as the server reads them.
		in, err := Normalize(sql, opts)
		if err != nil {
			t.Fatalf("Rewrite accepted %q, which Normalize refuses: %v", sql, err)
		}
		out, err := Normalize(res.SQL, opts)
		if err != nil {
			t.Fatalf("the rewrite of %q is %q, which Normalize refuses: %v", sql, res.SQL, err)
		}
		_, inErr := fuzzParse(in)
		outStmts, outErr := fuzzParse(out)
		if outErr != nil {
			if inErr == nil {
				t.Fatalf("input parses but output does not:\n in  %q\n out %q\n err %v", sql, res.SQL, outErr)
			}
			return
		}
		// Checked for unchanged outputs too: the input then must not
		// write anything the resolver maps.
		for _, w := range writeTargets(outStmts, opts.DB) {
			if p, ok := corpus.Resolver[[2]string{w.DB, w.Name}]; ok {
				t.Fatalf("mapped table %s is written unmapped (should be %s.%s):\n in  %q\n out %q",
					w, p[0], p[1], sql, res.SQL)
			}
		}
	})
}

// fuzzParse parses with the TiDB parser; a parser panic (it has some, on
// huge numeric literals) counts as a parse error here, so that only the
// engine's own panics fail the target.
func fuzzParse(sql string) (stmts []ast.StmtNode, err error) {
	defer func() {
		if r := recover(); r != nil {
			stmts, err = nil, fmt.Errorf("parser panic: %v", r)
		}
	}()
	stmts, _, err = parser.New().ParseSQL(sql)
	return stmts, err
}

// writeTargets lists, lower-cased and database-qualified, the tables the
// statements write: INSERT/REPLACE targets, every table of an UPDATE or
// DELETE join, DELETE target lists, LOAD DATA targets, DDL targets and
// tables locked for writing. USE changes the database of later unqualified
// names. It is independent of the engine's own collector on purpose.
func writeTargets(stmts []ast.StmtNode, db string) []Table {
	w := &targetWalker{db: strings.ToLower(db)}
	for _, s := range stmts {
		w.stmt(s)
	}
	return w.out
}

type targetWalker struct {
	db  string
	out []Table
}

// add adds the tables tns name, skipping nil ones.
func (w *targetWalker) add(tns ...*ast.TableName) {
	for _, tn := range tns {
		if tn == nil {
			continue
		}
		db := tn.Schema.L
		if db == "" {
			db = w.db
		}
		w.out = append(w.out, Table{DB: db, Name: tn.Name.L})
	}
}

// joined adds every table of a join, not descending into derived tables or
// subqueries (those are read), skipping unqualified CTE references.
func (w *targetWalker) joined(n ast.Node, ctes map[string]bool) {
	if n == nil {
		return
	}
	c := &tableCollector{}
	n.Accept(c)
	for _, tn := range c.tables {
		if tn.Schema.L == "" && ctes[tn.Name.L] {
			continue
		}
		w.add(tn)
	}
}

func cteNames(with *ast.WithClause) map[string]bool {
	m := map[string]bool{}
	if with != nil {
		for _, c := range with.CTEs {
			m[c.Name.L] = true
		}
	}
	return m
}

func (w *targetWalker) stmt(s ast.StmtNode) {
	switch x := s.(type) {
	case *ast.UseStmt:
		w.db = strings.ToLower(x.DBName)
	case *ast.InsertStmt:
		if x.Table != nil {
			w.joined(x.Table.TableRefs, nil)
		}
	case *ast.UpdateStmt:
		if x.TableRefs != nil {
			w.joined(x.TableRefs.TableRefs, cteNames(x.With))
		}
	case *ast.DeleteStmt:
		ctes := cteNames(x.With)
		if x.TableRefs != nil {
			w.joined(x.TableRefs.TableRefs, ctes)
		}
		if x.IsMultiTable && x.Tables != nil {
			aliases := map[string]bool{}
			if x.TableRefs != nil {
				c := &tableCollector{}
				x.TableRefs.Accept(c)
				aliases = c.aliases
			}
			for _, tn := range x.Tables.Tables {
				if tn.Schema.L == "" && (aliases[tn.Name.L] || ctes[tn.Name.L]) {
					continue
				}
				w.add(tn)
			}
		}
	case *ast.LoadDataStmt:
		w.add(x.Table)
	case *ast.ImportIntoStmt:
		w.add(x.Table)
	case *ast.NonTransactionalDMLStmt:
		if x.DMLStmt != nil {
			w.stmt(x.DMLStmt)
		}
	case *ast.ExplainStmt:
		if x.Analyze && x.Stmt != nil {
			w.stmt(x.Stmt) // EXPLAIN ANALYZE runs the statement
		}
	case *ast.CreateTableStmt:
		w.add(x.Table)
	case *ast.AlterTableStmt:
		w.add(x.Table)
		for _, spec := range x.Specs {
			w.add(spec.NewTable)
		}
	case *ast.DropTableStmt:
		w.add(x.Tables...)
	case *ast.TruncateTableStmt:
		w.add(x.Table)
	case *ast.CreateIndexStmt:
		w.add(x.Table)
	case *ast.DropIndexStmt:
		w.add(x.Table)
	case *ast.RenameTableStmt:
		for _, tt := range x.TableToTables {
			w.add(tt.OldTable, tt.NewTable)
		}
	case *ast.CreateViewStmt:
		w.add(x.ViewName)
	case *ast.OptimizeTableStmt:
		w.add(x.Tables...)
	case *ast.RepairTableStmt:
		w.add(x.Table)
	case *ast.CreateSequenceStmt:
		w.add(x.Name)
	case *ast.AlterSequenceStmt:
		w.add(x.Name)
	case *ast.DropSequenceStmt:
		w.add(x.Sequences...)
	case *ast.PrepareStmt:
		// PREPARE s FROM '...': the literal's statement runs on EXECUTE.
		if x.SQLVar == nil {
			if inner, _, err := parser.New().ParseSQL(x.SQLText); err == nil {
				for _, st := range inner {
					w.stmt(st)
				}
			}
		}
	case *ast.LockTablesStmt:
		for _, l := range x.TableLocks {
			if l.Type >= ast.TableLockWrite {
				w.add(l.Table)
			}
		}
	}
}

// tableCollector gathers the TableNames of a table reference and the
// aliases it defines, without entering subqueries or derived tables.
type tableCollector struct {
	tables  []*ast.TableName
	aliases map[string]bool
}

func (c *tableCollector) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt, *ast.SubqueryExpr:
		return n, true
	case *ast.TableSource:
		if x.AsName.L != "" {
			if c.aliases == nil {
				c.aliases = map[string]bool{}
			}
			c.aliases[x.AsName.L] = true
		}
	case *ast.TableName:
		c.tables = append(c.tables, x)
	}
	return n, false
}

func (c *tableCollector) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// TestWriteTargetsChecker makes sure the fuzz invariant can fail: the
// walker must see the unmapped write targets of these statements.
func TestWriteTargetsChecker(t *testing.T) {
	for sql, want := range map[string]string{
		"INSERT INTO users (name) SELECT name FROM orders":            "app.users",
		"UPDATE users u JOIN (SELECT * FROM posts) p SET u.a = 1":     "app.users",
		"DELETE u FROM users u JOIN other.things t ON t.id = u.id":    "app.users,other.things",
		"DELETE users FROM `sbx`.`s1_users`":                          "app.users,sbx.s1_users",
		"USE other; INSERT INTO things VALUES (1)":                    "other.things",
		"ALTER TABLE products RENAME TO orders":                       "app.orders,app.products",
		"LOAD DATA LOCAL INFILE 'x' INTO TABLE shop.customers":        "shop.customers",
		"WITH c AS (SELECT 1) UPDATE posts JOIN c SET posts.a = 1":    "app.posts",
		"LOCK TABLES users READ, orders WRITE":                        "app.orders",
		"SELECT * FROM users; EXPLAIN DELETE FROM users WHERE id = 1": "",
		"PREPARE s FROM 'UPDATE users SET name = ''x'''":              "app.users",
	} {
		stmts, _, err := parser.New().ParseSQL(sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		got := writeTargets(stmts, "app")
		collect.SortTables(got)
		if s := tables(got); s != want {
			t.Errorf("%s: write targets %q, want %q", sql, s, want)
		}
	}
}
