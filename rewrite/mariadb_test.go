package rewrite

import (
	"errors"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/wire"
)

// TestRecognized: MariaDB statements the parser does not read that the
// engine reads from their words (mariadb.go): rewritten, or refused with
// the real reason; look-alikes stay unparseable.
func TestRecognized(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	r := mapResolver{{DB: "app", Name: "t"}: {DB: "sb_app", Name: "t"}, {DB: "db", Name: "u"}: {DB: "sb_db", Name: "u"},
		{DB: "app", Name: "option"}: {DB: "sb_app", Name: "option"}}
	for _, c := range []struct {
		sql, want, refuse string
		class             Class
		kind              string
	}{
		{sql: "CHECK TABLE t, db.u FOR UPGRADE QUICK", want: "CHECK TABLE `sb_app`.`t`, `sb_db`.`u` FOR UPGRADE QUICK", class: ClassOther, kind: "CHECK TABLE"},
		{sql: "OPTIMIZE LOCAL TABLE x, t", want: "OPTIMIZE LOCAL TABLE x, `sb_app`.`t`", class: ClassOther, kind: "OPTIMIZE TABLE"},
		{sql: "checksum tables `t` extended", want: "checksum tables `sb_app`.`t` extended", class: ClassOther, kind: "CHECKSUM TABLE"},
		{sql: "REPAIR NO_WRITE_TO_BINLOG TABLE db . u USE_FRM", want: "REPAIR NO_WRITE_TO_BINLOG TABLE `sb_db`.`u` USE_FRM", class: ClassOther, kind: "REPAIR TABLE"},
		{sql: "ANALYZE TABLE t, db.u PERSISTENT FOR COLUMNS (a, `b`) INDEXES ()", want: "ANALYZE TABLE `sb_app`.`t`, `sb_db`.`u` PERSISTENT FOR COLUMNS (a, `b`) INDEXES ()",
			class: ClassOther, kind: "ANALYZE TABLE"},
		{sql: "CACHE INDEX t PARTITION (ALL) KEY (`PRIMARY`, i), db.u IN hot_cache", want: "CACHE INDEX `sb_app`.`t` PARTITION (ALL) KEY (`PRIMARY`, i), `sb_db`.`u` IN hot_cache",
			class: ClassOther, kind: "CACHE INDEX"},
		{sql: "LOAD INDEX INTO CACHE t INDEX (i) IGNORE LEAVES, db.u", want: "LOAD INDEX INTO CACHE `sb_app`.`t` INDEX (i) IGNORE LEAVES, `sb_db`.`u`",
			class: ClassOther, kind: "LOAD INDEX"},
		// CREATE / ALTER TABLE in forms the parser does not read (YEAR(2)).
		{sql: "CREATE OR REPLACE TEMPORARY TABLE IF NOT EXISTS t (a YEAR(2) DEFAULT 1, KEY (a)) ENGINE=Aria PARTITION BY RANGE (a) (PARTITION p VALUES LESS THAN (5))",
			want:  "CREATE OR REPLACE TEMPORARY TABLE IF NOT EXISTS `sb_app`.`t` (a YEAR(2) DEFAULT 1, KEY (a)) ENGINE=Aria PARTITION BY RANGE (a) (PARTITION p VALUES LESS THAN (5))",
			class: ClassDDL, kind: "CREATE TABLE"},
		{sql: "ALTER ONLINE IGNORE TABLE db.u ADD COLUMN y YEAR(2) WITH SYSTEM VERSIONING", want: "ALTER ONLINE IGNORE TABLE `sb_db`.`u` ADD COLUMN y YEAR(2) WITH SYSTEM VERSIONING",
			class: ClassDDL, kind: "ALTER TABLE"},
		// LIKE in a column's DEFAULT expression is an operator, no table
		// to copy (MariaDB's func_like).
		{sql: "CREATE TABLE t (a VARCHAR(10), b INT DEFAULT (a LIKE '%f\\_' ESCAPE ''), CHECK (a NOT LIKE 'x'))",
			want:  "CREATE TABLE `sb_app`.`t` (a VARCHAR(10), b INT DEFAULT (a LIKE '%f\\_' ESCAPE ''), CHECK (a NOT LIKE 'x'))",
			class: ClassDDL, kind: "CREATE TABLE"},
		// DROP TABLE of words MariaDB does not reserve (keywords).
		{sql: "drop table option", want: "drop table `sb_app`.`option`", class: ClassDDL, kind: "DROP TABLE"},
		{sql: "DROP TEMPORARY TABLES IF EXISTS db.u, `x`, rank WAIT 2 RESTRICT", want: "DROP TEMPORARY TABLES IF EXISTS `sb_db`.`u`, `x`, rank WAIT 2 RESTRICT",
			class: ClassDDL, kind: "DROP TABLE"},
		// Views the parser does not read: ALTER VIEW, CREATE VIEW IF NOT
		// EXISTS; their tables are forked first (Locked).
		{sql: "ALTER ALGORITHM=MERGE SQL SECURITY INVOKER VIEW v (x) AS SELECT a FROM t WHERE a IN (SELECT b FROM db.u)",
			want:  "ALTER ALGORITHM=MERGE SQL SECURITY INVOKER VIEW v (x) AS SELECT a FROM `sb_app`.`t` WHERE a IN (SELECT b FROM `sb_db`.`u`)",
			class: ClassDDL, kind: "ALTER VIEW"},
		{sql: "CREATE VIEW IF NOT EXISTS v AS SELECT * FROM t", want: "CREATE VIEW IF NOT EXISTS v AS SELECT * FROM `sb_app`.`t`", class: ClassDDL, kind: "CREATE VIEW"},
		// Accounts, databases, servers, replication, plugins.
		{sql: "CREATE USER foo@localhost IDENTIFIED VIA ed25519 USING PASSWORD('x')", want: "CREATE USER foo@localhost IDENTIFIED VIA ed25519 USING PASSWORD('x')",
			class: ClassOther, kind: "CREATE USER"},
		{sql: "GRANT SELECT ON t TO u@h WITH MAX_QUERIES_PER_HOUR 10 MAX_STATEMENT_TIME 60", refuse: "privileges are the server's", class: ClassOther, kind: "GRANT"},
		{sql: "CREATE DATABASE IF NOT EXISTS d CHARACTER SET latin1 COLLATE DEFAULT", want: "CREATE DATABASE IF NOT EXISTS d CHARACTER SET latin1 COLLATE DEFAULT",
			class: ClassDDL, kind: "CREATE DATABASE"},
		{sql: "CREATE SERVER s FOREIGN DATA WRAPPER mysql OPTIONS (HOST 'h')", refuse: "run it on a direct connection", class: ClassOther, kind: "CREATE SERVER"},
		{sql: "CHANGE MASTER TO MASTER_HOST='127.0.0.1'", want: "CHANGE MASTER TO MASTER_HOST='127.0.0.1'", class: ClassOther, kind: "CHANGE MASTER"},
		{sql: "EXECUTE s USING POINT(1, 1)", refuse: "EXECUTE runs a statement prepared", class: ClassSession},
		// HANDLER: the opened table is read and forked first.
		{sql: "HANDLER db.u OPEN", want: "HANDLER `sb_db`.`u` OPEN", class: ClassRead, kind: "HANDLER OPEN"},
		{sql: "HANDLER t OPEN AS h", want: "HANDLER `sb_app`.`t` OPEN AS h", class: ClassRead, kind: "HANDLER OPEN"},
		{sql: "HANDLER h READ a = (5) WHERE b > 2 LIMIT 3", want: "HANDLER h READ a = (5) WHERE b > 2 LIMIT 3", class: ClassRead, kind: "HANDLER READ"},
		{sql: "HANDLER h CLOSE", want: "HANDLER h CLOSE", class: ClassSession, kind: "HANDLER CLOSE"},
		{sql: "XA START 'x', 'y', 1", want: "XA START 'x', 'y', 1", class: ClassOther, kind: "XA"},
		{sql: "GET STACKED DIAGNOSTICS CONDITION 1 @m = MESSAGE_TEXT, @n = MYSQL_ERRNO", want: "GET STACKED DIAGNOSTICS CONDITION 1 @m = MESSAGE_TEXT, @n = MYSQL_ERRNO",
			class: ClassSession, kind: "GET DIAGNOSTICS"},
		{sql: "SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'no', MYSQL_ERRNO = 1000", want: "SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'no', MYSQL_ERRNO = 1000",
			class: ClassSession, kind: "SIGNAL"},
		{sql: "SHOW CREATE TRIGGER db.tr", want: "SHOW CREATE TRIGGER db.tr", class: ClassRead, kind: "SHOW CREATE TRIGGER"},
		{sql: "EXECUTE IMMEDIATE 'DELETE FROM t WHERE id = ?' USING 1", want: "EXECUTE IMMEDIATE 'DELETE FROM `sb_app`.`t` WHERE id = ?' USING 1",
			class: ClassWrite, kind: "EXECUTE IMMEDIATE"},
		{sql: "EXECUTE IMMEDIATE 'SELECT * FROM t'", want: "EXECUTE IMMEDIATE 'SELECT * FROM `sb_app`.`t`'", class: ClassRead, kind: "EXECUTE IMMEDIATE"},
		{sql: "EXECUTE IMMEDIATE 'CREATE VIEW v AS SELECT * FROM t'", want: "EXECUTE IMMEDIATE 'CREATE VIEW v AS SELECT * FROM `sb_app`.`t`'", class: ClassDDL, kind: "EXECUTE IMMEDIATE"},
		// Refused for what they are.
		{sql: "CREATE FUNCTION f() RETURNS INT BEGIN DELETE FROM t; RETURN 1; END", refuse: "definition runs statements the proxy cannot confine",
			class: ClassRoutine, kind: "CREATE FUNCTION"},
		{sql: "CREATE DEFINER=root@localhost TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.a = 1", refuse: "CREATE TRIGGER acts on a trigger",
			class: ClassRoutine, kind: "CREATE TRIGGER"},
		{sql: "DROP TRIGGER IF EXISTS db.tr", refuse: "DROP TRIGGER acts on a trigger", class: ClassRoutine, kind: "DROP TRIGGER"},
		{sql: "DROP FUNCTION IF EXISTS f", refuse: "run it on a direct connection", class: ClassRoutine, kind: "DROP FUNCTION"},
		{sql: "EXECUTE IMMEDIATE CONCAT('DELETE FROM ', 't')", refuse: "dynamic SQL", class: ClassSession, kind: "EXECUTE IMMEDIATE"},
		{sql: "EXECUTE IMMEDIATE 'SELECT ?' USING (SELECT a FROM t)", refuse: "dynamic SQL", class: ClassSession, kind: "EXECUTE IMMEDIATE"},
		{sql: "EXECUTE IMMEDIATE 'SHOW PROCESSLIST'", refuse: "must see sent itself", class: ClassSession, kind: "EXECUTE IMMEDIATE"},
		{sql: "EXECUTE IMMEDIATE 'USE db'", refuse: "must see sent itself", class: ClassSession, kind: "EXECUTE IMMEDIATE"},
	} {
		a := e.Analyze(c.sql, opts)
		if st := a.Statements[0]; st.Class != c.class || string(st.Kind) != c.kind {
			t.Errorf("%q: class %s kind %q, want %s %q", c.sql, st.Class, st.Kind, c.class, c.kind)
		}
		res, err := a.Rewrite(r)
		switch {
		case c.refuse != "":
			if err == nil || !strings.Contains(err.Error(), c.refuse) {
				t.Errorf("%q: got %v, want a refusal containing %q", c.sql, err, c.refuse)
			}
		default:
			wantSQL(t, c.sql, res, err, c.want)
		}
	}
	// A view made by EXECUTE IMMEDIATE or ALTER VIEW has its tables forked
	// first, as a CREATE VIEW's are.
	for _, sql := range []string{"EXECUTE IMMEDIATE 'CREATE VIEW v AS SELECT * FROM t'", "ALTER VIEW v AS SELECT * FROM t", "HANDLER t OPEN"} {
		if st := e.Analyze(sql, opts).Statements[0]; tables(st.Locked) != "app.t" {
			t.Errorf("%q: locked %v", sql, st.Locked)
		}
	}
	for _, sql := range []string{
		"CHECK TABLE t, (SELECT 1)",
		"HANDLER h READ a = ((SELECT b FROM t))",
		"HANDLER h READ a = (f_write(1))",
		"HANDLER t OPEN AS h, u",
		"HANDLER db.h CLOSE",
		"CHECK TABLE t; DELETE FROM t",
		"ANALYZE TABLE t PERSISTENT FOR COLUMNS ((SELECT 1))",
		"CACHE INDEX t IN c, d",
		"LOAD INDEX INTO CACHE t KEY (SELECT a FROM u)",
		"CHECK TABLE a.b.c",
		"XA START (SELECT a FROM t)",
		"GET DIAGNOSTICS @a = (SELECT COUNT(*) FROM t)",
		"SIGNAL SQLSTATE '45000'; DELETE FROM t",
		"SHOW CREATE TABLE t PARTITION (p)",
		// CREATE / ALTER TABLE naming other tables (or files, engines of
		// other tables) after the target.
		"CREATE TABLE x (a YEAR(2)) SELECT * FROM t",
		"CREATE TABLE x (a YEAR(2), b INT REFERENCES t (a))",
		"CREATE TABLE x (a YEAR(2)) ENGINE=MERGE UNION=(t)",
		"CREATE TABLE x (a YEAR(2), b INT DEFAULT NEXTVAL(t))",
		"CREATE TABLE x (a YEAR(2), b INT DEFAULT (NEXT VALUE FOR t))",
		"CREATE TABLE x (a YEAR(2)) DATA DIRECTORY = '/tmp'",
		"ALTER TABLE x ADD y YEAR(2), RENAME TO t",
		"ALTER TABLE x ADD y YEAR(2), EXCHANGE PARTITION p WITH TABLE t",
		"ALTER TABLE x ADD y YEAR(2), ORDER BY t.a",
		"ALTER TABLE x ADD y YEAR(2) DEFAULT @v",
		"CREATE TABLE x LIKE t FOR SYSTEM_TIME ALL",
		"CREATE TABLE x (LIKE t) WITH SYSTEM VERSIONING",
		// DROP TABLE of a word MariaDB reserves (its syntax error), or
		// with more than names.
		"DROP TABLE option, select",
		"DROP TABLE option, t.over",
		"DROP TABLE option (SELECT 1)",
		"DROP TABLE option; DELETE FROM t",
		// A view whose query is not read completely.
		"ALTER VIEW v AS SELECT * FROM t FOR SYSTEM_TIME ALL",
		"ALTER VIEW v AS SELECT 1; DELETE FROM t",
	} {
		if a := e.Analyze(sql, opts); a.Statements[0].Class != ClassUnparseable {
			t.Errorf("%q read as %s %q", sql, a.Statements[0].Class, a.Statements[0].Kind)
		}
	}
}

// TestLooseNames: in DDL and administrative statements, names the tree
// declares (partitions, indexes, constraints, field aliases, users, calls)
// no longer refuse a statement for sharing a sandboxed table's name; names
// the parser leaves out of its tree still do.
func TestLooseNames(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	r := mapResolver{{DB: "app", Name: "t"}: {DB: "sb_app", Name: "t"}, {DB: "app", Name: "max"}: {DB: "sb_app", Name: "max"},
		{DB: "app", Name: "json"}: {DB: "sb_app", Name: "json"}, {DB: "app", Name: "columns"}: {DB: "sb_app", Name: "columns"}}
	for _, sql := range []string{
		"CREATE TABLE x (a INT) PARTITION BY RANGE (a) (PARTITION t VALUES LESS THAN (10), PARTITION p1 VALUES LESS THAN MAXVALUE)",
		"ALTER TABLE x DROP PARTITION p0, t",
		"ALTER TABLE x TRUNCATE PARTITION t",
		"CREATE TABLE x (a INT, KEY t (a), CONSTRAINT t CHECK (a > 0))",
		"CREATE INDEX t ON x (a)",
		"ALTER TABLE x RENAME KEY t TO u, DROP KEY v",
		"CREATE VIEW v AS SELECT a AS t FROM x",
		"CREATE TABLE x (a INT, b INT AS (CAST(a AS INT)))",
		"CREATE USER t@localhost",
		"CREATE VIEW v AS SELECT max(a) FROM x",
		"CREATE TABLE x (a INT) ENGINE t TABLESPACE t",
		"CREATE VIEW v AS WITH t AS (SELECT 1 AS a) SELECT t.a FROM t",
		"ALTER TABLE x RENAME COLUMN t TO u, RENAME COLUMN v TO t",
		"CREATE VIEW v AS SELECT t.b FROM x t WHERE t.b IN (SELECT b FROM x)",
		"CREATE VIEW v (t) AS SELECT * FROM (SELECT 1) t",
		"CREATE DATABASE t",
		"CREATE TABLE x (c JSON, d INT) PARTITION BY RANGE COLUMNS (d) (PARTITION p0 VALUES LESS THAN (1))",
	} {
		if _, err := e.Rewrite(sql, opts, r); err != nil {
			t.Errorf("%q: %v", sql, err)
		}
	}
	wantRefused(t, e, opts, r,
		"CREATE TABLE x (a INT) ENGINE=MERGE UNION=(t)",
		"CREATE TABLE x (a INT) ENGINE=MERGE UNION=(max)",
		"CREATE TABLE x (a INT) PARTITION BY KEY (a) (PARTITION p0 ENGINE = InnoDB) ; OPTIMIZE TABLE t",
		"OPTIMIZE TABLE t; SELECT 1",
		// A name declared by one statement is no table of another.
		"CREATE TABLE x (t INT); OPTIMIZE TABLE t",
		"CREATE DATABASE t; OPTIMIZE TABLE t",
		"GRANT SELECT ON t TO u@localhost",
	)
}

// TestServerCheck: the refusal of a single statement the engine cannot
// parse asks for the server's own verdict (Refusal.ServerCheck); refusals
// of what the engine read, or of inputs of several statements, do not.
func TestServerCheck(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	r := mapResolver{{DB: "app", Name: "t"}: {DB: "sb_app", Name: "t"}}
	forLoop := "CREATE FUNCTION f1 (lo INT, hi INT) RETURNS INT\nBEGIN\n  FOR i IN lo . . hi\n  DO\n    NULL\n  END FOR;\n  RETURN 0;\nEND;\n"
	for _, c := range []struct {
		sql   string
		check bool
		// also is the server's error besides the syntax errors that
		// rejects the text (Refusal.ServerRejects), 0 for none.
		also uint16
	}{
		{"SELECT * FROM t WHERE", true, 0},
		{"DELETE FROM t WHERE a = 1 ORDER", true, 0},
		{"SELECT a FROM t COLLATE nonesuch_ci", true, 0},
		{"SELECT 1; DELETE FROM t WHERE", false, 0},
		{"CREATE FUNCTION f() RETURNS INT RETURN 1", false, 0},
		{"CALL p()", false, 0},
		// The server's parser refuses a subquery there: 1970.
		{"HANDLER h READ a=((SELECT 1))", true, 0},
		{"EXECUTE IMMEDIATE 'SELECT ?' USING (1 IN (SELECT * FROM t))", true, 0},
		{"EXECUTE IMMEDIATE CONCAT('SELECT ', (SELECT a FROM t))", true, 0},
		// A name in GET DIAGNOSTICS is a column of no table: 1054.
		{"GET DIAGNOSTICS CONDITION p1() @var = CLASS_ORIGIN", true, wire.ErBadField},
		{"GET CURRENT DIAGNOSTICS CONDITION ABS(2) @var = CLASS_ORIGIN", true, wire.ErBadField},
		// A system variable given a qualified name: 1232, unless a
		// subquery or call could give the value its type.
		{"SET default_storage_engine = .a.MyISAM", true, wire.ErWrongTypeForVar},
		{"SET default_storage_engine = .a.MyISAM, @b = (SELECT a FROM t)", true, 0},
		{"SET STATEMENT default_storage_engine = .a.MyISAM FOR SELECT 1", true, 0},
		// A body the proxy cannot read, the input's one statement.
		{forLoop, true, 0},
		{"CREATE PROCEDURE p1 () FOR i IN 1 . . 3 DO SELECT i; END FOR", true, 0},
		{forLoop + "; SELECT 1", false, 0},
		{"SELECT 1;\n" + forLoop, false, 0},
	} {
		_, err := e.Rewrite(c.sql, opts, r)
		var ref *Refusal
		if !errors.As(err, &ref) {
			t.Errorf("%q: not refused (%v)", c.sql, err)
			continue
		}
		if ref.ServerCheck != c.check {
			t.Errorf("%q: ServerCheck %v, want %v (%s)", c.sql, ref.ServerCheck, c.check, ref.Message)
		}
		for _, code := range []uint16{wire.ErBadField, wire.ErWrongTypeForVar} {
			if got := ref.ServerRejects(code); got != (code == c.also) {
				t.Errorf("%q: ServerRejects(%d) %v", c.sql, code, got)
			}
		}
		if !ref.ServerRejects(wire.ErParse) || !ref.ServerRejects(wire.ErSubqueriesNotSupported) || ref.ServerRejects(wire.ErUnsupportedPS) {
			t.Errorf("%q: ServerRejects of the server's syntax errors", c.sql)
		}
	}
	p, d := SyntaxCheck("SELECT 'it''s' \\ FROM t", Options{})
	if p != `PREPARE __sqlfork_syntax_check FROM 'SELECT ''it''''s'' \\ FROM t'` || d != "DEALLOCATE PREPARE __sqlfork_syntax_check" {
		t.Errorf("SyntaxCheck: %q, %q", p, d)
	}
	if p, _ := SyntaxCheck("SELECT 'it''s' \\", Options{NoBackslashEscapes: true}); p != `PREPARE __sqlfork_syntax_check FROM 'SELECT ''it''''s'' \'` {
		t.Errorf("SyntaxCheck under NO_BACKSLASH_ESCAPES: %q", p)
	}
	if !ServerSyntaxError(1064) || !ServerSyntaxError(1970) || !ServerSyntaxError(1193) || !ServerSyntaxError(1221) || ServerSyntaxError(1146) || ServerSyntaxError(1295) || ServerSyntaxError(1054) {
		t.Error("ServerSyntaxError")
	}
}

// TestDynamicSQL: PREPARE … FROM and EXECUTE IMMEDIATE of an expression
// the proxy may compute first (variables, literals, pure string
// functions) are located, and the value takes the expression's place as a
// literal; anything else is not.
func TestDynamicSQL(t *testing.T) {
	e := NewEngine(0)
	v := "SELECT 'it''s' FROM t WHERE a = '\\\\'"
	for _, c := range []struct {
		sql, expr, with string
		nbe             bool
	}{
		{sql: "PREPARE s FROM @q", expr: "@q", with: `PREPARE s FROM 'SELECT ''it''''s'' FROM t WHERE a = ''\\\\'''`},
		{sql: "PREPARE `s` FROM CONCAT('SELECT ', @c, ' FROM t');", expr: "CONCAT('SELECT ', @c, ' FROM t')",
			with: "PREPARE `s` FROM 'SELECT ''it''''s'' FROM t WHERE a = ''\\\\\\\\''';"},
		{sql: "EXECUTE IMMEDIATE @q USING 1, @x", expr: "@q", with: `EXECUTE IMMEDIATE 'SELECT ''it''''s'' FROM t WHERE a = ''\\\\''' USING 1, @x`},
		{sql: "EXECUTE IMMEDIATE @q", expr: "@q", nbe: true, with: `EXECUTE IMMEDIATE 'SELECT ''it''''s'' FROM t WHERE a = ''\\'''`},
	} {
		d, ok := e.DynamicSQL(c.sql, Options{NoBackslashEscapes: c.nbe})
		if !ok {
			t.Errorf("%q: not read", c.sql)
			continue
		}
		if d.Expr != c.expr {
			t.Errorf("%q: expression %q, want %q", c.sql, d.Expr, c.expr)
		}
		if got := d.With(&v); got != c.with {
			t.Errorf("%q: with the value %q\n got %s\nwant %s", c.sql, v, got, c.with)
		}
	}
	for _, sql := range []string{
		"PREPARE s FROM 'SELECT 1'", "EXECUTE IMMEDIATE 'SELECT 1'", "PREPARE s FROM (SELECT q FROM t)",
		"EXECUTE IMMEDIATE CONCAT('SELECT ', f(1))", "EXECUTE IMMEDIATE CONCAT('SELECT ', RAND())", "PREPARE s FROM @q; SELECT 1",
		"EXECUTE IMMEDIATE /* x */ @q", "PREPARE s FROM", "EXECUTE s USING @q", "SELECT @q", "PREPARE s FROM NULL",
		"EXECUTE IMMEDIATE (@q",
	} {
		if _, ok := e.DynamicSQL(sql, Options{}); ok {
			t.Errorf("%q: read as dynamic SQL the proxy may compute", sql)
		}
	}
}

// TestQualifiersOfKeptNames: a column qualifier that could name a table
// or a CTE or alias of the same name needs no rewrite when the table keeps
// its name where the resolver maps it (as a sandbox's forks do): read,
// rather than refused; with a table renamed, refused as before.
func TestQualifiersOfKeptNames(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	keep := mapResolver{{DB: "app", Name: "t1"}: {DB: "sb_app", Name: "t1"}, {DB: "app", Name: "t2"}: {DB: "sb_app", Name: "t2"}}
	rename := mapResolver{{DB: "app", Name: "t1"}: {DB: "sb_app", Name: "s_t1"}, {DB: "app", Name: "t2"}: {DB: "sb_app", Name: "s_t2"}}
	for _, c := range []struct{ sql, want string }{
		{"with t1 as (select a from t2 where t2.a=3 union select t2.a from t1,t2 where t1.a+1=t2.a) select * from t1",
			"with t1 as (select a from `sb_app`.`t2` where t2.a=3 union select t2.a from `sb_app`.`t1`,`sb_app`.`t2` where t1.a+1=t2.a) select * from t1"},
		{"select * from (select t1.*, t2.a as t2a from t1,t2 where t1.a=t2.a) t1",
			"select * from (select t1.*, t2.a as t2a from `sb_app`.`t1`,`sb_app`.`t2` where t1.a=t2.a) t1"},
	} {
		wantRewrite(t, e, c.sql, opts, keep, c.want, "SELECT")
		if res, err := e.Rewrite(c.sql, opts, rename); err == nil {
			t.Errorf("%q passes a resolver that renames the tables: %q", c.sql, res.SQL)
		}
	}
}

// TestImmediateText: EXECUTE IMMEDIATE 'text' without USING gives the
// text it runs when the server runs it as the text sent itself; texts the
// server will not prepare are told apart.
func TestImmediateText(t *testing.T) {
	e := NewEngine(0)
	for _, c := range []struct {
		sql, text  string
		nbe, ok    bool
		unprepared bool
	}{
		{sql: "EXECUTE IMMEDIATE 'SHOW TABLES';", text: "SHOW TABLES", ok: true},
		{sql: `EXECUTE IMMEDIATE "SET @a = 'it''s\\\\'"`, text: `SET @a = 'it''s\\'`, ok: true},
		{sql: `EXECUTE IMMEDIATE 'SET @a = ''\'''`, text: `SET @a = '\'`, nbe: true, ok: true},
		{sql: "execute immediate 'PREPARE s FROM ''SELECT 1'''", text: "PREPARE s FROM 'SELECT 1'", ok: true, unprepared: true},
		{sql: "EXECUTE IMMEDIATE ' drop prepare s'", text: " drop prepare s", ok: true, unprepared: true},
		{sql: "EXECUTE IMMEDIATE 'EXECUTE IMMEDIATE ''SELECT 1'''", text: "EXECUTE IMMEDIATE 'SELECT 1'", ok: true, unprepared: true},
		{sql: "EXECUTE IMMEDIATE 'DROP TABLE t'", text: "DROP TABLE t", ok: true},
		// Placeholders, USING, comments, non-ASCII texts, expressions.
		{sql: "EXECUTE IMMEDIATE 'SHOW TABLES LIKE ?'"},
		{sql: "EXECUTE IMMEDIATE 'SET @a = ?' USING 1"},
		{sql: "EXECUTE IMMEDIATE '/*!PREPARE s FROM 1 */'"},
		{sql: "EXECUTE IMMEDIATE /* x */ 'SHOW TABLES'"},
		{sql: "EXECUTE IMMEDIATE 'SET @a = ''é'''"},
		{sql: "EXECUTE IMMEDIATE CONCAT('SHOW ', 'TABLES')"},
		{sql: "EXECUTE IMMEDIATE 'SHOW TABLES' 'x'"},
		{sql: "EXECUTE IMMEDIATE _latin1'SHOW TABLES'"},
		{sql: "EXECUTE IMMEDIATE 'SHOW TABLES'; SELECT 1"},
		{sql: "PREPARE s FROM 'SHOW TABLES'"},
	} {
		opts := Options{NoBackslashEscapes: c.nbe}
		text, ok := e.ImmediateText(c.sql, opts)
		if text != c.text || ok != c.ok {
			t.Errorf("%q: %q, %v; want %q, %v", c.sql, text, ok, c.text, c.ok)
		}
		if ok && UnpreparableText(text, opts) != c.unprepared {
			t.Errorf("%q: unpreparable %v, want %v", c.sql, !c.unprepared, c.unprepared)
		}
	}
}
