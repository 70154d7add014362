package rewrite

import (
	"slices"
	"testing"
)

// TestSetStatementVars reads SET STATEMENT … FOR with the variables added
// to the ones it may set (keep_files_on_create, old_passwords,
// log_queries_not_using_indexes), the statement's tables rewritten; one
// setting binlog_format or last_insert_id stays refused.
func TestSetStatementVars(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	r := sandboxApp()
	wantRewrites(t, e, opts, r, []rewriteCase{
		{"SET STATEMENT keep_files_on_create=OFF FOR CREATE TABLE t (a INT) ENGINE=MyISAM",
			"SET STATEMENT keep_files_on_create=OFF FOR CREATE TABLE `sb_app`.`t` (a INT) ENGINE=MyISAM"},
		{"set statement OLD_PASSWORDS = 1 for select password('x') from t", "set statement OLD_PASSWORDS = 1 for select password('x') from `sb_app`.`t`"},
		{"SET STATEMENT log_queries_not_using_indexes=1, sort_buffer_size=200000 FOR SELECT * FROM t2",
			"SET STATEMENT log_queries_not_using_indexes=1, sort_buffer_size=200000 FOR SELECT * FROM `sb_app`.`t2`"},
	})
	st := e.Analyze("SET STATEMENT old_passwords=1, keep_files_on_create=ON FOR SELECT 1", opts).Statements[0]
	if !slices.Equal(st.SetStatement, []string{"old_passwords", "keep_files_on_create"}) {
		t.Errorf("SET STATEMENT sets %v", st.SetStatement)
	}
	wantRefused(t, e, opts, r,
		"SET STATEMENT sort_buffer_size=150000, binlog_format=row FOR SELECT * FROM t",
		"SET STATEMENT last_insert_id=112 FOR INSERT INTO t VALUES (NULL)",
		"SET STATEMENT old_passwords=(SELECT 1 FROM t2) FOR SELECT 1 FROM t",
	)
}
