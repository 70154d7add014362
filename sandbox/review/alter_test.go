package review

import (
	"slices"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
)

func TestBatches(t *testing.T) {
	big := string(make([]byte, exportBytes-10))
	for _, c := range []struct {
		vals []string
		want []int
	}{
		{nil, nil},
		{make([]string, 250), []int{100, 100, 50}},
		{[]string{"a", big, "b", big, big}, []int{3, 1, 1}},
	} {
		var got []int
		for _, b := range batches(c.vals) {
			got = append(got, len(b))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("batches of %d values: %v, want %v", len(c.vals), got, c.want)
		}
	}
}

// TestCheckGenerated: a generated statement is refused unless it is the one
// statement of its kind it was built as, on its table alone.
func TestCheckGenerated(t *testing.T) {
	m := &Reviewer{engine: rewrite.NewEngine(16), cfg: Config{Prefix: "_sqlfork"}, names: sandbox.Names{Prefix: "_sqlfork", CaseSensitive: true}}
	target := rewrite.Table{DB: "app", Name: "t"}
	label := func(t rewrite.Table) string { return t.String() }
	for stmt, ok := range map[string]bool{
		"CREATE TABLE IF NOT EXISTS `app`.`t` (`id` int(11) NOT NULL, `p` int(11), CONSTRAINT `f` FOREIGN KEY (`p`) REFERENCES `parent` (`id`))": true,
		"CREATE TABLE IF NOT EXISTS `app`.`t` (`id` int) SELECT * FROM `app`.`secret`":                                                           false,
		"CREATE TABLE IF NOT EXISTS `app`.`t` LIKE `app`.`secret`":                                                                               false,
		"CREATE TABLE IF NOT EXISTS `app`.`t` (`id` int); DROP TABLE `app`.`u`":                                                                  false,
		"CREATE TABLE IF NOT EXISTS `app`.`t` (`id` int) DATA DIRECTORY = '/tmp/x'":                                                              false,
		"CREATE TABLE IF NOT EXISTS `app`.`u` (`id` int)":                                                                                        false,
		"CREATE TABLE IF NOT EXISTS `app`.`t` (`id` int, CONSTRAINT `f` FOREIGN KEY (`id`) REFERENCES `mysql`.`user` (`id`))":                    false,
		"DROP TABLE IF EXISTS `app`.`t`":                                                                                                         false,
	} {
		_, err := m.checkGenerated(stmt, target, label, "CREATE TABLE")
		if (err == nil) != ok {
			t.Errorf("checkGenerated(%q) = %v, want ok %v", stmt, err, ok)
		}
	}
}
