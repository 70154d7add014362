package forker

import (
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/sqlname"
)

func tbl(s string) sqlname.Table {
	db, name, _ := strings.Cut(s, ".")
	return sqlname.Table{DB: db, Name: name}
}

func fk(child, parent string) ForeignKey {
	return ForeignKey{Name: "k", Child: tbl(child), Parent: tbl(parent)}
}

func TestComponent(t *testing.T) {
	fks := []ForeignKey{
		fk("a.orders", "a.customers"),
		fk("a.items", "a.orders"),
		fk("a.notes", "a.customers"),
		fk("b.audit", "a.items"), // across databases
		fk("a.staff", "a.staff"), // itself
		fk("a.x", "a.y"),
	}
	same := func(p, q sqlname.Table) bool { return strings.EqualFold(p.String(), q.String()) }
	for _, c := range []struct {
		t      string
		want   string
		linked bool
	}{
		{"a.orders", "a.orders,a.customers,a.items,a.notes,b.audit", true},
		{"a.CUSTOMERS", "a.CUSTOMERS,a.items,a.notes,a.orders,b.audit", true},
		{"b.audit", "b.audit,a.customers,a.items,a.notes,a.orders", true},
		{"a.staff", "a.staff", true},
		{"a.y", "a.y,a.x", true},
		{"a.loose", "a.loose", false},
	} {
		got, linked := Component(fks, tbl(c.t), same)
		var names []string
		for _, g := range got {
			names = append(names, g.DB+"."+g.Name)
		}
		if strings.Join(names, ",") != c.want || linked != c.linked {
			t.Errorf("Component(%s) = %v %v, want %s %v", c.t, names, linked, c.want, c.linked)
		}
	}
}

func TestRule(t *testing.T) {
	for in, want := range map[string]string{
		"RESTRICT": "", "CASCADE": "CASCADE", "set null": "SET NULL", "NO ACTION": "NO ACTION",
		"SET DEFAULT": "SET DEFAULT", "": "", "DROP TABLE x": "",
	} {
		if got := rule(in); got != want {
			t.Errorf("rule(%q) = %q, want %q", in, got, want)
		}
	}
}
