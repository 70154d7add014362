package review

import (
	"slices"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
)

// TestClashDeletes: the rows of a table written whole whose unique values
// may clash are deleted first, foreign key checks off for that statement
// only; none, nothing.
func TestClashDeletes(t *testing.T) {
	et := &exportTable{td: &tableDiff{t: &diffTable{logical: rewrite.Table{DB: "app", Name: "u"}, key: []string{"id"}}}}
	if got := et.clashDeletes(); got != nil {
		t.Errorf("no clash: %v", got)
	}
	et.clash = []diffRow{{keyLits: []string{"1"}}, {keyLits: []string{"2"}}}
	want := []string{"SET @sqlfork_fk_checks = @@foreign_key_checks, foreign_key_checks = 0", "DELETE FROM `app`.`u` WHERE `id` IN (1, 2)",
		"SET foreign_key_checks = @sqlfork_fk_checks"}
	if got := et.clashDeletes(); !slices.Equal(got, want) {
		t.Errorf("got\n %s\nwant\n %s", strings.Join(got, "\n "), strings.Join(want, "\n "))
	}
}
