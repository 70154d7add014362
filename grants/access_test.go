package grants

import (
	"slices"
	"testing"
)

func TestSandboxGrantsMissing(t *testing.T) {
	all := SandboxPrivileges
	cases := []struct {
		name   string
		grants []string
		want   []string
	}{
		{"none", []string{"GRANT USAGE ON *.* TO `bob`@`%`"}, all},
		{"global all", []string{"GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` WITH GRANT OPTION"}, nil},
		{"prefix all", []string{"GRANT USAGE ON *.* TO `bob`@`%`", "GRANT ALL PRIVILEGES ON `\\_sqlfork%`.* TO `bob`@`%`"}, nil},
		{"unescaped prefix pattern", []string{"GRANT ALL PRIVILEGES ON `_sqlfork%`.* TO `bob`@`%`"}, nil},
		{"every schema pattern", []string{"GRANT ALL PRIVILEGES ON `%`.* TO `bob`@`%`"}, nil},
		{"one sandbox only", []string{"GRANT ALL PRIVILEGES ON `\\_sqlfork\\_0000abcd\\_app`.* TO `bob`@`%`"}, all},
		{"a table only", []string{"GRANT ALL PRIVILEGES ON `_sqlfork_meta`.`sandboxes` TO `bob`@`%`"}, all},
		{"production only", []string{"GRANT ALL PRIVILEGES ON `app`.* TO `bob`@`%`"}, all},
		{"split over lines", []string{"GRANT SELECT, INSERT, UPDATE, DELETE ON *.* TO `bob`@`%`",
			"GRANT CREATE, DROP, ALTER, INDEX, CREATE VIEW, SHOW VIEW ON `\\_sqlfork%`.* TO `bob`@`%`"}, nil},
		{"some missing", []string{"GRANT SELECT, INSERT, UPDATE, DELETE, CREATE ON `\\_sqlfork%`.* TO `bob`@`%`"},
			[]string{"DROP", "ALTER", "INDEX", "CREATE VIEW", "SHOW VIEW"}},
		{"column grants give nothing", []string{"GRANT SELECT (`a`) ON *.* TO `bob`@`%`", "GRANT INSERT, UPDATE, DELETE, CREATE, DROP, ALTER, INDEX, CREATE VIEW, SHOW VIEW ON *.* TO `bob`@`%`"},
			[]string{"SELECT"}},
		{"role grant line", []string{"GRANT `r` TO `bob`@`%`", "GRANT ALL PRIVILEGES ON `\\_sqlfork%`.* TO `r`"}, nil},
		{"unparsable", []string{"GRANT ??? nonsense"}, all},
	}
	for _, c := range cases {
		if got := SandboxGrantsMissing(c.grants, "_sqlfork"); !slices.Equal(got, c.want) {
			t.Errorf("%s: missing %q, want %q", c.name, got, c.want)
		}
	}
}

func TestPatternCovers(t *testing.T) {
	for pat, want := range map[string]bool{
		`\_sqlfork%`: true, `_sqlfork%`: true, `%`: true, `\_sql%`: true, `\_sqlfork%%`: true,
		`\_sqlfork`: false, `\_sqlfork\_%`: false, `\_sqlfork%x`: false, `\_sqlfor`: false, `sqlfork%`: false, ``: false, `\`: false,
	} {
		if got := patternCovers(pat, "_sqlfork"); got != want {
			t.Errorf("patternCovers(%q) = %v, want %v", pat, got, want)
		}
	}
	if got := SandboxPattern("_sqlfork"); got != `\_sqlfork%` {
		t.Errorf("SandboxPattern = %q", got)
	}
	if got := SandboxPattern(`a%b\`); got != `a\%b\\%` {
		t.Errorf("SandboxPattern = %q", got)
	}
}
