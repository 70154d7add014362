package rewrite

import "testing"

// TestCastCharTypes reads the character types of CAST and CONVERT the
// parser does not take (NCHAR, UNICODE, BYTE, COLLATE DEFAULT): the
// tables are rewritten around them, the cast's operand read in its place;
// NCHAR( outside a cast, possibly a stored function's call, stays refused.
func TestCastCharTypes(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	r := mapResolver{{DB: "app", Name: "t"}: {DB: "sb_app", Name: "t"}, {DB: "app", Name: "u"}: {DB: "sb_app", Name: "u"}}
	wantRewrites(t, e, opts, r, []rewriteCase{
		{"SELECT CAST((SELECT b FROM u) AS CHAR COLLATE DEFAULT) FROM t",
			"SELECT CAST((SELECT b FROM `sb_app`.`u`) AS CHAR COLLATE DEFAULT) FROM `sb_app`.`t`"},
		{"SELECT CONVERT(t.a, NCHAR(4294967295)), CAST(a AS CHAR(3) UNICODE) FROM t",
			"SELECT CONVERT(t.a, NCHAR(4294967295)), CAST(a AS CHAR(3) UNICODE) FROM `sb_app`.`t`"},
		{"CREATE TABLE t AS SELECT CAST(a AS CHAR(10) CHARSET latin1 COLLATE DEFAULT) AS c FROM u",
			"CREATE TABLE `sb_app`.`t` AS SELECT CAST(a AS CHAR(10) CHARSET latin1 COLLATE DEFAULT) AS c FROM `sb_app`.`u`"},
	})
	wantRefused(t, e, opts, r,
		"SELECT a, NCHAR(5) FROM t",
	)
}
