package rewrite

import (
	"strings"
	"testing"
)

// globalsOf maps no table and holds the globals vals.
type globalsOf map[string]string

func (g globalsOf) Resolve(t Table, write bool) (Table, bool, error) { return t, false, nil }
func (g globalsOf) Global(name string) (string, bool)                { v, ok := g[name]; return v, ok }

func TestGlobalReads(t *testing.T) {
	e := NewEngine(0)
	g := globalsOf{"sort_buffer_size": "X", "sql_mode": "Y"}
	tests := []struct{ in, want string }{
		{"SELECT @@global.sort_buffer_size", "SELECT X"},
		{"SELECT @@GLOBAL.Sort_Buffer_Size, @@session.sort_buffer_size, @@global.join_buffer_size", "SELECT X, @@session.sort_buffer_size, @@global.join_buffer_size"},
		{"SET @save = @@global.sort_buffer_size", "SET @save = X"},
		{"SELECT @@global.`sql_mode` = 'a'", "SELECT Y = 'a'"},
		{"SELECT /*!100000 @@global.sql_mode */", "SELECT /*!100000 Y */"},
		{"SELECT '@@global.sql_mode'", "SELECT '@@global.sql_mode'"},
		// The sandbox's SET GLOBAL is answered apart; a stored program
		// reads the variable when it runs.
		{"SET GLOBAL sql_mode = @@global.sql_mode", "SET GLOBAL sql_mode = @@global.sql_mode"},
		{"CREATE VIEW v AS SELECT @@global.sql_mode", "CREATE VIEW v AS SELECT @@global.sql_mode"},
	}
	for _, c := range tests {
		res, err := e.Analyze(c.in, Options{DB: "app", Server: ParseServer("10.11.19-MariaDB")}).Rewrite(g)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if res.SQL != c.want {
			t.Errorf("%q rewritten %q, want %q", c.in, res.SQL, c.want)
		}
	}
	res, _ := e.Analyze("SELECT @@global.sql_mode", Options{}).Rewrite(g)
	if len(res.Renames) != 1 || res.Renames[0].From != "@@global.sql_mode" || len(res.Splices) != 1 {
		t.Errorf("renames %v splices %v: labels could not be told back", res.Renames, res.Splices)
	}
}

func TestFlushStatusKind(t *testing.T) {
	e := NewEngine(0)
	for _, c := range []struct {
		in   string
		kind Kind
	}{
		{"FLUSH STATUS", KindFlushStatus}, {"flush status;", KindFlushStatus}, {"FLUSH LOCAL STATUS", KindFlushStatus},
		{"FLUSH NO_WRITE_TO_BINLOG STATUS", KindFlushStatus}, {"FLUSH PRIVILEGES", ""}, {"FLUSH TABLES", KindFlushTables},
	} {
		a := e.Analyze(c.in, Options{})
		if len(a.Statements) != 1 {
			t.Errorf("%q: %d statements", c.in, len(a.Statements))
			continue
		}
		if got := a.Statements[0].Kind; got != c.kind && !(c.kind == "" && !strings.Contains(string(got), "STATUS")) {
			t.Errorf("%q: kind %q, want %q", c.in, got, c.kind)
		}
	}
}
