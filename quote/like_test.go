package quote

import "testing"

// TestLikePrefix: LIKE's wildcards and the escape character itself are
// escaped with '!', never a backslash, and the pattern is a quoted string.
func TestLikePrefix(t *testing.T) {
	check(t, "LikePrefix", LikePrefix, map[string]string{
		"_sqlfork_": `'!_sqlfork!_%' ESCAPE '!'`,
		"a%b!c":     `'a!%b!!c%' ESCAPE '!'`,
		"o'k":       `'o''k%' ESCAPE '!'`,
		`b\`:        `_utf8mb4 X'625C25' ESCAPE '!'`, // a backslash is written in hex
		"":          `'%' ESCAPE '!'`,
	})
}
