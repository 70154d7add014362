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
