package forking

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/grants"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/forking/forkingtest"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/session/sessiontest"
)

// These tests drive the Forker against the in-memory upstream
// (session/sessiontest), built as session.New builds it from forkingtest's
// parts: a registry on the fake's side connections, the catalog and
// trigger readers, the change capture (off, as the fake keeps no side
// tables) and a strategy.

const prefix = "_sqlfork"

// rig is a Forker on a fake upstream holding app.t (3 rows, 16384 bytes)
// and app.u (10 rows, 32768 bytes).
type rig struct {
	t        *testing.T
	ctx      context.Context
	up       *sessiontest.Upstream
	names    sandbox.Names
	reg      *registry.Registry
	fk       *Forker
	obs      *recObserver
	maxBytes atomic.Int64
	// sb is a sandbox a test keeps at hand.
	sb *registry.Sandbox
}

// exec runs sql on the upstream as a sandbox's statement would.
func (r *rig) exec(sql string) {
	r.t.Helper()
	if _, err := r.up.Exec(sql); err != nil {
		r.t.Fatalf("%s: %v", sql, err)
	}
}

// recObserver records what the Forker reports.
type recObserver struct {
	mu     sync.Mutex
	forked []string // "schema" or "full", with rows
	failed []string // causes
}

func (o *recObserver) Filled(int64, int64) {}

func (o *recObserver) Forked(strategy string, schemaOnly bool, _ time.Duration, rows, _ int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	kind := "full"
	if schemaOnly {
		kind = "schema"
	}
	o.forked = append(o.forked, fmt.Sprintf("%s %s %d", strategy, kind, rows))
}

func (o *recObserver) ForkFailed(strategy, cause string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.failed = append(o.failed, strategy+" "+cause)
}

func (o *recObserver) report() (forked, failed []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.forked...), append([]string(nil), o.failed...)
}

// appTables is the production data of most tests.
func appTables(up *sessiontest.Upstream) {
	up.AddTable(sessiontest.Table{DB: "app", Name: "t", Rows: 3, Bytes: 16384, AutoIncrement: 4,
		Columns: []sessiontest.Column{{Name: "id"}, {Name: "a"}}})
	up.AddTable(sessiontest.Table{DB: "app", Name: "u", Rows: 10, Bytes: 32768,
		Columns: []sessiontest.Column{{Name: "id"}, {Name: "t_id"}}})
}

// newRig builds a Forker with the strategy named (copy or seekdb) on a
// fake upstream holding appTables, after setup (nil: none) changed it.
// When the test ends the registry is closed and the test fails on
// statements the fake does not know, writes to production and side
// connections left open.
func newRig(t *testing.T, strategy string, setup func(up *sessiontest.Upstream)) *rig {
	t.Helper()
	up := sessiontest.NewUpstream()
	appTables(up)
	if setup != nil {
		setup(up)
	}
	r := &rig{t: t, ctx: context.Background(), up: up}
	// Registered first, so run last: after every process closed.
	t.Cleanup(func() { up.Check(t, prefix) })
	r.reg, r.fk = r.process(strategy)
	r.names = r.fk.names
	r.obs = &recObserver{}
	r.fk.SetObserver(r.obs)
	return r
}

// process builds a registry and a Forker on r's upstream: another proxy
// process when r has one already. Both close when the test ends.
func (r *rig) process(strategy string) (*registry.Registry, *Forker) {
	r.t.Helper()
	p := forkingtest.New(r.t, r.up, strategy)
	fk := New(Config{Prefix: prefix, ForkTimeout: time.Minute}, zap.NewNop(), p.Names, p.Registry, p.Strategy, p.Captures,
		p.Catalog, p.Triggers, func(string) int64 { return r.maxBytes.Load() })
	return p.Registry, fk
}

// sandbox makes a sandbox called name ("" for an anonymous one) of owner u.
func (r *rig) sandbox(name string) *registry.Sandbox {
	r.t.Helper()
	sb, err := r.reg.NewSandbox(name, "u")
	if err != nil {
		r.t.Fatal(err)
	}
	return sb
}

func tbl(name string) rewrite.Table { return rewrite.Table{DB: "app", Name: name} }

// phys is the fork of app.name in sb.
func (r *rig) phys(sb *registry.Sandbox, name string) rewrite.Table {
	return r.names.Physical(sb.ID, tbl(name))
}

// row is the registry's kind of app.name in sb ("" for no row).
func (r *rig) row(sb *registry.Sandbox, name string) string {
	r.t.Helper()
	rows, err := r.up.Query("SELECT kind FROM `" + prefix + "_meta`.tables WHERE sandbox_id = '" + sb.ID +
		"' AND db = 'app' AND tbl = '" + name + "'")
	if err != nil {
		r.t.Fatal(err)
	}
	if len(rows) == 0 {
		return ""
	}
	return *rows[0][0]
}

// kind is sb's in-memory kind of app.name ("" when it has none).
func (r *rig) kind(sb *registry.Sandbox, name string) sandbox.Kind {
	if e, ok := sb.Resolve(r.names.Key(tbl(name))); ok {
		return e.Kind
	}
	return ""
}

// has reports whether the fork of app.name in sb exists upstream.
func (r *rig) has(sb *registry.Sandbox, name string) bool {
	p := r.phys(sb, name)
	return r.up.HasTable(p.DB, p.Name)
}

// count is how many logged statements match re.
func (r *rig) count(re string) int { return r.up.Count(re) }

// q quotes an identifier for a regular expression.
func q(s string) string { return regexp.QuoteMeta("`" + s + "`") }

// qt is a table quoted for a regular expression.
func qt(t rewrite.Table) string { return q(t.DB) + `\.` + q(t.Name) }

// code returns the MySQL error code of err (0 for none).
func code(err error) uint16 {
	c, _, _, _ := sessiontest.Code(err)
	return c
}

// TestEnsureModes: a full fork copies the table and its rows, a
// schema-only one its structure only; each is recorded in the registry
// and in memory, counted and reported once, and a second Ensure of the
// same table makes nothing. A table production lacks gets a place, not a
// fork.
func TestEnsureModes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		table    string
		mode     forker.Mode
		kind     sandbox.Kind
		copies   int // INSERT … SELECT of rows
		exists   bool
		forks    int64 // Forks()
		reported []string
	}{
		{name: "full", table: "t", mode: forker.Full, kind: sandbox.KindFork, copies: 1, exists: true, forks: 1,
			reported: []string{"copy full 3"}},
		{name: "schema only", table: "t", mode: forker.SchemaOnly, kind: sandbox.KindSchema, exists: true,
			reported: []string{"copy schema 0"}},
		{name: "not in production", table: "nosuch", mode: forker.Full, kind: sandbox.KindAbsent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, "copy", nil)
			sb := r.sandbox("")
			p := r.phys(sb, tc.table)
			e, made, err := r.fk.Ensure(r.ctx, sb, tbl(tc.table), tc.mode, nil)
			if err != nil || !made {
				t.Fatalf("Ensure = %v, %v, %v", e, made, err)
			}
			if e.Kind != tc.kind || e.Phys != p || e.Logical != tbl(tc.table) {
				t.Errorf("entry %+v, want kind %s at %s", e, tc.kind, p)
			}
			if got := r.row(sb, tc.table); got != string(tc.kind) {
				t.Errorf("registry row %q, want %q", got, tc.kind)
			}
			if got := r.kind(sb, tc.table); got != tc.kind {
				t.Errorf("in memory %q, want %q", got, tc.kind)
			}
			if got := r.has(sb, tc.table); got != tc.exists {
				t.Errorf("fork exists: %v, want %v", got, tc.exists)
			}
			if n := r.count(`^INSERT INTO ` + qt(p) + ` .* SELECT `); n != tc.copies {
				t.Errorf("%d row copies, want %d", n, tc.copies)
			}
			if r.fk.Forks() != tc.forks {
				t.Errorf("Forks() = %d, want %d", r.fk.Forks(), tc.forks)
			}
			if tc.exists {
				f, _ := r.up.Describe(p.DB, p.Name)
				if want := map[bool]int64{true: 3, false: 0}[tc.mode == forker.Full]; f.Rows != want {
					t.Errorf("fork holds %d rows, want %d", f.Rows, want)
				}
			}
			// The fork lock is taken and given back around the fork.
			lock := regexp.QuoteMeta(r.reg.LockName(sb.ID, r.names.Key(tbl(tc.table))))
			if got, rel := r.count(`^SELECT GET_LOCK\('`+lock+`', 60\)$`), r.count(`^SELECT RELEASE_LOCK\('`+lock+`'\)$`); got != 1 || rel != 1 {
				t.Errorf("fork lock taken %d times, released %d times", got, rel)
			}
			forked, failed := r.obs.report()
			if strings.Join(forked, ";") != strings.Join(tc.reported, ";") || len(failed) != 0 {
				t.Errorf("reported forked %q, failed %q; want forked %q", forked, failed, tc.reported)
			}
			// Once per table: the same or another mode finds it in place.
			before := len(r.up.Log())
			for _, mode := range []forker.Mode{forker.Full, forker.SchemaOnly} {
				again, made, err := r.fk.Ensure(r.ctx, sb, tbl(tc.table), mode, nil)
				if tc.kind == sandbox.KindAbsent {
					// An absent table is looked up again: a statement may
					// have created it since.
					if err != nil || again.Kind != sandbox.KindAbsent {
						t.Errorf("Ensure again (%v) = %+v, %v", mode, again, err)
					}
					continue
				}
				if err != nil || made || again != e {
					t.Errorf("Ensure again (%v) = %+v, %v, %v; want the first entry, not made", mode, again, made, err)
				}
			}
			if tc.kind != sandbox.KindAbsent && len(r.up.Log()) != before {
				t.Errorf("a second Ensure ran statements: %+v", r.up.Log()[before:])
			}
		})
	}
}

// TestEnsureSeekDB: with the seekdb strategy a full fork is FORK TABLE and
// a schema-only one CREATE TABLE … LIKE.
func TestEnsureSeekDB(t *testing.T) {
	r := newRig(t, "seekdb", func(up *sessiontest.Upstream) {
		up.SetVersion("5.7.25-OceanBase seekdb-v1.1.0.0")
	})
	sb := r.sandbox("")
	if _, _, err := r.fk.Ensure(r.ctx, sb, tbl("t"), forker.Full, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.fk.Ensure(r.ctx, sb, tbl("u"), forker.SchemaOnly, nil); err != nil {
		t.Fatal(err)
	}
	if n := r.count(`^FORK TABLE ` + qt(tbl("t")) + ` TO ` + qt(r.phys(sb, "t")) + `$`); n != 1 {
		t.Errorf("%d FORK TABLE of t", n)
	}
	if n := r.count(`^CREATE TABLE ` + qt(r.phys(sb, "u")) + ` LIKE ` + qt(tbl("u")) + `$`); n != 1 {
		t.Errorf("%d CREATE TABLE … LIKE of u", n)
	}
	forked, _ := r.obs.report()
	if strings.Join(forked, ";") != "seekdb full 3;seekdb schema 0" {
		t.Errorf("reported %q", forked)
	}
	if r.row(sb, "t") != "fork" || r.row(sb, "u") != "schema" {
		t.Errorf("registry rows %q, %q", r.row(sb, "t"), r.row(sb, "u"))
	}
}

// TestEnsureMaxForkBytes: a full fork that would take the sandbox past its
// owner's max-fork-bytes is refused with 1114 and the guardrail's reason,
// and leaves nothing; a schema-only fork copies no bytes and is not
// bounded; no limit bounds nothing.
func TestEnsureMaxForkBytes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		limit  int64
		mode   forker.Mode
		refuse bool
	}{
		{name: "past the limit", limit: 40000, mode: forker.Full, refuse: true},
		{name: "exactly at the limit", limit: 16384 + 32768, mode: forker.Full},
		{name: "schema only", limit: 40000, mode: forker.SchemaOnly},
		{name: "no limit", limit: 0, mode: forker.Full},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, "copy", nil)
			r.maxBytes.Store(tc.limit)
			sb := r.sandbox("")
			if _, _, err := r.fk.Ensure(r.ctx, sb, tbl("t"), forker.Full, nil); err != nil {
				t.Fatal(err)
			}
			if sb.ForkedBytes() != 16384 {
				t.Errorf("ForkedBytes = %d after the fork of t", sb.ForkedBytes())
			}
			e, _, err := r.fk.Ensure(r.ctx, sb, tbl("u"), tc.mode, nil)
			if !tc.refuse {
				if err != nil || e == nil {
					t.Fatalf("Ensure(u) = %v, %v", e, err)
				}
				return
			}
			var ref *rewrite.Refusal
			if !errors.As(err, &ref) || ref.Reason != ReasonMaxForkBytes || code(err) != 1114 ||
				!strings.Contains(err.Error(), "past its limit of 40000 forked bytes (16384 used)") {
				t.Fatalf("Ensure(u) = %v, want a 1114 refusal for %s", err, ReasonMaxForkBytes)
			}
			if r.row(sb, "u") != "" || r.kind(sb, "u") != "" || r.has(sb, "u") {
				t.Errorf("the refused fork left: row %q, entry %q, table %v", r.row(sb, "u"), r.kind(sb, "u"), r.has(sb, "u"))
			}
			if _, failed := r.obs.report(); strings.Join(failed, ";") != "copy refused" {
				t.Errorf("failures reported: %q", failed)
			}
		})
	}
}

// TestEnsureFails: a fork that fails at any step leaves no fork, no entry
// and (but for the marker a failed final write leaves to reconciliation)
// no registry row; the failure is counted by cause, and the next Ensure
// forks.
func TestEnsureFails(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rule   string
		rows   []*string // answer the rule with these rows instead of failing
		code   uint16    // error code expected (0: not a MySQL error)
		cause  string
		marker bool // the marker row stays
		broken bool // the connection breaks: nothing can be cleaned up
		schema bool // the sandbox's database exists already (a leftover needs one)
	}{
		{name: "copy fails", rule: `^INSERT INTO .* SELECT `, code: 1205, cause: "error"},
		{name: "create fails", rule: `^CREATE TABLE .* LIKE `, code: 1205, cause: "error"},
		{name: "marker cannot be written", rule: `^REPLACE INTO .*\.tables .*'forking'`, code: 1205, cause: "error"},
		{name: "fork row cannot be written", rule: `^REPLACE INTO .*\.tables .*'fork'`, code: 1205, cause: "error", marker: true},
		{name: "sandbox cannot be recorded", rule: `^INSERT INTO .*\.sandboxes `, code: 1205, cause: "error"},
		{name: "schema cannot be created", rule: `^CREATE DATABASE .*_app`, code: 1205, cause: "error"},
		{name: "schema defaults unreadable", rule: `^SELECT SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME`, code: 1205, cause: "error"},
		{name: "leftover cannot be cleared", rule: `^DROP TABLE IF EXISTS .*_app`, code: 1205, cause: "error", schema: true},
		{name: "lock unreadable", rule: `^SELECT GET_LOCK\(.*, 60\)$`, code: 1205, cause: "error"},
		{name: "lock held elsewhere", rule: `^SELECT GET_LOCK\(.*, 60\)$`, rows: sessiontest.Row("0"), code: 1205, cause: "refused"},
		{name: "registry unreadable", rule: `^SELECT .* FROM .*_meta.*\.tables WHERE `, code: 1205, cause: "error"},
		{name: "foreign keys unreadable", rule: `^SELECT k\.TABLE_SCHEMA`, code: 1205, cause: "error"},
		{name: "triggers unreadable", rule: `^SELECT TRIGGER_NAME`, code: 1205, cause: "error"},
		{name: "capture cannot be recorded", rule: `^REPLACE INTO .*\.captures `, code: 1205, cause: "error"},
		{name: "connection breaks", rule: `^INSERT INTO .* SELECT `, cause: "error", broken: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, "copy", nil)
			sb := r.sandbox("")
			if tc.schema {
				r.exec("CREATE DATABASE IF NOT EXISTS " + quote.Ident(r.phys(sb, "t").DB))
			}
			rule := r.up.On(tc.rule).Nth(1)
			switch {
			case tc.broken:
				rule.Break()
			case tc.rows != nil:
				rule.Rows(tc.rows)
			default:
				rule.Fail(tc.code, "HY000", "Lock wait timeout exceeded")
			}
			e, made, err := r.fk.Ensure(r.ctx, sb, tbl("t"), forker.Full, nil)
			if err == nil || e != nil || made || code(err) != tc.code {
				t.Fatalf("Ensure = %v, %v, %v (code %d), want code %d", e, made, err, code(err), tc.code)
			}
			if r.kind(sb, "t") != "" {
				t.Errorf("entry %q left in memory", r.kind(sb, "t"))
			}
			if !tc.broken {
				if k := r.row(sb, "t"); k != "" && !(tc.marker && k == "forking") {
					t.Errorf("registry row %q left", k)
				}
				if r.has(sb, "t") {
					t.Error("half-made fork left")
				}
			}
			if _, failed := r.obs.report(); strings.Join(failed, ";") != "copy "+tc.cause {
				t.Errorf("failures reported: %q, want cause %s", failed, tc.cause)
			}
			if r.fk.Forks() != 0 {
				t.Errorf("Forks() = %d after a failed fork", r.fk.Forks())
			}
			e, made, err = r.fk.Ensure(r.ctx, sb, tbl("t"), forker.Full, nil)
			if err != nil || !made || e.Kind != sandbox.KindFork || r.row(sb, "t") != "fork" || !r.has(sb, "t") {
				t.Errorf("retry: %+v, %v, %v; registry %q", e, made, err, r.row(sb, "t"))
			}
		})
	}
}

// TestEnsureDiscarded: a sandbox discarded meanwhile forks nothing.
func TestEnsureDiscarded(t *testing.T) {
	r := newRig(t, "copy", nil)
	sb := r.sandbox("")
	if err := r.reg.Discard(r.ctx, sb, true, false, "discarded"); err != nil {
		t.Fatal(err)
	}
	_, _, err := r.fk.Ensure(r.ctx, sb, tbl("t"), forker.Full, nil)
	if err == nil || !strings.Contains(err.Error(), "was discarded") || code(err) != 1105 {
		t.Fatalf("Ensure in a discarded sandbox: %v", err)
	}
	if r.count(`^CREATE TABLE .* LIKE|GET_LOCK\('sqlfork:[0-9a-f]+', 60\)`) != 0 {
		t.Errorf("forked in a discarded sandbox: %q", r.up.Matching(`^CREATE TABLE .* LIKE|GET_LOCK\('sqlfork:[0-9a-f]+', 60\)`))
	}
}

// TestEnsureReadCheck: each table a fork copies must be readable by the
// session's account: one it may not read refuses the fork with 1142,
// naming the table that connects it; a check that fails fails the fork.
func TestEnsureReadCheck(t *testing.T) {
	fkRows := func(up *sessiontest.Upstream) {
		// app.u.t_id references app.t.id.
		up.On(`^SELECT k\.TABLE_SCHEMA`).Rows(sessiontest.Row("app", "u", "u_t", "t_id", "app", "t", "id", "RESTRICT", "RESTRICT", 1))
		up.On(`ADD CONSTRAINT`).Affected(0)
		up.On(`^SELECT TABLE_SCHEMA, INDEX_NAME`).Rows()
		up.On(`^SET SESSION foreign_key_checks`).Affected(0)
	}
	for _, tc := range []struct {
		name   string
		grants []string
		all    bool
		fail   bool
		table  string
		code   uint16
		msg    string
	}{
		{name: "all", all: true, table: "u"},
		{name: "schema granted", grants: []string{"GRANT SELECT ON `app`.* TO `v`@`%`"}, table: "u"},
		{name: "target not readable", grants: []string{"GRANT SELECT ON `app`.`t` TO `v`@`%`"}, table: "u", code: 1142,
			msg: "SELECT command denied to user 'v'@'%' for table `app`.`u`"},
		{name: "connected table not readable", grants: []string{"GRANT SELECT ON `app`.`u` TO `v`@`%`"}, table: "u", code: 1142,
			msg: "for table `app`.`t` (the sandbox copies it with app.u"},
		{name: "check fails", fail: true, table: "u", code: 1205},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, "copy", fkRows)
			sb := r.sandbox("")
			rd := func(context.Context) (grants.Reader, error) {
				if tc.fail {
					return grants.Reader{}, sessiontest.Err(1205, "HY000", "busy")
				}
				return grants.Reader{Set: grants.NewSet(tc.grants, true), Account: "v@%", All: tc.all}, nil
			}
			_, _, err := r.fk.Ensure(r.ctx, sb, tbl(tc.table), forker.Full, rd)
			if tc.code == 0 {
				if err != nil || r.kind(sb, "t") != sandbox.KindFork || r.kind(sb, "u") != sandbox.KindFork {
					t.Fatalf("Ensure = %v; t %q, u %q", err, r.kind(sb, "t"), r.kind(sb, "u"))
				}
				return
			}
			if code(err) != tc.code || !strings.Contains(fmt.Sprint(err), tc.msg) {
				t.Fatalf("Ensure = %v, want %d %q", err, tc.code, tc.msg)
			}
			if r.has(sb, "t") || r.has(sb, "u") || r.row(sb, "t") != "" || r.row(sb, "u") != "" {
				t.Error("a refused fork left tables or rows")
			}
		})
	}
}

// TestEnsureForkedElsewhere: another process that forked a table of a
// named sandbox (same id everywhere) first leaves this one nothing to
// copy: it takes the registry's row. A table recorded absent that a
// statement created since is taken as created.
func TestEnsureForkedElsewhere(t *testing.T) {
	r := newRig(t, "copy", nil)
	reg2, fk2 := r.process("copy")
	a := r.sandbox("shared")
	b, err := reg2.NewSandbox("shared", "u")
	if err != nil || b.ID != a.ID {
		t.Fatalf("second process's sandbox %v (id %s, want %s)", err, b.ID, a.ID)
	}
	if _, _, err := r.fk.Ensure(r.ctx, a, tbl("t"), forker.Full, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.fk.Ensure(r.ctx, a, tbl("n"), forker.Full, nil); err != nil {
		t.Fatal(err)
	}
	if r.kind(a, "n") != sandbox.KindAbsent {
		t.Fatalf("n is %q, want absent", r.kind(a, "n"))
	}
	// A statement of the sandbox creates n.
	pn := r.phys(a, "n")
	if _, err := r.up.Exec("CREATE TABLE " + pn.Quoted() + " LIKE `app`.`t`"); err != nil {
		t.Fatal(err)
	}
	r.up.ClearLog()
	e, _, err := fk2.Ensure(r.ctx, b, tbl("t"), forker.Full, nil)
	if err != nil || e.Kind != sandbox.KindFork || e.Phys != r.phys(a, "t") {
		t.Fatalf("second process: %+v, %v", e, err)
	}
	if n := r.count(`^CREATE TABLE .* LIKE |^INSERT INTO .* SELECT `); n != 0 {
		t.Errorf("forked again: %q", r.up.Matching(`LIKE|INSERT`))
	}
	if fk2.Forks() != 0 {
		t.Errorf("second process counted %d forks", fk2.Forks())
	}
	e, _, err = fk2.Ensure(r.ctx, b, tbl("n"), forker.Full, nil)
	if err != nil || e.Kind != sandbox.KindCreated || r.row(a, "n") != "created" {
		t.Fatalf("created elsewhere: %+v, %v, registry %q", e, err, r.row(a, "n"))
	}
}

// TestEnsureConcurrent: connections forking the same table of one sandbox
// at once make one fork and all get its entry.
func TestEnsureConcurrent(t *testing.T) {
	r := newRig(t, "copy", nil)
	sb := r.sandbox("")
	const n = 4
	var wg sync.WaitGroup
	entries := make([]*sandbox.Entry, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			entries[i], _, errs[i] = r.fk.Ensure(r.ctx, sb, tbl("t"), forker.Full, nil)
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || entries[i] != entries[0] {
			t.Errorf("caller %d: %+v, %v", i, entries[i], errs[i])
		}
	}
	if c := r.count(`^CREATE TABLE .* LIKE `); c != 1 || r.fk.Forks() != 1 {
		t.Errorf("%d forks made, Forks() = %d", c, r.fk.Forks())
	}
}
