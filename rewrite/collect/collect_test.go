package collect

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver" // value expressions for the parser

	"github.com/sqlfork/sqlfork-proxy/rewrite/corpus"
	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

// collect parses sql and walks every statement with one collector; ok is
// false when the parser rejects sql.
func collect(p *parser.Parser, sql string) (*Collector, []ast.StmtNode, bool) {
	stmts, _, err := p.Parse(sql, "", "")
	if err != nil {
		return nil, nil, false
	}
	c := New()
	c.Columns = map[string]bool{}
	c.CTERefs = CTERefs(stmts, strings.ToLower, false)
	for _, s := range stmts {
		s.Accept(c)
	}
	return c, stmts, true
}

// TestCollectCorpus walks every corpus statement the parser reads: every
// name a reference holds is written in the statement.
func TestCollectCorpus(t *testing.T) {
	p := parser.New()
	n := 0
	for _, cs := range corpus.Cases() {
		c, _, ok := collect(p, cs.SQL)
		if !ok {
			continue
		}
		n++
		lower := strings.ToLower(cs.SQL)
		for _, r := range c.Refs {
			name := strings.ToLower(r.Name)
			if !strings.Contains(lower, name) && !strings.Contains(lower, strings.ReplaceAll(name, "`", "``")) {
				t.Errorf("%q: reference %+v is not in the text", cs.SQL, r)
			}
		}
	}
	if n == 0 {
		t.Fatal("the parser read no corpus statement")
	}
}

// names are the kinds and names of c's references.
func names(c *Collector) []string {
	var out []string
	for _, r := range c.Refs {
		k := map[RefKind]string{RefTable: "table", RefQualifier: "qualifier", RefTarget: "target"}[r.Kind]
		n := r.Name
		if r.Schema != "" {
			n = r.Schema + "." + n
		}
		if r.Write {
			n += "!"
		}
		out = append(out, k+" "+n)
	}
	return out
}

func TestCollect(t *testing.T) {
	cases := []struct {
		sql  string
		refs []string
	}{
		{"SELECT t.a FROM db.t", []string{"table db.t", "qualifier t"}},
		{"INSERT INTO t SELECT * FROM u", []string{"table t!", "table u"}},
		{"WITH c AS (SELECT 1) SELECT * FROM c", []string{"table c"}},
		{"DELETE a FROM t AS a JOIN u", []string{"target a!", "table t!", "table u!"}},
		{"CREATE TABLE t (a INT, FOREIGN KEY (a) REFERENCES p (a))", []string{"table t!", "table p"}},
	}
	p := parser.New()
	for _, c := range cases {
		col, _, ok := collect(p, c.sql)
		if !ok {
			t.Fatalf("%q does not parse", c.sql)
		}
		got := names(col)
		slices.Sort(got)
		slices.Sort(c.refs)
		if !slices.Equal(got, c.refs) {
			t.Errorf("%q: refs %q, want %q", c.sql, got, c.refs)
		}
	}
}

func TestVarsAndSet(t *testing.T) {
	p := parser.New()
	c, stmts, ok := collect(p, "SET @a = @@session.b, sql_mode = 'ANSI'")
	if !ok {
		t.Fatal("SET does not parse")
	}
	if len(c.Vars) != 3 || !c.Vars[0].Set || c.Set.Lexing != true {
		t.Errorf("vars %+v, set %+v", c.Vars, c.Set)
	}
	if OneShot(stmts[0].(*ast.SetStmt)) {
		t.Error("SET @a is one-shot")
	}
	_, stmts, _ = collect(p, "SET TRANSACTION ISOLATION LEVEL READ COMMITTED")
	if !OneShot(stmts[0].(*ast.SetStmt)) {
		t.Error("SET TRANSACTION is not one-shot")
	}
	if s := (Func{Schema: "db", Name: "f"}).String() + (Func{Name: "g"}).String(); s != "db.fg" {
		t.Errorf("Func.String: %q", s)
	}
}

func TestDescribe(t *testing.T) {
	p := parser.New()
	c, stmts, _ := collect(p, "INSERT INTO t SELECT a, b + 1 AS x, c FROM u, db.v")
	reads, writes := UsedTables(c, "app")
	if fmt.Sprint(reads, writes) != "[app.u db.v] [app.t]" {
		t.Errorf("UsedTables = %v, %v", reads, writes)
	}
	if !Locking(stmts[0]) {
		t.Error("INSERT … SELECT does not lock what it reads")
	}
	_, stmts, _ = collect(p, "SELECT 1")
	if Locking(stmts[0]) {
		t.Error("SELECT locks")
	}
	c, _, _ = collect(p, "SELECT a, b + 1, `c` FROM t")
	spans, columns := LabelSpans(c.Labels, "SELECT a, b + 1, `c` FROM t")
	if fmt.Sprint(spans, columns) != "[[7 8] [10 15] [17 20]] [true false true]" {
		t.Errorf("LabelSpans = %v, %v", spans, columns)
	}
	_, stmts, _ = collect(p, "SHOW FULL TABLES FROM db LIKE 'a%'")
	if sh := ShowListing(stmts[0].(*ast.ShowStmt)); sh == nil || sh.What != "TABLES" || !sh.Full || sh.DB != "db" || *sh.Like != "a%" {
		t.Errorf("ShowListing = %+v", sh)
	}
	_, stmts, _ = collect(p, "SHOW DATABASES WHERE `Database` = 'x'")
	if sh := ShowListing(stmts[0].(*ast.ShowStmt)); sh == nil || sh.What != "DATABASES" || sh.Where == "" {
		t.Errorf("ShowListing = %+v", sh)
	}
	c, _, _ = collect(p, "CREATE TABLE t (a INT, KEY k (a)) PARTITION BY HASH (a) PARTITIONS 2")
	if d := DeclaredNames(c); len(d) == 0 {
		t.Errorf("DeclaredNames = %v", d)
	}
}

func TestTransactions(t *testing.T) {
	p := parser.New()
	_, stmts, _ := collect(p, "SET TRANSACTION ISOLATION LEVEL READ COMMITTED, READ ONLY")
	if ch := NextTransaction(stmts[0]); ch == nil || ch.Isolation != "READ COMMITTED" || ch.Access != "READ ONLY" {
		t.Errorf("NextTransaction = %+v", ch)
	}
	_, stmts, _ = collect(p, "SET SESSION TRANSACTION READ WRITE")
	if ch := NextTransaction(stmts[0]); ch != nil {
		t.Errorf("NextTransaction of SET SESSION = %+v", ch)
	}
	for text, want := range map[string]TxChars{
		"START TRANSACTION READ ONLY, WITH CONSISTENT SNAPSHOT": {Access: "READ ONLY", Snapshot: true},
		"START TRANSACTION READ WRITE; SELECT 1":                {Access: "READ WRITE"},
		"BEGIN":                                                 {},
	} {
		if got := TransactionStart(text, lexer.Options{}); *got != want {
			t.Errorf("TransactionStart(%q) = %+v, want %+v", text, *got, want)
		}
	}
	text := "SELECT @a, @@session.b, @@global.c, @'d', ?"
	vars := TextVars(text, lexer.Lex(text, lexer.Options{}))
	if fmt.Sprint(vars) != "[{a false true false} {b true true false} {c true true true} {d false true false}]" {
		t.Errorf("TextVars = %v", vars)
	}
}

func TestVolatile(t *testing.T) {
	if why, ok := VolatileFunc("now"); !ok || why != "the clock" {
		t.Errorf("VolatileFunc(now) = %q, %v", why, ok)
	}
	if _, ok := VolatileFunc("concat"); ok {
		t.Error("CONCAT is volatile")
	}
	if !VolatileVar("timestamp") || VolatileVar("sql_mode") {
		t.Error("VolatileVar")
	}
}
