package splice

import (
	"fmt"
	"testing"
)

func TestApply(t *testing.T) {
	src := "SELECT * FROM t JOIN u; PREPARE s FROM 'SELECT 1'"
	reps := []Replacement{
		{Start: 21, End: 22, Text: "`db`.`u`"},
		{Start: 14, End: 15, Text: "`db`.`t`"},
		{Start: 39, End: 49, Text: "'SELECT 2'", Renames: []Rename{{From: "1", To: "2"}}},
	}
	if err := Overlapping(reps); err != nil {
		t.Fatal(err)
	}
	sql, renames, splices := Apply(src, reps)
	if sql != "SELECT * FROM `db`.`t` JOIN `db`.`u`; PREPARE s FROM 'SELECT 2'" {
		t.Errorf("Apply = %q", sql)
	}
	if fmt.Sprint(renames) != "[{t `db`.`t`} {u `db`.`u`} {1 2}]" {
		t.Errorf("renames = %v", renames)
	}
	for _, c := range []struct{ orig, sent int }{{0, 0}, {14, 14}, {15, 22}, {21, 28}, {23, 37}, {len(src), len(sql)}} {
		if got := Sent(splices, c.orig); got != c.sent {
			t.Errorf("Sent(%d) = %d, want %d", c.orig, got, c.sent)
		}
		if got := Original(splices, c.sent); got != c.orig {
			t.Errorf("Original(%d) = %d, want %d", c.sent, got, c.orig)
		}
	}
	if got := Original(splices, 17); got != 14 {
		t.Errorf("Original inside a replacement = %d, want 14", got)
	}
	if got := Sent(splices, 14+1-1); got != 14 {
		t.Errorf("Sent at a replacement's start = %d", got)
	}
	if err := Overlapping([]Replacement{{Start: 0, End: 5}, {Start: 3, End: 4}}); err == nil {
		t.Error("overlapping replacements pass")
	}
}
