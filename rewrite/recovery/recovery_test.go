package recovery

import (
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser"

	"github.com/sqlfork/sqlfork-proxy/rewrite/corpus"
	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

// testWords are the parser's words, and the character sets of a server
// that has utf8mb4, latin1 and big5.
func testWords() Words {
	w := Words{Reserved: map[string]bool{}, Keywords: map[string]bool{}, Charset: func(name string) bool {
		return name == "utf8mb4" || name == "latin1" || name == "big5"
	}}
	for _, k := range parser.Keywords {
		w.Keywords[strings.ToLower(k.Word)] = true
		if k.Reserved {
			w.Reserved[strings.ToLower(k.Word)] = true
		}
	}
	return w
}

// mask is Mask of sql under default lexing: the masked text, sql itself
// when nothing is masked.
func mask(sql string, w Words) (Masked, bool) {
	return Mask(sql, lexer.Lex(sql, lexer.Options{}), w)
}

// TestMaskKeepsLength masks every corpus statement: a masked text keeps
// the input's length and line breaks, so offsets hold.
func TestMaskKeepsLength(t *testing.T) {
	w := testWords()
	n := 0
	for _, c := range corpus.Cases() {
		m, ok := mask(c.SQL, w)
		if !ok {
			continue
		}
		n++
		if len(m.Text) != len(c.SQL) {
			t.Fatalf("Mask(%q) = %q: length %d, want %d", c.SQL, m.Text, len(m.Text), len(c.SQL))
		}
		for i := range c.SQL {
			if (c.SQL[i] == '\n') != (m.Text[i] == '\n') {
				t.Fatalf("Mask(%q) = %q: line break moved at %d", c.SQL, m.Text, i)
			}
		}
	}
	if n == 0 {
		t.Fatal("no corpus statement masked")
	}
}

func TestMask(t *testing.T) {
	w := testWords()
	cases := []struct{ sql, want string }{
		{"SELECT 1 FROM DUAL HAVING 1", "SELECT 1           HAVING 1"},
		{"SHOW LOCAL STATUS LIKE 'x'", "SHOW       STATUS LIKE 'x'"},
		{"SHOW WARNINGS LIMIT 2, 1", "SHOW WARNINGS           "},
		{"LOAD DATA INFILE 'f' INTO TABLE t PARTITION (p0, `p-1`)", "LOAD DATA INFILE 'f' INTO TABLE t                      "},
		{"SELECT HEX(WEIGHT_STRING(a AS CHAR(3) LEVEL 1-2 DESC REVERSE)) FROM t", "SELECT HEX(WEIGHT_STRING(a AS CHAR(3)                       )) FROM t"},
		{"SELECT COUNT(DISTINCT a) OVER (ORDER BY a ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING EXCLUDE TIES) FROM t", "SELECT COUNT(         a) OVER (ORDER BY a ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING             ) FROM t"},
		{"SELECT a, SUM(b) FROM t GROUP BY a WITH CUBE", "SELECT a, SUM(b) FROM t GROUP BY a          "},
		{"RENAME TABLE IF EXISTS t TO u", "RENAME TABLE           t TO u"},
		{"ALTER TABLE t RENAME COLUMN a TO b, ALGORITHM=NOCOPY", "ALTER TABLE t RENAME COLUMN a TO b, ALGORITHM=COPY  "},
		{"SET GLOBAL delay_key_write = ALL", "SET GLOBAL delay_key_write = ON "},
		{"SET sql_mode = ALL", ""},
		{"SELECT CAST(a AS POINT), CONVERT(b, GEOMETRY) FROM t", "SELECT CAST(a AS CHAR ), CONVERT(b, CHAR    ) FROM t"},
		{"SELECT CAST(a AS DUAL), CONVERT(b, ACTION) FROM t", "SELECT CAST(a AS CHAR), CONVERT(b, CHAR  ) FROM t"},
		{"SELECT CAST(a AS END), CAST(b AS TIME(9999999999)), CAST(c AS CHAR(3) BINARY ASCII) FROM t",
			"SELECT CAST(a AS DEC), CAST(b AS TIME(0         )), CAST(c AS CHAR(3) BINARY      ) FROM t"},
		{"SELECT ALL DISTINCT COUNT(*) OVER (ORDER BY a RANGE BETWEEN 'x' PRECEDING AND CURRENT ROW) FROM t",
			"SELECT     DISTINCT COUNT(*) OVER (ORDER BY a RANGE BETWEEN 1   PRECEDING AND CURRENT ROW) FROM t"},
		{"SELECT MAX  (a), COUNT (*) FROM t", "SELECT   MAX(a),  COUNT(*) FROM t"},
		{"SELECT MAX\n(a) FROM t", ""},
		{"CREATE TABLE t (a mariadb_schema.date)", "CREATE TABLE t (a                date)"},
		{"SELECT CAST(a AS DOUBLE(5,2)) FROM t WHERE b = 1.8e308", "SELECT CAST(a AS DOUBLE     ) FROM t WHERE b = 0      "},
		{"SELECT POINT(a, b), 1e308 FROM t", ""},
		{"SELECT JSON_ARRAYAGG(DISTINCT a ORDER BY t.b LIMIT 2) FROM t", "SELECT  GROUP_CONCAT(DISTINCT a ORDER BY t.b        ) FROM t"},
		{"SELECT a SOUNDS LIKE (SELECT b FROM u) FROM t", "SELECT a =           (SELECT b FROM u) FROM t"},
		{"UPDATE t, u SET t.a = 1 ORDER BY t.b DESC, u.c LIMIT 2", "UPDATE t, u SET t.a = 1 WHERE(   t.b     , u.c )      "},
		{"UPDATE t, u SET t.a = 1 WHERE t.b = 2 ORDER BY u.c LIMIT 2", "UPDATE t, u SET t.a = 1 WHERE t.b = 2 AND(     u.c )      "},
		{"UPDATE t, u SET t.a = 1 ORDER BY t.b", ""},
		{"EXPLAIN FORMAT=JSON VALUES (1, 2)", "EXPLAIN FORMAT=JSON SELECT (1, 2)"},
		{"ALTER TABLE t RENAME INDEX a TO x, ALTER INDEX x NOT IGNORED", "ALTER TABLE t RENAME INDEX a TO x, ALTER INDEX x     VISIBLE"},
		{"CREATE INDEX i ON t (a) IGNORED", "CREATE INDEX i ON t (a) VISIBLE"},
		{"SELECT 1 FROM t WHERE VALUE(a) GROUP BY VALUE(b)", "SELECT 1 FROM t WHERE UPPER(a) GROUP BY UPPER(b)"},
		{"SELECT * FROM t NATURAL INNER JOIN u NATURAL STRAIGHT_JOIN v", "SELECT * FROM t NATURAL       JOIN u NATURAL JOIN          v"},
		{"SELECT abs(a AS x), instr(b 'p', 'q'), f(MIN(c) y) FROM t", "SELECT abs(a     ), instr(b    , 'q'), f(MIN(c)  ) FROM t"},
		{"SELECT CAST(a AS inet6), db.f(a x), abs('a' 'b') FROM t", ""},
		{"SELECT a FROM t WHERE a LIKE 'x' ESCAPE '!'", "SELECT a FROM t WHERE a =    'x' =      '!'"},
		{"SELECT 1; junk here", "SELECT 1;          "},
		{"CREATE TABLE t (g POINT, SPATIAL KEY (g))", "CREATE TABLE t (g BLOB ,         KEY (g))"},
		{"SET STATEMENT max_statement_time=1 FOR SELECT 1", "                                       SELECT 1"},
		{"SELECT a INTO v FROM t", "SELECT a        FROM t"},
		{"(SELECT a FROM t) UNION (SELECT 1) INTO @v", "(SELECT a FROM t) UNION (SELECT 1)        "},
		{"SELECT 1, 2 INTO rec.a, @v FROM t", "SELECT 1, 2                FROM t"},
		{"SELECT a INTO `v` FROM t", "SELECT a          FROM t"},
		{"CREATE TABLE t ((SELECT a FROM u) ORDER BY 1) LIMIT 2", "CREATE TABLE t   SELECT a FROM u  ORDER BY 1  LIMIT 2"},
		{"CREATE TABLE t (a INT) VALUES (1) UNION VALUES (2)", "CREATE TABLE t (a INT) SELECT (1) UNION SELECT (2)"},
		{"WITH c AS (SELECT 1 AS a) SELECT a INTO @v FROM c", "WITH c AS (SELECT 1 AS a) SELECT a         FROM c"},
		{"SELECT a FROM t WHERE a IS TRUE = 1", "SELECT a FROM t WHERE a         = 1"},
		{"SELECT * FROM t = a", "SELECT * FROM t   a"},
		{"SELECT * FROM JSON_TABLE('[]', '$[*]' COLUMNS (a INT PATH '$')) AS j", "SELECT * FROM (SELECT    '[]'                                 ) AS j"},
		{"DELETE FROM t RETURNING a", "DELETE FROM t            "},
		{"REPLACE INTO t VALUES (1) RETURNING a", "REPLACE INTO t VALUES (1)            "},
		{"REPLACE INTO t VALUES (1) RETURNING t.*, (SELECT b FROM u)", "INSERT  INTO t VALUES (1) RETURNING t.*, (SELECT b FROM u)"},
		{"REPLACE INTO t SELECT * FROM u WHERE a IN (SELECT (1) RETURNING", ""},
		{"SELECT CAST(a AS INT) FROM t", "SELECT CAST(a AS DEC) FROM t"},
		{"SELECT GROUP_CONCAT(a LIMIT 2) FROM t", "SELECT GROUP_CONCAT(a        ) FROM t"},
		{"EXPLAIN EXTENDED SELECT 1", "EXPLAIN          SELECT 1"},
		{"ANALYZE FORMAT=JSON SELECT 1", "                    SELECT 1"},
		{"LOCK TABLE t AS a WRITE", "LOCK TABLE t      WRITE"},
		{"SELECT PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY a) OVER () FROM t", "SELECT LAG            (0.5)                           OVER () FROM t"},
		{"CREATE OR REPLACE TABLE t (a INT COMPRESSED)", "CREATE            TABLE t (a INT           )"},
		{"SELECT * FROM t PROCEDURE ANALYSE()", "SELECT * FROM t                    "},
		{"VALUES (1), (2)", "SELECT (1), (2)"},
		{"SELECT a FROM t INTO OUTFILE '/x' FOR EXPORT", "SELECT a FROM t INTO OUTFILE '/x'           "},
		{"SELECT COLUMN_GET(a, 1 AS INT) FROM t", "SELECT COLUMN_GET(a, 1       ) FROM t"},
		{"SELECT 1 AS rank", "SELECT 1 AS xxxx"},
		{"SELECT 123456789012345678901234567890123456789012345678901234567890123", "SELECT 0                                                              "},
		{"SELECT a FROM t WHERE a = 1 AND b LIKE 'c' NOT LIKE 'd'", "SELECT a FROM t WHERE a = 1 AND b =    'c'     =    'd'"},
		{"CREATE VIEW v AS SELECT 1 WITH CHECK OPTION", "CREATE VIEW v AS SELECT 1                  "},
		{"SELECT a FROM t LOCK IN SHARE MODE NOWAIT", "SELECT a FROM t LOCK IN SHARE MODE       "},
		{"SELECT CAST(a AS INTERVAL DAY) FROM t", "SELECT CAST(a AS CHAR        ) FROM t"},
		{"UPDATE t SET row = 3 WHERE rank > 2 AND zq0 = 1", "UPDATE t SET zq1 = 3 WHERE zqq0 > 2 AND zq0 = 1"},
		{"SELECT a FROM t WHERE b = 1 WINDOW w AS (ORDER BY of ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)",
			"SELECT a FROM t WHERE b = 1 WINDOW w AS (ORDER BY z0 ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)"},
		{"DROP TEMPORARY SEQUENCE IF EXISTS s1, s2", "DROP           SEQUENCE IF EXISTS s1, s2"},
		{"CREATE OR REPLACE TEMPORARY SEQUENCE s", "CREATE                      SEQUENCE s"},
		{"ALTER TABLE IF EXISTS t RENAME t2", "ALTER TABLE           t RENAME t2"},
		{"ALTER TABLE t RENAME KEY IF EXISTS a TO b", "ALTER TABLE t RENAME KEY           a TO b"},
		{"CREATE TABLE t (a INT WITHOUT SYSTEM VERSIONING) WITH SYSTEM VERSIONING AS SELECT 1",
			"CREATE TABLE t (a INT                          )                        AS SELECT 1"},
		{"CREATE TABLE t (b INT CONSTRAINT c REFERENCES t2 (c))", "CREATE TABLE t (b INT              REFERENCES t2 (c))"},
		{"SET NAMES DEFAULT COLLATE latin1_bin", "SET NAMES DEFAULT                   "},
		{"WITH RECURSIVE c AS (SELECT 1 AS a) CYCLE a, b RESTRICT SELECT * FROM c", "WITH RECURSIVE c AS (SELECT 1 AS a)                     SELECT * FROM c"},
		{"SELECT * FROM t ORDER BY a FETCH FIRST ROW WITH TIES", "SELECT * FROM t ORDER BY a                          "},
		{"SELECT LAST_VALUE(@a:=@a+1, a) FROM t", "SELECT JSON_ARRAY(@a:=@a+1, a) FROM t"},
		{"DELETE FROM t FOR PORTION OF p FROM '2000-01-01' TO '2000-01-02'", "DELETE FROM t                                                   "},
		{"DO setval(t1, 12, 1)", "DO setval(t1, 12   )"},
		{"CREATE TABLE t (LIKE t2) WITH SYSTEM VERSIONING", ""},
		{"SELECT LAST_VALUE(a) OVER (ORDER BY a) FROM t", ""},
		{"DELETE FROM t FOR PORTION OF p FROM (SELECT 1) TO 2", ""},
		{"SELECT * FROM t WHERE MATCH a, t.b AGAINST ('x' IN BOOLEAN MODE) > 0",
			"SELECT * FROM t WHERE FIELD(a, t.b )     + ('x'                ) > 0"},
		{"SELECT 0 < MATCH (a) AGAINST ((SELECT c FROM u) WITH QUERY EXPANSION) FROM t",
			"SELECT 0 < FIELD (a)       + ((SELECT c FROM u)                     ) FROM t"},
		{"SELECT MATCH\na AGAINST ('x') > 0 FROM t", ""},
		{"INSERT INTO t VALUES (1, IGNORE)", "INSERT INTO t VALUES (1, PI()  )"},
		{"UPDATE t SET b = IGNORE WHERE a = 1", "UPDATE t SET b = PI()   WHERE a = 1"},
		{"INSERT IGNORE INTO t SELECT * FROM u IGNORE INDEX (a)", ""},
		{"CREATE TABLE t (a INT DEFAULT ((SELECT b FROM u)))", "CREATE TABLE t (a INT CHECK   ((SELECT b FROM u)))"},
		{"ALTER TABLE t ADD c INT NOT NULL DEFAULT(@v + ?)", "ALTER TABLE t ADD c INT NOT NULL CHECK  (@v + ?)"},
		{"ALTER TABLE t ALTER a SET DEFAULT (?)", ""},
		{"CREATE TABLE t (a INT DEFAULT (1 + 2))", ""},
		{"CREATE TABLE t (a INT DEFAULT (SELECT 1))", ""},
		{"CREATE TABLE t (a INT DEFAULT @v, b TEXT DEFAULT @@sql_mode NOT NULL)", "CREATE TABLE t (a INT DEFAULT 0 , b TEXT DEFAULT 0          NOT NULL)"},
		{"CREATE TABLE t (a INT DEFAULT @v:=(SELECT b FROM u))", ""},
		{"CREATE TABLE t (a INT DEFAULT @v IN (SELECT b FROM u))", ""},
		{"SELECT CAST(a AS CHAR(10) CHARACTER SET latin1 COLLATE DEFAULT) FROM t",
			"SELECT CAST(a AS CHAR(10) CHARACTER SET latin1                ) FROM t"},
		{"SELECT CONVERT(a, NCHAR(4294967295) UNICODE BINARY) FROM t", "SELECT CONVERT(a, CHAR (4294967295)         BINARY) FROM t"},
		{"SELECT a, NCHAR(5) FROM t", ""},
		{"SELECT a AS nchar FROM t", ""},
		{"SELECT ROW(1, 2) = ROW(a, b) FROM t", ""},
		{"ROLLBACK WORK TO SAVEPOINT a", "ROLLBACK      TO SAVEPOINT a"},
		{"COMMIT WORK AND NO CHAIN", "COMMIT      AND NO CHAIN"},
		{"SELECT 1", ""},
		{"SELECT a FROM t LIMIT @x", ""},
	}
	for _, c := range cases {
		m, ok := mask(c.sql, w)
		if c.want == "" {
			if ok {
				t.Errorf("Mask(%q) = %q, want nothing masked", c.sql, m.Text)
			}
			continue
		}
		if !ok || m.Text != c.want {
			t.Errorf("Mask(%q) = %q, %v, want %q", c.sql, m.Text, ok, c.want)
		}
	}
}

// TestMaskCollation reads a collation the parser does not know as one it
// does, of the same character set when its name starts with one; not in a
// SET statement.
func TestMaskCollation(t *testing.T) {
	w := testWords()
	w.Collation = func(name string) bool { return name == "binary" || name == "utf8mb4_bin" || name == "latin1_bin" }
	for sql, want := range map[string]string{
		"SELECT a COLLATE utf8mb4_test_ci FROM t":          "SELECT a COLLATE utf8mb4_bin     FROM t",
		"SELECT a FROM t ORDER BY a COLLATE uca1400_as_cs": "SELECT a FROM t ORDER BY a COLLATE binary       ",
		"CREATE TABLE t (a TEXT COLLATE = 'latin1_x_ci')":  "CREATE TABLE t (a TEXT COLLATE = latin1_bin   )",
		"SELECT a COLLATE latin1_bin FROM t":               "",
		"SELECT a COLLATE koi8r FROM t":                    "",
		"SET NAMES utf8mb4 COLLATE utf8mb4_test_ci":        "",
	} {
		m, ok := mask(sql, w)
		if got := m.Text; !ok && want != "" || ok && got != want {
			t.Errorf("Mask(%q) = %q, %v; want %q", sql, got, ok, want)
		}
	}
}
