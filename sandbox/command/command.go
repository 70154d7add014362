// Package command reads the SANDBOX pseudo-statements (CREATE, ATTACH,
// DETACH, KEEP, DISCARD, STATUS, LIST, DIFF, EXPORT, PROMOTE) and sandbox
// names; it does no I/O.
package command

import (
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/sqlfork/sqlfork-proxy/duration"
)

// Verb is a SANDBOX pseudo-statement.
type Verb string

// SANDBOX verbs.
const (
	VerbCreate  Verb = "CREATE"
	VerbAttach  Verb = "ATTACH"
	VerbDetach  Verb = "DETACH"
	VerbKeep    Verb = "KEEP"
	VerbDiscard Verb = "DISCARD"
	VerbStatus  Verb = "STATUS"
	VerbList    Verb = "LIST"
	VerbDiff    Verb = "DIFF"
	VerbExport  Verb = "EXPORT"
	VerbPromote Verb = "PROMOTE"
)

// Command is a parsed SANDBOX pseudo-statement.
type Command struct {
	Verb Verb
	Name string
	// TTL is the lifetime asked for (0: the default); HasTTL says TTL was
	// given at all.
	TTL    time.Duration
	HasTTL bool
	// Summary is DIFF SUMMARY.
	Summary bool
	// ForDB and ForTable are DIFF's FOR [db.]table (ForDB "" for the
	// current database).
	ForDB, ForTable string
	// Strategy is PROMOTE's: FAIL (default), OURS or THEIRS.
	Strategy string
	// Tables are PROMOTE's FOR list (none: every table), Overwrite its
	// OVERWRITE list: tables compared whole whose production rows the
	// promote may replace with the sandbox's.
	Tables, Overwrite []Table
	// DryRun is PROMOTE's DRY RUN: the plan, applied nowhere; Matching its
	// MATCHING '<digest>': apply only the plan of that digest.
	DryRun   bool
	Matching string
}

// Table is a table a SANDBOX statement names: DB "" for the current
// database.
type Table struct{ DB, Name string }

// syntaxHelp is appended to every SANDBOX syntax error.
const syntaxHelp = "use SANDBOX CREATE [name] [TTL <duration>] | ATTACH <name> | DETACH | KEEP [TTL <duration>] | " +
	"DISCARD [<name>] | STATUS | LIST | DIFF [SUMMARY] [<name>] [FOR [db.]table] | EXPORT [<name>] | " +
	"PROMOTE [<name>] [FOR [db.]table, …] [STRATEGY FAIL|OURS|THEIRS] [OVERWRITE [db.]table, …] [DRY RUN | MATCHING '<digest>'] " +
	"(durations like 30m, 2h, 7d or seconds)"

// Parse parses a SANDBOX pseudo-statement: case-insensitive, with an
// optional trailing semicolon. Names are identifiers, optionally
// back-quoted or single-quoted.
func Parse(sql string) (Command, error) {
	toks, err := words(sql)
	if err != nil {
		return Command{}, err
	}
	switch {
	case len(toks) == 0 || !strings.EqualFold(toks[0], "SANDBOX"):
		return Command{}, fmt.Errorf("not a SANDBOX statement; %s", syntaxHelp)
	case len(toks) == 1:
		return Command{}, fmt.Errorf("SANDBOX needs a statement; %s", syntaxHelp)
	}
	p := &parser{c: Command{Verb: Verb(strings.ToUpper(toks[1]))}, rest: toks[2:]}
	if err := p.verb(toks[1]); err != nil {
		return Command{}, err
	}
	if len(p.rest) > 0 {
		return Command{}, fmt.Errorf("unexpected %q in SANDBOX %s; %s", p.rest[0], p.c.Verb, syntaxHelp)
	}
	if p.c.Name != "" {
		if err := ValidName(p.c.Name); err != nil {
			return Command{}, err
		}
	}
	return p.c, nil
}

// parser reads the words after a SANDBOX statement's verb into c.
type parser struct {
	c    Command
	rest []string
}

// verb reads what c's verb (spelled word) takes.
func (p *parser) verb(word string) error {
	switch p.c.Verb {
	case VerbCreate:
		p.nameUnless("TTL")
		return p.ttl()
	case VerbAttach:
		if len(p.rest) == 0 {
			return fmt.Errorf("SANDBOX ATTACH needs a sandbox name; %s", syntaxHelp)
		}
		p.c.Name, p.rest = p.rest[0], p.rest[1:]
	case VerbKeep:
		return p.ttl()
	case VerbDiscard, VerbExport:
		p.nameUnless("")
	case VerbDiff:
		return p.diff()
	case VerbPromote:
		return p.promote()
	case VerbDetach, VerbStatus, VerbList:
	default:
		return fmt.Errorf("unknown SANDBOX statement %q; %s", word, syntaxHelp)
	}
	return nil
}

// nameUnless takes the next word as the sandbox's name, unless there is
// none or it is the keyword kw.
func (p *parser) nameUnless(kw string) {
	if len(p.rest) > 0 && (kw == "" || !strings.EqualFold(p.rest[0], kw)) {
		p.c.Name, p.rest = p.rest[0], p.rest[1:]
	}
}

// ttl reads an optional TTL <duration>.
func (p *parser) ttl() error {
	if len(p.rest) == 0 || !strings.EqualFold(p.rest[0], "TTL") {
		return nil
	}
	if len(p.rest) != 2 {
		return fmt.Errorf("TTL needs one duration; %s", syntaxHelp)
	}
	d, err := duration.Parse(p.rest[1])
	if err != nil {
		return err
	}
	p.c.TTL, p.c.HasTTL = d, true
	p.rest = p.rest[2:]
	return nil
}

// diff reads DIFF [SUMMARY] [name] [FOR table].
func (p *parser) diff() error {
	if len(p.rest) > 0 && strings.EqualFold(p.rest[0], "SUMMARY") {
		p.c.Summary, p.rest = true, p.rest[1:]
	}
	p.nameUnless("FOR")
	if len(p.rest) == 0 || !strings.EqualFold(p.rest[0], "FOR") {
		return nil
	}
	if len(p.rest) < 2 {
		return fmt.Errorf("FOR needs a table; %s", syntaxHelp)
	}
	// One name: db.t may come as several words (`db`.`t`).
	name := p.rest[1]
	p.rest = p.rest[2:]
	for len(p.rest) > 0 && (strings.HasPrefix(p.rest[0], ".") || strings.HasSuffix(name, ".")) {
		name, p.rest = name+p.rest[0], p.rest[1:]
	}
	if db, t, ok := strings.Cut(name, "."); ok {
		p.c.ForDB, p.c.ForTable = db, t
	} else {
		p.c.ForTable = name
	}
	if p.c.ForTable == "" {
		return fmt.Errorf("FOR needs a table; %s", syntaxHelp)
	}
	return nil
}

// promoteWords start PROMOTE's clauses.
var promoteWords = []string{"FOR", "STRATEGY", "OVERWRITE", "DRY", "MATCHING"}

// promote reads PROMOTE [name] and its clauses, in any order: FOR list,
// STRATEGY FAIL|OURS|THEIRS, OVERWRITE list, DRY RUN, MATCHING 'digest'.
func (p *parser) promote() error {
	if len(p.rest) > 0 && !isWord(p.rest[0], promoteWords...) {
		p.c.Name, p.rest = p.rest[0], p.rest[1:]
	}
	p.c.Strategy = "FAIL"
	seen := map[string]bool{}
	for len(p.rest) > 0 {
		kw := strings.ToUpper(p.rest[0])
		if !isWord(kw, promoteWords...) || seen[kw] {
			return nil // unexpected: Parse says so
		}
		seen[kw] = true
		p.rest = p.rest[1:]
		if err := p.promoteClause(kw); err != nil {
			return err
		}
	}
	if p.c.DryRun && p.c.Matching != "" {
		return fmt.Errorf("DRY RUN and MATCHING exclude each other; %s", syntaxHelp)
	}
	return nil
}

// promoteClause reads what PROMOTE's clause kw takes.
func (p *parser) promoteClause(kw string) error {
	var err error
	switch kw {
	case "FOR":
		p.c.Tables, err = p.tables("FOR")
	case "OVERWRITE":
		p.c.Overwrite, err = p.tables("OVERWRITE")
	case "DRY":
		if len(p.rest) == 0 || !strings.EqualFold(p.rest[0], "RUN") {
			return fmt.Errorf("DRY needs RUN; %s", syntaxHelp)
		}
		p.c.DryRun, p.rest = true, p.rest[1:]
	case "MATCHING":
		if len(p.rest) == 0 || !digest.MatchString(p.rest[0]) {
			return fmt.Errorf("MATCHING needs the digest a DRY RUN gave ('sha256:' and 64 hexadecimal digits); %s", syntaxHelp)
		}
		p.c.Matching, p.rest = strings.ToLower(p.rest[0]), p.rest[1:]
	default: // STRATEGY
		if len(p.rest) == 0 {
			return fmt.Errorf("STRATEGY needs FAIL, OURS or THEIRS; %s", syntaxHelp)
		}
		p.c.Strategy, p.rest = strings.ToUpper(p.rest[0]), p.rest[1:]
		if p.c.Strategy != "FAIL" && p.c.Strategy != "OURS" && p.c.Strategy != "THEIRS" {
			return fmt.Errorf("unknown strategy %q: use FAIL, OURS or THEIRS", p.c.Strategy)
		}
	}
	return err
}

// digest matches a plan's digest as DRY RUN gives it.
var digest = regexp.MustCompile(`^(?i)sha256:[0-9a-f]{64}$`)

// tables reads a list of tables ([db.]table, comma-separated; `db`.`t`
// may come as several words) up to the next of PROMOTE's clauses.
func (p *parser) tables(kw string) ([]Table, error) {
	var words []string
	for len(p.rest) > 0 && !isWord(p.rest[0], promoteWords...) {
		words, p.rest = append(words, p.rest[0]), p.rest[1:]
	}
	var out []Table
	for _, item := range strings.Split(strings.Join(words, " "), ",") {
		name := strings.ReplaceAll(strings.ReplaceAll(strings.TrimSpace(item), " .", "."), ". ", ".")
		if name == "" || strings.ContainsAny(name, " ") {
			return nil, fmt.Errorf("%s needs a comma-separated list of tables; %s", kw, syntaxHelp)
		}
		var t Table
		if db, tbl, ok := strings.Cut(name, "."); ok {
			t = Table{DB: db, Name: tbl}
		} else {
			t.Name = name
		}
		if t.Name == "" || t.DB == "" && strings.Contains(name, ".") {
			return nil, fmt.Errorf("%s: %q is not a table; %s", kw, name, syntaxHelp)
		}
		out = append(out, t)
	}
	return out, nil
}

// isWord reports whether w is one of the keywords kws (any case).
func isWord(w string, kws ...string) bool {
	for _, k := range kws {
		if strings.EqualFold(w, k) {
			return true
		}
	}
	return false
}

// ValidName checks a sandbox name: 1 to 48 letters, digits, '_' or '-'.
func ValidName(n string) error {
	if n == "" || len(n) > 48 {
		return fmt.Errorf("sandbox name %q must be 1 to 48 characters", n)
	}
	for _, r := range n {
		if r > unicode.MaxASCII || !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-') {
			return fmt.Errorf("sandbox name %q may hold only letters, digits, '_' and '-'", n)
		}
	}
	return nil
}

// words splits a SANDBOX statement into words, unquoting `x` and 'x',
// skipping comments and one trailing semicolon.
func words(sql string) ([]string, error) {
	var out []string
	s := strings.TrimSpace(sql)
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == ';':
			if strings.TrimSpace(s[i+1:]) != "" {
				return nil, fmt.Errorf("SANDBOX statements must be sent alone, not with other statements")
			}
			i = len(s)
		case c == '#' || c == '-' && strings.HasPrefix(s[i:], "-- "):
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				j = len(s) - i
			}
			i += j
		case c == '/' && strings.HasPrefix(s[i:], "/*"):
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return nil, fmt.Errorf("unterminated comment in SANDBOX statement")
			}
			i += j + 4
		case c == '`' || c == '\'' || c == '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return nil, fmt.Errorf("unterminated quote in SANDBOX statement")
			}
			out = append(out, s[i+1:i+1+j])
			i += j + 2
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\n\r;`'\"", rune(s[j])) {
				j++
			}
			out = append(out, s[i:j])
			i = j
		}
	}
	return out, nil
}
