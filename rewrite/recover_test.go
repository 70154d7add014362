package rewrite

import (
	"strings"
	"testing"
	"time"
)

// TestRecoveredForms: texts the parser rejects that the engine still reads
// for sure (rewrite/recovery) are rewritten like any other, the client's text
// otherwise reaching the server as sent; look-alikes stay refused.
func TestRecoveredForms(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	r := mapResolver{{DB: "app", Name: "t"}: {DB: "sb_app", Name: "t"}, {DB: "app", Name: "u"}: {DB: "sb_app", Name: "u"}}
	for _, c := range []struct {
		sql, want string
		kinds     string // the statements' kinds
	}{
		// SET STATEMENT … FOR with settings that change neither reading
		// nor locking (PyMySQL's test_execution_time_limit).
		{"SET STATEMENT max_statement_time=2 FOR SELECT data, sleep(0.01) FROM t",
			"SET STATEMENT max_statement_time=2 FOR SELECT data, sleep(0.01) FROM `sb_app`.`t`", "SELECT"},
		{"set statement max_statement_time = 0.5, optimizer_switch='index_merge=off' for update t set a = 1",
			"set statement max_statement_time = 0.5, optimizer_switch='index_merge=off' for update `sb_app`.`t` set a = 1", "UPDATE"},
		{"SELECT 1; SET STATEMENT max_statement_time=-1 FOR DELETE FROM t",
			"SELECT 1; SET STATEMENT max_statement_time=-1 FOR DELETE FROM `sb_app`.`t`", "SELECT DELETE"},
		// Window functions' counts and offsets as expressions, CAST to an
		// INTERVAL, VALUE(col) in a select list (MariaDB's main suite).
		{"SELECT a, LEAD(a, -1) OVER (ORDER BY a), LAG(a, 1 + 1, 0) OVER w, NTILE((2 * 2)) OVER w FROM t WINDOW w AS (ORDER BY a)",
			"SELECT a, LEAD(a, -1) OVER (ORDER BY a), LAG(a, 1 + 1, 0) OVER w, NTILE((2 * 2)) OVER w FROM `sb_app`.`t` WINDOW w AS (ORDER BY a)", "SELECT"},
		{"SELECT CAST(a AS INTERVAL DAY_SECOND(2)), CAST('1' AS INTERVAL HOUR) FROM t",
			"SELECT CAST(a AS INTERVAL DAY_SECOND(2)), CAST('1' AS INTERVAL HOUR) FROM `sb_app`.`t`", "SELECT"},
		{"SELECT VALUE(a) FROM t", "SELECT VALUE(a) FROM `sb_app`.`t`", "SELECT"},
		{"CREATE TABLE u (WITH RECURSIVE c (n) AS (SELECT 1 UNION SELECT n + 1 FROM c WHERE n < 3) SELECT n FROM c JOIN t ON t.a = n)",
			"CREATE TABLE `sb_app`.`u` (WITH RECURSIVE c (n) AS (SELECT 1 UNION SELECT n + 1 FROM c WHERE n < 3) SELECT n FROM c JOIN `sb_app`.`t` ON t.a = n)",
			"CREATE TABLE"},
		{"SELECT GROUP_CONCAT(a LIMIT ?) FROM t", "SELECT GROUP_CONCAT(a LIMIT ?) FROM `sb_app`.`t`", "SELECT"},
		{"SELECT a, LAG(a, a - 2) OVER (ORDER BY a), GROUP_CONCAT(a ORDER BY a LIMIT 1, 2) FROM t GROUP BY a",
			"SELECT a, LAG(a, a - 2) OVER (ORDER BY a), GROUP_CONCAT(a ORDER BY a LIMIT 1, 2) FROM `sb_app`.`t` GROUP BY a", "SELECT"},
		{"SELECT @n := @n + 1 AS row, a AS rank FROM t", "SELECT @n := @n + 1 AS row, a AS rank FROM `sb_app`.`t`", "SELECT"},
		{"INSERT INTO t VALUES (" + strings.Repeat("9", 90) + ")", "INSERT INTO `sb_app`.`t` VALUES (" + strings.Repeat("9", 90) + ")", "INSERT"},
		{"CREATE TABLE u (SELECT a FROM t) UNION (SELECT a FROM t)", "CREATE TABLE `sb_app`.`u` (SELECT a FROM `sb_app`.`t`) UNION (SELECT a FROM `sb_app`.`t`)",
			"CREATE TABLE"},
		// Spatial types (PyMySQL's test_issue_363).
		{"CREATE TABLE t (id INTEGER PRIMARY KEY, geom LINESTRING NOT NULL /*!80003 SRID 0 */, SPATIAL KEY geom (geom)) ENGINE=MyISAM",
			"CREATE TABLE `sb_app`.`t` (id INTEGER PRIMARY KEY, geom LINESTRING NOT NULL /*!80003 SRID 0 */, SPATIAL KEY geom (geom)) ENGINE=MyISAM", "CREATE TABLE"},
		{"ALTER TABLE t ADD COLUMN p POINT, ADD SPATIAL INDEX (p)", "ALTER TABLE `sb_app`.`t` ADD COLUMN p POINT, ADD SPATIAL INDEX (p)", "ALTER TABLE"},
		// A syntax error for sure, alone or after statements the server
		// runs first (PyMySQL's test_nextset_error, go-mysql's
		// TestExecuteMultiple).
		{"xyzzy", "xyzzy", "SYNTAX ERROR"},
		{"SELECT 1 FROM t; xyzzy;", "SELECT 1 FROM `sb_app`.`t`; xyzzy;", "SELECT SYNTAX ERROR"},
		{"INSERT INTO t (id, str) VALUES (999, \"x\"); SELECT id FROM t LIMIT 2; DELETE FROM t WHERE id=999; THIS IS BOGUS()",
			"INSERT INTO `sb_app`.`t` (id, str) VALUES (999, \"x\"); SELECT id FROM `sb_app`.`t` LIMIT 2; DELETE FROM `sb_app`.`t` WHERE id=999; THIS IS BOGUS()",
			"INSERT SELECT DELETE SYNTAX ERROR"},
		{"SELECT 1; t IS BOGUS; DELETE FROM t", "SELECT 1; t IS BOGUS; DELETE FROM t", "SELECT SYNTAX ERROR"},
		{"SELECT 1; 42 FROM t", "SELECT 1; 42 FROM t", "SELECT SYNTAX ERROR"},
		// EXPLAIN EXTENDED / PARTITIONS, ANALYZE [FORMAT=JSON] (which
		// runs the statement: its kind is the statement's).
		{"explain extended select * from t", "explain extended select * from `sb_app`.`t`", "EXPLAIN"},
		{"EXPLAIN PARTITIONS SELECT * FROM t WHERE a=1", "EXPLAIN PARTITIONS SELECT * FROM `sb_app`.`t` WHERE a=1", "EXPLAIN"},
		{"analyze format=json delete from t where a=1", "analyze format=json delete from `sb_app`.`t` where a=1", "DELETE"},
		{"ANALYZE UPDATE t SET a=2", "ANALYZE UPDATE `sb_app`.`t` SET a=2", "UPDATE"},
		// Introducers of character sets the parser does not take.
		{"select hex(_ucs2 0x00F7), _latin2'b' from t", "select hex(_ucs2 0x00F7), _latin2'b' from `sb_app`.`t`", "SELECT"},
		// Dynamic columns' types.
		{"select column_get(str, 4 as char(10) charset utf8) from t", "select column_get(str, 4 as char(10) charset utf8) from `sb_app`.`t`", "SELECT"},
		{"insert into t values (column_create(1, 'x' as char, 2, 3 as int))", "insert into `sb_app`.`t` values (column_create(1, 'x' as char, 2, 3 as int))", "INSERT"},
		// CREATE OR REPLACE, ALTER ONLINE, row limits, column attributes,
		// CHECK OPTION, FOR EXPORT, SET STATEMENT sql_mode (the server
		// reads the statement before it sets the mode).
		{"create or replace table t (a int)", "create or replace table `sb_app`.`t` (a int)", "CREATE TABLE"},
		{"CREATE OR REPLACE INDEX i ON t (a)", "CREATE OR REPLACE INDEX i ON `sb_app`.`t` (a)", "CREATE INDEX"},
		{"ALTER ONLINE TABLE t ADD COLUMN b INT", "ALTER ONLINE TABLE `sb_app`.`t` ADD COLUMN b INT", "ALTER TABLE"},
		{"SELECT * FROM t LIMIT 2 ROWS EXAMINED 10", "SELECT * FROM `sb_app`.`t` LIMIT 2 ROWS EXAMINED 10", "SELECT"},
		{"SELECT * FROM t LIMIT ROWS EXAMINED 10", "SELECT * FROM `sb_app`.`t` LIMIT ROWS EXAMINED 10", "SELECT"},
		// Row limits naming a stored program's local variables.
		{"SELECT a,b FROM t ORDER BY a LIMIT p_a", "SELECT a,b FROM `sb_app`.`t` ORDER BY a LIMIT p_a", "SELECT"},
		{"DELETE FROM t WHERE a IN (SELECT a FROM u LIMIT 1) LIMIT `n`", "DELETE FROM `sb_app`.`t` WHERE a IN (SELECT a FROM `sb_app`.`u` LIMIT 1) LIMIT `n`", "DELETE"},
		{"SELECT * FROM t LIMIT 2, cnt", "SELECT * FROM `sb_app`.`t` LIMIT 2, cnt", "SELECT"},
		{"SELECT * FROM t LIMIT rec.a", "SELECT * FROM `sb_app`.`t` LIMIT rec.a", "SELECT"},
		{"SELECT * FROM t LIMIT rec.a OFFSET r.`b`", "SELECT * FROM `sb_app`.`t` LIMIT rec.a OFFSET r.`b`", "SELECT"},
		{"SELECT * FROM t LIMIT cnt OFFSET skip ROWS EXAMINED lim", "SELECT * FROM `sb_app`.`t` LIMIT cnt OFFSET skip ROWS EXAMINED lim", "SELECT"},
		{"select * from t order by a offset 2 rows fetch first 3 rows with ties", "select * from `sb_app`.`t` order by a offset 2 rows fetch first 3 rows with ties", "SELECT"},
		{"(select a from t order by a fetch next 1 row only) union (select 1)", "(select a from `sb_app`.`t` order by a fetch next 1 row only) union (select 1)", "SELECT"},
		{"CREATE TABLE t (a BLOB COMPRESSED=zlib NOT NULL, b INT INVISIBLE, KEY (b) IGNORED)", "CREATE TABLE `sb_app`.`t` (a BLOB COMPRESSED=zlib NOT NULL, b INT INVISIBLE, KEY (b) IGNORED)", "CREATE TABLE"},
		{"CREATE VIEW v AS SELECT a FROM t WITH CASCADED CHECK OPTION", "CREATE VIEW v AS SELECT a FROM `sb_app`.`t` WITH CASCADED CHECK OPTION", "CREATE VIEW"},
		{"FLUSH TABLES t FOR EXPORT", "FLUSH TABLES `sb_app`.`t` FOR EXPORT", ""},
		{"SET STATEMENT sql_mode='ANSI_QUOTES' FOR SELECT \"a\" FROM t", "SET STATEMENT sql_mode='ANSI_QUOTES' FOR SELECT \"a\" FROM `sb_app`.`t`", "SELECT"},
		// LOCK TABLES aliases, WRITE CONCURRENT, LOW_PRIORITY WRITE;
		// PROCEDURE ANALYSE(); VALUE(col).
		{"LOCK TABLES t AS a READ, t b WRITE CONCURRENT, t LOW_PRIORITY WRITE", "LOCK TABLES `sb_app`.`t` AS a READ, `sb_app`.`t` b WRITE CONCURRENT, `sb_app`.`t` LOW_PRIORITY WRITE", "LOCK TABLES"},
		{"SELECT * FROM t PROCEDURE ANALYSE(10, 2000)", "SELECT * FROM `sb_app`.`t` PROCEDURE ANALYSE(10, 2000)", "SELECT"},
		{"INSERT INTO t (a) VALUES (1) ON DUPLICATE KEY UPDATE a = VALUE(a) + 1", "INSERT INTO `sb_app`.`t` (a) VALUES (1) ON DUPLICATE KEY UPDATE a = VALUE(a) + 1", "INSERT"},
		// Compound statements sent as statements (routine.go).
		{"LOOP DELETE FROM t; LEAVE; END LOOP", "LOOP DELETE FROM `sb_app`.`t`; LEAVE; END LOOP", "COMPOUND"},
		// A label: the server takes none outside a stored program, the
		// text goes as it is for its 1064.
		{"lbl: LOOP DELETE FROM t; LEAVE lbl; END LOOP", "lbl: LOOP DELETE FROM t; LEAVE lbl; END LOOP", "SYNTAX ERROR"},
		{"lbl: BEGIN NOT ATOMIC DELETE FROM t; END lbl", "lbl: BEGIN NOT ATOMIC DELETE FROM t; END lbl", "SYNTAX ERROR"},
		{"BEGIN NOT ATOMIC DECLARE n INT DEFAULT (SELECT COUNT(*) FROM t); IF n > 0 THEN INSERT INTO t VALUES (n); END IF; END",
			"BEGIN NOT ATOMIC DECLARE n INT DEFAULT (SELECT COUNT(*) FROM `sb_app`.`t`); IF n > 0 THEN INSERT INTO `sb_app`.`t` VALUES (n); END IF; END", "COMPOUND"},
		// Table value constructors.
		{"VALUES (1, 2), (3, 4) UNION ALL SELECT a, b FROM t", "VALUES (1, 2), (3, 4) UNION ALL SELECT a, b FROM `sb_app`.`t`", "SELECT"},
		{"SELECT * FROM t WHERE a IN (VALUES (1), (2)) AND b = ALL (VALUES (3))", "SELECT * FROM `sb_app`.`t` WHERE a IN (VALUES (1), (2)) AND b = ALL (VALUES (3))", "SELECT"},
		// Ordered-set aggregates; lock waits.
		{"SELECT name, PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY score DESC) OVER (PARTITION BY name), MEDIAN(score) OVER () FROM t",
			"SELECT name, PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY score DESC) OVER (PARTITION BY name), MEDIAN(score) OVER () FROM `sb_app`.`t`", "SELECT"},
		{"SELECT * FROM t FOR UPDATE WAIT 1", "SELECT * FROM `sb_app`.`t` FOR UPDATE WAIT 1", "SELECT"},
		{"ALTER TABLE t NOWAIT ADD COLUMN b INT", "ALTER TABLE `sb_app`.`t` NOWAIT ADD COLUMN b INT", "ALTER TABLE"},
		// RETURNING columns.
		{"REPLACE INTO t (id, a) VALUES (1, 2) RETURNING id, a * 2 AS twice, *", "REPLACE INTO `sb_app`.`t` (id, a) VALUES (1, 2) RETURNING id, a * 2 AS twice, *", "REPLACE"},
		{"DELETE FROM t WHERE id = 1 RETURNING id; SELECT 1", "DELETE FROM `sb_app`.`t` WHERE id = 1 RETURNING id; SELECT 1", "DELETE SELECT"},
		// SELECT … INTO a stored program's local variables.
		{"SELECT COUNT(*), MAX(id) INTO n, m FROM t", "SELECT COUNT(*), MAX(id) INTO n, m FROM `sb_app`.`t`", "SELECT"},
		// LIKE … ESCAPE of any operand, LIKE and REGEXP chained, IS tests
		// chained (MariaDB's func_like, precedence, subselect4): a
		// subquery in an operand keeps its tables.
		{"select * from t where a like 'a\\%' escape ?", "select * from `sb_app`.`t` where a like 'a\\%' escape ?", "SELECT"},
		{"SELECT '' LIKE '1' ESCAPE COUNT(1) FROM t", "SELECT '' LIKE '1' ESCAPE COUNT(1) FROM `sb_app`.`t`", "SELECT"},
		{"CREATE VIEW v2 AS SELECT 1 LIKE '%' ESCAPE ( 1 IN ( SELECT a FROM u ) )",
			"CREATE VIEW v2 AS SELECT 1 LIKE '%' ESCAPE ( 1 IN ( SELECT a FROM `sb_app`.`u` ) ) AS `1 LIKE '%' ESCAPE ( 1 IN ( SELECT a FROM u ) )`", "CREATE VIEW"},
		{"create or replace view v1 as select 2 LIKE 3 IN (0,1), 2 NOT LIKE (3 IN (0,1)), (2 LIKE 3) IN (0,1), a REGEXP b + 1, 1 RLIKE 2 LIKE 3 FROM t",
			"create or replace view v1 as select 2 LIKE 3 IN (0,1), 2 NOT LIKE (3 IN (0,1)), (2 LIKE 3) IN (0,1), a REGEXP b + 1, 1 RLIKE 2 LIKE 3 FROM `sb_app`.`t`",
			"CREATE VIEW"},
		{"SELECT 2 LIKE 1 ESCAPE 3 IN (SELECT a FROM t), a NOT REGEXP 'x' BETWEEN 1 AND 3 FROM u",
			"SELECT 2 LIKE 1 ESCAPE 3 IN (SELECT a FROM `sb_app`.`t`), a NOT REGEXP 'x' BETWEEN 1 AND 3 FROM `sb_app`.`u`", "SELECT"},
		{"SELECT a IS TRUE IS FALSE, a IS NOT NULL = 3, ISNULL(a) = 1 FROM t", "SELECT a IS TRUE IS FALSE, a IS NOT NULL = 3, ISNULL(a) = 1 FROM `sb_app`.`t`", "SELECT"},
		// HAVING after FROM DUAL (intersect).
		{"select i from t where exists ((select 6 as r from dual having t.i <> 6) intersect (select 3 from dual having t.i <> 3))",
			"select i from `sb_app`.`t` where exists ((select 6 as r from dual having t.i <> 6) intersect (select 3 from dual having t.i <> 3))", "SELECT"},
		// HAVING after FROM DUAL's WHERE or GROUP BY (parser): read as one
		// more WHERE term or GROUP BY item, its subqueries' tables kept.
		{"SELECT 1 FROM DUAL WHERE 1 GROUP BY 1 HAVING 1 ORDER BY 1 FOR UPDATE", "SELECT 1 FROM DUAL WHERE 1 GROUP BY 1 HAVING 1 ORDER BY 1 FOR UPDATE", "SELECT"},
		{"SELECT 1 FROM DUAL WHERE 1 HAVING (SELECT COUNT(*) FROM t) > 0 LIMIT 1", "SELECT 1 FROM DUAL WHERE 1 HAVING (SELECT COUNT(*) FROM `sb_app`.`t`) > 0 LIMIT 1", "SELECT"},
		{"select i from t where exists ((select 6 from dual where 1 having t.i <> 6) intersect (select 3 from dual group by 1 having t.i in (select a from u)))",
			"select i from `sb_app`.`t` where exists ((select 6 from dual where 1 having t.i <> 6) intersect (select 3 from dual group by 1 having t.i in (select a from `sb_app`.`u`)))", "SELECT"},
		// JSON_TABLE, read as a derived table of its document: the
		// document's subqueries name tables, the path and columns none.
		{"SELECT * FROM json_table((SELECT a FROM t), '$' COLUMNS(a CHAR(1) path '$.*')) tmp",
			"SELECT * FROM json_table((SELECT a FROM `sb_app`.`t`), '$' COLUMNS(a CHAR(1) path '$.*')) tmp", "SELECT"},
		{"SELECT * FROM t, JSON_TABLE(t.j, '$[*]' COLUMNS(id FOR ORDINALITY, a INT PATH '$.a' DEFAULT '0' ON EMPTY, NESTED PATH '$.b[*]' COLUMNS (b VARCHAR(10) PATH '$'))) AS jt",
			"SELECT * FROM `sb_app`.`t`, JSON_TABLE(t.j, '$[*]' COLUMNS(id FOR ORDINALITY, a INT PATH '$.a' DEFAULT '0' ON EMPTY, NESTED PATH '$.b[*]' COLUMNS (b VARCHAR(10) PATH '$'))) AS jt", "SELECT"},
		{"INSERT INTO u SELECT a FROM json_table('[1]', '$[*]' COLUMNS(a INT path '$')) AS x", "INSERT INTO `sb_app`.`u` SELECT a FROM json_table('[1]', '$[*]' COLUMNS(a INT path '$')) AS x", "INSERT"},
		// A locking clause after a bracketed SELECT (parser).
		{"(select * from t) for update", "(select * from `sb_app`.`t`) for update", "SELECT"},
		{"(select a from t where a in (select a from u)) lock in share mode; delete from u",
			"(select a from `sb_app`.`t` where a in (select a from `sb_app`.`u`)) lock in share mode; delete from `sb_app`.`u`", "SELECT DELETE"},
		// A table's alias after '=' (select): FROM u = t is u AS t.
		{"select t.period from u = t limit 1", "select t.period from `sb_app`.`u` = t limit 1", "SELECT"},
		{"SELECT x.a FROM t JOIN app.u = x ON x.a = t.a", "SELECT x.a FROM `sb_app`.`t` JOIN `sb_app`.`u` = x ON x.a = t.a", "SELECT"},
		// FROM in a call is no table's: its '=' stays an operator.
		{"SELECT TRIM(BOTH 'x' FROM a = b) FROM t LIMIT 1 ROWS EXAMINED 5", "SELECT TRIM(BOTH 'x' FROM a = b) FROM `sb_app`.`t` LIMIT 1 ROWS EXAMINED 5", "SELECT"},
		{"SELECT * FROM t WHERE EXISTS (SELECT 1 FROM u = x WHERE x.a = t.a)", "SELECT * FROM `sb_app`.`t` WHERE EXISTS (SELECT 1 FROM `sb_app`.`u` = x WHERE x.a = t.a)", "SELECT"},
	} {
		wantRewrite(t, e, c.sql, opts, r, c.want, c.kinds)
	}
	wantRefused(t, e, opts, r,
		"SELECT LEAD(a, (SELECT COUNT(*) FROM t)) OVER (ORDER BY a) FROM t",
		"SELECT NTILE(t.a + 1) OVER (ORDER BY a) FROM t",
		"SELECT CAST(a AS INTERVAL t) FROM t",
		// Settings that change how the text is read or what it locks
		// (not sql_mode: the server reads the statement before it sets
		// it, see above).
		"SET STATEMENT transaction_isolation='SERIALIZABLE' FOR SELECT * FROM t",
		"SET STATEMENT character_set_client=gbk FOR SELECT * FROM t",
		"SET STATEMENT max_statement_time=(SELECT 1) FOR SELECT * FROM t",
		// Statements that only look like syntax errors: labels, keywords.
		"SELECT 1; `lbl`: BEGIN NOT ATOMIC DELETE FROM t; END",
		"SELECT 1; REPLACE INTO t SELECT * FROM t FOR SYSTEM_TIME ALL",
		"SELECT 1; BEGIN NOT ATOMIC DELETE FROM t; END",
		"SELECT 1; HANDLER t OPEN",
		// A bracketed union locks through its brackets, which the server
		// refuses (1221), or locks what the parser would not tell.
		"(select * from t) union (select * from t) for update",
		"(select 1 union select a from t) for update",
		// JSON_TABLE's columns hold no expression the proxy reads.
		"SELECT * FROM json_table('[1]', '$' COLUMNS(a INT path '$.a' DEFAULT (SELECT 1 FROM t) ON EMPTY)) tmp",
		// Not a column's type.
		"INSERT INTO t VALUES (POINT(1, 2)) RETURNING *, x FROM",
		// Files are no variables.
		"SELECT * INTO OUTFILE '/tmp/x' FROM t FOR SYSTEM_TIME ALL",
		// Look-alikes of the masked forms: a subquery in a dynamic
		// column's type place, an introducer before a name, EXPLAIN of a
		// statement the parser still rejects.
		"select column_get(c, 1 as (select a from t)) from t",
		"select _ucs2 a from t FOR SYSTEM_TIME ALL",
		"explain extended select * from t FOR SYSTEM_TIME ALL",
		"analyze table t persistent for all (select 1)",
		// Look-alikes: a name where the masked words would be.
		"SELECT * FROM t LIMIT 1 ROWS EXAMINED (SELECT 1)",
		"SELECT * FROM t LIMIT v, (SELECT 1)",
		"SELECT * FROM t LIMIT f(1)",
		"SELECT * FROM t LIMIT a.b.c",
		"SELECT * FROM t LIMIT db.f(1)",
		"SELECT * FROM t LIMIT v FOR SYSTEM_TIME ALL",
		"INSERT INTO t VALUES (1) RETURNING t.a FROM x",
		"INSERT INTO median(a) VALUES (1) FOR SYSTEM_TIME ALL",
		"SELECT PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY (SELECT a FROM t)) OVER () FROM t FOR SYSTEM_TIME ALL",
		"INSERT INTO t VALUES (1) RETURNING f(a) FROM x",
		// CREATE TABLE's LIKE names a table to copy; SHOW … LIKE a
		// pattern.
		"CREATE TABLE x LIKE t FOR SYSTEM_TIME ALL",
		"CREATE TABLE x (LIKE t) FOR SYSTEM_TIME ALL",
		"SHOW TABLES FROM t LIKE 'x' FOR SYSTEM_TIME ALL",
		// '=' between names elsewhere than after a table's name.
		"SELECT * FROM t WHERE u = x FOR SYSTEM_TIME ALL",
		"SELECT * FROM t = x.a",
		"SELECT * FROM t = f(x)",
	)
	// SHOW … WHERE, whose condition the proxy may answer with, is not
	// masked.
	if !e.Analyze("SHOW TABLES WHERE Tables_in_app IS TRUE IS FALSE", opts).Unparsed() {
		t.Error("SHOW … WHERE … IS TRUE IS FALSE was masked")
	}
	// The statement-timeout guardrail adds its setting to the client's
	// SET STATEMENT, and refuses one that sets max_statement_time itself.
	p := &Policy{StatementTimeout: 3 * time.Second}
	a := e.Analyze("SET STATEMENT sort_buffer_size=1024 FOR SELECT * FROM t", opts)
	if err := p.Check(a); err != nil {
		t.Fatal(err)
	}
	if got := p.WithTimeout(a.src, a, MariaDB); got != "SET STATEMENT max_statement_time=3, sort_buffer_size=1024 FOR SELECT * FROM t" {
		t.Errorf("WithTimeout: %q", got)
	}
	if err := p.Check(e.Analyze("SET STATEMENT max_statement_time=100 FOR SELECT * FROM t", opts)); err == nil {
		t.Error("the client's max_statement_time passed the statement-timeout guardrail")
	}
}

// TestAnalyzes: ANALYZE [FORMAT=JSON] of a statement answers a plan;
// ANALYZE TABLE and other statements do not.
func TestAnalyzes(t *testing.T) {
	for _, c := range []struct {
		sql  string
		want bool
	}{
		{"ANALYZE SELECT * FROM t", true},
		{"analyze format=json select * from t where a in (2,3,4)", true},
		{"/* c */ ANALYZE FORMAT = JSON UPDATE t SET a = 1", true},
		{"ANALYZE (SELECT 1) UNION (SELECT 2)", true},
		{"ANALYZE DELETE FROM t", true},
		{"ANALYZE TABLE t", false},
		{"ANALYZE NO_WRITE_TO_BINLOG TABLE t", false},
		{"EXPLAIN SELECT * FROM t", false},
		{"SELECT 'ANALYZE SELECT'", false},
		{"", false},
	} {
		if got := Analyzes(c.sql); got != c.want {
			t.Errorf("Analyzes(%q) = %v, want %v", c.sql, got, c.want)
		}
	}
}

// TestRecoveredLocks: a masked locking read locks what it reads, as the
// server does: its tables are forked first.
func TestRecoveredLocks(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	for _, c := range []struct{ sql, locked string }{
		{"(select * from t) for update", "app.t"},
		{"(select * from t join u using (a)) lock in share mode", "app.t,app.u"},
		{"SELECT 1 FROM DUAL WHERE 1 GROUP BY 1 HAVING 1 ORDER BY 1 FOR UPDATE", ""},
	} {
		a := e.Analyze(c.sql, opts)
		if len(a.Statements) != 1 || a.Statements[0].Unprovable != "" {
			t.Errorf("%q: not read: %+v", c.sql, a.Statements)
			continue
		}
		if got := tables(uniqueTables(a.Statements[0].Locked)); got != sortedList(c.locked) {
			t.Errorf("%q: locked %q, want %q", c.sql, got, sortedList(c.locked))
		}
	}
}
