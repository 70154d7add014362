package main

import (
	"strings"
	"testing"
)

func TestParseMessage(t *testing.T) {
	cases := []struct {
		name         string
		before, msg  []string
		stmt, differ string
	}{
		{"query", nil, []string{"At line 5: query 'flush tables' failed: ER_OPTION_PREVENTS_STATEMENT (1290): sqlfork-proxy: no"},
			"flush tables", "1290: sqlfork-proxy: no"},
		{"included", nil, []string{`In included file "./a.inc": `, "included from ./b.inc at line 39:",
			"included from /x/main/c.test at line 26:", "At line 5: query 'FLUSH PRIVILEGES' failed: E (1290): m"},
			"FLUSH PRIVILEGES", "1290: m"},
		{"multi-line query", nil, []string{"At line 9: query 'select 'a'", "from t1' failed: E (1105): x"},
			"select 'a' from t1", "1105: x"},
		{"wrong errno", nil, []string{"At line 3: query 'set global x=1' failed with wrong errno E (1290): 'm', instead of F (1)..."},
			"set global x=1", "failed with wrong errno E (1290): 'm', instead of F (1)..."},
		{"exec", []string{`mariadb-dump: Couldn't find table: "t1"`},
			[]string{"At line 22: exec of '/u/bin/mariadb-dump -X test t1' failed, error: 1536"},
			"mariadb-dump -X test t1", `mariadb-dump: Couldn't find table: "t1" | exec of '/u/bin/mariadb-dump -X test t1' failed, error: 1536`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := parseMessage(c.before, c.msg)
			if f.statement != c.stmt || f.difference != c.differ {
				t.Errorf("got %q / %q, want %q / %q", f.statement, f.difference, c.stmt, c.differ)
			}
		})
	}
}

func TestStatementBefore(t *testing.T) {
	lines := []string{
		"select 1;", "1", "1",
		"EXPLAIN FORMAT=JSON SELECT * FROM t1", "WHERE a IN (", "SELECT b FROM t2);", "EXPLAIN", "{", "}",
	}
	if got, want := statementBefore(lines, 7), "EXPLAIN FORMAT=JSON SELECT * FROM t1 WHERE a IN ( SELECT b FROM t2);"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := statementBefore(lines, 0); got != "" {
		t.Errorf("before the first line: got %q", got)
	}
}

func TestMatch(t *testing.T) {
	cases := []struct {
		test string
		f    failure
		cat  string
	}{
		{"a", failure{"SET GLOBAL x=1", "1290: SET GLOBAL x: the variable has no session scope, so it acts on the whole server (production and every sandbox); set it on production directly"}, byDesign},
		{"a", failure{"create user foo", "1290: this statement (administrative or privilege statement) changes"}, byDesign},
		{"a", failure{"check table t1", "1290: this statement (administrative or privilege statement) changes"}, notYet},
		{"a", failure{"call mtr.add_suppression(\"x\")", "1290: this statement (administrative"}, byDesign},
		{"a", failure{"CREATE FUNCTION f() RETURNS INT RETURN 1", "1290: a stored-routine statement changes"}, notYet},
		{"commit", failure{"INSERT INTO t1 VALUES (1)", "1146: Table 'test.t1' doesn't exist"}, byDesign},
		{"a", failure{"select 1", "something new"}, "unclassified"},
	}
	for _, c := range cases {
		if cat, _ := match(c.test, c.f); cat != c.cat {
			t.Errorf("%q: got %s, want %s", c.f.statement, cat, c.cat)
		}
	}
}

func TestShorten(t *testing.T) {
	if got, want := shorten("a\tb  sqlfork-proxy: x _sqlfork_0a1b_test.t1 /tmp/w/var/log", 100), "a b x _sqlfork_X_test.t1 $WORK/var/log"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := shorten("\xd4\xc1", 10); got != `\xd4\xc1` {
		t.Errorf("invalid UTF-8: got %q", got)
	}
	if got := []rune(shorten("0123456789012345678901234567890123456789", 20)); len(got) != 20 {
		t.Errorf("long: got %q (%d runes)", string(got), len(got))
	}
}

func TestCompare(t *testing.T) {
	list := "test\tcategory\ts\td\treason\na\tby-design\tflush tables\t1290: x\tFLUSH: y\nb\tnot-yet\tselect 1\t-row 1 +row 2\tanswer: z\n"
	if d := compare(list, strings.Replace(list, "-row 1 +row 2", "-row 3 +row 1", 1)); len(d) != 0 {
		t.Errorf("another difference of the same failure: %q", d)
	}
	if d := compare(list, strings.Replace(list, "\tanswer: z", "\tanswer: w", 1)); len(d) != 1 {
		t.Errorf("another reason: %q", d)
	}
	if d := compare(list, "test\tcategory\ts\td\treason\na\tby-design\tflush tables\t1290: x\tFLUSH: y\n"); len(d) != 1 || !strings.Contains(d[0], "no longer lost: b") {
		t.Errorf("a test no longer lost: %q", d)
	}
	if d := compare("test\tcategory\ts\td\treason\n", list); len(d) != 2 {
		t.Errorf("newly lost: %q", d)
	}
}
