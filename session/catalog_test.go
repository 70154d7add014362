package session_test

import (
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/session"
	"github.com/sqlfork/sqlfork-proxy/session/sessiontest"
)

// catalogData is production with objects a sandbox cannot hold: a stored
// function, a loadable function, views calling or reading them, a MERGE
// table, a MyISAM table, a table whose default advances a sequence.
func catalogData(up *sessiontest.Upstream) {
	up.AddHazardObjects()
	up.On("^SELECT ROUTINE_SCHEMA FROM information_schema.ROUTINES WHERE ROUTINE_TYPE = 'FUNCTION' AND ROUTINE_NAME = 'price'").
		Rows(sessiontest.Row("app"))
	up.On("^SHOW CREATE FUNCTION `app`.`price`$").Fail(1305, "42000", "FUNCTION app.price does not exist")
	up.On("dropped_routines").Fail(1146, "42S02", "Table 'x.dropped_routines' doesn't exist")
	up.AddTable(sessiontest.Table{DB: "app", Name: "m", Engine: "MRG_MyISAM"})
	up.AddTable(sessiontest.Table{DB: "app", Name: "my", Engine: "MyISAM", Rows: 5})
	up.AddTable(sessiontest.Table{DB: "app", Name: "seq", Type: "SEQUENCE"})
	up.AddTable(sessiontest.Table{DB: "app", Name: "withseq",
		Columns: []sessiontest.Column{{Name: "id", Default: "nextval(`app`.`seq`)"}}})
}

// TestCatalogRefusals: what a statement reaches through the objects it
// names is checked whatever the proxy's account may do: in a sandbox, and
// outside one where production writes are denied.
func TestCatalogRefusals(t *testing.T) {
	for _, tc := range []struct {
		sql string
		// in a sandbox, and outside one (explicit, production writes
		// denied): "" runs, else the refusal (1290) contains it.
		sandbox, production string
	}{
		// In a sandbox a stored function is copied; this account cannot
		// read its definition.
		{sql: "SELECT price(1)", sandbox: "cannot read the definition of production's function `app`.`price` (grant its account SELECT ON mysql.proc)",
			production: "calls the stored function `app`.`price`"},
		{sql: "SELECT myudf(1)", sandbox: "calls the loadable function (UDF) myudf",
			production: "calls the loadable function (UDF) myudf"},
		{sql: "SELECT ABS(-1), COUNT(*) FROM t"},
		{sql: "SELECT nosuchfn(1)"},
		// Views calling a stored function: in a sandbox, copies calling
		// the sandbox's copy of the function (not readable here).
		{sql: "SELECT * FROM vf", sandbox: "cannot read the definition of production's function `app`.`price`",
			production: "the view `app`.`vf` is defined with something the sandbox cannot hold: it calls the stored function app.price"},
		{sql: "SELECT * FROM vf2", sandbox: "cannot read the definition of production's function `app`.`price`",
			production: "the view `app`.`vf2` is defined with something the sandbox cannot hold: it calls the stored function `app`.`price`"},
		{sql: "SELECT * FROM vu", sandbox: "loadable function (UDF) myudf", production: "myudf"},
		{sql: "SELECT * FROM vv", sandbox: "cannot read the definition of production's function `app`.`price`",
			production: "the view `app`.`vv` is defined with something the sandbox cannot hold: the view `app`.`vf` is defined"},
		{sql: "SELECT * FROM vi", sandbox: "lists what the whole server holds", production: "lists what the whole server holds"},
		{sql: "SELECT * FROM vp", sandbox: "holds what the whole server holds", production: "holds what the whole server holds"},
		{sql: "SELECT * FROM vs", sandbox: "reading the view `app`.`vs` changes `app`.`seq`", production: "changes `app`.`seq`"},
		{sql: "SELECT * FROM vhidden", sandbox: "cannot read the definition of the view `app`.`vhidden` (grant its account SHOW VIEW)",
			production: "SHOW VIEW"},
		{sql: "SELECT * FROM vbad", sandbox: "cannot analyse the definition of the view `app`.`vbad`",
			production: "cannot analyse the definition"},
		{sql: "SELECT * FROM deep0", sandbox: "built on views more than 10 deep", production: "more than 10 deep"},
		{sql: "SELECT * FROM v"},
		{sql: "CREATE TABLE n LIKE m", sandbox: "would copy its MRG_MyISAM engine",
			production: "CREATE TABLE (a ddl statement) outside a sandbox would change production"},
		{sql: "CREATE TABLE n LIKE withseq", sandbox: "would copy the default of its column `id` (nextval(`app`.`seq`))",
			production: "would change production"},
		{sql: "UPDATE m SET id = 1", sandbox: "`app`.`m` is a MRG_MyISAM table, which reads and writes other tables",
			production: "would change production"},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			e := newEnv(t, session.Config{}, catalogData)
			for _, where := range []struct {
				mode session.Mode
				want string
			}{{session.Transparent, tc.sandbox}, {session.Explicit, tc.production}} {
				s := e.open(session.Options{User: "u", Mode: where.mode})
				_, err := plan(e.ctx, s, tc.sql)
				if where.want == "" {
					if err != nil {
						t.Errorf("%s: %v", where.mode, err)
					}
					continue
				}
				wantCode(t, err, 1290, "HY000", where.want)
			}
		})
	}
}

// TestCatalogUnreadableUDFs: when the account cannot read mysql.func, a
// call of a name that is neither the server's nor a stored function is
// refused: it may be a loadable function.
func TestCatalogUnreadableUDFs(t *testing.T) {
	e := newEnv(t, session.Config{}, func(up *sessiontest.Upstream) {
		up.On("^SELECT name FROM mysql.func$").Fail(1142, "42000", "SELECT command denied to user 'sqlfork'@'%' for table 'func'")
	})
	s := e.transparent("u")
	_, err := plan(e.ctx, s, "SELECT nosuchfn(1)")
	wantCode(t, err, 1290, "HY000", "cannot read mysql.func (grant it SELECT ON mysql.func)")
	if _, err := plan(e.ctx, s, "SELECT UPPER('x')"); err != nil {
		t.Errorf("a native function: %v", err)
	}
	// Functions of the grammar itself: no loadable function is called so.
	for _, q := range []string{"SELECT AVG (1), COUNT(*), SUM(1)", "SELECT ROW_NUMBER() OVER (), RANK() OVER (ORDER BY 1)", "SELECT LAST_VALUE(1)"} {
		if _, err := plan(e.ctx, s, q); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
	_, err = plan(e.ctx, s, "SELECT `avg`(1)")
	wantCode(t, err, 1290, "HY000", "cannot read mysql.func")
}

// TestCatalogLookupFails: a catalog lookup the upstream cannot answer
// fails the statement rather than letting it through.
func TestCatalogLookupFails(t *testing.T) {
	for _, rule := range []string{
		`^SELECT TABLE_TYPE, ENGINE FROM information_schema\.TABLES`,
		`^SELECT COUNT\(\*\) FROM information_schema\.ROUTINES`,
		`^SELECT name FROM mysql\.func`,
		`^SELECT VIEW_DEFINITION, CHECK_OPTION, ALGORITHM, COLLATION_CONNECTION FROM information_schema\.VIEWS`,
		`^SELECT COLUMN_NAME, COLUMN_DEFAULT FROM information_schema\.COLUMNS`,
	} {
		t.Run(rule, func(t *testing.T) {
			e := newEnv(t, session.Config{}, func(up *sessiontest.Upstream) {
				catalogData(up)
				up.On(rule).Break()
			})
			s := e.transparent("u")
			var failed bool
			for _, sql := range []string{"SELECT nosuchfn(1) FROM t", "SELECT * FROM v", "CREATE TABLE n LIKE t"} {
				if _, err := plan(e.ctx, s, sql); err != nil {
					failed = true
					if _, _, _, ok := sessiontest.Code(err); ok || !strings.Contains(err.Error(), "connection broken") {
						t.Errorf("%s: %v", sql, err)
					}
				}
			}
			if !failed {
				t.Error("every statement passed")
			}
		})
	}
}

// TestCatalogCache: what the catalog learnt of a name is reused.
func TestCatalogCache(t *testing.T) {
	e := newEnv(t, session.Config{}, catalogData)
	s := e.open(session.Options{User: "u", Mode: session.Explicit})
	for range 3 {
		e.mustPlan(s, "SELECT * FROM v")
		if _, err := plan(e.ctx, s, "SELECT nosuchfn(1)"); err != nil {
			t.Fatal(err)
		}
	}
	for re, want := range map[string]int{
		"^SELECT VIEW_DEFINITION, CHECK_OPTION, ALGORITHM, COLLATION_CONNECTION FROM information_schema.VIEWS WHERE TABLE_SCHEMA = 'app' AND TABLE_NAME = 'v'$": 1,
		"^SELECT COUNT\\(\\*\\) FROM information_schema.ROUTINES .*'nosuchfn'$":                                                                                 1,
		"^SELECT name FROM mysql.func$": 1,
	} {
		if n := e.count(re); n != want {
			t.Errorf("%d lookups matching %s, want %d", n, re, want)
		}
	}
}

// TestForkFirst: tables read under locks — a MyISAM table's every read,
// SELECT … FOR UPDATE, the reads of a write, REFERENCES targets, the
// tables of a CREATE VIEW, every read under SERIALIZABLE — are forked
// before the statement runs, so that no lock is taken on production.
func TestForkFirst(t *testing.T) {
	for _, tc := range []struct {
		sql    string
		forked []string
		setup  string // a statement planned first
	}{
		{sql: "SELECT * FROM my", forked: []string{"my"}},
		{sql: "SELECT * FROM t", forked: nil},
		{sql: "SELECT * FROM t LOCK IN SHARE MODE", forked: []string{"t"}},
		{sql: "INSERT INTO u (t_id) SELECT id FROM t", forked: []string{"t", "u"}},
		{sql: "CREATE TABLE c (id INT, t_id INT, FOREIGN KEY (t_id) REFERENCES t (id))", forked: []string{"t"}},
		{sql: "CREATE VIEW w AS SELECT * FROM t", forked: []string{"t"}},
		{sql: "SELECT * FROM t JOIN u", forked: []string{"t", "u"},
			setup: "SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE"},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			e := newEnv(t, session.Config{}, catalogData)
			s := e.transparent("u")
			id := e.idOf(s)
			if tc.setup != "" {
				p := e.mustPlan(s, tc.setup)
				if err := s.Executed(e.ctx, p, 0, false); err != nil {
					t.Fatal(err)
				}
			}
			p := e.mustPlan(s, tc.sql)
			var got []string
			for _, tbl := range []string{"my", "t", "u"} {
				if kind, _, _ := e.tableRow(id, "app", tbl); kind == "fork" {
					got = append(got, tbl)
					if !strings.Contains(p.SQL, "`"+physDB(id, "app")+"`.`"+tbl+"`") {
						t.Errorf("%s forked but not read there: %s", tbl, p.SQL)
					}
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.forked, ",") {
				t.Errorf("forked %q, want %q", got, tc.forked)
			}
		})
	}
}
