package grants

import "testing"

func TestGrantSetAllows(t *testing.T) {
	lines := []string{
		"GRANT USAGE ON *.* TO `bob`@`%` IDENTIFIED BY PASSWORD '*X'",
		"GRANT SELECT, INSERT ON `app`.* TO `bob`@`%`",
		"GRANT UPDATE (`name`, `email`), SELECT (`id`) ON `app`.`users` TO `bob`@`%`",
		"GRANT DELETE ON `app`.`Orders` TO `bob`@`%`",
		"GRANT ALL PRIVILEGES ON `scratch\\_%`.* TO `bob`@`%`",
		"GRANT SELECT ON `s%`.* TO `bob`@`%`",
		"GRANT ALTER ON `shop`.* TO `bob`@`%`",
		"GRANT SELECT ON `sh%`.* TO `bob`@`%`",
		"GRANT CREATE ON `rolled`.* TO `r1`",
		"GRANT DROP ON `pub`.* TO PUBLIC",
		"GRANT `r1` TO `bob`@`%`",
		"GRANT EXECUTE ON PROCEDURE `app`.`p` TO `bob`@`%`",
		"not a grant",
	}
	for _, c := range []struct {
		priv, db, table string
		cols            []string
		cs, want        bool
	}{
		{"SELECT", "app", "users", nil, true, true},
		{"INSERT", "app", "anything", []string{"a"}, true, true},
		{"UPDATE", "app", "users", nil, true, false},
		{"UPDATE", "app", "users", []string{"name"}, true, true},
		{"UPDATE", "app", "users", []string{"NAME", "email"}, true, true},
		{"UPDATE", "app", "users", []string{"name", "role"}, true, false},
		{"DELETE", "app", "users", nil, true, false},
		{"DELETE", "app", "Orders", nil, true, true},
		{"DELETE", "app", "orders", nil, true, false},
		{"DELETE", "app", "orders", nil, false, true},
		{"DROP", "scratch_1", "t", nil, true, false}, // `s%` matches too, without DROP
		{"SELECT", "scratch_1", "t", nil, true, true},
		{"DROP", "scratchx1", "t", nil, true, false},
		{"ALTER", "shop", "t", nil, true, true},   // `shop` sorts before `sh%`: the server takes it
		{"SELECT", "shop", "t", nil, true, false}, // … and not `sh%`'s SELECT
		{"SELECT", "shore", "t", nil, true, true},
		{"SELECT", "app", "t", nil, true, true},
		{"CREATE", "rolled", "t", nil, true, true},
		{"DROP", "pub", "t", nil, true, true},
		{"DROP", "App", "t", nil, true, false},
		{"SELECT", "APP", "users", nil, false, true},
		{"EXECUTE", "app", "p", nil, true, false}, // a routine's grant is not a table's
	} {
		gs := NewSet(lines, c.cs)
		if got := gs.Allows(c.priv, c.db, c.table, c.cols); got != c.want {
			t.Errorf("%s on %s.%s %v (case-sensitive %v) = %v, want %v", c.priv, c.db, c.table, c.cols, c.cs, got, c.want)
		}
	}
	if !NewSet([]string{"GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` WITH GRANT OPTION"}, true).Allows("DROP", "x", "y", nil) {
		t.Error("ALL PRIVILEGES ON *.*")
	}
}

func TestGrantSetAllowsRoutine(t *testing.T) {
	gs := NewSet([]string{
		"GRANT EXECUTE ON PROCEDURE `app`.`p` TO `bob`@`%`",
		"GRANT EXECUTE ON `lib`.* TO `bob`@`%`",
		"GRANT ALTER ROUTINE ON FUNCTION `app`.`f` TO `bob`@`%`",
		"GRANT SELECT ON `app`.* TO `bob`@`%`",
	}, true)
	for _, c := range []struct {
		kind, db, name string
		want           bool
	}{
		{"PROCEDURE", "app", "p", true}, {"PROCEDURE", "app", "P", true}, {"FUNCTION", "app", "p", false},
		{"FUNCTION", "app", "f", false}, {"FUNCTION", "lib", "anything", true}, {"PROCEDURE", "other", "p", false},
	} {
		if got := gs.AllowsRoutine(c.kind, c.db, c.name); got != c.want {
			t.Errorf("EXECUTE %s %s.%s = %v", c.kind, c.db, c.name, got)
		}
	}
}

func TestLikeMatch(t *testing.T) {
	for _, c := range []struct {
		pat, s string
		want   bool
	}{
		{"a%", "abc", true}, {"a_c", "abc", true}, {`a\_c`, "abc", false}, {`a\_c`, "a_c", true},
		{"%", "", true}, {"_", "", false}, {"%b%", "abc", true}, {"中%", "中文", true}, {"a", "ab", false},
		{"a_b", "aéb", false}, {"a__b", "aéb", true}, // the server's _ is one byte
	} {
		if got := likeMatch([]byte(c.pat), []byte(c.s)); got != c.want {
			t.Errorf("likeMatch(%q, %q) = %v", c.pat, c.s, got)
		}
	}
}

// TestGrantSetUnderANSIQuotes: under ANSI_QUOTES SHOW GRANTS writes names
// in double quotes; they are names all the same.
func TestGrantSetUnderANSIQuotes(t *testing.T) {
	gs := NewSet([]string{`GRANT SELECT, UPDATE ("v") ON "app"."pub" TO "alice"@"%"`, `GRANT ALL PRIVILEGES ON "\_sqlfork%".* TO "alice"@"%"`}, true)
	if !gs.Allows("SELECT", "app", "pub", nil) || !gs.Allows("UPDATE", "app", "pub", []string{"v"}) || !gs.Allows("DROP", "_sqlfork_1_app", "t", nil) {
		t.Error("names in double quotes were not read as names")
	}
}
