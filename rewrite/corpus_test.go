package rewrite

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite/collect"
	"github.com/sqlfork/sqlfork-proxy/rewrite/corpus"
)

// mapResolver maps tables case-insensitively, as lower_case_table_names=1.
type mapResolver map[Table]Table

func (m mapResolver) Resolve(t Table, write bool) (Table, bool, error) {
	p, ok := m[Table{DB: strings.ToLower(t.DB), Name: strings.ToLower(t.Name)}]
	return p, ok, nil
}

// corpusResolver is corpus.Resolver as a Resolver.
func corpusResolver() mapResolver {
	m := mapResolver{}
	for k, v := range corpus.Resolver {
		m[Table{DB: k[0], Name: k[1]}] = Table{DB: v[0], Name: v[1]}
	}
	return m
}

func tables(ts []Table) string {
	var s []string
	for _, t := range ts {
		s = append(s, t.String())
	}
	return strings.Join(s, ",")
}

func runCorpus(t *testing.T, cases []corpus.Case) {
	e := NewEngine(0)
	resolver := corpusResolver()
	for _, c := range cases {
		t.Run(c.SQL, func(t *testing.T) {
			opts := Options{DB: c.DB, Server: Server{Flavor: MariaDB, Version: corpus.ServerVersion}}
			if opts.DB == "" {
				opts.DB = "app"
			}
			a := e.Analyze(c.SQL, opts)
			var reads, writes []Table
			for _, st := range a.Statements {
				reads = append(reads, st.Reads...)
				writes = append(writes, st.Writes...)
			}
			reads, writes = uniqueTables(reads), uniqueTables(writes)
			if got := a.Statements[0].Class.String(); got != c.Class {
				t.Errorf("class %s, want %s", got, c.Class)
			}
			if got := tables(reads); got != c.Reads {
				t.Errorf("reads %q, want %q", got, c.Reads)
			}
			if got := tables(writes); got != c.Writes {
				t.Errorf("writes %q, want %q", got, c.Writes)
			}
			res, err := e.Rewrite(c.SQL, opts, resolver)
			if c.Refuse != "" {
				var r *Refusal
				if !errors.As(err, &r) || !strings.Contains(r.Message, c.Refuse) {
					t.Fatalf("want refusal containing %q, got %v (result %+v)", c.Refuse, err, res)
				}
				return
			}
			if err != nil {
				t.Fatalf("rewrite: %v", err)
			}
			want := c.Want
			if want == "" {
				want = c.SQL
			}
			if res.SQL != want {
				t.Fatalf("rewrite:\n got  %s\n want %s", res.SQL, want)
			}
		})
	}
}

func TestCorpus(t *testing.T) {
	cases := corpus.Cases()
	runCorpus(t, cases)
	if len(cases) < 40 {
		t.Fatalf("corpus has only %d cases", len(cases))
	}
}

// uniqueTables sorts ts and drops repeats (a table read by two statements).
func uniqueTables(ts []Table) []Table {
	collect.SortTables(ts)
	var out []Table
	for i, t := range ts {
		if i == 0 || t != ts[i-1] {
			out = append(out, t)
		}
	}
	return out
}

// forkOnWrite maps a table only once a statement writes it, as a sandbox
// session does; it records the write flags it was asked with.
type forkOnWrite struct {
	forked map[Table]bool
	asked  []string
}

func (f *forkOnWrite) Resolve(t Table, write bool) (Table, bool, error) {
	f.asked = append(f.asked, fmt.Sprintf("%s:%v", t, write))
	k := Table{DB: strings.ToLower(t.DB), Name: strings.ToLower(t.Name)}
	if write {
		f.forked[k] = true
	}
	if f.forked[k] {
		return Table{DB: "sbx", Name: "f_" + k.Name}, true, nil
	}
	return Table{}, false, nil
}

// TestWriteFlagIsAnyReference: a table read and written in one input is
// resolved as written, so a fork-on-first-write resolver redirects every
// reference.
func TestWriteFlagIsAnyReference(t *testing.T) {
	e := NewEngine(0)
	for sql, want := range map[string]string{
		"INSERT INTO users SELECT * FROM users":       "INSERT INTO `sbx`.`f_users` SELECT * FROM `sbx`.`f_users`",
		"SELECT * FROM users; UPDATE users SET a = 1": "SELECT * FROM `sbx`.`f_users`; UPDATE `sbx`.`f_users` SET a = 1",
		"SELECT * FROM users WHERE id IN (SELECT 1)":  "SELECT * FROM users WHERE id IN (SELECT 1)",
	} {
		r := &forkOnWrite{forked: map[Table]bool{}}
		res, err := e.Rewrite(sql, Options{DB: "app"}, r)
		if err != nil || res.SQL != want {
			t.Errorf("%s:\n got  %v %v\n want %s (asked %v)", sql, res, err, want, r.asked)
		}
	}
}

// TestCaseSensitiveNames: with lower_case_table_names=0, Users and users
// are different tables and only the mapped spelling is redirected.
func TestCaseSensitiveNames(t *testing.T) {
	e := NewEngine(0)
	r := mapResolverExact{{DB: "app", Name: "users"}: {DB: "sbx", Name: "s1_users"}}
	sql := "SELECT users.id, Users.id FROM users JOIN Users ON users.id = Users.id"
	res, err := e.Rewrite(sql, Options{DB: "app", CaseSensitiveNames: true}, r)
	want := "SELECT `s1_users`.id, Users.id FROM `sbx`.`s1_users` JOIN Users ON `s1_users`.id = Users.id"
	if err != nil || res.SQL != want {
		t.Fatalf("got %v %v\nwant %s", res, err, want)
	}
}

// mapResolverExact maps tables by exact spelling (lower_case_table_names=0).
type mapResolverExact map[Table]Table

func (m mapResolverExact) Resolve(t Table, write bool) (Table, bool, error) {
	p, ok := m[t]
	return p, ok, nil
}
