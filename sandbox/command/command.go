// Package command reads the SANDBOX pseudo-statements (CREATE, ATTACH,
// DETACH, KEEP, DISCARD, STATUS, LIST, DIFF, EXPORT, PROMOTE, RESET) and sandbox
// names; it does no I/O.
package command

import (
	"fmt"
	"regexp"
	"slices"
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
	VerbReset   Verb = "RESET"
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
	// Tables are PROMOTE's and RESET's FOR list (none: every table), Overwrite its
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
	"PROMOTE [<name>] [FOR [db.]table, …] [STRATEGY FAIL|OURS|THEIRS] [OVERWRITE [db.]table, …] [DRY RUN | MATCHING '<digest>'] | " +
	"RESET [<name>] [FOR [db.]table, …] " +
	"(durations like 30m, 2h, 7d or seconds)"

// Parse parses a SANDBOX pseudo-statement: case-insensitive, with an
// optional trailing semicolon. Names are identifiers, optionally
// back-quoted or single-quoted; a quoted word is never a keyword, and
// holds any character (a comma, a dot) as part of its name.
func Parse(sql string) (Command, error) {
	toks, err := words(sql)
	if err != nil {
		return Command{}, err
	}
	switch {
	case len(toks) == 0 || !toks[0].is("SANDBOX"):
		return Command{}, fmt.Errorf("not a SANDBOX statement; %s", syntaxHelp)
	case len(toks) == 1:
		return Command{}, fmt.Errorf("SANDBOX needs a statement; %s", syntaxHelp)
	}
	p := &parser{c: Command{Verb: Verb(strings.ToUpper(toks[1].text))}, rest: toks[2:]}
	if toks[1].quoted {
		p.c.Verb = ""
	}
	if err := p.verb(toks[1].text); err != nil {
		return Command{}, err
	}
	if len(p.rest) > 0 {
		return Command{}, fmt.Errorf("unexpected %q in SANDBOX %s; %s", p.rest[0].text, p.c.Verb, syntaxHelp)
	}
	if p.c.Name != "" {
		if err := ValidName(p.c.Name); err != nil {
			return Command{}, err
		}
	}
	return p.c, nil
}

// word is a word of a SANDBOX statement: quoted ones are names.
type word struct {
	text   string
	quoted bool
}

// is reports whether w is the keyword kw (any case; never a quoted word).
func (w word) is(kw string) bool { return !w.quoted && strings.EqualFold(w.text, kw) }

// parser reads the words after a SANDBOX statement's verb into c.
type parser struct {
	c    Command
	rest []word
}

// at reports whether the next word is one of the keywords kws.
func (p *parser) at(kws ...string) bool {
	return len(p.rest) > 0 && slices.ContainsFunc(kws, p.rest[0].is)
}

// take consumes the next word and returns its text.
func (p *parser) take() string {
	w := p.rest[0].text
	p.rest = p.rest[1:]
	return w
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
		p.c.Name = p.take()
	case VerbKeep:
		return p.ttl()
	case VerbDiscard, VerbExport:
		p.nameUnless()
	case VerbDiff:
		return p.diff()
	case VerbPromote:
		return p.promote()
	case VerbReset:
		return p.reset()
	case VerbDetach, VerbStatus, VerbList:
	default:
		return fmt.Errorf("unknown SANDBOX statement %q; %s", word, syntaxHelp)
	}
	return nil
}

// nameUnless takes the next word as the sandbox's name, unless there is
// none or it is one of the keywords kws.
func (p *parser) nameUnless(kws ...string) {
	if len(p.rest) > 0 && !p.at(kws...) {
		p.c.Name = p.take()
	}
}

// ttl reads an optional TTL <duration>.
func (p *parser) ttl() error {
	if !p.at("TTL") {
		return nil
	}
	if len(p.rest) != 2 {
		return fmt.Errorf("TTL needs one duration; %s", syntaxHelp)
	}
	d, err := duration.Parse(p.rest[1].text)
	if err != nil {
		return err
	}
	p.c.TTL, p.c.HasTTL = d, true
	p.rest = p.rest[2:]
	return nil
}

// diff reads DIFF [SUMMARY] [name] [FOR table].
func (p *parser) diff() error {
	if p.at("SUMMARY") {
		p.c.Summary = true
		p.take()
	}
	p.nameUnless("FOR")
	if !p.at("FOR") {
		return nil
	}
	p.take()
	ts, err := p.tables("FOR")
	if err != nil || len(ts) != 1 {
		return fmt.Errorf("FOR needs one [db.]table; %s", syntaxHelp)
	}
	p.c.ForDB, p.c.ForTable = ts[0].DB, ts[0].Name
	return nil
}

// reset reads RESET [name] [FOR list].
func (p *parser) reset() error {
	p.nameUnless("FOR")
	if !p.at("FOR") {
		return nil
	}
	p.take()
	var err error
	p.c.Tables, err = p.tables("FOR")
	return err
}

// promoteWords start PROMOTE's clauses.
var promoteWords = []string{"FOR", "STRATEGY", "OVERWRITE", "DRY", "MATCHING"}

// promote reads PROMOTE [name] and its clauses, in any order: FOR list,
// STRATEGY FAIL|OURS|THEIRS, OVERWRITE list, DRY RUN, MATCHING 'digest'.
func (p *parser) promote() error {
	p.nameUnless(promoteWords...)
	p.c.Strategy = "FAIL"
	seen := map[string]bool{}
	for p.at(promoteWords...) {
		kw := strings.ToUpper(p.take())
		if seen[kw] {
			return fmt.Errorf("%s given twice; %s", kw, syntaxHelp)
		}
		seen[kw] = true
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
		if !p.at("RUN") {
			return fmt.Errorf("DRY needs RUN; %s", syntaxHelp)
		}
		p.c.DryRun = true
		p.take()
	case "MATCHING":
		if len(p.rest) == 0 || !digest.MatchString(p.rest[0].text) {
			return fmt.Errorf("MATCHING needs the digest a DRY RUN gave ('sha256:' and 64 hexadecimal digits); %s", syntaxHelp)
		}
		p.c.Matching = strings.ToLower(p.take())
	default: // STRATEGY
		if len(p.rest) == 0 {
			return fmt.Errorf("STRATEGY needs FAIL, OURS or THEIRS; %s", syntaxHelp)
		}
		p.c.Strategy = strings.ToUpper(p.take())
		if p.c.Strategy != "FAIL" && p.c.Strategy != "OURS" && p.c.Strategy != "THEIRS" {
			return fmt.Errorf("unknown strategy %q: use FAIL, OURS or THEIRS", p.c.Strategy)
		}
	}
	return err
}

// digest matches a plan's digest as DRY RUN gives it.
var digest = regexp.MustCompile(`^(?i)sha256:[0-9a-f]{64}$`)

// tables reads a comma-separated list of [db.]table up to the next of
// PROMOTE's clauses: a quoted word is one name whatever it holds; in the
// others, dots and commas separate.
func (p *parser) tables(kw string) ([]Table, error) {
	var parts []string // names, "." and ","
	for len(p.rest) > 0 && !p.at(promoteWords...) {
		w := p.rest[0]
		p.rest = p.rest[1:]
		if w.quoted {
			parts = append(parts, "`"+w.text)
			continue
		}
		for _, piece := range splitKeep(w.text, ".,") {
			parts = append(parts, piece)
		}
	}
	var out []Table
	for _, item := range splitOn(parts, ",") {
		t, ok := tableOf(item)
		if !ok {
			return nil, fmt.Errorf("%s needs a comma-separated list of [db.]table; %s", kw, syntaxHelp)
		}
		out = append(out, t)
	}
	return out, nil
}

// tableOf is the table the parts name, name or name "." name (a quoted
// name starts with a back quote).
func tableOf(parts []string) (Table, bool) {
	name := func(s string) (string, bool) {
		n := strings.TrimPrefix(s, "`")
		return n, n != "" && s != "." && s != ","
	}
	switch len(parts) {
	case 1:
		n, ok := name(parts[0])
		return Table{Name: n}, ok
	case 3:
		db, ok1 := name(parts[0])
		t, ok2 := name(parts[2])
		return Table{DB: db, Name: t}, ok1 && ok2 && parts[1] == "."
	}
	return Table{}, false
}

// splitKeep splits s at each of the characters seps, keeping them as
// pieces of their own.
func splitKeep(s, seps string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(seps, s[i]) >= 0 {
			if i > start {
				out = append(out, s[start:i])
			}
			out, start = append(out, s[i:i+1]), i+1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// splitOn splits parts at each sep (an empty list: one empty item).
func splitOn(parts []string, sep string) [][]string {
	out := [][]string{nil}
	for _, p := range parts {
		if p == sep {
			out = append(out, nil)
			continue
		}
		out[len(out)-1] = append(out[len(out)-1], p)
	}
	return out
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

// words splits a SANDBOX statement into words, unquoting `x` and 'x'
// (quoted words), skipping comments and one trailing semicolon.
func words(sql string) ([]word, error) {
	var out []word
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
			out = append(out, word{text: s[i+1 : i+1+j], quoted: true})
			i += j + 2
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\n\r;`'\"", rune(s[j])) {
				j++
			}
			out = append(out, word{text: s[i:j]})
			i = j
		}
	}
	return out, nil
}
