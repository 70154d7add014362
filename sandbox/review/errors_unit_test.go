package review

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// capturedOnly is app.t captured, the diff's queries unscripted.
func capturedOnly(f *fixture) {
	f.entry("t", sandbox.KindFork)
	f.both("t", []forker.Column{tID, tName}, "id")
	f.capture("t", "rows", "", "id")
}

// diffErrCase is a sandbox whose DIFF fails, and the error.
type diffErrCase struct {
	name    string
	setup   func(f *fixture)
	summary bool
	err     string
}

// diffReadErrors fail the reads before the rows: the registry, the
// snapshot, the captures, the shapes, the diff's first query.
func diffReadErrors() []diffErrCase {
	return []diffErrCase{
		{name: "a shared sandbox's registry", setup: func(f *fixture) {
			capturedOnly(f)
			f.sb.Name = "shared" // named: other processes may change its tables
			f.side.Prefix("SELECT s.name, s.owner, s.created_at, g.generation FROM `_sqlfork_meta`.sandboxes s ").Fail(boom)
		}, err: "read the generation of sandbox shared: ERROR 1105 (HY000): boom"},
		{name: "time zone", setup: func(f *fixture) { f.side.Exact("SELECT @@session.time_zone").Fail(boom) }, err: "boom"},
		{name: "UTC", setup: func(f *fixture) { f.side.Exact("SET time_zone = '+00:00'").Fail(boom) }, err: "boom"},
		{name: "snapshot", setup: func(f *fixture) { f.side.Prefix("START TRANSACTION").Fail(boom) }, err: "boom"},
		{name: "captures", setup: func(f *fixture) { f.side.Prefix("SELECT db, tbl, state").Fail(boom) },
			err: "read the captures of the sandbox: ERROR 1105 (HY000): boom"},
		{name: "production's shape", setup: func(f *fixture) {
			capturedOnly(f)
			f.side.Match("^SELECT t.ENGINE, .* t.TABLE_SCHEMA = 'app' ").Fail(boom)
		}, err: "read the engine of `app`.`t`: ERROR 1105 (HY000): boom"},
		{name: "the sandbox's shape", setup: func(f *fixture) {
			capturedOnly(f)
			f.side.Match("^SELECT COLUMN_NAME, .* TABLE_SCHEMA = '" + physDB + "' ").Fail(boom)
		}, err: "read the columns of `_sqlfork_0badcafe_app`.`t`: ERROR 1105 (HY000): boom"},
		{name: "summary", summary: true, setup: func(f *fixture) { capturedOnly(f); f.query("SELECT op, SUM(cf)", "`c_t`").Fail(boom) },
			err: "diff app.t: ERROR 1105 (HY000): boom"},
		{name: "detail", setup: func(f *fixture) { capturedOnly(f); f.query("SELECT CASE WHEN", "`c_t`").Fail(boom) },
			err: "diff app.t: ERROR 1105 (HY000): boom"},
	}
}

// diffAnswerErrors are answers the diff cannot take (too many rows,
// another table's definition, a key gone), or definitions unread.
func diffAnswerErrors() []diffErrCase {
	many := make([][]*string, maxDiffRows+1)
	for i := range many {
		many[i] = testkit.Row("insert", `{"id": 1}`, nil, `{}`, nil, 0, 1)
	}
	return []diffErrCase{
		{name: "too many rows", setup: func(f *fixture) { capturedOnly(f); f.query("SELECT CASE WHEN", "`c_t`", many...) },
			err: "the diff has more than 200000 rows; use SANDBOX DIFF SUMMARY or SANDBOX DIFF … FOR db.table"},
		{name: "too many rows by value", setup: func(f *fixture) {
			f.entry("r", sandbox.KindFork)
			f.both("r", []forker.Column{tV})
			f.query("SELECT IF(d.`sqlfork_n` > 0", "`app`.`r`", testkit.Row("insert", `{}`, nil, `{}`, nil, maxDiffRows+1))
		}, err: "the diff has more than 200000 rows"},
		{name: "no shared column", setup: func(f *fixture) {
			f.entry("r", sandbox.KindFork)
			f.shape(rewrite.Table{DB: "app", Name: "r"}, "BASE TABLE", []forker.Column{tV})
			f.shape(rewrite.Table{DB: physDB, Name: "r"}, "BASE TABLE", []forker.Column{tName})
		}, err: "diff app.r: the sandbox's table and production's share no column"},
		{name: "definition", setup: func(f *fixture) {
			created(f)
			f.side.Exact("SHOW CREATE TABLE `_sqlfork_0badcafe_app`.`n`").Fail(boom)
		}, err: "read the definition of _sqlfork_0badcafe_app.n: ERROR 1105 (HY000): boom"},
		{name: "no definition", setup: func(f *fixture) {
			created(f)
			f.side.Exact("SHOW CREATE TABLE `_sqlfork_0badcafe_app`.`n`").Rows()
		}, err: "read the definition of _sqlfork_0badcafe_app.n: no row"},
		{name: "another table's definition", setup: func(f *fixture) {
			created(f)
			f.createTable(rewrite.Table{DB: physDB, Name: "n"}, "CREATE TABLE `m` (`id` int)")
		}, err: "read the definition of app.n: unexpected \"CREATE TABLE `m` (`id` int)\""},
		{name: "view definition", setup: func(f *fixture) {
			f.entry("v", sandbox.KindCreated)
			f.shape(rewrite.Table{DB: physDB, Name: "v"}, "VIEW", []forker.Column{tID})
			f.side.Exact("SHOW CREATE VIEW `_sqlfork_0badcafe_app`.`v`").Fail(boom)
		}, err: "read the definition of app.v: ERROR 1105 (HY000): boom"},
		{name: "no view definition", setup: func(f *fixture) {
			f.entry("v", sandbox.KindCreated)
			f.shape(rewrite.Table{DB: physDB, Name: "v"}, "VIEW", []forker.Column{tID})
			f.side.Exact("SHOW CREATE VIEW `_sqlfork_0badcafe_app`.`v`").Rows()
		}, err: "read the definition of app.v: no row"},
		{name: "another view's definition", setup: func(f *fixture) {
			f.entry("v", sandbox.KindCreated)
			f.shape(rewrite.Table{DB: physDB, Name: "v"}, "VIEW", []forker.Column{tID})
			f.side.Exact("SHOW CREATE VIEW `_sqlfork_0badcafe_app`.`v`").Rows(testkit.Row("v", "CREATE TABLE `v` (`id` int)"))
		}, err: "read the definition of app.v: unexpected \"CREATE TABLE `v` (`id` int)\""},
		{name: "an altered table's definition", setup: func(f *fixture) {
			altered(f)
			f.createTable(rewrite.Table{DB: "app", Name: "a"}, "CREATE TABLE `a` (`id` int")
		}, err: "read the definition of app.a: "},
		{name: "the capture key gone", setup: func(f *fixture) {
			capturedOnly(f)
			f.captures = nil
			f.capture("t", "rows", "", "gone")
		}, err: "the capture key of app.t is gone"},
		{name: "no capture key", setup: func(f *fixture) {
			capturedOnly(f)
			f.captures = nil
			f.capture("t", "rows", "")
		}, err: "the capture key of app.t is gone"},
	}
}

// TestDiffErrors: what the server fails, or answers that the diff cannot
// take, fails DIFF with an error naming the table.
func TestDiffErrors(t *testing.T) {
	for _, tc := range slices.Concat(diffReadErrors(), diffAnswerErrors()) {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			tc.setup(f)
			_, err := f.m.Diff(f.ctx, f.sb, tc.summary, nil)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %v\nwant %q", err, tc.err)
			}
			var r *rewrite.Refusal
			if strings.HasPrefix(tc.name, "too many") && (!errors.As(err, &r) || r.Code != wire.ErUnknown) {
				t.Errorf("error %v, want a refusal", err)
			}
		})
	}
}
