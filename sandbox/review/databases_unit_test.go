package review

import (
	"strings"
	"testing"
)

// TestDatabaseDDL: the databases a sandbox made or dropped are written
// drops first, then creates, whatever their order; DIFF shows a row of
// each, its DDL joined.
func TestDatabaseDDL(t *testing.T) {
	dbs := []dbDiff{
		{name: "made", change: "database created", create: "CREATE DATABASE `made` CHARACTER SET `latin1` COLLATE `latin1_swedish_ci`"},
		{name: "again", change: "database recreated", drop: "DROP DATABASE IF EXISTS `again`", create: "CREATE DATABASE `again` CHARACTER SET `utf8mb4` COLLATE `utf8mb4_bin`"},
		{name: "gone", change: "database dropped", drop: "DROP DATABASE IF EXISTS `gone`"},
	}
	got := strings.Join(databaseDDL(dbs), "\n")
	want := "DROP DATABASE IF EXISTS `again`\nDROP DATABASE IF EXISTS `gone`\n" +
		"CREATE DATABASE `made` CHARACTER SET `latin1` COLLATE `latin1_swedish_ci`\nCREATE DATABASE `again` CHARACTER SET `utf8mb4` COLLATE `utf8mb4_bin`"
	if got != want {
		t.Errorf("databaseDDL:\n%s\nwant\n%s", got, want)
	}
	rows := databaseRows(dbs, false)
	if len(rows) != 3 || *rows[1][4] != "DROP DATABASE IF EXISTS `again`;\nCREATE DATABASE `again` CHARACTER SET `utf8mb4` COLLATE `utf8mb4_bin`" ||
		*rows[2][4] != "DROP DATABASE IF EXISTS `gone`" {
		t.Errorf("DIFF rows: %v", rows)
	}
	sum := databaseRows(dbs, true)
	if len(sum) != 3 || *sum[0][1] != "database created" || *sum[0][7] != "database" {
		t.Errorf("DIFF SUMMARY rows: %v", sum)
	}
}

// TestCheckDatabases: a promote that drops a database production has, or
// makes one production has made since, needs STRATEGY OURS.
func TestCheckDatabases(t *testing.T) {
	for _, c := range []struct {
		dd       dbDiff
		strategy string
		refused  string
	}{
		{dbDiff{name: "d", change: "database created"}, "FAIL", ""},
		{dbDiff{name: "d", change: "database created", prodHas: true}, "FAIL", "production has one of that name now"},
		{dbDiff{name: "d", change: "database created", prodHas: true}, "OURS", ""},
		{dbDiff{name: "d", change: "database dropped", prodHas: true}, "THEIRS", "STRATEGY OURS drops it anyway"},
		{dbDiff{name: "d", change: "database recreated", prodHas: true}, "FAIL", "STRATEGY OURS drops it anyway"},
		{dbDiff{name: "d", change: "database dropped"}, "FAIL", ""}, // production dropped it too
	} {
		p := &promotion{strategy: c.strategy, dbs: []dbDiff{c.dd}}
		err := p.checkDatabases()
		if c.refused == "" && err != nil || c.refused != "" && (err == nil || !strings.Contains(err.Error(), c.refused)) {
			t.Errorf("%s %+v: %v, want %q", c.strategy, c.dd, err, c.refused)
		}
	}
}
