package rewrite

import "testing"

// sandboxApp maps app's tables t, t2, s1, s2, v1 and v2 to sb_app's.
func sandboxApp() mapResolver {
	r := mapResolver{}
	for _, n := range []string{"t", "t2", "s1", "s2", "v1", "v2"} {
		r[Table{DB: "app", Name: n}] = Table{DB: "sb_app", Name: n}
	}
	return r
}

// TestTemporarySequences reads DROP TEMPORARY SEQUENCE and CREATE
// TEMPORARY SEQUENCE with the sequences rewritten, and SETVAL's third and
// fourth arguments with its sequence rewritten; the DROP is temporary DDL
// (it leaves the transaction open), the CREATE is not (MariaDB commits at
// it).
func TestTemporarySequences(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	r := sandboxApp()
	wantRewrites(t, e, opts, r, []rewriteCase{
		{"DROP TEMPORARY SEQUENCE IF EXISTS s1, s2", "DROP TEMPORARY SEQUENCE IF EXISTS `sb_app`.`s1`, `sb_app`.`s2`"},
		{"drop temporary sequence s1,app.s2", "drop temporary sequence `sb_app`.`s1`,`sb_app`.`s2`"},
		{"CREATE TEMPORARY SEQUENCE s1", "CREATE TEMPORARY SEQUENCE `sb_app`.`s1`"},
		{"CREATE OR REPLACE TEMPORARY SEQUENCE s1 START WITH 3", "CREATE OR REPLACE TEMPORARY SEQUENCE `sb_app`.`s1` START WITH 3"},
		{"DO setval(s1, 12, 1)", "DO setval(`sb_app`.`s1`, 12, 1)"},
		{"SELECT SETVAL(app.s1, -12, 1, TRUE)", "SELECT SETVAL(`sb_app`.`s1`, -12, 1, TRUE)"},
	})
	if st := e.Analyze("DROP TEMPORARY SEQUENCE s1", opts).Statements[0]; !st.Temporary || st.Kind != KindDropSequence {
		t.Errorf("DROP TEMPORARY SEQUENCE read as %q, temporary %v", st.Kind, st.Temporary)
	}
	if st := e.Analyze("CREATE TEMPORARY SEQUENCE s1", opts).Statements[0]; st.Temporary || st.Kind != KindCreateSequence {
		t.Errorf("CREATE TEMPORARY SEQUENCE read as %q, temporary %v", st.Kind, st.Temporary)
	}
	wantRefused(t, e, opts, r,
		"DROP TEMPORARY SEQUENCE s1, (SELECT 1)",
		"SELECT SETVAL(s1, 12, (SELECT 1 FROM t))",
		"SELECT SETVAL(s1, 12, a)",
	)
}
