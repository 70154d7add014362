package ident

import (
	"testing"

	"github.com/pingcap/tidb/pkg/parser"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver" // value expressions for the parser

	"github.com/sqlfork/sqlfork-proxy/rewrite/collect"
	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

// count binds sql's references by counting, as the engine does: the
// pairs, and whether counting told them apart.
func count(t *testing.T, sc *Scratch, sql string) ([]Pairing, bool) {
	t.Helper()
	stmts, _, err := parser.New().Parse(sql, "", "")
	if err != nil {
		t.Fatal(err)
	}
	c := collect.New()
	for _, s := range stmts {
		s.Accept(c)
	}
	sc.Toks = lexer.LexInto(sc.Toks, sql, lexer.Options{})
	sc.Chains = ChainsInto(sc.Chains, sql, sc.Toks, map[string]bool{"select": true, "from": true, "join": true, "on": true, "as": true, "where": true})
	sc.Reset()
	refs := sc.NamesThatMatter(c)
	c = &collect.Collector{Refs: refs, CTEs: c.CTEs, Aliases: c.Aliases}
	if sc.Empty() {
		return nil, true
	}
	sc.Definitions(sql, c)
	sc.Occurrences(sql)
	return sc.Pair(c)
}

func TestCount(t *testing.T) {
	sc := &Scratch{}
	if pairs, ok := count(t, sc, "SELECT t.a FROM db.t JOIN u ON u.id = t.id"); !ok || len(pairs) != 5 {
		t.Errorf("pairs %v, %v", pairs, ok)
	}
	if _, ok := count(t, sc, "SELECT t FROM t"); ok {
		t.Error("a column spelled like the table is counted")
	}
	if _, ok := count(t, sc, "SELECT a.x FROM t AS a"); !ok {
		t.Error("an alias's qualifier needs a place")
	}
	if _, ok := count(t, sc, "SELECT 1"); !ok || len(sc.Names) != 0 {
		t.Error("no names")
	}
	if _, ok := count(t, sc, "WITH t AS (SELECT 1) SELECT * FROM t"); ok {
		t.Error("a CTE spelled like a table is counted")
	}
}
