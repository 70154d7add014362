package grants

import (
	"strings"
)

// SandboxPrivileges are the privileges a client's own upstream account needs
// on the proxy's databases in the sandboxing modes: its connection reads and
// writes the sandbox's forks and tables (<prefix>_<id>_<db>) and reads the
// information_schema views the proxy makes there and in
// <prefix>_production. Forks themselves and the registry are the proxy's
// own account's work.
var SandboxPrivileges = []string{"SELECT", "INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "ALTER", "INDEX",
	"CREATE VIEW", "SHOW VIEW"}

// SandboxGrantsMissing returns the privileges of SandboxPrivileges that the
// grants, lines of SHOW GRANTS output for a session's account and its
// enabled roles, do not give on every database whose name starts with
// prefix; nil when none is missing. A grant counts when its target is *.*
// or a schema pattern matching every such name (`\_sqlfork%`.*, and also
// `_sqlfork%`.* or `%`.*); ALL [PRIVILEGES] gives every privilege.
// Table-level and routine grants give nothing here: the sandbox's tables
// are made as it runs.
func SandboxGrantsMissing(grants []string, prefix string) []string {
	have := map[string]bool{}
	for _, line := range grants {
		g := parseGrant(line)
		if g == nil || g.unparsable != "" || g.roles != nil || g.kind != "" {
			continue
		}
		if g.db != "*" && (g.table != "*" || !patternCovers(g.db, prefix)) {
			continue
		}
		for _, p := range g.privs {
			if len(p.columns) == 0 {
				have[p.name] = true
			}
		}
	}
	if have["ALL PRIVILEGES"] || have["ALL"] {
		return nil
	}
	var missing []string
	for _, p := range SandboxPrivileges {
		if !have[p] {
			missing = append(missing, p)
		}
	}
	return missing
}

// patternCovers reports whether the schema pattern pat of a schema-level
// grant (LIKE syntax: % any run, _ any character, \ escapes) matches every
// name that starts with prefix.
func patternCovers(pat, prefix string) bool {
	i := 0
	for j := 0; j < len(prefix); j++ {
		if i >= len(pat) {
			return false
		}
		switch c := pat[i]; c {
		case '%':
			return strings.Trim(pat[i:], "%") == ""
		case '_':
		case '\\':
			if i+1 >= len(pat) || pat[i+1] != prefix[j] {
				return false
			}
			i++
		default:
			if c != prefix[j] {
				return false
			}
		}
		i++
	}
	return i < len(pat) && strings.Trim(pat[i:], "%") == ""
}

// SandboxPattern is the schema pattern of the proxy's databases for a GRANT
// statement: prefix with its LIKE wildcards escaped, then %
// (`\_sqlfork%` for the default prefix).
func SandboxPattern(prefix string) string {
	r := strings.NewReplacer(`\`, `\\`, "_", `\_`, "%", `\%`)
	return r.Replace(prefix) + "%"
}
