package rewrite

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"github.com/sqlfork/sqlfork-proxy/rewrite/corpus"
)

// boundsString renders b for comparison: "nil", or the table then, each
// when present, "eq:col=lit|lit,…" (columns sorted), "set:col,…",
// "rows:{col=lit,…};{…}" (columns sorted; an empty text shows as col=),
// and the flags positional, upsert, replace, ignore.
func boundsString(b *Bounds) string {
	if b == nil {
		return "nil"
	}
	out := []string{b.Table.String()}
	if len(b.Equal) > 0 {
		var eq []string
		for col, lits := range b.Equal {
			eq = append(eq, col+"="+strings.Join(lits, "|"))
		}
		slices.Sort(eq)
		out = append(out, "eq:"+strings.Join(eq, ","))
	}
	if len(b.Assigned) > 0 {
		out = append(out, "set:"+strings.Join(b.Assigned, ","))
	}
	if len(b.Rows) > 0 {
		var rows []string
		for _, r := range b.Rows {
			var cols []string
			for col, lit := range r {
				cols = append(cols, col+"="+lit)
			}
			slices.Sort(cols)
			rows = append(rows, "{"+strings.Join(cols, ",")+"}")
		}
		out = append(out, "rows:"+strings.Join(rows, ";"))
	}
	if b.Params > 0 {
		out = append(out, fmt.Sprintf("params:%d", b.Params))
	}
	for _, f := range []struct {
		on   bool
		name string
	}{{b.Positional, "positional"}, {b.Upsert, "upsert"}, {b.Replace, "replace"}, {b.Ignore, "ignore"}} {
		if f.on {
			out = append(out, f.name)
		}
	}
	return strings.Join(out, " ")
}

// statementsBounds renders the Bounds of each statement of sql, joined
// with " ; ".
func statementsBounds(e *Engine, sql string, opts Options) string {
	var out []string
	for _, st := range e.Analyze(sql, opts).Statements {
		out = append(out, boundsString(st.Bounds))
	}
	return strings.Join(out, " ; ")
}

// TestBoundsForms checks which statements get Bounds and what their WHERE,
// SET and rows pin.
func TestBoundsForms(t *testing.T) {
	e := NewEngine(0)
	cases := []struct{ sql, want string }{
		// SELECT: WHERE's top-level conjuncts.
		{"SELECT * FROM t WHERE id = 5", "app.t eq:id=5"},
		{"SELECT * FROM t", "app.t"},
		{"SELECT * FROM t WHERE ID = 5", "app.t eq:id=5"},
		{"SELECT * FROM t WHERE 5 = id", "app.t eq:id=5"},
		{"SELECT * FROM t WHERE id = -12", "app.t eq:id=-12"},
		{"SELECT * FROM t WHERE id = - 12 AND a = -0", "app.t eq:a=0,id=-12"},
		{"SELECT * FROM t WHERE id IN (1, 2, -3)", "app.t eq:id=1|2|-3"},
		{"SELECT * FROM t WHERE id IN ('a', 2)", "app.t eq:id='a'|2"},
		{"SELECT * FROM t WHERE id IN (1, a)", "app.t"},
		{"SELECT * FROM t WHERE id IN (1, NULL)", "app.t"},
		{"SELECT * FROM t WHERE id NOT IN (1, 2)", "app.t"},
		{"SELECT * FROM t WHERE id IN (SELECT id FROM u)", "app.t"},
		{"SELECT * FROM t WHERE id = 1 OR id = 2", "app.t"},
		{"SELECT * FROM t WHERE id = 1 AND (a = 2 OR b = 3)", "app.t eq:id=1"},
		{"SELECT * FROM t WHERE (id = 1 AND a = 2)", "app.t eq:a=2,id=1"},
		{"SELECT * FROM t WHERE ((id = 1) AND (a = 'x' AND (b = 3))) AND c IN (4)", "app.t eq:a='x',b=3,c=4,id=1"},
		{"SELECT * FROM t WHERE id = 1 && a = 2", "app.t eq:a=2,id=1"},
		{"SELECT * FROM t WHERE NOT (id = 1 AND a = 2)", "app.t"},
		{"SELECT * FROM t WHERE id = 1 XOR a = 2", "app.t"},
		{"SELECT * FROM t WHERE id = 1 AND id = 2", "app.t eq:id=1"},
		{"SELECT * FROM t WHERE id = 5.0 AND id = 6", "app.t eq:id=6"},
		{"SELECT * FROM t WHERE id = NULL AND a = 1", "app.t eq:a=1"},
		{"SELECT * FROM t WHERE id <=> 1 AND a > 1 AND b = a AND c = 1 + 1 AND (d) = 1", "app.t"},
		{"SELECT * FROM t WHERE id = 1 AND a IN (SELECT a FROM u WHERE x = 2)", "app.t eq:id=1"},
		{"SELECT a, COUNT(*) FROM t WHERE id = 1 GROUP BY a HAVING COUNT(*) > 1 ORDER BY a LIMIT 5 FOR UPDATE", "app.t eq:id=1"},
		{"SELECT * FROM t WHERE id = 1 LOCK IN SHARE MODE", "app.t eq:id=1"},
		{"(SELECT * FROM t WHERE id = 1)", "app.t eq:id=1"},
		// Qualifiers: the table's name, its alias, db.table; any other
		// qualifier leaves its conjunct out.
		{"SELECT * FROM t WHERE t.id = 5", "app.t eq:id=5"},
		{"SELECT a.x FROM t AS a WHERE a.id = 5", "app.t eq:id=5"},
		{"SELECT * FROM t a WHERE a.id = 5 AND A.b = 6", "app.t eq:b=6,id=5"},
		{"SELECT * FROM app.t WHERE app.t.id = 5", "app.t eq:id=5"},
		{"SELECT * FROM other.T WHERE other.t.id = 5", "other.T eq:id=5"},
		{"SELECT * FROM t WHERE u.id = 5 AND id = 6", "app.t eq:id=6"},
		{"SELECT * FROM t AS a WHERE b.id = 5", "app.t"},
		{"SELECT * FROM t WHERE other.t.id = 5 AND app.u.a = 1", "app.t"},
		// Not one table, or the table named again: nil.
		{"SELECT * FROM t JOIN u ON t.id = u.id WHERE t.id = 1", "nil"},
		{"SELECT * FROM t, u WHERE t.id = 1", "nil"},
		{"SELECT * FROM (SELECT * FROM t) d WHERE id = 1", "nil"},
		{"SELECT * FROM t WHERE id = 1 UNION SELECT * FROM t WHERE id = 2", "nil"},
		{"SELECT * FROM t WHERE id = 1 UNION ALL SELECT * FROM u", "nil"},
		{"WITH c AS (SELECT 1) SELECT * FROM t WHERE id = 1", "nil"},
		{"SELECT * FROM t WHERE id IN (SELECT id FROM t WHERE a = 1)", "nil"},
		{"SELECT (SELECT MAX(id) FROM t), a FROM t WHERE id = 1", "nil"},
		{"SELECT * FROM t WHERE EXISTS (SELECT 1 FROM app.T)", "nil"},
		{"SELECT * FROM t WHERE id = 1 AND EXISTS (SELECT 1 FROM other.t)", "app.t eq:id=1"},
		{"SELECT 1", "nil"},
		{"SELECT NOW() FROM DUAL", "nil"},
		{"TABLE t", "nil"},
		// UPDATE.
		{"UPDATE t SET a = 1, b = b + 1, A = 2 WHERE id = 5", "app.t eq:id=5 set:a,b"},
		{"UPDATE IGNORE t AS x SET x.a = 1 WHERE x.id IN (5, 6) ORDER BY id LIMIT 1", "app.t eq:id=5|6 set:a ignore"},
		{"UPDATE t SET a = 1", "app.t set:a"},
		{"UPDATE app.t SET a = (SELECT MAX(a) FROM u) WHERE app.t.id = 2", "app.t eq:id=2 set:a"},
		{"UPDATE t SET a = (SELECT MAX(a) FROM t)", "nil"},
		{"UPDATE t SET a = 1 WHERE id IN (SELECT id FROM t)", "nil"},
		{"UPDATE t, u SET t.a = 1 WHERE t.id = u.id", "nil"},
		{"UPDATE t JOIN u ON t.id = u.id SET t.a = 1 WHERE t.id = 1", "nil"},
		// DELETE.
		{"DELETE FROM t WHERE id = 5", "app.t eq:id=5"},
		{"DELETE IGNORE FROM app.t WHERE app.t.id IN (1, 2) ORDER BY id LIMIT 2", "app.t eq:id=1|2 ignore"},
		{"DELETE FROM t WHERE id = 1 RETURNING id", "app.t eq:id=1"},
		{"DELETE FROM t", "app.t"},
		{"DELETE t FROM t JOIN u ON t.id = u.id WHERE t.id = 1", "nil"},
		{"DELETE FROM t USING t JOIN u WHERE t.id = 1", "nil"},
		{"DELETE FROM t WHERE id IN (SELECT id FROM t)", "nil"},
		{"DELETE FROM t WHERE id IN (SELECT id FROM u)", "app.t"},
		// INSERT and REPLACE.
		{"INSERT INTO t (id, Name) VALUES (1, 'a'), (2, 'b')", "app.t rows:{id=1,name='a'};{id=2,name='b'}"},
		{"INSERT t VALUES (1, 'a')", "app.t rows:{#0=1,#1='a'} positional"},
		{"INSERT INTO t () VALUES ()", "app.t rows:{} positional"},
		{"INSERT INTO t (id, a, b, c, d, e, f) VALUES (1, DEFAULT, 1+2, NULL, ?, @v, -7)", "app.t rows:{a=,b=,c=NULL,d=?0,e=,f=-7,id=1} params:1"},
		{"INSERT INTO t (id, n) VALUES (1, 1) ON DUPLICATE KEY UPDATE n = n + 1, m = VALUES(n)", "app.t set:n,m rows:{id=1,n=1} upsert"},
		{"INSERT IGNORE INTO other.t SET id = 1, name = 'x'", "other.t rows:{id=1,name='x'} ignore"},
		{"REPLACE INTO t (id) VALUES (1)", "app.t rows:{id=1} replace"},
		{"REPLACE t SET id = 2", "app.t rows:{id=2} replace"},
		{"INSERT INTO t (id) VALUES ((SELECT MAX(id) FROM u))", "app.t rows:{id=}"},
		{"INSERT INTO t (id) VALUES ((SELECT MAX(id) FROM t))", "nil"},
		{"INSERT INTO t (id) VALUES (1) ON DUPLICATE KEY UPDATE id = (SELECT MAX(id) FROM t)", "nil"},
		{"INSERT INTO t (id) SELECT id FROM u", "nil"},
		{"INSERT INTO t SELECT * FROM t", "nil"},
		{"INSERT INTO t TABLE u", "nil"},
		{"INSERT INTO t (a, b) VALUES (1)", "nil"},
		// Each statement of an input has its own.
		{"SELECT * FROM t WHERE id = 1; UPDATE u SET a = 2 WHERE id = 3; SELECT 1", "app.t eq:id=1 ; app.u eq:id=3 set:a ; nil"},
		{"USE other; DELETE FROM t WHERE id = 4", "nil ; other.t eq:id=4"},
		{"SELECT * FROM t WHERE a = 'x'; SELECT \"x\", 007", "app.t eq:a='x' ; nil"},
		// Other statements: nil.
		{"EXPLAIN SELECT * FROM t WHERE id = 1", "nil"},
		{"CREATE TABLE c AS SELECT * FROM t WHERE id = 1", "nil"},
		{"SET @a = (SELECT a FROM t WHERE id = 1)", "nil"},
	}
	for _, c := range cases {
		if got := statementsBounds(e, c.sql, Options{DB: "app"}); got != c.want {
			t.Errorf("%s:\n got  %s\n want %s", c.sql, got, c.want)
		}
	}
}

// TestBoundsLiterals checks which literals Bounds gives, in WHERE and in
// VALUES: only the ones every sql_mode and character set reads alike.
func TestBoundsLiterals(t *testing.T) {
	e := NewEngine(0)
	ansi := Options{DB: "app", ANSIQuotes: true}
	noBackslash := Options{DB: "app", NoBackslashEscapes: true}
	cases := []struct {
		lit  string
		want string // "" when not allowed
		opts *Options
	}{
		{lit: "5", want: "5"},
		{lit: "0", want: "0"},
		{lit: "-12", want: "-12"},
		{lit: "18446744073709551615", want: "18446744073709551615"},
		{lit: "-9223372036854775808", want: "-9223372036854775808"},
		{lit: "'abc'", want: "'abc'"},
		{lit: "''", want: "''"},
		{lit: "' a~b '", want: "' a~b '"},
		{lit: "'a-b'", want: "'a-b'", opts: &noBackslash},
		{lit: "'x'", want: "'x'", opts: &ansi},
		{lit: "5.0"},
		{lit: "0x10"},
		{lit: "X'10'"},
		{lit: "b'1'"},
		{lit: "0b1"},
		{lit: "1e3"},
		{lit: "+5"},
		{lit: "- -5"},
		{lit: "--5"},
		{lit: "007"},
		{lit: "-007"},
		{lit: "TRUE"},
		{lit: "99999999999999999999"},
		{lit: "-'5'"},
		{lit: "'it''s'"},
		{lit: `'a\'b'`},
		{lit: `'a\nb'`},
		{lit: `'\a'`},
		{lit: `'\a'`, opts: &noBackslash},
		{lit: `'a\b'`, opts: &noBackslash},
		{lit: "'a\tb'"},
		{lit: "'café'"},
		{lit: "'a\"b'"},
		{lit: "_utf8mb4'x'"},
		{lit: "_latin1 'x'"},
		{lit: "N'x'"},
		{lit: "'x' COLLATE utf8mb4_bin"},
		{lit: "'a' 'b'"},
		{lit: "'ab' 'c'"},
		{lit: `"x"`},
		{lit: `"x"`, opts: &ansi}, // a column
		{lit: "-?"},
		{lit: "@v"},
		{lit: "DEFAULT"},
		{lit: "NOW()"},
		{lit: "(5)"},
	}
	for _, c := range cases {
		opts := Options{DB: "app"}
		if c.opts != nil {
			opts = *c.opts
		}
		wantWhere, wantRow := "app.t", "app.t rows:{a=,id=1}"
		if c.want != "" {
			wantWhere, wantRow = "app.t eq:a="+c.want, "app.t rows:{a="+c.want+",id=1}"
		}
		if c.lit == "DEFAULT" {
			wantWhere = "" // WHERE takes no DEFAULT
		}
		if strings.Contains(c.lit, "?") {
			wantWhere, wantRow = wantWhere+" params:1", wantRow+" params:1"
		}
		if got := statementsBounds(e, "SELECT * FROM t WHERE a = "+c.lit, opts); wantWhere != "" && got != wantWhere {
			t.Errorf("WHERE a = %s: got %s, want %s", c.lit, got, wantWhere)
		}
		if got := statementsBounds(e, "INSERT INTO t (id, a) VALUES (1, "+c.lit+")", opts); got != wantRow {
			t.Errorf("VALUES (1, %s): got %s, want %s", c.lit, got, wantRow)
		}
	}
}

// TestBoundsLiteralSources checks that a value is given only when no
// literal of the statement that is not allowed could have been its
// source, and that the statement's own text is what counts.
func TestBoundsLiteralSources(t *testing.T) {
	e := NewEngine(0)
	cases := []struct {
		sql  string
		opts Options
		want string
	}{
		{sql: "SELECT * FROM t WHERE id = 7 AND b = 007", want: "app.t"},
		{sql: "SELECT * FROM t WHERE id = 7 AND b = 8 AND c = 008", want: "app.t eq:id=7"},
		{sql: "SELECT * FROM t WHERE id = 0 AND b = 00", want: "app.t"},
		{sql: "SELECT * FROM t WHERE id = 100 AND b = 0100", want: "app.t"},
		{sql: "SELECT * FROM t WHERE a = 'x' AND b = \"x\"", want: "app.t"},
		{sql: "SELECT * FROM t WHERE a = 'x' AND b = \"x\"", opts: Options{ANSIQuotes: true}, want: "app.t eq:a='x'"},
		{sql: "SELECT * FROM t WHERE a = 'a' AND b = '\\a'", want: "app.t"},
		{sql: "SELECT * FROM t WHERE a = 'a' AND b = '\\a'", opts: Options{NoBackslashEscapes: true}, want: "app.t"},
		{sql: "SELECT * FROM t WHERE a = 'ab' AND b = 'a' 'b'", want: "app.t"},
		{sql: "SELECT * FROM t WHERE a = 'x' AND b = _utf8mb4'x'", want: "app.t"},
		{sql: "SELECT * FROM t WHERE a = 'x' AND b = _latin1 'x'", want: "app.t"},
		{sql: "SELECT * FROM t WHERE a = 'x' AND b = 'x' COLLATE utf8mb4_bin", want: "app.t"},
		{sql: "SELECT * FROM t WHERE a = 'x' AND b = 'y' AND c = 'z\\n'", want: "app.t eq:a='x',b='y'"},
		{sql: "SELECT 'x' 'y' FROM t WHERE a = 'x'", want: "app.t eq:a='x'"},
		{sql: "SELECT 'x' 'y' FROM t WHERE a = 'xy'", want: "app.t"},
		{sql: "SELECT * FROM t WHERE a = 'x'; SELECT * FROM t WHERE b = \"x\"", want: "app.t eq:a='x' ; app.t"},
		{sql: "INSERT INTO t VALUES (1, 'a'), (01, '\\a')", want: "app.t rows:{#0=,#1=};{#0=,#1=} positional"},
		{sql: "SELECT * FROM t WHERE a = 'x'", opts: Options{Charset: "latin1"}, want: "app.t eq:a='x'"},
		{sql: "SELECT * FROM t WHERE a = 'x' AND b = '\xe9'", opts: Options{Charset: "latin1"}, want: "app.t eq:a='x'"},
	}
	for _, c := range cases {
		c.opts.DB = "app"
		if got := statementsBounds(e, c.sql, c.opts); got != c.want {
			t.Errorf("%s (%+v):\n got  %s\n want %s", c.sql, c.opts, got, c.want)
		}
	}
}

// TestBoundsPrepared checks the Bounds of a prepared text: a placeholder
// is written ?N, N its place in the text, and Bind gives it a value.
func TestBoundsPrepared(t *testing.T) {
	e := NewEngine(0)
	a := e.Analyze("PREPARE s FROM 'INSERT INTO t (id, a) VALUES (?, 1)'", Options{DB: "app"})
	if len(a.Statements) != 1 || a.Statements[0].Inner == nil || len(a.Statements[0].Inner.Statements) != 1 {
		t.Fatalf("PREPARE: %+v", a.Statements)
	}
	if a.Statements[0].Bounds != nil {
		t.Errorf("PREPARE itself has Bounds %s", boundsString(a.Statements[0].Bounds))
	}
	if got, want := boundsString(a.Statements[0].Inner.Statements[0].Bounds), "app.t rows:{a=1,id=?0} params:1"; got != want {
		t.Errorf("prepared INSERT: got %s, want %s", got, want)
	}
	for _, tc := range []struct {
		sql, want string
		vals      []string
		bound     string
	}{
		{"SELECT * FROM t WHERE id = ? AND a = 1", "app.t eq:a=1,id=?0 params:1", []string{"7"}, "app.t eq:a=1,id=7"},
		{"SELECT * FROM t WHERE id = ? AND a = 1", "app.t eq:a=1,id=?0 params:1", []string{"NULL"}, "app.t eq:a=1"},
		{"SELECT * FROM t WHERE id = ? AND a = 1", "app.t eq:a=1,id=?0 params:1", []string{""}, "app.t eq:a=1"},
		{"SELECT * FROM t WHERE id = ? AND a = 1", "app.t eq:a=1,id=?0 params:1", nil, "app.t eq:a=1"},
		{"SELECT * FROM t WHERE id = ? AND a = 1", "app.t eq:a=1,id=?0 params:1", []string{"1", "2"}, "app.t eq:a=1"},
		// The places count every placeholder, in the order of the text.
		{"UPDATE t SET b = ? WHERE id IN (?, 3, ?) LIMIT ?", "app.t eq:id=?1|3|?2 set:b params:4",
			[]string{"9", "'x'", "4", "1"}, "app.t eq:id='x'|3|4 set:b"},
		{"UPDATE t SET b = ? WHERE id IN (?, 3, ?) LIMIT ?", "app.t eq:id=?1|3|?2 set:b params:4",
			[]string{"9", "'x'", "", "1"}, "app.t set:b"},
		{"SELECT * FROM t WHERE a = (SELECT ?) AND id = ?", "app.t eq:id=?1 params:2", []string{"5", "6"}, "app.t eq:id=6"},
		{"INSERT INTO t VALUES (?, ?), (?, -?)", "app.t rows:{#0=?0,#1=?1};{#0=?2,#1=} params:4 positional",
			[]string{"1", "NULL", "''", "4"}, "app.t rows:{#0=1,#1=NULL};{#0='',#1=} positional"},
	} {
		a := e.Analyze(tc.sql, Options{DB: "app"})
		b := a.Statements[0].Bounds
		if got := boundsString(b); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.sql, got, tc.want)
		}
		if got := boundsString(b.Bind(tc.vals)); got != tc.bound {
			t.Errorf("%s bound to %q: got %s, want %s", tc.sql, tc.vals, got, tc.bound)
		}
		if got := boundsString(b); got != tc.want {
			t.Errorf("%s: Bind changed it: %s", tc.sql, got)
		}
	}
}

// TestBoundsNames checks how the table and qualifiers compare under
// lower_case_table_names.
func TestBoundsNames(t *testing.T) {
	e := NewEngine(0)
	insensitive := Options{DB: "app"}
	sensitive := Options{DB: "app", CaseSensitiveNames: true}
	cases := []struct {
		sql  string
		opts Options
		want string
	}{
		{sql: "SELECT * FROM t WHERE id IN (SELECT id FROM T)", opts: insensitive, want: "nil"},
		{sql: "SELECT * FROM t WHERE id IN (SELECT id FROM T)", opts: sensitive, want: "app.t"},
		{sql: "SELECT * FROM t WHERE T.id = 1 AND t.a = 2", opts: sensitive, want: "app.t eq:a=2"},
		{sql: "SELECT * FROM t WHERE T.id = 1 AND t.a = 2", opts: insensitive, want: "app.t eq:a=2,id=1"},
		{sql: "SELECT * FROM t WHERE APP.t.id = 1", opts: sensitive, want: "app.t"},
		{sql: "SELECT * FROM t WHERE id IN (SELECT id FROM APP.t)", opts: sensitive, want: "app.t"},
	}
	for _, c := range cases {
		if got := statementsBounds(e, c.sql, c.opts); got != c.want {
			t.Errorf("%s (%+v):\n got  %s\n want %s", c.sql, c.opts, got, c.want)
		}
	}
}

// FuzzBounds runs any input through Analyze under each combination of
// ANSI_QUOTES and NO_BACKSLASH_ESCAPES: it must not panic, and every
// literal text a Bounds gives must be one literal of the allowed forms
// however the server reads it, written so in the input (an integer's
// digits at least).
//
//	go test -run='^$' -fuzz=FuzzBounds -fuzztime=60s ./rewrite/
func FuzzBounds(f *testing.F) {
	for _, c := range corpus.Cases() {
		f.Add(c.SQL, uint8(0))
	}
	for _, sql := range []string{"SELECT * FROM t WHERE id = 5 AND a IN ('x', -2)", "UPDATE t SET a = 1 WHERE b = 'y' AND c = \"y\"",
		"INSERT INTO t VALUES (1, 'a', NULL, ?, DEFAULT), (007, 'a' 'b', _utf8mb4'c', N'd', 'e' COLLATE utf8mb4_bin)",
		"DELETE FROM t WHERE a = '\\a' AND b = 'a'", "REPLACE t SET id = -0, b = '\\'' ON DUPLICATE KEY UPDATE c = 1"} {
		for mode := range uint8(4) {
			f.Add(sql, mode)
		}
	}
	e := NewEngine(0)
	f.Fuzz(func(t *testing.T, sql string, mode uint8) {
		defer watchdog(sql)()
		opts := Options{DB: "app", ANSIQuotes: mode&1 != 0, NoBackslashEscapes: mode&2 != 0}
		checkBoundsLiterals(t, sql, e.Analyze(sql, opts).Statements)
	})
}

// checkBoundsLiterals fails t when a literal text of the statements'
// Bounds (or of the statements a PREPARE holds) is not an allowed literal
// written in sql.
func checkBoundsLiterals(t *testing.T, sql string, sts []Statement) {
	for _, st := range sts {
		if st.Inner != nil {
			checkBoundsLiterals(t, st.Inner.src, st.Inner.Statements)
		}
		b := st.Bounds
		if b == nil {
			continue
		}
		for col, lits := range b.Equal {
			if len(lits) == 0 {
				t.Fatalf("%q: Equal[%s] is empty", sql, col)
			}
			for _, lit := range lits {
				if !placeholderText(t, sql, lit, b.Params) {
					checkAllowedLiteral(t, sql, lit, false)
				}
			}
		}
		for _, row := range b.Rows {
			for _, lit := range row {
				if lit != "" && !placeholderText(t, sql, lit, b.Params) {
					checkAllowedLiteral(t, sql, lit, true)
				}
			}
		}
		if b.Params > 0 {
			checkBoundsLiterals(t, sql, []Statement{{Bounds: b.Bind(nil)}})
		}
	}
}

// placeholderText says whether lit is a placeholder's text, and fails t
// when it names none of the statement's params placeholders.
func placeholderText(t *testing.T, sql, lit string, params int) bool {
	i, ok := paramOf(lit)
	if ok && (i < 0 || i >= params || !strings.Contains(sql, "?")) {
		t.Fatalf("%q: the placeholder %q is not one of its %d", sql, lit, params)
	}
	return ok
}

// checkAllowedLiteral fails t unless lit is NULL (only where null is
// true), an integer without leading zeros after at most one minus, or a
// single-quoted string of printable ASCII without ', " or \ — as text,
// and as the parser reads SELECT lit under every sql_mode that changes
// how literals are read — written so in sql.
func checkAllowedLiteral(t *testing.T, sql, lit string, null bool) {
	if lit == "NULL" {
		if !null {
			t.Fatalf("%q: NULL bounds a WHERE", sql)
		}
		return
	}
	digits, neg := strings.CutPrefix(lit, "-")
	isInt := digits != "" && strings.Trim(digits, "0123456789") == "" && (digits[0] != '0' || digits == "0" && !neg)
	isString := len(lit) >= 2 && lit[0] == '\'' && lit[len(lit)-1] == '\'' && plainString(lit[1:len(lit)-1])
	if !isInt && !isString {
		t.Fatalf("%q: the literal %q is of no allowed form", sql, lit)
	}
	if !strings.Contains(sql, digits) {
		t.Fatalf("%q: the literal %q is not written in the input", sql, lit)
	}
	for _, mode := range []mysql.SQLMode{0, mysql.ModeANSIQuotes, mysql.ModeNoBackslashEscapes, mysql.ModeANSIQuotes | mysql.ModeNoBackslashEscapes} {
		p := parser.New()
		p.SetSQLMode(mode)
		stmts, _, err := p.ParseSQL("SELECT " + lit)
		if err != nil || len(stmts) != 1 {
			t.Fatalf("%q: SELECT %s does not parse (mode %v): %v", sql, lit, mode, err)
		}
		fields := stmts[0].(*ast.SelectStmt).Fields.Fields
		if len(fields) != 1 || !readsAs(fields[0].Expr, digits, neg, isInt) {
			t.Fatalf("%q: SELECT %s is not read as the one literal (mode %v)", sql, lit, mode)
		}
	}
}

// readsAs reports whether e is the integer -text (neg) or text (isInt), or
// the string literal text, with no introducer.
func readsAs(e ast.ExprNode, text string, neg, isInt bool) bool {
	if u, ok := e.(*ast.UnaryOperationExpr); ok && u.Op == opcode.Minus {
		e, neg = u.V, !neg
	}
	v, ok := e.(ast.ValueExpr)
	if !ok || neg || v.GetType().GetFlag()&(mysql.IsBooleanFlag|mysql.UnderScoreCharsetFlag) != 0 {
		return false
	}
	switch x := v.GetValue().(type) {
	case int64, uint64:
		return isInt && fmt.Sprint(x) == text
	case string:
		return !isInt && "'"+x+"'" == text
	}
	return false
}
