package forker

import "testing"

// TestCaptureInsertIDVar: the AFTER INSERT trigger of a table with an
// AUTO_INCREMENT column also keeps each row's value in the capture's own
// user variable; a table without one keeps the plain body.
func TestCaptureInsertIDVar(t *testing.T) {
	plain := testCapture(true)
	if v := plain.InsertIDVar(); v != "" {
		t.Errorf("no AUTO_INCREMENT column: variable %q, want none", v)
	}
	auto := testCapture(true)
	auto.Columns = append([]Column(nil), auto.Columns...)
	auto.Columns[0].Auto = true
	auto.Columns[0].Name = "i`d"
	auto.Key = []string{"i`d", "ts"}
	if v := auto.InsertIDVar(); v != "_sqlfork_ab_id" {
		t.Errorf("variable %q, want _sqlfork_ab_id", v)
	}
	odku := " ON DUPLICATE KEY UPDATE `_sqlfork_existed` = `_sqlfork_existed`"
	want := "CREATE TRIGGER `_sqlfork_1_app`.`_sqlfork_ab_ai` AFTER INSERT ON `_sqlfork_1_app`.`t` FOR EACH ROW BEGIN " +
		"INSERT INTO `_sqlfork_1`.`c_ab` (`i``d`, `ts`, `_sqlfork_existed`) VALUES (NEW.`i``d`, NEW.`ts`, 0)" + odku +
		"; SET @`_sqlfork_ab_id` = NEW.`i``d`; END"
	got := auto.TriggerDDL()
	if got[0] != want {
		t.Errorf("AFTER INSERT:\n got %s\nwant %s", got[0], want)
	}
	body := got[0][len("CREATE TRIGGER `_sqlfork_1_app`.`_sqlfork_ab_ai` AFTER INSERT ON `_sqlfork_1_app`.`t` FOR EACH ROW "):]
	if !SetsInsertID(body, "_sqlfork_ab_id") || SetsInsertID(plain.TriggerDDL()[0], "_sqlfork_ab_id") || SetsInsertID(body, "_sqlfork_cd_id") {
		t.Errorf("SetsInsertID misreads %q", body)
	}
	carried, ok := auto.CarryDDL(auto.Shape, auto.Shape)
	if !ok || len(carried) != 3 || carried[0] != "CREATE OR REPLACE TRIGGER "+want[len("CREATE TRIGGER "):] {
		t.Errorf("carried across an ALTER: %v %q", ok, carried)
	}
}
