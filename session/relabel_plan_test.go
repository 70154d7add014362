package session_test

import (
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/session"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// TestRelabelPlannedStatement: the answer to a statement the session
// rewrote to its sandbox reads as on the real database — an error naming
// the fork, a column of it, a row holding its name — and one sent as
// written is not relabelled at all.
func TestRelabelPlannedStatement(t *testing.T) {
	e := newEnv(t, session.Config{}, nil)
	s := e.transparent("u")
	e.mustPlan(s, "UPDATE app.t SET a = 1")
	if r := s.Relabel(e.mustPlan(s, "SELECT 1")); r != nil {
		t.Error("a statement sent as written is relabelled")
	}
	if r := s.Relabel(nil); r != nil {
		t.Error("no plan, yet a relabel")
	}
	p := e.mustPlan(s, "SELECT id, a FROM app.t")
	if !p.Flags().Changed {
		t.Fatalf("SELECT of the fork not rewritten: %s", p.SQL)
	}
	r := s.Relabel(p)
	if r == nil {
		t.Fatal("no relabel for a rewritten statement")
	}
	phys := sandbox.Schema(prefix, strings.TrimPrefix(sandboxName(e, s), "sb-"), "app")
	for _, c := range []struct {
		code      uint16
		msg, want string
	}{
		{1146, "Table '" + phys + ".t' doesn't exist", "Table 'app.t' doesn't exist"},
		{1054, "Unknown column 'x' in '" + phys + "'", "Unknown column 'x' in 'app'"},
		{1105, "nothing of the sandbox", "nothing of the sandbox"},
	} {
		if got := r.Error(c.code, c.msg); got != c.want {
			t.Errorf("Error(%d, %q) = %q, want %q", c.code, c.msg, got, c.want)
		}
	}
	n, _, changed := r.Column(wire.ColumnNames{Catalog: "def", Schema: phys, Table: "t", OrgTable: "t", Name: "a", OrgName: "a"}, nil)
	if !changed || n.Schema != "app" || n.Table != "t" {
		t.Errorf("Column of the fork: %+v (changed %v), want schema app", n, changed)
	}
	n, _, changed = r.Column(wire.ColumnNames{Catalog: "def", Schema: "other", Table: "x", OrgTable: "x", Name: "a", OrgName: "a"}, nil)
	if changed || n.Schema != "other" {
		t.Errorf("Column of a production table: %+v (changed %v)", n, changed)
	}
	if _, ok := r.Definition([]byte{}, false); ok {
		t.Error("a parameter's definition replaced")
	}
	if _, ok := r.Definition([]byte{}, true); ok {
		t.Error("a SELECT's column definition replaced by the server's own")
	}
	r.NextResult()
	if r.Rows() {
		t.Error("the rows of a plain SELECT go through Row")
	}
}

// TestFieldList: COM_FIELD_LIST of a table the sandbox holds is answered
// from its fork in the current database; of one it leaves to production,
// or without a current database, it goes upstream as sent.
func TestFieldList(t *testing.T) {
	e := newEnv(t, session.Config{}, nil)
	s := e.transparent("u")
	if _, _, ok, err := s.FieldList(e.ctx, "t"); ok || err != nil {
		t.Errorf("no current database: ok %v, %v", ok, err)
	}
	e.mustPlan(s, "USE app")
	if err := s.UseDB(e.ctx, "app"); err != nil || s.DB() != "app" {
		t.Fatalf("UseDB: %v, db %q", err, s.DB())
	}
	e.mustPlan(s, "UPDATE t SET a = 1")
	phys, rl, ok, err := s.FieldList(e.ctx, "t")
	if err != nil || !ok || rl == nil || phys != sandbox.Schema(prefix, strings.TrimPrefix(sandboxName(e, s), "sb-"), "app") {
		t.Errorf("FieldList of the fork: %q, %v, %v, %v", phys, rl, ok, err)
	}
	if _, _, ok, err := s.FieldList(e.ctx, "u"); ok || err != nil {
		t.Errorf("FieldList of a production table: ok %v, %v", ok, err)
	}
	if _, _, ok, _ := s.FieldList(e.ctx, ""); ok {
		t.Error("FieldList without a table answered")
	}
}
