package ident

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite/collect"
	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
	"github.com/sqlfork/sqlfork-proxy/sqlname"
)

// chainTexts are src's chains as written (".*" for a star).
func chainTexts(src string, toks []lexer.Token, chains []Chain) []string {
	var out []string
	for _, ch := range chains {
		s := src[toks[ch.First].Start:toks[ch.Tok(ch.N-1)].End]
		if ch.Star {
			s += ".*"
		}
		out = append(out, s)
	}
	return out
}

func TestChains(t *testing.T) {
	src := "SELECT a.*, db.t.c, `q`.x FROM db.t AS `select` WHERE select.y = 1"
	toks := lexer.Lex(src, lexer.Options{})
	chains := Chains(src, toks, map[string]bool{"select": true, "from": true, "where": true, "as": true})
	want := []string{"a.*", "db.t.c", "`q`.x", "db.t", "`select`"}
	if got := chainTexts(src, toks, chains); !slices.Equal(got, want) {
		t.Fatalf("Chains = %q, want %q", got, want)
	}
	if got := Tables(src, toks, chains[3]); !slices.Equal(got, []sqlname.Table{{Name: "db"}, {DB: "db", Name: "t"}}) {
		t.Errorf("Tables(db.t) = %v", got)
	}
	roles := []string{}
	for _, c := range []struct {
		ch Chain
		pi int
	}{{chains[0], 0}, {chains[1], 0}, {chains[1], 1}, {chains[1], 2}, {chains[2], 0}, {chains[2], 1}, {chains[3], 1}, {chains[4], 0}} {
		k, ok, db := RoleAt(src, toks, c.ch, c.pi)
		roles = append(roles, fmt.Sprint(k, ok, db))
	}
	wantRoles := []string{
		fmt.Sprint(collect.RefQualifier, true, ""), fmt.Sprint(0, false, ""), fmt.Sprint(collect.RefQualifier, true, "db"),
		fmt.Sprint(0, false, ""), fmt.Sprint(collect.RefQualifier, true, ""), fmt.Sprint(collect.RefTable, true, "q"),
		fmt.Sprint(collect.RefTable, true, "db"), fmt.Sprint(collect.RefTable, true, ""),
	}
	if !slices.Equal(roles, wantRoles) {
		t.Errorf("RoleAt = %q, want %q", roles, wantRoles)
	}
	if n := AliasDefs(src, toks, chains, "select"); n != 1 {
		t.Errorf("AliasDefs(select) = %d, want 1", n)
	}
	if n := AliasDefs(src, toks, chains, "a"); n != 0 {
		t.Errorf("AliasDefs(a) = %d, want 0", n)
	}
}

func TestDeclared(t *testing.T) {
	src := "ALTER TABLE t ENGINE = InnoDB, COLLATE utf8mb4_bin, DROP PARTITION p1, p2; GRANT ALL ON d.* TO u@h"
	toks := lexer.Lex(src, lexer.Options{})
	chains := Chains(src, toks, map[string]bool{"alter": true, "table": true, "drop": true, "partition": true,
		"grant": true, "all": true, "on": true, "to": true, "collate": true})
	d := Declared(src, toks, chains)
	var got []string
	for ci, ch := range chains {
		if d[ci] {
			got = append(got, src[toks[ch.First].Start:toks[ch.First].End])
		}
	}
	if want := []string{"InnoDB", "utf8mb4_bin", "p1", "p2", "u"}; !slices.Equal(got, want) {
		t.Errorf("Declared = %q, want %q", got, want)
	}
}

func TestMark(t *testing.T) {
	src := "SELECT t.a FROM `T` JOIN u"
	toks := lexer.Lex(src, lexer.Options{})
	chains := Chains(src, toks, map[string]bool{"select": true, "from": true, "join": true})
	mk := Mark(src, toks, chains, map[string]int32{"t": 0})
	if strings.Contains(mk.Text, "t.a") || !strings.Contains(mk.Text, " u") || len(strings.Split(mk.Text, MarkerPrefix)) != 3 {
		t.Fatalf("Mark = %q", mk.Text)
	}
	m := mk.Text[strings.Index(mk.Text, "`")+1:]
	m = m[:strings.Index(m, "`")]
	if name, ti, ok := mk.Orig(m); !ok || name != "t" || ti != 1 {
		t.Errorf("Orig(%q) = %q, %d, %v", m, name, ti, ok)
	}
	if name := mk.Name("other"); name != "other" {
		t.Errorf("Name(other) = %q", name)
	}
	if ns := mk.Names(map[string]bool{m: true, "x": true}); !ns["t"] || !ns["x"] {
		t.Errorf("Names = %v", ns)
	}
}

func TestLowerInto(t *testing.T) {
	var buf [64]byte
	if b, ok := LowerInto(&buf, "AbC"); !ok || string(b) != "abc" {
		t.Errorf("LowerInto(AbC) = %q, %v", b, ok)
	}
	if _, ok := LowerInto(&buf, "é"); ok {
		t.Error("LowerInto takes non-ASCII")
	}
	if _, ok := LowerInto(&buf, strings.Repeat("a", 65)); ok {
		t.Error("LowerInto takes 65 bytes")
	}
}

func TestSortSites(t *testing.T) {
	s := SortSites([]Site{{Start: 9}, {Start: 2}, {Start: 5}})
	if s[0].Start != 2 || s[1].Start != 5 || s[2].Start != 9 {
		t.Errorf("SortSites = %v", s)
	}
}
