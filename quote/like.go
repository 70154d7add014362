package quote

import "strings"

// LikeEscape escapes s for a LIKE pattern whose escape character is '!'
// (LikeSuffix): a backslash would mean another thing under
// NO_BACKSLASH_ESCAPES, where LIKE has no escape character by default.
func LikeEscape(s string) string {
	return strings.NewReplacer(`!`, `!!`, `%`, `!%`, `_`, `!_`).Replace(s)
}

// LikePrefix is the pattern and ESCAPE clause of LIKE matching the names
// that start with prefix.
func LikePrefix(prefix string) string {
	return String(LikeEscape(prefix)+"%") + LikeSuffix
}

// LikeSuffix is the ESCAPE clause of LikeEscape's patterns.
const LikeSuffix = " ESCAPE '!'"
