package rewrite

import "testing"

// TestMaintenance: table maintenance statements (ALTER TABLE … ANALYZE
// PARTITION included) are named whichever reader read them; other
// statements, ANALYZE of a statement included, are not.
func TestMaintenance(t *testing.T) {
	e := NewEngine(0)
	for _, c := range []struct {
		sql  string
		want []string
	}{
		{"ANALYZE TABLE t1, t2", []string{"ANALYZE TABLE"}},
		{"analyze no_write_to_binlog table t1", []string{"ANALYZE TABLE"}},
		{"ANALYZE TABLE t1 PERSISTENT FOR ALL", []string{"ANALYZE TABLE"}},
		{"/* c */ check table t1 extended", []string{"CHECK TABLE"}},
		{"OPTIMIZE LOCAL TABLE t1", []string{"OPTIMIZE TABLE"}},
		{"REPAIR TABLE t1 QUICK", []string{"REPAIR TABLE"}},
		{"CHECKSUM TABLE t1, t2", []string{"CHECKSUM TABLE"}},
		{"SELECT 1; ANALYZE TABLE t1", []string{"", "ANALYZE TABLE"}},
		{"ALTER TABLE t1 ANALYZE PARTITION p0, p1", []string{"ANALYZE PARTITION"}},
		{"alter online table app.t1 analyze partition all", []string{"ANALYZE PARTITION"}},
		{"ALTER TABLE t1 CHECK PARTITION p0", []string{"CHECK PARTITION"}},
		{"alter table t1 check partition all for upgrade", []string{"CHECK PARTITION"}},
		{"ALTER TABLE `t1` OPTIMIZE PARTITION p0", []string{"OPTIMIZE PARTITION"}},
		{"ALTER IGNORE TABLE t1 REPAIR PARTITION p0", []string{"REPAIR PARTITION"}},
		{"ALTER TABLE t1 ADD COLUMN c INT", []string{""}},
		{"ALTER TABLE t1 REBUILD PARTITION p0", []string{""}},
		{"ANALYZE SELECT * FROM t1", []string{""}},
		{"SELECT * FROM t1", []string{""}},
	} {
		a := e.Analyze(c.sql, Options{DB: "app"})
		if len(a.Statements) != len(c.want) {
			t.Errorf("%q: %d statements, want %d", c.sql, len(a.Statements), len(c.want))
			continue
		}
		for i, w := range c.want {
			if got := a.Maintenance(i); string(got) != w {
				t.Errorf("%q: statement %d is %q, want %q", c.sql, i, got, w)
			}
		}
	}
	if got := e.Analyze("CHECK TABLE t1", Options{DB: "app"}).Maintenance(1); got != "" {
		t.Errorf("past the last statement: %q", got)
	}
}
