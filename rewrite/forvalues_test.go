package rewrite

import "testing"

// TestForValues reads a compound statement's FOR v IN (VALUES (…), …) DO
// loop, the rows' subqueries and the loop's statements rewritten.
func TestForValues(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	r := sandboxApp()
	wantRewrites(t, e, opts, r, []rewriteCase{
		{"BEGIN NOT ATOMIC DECLARE v INT DEFAULT 0; FOR a IN (VALUES (7)) DO SET v = v + 1; END FOR; SELECT v; END",
			"BEGIN NOT ATOMIC DECLARE v INT DEFAULT 0; FOR a IN (VALUES (7)) DO SET v = v + 1; END FOR; SELECT v; END"},
		{"BEGIN NOT ATOMIC FOR a IN (VALUES ((SELECT MAX(x) FROM t)), (2)) DO UPDATE t2 SET b = a.1; END FOR; END",
			"BEGIN NOT ATOMIC FOR a IN (VALUES ((SELECT MAX(x) FROM `sb_app`.`t`)), (2)) DO UPDATE `sb_app`.`t2` SET b = a.1; END FOR; END"},
	})
}
