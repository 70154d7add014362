package forker

import (
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/sqlname"
)

func testCapture(transactional bool) Capture {
	return Capture{
		Fork:    sqlname.Table{DB: "_sqlfork_1_app", Name: "t"},
		Side:    sqlname.Table{DB: "_sqlfork_1", Name: "c_ab"},
		Trigger: "_sqlfork_ab",
		Marker:  "_sqlfork_existed",
		Shape: Shape{
			Columns: []Column{
				{Name: "a", Type: "int(11)", DataType: "int"},
				{Name: "ts", Type: "timestamp", DataType: "timestamp"},
				{Name: "v", Type: "varchar(10) CHARACTER SET latin1 COLLATE latin1_swedish_ci", DataType: "varchar"},
				{Name: "g", Type: "int(11)", DataType: "int", Generated: true},
				{Name: "b`q", Type: "blob", DataType: "blob"},
			},
			Key: []string{"a", "ts"}, KeyKind: "primary", Transactional: transactional,
		},
	}
}

func TestCaptureSideDDL(t *testing.T) {
	for _, c := range []struct {
		transactional bool
		want          string
	}{
		{true, "CREATE TABLE `_sqlfork_1`.`c_ab` (`a` int(11) NOT NULL, `ts` timestamp NOT NULL DEFAULT 0, `_sqlfork_existed` TINYINT NOT NULL, " +
			"`v` varchar(10) CHARACTER SET latin1 COLLATE latin1_swedish_ci NULL DEFAULT NULL, `b``q` blob NULL DEFAULT NULL, " +
			"PRIMARY KEY (`a`, `ts`)) ENGINE=InnoDB"},
		{false, "ENGINE=MyISAM"},
	} {
		got := testCapture(c.transactional).SideDDL()
		if !strings.HasSuffix(got, c.want) && got != c.want {
			t.Errorf("transactional %v:\n got %s\nwant %s", c.transactional, got, c.want)
		}
	}
}

func TestCaptureTriggerDDL(t *testing.T) {
	got := testCapture(true).TriggerDDL()
	odku := " ON DUPLICATE KEY UPDATE `_sqlfork_existed` = `_sqlfork_existed`"
	image := "INSERT INTO `_sqlfork_1`.`c_ab` (`a`, `ts`, `_sqlfork_existed`, `v`, `b``q`) VALUES (OLD.`a`, OLD.`ts`, 1, OLD.`v`, OLD.`b``q`)" + odku
	absent := func(row string) string {
		return "INSERT INTO `_sqlfork_1`.`c_ab` (`a`, `ts`, `_sqlfork_existed`) VALUES (" + row + ".`a`, " + row + ".`ts`, 0)" + odku
	}
	want := []string{
		"CREATE TRIGGER `_sqlfork_1_app`.`_sqlfork_ab_ai` AFTER INSERT ON `_sqlfork_1_app`.`t` FOR EACH ROW " + absent("NEW"),
		"CREATE TRIGGER `_sqlfork_1_app`.`_sqlfork_ab_au` AFTER UPDATE ON `_sqlfork_1_app`.`t` FOR EACH ROW BEGIN " + image +
			"; IF NOT (NEW.`a` <=> OLD.`a` AND NEW.`ts` <=> OLD.`ts`) THEN " + absent("NEW") + "; END IF; END",
		"CREATE TRIGGER `_sqlfork_1_app`.`_sqlfork_ab_ad` AFTER DELETE ON `_sqlfork_1_app`.`t` FOR EACH ROW " + image,
	}
	if len(got) != len(want) {
		t.Fatalf("got %d statements, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("statement %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
	drops := testCapture(true).DropTriggersDDL()
	if len(drops) != 3 || drops[1] != "DROP TRIGGER IF EXISTS `_sqlfork_1_app`.`_sqlfork_ab_au`" {
		t.Errorf("drops = %q", drops)
	}
}

func TestColumnKinds(t *testing.T) {
	for _, c := range []struct {
		col           Column
		binary, float bool
	}{
		{Column{DataType: "varbinary", Type: "varbinary(4)"}, true, false},
		{Column{DataType: "char", Type: "char(4) CHARACTER SET binary COLLATE binary", Charset: "binary", Collation: "binary"}, true, false},
		{Column{DataType: "enum", Type: "enum('character set binary') CHARACTER SET latin1 COLLATE latin1_bin", Charset: "latin1", Collation: "latin1_bin"}, false, false},
		{Column{DataType: "point", Type: "point"}, true, false},
		{Column{DataType: "float", Type: "float"}, false, true},
		{Column{DataType: "varchar", Type: "varchar(3) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"}, false, false},
	} {
		if c.col.Binary() != c.binary || c.col.Float() != c.float {
			t.Errorf("%+v: binary %v float %v", c.col, c.col.Binary(), c.col.Float())
		}
	}
}

// TestCarryDDL: after the sandbox's ALTER TABLE, the side table gets the
// columns it added (filled for the rows captured already from the fork,
// those it no longer has too),
// and the triggers are made again; a change the images cannot follow is
// refused.
func TestCarryDDL(t *testing.T) {
	before := testCapture(true)
	side := before.Shape // the side table's columns, as far as CarryDDL reads them
	with := func(f func(s *Shape)) Capture {
		cp := testCapture(true)
		cp.Columns = append([]Column(nil), cp.Columns...)
		f(&cp.Shape)
		return cp
	}
	added := with(func(s *Shape) { s.Columns = append(s.Columns, Column{Name: "d", Type: "int(11)", DataType: "int"}) })
	stmts, ok := added.CarryDDL(before.Shape, side)
	want := []string{
		"ALTER TABLE `_sqlfork_1`.`c_ab` ADD COLUMN `d` int(11) NULL DEFAULT NULL",
		// A row the fork no longer has (deleted before the ALTER) takes the
		// constant from another row of the fork.
		"UPDATE `_sqlfork_1`.`c_ab` c LEFT JOIN `_sqlfork_1_app`.`t` f ON f.`a` = c.`a` AND f.`ts` = c.`ts` " +
			"SET c.`d` = IF(f.`a` IS NULL, (SELECT x.`d` FROM `_sqlfork_1_app`.`t` x LIMIT 1), f.`d`) WHERE c.`_sqlfork_existed` = 1",
	}
	if !ok || len(stmts) != 5 || stmts[0] != want[0] || stmts[1] != want[1] {
		t.Fatalf("ADD COLUMN d: ok %v\n%s", ok, strings.Join(stmts, "\n"))
	}
	for _, s := range stmts[2:] {
		if !strings.HasPrefix(s, "CREATE OR REPLACE TRIGGER `_sqlfork_1_app`.`_sqlfork_ab_a") {
			t.Errorf("trigger statement %s", s)
		}
	}
	if !strings.Contains(stmts[3], "OLD.`d`") {
		t.Errorf("the update trigger does not copy the new column: %s", stmts[3])
	}
	// Wider types: the images' columns widen too (a key column stays NOT
	// NULL).
	wider := with(func(s *Shape) {
		s.Columns[0].Type, s.Columns[0].DataType = "bigint(20)", "bigint"
		s.Columns[2].Type = "varchar(20) CHARACTER SET latin1 COLLATE latin1_swedish_ci"
	})
	stmts, ok = wider.CarryDDL(before.Shape, side)
	if want := "ALTER TABLE `_sqlfork_1`.`c_ab` MODIFY COLUMN `a` bigint(20) NOT NULL, " +
		"MODIFY COLUMN `v` varchar(20) CHARACTER SET latin1 COLLATE latin1_swedish_ci NULL DEFAULT NULL"; !ok || len(stmts) != 4 || stmts[0] != want {
		t.Errorf("wider types: ok %v\n%s\nwant first\n%s", ok, strings.Join(stmts, "\n"), want)
	}
	dropped := with(func(s *Shape) { s.Columns = append(s.Columns[:4:4], s.Columns[4+1:]...) })
	if stmts, ok := dropped.CarryDDL(before.Shape, side); !ok || len(stmts) != 3 {
		t.Errorf("DROP COLUMN: ok %v, %q", ok, stmts)
	}
	for name, cp := range map[string]Capture{
		"a rename":            with(func(s *Shape) { s.Columns[4].Name = "renamed" }),
		"the key":             with(func(s *Shape) { s.Key = []string{"a"} }),
		"a key column's type": with(func(s *Shape) { s.Columns[0].Type, s.Columns[0].DataType = "varchar(11)", "varchar" }),
		"a column's type":     with(func(s *Shape) { s.Columns[2].Type = "varchar(5) CHARACTER SET latin1 COLLATE latin1_swedish_ci" }),
		"a column's collation": with(func(s *Shape) {
			s.Columns[2].Type, s.Columns[2].Charset, s.Columns[2].Collation = "varchar(20) CHARACTER SET latin1 COLLATE latin1_bin", "latin1", "latin1_bin"
		}),
		"a computed column":     with(func(s *Shape) { s.Columns = append(s.Columns, Column{Name: "n", Type: "int(11)", Computed: true}) }),
		"the engine":            with(func(s *Shape) { s.Transactional = false }),
		"a column generated":    with(func(s *Shape) { s.Columns[2].Generated = true }),
		"a column the side has": with(func(s *Shape) { s.Columns = append(s.Columns, Column{Name: "old", Type: "int(11)"}) }),
	} {
		sideOld := side
		sideOld.Columns = append(append([]Column(nil), side.Columns...), Column{Name: "old", Type: "int(11)"})
		if stmts, ok := cp.CarryDDL(before.Shape, sideOld); ok {
			t.Errorf("%s: carried with %q", name, stmts)
		}
	}
}

// TestConstantDefault: the COLUMN_DEFAULT of a constant, as MariaDB writes
// it, is told from an expression's.
func TestConstantDefault(t *testing.T) {
	for d, want := range map[string]bool{"NULL": true, "0": true, "-1.5": true, "1e3": true, "'x'": true, "'it''s'": true, `'a\'b'`: true,
		"current_timestamp()": false, "`a` * 10": false, "'x' + 1": false, "curdate()": false, "''": true} {
		if got := constantDefault.MatchString(d); got != want {
			t.Errorf("constantDefault(%q) = %v, want %v", d, got, want)
		}
	}
}
