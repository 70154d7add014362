package rewrite

import (
	"strings"
	"testing"
)

// dbSandbox places every database a statement changes, and for USE and
// SHOW CREATE DATABASE the one called own, as PH_<name>; own is current.
type dbSandbox struct{ mapsNothingResolver }

func (dbSandbox) ResolveDatabase(k Kind, db string) (string, bool, error) {
	if !ChangesDatabase(k) && db != "own" {
		return "", false, nil
	}
	return "PH_" + db, true, nil
}

func (dbSandbox) CurrentDatabase() (string, bool) { return "own", true }

// TestDatabaseReps: the database a statement names is sent as the one the
// resolver places, wherever comments and quoting put it; ALTER DATABASE of
// the current one gets its name; DATABASE() and SCHEMA() are the current
// database's logical name, but in a definition; a statement changing a
// database among others, or prepared, is refused.
func TestDatabaseReps(t *testing.T) {
	e := NewEngine(0)
	for _, c := range []struct{ in, want, err string }{
		{in: "CREATE DATABASE IF NOT EXISTS `a``b` CHARACTER SET utf8", want: "CREATE DATABASE IF NOT EXISTS `PH_a``b` CHARACTER SET utf8"},
		{in: "CREATE OR REPLACE SCHEMA x", want: "CREATE OR REPLACE SCHEMA `PH_x`"},
		{in: "DROP SCHEMA IF EXISTS esc", want: "DROP SCHEMA IF EXISTS `PH_esc`"},
		{in: "/*!DROP DATABASE esc */", want: "/*!DROP DATABASE `PH_esc` */"},
		{in: "DROP /* a */ DATABASE /* b */ esc", want: "DROP /* a */ DATABASE /* b */ `PH_esc`"},
		{in: "ALTER DATABASE x COMMENT 'a'", want: "ALTER DATABASE `PH_x` COMMENT 'a'"},
		{in: "ALTER DATABASE CHARACTER SET latin1", want: "ALTER DATABASE `PH_esc`  CHARACTER SET latin1"},
		{in: "USE esc2", want: "USE esc2"},
		{in: "USE own", want: "USE `PH_own`"},
		{in: "SHOW CREATE SCHEMA IF NOT EXISTS own", want: "SHOW CREATE SCHEMA IF NOT EXISTS `PH_own`"},
		{in: "SELECT DATABASE(), schema ()", want: "SELECT CONVERT(X'6f776e' USING utf8mb3), CONVERT(X'6f776e' USING utf8mb3)"},
		{in: "CREATE VIEW v AS SELECT DATABASE() AS d", want: "CREATE VIEW v AS SELECT DATABASE() AS d"},
		{in: "USE esc2; SELECT 1", want: "USE esc2; SELECT 1"},
		{in: "USE own; SELECT 1", err: "USE runs in a sandbox only alone"},
		{in: "SELECT 1; DROP DATABASE esc", err: "DROP DATABASE runs in a sandbox only alone"},
		{in: "PREPARE s FROM 'DROP DATABASE esc'", err: "a prepared CREATE, DROP or ALTER DATABASE cannot run"},
	} {
		res, err := e.Analyze(c.in, Options{DB: "esc"}).Rewrite(dbSandbox{})
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want an error with %q", c.in, err, c.err)
			}
		case err != nil:
			t.Errorf("%s: %v", c.in, err)
		case res.SQL != c.want:
			t.Errorf("%s:\n got %s\nwant %s", c.in, res.SQL, c.want)
		}
	}
}

// FuzzDatabaseReps: whatever the text, a statement the rewrite lets
// through that creates, drops or alters a database names the database the
// resolver placed, read again as the server would read it.
func FuzzDatabaseReps(f *testing.F) {
	for _, s := range []string{"DROP DATABASE esc", "/*!DROP DATABASE esc */", "CREATE OR REPLACE SCHEMA `x`", "ALTER DATABASE CHARACTER SET latin1",
		"DROP /*!50000 DATABASE */ esc", "DROP DATABASE `e``sc`", "SET STATEMENT max_statement_time=1 FOR DROP DATABASE esc"} {
		f.Add(s)
	}
	e := NewEngine(0)
	f.Fuzz(func(t *testing.T, in string) {
		res, err := e.Analyze(in, Options{DB: "esc"}).Rewrite(dbSandbox{})
		if err != nil {
			return
		}
		for _, st := range e.Analyze(res.SQL, Options{DB: "esc"}).Statements {
			if ChangesDatabase(st.Kind) && st.Database != "" && !strings.HasPrefix(st.Database, "PH_") {
				t.Fatalf("%q was sent as %q, which changes database %q", in, res.SQL, st.Database)
			}
		}
	})
}
