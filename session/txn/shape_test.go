package txn

import (
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
)

// TestShapeAdd: what each kind of statement does to the transaction and
// the session's settings, alone and after another statement.
func TestShapeAdd(t *testing.T) {
	for _, c := range []struct {
		sql  string
		want Shape
	}{
		{"SELECT 1", Shape{}},
		{"BEGIN", Shape{Begin: true}},
		{"START TRANSACTION", Shape{Begin: true}},
		{"SELECT 1; BEGIN", Shape{Begin: true, End: true}},
		{"COMMIT", Shape{End: true}},
		{"ROLLBACK", Shape{End: true}},
		{"SAVEPOINT a", Shape{Control: true}},
		{"USE app", Shape{UseDB: true}},
		{"SET sql_mode = 'ANSI_QUOTES'", Shape{Vars: true}},
		{"SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED", Shape{Vars: true}},
		{"SET SESSION TRANSACTION READ ONLY", Shape{Vars: true}},
		{"CREATE TABLE n (id INT)", Shape{DDL: true}},
		{"CREATE TEMPORARY TABLE n (id INT)", Shape{}},
		{"CREATE PROCEDURE p() SELECT 1", Shape{DDL: true}},
		{"CALL p()", Shape{}},
	} {
		a := analyze(c.sql, rewrite.Options{DB: "app"})
		var got Shape
		for i, st := range a.Statements {
			got.Add(i, st)
		}
		if got != c.want {
			t.Errorf("%s: %+v, want %+v", c.sql, got, c.want)
		}
		if got.Settings() != (c.want.UseDB || c.want.Vars) {
			t.Errorf("%s: Settings() = %v", c.sql, got.Settings())
		}
	}
}
