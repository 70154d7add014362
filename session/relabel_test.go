package session

import (
	"strconv"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// TestRelabelColumn: a column definition of a sandbox's table names the
// logical database; a column of the sandbox's information_schema views is
// named as the statement spelled it, and one the views compute (no schema)
// is information_schema's.
func TestRelabelColumn(t *testing.T) {
	logical := func(s string) (string, bool) {
		switch s {
		case "_sqlfork_0123abcd_app":
			return "app", true
		case "_sqlfork_0123abcd":
			return "information_schema", true
		}
		return "", false
	}
	spell := func(schema, name string) (string, bool) {
		if (schema == "_sqlfork_0123abcd" || schema == "") && name == "TABLE_NAME" {
			return "table_name", true
		}
		return "", false
	}
	col := func(schema, name, orgName string) wire.ColumnNames {
		return wire.ColumnNames{Catalog: "def", Schema: schema, Table: "t", OrgTable: "TABLES", Name: name, OrgName: orgName}
	}
	for _, c := range []struct {
		in, want wire.ColumnNames
		ok       bool
	}{
		{col("_sqlfork_0123abcd_app", "id", "id"), col("app", "id", "id"), true},
		{col("_sqlfork_0123abcd", "TABLE_NAME", "TABLE_NAME"), col("information_schema", "table_name", "TABLE_NAME"), true},
		{col("", "TABLE_NAME", "TABLE_NAME"), col("information_schema", "table_name", "TABLE_NAME"), true},
		{col("", "COUNT(*)", "COUNT(*)"), col("", "COUNT(*)", "COUNT(*)"), false},
		{col("app", "id", "id"), col("app", "id", "id"), false},
	} {
		got, ok := relabelColumn(c.in, logical, spell)
		if ok != c.ok || got != c.want {
			t.Errorf("relabelColumn(%+v) = %+v, %v; want %+v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// TestRelabelRow: the values of a row whose answer the server writes names
// into (SHOW CREATE VIEW, EXPLAIN, information_schema.VIEWS) name the
// logical databases; SHOW CREATE VIEW names the current database's tables
// without it, as the server does.
func TestRelabelRow(t *testing.T) {
	s := &Session{m: &Manager{cfg: Config{Prefix: "_sqlfork"}}, sb: registry.ForTest("0123abcd", map[string]*sandbox.Entry{
		"app.users": {Logical: rewrite.Table{DB: "app", Name: "users"}, Phys: rewrite.Table{DB: "_sqlfork_0123abcd_app", Name: "users"}},
		"other.t":   {Logical: rewrite.Table{DB: "other", Name: "t"}, Phys: rewrite.Table{DB: "_sqlfork_0123abcd_other", Name: "t"}},
	})}
	def := "select `a`.`id` AS `id` from `_sqlfork_0123abcd_app`.`users` `a` join `_sqlfork_0123abcd_other`.`t`"
	ref := "_sqlfork_0123abcd_app.a.id"
	for _, c := range []struct {
		viewDB string
		in     []*string
		want   []*string
	}{
		{"", []*string{&def, nil, &ref}, []*string{ptr("select `a`.`id` AS `id` from `app`.`users` `a` join `other`.`t`"), nil, ptr("app.a.id")}},
		{"app", []*string{&def}, []*string{ptr("select `a`.`id` AS `id` from `users` `a` join `other`.`t`")}},
		{"", []*string{ptr("nothing to tell"), ptr("")}, []*string{ptr("nothing to tell"), ptr("")}},
	} {
		r := &Relabel{s: s, p: &Plan{nameRows: true, viewDB: c.viewDB}}
		got, err := wire.ParseTextRow(r.Row(wire.AppendTextRow(nil, c.in)), len(c.want))
		if err != nil {
			t.Fatal(err)
		}
		for i := range c.want {
			if (got[i] == nil) != (c.want[i] == nil) || got[i] != nil && *got[i] != *c.want[i] {
				t.Errorf("view db %q: value %d = %v, want %q", c.viewDB, i, deref(got[i]), deref(c.want[i]))
			}
		}
	}
}

func ptr(s string) *string { return &s }

func deref(s *string) string {
	if s == nil {
		return "NULL"
	}
	return *s
}

// TestNearClient: a syntax error quoting the rewritten text quotes the
// client's, cut as the server cuts it (80 bytes, else 77 and "..."), on
// the client's line.
func TestNearClient(t *testing.T) {
	const phys = "`_sqlfork_0123abcd_app`.`users`"
	long := strings.Repeat("a", 90)
	const head = "You have an error in your SQL syntax; check the manual that corresponds to your MariaDB server version for the right syntax to use near '"
	for _, c := range []struct {
		client, near string
		line         int
		want         string
		wantLine     int
	}{
		{"TABLE users", "TABLE " + phys, 1, "TABLE users", 1},
		{"SELECT 1 FROM users WHERE\nWHERE", "WHERE", 2, "WHERE", 2},
		{"SELECT * FROM users JOIN users x WHERE WHERE '" + long + "'",
			("JOIN " + phys + " x WHERE WHERE '" + long)[:77] + "...", 1, ("JOIN users x WHERE WHERE '" + long)[:77] + "...", 1},
		{"SELECT * FROM users WHERE", "", 1, "", 1},
	} {
		splices, sent := spliceUsers(c.client, phys)
		p := &Plan{SQL: sent, text: c.client, rewritten: sent, splices: splices}
		msg := head + c.near + "' at line " + strconv.Itoa(c.line)
		got, ok := p.nearClient(msg)
		if want := head + c.want + "' at line " + strconv.Itoa(c.wantLine); !ok || got != want {
			t.Errorf("%q:\n got %q, %v\nwant %q", c.client, got, ok, want)
		}
	}
	if _, ok := (&Plan{SQL: "x", text: "x", rewritten: "x"}).nearClient(head + "nowhere' at line 1"); ok {
		t.Error("a quote not in the text sent was mapped")
	}
}

// spliceUsers replaces every word "users" of text by phys, as a rewrite
// would, and returns the splices and the text sent.
func spliceUsers(text, phys string) ([]rewrite.Splice, string) {
	var splices []rewrite.Splice
	var b strings.Builder
	last := 0
	for i := strings.Index(text, "users"); i >= 0; {
		b.WriteString(text[last:i])
		at := b.Len()
		b.WriteString(phys)
		splices = append(splices, rewrite.Splice{Start: i, End: i + 5, SentStart: at, SentEnd: b.Len()})
		last = i + 5
		j := strings.Index(text[last:], "users")
		if j < 0 {
			break
		}
		i = last + j
	}
	b.WriteString(text[last:])
	return splices, b.String()
}

// TestLabelOfExpr: an expression's label is the client's text, also when
// the server cut the text sent (at 255 bytes) in the middle of a physical
// name.
func TestLabelOfExpr(t *testing.T) {
	e := rewrite.NewEngine(0)
	long := strings.Repeat("x", 240)
	client := "SELECT EXISTS(SELECT 1 FROM users WHERE name <> '" + long + "'), (SELECT 1 FROM users LIMIT 1)"
	r := mapOne{rewrite.Table{DB: "app", Name: "users"}: rewrite.Table{DB: "_sqlfork_0123abcd_app", Name: "users"}}
	res, err := e.Rewrite(client, rewrite.Options{DB: "app"}, r)
	if err != nil {
		t.Fatal(err)
	}
	p := &Plan{text: client, analysis: res.Analysis, rewritten: res.SQL, splices: res.Splices, renames: res.Renames}
	exists := client[len("SELECT ") : strings.Index(client, "), (")+1]
	sentExists := res.SQL[len("SELECT ") : strings.Index(res.SQL, "), (")+1]
	for _, c := range []struct{ server, want string }{
		{sentExists[:255], exists[:255]},
		{"(SELECT 1 FROM `_sqlfork_0123abcd_app`.`users` LIMIT 1)", "(SELECT 1 FROM users LIMIT 1)"},
		{"`_sqlfork_0123abcd_app`.`users`", "users"},
	} {
		if got, ok := p.label(c.server); !ok || got != c.want {
			t.Errorf("label(%q) = %q, %v; want %q", c.server, got, ok, c.want)
		}
	}
}

// TestLabelInLiteral: the columns of the statement an EXECUTE IMMEDIATE
// literal holds are labelled with its text as sent, told back in the
// client's names (main.statement-expr).
func TestLabelInLiteral(t *testing.T) {
	e := rewrite.NewEngine(0)
	client := "EXECUTE IMMEDIATE 'SELECT ROW(1, 7) IN (SELECT id, id1 FROM t1 WHERE id1= 8)'"
	r := mapOne{rewrite.Table{DB: "test", Name: "t1"}: rewrite.Table{DB: "_sqlfork_0123abcd_test", Name: "t1"}}
	res, err := e.Rewrite(client, rewrite.Options{DB: "test"}, r)
	if err != nil {
		t.Fatal(err)
	}
	p := &Plan{text: client, analysis: res.Analysis, rewritten: res.SQL, splices: res.Splices, renames: res.Renames}
	server := "ROW(1, 7) IN (SELECT id, id1 FROM `_sqlfork_0123abcd_test`.`t1` WHERE id1= 8)"
	if got, ok := p.label(server); !ok || got != "ROW(1, 7) IN (SELECT id, id1 FROM t1 WHERE id1= 8)" {
		t.Errorf("label(%q) = %q, %v", server, got, ok)
	}
}

// mapOne is a resolver of a fixed map.
type mapOne map[rewrite.Table]rewrite.Table

func (m mapOne) Resolve(t rewrite.Table, _ bool) (rewrite.Table, bool, error) {
	p, ok := m[t]
	if !ok {
		return t, false, nil
	}
	return p, true, nil
}

// TestJoinJSONArrays: an array of strings the server broke across lines
// for the sandbox's longer names is put back on one line when the logical
// names fit the server's line width (its indentation, the member's name
// and one character, and each value with four more, at most 80), as the
// server writes it.
func TestJoinJSONArrays(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"fits", "{\n  \"t\": {\n          \"ref\": [\n            \"test.t1.a\",\n            \"test.t1.b\",\n            \"test.t1.c\"\n          ],\n  \"rows\": 1\n}",
			"{\n  \"t\": {\n          \"ref\": [\"test.t1.a\", \"test.t1.b\", \"test.t1.c\"],\n  \"rows\": 1\n}"},
		{"last member", "{\n  \"ref\": [\n    \"a.b.c\"\n  ]\n}", "{\n  \"ref\": [\"a.b.c\"]\n}"},
		// 10 + 3 + 1 + 4 × (14 + 4) = 86: too wide, as the server left it.
		{"too wide", "          \"ref\": [\n            \"db_long.t1.aaa\",\n            \"db_long.t1.bbb\",\n            \"db_long.t1.ccc\",\n            \"db_long.t1.ddd\"\n          ],",
			"          \"ref\": [\n            \"db_long.t1.aaa\",\n            \"db_long.t1.bbb\",\n            \"db_long.t1.ccc\",\n            \"db_long.t1.ddd\"\n          ],"},
		// 10 + 3 + 1 + 3 × (18 + 4) = 80: fits exactly.
		{"exactly 80", "          \"ref\": [\n            \"db_longer.t1.aaaaa\",\n            \"db_longer.t1.bbbbb\",\n            \"db_longer.t1.ccccc\"\n          ]",
			"          \"ref\": [\"db_longer.t1.aaaaa\", \"db_longer.t1.bbbbb\", \"db_longer.t1.ccccc\"]"},
		{"objects stay", "  \"nested_loop\": [\n    {\n      \"table\": 1\n    }\n  ]", "  \"nested_loop\": [\n    {\n      \"table\": 1\n    }\n  ]"},
		{"numbers stay", "  \"r\": [\n    1,\n    2\n  ]", "  \"r\": [\n    1,\n    2\n  ]"},
		{"not JSON", "a\nb", "a\nb"},
	} {
		if got := joinJSONArrays(c.in); got != c.want {
			t.Errorf("%s: got\n%s\nwant\n%s", c.name, got, c.want)
		}
	}
}

// TestRelabelPlanJSON: the JSON plan of an EXPLAIN or ANALYZE names the
// current database's columns without the database, "ref" lists with the
// logical one, and a "ref" list the physical names broke across lines is
// on one line again.
func TestRelabelPlanJSON(t *testing.T) {
	s := &Session{m: &Manager{cfg: Config{Prefix: "_sqlfork"}}, sb: registry.ForTest("0123abcd", map[string]*sandbox.Entry{
		"test.t1": {Logical: rewrite.Table{DB: "test", Name: "t1"}, Phys: rewrite.Table{DB: "_sqlfork_0123abcd_test", Name: "t1"}},
	})}
	in := "{\n  \"query_block\": {\n    \"table\": {\n          \"ref\": [\n            \"_sqlfork_0123abcd_test.t1.a\",\n" +
		"            \"_sqlfork_0123abcd_test.t1.b\",\n            \"_sqlfork_0123abcd_test.t1.c\"\n          ],\n" +
		"      \"attached_condition\": \"_sqlfork_0123abcd_test.t1.a in (2,3,4)\"\n    }\n  }\n}"
	want := "{\n  \"query_block\": {\n    \"table\": {\n          \"ref\": [\"test.t1.a\", \"test.t1.b\", \"test.t1.c\"],\n" +
		"      \"attached_condition\": \"t1.a in (2,3,4)\"\n    }\n  }\n}"
	r := &Relabel{s: s, p: &Plan{nameRows: true, planJSON: true, explainDB: "test"}}
	got, err := wire.ParseTextRow(r.Row(wire.AppendTextRow(nil, []*string{ptr("1"), &in})), 2)
	if err != nil {
		t.Fatal(err)
	}
	if *got[1] != want {
		t.Errorf("got\n%s\nwant\n%s", *got[1], want)
	}
}

// TestAnswersPlan: EXPLAIN, ANALYZE of a statement and reads of the
// optimizer trace answer plans whose names are told back; ANALYZE TABLE
// and plain statements do not.
func TestAnswersPlan(t *testing.T) {
	e := rewrite.NewEngine(0)
	checkSQL(t, "answersPlan", func(sql string) bool {
		return answersPlan(e.Analyze(sql, rewrite.Options{DB: "test"}))
	}, []sqlCase{
		{"EXPLAIN FORMAT=JSON SELECT * FROM t1", true},
		{"ANALYZE FORMAT=JSON SELECT * FROM t1 WHERE a IN (2, 3)", true},
		{"analyze select * from t1", true},
		{"ANALYZE UPDATE t1 SET a = 1", true},
		{"SELECT JSON_DETAILED(JSON_EXTRACT(trace, '$**.x')) FROM INFORMATION_SCHEMA.OPTIMIZER_TRACE", true},
		{"SELECT * FROM t1", false},
		{"ANALYZE TABLE t1", false},
		{"SELECT 1; EXPLAIN SELECT * FROM t1", false},
	})
}

// TestMaintains: table maintenance of tables a sandbox can hold runs in
// it; of the server's own schemas, and other statements, it does not.
func TestMaintains(t *testing.T) {
	e := rewrite.NewEngine(0)
	checkSQL(t, "maintains", func(sql string) bool {
		return maintains(e.Analyze(sql, rewrite.Options{DB: "test"}), 0)
	}, []sqlCase{
		{"CHECK TABLE t1", true},
		{"ANALYZE TABLE t1, app.t2", true},
		{"OPTIMIZE TABLE t1", true},
		{"REPAIR TABLE t1 QUICK", true},
		{"CHECKSUM TABLE t1", true},
		{"CHECK TABLE mysql.user", false},
		{"ANALYZE TABLE t1, mysql.db", false},
		{"CHECK TABLE information_schema.tables", false},
		{"ALTER TABLE t1 ANALYZE PARTITION p0", true},
		{"ALTER TABLE mysql.db ANALYZE PARTITION p0", false},
		{"ANALYZE SELECT * FROM t1", false},
		{"FLUSH TABLES", false},
	})
}

// TestCompoundStatement: an anonymous compound statement sent alone is one
// statement for the server; inputs holding others are not.
func TestCompoundStatement(t *testing.T) {
	checkSQL(t, "compoundStatement", func(sql string) bool {
		return compoundStatement(sql, rewrite.Options{})
	}, []sqlCase{
		{"BEGIN NOT ATOMIC\n  IF SCALAR() expected_THEN_here;\nEND", true},
		{"begin not atomic select 1; end;", true},
		{"lbl: BEGIN NOT ATOMIC SELECT 1; END lbl", true},
		{"BEGIN NOT ATOMIC DECLARE cur CURSOR (a INT) FOR SELECT a+1; OPEN cur(1,f(); CLOSE cur; END;\n", true},
		{"SELECT 1; BEGIN NOT ATOMIC SELECT 1; END", false},
		{"BEGIN NOT ATOMIC SELECT 1; END; SELECT 2", false},
		{"BEGIN; SELECT 1; END", false},
		{"BEGIN WORK", false},
		{"BEGIN NOT ATOMIC SET sql_mode=''; END; BEGIN NOT ATOMIC SELECT 1; END", false},
		{"BEGIN NOT ATOMIC BEGIN SELECT 1; END; SELECT CASE WHEN 1 THEN 2 END; CASE WHEN 1 THEN SELECT 1; END CASE; " +
			"IF 1 THEN SELECT 'END; BEGIN'; END IF; l: LOOP LEAVE l; END LOOP; END;", true},
		{"BEGIN NOT ATOMIC SELECT 1; END; BEGIN NOT ATOMIC SELECT 2; END lbl", false},
	})
}

// sqlCase is a statement and whether a predicate holds of it.
type sqlCase struct {
	sql  string
	want bool
}

// checkSQL wants pred of each case's statement to be the case's want;
// name names pred in failures.
func checkSQL(t *testing.T, name string, pred func(sql string) bool, cases []sqlCase) {
	t.Helper()
	for _, c := range cases {
		if got := pred(c.sql); got != c.want {
			t.Errorf("%s(%q) = %v, want %v", name, c.sql, got, c.want)
		}
	}
}
