package rewrite

import "testing"

// TestReplaceReturning reads REPLACE … RETURNING with a list the parser
// takes only after INSERT (qualifiers, calls, subqueries): the statement
// stays a REPLACE, and every table it names, a subquery's in the list
// included, is rewritten; where the REPLACE cannot be given back (IGNORE,
// a routine's body), the text stays refused.
func TestReplaceReturning(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	r := mapResolver{{DB: "app", Name: "t"}: {DB: "sb_app", Name: "t"}, {DB: "app", Name: "u"}: {DB: "sb_app", Name: "u"}}
	wantRewrites(t, e, opts, r, []rewriteCase{
		{"REPLACE INTO t VALUES (1, 'a') RETURNING id, (SELECT v FROM u WHERE id = 1)",
			"REPLACE INTO `sb_app`.`t` VALUES (1, 'a') RETURNING id, (SELECT v FROM `sb_app`.`u` WHERE id = 1)"},
		{"REPLACE t SET id = 1 RETURNING t.*, MAX(id), id + id AS s", "REPLACE `sb_app`.`t` SET id = 1 RETURNING t.*, MAX(id), id + id AS s"},
		{"REPLACE LOW_PRIORITY INTO t SELECT * FROM u WHERE id > 0 RETURNING (SELECT COUNT(*) FROM app.u)",
			"REPLACE LOW_PRIORITY INTO `sb_app`.`t` SELECT * FROM `sb_app`.`u` WHERE id > 0 RETURNING (SELECT COUNT(*) FROM `sb_app`.`u`)"},
		{"REPLACE INTO t VALUES (1) RETURNING id; REPLACE INTO t VALUES (2) RETURNING UPPER(v)",
			"REPLACE INTO `sb_app`.`t` VALUES (1) RETURNING id; REPLACE INTO `sb_app`.`t` VALUES (2) RETURNING UPPER(v)"},
	})
	for _, sql := range []string{"REPLACE INTO t VALUES (1) RETURNING t.*", "SELECT 1; REPLACE INTO t SET id = 1 RETURNING UPPER(v)"} {
		a := e.Analyze(sql, opts)
		if last := a.Statements[len(a.Statements)-1]; last.Kind != KindReplace || len(last.Writes) != 1 {
			t.Errorf("%q: Kind %q, Writes %v, want a REPLACE of t", sql, last.Kind, last.Writes)
		}
	}
	wantRefused(t, e, opts, r,
		"REPLACE IGNORE INTO t VALUES (1) RETURNING t.*",
		"REPLACE INTO t VALUES (1) ON DUPLICATE KEY UPDATE id = 2 RETURNING t.*",
	)
	// A routine's body is read statement by statement: its REPLACE too.
	wantRewrites(t, e, opts, sandboxRoutines{}, []rewriteCase{
		{"CREATE PROCEDURE p() REPLACE INTO t VALUES (1) RETURNING (SELECT v FROM u)",
			"CREATE PROCEDURE `sb_app`.`p`() REPLACE INTO `sb_app`.`t` VALUES (1) RETURNING (SELECT v FROM `sb_app`.`u`)"},
	})
}
