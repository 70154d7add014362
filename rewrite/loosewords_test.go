package rewrite

import "testing"

// TestLooseWords reads DDL naming a sandboxed table's name where the
// grammar fixes it as something else: a window frame's PRECEDING and
// FOLLOWING, an aggregate the parser reads with syntax of its own, a
// database-qualified call; the same names in a MERGE table's UNION stay
// refused.
func TestLooseWords(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	r := sandboxApp()
	for _, n := range []string{"preceding", "following", "stddev", "app"} {
		r[Table{DB: "app", Name: n}] = Table{DB: "sb_app", Name: n}
	}
	wantRewrites(t, e, opts, r, []rewriteCase{
		{"CREATE TABLE t AS SELECT SUM(a) OVER (ORDER BY a ROWS BETWEEN 2 PRECEDING AND UNBOUNDED FOLLOWING) AS s, STDDEV(a) FROM t2",
			"CREATE TABLE `sb_app`.`t` AS SELECT SUM(a) OVER (ORDER BY a ROWS BETWEEN 2 PRECEDING AND UNBOUNDED FOLLOWING) AS s, STDDEV(a) FROM `sb_app`.`t2`"},
	})
	for _, n := range []string{"b", "d"} {
		r[Table{DB: "app", Name: n}] = Table{DB: "sb_app", Name: n}
	}
	wantRewrites(t, e, opts, r, []rewriteCase{
		{"CREATE VIEW v1 AS SELECT {d '2001-01-01'} FROM t FORCE KEY FOR ORDER BY (PRIMARY, b) ORDER BY a",
			"CREATE VIEW `sb_app`.`v1` AS SELECT {d '2001-01-01'} FROM `sb_app`.`t` FORCE KEY FOR ORDER BY (PRIMARY, b) ORDER BY a"},
	})
	wantRefused(t, e, opts, r,
		"CREATE TABLE t (a INT) ENGINE=MERGE UNION=(t2, preceding)",
		"CREATE TABLE t (a INT) ENGINE=MERGE UNION=(b)",
		"CREATE VIEW v1 AS SELECT app.f() FROM t2",
	)
}

// TestDefaultQualifier rewrites DEFAULT(t.col)'s qualifier with the
// table's (the parser's walk skips DEFAULT's column), in a view's query
// too.
func TestDefaultQualifier(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	r := mapResolver{Table{DB: "app", Name: "t"}: Table{DB: "sb_app", Name: "s1_t"}, Table{DB: "app", Name: "v"}: Table{DB: "sb_app", Name: "v"}}
	wantRewrites(t, e, opts, r, []rewriteCase{
		{"SELECT DEFAULT(t.pk), t.a FROM t", "SELECT DEFAULT(`s1_t`.pk), `s1_t`.a FROM `sb_app`.`s1_t`"},
		{"CREATE VIEW v AS SELECT DEFAULT(t.pk) FROM t", "CREATE VIEW `sb_app`.`v` AS SELECT DEFAULT(`s1_t`.pk) AS `DEFAULT(t.pk)` FROM `sb_app`.`s1_t`"},
	})
}

// TestCreateOrReplaceDatabase reads CREATE OR REPLACE DATABASE as DDL of
// its own kind, never as a CREATE DATABASE (it drops the database it
// replaces), naming its database and no table.
func TestCreateOrReplaceDatabase(t *testing.T) {
	e := NewEngine(0)
	for _, sql := range []string{"create or replace database t", "CREATE OR REPLACE SCHEMA IF NOT EXISTS t CHARACTER SET latin1"} {
		st := e.Analyze(sql, Options{DB: "app", Server: maria1011}).Statements[0]
		if st.Kind != KindCreateOrReplaceDatabase || st.Class != ClassDDL || st.Database != "t" || len(st.Writes) != 0 {
			t.Errorf("%s: %s %s %q", sql, st.Kind, st.Class, st.Database)
		}
	}
}

// TestConvertPartition reads both tables of ALTER TABLE … CONVERT, each
// written; a partition's values holding anything but literals stay unread.
func TestConvertPartition(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	r := sandboxApp()
	wantRewrites(t, e, opts, r, []rewriteCase{
		{"ALTER TABLE t CONVERT PARTITION p0 TO TABLE t2", "ALTER TABLE `sb_app`.`t` CONVERT PARTITION p0 TO TABLE `sb_app`.`t2`"},
		{"ALTER TABLE t CONVERT TABLE t2 TO PARTITION p1 VALUES IN (1, 2)",
			"ALTER TABLE `sb_app`.`t` CONVERT TABLE `sb_app`.`t2` TO PARTITION p1 VALUES IN (1, 2)"},
	})
	st := e.Analyze("ALTER TABLE t CONVERT TABLE t2 TO PARTITION p1 VALUES IN (1)", opts).Statements[0]
	if len(st.Writes) != 2 || st.Class != ClassDDL {
		t.Errorf("CONVERT TABLE: %+v", st)
	}
	wantRefused(t, e, opts, r, "ALTER TABLE t CONVERT TABLE t2 TO PARTITION p1 VALUES IN ((SELECT a FROM s1))")
}
