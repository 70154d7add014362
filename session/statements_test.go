package session_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/session"
	"github.com/sqlfork/sqlfork-proxy/session/sessiontest"
)

// TestInfoSchemaInSandbox: a sandbox reads information_schema's listings
// through views of its own, made once on first use.
func TestInfoSchemaInSandbox(t *testing.T) {
	e := newEnv(t, session.Config{}, nil)
	s := e.transparent("u")
	id := e.idOf(s)
	views := sandbox.InfoSchema(prefix, id)
	p := e.mustPlan(s, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'app'")
	if want := "SELECT table_name FROM `" + views + "`.`TABLES` WHERE table_schema = 'app'"; p.SQL != want {
		t.Errorf("SQL %q, want %q", p.SQL, want)
	}
	if got, ok := p.ColumnSpelling("TABLE_NAME"); !ok || got != "table_name" {
		t.Errorf("ColumnSpelling = %q, %v", got, ok)
	}
	if _, ok := p.ColumnSpelling("ENGINE"); ok {
		t.Error("a column the input does not name is spelled")
	}
	if !s.IsInfoSchema(views) || s.IsInfoSchema(physDB(id, "app")) {
		t.Error("IsInfoSchema")
	}
	if db, ok := s.LogicalDB(views); !ok || db != "information_schema" {
		t.Errorf("LogicalDB(%s) = %q, %v", views, db, ok)
	}
	// One view per mirrored listing, in the sandbox's database, reading
	// the registry and running with the reader's privileges.
	made := e.up.Matching("^CREATE OR REPLACE SQL SECURITY INVOKER VIEW " + q(views) + `\.`)
	if len(made) != 12 { // the fake server has no PARAMETERS
		t.Errorf("%d views made, want 12", len(made))
	}
	for _, v := range made {
		routines := strings.Contains(v, ".`ROUTINES`")              // the sandbox's own procedures by their database
		listing := !strings.Contains(v, ".`SCHEMATA`") && !routines // the other views map tables through the registry
		if !strings.Contains(v, " FROM information_schema.") || !strings.Contains(v, `NOT LIKE '!_sqlfork%' ESCAPE '!'`) ||
			listing && (!strings.Contains(v, "`_sqlfork_meta`.tables") || !strings.Contains(v, "'"+id+"'")) ||
			routines && !strings.Contains(v, `LIKE '!_sqlfork!_`+id+`!_%' ESCAPE '!'`) {
			t.Errorf("view %s", v)
		}
	}
	if !e.up.HasTable(views, "TABLES") || !e.up.HasTable(views, "SCHEMATA") {
		t.Error("views missing upstream")
	}
	e.mustPlan(s, "SELECT COUNT(*) FROM information_schema.COLUMNS")
	if n := e.count("^CREATE OR REPLACE .* VIEW "); n != 12 {
		t.Errorf("views made again: %d", n)
	}
}

// TestInfoSchemaViewsFail: a view the upstream refuses to make fails the
// statement and is tried again next time.
func TestInfoSchemaViewsFail(t *testing.T) {
	e := newEnv(t, session.Config{}, nil)
	e.up.On("VIEW `_sqlfork_[0-9a-f]{8}`.`STATISTICS`").Nth(1).Fail(1142, "42000", "CREATE VIEW command denied")
	s := e.transparent("u")
	_, err := plan(e.ctx, s, "SELECT * FROM information_schema.TABLES")
	wantCode(t, err, 1142, "42000", "CREATE VIEW command denied")
	if !strings.Contains(err.Error(), "create the sandbox's information_schema.STATISTICS") {
		t.Errorf("error %v does not say what failed", err)
	}
	e.mustPlan(s, "SELECT * FROM information_schema.TABLES")
}

// TestShowInSandbox: SHOW TABLES, TABLE STATUS and DATABASES are asked of
// the sandbox's information_schema views.
func TestShowInSandbox(t *testing.T) {
	for _, tc := range []struct {
		sql, db string
		want    string // a regular expression over the SQL sent
		code    uint16
	}{
		{sql: "SHOW TABLES", db: "app",
			want: "^SELECT TABLE_NAME AS `Tables_in_app` FROM `_sqlfork_[0-9a-f]{8}`.`TABLES` WHERE TABLE_SCHEMA = 'app' ORDER BY BINARY `Tables_in_app`$"},
		{sql: "SHOW FULL TABLES FROM other LIKE 't%'",
			want: "^SELECT TABLE_NAME AS `Tables_in_other \\(t%\\)`, TABLE_TYPE AS `Table_type` FROM `_sqlfork_[0-9a-f]{8}`.`TABLES` " +
				"WHERE TABLE_SCHEMA = 'other' AND TABLE_NAME LIKE 't%' ORDER BY BINARY `Tables_in_other \\(t%\\)`$"},
		{sql: "SHOW TABLE STATUS WHERE Engine = 'InnoDB'", db: "app",
			want: "^SELECT \\* FROM \\(SELECT TABLE_NAME AS `Name`, ENGINE AS `Engine`, .* FROM `_sqlfork_[0-9a-f]{8}`.`TABLES` " +
				"WHERE TABLE_SCHEMA = 'app'\\) AS `show` WHERE Engine = 'InnoDB' ORDER BY BINARY `Name`$"},
		{sql: "SHOW DATABASES LIKE 'a%'",
			want: "^SELECT SCHEMA_NAME AS `Database \\(a%\\)` FROM `_sqlfork_[0-9a-f]{8}`.`SCHEMATA` WHERE SCHEMA_NAME LIKE 'a%' ORDER BY BINARY `Database \\(a%\\)`$"},
		{sql: "SHOW TABLES", code: 1046},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			e := newEnv(t, session.Config{}, nil)
			s := e.transparent("u")
			p, err := s.PlanWith(e.ctx, tc.sql, rewrite.Options{DB: tc.db}, false)
			if tc.code != 0 {
				wantCode(t, err, tc.code, "3D000", "No database selected")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !regexp.MustCompile(tc.want).MatchString(p.SQL) {
				t.Errorf("SQL %q, want %s", p.SQL, tc.want)
			}
		})
	}
}

// TestDiagnosticsInSandbox: SHOW WARNINGS is run by the proxy, which maps
// the sandbox's names in the messages back.
func TestDiagnosticsInSandbox(t *testing.T) {
	e := newEnv(t, session.Config{}, nil)
	s := e.transparent("u")
	e.mustPlan(s, "UPDATE t SET a = 1")
	phys := physDB(e.idOf(s), "app")
	if p := e.mustPlan(s, "SHOW WARNINGS"); !p.Flags().Diagnostics {
		t.Error("SHOW WARNINGS not run by the proxy")
	}
	if got := s.Unmap("Table '" + phys + ".t' doesn't exist"); got != "Table 'app.t' doesn't exist" {
		t.Errorf("Unmap = %q", got)
	}
	if db, ok := s.LogicalDB(phys); !ok || db != "app" {
		t.Errorf("LogicalDB = %q, %v", db, ok)
	}
	if _, ok := s.LogicalDB("app"); ok {
		t.Error("a production database taken for a sandbox's")
	}
	if got := s.UnmapOwn("UPDATE `" + phys + "`.`t` SET a = 1"); got != "UPDATE `app`.`t` SET a = 1" {
		t.Errorf("UnmapOwn = %q", got)
	}
	other := e.transparent("v")
	if got := other.UnmapOwn(phys); got != phys {
		t.Errorf("another user's names unmapped: %q", got)
	}
}

// TestOutsideSandbox: in explicit mode outside a sandbox, with production
// writes denied or allowed.
func TestOutsideSandbox(t *testing.T) {
	for _, tc := range []struct {
		sql   string
		deny  string // refusal (1290) with --production-writes=deny, "" if it runs as sent
		allow string // and with allow
		sent  string // the SQL sent when it runs, if not the input
	}{
		{sql: "SELECT * FROM t"},
		{sql: "UPDATE t SET a = 1", deny: "UPDATE (a write statement) outside a sandbox would change production"},
		{sql: "CREATE TABLE n (id INT)", deny: "would change production"},
		{sql: "SELECT * FROM t FOR UPDATE", deny: "reading `app`.`t` under locks outside a sandbox would hold locks on production rows"},
		{sql: "SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE", deny: "asking for SERIALIZABLE"},
		{sql: "SET GLOBAL max_connections = 10", deny: "SET GLOBAL", allow: ""},
		{sql: "SELECT LOAD_FILE('/etc/passwd')", deny: "file", allow: ""},
		{sql: "GRANT ALL ON *.* TO x", deny: "administrative or privilege statement"},
		{sql: "CALL p()", deny: "a stored-routine statement outside a sandbox would change production",
			allow: "must see what a statement reads"},
		{sql: "SELECT * FROM performance_schema.threads", deny: "every user of this proxy share",
			allow: "every user of this proxy share"},
		{sql: "SELECT table_name FROM information_schema.TABLES",
			sent: "SELECT table_name FROM `_sqlfork_production`.`TABLES`"},
		{sql: "SHOW DATABASES", sent: "SELECT SCHEMA_NAME AS `Database` FROM `_sqlfork_production`.`SCHEMATA` ORDER BY BINARY `Database`"},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			e := newEnv(t, session.Config{}, nil)
			e.allowProductionWrites = true // nothing here is run on side connections but the views
			for _, allow := range []bool{false, true} {
				s := e.open(session.Options{User: "u", Mode: session.Explicit, AllowProductionWrites: allow})
				want := tc.deny
				if allow {
					want = tc.allow
				}
				p, err := plan(e.ctx, s, tc.sql)
				switch {
				case want != "":
					wantCode(t, err, 1290, "HY000", want)
				case err != nil:
					t.Errorf("allow %v: %v", allow, err)
				case tc.sent != "" && p.SQL != tc.sent, tc.sent == "" && p.SQL != tc.sql:
					t.Errorf("allow %v: sent %q", allow, p.SQL)
				}
			}
			if w := e.up.ProductionWrites(prefix); len(w) > 0 {
				t.Errorf("production written: %q", w)
			}
		})
	}
}

// TestProductionViews: sessions outside a sandbox read information_schema
// through views without the proxy's databases, made once.
func TestProductionViews(t *testing.T) {
	e := newEnv(t, session.Config{}, nil)
	s := e.open(session.Options{User: "u", Mode: session.Explicit})
	e.mustPlan(s, "SELECT * FROM information_schema.SCHEMATA")
	e.mustPlan(s, "SHOW DATABASES")
	if !s.IsInfoSchema("_sqlfork_production") {
		t.Error("IsInfoSchema(_sqlfork_production)")
	}
	made := e.up.Matching("^CREATE OR REPLACE SQL SECURITY INVOKER VIEW `_sqlfork_production`")
	if len(made) != 12 { // the fake server has no PARAMETERS
		t.Errorf("%d production views made, want 12", len(made))
	}
	for _, v := range made {
		if !strings.Contains(v, "NOT LIKE '!_sqlfork%' ESCAPE '!'") {
			t.Errorf("view %s does not leave out the proxy's databases", v)
		}
	}
}

// TestProcessListAndServerCommands: SHOW PROCESSLIST is the proxy's, and
// commands that act on the whole server are refused where FLUSH is.
func TestProcessListAndServerCommands(t *testing.T) {
	e := newEnv(t, session.Config{}, nil)
	sb := e.transparent("u")
	prod := e.open(session.Options{User: "u", Mode: session.Explicit})
	allow := e.open(session.Options{User: "u", Mode: session.Explicit, AllowProductionWrites: true})
	pass := e.open(session.Options{User: "u", Mode: session.Passthrough})
	for _, s := range []*session.Session{sb, prod} {
		if p := e.mustPlan(s, "SHOW FULL PROCESSLIST"); p.Flags().ProcessList == nil || !p.Flags().ProcessList.Full {
			t.Errorf("SHOW FULL PROCESSLIST planned as %+v", p)
		}
	}
	for _, tc := range []struct {
		s       *session.Session
		changes bool
		code    uint16
	}{
		{s: sb, code: 1290}, {s: sb, changes: true, code: 1290},
		{s: prod}, {s: prod, changes: true, code: 1290},
		{s: allow, changes: true}, {s: pass, changes: true},
	} {
		err := tc.s.ServerCommand("COM_REFRESH", tc.changes)
		if tc.code == 0 && err != nil {
			t.Errorf("%s changes %v: %v", tc.s.Mode(), tc.changes, err)
		} else if tc.code != 0 {
			wantCode(t, err, tc.code, "HY000", "COM_REFRESH")
		}
	}
}

// TestGuardrailsInPlan: per-user guardrails refuse what they deny, with
// their reason, and bound the statements they let through.
func TestGuardrailsInPlan(t *testing.T) {
	e := newEnv(t, session.Config{
		Guardrails: session.Guardrails{StatementTimeout: 1500 * time.Millisecond},
		UserGuardrails: map[string]session.Guardrails{
			"ro":    {DenyStatements: []string{"write", "ddl"}, MaxRows: 100},
			"multi": {DenyMultiStatements: true},
		},
	}, nil)
	reason := func(err error) string {
		var r *rewrite.Refusal
		if errors.As(err, &r) {
			return r.Reason
		}
		return ""
	}
	ro := e.transparent("ro")
	_, err := plan(e.ctx, ro, "UPDATE t SET a = 1")
	wantCode(t, err, 1290, "HY000", "")
	if reason(err) != session.GuardDenyStatements {
		t.Errorf("reason %q", reason(err))
	}
	if g := ro.Guardrails(); g.MaxRows != 100 || g.StatementTimeout != 0 {
		t.Errorf("ro's guardrails %+v", g)
	}
	wantCode(t, ro.RowCapError(100), 1226, "42000", "User 'ro' has exceeded the 'max_rows' resource (current value: 100)")
	if reason(ro.RowCapError(1)) != session.GuardMaxRows {
		t.Error("row cap reason")
	}

	multi := e.transparent("multi")
	_, err = plan(e.ctx, multi, "SELECT 1; SELECT 2")
	wantCode(t, err, 1290, "HY000", "")
	wantCode(t, multi.CheckMultiStatement(), 1290, "HY000", "deny-multi-statements")
	if ro.CheckMultiStatement() != nil {
		t.Error("multi-statements denied for ro")
	}

	other := e.transparent("other")
	p := e.mustPlan(other, "SELECT * FROM t")
	if want := "SET STATEMENT max_statement_time=1.5 FOR SELECT * FROM t"; p.SQL != want {
		t.Errorf("SQL %q, want %q", p.SQL, want)
	}
	if !p.TimedOut(1969) || p.TimedOut(1205) {
		t.Error("TimedOut")
	}
	if p := e.mustPlan(other, "SHOW WARNINGS"); strings.Contains(p.SQL, "max_statement_time") {
		t.Errorf("SHOW WARNINGS bounded: %q", p.SQL)
	}
	_, err = plan(e.ctx, other, "SELECT 1; SELECT 2")
	wantCode(t, err, 1290, "HY000", "statement-timeout guardrail (1.5s) bounds one statement at a time")
	if reason(err) != session.GuardStatementTimeout {
		t.Errorf("reason %q", reason(err))
	}
	pass := e.open(session.Options{User: "other", Mode: session.Passthrough})
	if g := pass.Guardrails(); g.StatementTimeout != 0 {
		t.Errorf("passthrough guardrails %+v", g)
	}
	if pass.CheckMultiStatement() != nil {
		t.Error("passthrough multi-statements refused")
	}
}

// TestNoDatabaseInSandbox: with no current database, a statement naming a
// table without its database gets the server's own 1046 (it would
// otherwise land in a sandbox database of no name); one that qualifies
// its tables, names none, or names one only in a REFERENCES clause (the
// server takes the constrained table's database) is planned.
func TestNoDatabaseInSandbox(t *testing.T) {
	e := newEnv(t, session.Config{}, nil)
	s := e.transparent("u")
	for _, tc := range []struct {
		sql    string
		no1046 bool
	}{
		{sql: "CREATE TABLE t1 (a INT)"},
		{sql: "SELECT * FROM t"},
		{sql: "INSERT INTO t VALUES (1)"},
		{sql: "SELECT * FROM app.t WHERE id IN (SELECT id FROM u)"},
		{sql: "CREATE TABLE app.t2 LIKE t"},
		{sql: "DROP TABLE IF EXISTS t"},
		{sql: "SHOW TABLES"},
		{sql: "CREATE PROCEDURE p() SELECT 1"},
		{sql: "SELECT * FROM app.t", no1046: true},
		{sql: "SELECT 1", no1046: true},
		{sql: "WITH c AS (SELECT 1 AS x) SELECT * FROM c", no1046: true},
		{sql: "CREATE TABLE app.n (a INT, FOREIGN KEY (a) REFERENCES t (id))", no1046: true},
	} {
		_, err := s.PlanWith(e.ctx, tc.sql, rewrite.Options{}, false)
		code, state, msg, _ := sessiontest.Code(err)
		switch {
		case tc.no1046 && code == 1046:
			t.Errorf("%s: %v, want no 1046", tc.sql, err)
		case !tc.no1046 && (code != 1046 || state != "3D000" || msg != "No database selected"):
			t.Errorf("%s: %v, want the server's 1046 (3D000) \"No database selected\"", tc.sql, err)
		}
	}
}

// TestSplitShows: SHOW statements the proxy answers, and with no current
// database statements naming a table without it, are split off an input of
// several statements; other inputs, and inputs whose statements the cut at
// semicolons does not give (a compound statement), are not split.
func TestSplitShows(t *testing.T) {
	e := newEnv(t, session.Config{}, nil)
	for _, c := range []struct {
		db, sql string
		want    []string
	}{
		{"app", "CREATE TABLE x (a INT); SHOW TABLES; SELECT 1; SELECT 2", []string{"CREATE TABLE x (a INT)", "SHOW TABLES", "SELECT 1;\nSELECT 2"}},
		{"app", "SELECT 1; SHOW DATABASES; DROP TABLE IF EXISTS n; SHOW WARNINGS", []string{"SELECT 1", "SHOW DATABASES", "DROP TABLE IF EXISTS n", "SHOW WARNINGS"}},
		{"app", "SELECT 1; SHOW VARIABLES LIKE 'x'", nil},
		{"app", "SELECT 1; SELECT 2", nil},
		{"app", "CREATE PROCEDURE p() BEGIN SHOW TABLES; END", nil},
		{"", "SELECT 1; CREATE TABLE t1 (a INT); SELECT 2", []string{"SELECT 1", "CREATE TABLE t1 (a INT)", "SELECT 2"}},
		{"", "SELECT 1; SELECT * FROM app.t", nil},
	} {
		s := e.open(session.Options{User: "u", Mode: session.Transparent, DB: c.db})
		got, err := s.Split(e.ctx, c.sql, true)
		if err != nil || strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%q in %q: %q, %v; want %q", c.sql, c.db, got, err, c.want)
		}
	}
}

// TestUnquoteRenames: a server message quoting the rewritten text — with
// its backquotes doubled, or as sent — reads in the client's words.
func TestUnquoteRenames(t *testing.T) {
	rn := []rewrite.Rename{{From: "f", To: "`_sqlfork_1_test`.`f`"}, {From: "t", To: "t"}, {From: "t1", To: "`_sqlfork_1_test`.`t1`"}}
	for msg, want := range map[string]string{
		"Out of range value for column '`_sqlfork_1_test`.`f`()' at row 0":   "Out of range value for column 'f()' at row 0",
		"Incorrect integer value for column '```_sqlfork_1_test``.``f``()`'": "Incorrect integer value for column '`f()`'",
		"Table 't' doesn't exist": "Table 't' doesn't exist",
		// The server's own rendering of a table's name: unmap's to tell.
		"Incorrect time value: '' for column `_sqlfork_1_test`.`t1`.`a` at row 1": "Incorrect time value: '' for column `_sqlfork_1_test`.`t1`.`a` at row 1",
	} {
		if got := session.UnquoteRenames(msg, rn); got != want {
			t.Errorf("%q: %q, want %q", msg, got, want)
		}
	}
}

// TestBlockWithDDLPlanned: an anonymous block holding DDL places the tables
// it creates and forks those it changes before it runs, is kept for a
// replay's refusal (stateful), and is not DDL the session commits around.
func TestBlockWithDDLPlanned(t *testing.T) {
	e := newEnv(t, session.Config{}, nil)
	s, id, db := e.transparentApp()
	p := e.mustPlan(s, "BEGIN NOT ATOMIC CREATE TABLE n (a INT); INSERT INTO n SELECT id FROM t; DROP TABLE u; END")
	if want := "BEGIN NOT ATOMIC CREATE TABLE " + db + ".`n` (a INT); INSERT INTO " + db + ".`n` SELECT id FROM " + db + ".`t`; DROP TABLE " +
		db + ".`u`; END"; p.SQL != want {
		t.Errorf("SQL %q, want %q", p.SQL, want)
	}
	if f := p.Flags(); !f.Stateful || f.DDL {
		t.Errorf("flags %+v, want stateful, not DDL", f)
	}
	for tbl, want := range map[string]string{"n": "absent", "u": "fork"} {
		if kind, _, _ := e.tableRow(id, "app", tbl); kind != want {
			t.Errorf("registry row of %s: %q, want %q", tbl, kind, want)
		}
	}
}
