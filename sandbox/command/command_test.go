package command

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseCommand(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Command
		err  string
	}{
		{in: "SANDBOX CREATE", want: Command{Verb: VerbCreate}},
		{in: "sandbox create demo ttl 2h;", want: Command{Verb: VerbCreate, Name: "demo", TTL: 2 * time.Hour, HasTTL: true}},
		{in: "SANDBOX CREATE TTL 7d", want: Command{Verb: VerbCreate, TTL: 7 * 24 * time.Hour, HasTTL: true}},
		{in: "SANDBOX CREATE `my-box` /* c */ TTL 90", want: Command{Verb: VerbCreate, Name: "my-box", TTL: 90 * time.Second, HasTTL: true}},
		{in: " SANDBOX ATTACH 'a_1' ", want: Command{Verb: VerbAttach, Name: "a_1"}},
		{in: "SANDBOX DETACH", want: Command{Verb: VerbDetach}},
		{in: "SANDBOX KEEP TTL 0", want: Command{Verb: VerbKeep, HasTTL: true}},
		{in: "SANDBOX KEEP", want: Command{Verb: VerbKeep}},
		{in: "SANDBOX DISCARD", want: Command{Verb: VerbDiscard}},
		{in: "SANDBOX DISCARD x", want: Command{Verb: VerbDiscard, Name: "x"}},
		{in: "SANDBOX STATUS # why", want: Command{Verb: VerbStatus}},
		{in: "SANDBOX LIST;", want: Command{Verb: VerbList}},
		{in: "SANDBOX DIFF", want: Command{Verb: VerbDiff}},
		{in: "SANDBOX DIFF SUMMARY", want: Command{Verb: VerbDiff, Summary: true}},
		{in: "sandbox diff summary box for app.t", want: Command{Verb: VerbDiff, Summary: true, Name: "box", ForDB: "app", ForTable: "t"}},
		{in: "SANDBOX DIFF FOR `app`.`my t`", want: Command{Verb: VerbDiff, ForDB: "app", ForTable: "my t"}},
		{in: "SANDBOX DIFF box FOR t", want: Command{Verb: VerbDiff, Name: "box", ForTable: "t"}},
		{in: "SANDBOX DIFF FOR", err: "FOR needs one [db.]table"},
		{in: "SANDBOX DIFF a b", err: "unexpected"},
		{in: "SANDBOX DIFF SUMMARY a FOR x extra", err: "FOR needs one [db.]table"},
		{in: "SANDBOX DIFF FOR `d.b`.`t`", want: Command{Verb: VerbDiff, ForDB: "d.b", ForTable: "t"}},
		{in: "SANDBOX DIFF FOR a, b", err: "FOR needs one [db.]table"},
		{in: "SANDBOX DIFF FOR `d` . `t`", want: Command{Verb: VerbDiff, ForDB: "d", ForTable: "t"}},
		{in: "SANDBOX EXPORT", want: Command{Verb: VerbExport}},
		{in: "SANDBOX EXPORT box;", want: Command{Verb: VerbExport, Name: "box"}},
		{in: "SANDBOX PROMOTE", want: Command{Verb: VerbPromote, Strategy: "FAIL"}},
		{in: "SANDBOX PROMOTE box STRATEGY ours", want: Command{Verb: VerbPromote, Name: "box", Strategy: "OURS"}},
		{in: "SANDBOX PROMOTE STRATEGY THEIRS", want: Command{Verb: VerbPromote, Strategy: "THEIRS"}},
		{in: "SANDBOX PROMOTE STRATEGY", err: "STRATEGY needs"},
		{in: "SANDBOX PROMOTE STRATEGY MINE", err: "unknown strategy"},
		{in: "SANDBOX PROMOTE box FOR app.t, `u` STRATEGY theirs DRY RUN", want: Command{Verb: VerbPromote, Name: "box", Strategy: "THEIRS",
			Tables: []Table{{DB: "app", Name: "t"}, {Name: "u"}}, DryRun: true}},
		{in: "SANDBOX PROMOTE OVERWRITE `d` . `t` ,x MATCHING 'SHA256:" + strings.Repeat("Ab", 32) + "' FOR y", want: Command{Verb: VerbPromote,
			Strategy: "FAIL", Overwrite: []Table{{DB: "d", Name: "t"}, {Name: "x"}}, Tables: []Table{{Name: "y"}},
			Matching: "sha256:" + strings.Repeat("ab", 32)}},
		{in: "SANDBOX PROMOTE DRY RUN MATCHING 'sha256:" + strings.Repeat("0", 64) + "'", err: "exclude each other"},
		{in: "SANDBOX PROMOTE MATCHING 'abc'", err: "MATCHING needs"},
		{in: "SANDBOX PROMOTE DRY", err: "DRY needs RUN"},
		{in: "SANDBOX PROMOTE FOR", err: "FOR needs a comma-separated list"},
		{in: "SANDBOX PROMOTE FOR a b", err: "FOR needs a comma-separated list"},
		{in: "SANDBOX PROMOTE FOR a,, b", err: "FOR needs a comma-separated list"},
		{in: "SANDBOX PROMOTE OVERWRITE .t", err: "OVERWRITE needs a comma-separated list"},
		{in: "SANDBOX PROMOTE FOR a FOR b", err: "FOR given twice"},
		// A quoted word is one name, whatever it holds, and never a keyword.
		{in: "SANDBOX PROMOTE FOR `a,b`, `d.b`.`t`, `dry` OVERWRITE 'x y'", want: Command{Verb: VerbPromote, Strategy: "FAIL",
			Tables: []Table{{Name: "a,b"}, {DB: "d.b", Name: "t"}, {Name: "dry"}}, Overwrite: []Table{{Name: "x y"}}}},
		{in: "SANDBOX PROMOTE `for`", want: Command{Verb: VerbPromote, Name: "for", Strategy: "FAIL"}},
		{in: "SANDBOX `LIST`", err: "unknown SANDBOX statement"},
		{in: "SANDBOX RESET", want: Command{Verb: VerbReset}},
		{in: "sandbox reset box;", want: Command{Verb: VerbReset, Name: "box"}},
		{in: "SANDBOX RESET FOR app.t, u", want: Command{Verb: VerbReset, Tables: []Table{{DB: "app", Name: "t"}, {Name: "u"}}}},
		{in: "SANDBOX RESET box FOR `a,b`, `d.b`.`t`", want: Command{Verb: VerbReset, Name: "box", Tables: []Table{{Name: "a,b"}, {DB: "d.b", Name: "t"}}}},
		{in: "SANDBOX RESET `for`", want: Command{Verb: VerbReset, Name: "for"}},
		{in: "SANDBOX RESET `for` FOR `for`", want: Command{Verb: VerbReset, Name: "for", Tables: []Table{{Name: "for"}}}},
		{in: "SANDBOX RESET FOR", err: "FOR needs a comma-separated list"},
		{in: "SANDBOX RESET FOR a FOR b", err: "unexpected"},
		{in: "SANDBOX RESET FOR a STRATEGY ours", err: "unexpected"},
		{in: "SANDBOX RESET a b", err: "unexpected"},
		{in: "SANDBOX RESET a.b", err: "may hold only"},
		{in: "SANDBOX RESET FOR a.b.c", err: "FOR needs a comma-separated list"},
		{in: "SANDBOX `RESET`", err: "unknown SANDBOX statement"},
		{in: "SANDBOX PROMOTE FOR a.b.c", err: "FOR needs a comma-separated list"},
		{in: "SANDBOX ATTACH", err: "needs a sandbox name"},
		{in: "SANDBOX FROB", err: "unknown SANDBOX statement"},
		{in: "SANDBOX LIST extra", err: "unexpected"},
		{in: "SANDBOX CREATE a TTL", err: "TTL needs one duration"},
		{in: "SANDBOX CREATE a TTL soon", err: "bad duration"},
		{in: "SANDBOX CREATE a.b", err: "may hold only"},
		{in: "SANDBOX CREATE " + strings.Repeat("x", 49), err: "1 to 48"},
		{in: "SANDBOX LIST; SELECT 1", err: "sent alone"},
		{in: "SANDBOX ATTACH `x", err: "unterminated"},
		{in: "SELECT 1", err: "not a SANDBOX"},
		{in: "SANDBOX", err: "SANDBOX needs a statement; use SANDBOX CREATE"},
		{in: "sandbox ; ", err: "SANDBOX needs a statement"},
	} {
		got, err := Parse(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want one containing %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
}

// FuzzParseCommand: any text parses or is refused with an error, never a
// panic; what parses names a known verb, a valid name and a strategy
// PROMOTE knows.
func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{"SANDBOX DIFF SUMMARY box FOR `a`.`b`", "SANDBOX PROMOTE x STRATEGY ours;", "SANDBOX EXPORT",
		"SANDBOX CREATE a TTL 2h", "sandbox diff for a . b", "SANDBOX DIFF FOR .", "SANDBOX DIFF FOR `",
		"SANDBOX PROMOTE b FOR a.t, `u` OVERWRITE x DRY RUN", "SANDBOX PROMOTE FOR `a,b`, `d.b`.`t`", "SANDBOX PROMOTE MATCHING 'sha256:" + strings.Repeat("f", 64) + "'",
		"SANDBOX RESET box FOR a.t, `u`"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Parse(s)
		if err != nil {
			return
		}
		switch c.Verb {
		case VerbCreate, VerbAttach, VerbDetach, VerbKeep, VerbDiscard, VerbStatus, VerbList, VerbDiff, VerbExport, VerbPromote, VerbReset:
		default:
			t.Fatalf("%q: verb %q", s, c.Verb)
		}
		if c.Name != "" && ValidName(c.Name) != nil {
			t.Fatalf("%q: name %q", s, c.Name)
		}
		if c.Verb == VerbPromote && c.Strategy != "FAIL" && c.Strategy != "OURS" && c.Strategy != "THEIRS" {
			t.Fatalf("%q: strategy %q", s, c.Strategy)
		}
		if c.Verb == VerbDiff && c.ForDB != "" && c.ForTable == "" {
			t.Fatalf("%q: FOR %q.%q", s, c.ForDB, c.ForTable)
		}
		for _, tb := range append(c.Tables, c.Overwrite...) {
			if tb.Name == "" {
				t.Fatalf("%q: table %+v", s, tb)
			}
		}
		if c.DryRun && c.Matching != "" || c.Matching != "" && !digest.MatchString(c.Matching) {
			t.Fatalf("%q: DRY RUN %v, MATCHING %q", s, c.DryRun, c.Matching)
		}
	})
}
