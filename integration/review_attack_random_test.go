package integration

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"
)

// rvFragments are the pieces the generator builds names and values of:
// what ends a comment or a quote for the server or for the mariadb CLI, its
// commands (touching files in the directory it runs in, the marker's),
// controls, invisible and multibyte characters.
var rvFragments = []string{
	"\n", "\r", "\r\n", "*/", "/*", "/*!", "/*M!", "#", "-- ", "--", "'", "\"", "`", "``", "\\", "\\'", "\\\\", ";", ";;",
	"\\! touch gen", "\nsystem touch sys\n", "\ndelimiter //\n", "\\G", "\\c", "\\N", "DELETE FROM {db}.secrets",
	"\x00", "\x1a", "\x1b[2J", "\u0085", "\u2028", "\u202e", "\u200b", "é", "表", "ソ", "\\x", "%", "_", "@", "$", " ", "\t",
}

// rvRandomNames draws n names (and values) of rvFragments: at most 64
// characters, no NUL and no trailing space, which MariaDB takes for a name.
func rvRandomNames(seed int64, n int) []string {
	rng := rand.New(rand.NewSource(seed))
	var out []string
	for len(out) < n {
		var b strings.Builder
		b.WriteString(fmt.Sprintf("g%d", len(out)))
		for range 1 + rng.Intn(5) {
			b.WriteString(rvFragments[rng.Intn(len(rvFragments))])
		}
		s := strings.ReplaceAll(b.String(), "\x00", "0")
		for utf8.RuneCountInString(strings.ReplaceAll(s, "{db}", "rvg00a")) > 64 {
			_, size := utf8.DecodeLastRuneInString(s)
			s = s[:len(s)-size]
		}
		s = strings.TrimRight(s, " \t")
		out = append(out, s)
	}
	return out
}

// TestReviewAttackRandomNames: names and values drawn by a seeded generator
// from what breaks out of comments, quotes and the CLI's commands, for
// every kind of name a sandbox gives, exported and applied to a copy of
// production with the mariadb client in both sql_modes (as
// TestReviewAttackExportInjection does with its fixed names): the client
// sends exactly the export's statements, no file appears, nothing the
// sandbox did not change changes.
func TestReviewAttackRandomNames(t *testing.T) {
	t.Parallel() // its own servers: see rvStartServer
	e := newRVEnv(t, "g", rvStartServer(t), true)
	for _, seed := range []int64{1, 2} {
		names := rvRandomNames(seed, 6)
		for _, k := range rvKinds {
			if k.database {
				continue // the fixed names make databases; random ones here would make many more
			}
			t.Run(fmt.Sprintf("seed%d/%s", seed, k.name), func(t *testing.T) {
				e.each(t, rvKindSchema(k, names), func(t *testing.T, r *rvRun) { rvInjection(t, r, k, names) })
			})
		}
	}
}
