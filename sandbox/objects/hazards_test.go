package objects

import (
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/session/sessiontest"
)

// hazardous is production with objects a sandbox cannot hold.
func hazardous(up *sessiontest.Upstream) {
	up.AddFunction("app", "price")
	up.AddUDF("myudf")
	up.AddView("app", "vf", "select `app`.`price`(`app`.`t`.`a`) AS `p` from `app`.`t`")
	up.AddView("app", "vi", "select `information_schema`.`TABLES`.`TABLE_NAME` AS `n` from `information_schema`.`TABLES`")
	up.AddTable(sessiontest.Table{DB: "app", Name: "m", Engine: "MRG_MyISAM"})
	up.AddTable(sessiontest.Table{DB: "app", Name: "my", Engine: "MyISAM", Rows: 5})
	up.AddTable(sessiontest.Table{DB: "app", Name: "seq_1_to_3", Engine: "SEQUENCE"})
	up.AddTable(sessiontest.Table{DB: "app", Name: "seq", Type: "SEQUENCE"})
	up.AddTable(sessiontest.Table{DB: "app", Name: "withseq",
		Columns: []sessiontest.Column{{Name: "id", Default: "nextval(`app`.`seq`)"}}})
}

// TestHazard: what a statement reaches through the objects it names, in a
// sandbox and outside one.
func TestHazard(t *testing.T) {
	r := newRig(t, hazardous)
	for _, c := range []struct {
		sql        string
		sb         bool
		want       string
		serializes bool
	}{
		{sql: "SELECT myudf(1)", sb: true, want: "calls the loadable function (UDF) myudf"},
		{sql: "SELECT myudf(1)", want: "calls the loadable function (UDF) myudf"},
		{sql: "SELECT price(1)", want: "calls the stored function `app`.`price`"},
		{sql: "SELECT * FROM vf", want: "calls the stored function"},
		{sql: "SELECT * FROM vf", sb: true},
		{sql: "SELECT * FROM vi", sb: true, want: "which a sandbox must not see"},
		{sql: "CREATE TABLE n LIKE m", sb: true, want: "would copy its MRG_MyISAM engine"},
		{sql: "CREATE TABLE n LIKE withseq", sb: true, want: "advances a production sequence"},
		{sql: "CREATE TABLE n LIKE t", sb: true},
		{sql: "INSERT INTO m VALUES (1)", sb: true, want: "`app`.`m` is a MRG_MyISAM table, which reads and writes other tables"},
		{sql: "INSERT INTO seq_1_to_3 VALUES (1)", sb: true, want: "Sequence engine"},
		{sql: "SELECT * FROM my FOR UPDATE", sb: true},
		{sql: "SELECT * FROM my WHERE x = (SELECT 1 FROM a b c d)", sb: true, want: "is a MyISAM table, whose reads lock it"},
		{sql: "SELECT * FROM t WHERE x = (SELECT 1 FROM a b c d)", sb: true, serializes: true, want: "under SERIALIZABLE every read locks"},
		{sql: "SELECT * FROM t WHERE x = (SELECT 1 FROM a b c d)", sb: true},
		{sql: "SELECT * FROM t", sb: true, serializes: true},
	} {
		r.h.serializable = c.serializes
		var sb *registry.Sandbox
		if c.sb {
			sb = r.sb
		}
		why, err := r.p.Hazard(r.ctx, r.analyze(c.sql), sb)
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
		} else if c.want == "" && why != "" || c.want != "" && !strings.Contains(why, c.want) {
			t.Errorf("%s (sandbox %v): %q, want %q", c.sql, c.sb, why, c.want)
		}
	}
}

// TestForkFirst: the tables a statement needs forked whole before it
// runs, besides those it writes.
func TestForkFirst(t *testing.T) {
	r := newRig(t, hazardous)
	for _, c := range []struct {
		sql        string
		serializes bool
		want       []string
	}{
		{sql: "SELECT * FROM t"},
		{sql: "SELECT * FROM t, seq_1_to_3", serializes: true, want: []string{"t"}},
		{sql: "CREATE VIEW w AS SELECT * FROM t JOIN information_schema.TABLES", want: []string{"t"}},
		{sql: "SELECT * FROM t FOR UPDATE", want: []string{"t"}},
		{sql: "SELECT * FROM seq_1_to_3 FOR UPDATE"},
		{sql: "SELECT * FROM my, t", want: []string{"my"}},
		{sql: "CREATE TABLE c (id INT, FOREIGN KEY (id) REFERENCES u (id))", want: []string{"u"}},
	} {
		r.h.serializable = c.serializes
		got, err := r.p.ForkFirst(r.ctx, r.stmt(c.sql))
		var names []string
		for _, u := range got {
			names = append(names, u.Name)
		}
		if err != nil || len(names) != len(c.want) || len(names) > 0 && names[0] != c.want[0] {
			t.Errorf("%s: %v, %v; want %v", c.sql, names, err, c.want)
		}
	}
	// A table the sandbox holds is its own.
	if _, _, err := r.h.Ensure(r.ctx, rewrite.Table{DB: "app", Name: "my"}, forker.Full); err != nil {
		t.Fatal(err)
	}
	r.h.serializable = false
	if got, err := r.p.ForkFirst(r.ctx, r.stmt("SELECT * FROM my")); len(got) != 0 || err != nil {
		t.Errorf("held MyISAM table: %v, %v", got, err)
	}
	if v, err := r.p.virtual(r.ctx, rewrite.Table{DB: "app", Name: "my"}); v || err != nil {
		t.Errorf("virtual(held) = %v, %v", v, err)
	}
}
