package seekdbshim

import (
	"reflect"
	"testing"
)

func TestParseFork(t *testing.T) {
	for _, tc := range []struct {
		q        string
		src, dst tableRef
		ok       bool
	}{
		{"FORK TABLE a.b TO c.d", tableRef{"a", "b"}, tableRef{"c", "d"}, true},
		{"fork table `a`.`b` to `c`.`d`;", tableRef{"a", "b"}, tableRef{"c", "d"}, true},
		{"  Fork\n Table src To dst ;; ", tableRef{"", "src"}, tableRef{"", "dst"}, true},
		{"/* hint */ FORK TABLE `we``ird`.t TO x -- trailing\n", tableRef{"we`ird", "t"}, tableRef{"", "x"}, true},
		{"FORK TABLE a . b TO `c` . d", tableRef{"a", "b"}, tableRef{"c", "d"}, true},
		{"FORK TABLE a.b TO c.d; SELECT 1", tableRef{}, tableRef{}, false},
		{"FORK TABLE a.b c.d", tableRef{}, tableRef{}, false},
		{"FORK DATABASE a TO b", tableRef{}, tableRef{}, false},
		{"SELECT 'FORK TABLE a TO b'", tableRef{}, tableRef{}, false},
		{"FORK TABLE a.b.c TO d", tableRef{}, tableRef{}, false},
	} {
		src, dst, ok := parseFork(tc.q)
		if ok != tc.ok || ok && (src != tc.src || dst != tc.dst) {
			t.Errorf("parseFork(%q) = %+v, %+v, %v; want %+v, %+v, %v", tc.q, src, dst, ok, tc.src, tc.dst, tc.ok)
		}
	}
}

func TestDDLTargets(t *testing.T) {
	for _, tc := range []struct {
		q      string
		tables []tableRef
		dbs    []string
	}{
		{"ALTER TABLE t ADD COLUMN c INT", []tableRef{{"", "t"}}, nil},
		{"alter online ignore table if exists `d`.`t` drop x", []tableRef{{"d", "t"}}, nil},
		{"DROP TABLE IF EXISTS a, d.b, `c` CASCADE", []tableRef{{"", "a"}, {"d", "b"}, {"", "c"}}, nil},
		{"DROP TEMPORARY TABLE t", []tableRef{{"", "t"}}, nil},
		{"RENAME TABLE a TO b, d.c WAIT 3 TO d.e", []tableRef{{"", "a"}, {"", "b"}, {"d", "c"}, {"d", "e"}}, nil},
		{"TRUNCATE t", []tableRef{{"", "t"}}, nil},
		{"truncate table d.t", []tableRef{{"d", "t"}}, nil},
		{"CREATE UNIQUE INDEX i ON d.t (a, b)", []tableRef{{"d", "t"}}, nil},
		{"CREATE OR REPLACE INDEX IF NOT EXISTS i USING BTREE ON t (a)", []tableRef{{"", "t"}}, nil},
		{"DROP INDEX IF EXISTS i ON `t`", []tableRef{{"", "t"}}, nil},
		{"CREATE OR REPLACE TABLE d.t (a INT)", []tableRef{{"d", "t"}}, nil},
		{"CREATE TABLE IF NOT EXISTS t LIKE s", []tableRef{{"", "t"}}, nil},
		{"DROP DATABASE IF EXISTS d", nil, []string{"d"}},
		{"SELECT 1; ALTER TABLE x ENGINE=InnoDB", []tableRef{{"", "x"}}, nil},
		{"/*!40101 ALTER TABLE x */", []tableRef{{"", "x"}}, nil},
		{"INSERT INTO t VALUES (1)", nil, nil},
		{"UPDATE t SET a = 'ALTER TABLE t'", nil, nil},
		{"SELECT * FROM t", nil, nil},
		{"DROP VIEW v", nil, nil},
	} {
		tables, dbs := ddlTargets(tc.q)
		if !reflect.DeepEqual(tables, tc.tables) || !reflect.DeepEqual(dbs, tc.dbs) {
			t.Errorf("ddlTargets(%q) = %+v, %q; want %+v, %q", tc.q, tables, dbs, tc.tables, tc.dbs)
		}
	}
}

func TestRewriteVersion(t *testing.T) {
	const v = "5.7.25-OceanBase seekdb-v1.1.0.0"
	const lit = "'" + v + "'"
	for _, tc := range []struct{ q, want string }{
		{"SELECT VERSION()", "SELECT " + lit + " AS `VERSION()`"},
		{"select  version ( );", "select  " + lit + " AS `version ( )`;"},
		{"SELECT @@version", "SELECT " + lit + " AS `@@version`"},
		{"SELECT @@VERSION, 1", "SELECT " + lit + " AS `@@VERSION`, 1"},
		{"SELECT 1, @@global.version FROM dual", "SELECT 1, " + lit + " AS `@@global.version` FROM dual"},
		{"SELECT VERSION() AS v", "SELECT " + lit + " AS v"},
		{"SELECT version() v", "SELECT " + lit + " v"},
		{"SELECT CONCAT('x', VERSION())", "SELECT CONCAT('x', " + lit + ")"},
		{"SELECT * FROM t WHERE VERSION() LIKE '5%'", "SELECT * FROM t WHERE " + lit + " LIKE '5%'"},
		{"SELECT (SELECT VERSION())", "SELECT (SELECT " + lit + " AS `VERSION()`)"},
		{"SELECT DISTINCT @@session.version", "SELECT DISTINCT " + lit + " AS `@@session.version`"},
		// Left alone:
		{"SELECT @@version_comment", "SELECT @@version_comment"},
		{"SELECT version FROM t", "SELECT version FROM t"},
		{"SELECT 'VERSION()'", "SELECT 'VERSION()'"},
		{"SELECT t.version() FROM t", "SELECT t.version() FROM t"},
		{"SELECT @version", "SELECT @version"},
		{"SHOW VARIABLES LIKE 'version'", "SHOW VARIABLES LIKE 'version'"},
	} {
		got, changed := rewriteVersion(tc.q, v)
		if got != tc.want || changed != (tc.q != tc.want) {
			t.Errorf("rewriteVersion(%q) = %q, %v; want %q", tc.q, got, changed, tc.want)
		}
	}
	if got, _ := rewriteVersion("SELECT VERSION()", `it's \ odd`); got != `SELECT 'it\'s \\ odd' AS `+"`VERSION()`" {
		t.Errorf("quoting: %q", got)
	}
}

func TestParseAutoIncrement(t *testing.T) {
	for create, want := range map[string]uint64{
		"CREATE TABLE `t` (\n  `id` int NOT NULL AUTO_INCREMENT,\n  PRIMARY KEY (`id`)\n) ENGINE=InnoDB AUTO_INCREMENT=42 DEFAULT CHARSET=utf8mb4": 42,
		"CREATE TABLE `t` (\n  `id` int NOT NULL AUTO_INCREMENT\n) ENGINE=InnoDB":                                                                  0,
		"CREATE TABLE `t` (\n  `a` int COMMENT 'x) y'\n) ENGINE=InnoDB AUTO_INCREMENT=7 COMMENT='z)'":                                              7,
		"CREATE TABLE `t` (\n  `a` int\n) ENGINE=InnoDB AUTO_INCREMENT=9\n PARTITION BY HASH (`a`)\nPARTITIONS 2":                                  9,
	} {
		if got := parseAutoIncrement(create); got != want {
			t.Errorf("parseAutoIncrement(%q) = %d, want %d", create, got, want)
		}
	}
}
