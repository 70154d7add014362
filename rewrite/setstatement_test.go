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

// TestSetStatementWords reads SET STATEMENT … FOR a statement the engine
// reads from its words (BACKUP LOCK, LOAD INDEX, ANALYZE … PERSISTENT FOR),
// the settings kept; a prefix setting sql_mode before a statement that
// carries a text the server reads later, under that mode (PREPARE … FROM,
// EXECUTE IMMEDIATE), stays refused: under NO_BACKSLASH_ESCAPES a '\' ends
// the string and the subquery after it reads t.
func TestSetStatementWords(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	r := sandboxApp()
	wantRewrites(t, e, opts, r, []rewriteCase{
		{"SET STATEMENT max_statement_time=180 FOR BACKUP LOCK t", "SET STATEMENT max_statement_time=180 FOR BACKUP LOCK `sb_app`.`t`"},
		{"SET STATEMENT max_statement_time=180 FOR LOAD INDEX INTO CACHE t", "SET STATEMENT max_statement_time=180 FOR LOAD INDEX INTO CACHE `sb_app`.`t`"},
		{"SET STATEMENT histogram_type=JSON_HB FOR ANALYZE TABLE t PERSISTENT FOR ALL",
			"SET STATEMENT histogram_type=JSON_HB FOR ANALYZE TABLE `sb_app`.`t` PERSISTENT FOR ALL"},
	})
	st := e.Analyze("SET STATEMENT lock_wait_timeout=0 FOR BACKUP STAGE START", opts).Statements[0]
	if st.Kind != KindBackupStage || !slices.Equal(st.SetStatement, []string{"lock_wait_timeout"}) {
		t.Errorf("SET STATEMENT … FOR BACKUP STAGE: %s, sets %v", st.Kind, st.SetStatement)
	}
	// The server refuses these variables there (1971) before it runs
	// anything: read, the statement rewritten, the server's error.
	wantRewrites(t, e, opts, r, []rewriteCase{
		{"SET STATEMENT autocommit=0 FOR INSERT INTO t VALUES (1)", "SET STATEMENT autocommit=0 FOR INSERT INTO `sb_app`.`t` VALUES (1)"},
	})
	wantRefused(t, e, opts, r,
		`SET STATEMENT sql_mode='NO_BACKSLASH_ESCAPES' FOR PREPARE s FROM 'SELECT ''a\\'', (SELECT a FROM t) AS x -- '''`,
		`SET STATEMENT sql_mode='NO_BACKSLASH_ESCAPES' FOR EXECUTE IMMEDIATE 'SELECT ''a\\'', (SELECT a FROM t) AS x -- '''`,
		"SET STATEMENT binlog_format=row FOR BACKUP LOCK t",
		"SET STATEMENT default_storage_engine=MERGE FOR CREATE TABLE t (a INT)",
		"SET STATEMENT default_storage_engine='FEDERATED' FOR CREATE TABLE t (a INT)",
	)
	// EXECUTE of a statement prepared before runs what its PREPARE read:
	// the prefix's sql_mode reads no text.
	if st := e.Analyze("set statement sql_mode = '' for execute my_insert using @a, @b", opts).Statements[0]; st.Class != ClassSession || st.Handle != "my_insert" {
		t.Errorf("SET STATEMENT sql_mode … FOR EXECUTE s: read as %q %s", st.Kind, st.Class)
	}
	wantRewrites(t, e, opts, r, []rewriteCase{
		{"SET STATEMENT default_storage_engine='MyISAM' FOR CREATE TABLE t (a INT)",
			"SET STATEMENT default_storage_engine='MyISAM' FOR CREATE TABLE `sb_app`.`t` (a INT)"},
	})
}

// TestLoadXML reads LOAD XML INFILE's table, written, and refuses it for
// its file; LOCAL and a SET holding a subquery stay unread.
func TestLoadXML(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	st := e.Analyze("LOAD XML INFILE 'f' INTO TABLE t ROWS IDENTIFIED BY '<r>' IGNORE 1 ROWS (a, @b) SET c = @b", opts).Statements[0]
	if st.Kind != KindLoadXML || st.Class != ClassWrite || len(st.Writes) != 1 || st.Writes[0].Name != "t" || st.Outside == "" {
		t.Errorf("LOAD XML: %+v", st)
	}
	for _, sql := range []string{"LOAD XML LOCAL INFILE 'f' INTO TABLE t", "LOAD XML INFILE 'f' INTO TABLE t SET c = (SELECT a FROM t2)"} {
		if st := e.Analyze(sql, opts).Statements[0]; st.Class != ClassUnparseable {
			t.Errorf("%s read as %s", sql, st.Kind)
		}
	}
}
