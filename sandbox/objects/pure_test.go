package objects

import (
	"testing"

	"github.com/sqlfork/sqlfork-proxy/catalog"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
)

// TestWithoutDefiner: SHOW CREATE's text loses its DEFINER clause, however
// the account is quoted; a text that is no CREATE, or whose definer cannot
// be read, is not readable.
func TestWithoutDefiner(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"CREATE DEFINER=`root`@`localhost` PROCEDURE `p`() SELECT 1", "CREATE PROCEDURE `p`() SELECT 1", true},
		{"CREATE DEFINER='a''b'@'%' FUNCTION f() RETURNS INT RETURN 1", "CREATE FUNCTION f() RETURNS INT RETURN 1", true},
		{"CREATE DEFINER=`we``ird`@`h` PROCEDURE p() BEGIN END", "CREATE PROCEDURE p() BEGIN END", true},
		{"CREATE DEFINER=root@localhost PROCEDURE p() SELECT 1", "CREATE PROCEDURE p() SELECT 1", true},
		{"CREATE PROCEDURE p() SELECT 1", "CREATE PROCEDURE p() SELECT 1", true},
		{"SELECT 1", "SELECT 1", false},
		{"CREATE DEFINER=`root`", "", false},
		{"CREATE DEFINER=`root`@`localhost", "", false},
		{"CREATE DEFINER=`root``localhost` PROCEDURE p() SELECT 1", "", false},
		{"CREATE DEFINER=`root`@`h`PROCEDURE p() SELECT 1", "", false},
		{"CREATE DEFINER=", "", false},
		{"CREATE DEFINER=@h PROCEDURE p() SELECT 1", "", false},
	} {
		got, ok := withoutDefiner(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("withoutDefiner(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// TestRoutineStatement: the routine statements a sandbox runs on its own
// routines.
func TestRoutineStatement(t *testing.T) {
	e := rewrite.NewEngine(0)
	for sql, want := range map[string]bool{
		"CALL p()":                      true,
		"DROP PROCEDURE p":              true,
		"DROP FUNCTION f":               true,
		"CREATE PROCEDURE p() SELECT 1": true,
		"SELECT 1":                      false,
		"SHOW CREATE PROCEDURE p":       false,
	} {
		a := e.Analyze(sql, rewrite.Options{DB: "app"})
		if got := RoutineStatement(a.Statements[0]); got != want {
			t.Errorf("RoutineStatement(%s) = %v, want %v", sql, got, want)
		}
	}
}

// TestEngines: which engines lock for reads, and which tables are the
// Sequence engine's.
func TestEngines(t *testing.T) {
	for engine, want := range map[string]bool{"InnoDB": true, "xtradb": true, "RocksDB": true, "SEQUENCE": true, "MyISAM": false, "Aria": false, "": false} {
		if got := rowLocking(engine); got != want {
			t.Errorf("rowLocking(%q) = %v", engine, got)
		}
	}
	if !virtualTable(catalog.Object{Kind: "BASE TABLE", Engine: "sequence"}) || virtualTable(catalog.Object{Kind: "SEQUENCE", Engine: "InnoDB"}) {
		t.Error("virtualTable")
	}
	if routineKey("FUNCTION", "db", "F") != "FUNCTION\x00db\x00f" {
		t.Error("routineKey")
	}
}
