package review

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/session/sessiontest"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// promotable scripts what a promote needs besides the diff: the promote
// account's connection (its settings, the promote lock, a transaction,
// production's writes) and the registry's audit rows.
func (f *fixture) promotable() {
	f.m.SetPromoteDialer(func(context.Context) (sideconn.Conn, error) { return f.prod, nil })
	p := f.prod
	for _, s := range []string{"SET ", "START TRANSACTION", "COMMIT", "ROLLBACK", "INSERT INTO `app`.", "UPDATE `app`.", "DELETE FROM `app`.",
		"ALTER TABLE `app`.", "CREATE ", "DROP "} {
		p.Prefix(s)
	}
	p.Prefix("SELECT GET_LOCK(").Rows(testkit.Row(1))
	p.Prefix("SELECT RELEASE_LOCK(").Rows(testkit.Row(1))
	f.side.Prefix("INSERT INTO `_sqlfork_meta`.promotes (sandbox_id, name, owner, user, via, strategy, started_at, outcome) VALUES ('0badcafe', ")
	f.side.Exact("SELECT LAST_INSERT_ID()").Rows(testkit.Row(42))
	f.side.Prefix("UPDATE `_sqlfork_meta`.promotes SET finished_at = ")
	// The images of what a committed promote wrote (rebase.go).
	f.side.Exact("SELECT @@session.time_zone, @@session.sql_mode").Rows(testkit.Row("SYSTEM", "STRICT_TRANS_TABLES"))
	f.side.Prefix("SET time_zone = ")
	f.side.Prefix("INSERT INTO `" + sideDB + "`.")
}

// capturedT is app.t, captured, with an insert (4), an update (1: a to b)
// and a delete (2), and production's rows of those keys as theirs gives
// them (index in the diff, then the row's literals).
func capturedT(f *fixture, theirs ...[]*string) {
	f.entry("t", sandbox.KindFork)
	f.both("t", []forker.Column{tID, tName}, "id")
	f.capture("t", "rows", "", "id")
	f.query("SELECT CASE WHEN", "`c_t` c",
		testkit.Row("insert", `{"id": 4}`, nil, `{}`, nil, 0, 1, "4", "4", "'d'", "NULL", "NULL"),
		testkit.Row("update", `{"id": 1}`, `{}`, `{}`, nil, 0, 0, "1", "1", "'b'", "1", "'a'"),
		testkit.Row("delete", `{"id": 2}`, `{}`, nil, nil, 0, 0, "2", "NULL", "NULL", "2", "'x'"))
	f.prod.Match("^SELECT d\\.`sqlfork_i`, IFNULL\\(CAST\\(r\\.`id` AS CHAR\\), 'NULL'\\), .* JOIN `app`\\.`t` r ON r\\.`id` = d\\.`id`( FOR UPDATE)?$").
		Rows(theirs...)
	// The diff after a committed promote (markPromoted): nothing left.
	f.side.Prefix("SELECT op, SUM(cf), COUNT(*) FROM (")
}

// audit is the registry's record of the promote's outcome.
func (f *fixture) audit() string {
	u := f.side.Matching("^UPDATE `_sqlfork_meta`.promotes ")
	if len(u) != 1 {
		f.t.Fatalf("outcome recorded %d times: %q", len(u), u)
	}
	return u[0]
}

// TestPromoteStrategies: production's rows of the changed keys are read
// before anything is written and again under lock; a row production
// changed otherwise is a conflict, which FAIL refuses, OURS overwrites and
// THEIRS leaves as production has it.
func TestPromoteStrategies(t *testing.T) {
	conflictQuery := "SELECT d.`sqlfork_i`, IFNULL(CAST(r.`id` AS CHAR), 'NULL'), IF(r.`name` IS NULL, 'NULL', IF(HEX(r.`name`) REGEXP '" +
		plainHex + "', CONCAT('''', r.`name`, ''''), CONCAT('_utf8mb4 X''', HEX(r.`name`), '''')))" +
		" FROM (SELECT 0 AS `sqlfork_i`, 4 AS `id` UNION ALL SELECT 1 AS `sqlfork_i`, 1 AS `id` UNION ALL SELECT 2 AS `sqlfork_i`, 2 AS `id`) d" +
		" JOIN `app`.`t` r ON r.`id` = d.`id`"
	for _, tc := range []struct {
		strategy string
		theirs   [][]*string
		err      string
		outcome  string
		rows     []string // production's row statements
		info     string
	}{
		{strategy: "", theirs: [][]*string{testkit.Row(1, "1", "'a'"), testkit.Row(2, "2", "'x'")}, outcome: "committed",
			rows: []string{"INSERT INTO `app`.`t` (`id`, `name`) VALUES (4, 'd') ON DUPLICATE KEY UPDATE `id` = VALUES(`id`), `name` = VALUES(`name`)",
				"UPDATE `app`.`t` SET `name` = 'b' WHERE `id` = 1", "DELETE FROM `app`.`t` WHERE `id` IN (2)"},
			info: "promoted sandbox sb-0badcafe: 1 rows inserted, 1 updated, 1 deleted in 1 tables"},
		{strategy: "fail", theirs: [][]*string{testkit.Row(1, "1", "'z'"), testkit.Row(2, "2", "'x'")}, outcome: "refused",
			err: `PROMOTE refused: 1 rows changed in production since the fork and differently in the sandbox: app.t {"id": 1}; `},
		{strategy: "OURS", theirs: [][]*string{testkit.Row(1, "1", "'z'"), testkit.Row(0, "4", "'q'")}, outcome: "committed",
			rows: []string{"INSERT INTO `app`.`t` (`id`, `name`) VALUES (4, 'd') ON DUPLICATE KEY UPDATE `id` = VALUES(`id`), `name` = VALUES(`name`)",
				"UPDATE `app`.`t` SET `name` = 'b' WHERE `id` = 1", "DELETE FROM `app`.`t` WHERE `id` IN (2)"},
			info: "promoted sandbox sb-0badcafe: 1 rows inserted, 1 updated, 1 deleted in 1 tables; 2 rows production had changed took the sandbox's values"},
		{strategy: "THEIRS", theirs: [][]*string{testkit.Row(1, "1", "'z'")}, outcome: "committed",
			rows: []string{"INSERT INTO `app`.`t` (`id`, `name`) VALUES (4, 'd') ON DUPLICATE KEY UPDATE `id` = VALUES(`id`), `name` = VALUES(`name`)",
				"DELETE FROM `app`.`t` WHERE `id` IN (2)"},
			info: "promoted sandbox sb-0badcafe: 1 rows inserted, 0 updated, 1 deleted in 1 tables; 1 rows production had changed kept production's values"},
	} {
		t.Run(cmpOr(tc.strategy, "default"), func(t *testing.T) {
			f := newFixture(t)
			f.promotable()
			capturedT(f, tc.theirs...)
			r, err := f.m.Promote(f.ctx, f.sb, "alice", "sql", PromoteOptions{Strategy: tc.strategy}, nil)
			if tc.err != "" {
				var rf *rewrite.Refusal
				if !errors.As(err, &rf) || !strings.Contains(rf.Message, tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			var writes []string
			for _, q := range f.prod.Log() {
				if strings.HasPrefix(q, "INSERT ") || strings.HasPrefix(q, "UPDATE ") || strings.HasPrefix(q, "DELETE ") {
					writes = append(writes, q)
				}
			}
			if !slices.Equal(writes, tc.rows) {
				t.Errorf("production written with\n %s\nwant\n %s", strings.Join(writes, "\n "), strings.Join(tc.rows, "\n "))
			}
			if reads := f.prod.Matching("^SELECT d\\."); len(reads) == 0 || reads[0] != conflictQuery {
				t.Errorf("conflicts read with %q\nwant %q", reads, conflictQuery)
			}
			if tc.err == "" {
				if r.Info != tc.info || r.Affected != uint64(len(tc.rows)) {
					t.Errorf("reply %q (%d), want %q", r.Info, r.Affected, tc.info)
				}
				sum := sha256.New()
				for _, s := range tc.rows {
					sum.Write([]byte(s + ";\n"))
				}
				if a := f.audit(); !strings.Contains(a, "export_sha256 = '"+hex.EncodeToString(sum.Sum(nil))+"'") {
					t.Errorf("audit %q lacks the rows' checksum", a)
				}
			}
			if a := f.audit(); !strings.Contains(a, "outcome = '"+tc.outcome+"'") || !strings.HasSuffix(a, " WHERE id = 42") {
				t.Errorf("audit %q, want outcome %s", a, tc.outcome)
			}
			f.unscripted()
		})
	}
}

func cmpOr(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// promoteCase is a promote that does not commit: what it is refused or
// fails with, and the outcome the registry records ("" for none: refused
// before it began).
type promoteCase struct {
	name     string
	setup    func(f *fixture)
	user     string
	strategy string
	check    PromoteCheck
	code     uint16 // a refusal's code (0: another error)
	err      string
	outcome  string
	after    func(t *testing.T, f *fixture)
}

// refused checks a promote's error and recorded outcome.
func (tc promoteCase) run(t *testing.T) {
	f := newFixture(t)
	f.promotable()
	tc.setup(f)
	_, err := f.m.Promote(f.ctx, f.sb, cmpOr(tc.user, "alice"), "api", PromoteOptions{Strategy: tc.strategy}, tc.check)
	var rf *rewrite.Refusal
	switch {
	case err == nil:
		t.Fatalf("promoted, want %q", tc.err)
	case tc.code != 0 && (!errors.As(err, &rf) || rf.Code != tc.code):
		t.Errorf("error %v, want a refusal %d", err, tc.code)
	}
	if !strings.Contains(err.Error(), tc.err) {
		t.Errorf("error %q\nwant %q", err, tc.err)
	}
	if tc.outcome == "" {
		if len(f.side.Log())+len(f.prod.Log()) > 0 {
			t.Errorf("ran %q, %q", f.side.Log(), f.prod.Log())
		}
		return
	}
	if a := f.audit(); !strings.Contains(a, "outcome = '"+tc.outcome+"'") {
		t.Errorf("audit %q, want outcome %s", a, tc.outcome)
	}
	if got := f.obs.promoted; len(got) != 1 || !strings.HasSuffix(got[0], "/"+tc.outcome) {
		t.Errorf("observer told %q, want outcome %s", got, tc.outcome)
	}
	if tc.after != nil {
		tc.after(t, f)
	}
	if tc.outcome == "refused" {
		for _, q := range f.prod.Log() {
			if !strings.HasPrefix(q, "SET ") && !strings.HasPrefix(q, "SELECT ") && q != "START TRANSACTION" && q != "ROLLBACK" {
				t.Errorf("a refused promote ran %q", q)
			}
		}
	}
}

// compared is app.k, compared whole with production (no capture).
func compared(f *fixture) {
	f.entry("k", sandbox.KindFork)
	f.both("k", []forker.Column{tID, tV}, "id")
	f.capture("k", "full", "a fork without rows")
	f.query("SELECT 'insert', ", "`app`.`k`", testkit.Row("insert", `{"id": 9}`, nil, `{}`, nil, "9", "9", "9"))
}

func dropped(f *fixture) {
	f.entry("d", sandbox.KindDropped)
	f.shape(rewrite.Table{DB: "app", Name: "d"}, "BASE TABLE", []forker.Column{tID}, "id")
}

func TestPromoteRefused(t *testing.T) {
	for _, tc := range []promoteCase{
		{name: "no promote account", setup: func(f *fixture) { f.m.SetPromoteDialer(nil) }, code: wire.ErOptionPreventsStatement,
			err: "SANDBOX PROMOTE needs a promote account"},
		{name: "not the owner", setup: func(*fixture) {}, user: "bob", code: wire.ErSpecificAccessDenied,
			err: `only the owner of sandbox "sb-0badcafe" (alice) or a sandbox admin may promote it`},
		{name: "unknown strategy", setup: func(*fixture) {}, strategy: "mine", code: wire.ErParse, err: `unknown strategy "MINE"`},
		{name: "compared whole", setup: compared, code: wire.ErUnknown, outcome: "refused",
			err: "PROMOTE refused: the rows of app.k cannot be told from production's changes since the fork (a fork without rows)"},
		{name: "compared whole, OURS", setup: compared, strategy: "OURS", code: wire.ErUnknown, outcome: "refused",
			err: "or name the table in OVERWRITE app.k to replace production's rows"},
		{name: "dropped", setup: dropped, code: wire.ErUnknown, outcome: "refused",
			err: "the sandbox dropped app.d, and production's changes to it since cannot be checked"},
		{name: "created over production's", setup: func(f *fixture) {
			created(f)
			f.shape(rewrite.Table{DB: "app", Name: "n"}, "BASE TABLE", []forker.Column{tID}, "id")
			f.query("SELECT 'insert', ", "`_sqlfork_0badcafe_app`.`n` f")
		}, code: wire.ErUnknown, outcome: "refused", err: "the sandbox created app.n, and production has a table of that name"},
		{name: "production's columns changed", strategy: "OURS", setup: func(f *fixture) {
			capturedT(f)
			f.shape(rewrite.Table{DB: "app", Name: "t"}, "BASE TABLE", []forker.Column{tID, tName, tV}, "id")
		}, code: wire.ErUnknown, outcome: "refused", err: "production's table app.t changed its columns or key since the sandbox forked it"},
		{name: "a view over a system schema", strategy: "OURS", setup: func(f *fixture) {
			f.entry("v", sandbox.KindCreated)
			f.shape(rewrite.Table{DB: physDB, Name: "v"}, "VIEW", []forker.Column{tID})
			f.side.Exact("SHOW CREATE VIEW `_sqlfork_0badcafe_app`.`v`").Rows(testkit.Row("v",
				"CREATE ALGORITHM=UNDEFINED DEFINER=`root`@`localhost` SQL SECURITY DEFINER VIEW `_sqlfork_0badcafe_app`.`v` AS select `mysql`.`user`.`User` AS `u` from `mysql`.`user`"))
		}, code: wire.ErOptionPreventsStatement, outcome: "refused",
			err: "PROMOTE refused: app.v reads mysql.user, which is never exported or promoted; discard that change"},
		{name: "the user's rights", setup: func(f *fixture) { capturedT(f) }, check: func(_ context.Context, needs []Need) error {
			return errors.New("lacks " + needs[0].String())
		}, outcome: "refused", err: "lacks INSERT on `app`.`t` (`id`, `name`)"},
		{name: "another promote", setup: func(f *fixture) {
			capturedT(f)
			f.prod.Prefix("SELECT GET_LOCK(").Rows(testkit.Row(0))
		}, code: wire.ErLockWaitTimeout, outcome: "refused", err: `another PROMOTE of sandbox "sb-0badcafe" is running`},
		{name: "production's triggers echo", setup: func(f *fixture) {
			capturedT(f)
			createdForExport(f)
			f.side.Match("^SELECT TRIGGER_NAME, .* EVENT_OBJECT_SCHEMA = 'app' AND EVENT_OBJECT_TABLE = 't' ").Rows(
				testkit.Row("t_ai", "AFTER", "INSERT", "INSERT INTO n (id) VALUES (NEW.id)", "STRICT_TRANS_TABLES", "utf8mb4", "utf8mb4_general_ci"))
		}, code: wire.ErUnknown, outcome: "refused", err: "production's triggers would write again rows the sandbox's changes hold (trigger `t_ai` on app.t writes app.n)"},
	} {
		t.Run(tc.name, tc.run)
	}
}

// boom is the server error the failure cases inject.
var boom = sessiontest.Err(1105, "HY000", "boom")

// ranOnProd fails the test unless the promote account's connection ran a
// statement re matches.
func ranOnProd(re string) func(t *testing.T, f *fixture) {
	return func(t *testing.T, f *fixture) {
		if len(f.prod.Matching(re)) == 0 {
			t.Errorf("production's connection ran nothing like %q: %q", re, f.prod.Log())
		}
	}
}

// unchanged are production's rows of capturedT's keys as at the fork.
var unchanged = [][]*string{testkit.Row(1, "1", "'a'"), testkit.Row(2, "2", "'x'")}

// TestPromoteFailures: a promote that fails is recorded failed while
// production is unchanged, partial once DDL was applied, rows were written
// to a table without transactions, or the DDL after the committed rows
// failed.
func TestPromoteFailures(t *testing.T) {
	for _, tc := range []promoteCase{
		{name: "connect", setup: func(f *fixture) {
			capturedT(f)
			f.m.SetPromoteDialer(func(context.Context) (sideconn.Conn, error) { return nil, errors.New("refused") })
		}, outcome: "failed", err: "connect with the promote account: refused"},
		{name: "connection settings", setup: func(f *fixture) {
			capturedT(f)
			f.prod.Exact("SET NAMES utf8mb4").Fail(boom)
		}, outcome: "failed", err: "prepare the promote connection (SET NAMES utf8mb4): ERROR 1105 (HY000): boom", after: func(t *testing.T, f *fixture) {
			if f.prod.Closes() != 1 {
				t.Errorf("the promote connection closed %d times", f.prod.Closes())
			}
		}},
		{name: "first look", setup: func(f *fixture) {
			capturedT(f)
			f.prod.Prefix("SELECT d.").Fail(boom)
		}, outcome: "failed", err: "promote: read production's rows of app.t: ERROR 1105 (HY000): boom", after: ranOnProd(`^SELECT RELEASE_LOCK\('sqlfork:[0-9a-f]{40}'\)$`)},
		{name: "look under lock", setup: func(f *fixture) {
			capturedT(f, unchanged...)
			f.prod.Match(" FOR UPDATE$").Fail(boom)
		}, outcome: "failed", err: "promote: read production's rows of app.t: ERROR 1105 (HY000): boom", after: ranOnProd("^ROLLBACK$")},
		{name: "start transaction", setup: func(f *fixture) {
			capturedT(f, unchanged...)
			f.prod.Exact("START TRANSACTION").Fail(boom)
		}, outcome: "failed", err: "boom"},
		{name: "DDL before the rows", setup: func(f *fixture) {
			createdForExport(f)
			f.prod.Prefix("CREATE TABLE").Fail(boom)
		}, outcome: "failed", err: "promote: CREATE TABLE IF NOT EXISTS `app`.`n` (\n  `id` int(11) NOT NULL,"},
		{name: "rows after DDL", setup: func(f *fixture) {
			createdForExport(f)
			f.prod.Prefix("INSERT INTO").Fail(boom)
		}, outcome: "partial", err: "boom (the DDL before the rows was applied; production's rows are unchanged)", after: ranOnProd("^ROLLBACK$")},
		{name: "rows of a table without transactions", setup: func(f *fixture) {
			capturedT(f, unchanged...)
			f.shape(rewrite.Table{DB: "app", Name: "t"}, "MyISAM", []forker.Column{tID, tName}, "id")
			f.prod.Prefix("UPDATE ").Fail(boom)
		}, outcome: "partial", err: "boom (rows already written to tables without transactions stay: app.t)"},
		{name: "commit", setup: func(f *fixture) {
			capturedT(f, unchanged...)
			f.prod.Exact("COMMIT").Fail(boom)
		}, outcome: "failed", err: "boom", after: ranOnProd("^ROLLBACK$")},
		{name: "DDL after the rows", strategy: "OURS", setup: func(f *fixture) {
			dropped(f)
			f.prod.Prefix("DROP TABLE").Fail(boom)
		}, outcome: "partial", err: "promote: the rows are committed, but DROP TABLE IF EXISTS `app`.`d` failed: ERROR 1105 (HY000): boom", after: ranOnProd("^COMMIT$")},
		{name: "the diff's snapshot", setup: func(f *fixture) {
			capturedT(f)
			f.side.Exact("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY").Fail(boom).Times(1)
		}, outcome: "failed", err: "boom"},
	} {
		t.Run(tc.name, tc.run)
	}
}

// TestPromoteAsAdmin: a sandbox admin promotes another's sandbox; the
// promote account's connection is set as an export's header sets a
// session, holds the promote lock throughout and writes the rows in one
// transaction after looking again under lock. A promote whose audit row
// cannot be written still runs (the failure is logged).
func TestPromoteAsAdmin(t *testing.T) {
	f := newFixture(t)
	f.promotable()
	capturedT(f, unchanged...)
	f.side.Prefix("INSERT INTO `_sqlfork_meta`.promotes ").Fail(boom)
	r, err := f.m.PromoteAs(f.ctx, f.sb, "bob", "api", true, PromoteOptions{Strategy: "fail"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "promoted sandbox sb-0badcafe: 1 rows inserted, 1 updated, 1 deleted in 1 tables"; r.Info != want || r.Affected != 3 {
		t.Errorf("reply %q (%d), want %q", r.Info, r.Affected, want)
	}
	lock := "'" + f.m.reg.LockName(testID, "\x00promote") + "'"
	look := f.prod.Matching("^SELECT d\\.")[0]
	want := []string{"SET NAMES utf8mb4", "SET time_zone = '+00:00'",
		"SET sql_mode = 'NO_AUTO_VALUE_ON_ZERO,NO_ENGINE_SUBSTITUTION,ALLOW_INVALID_DATES'", "SET SESSION innodb_lock_wait_timeout = 10",
		"SELECT GET_LOCK(" + lock + ", 10)", look, "START TRANSACTION", look + " FOR UPDATE",
		"INSERT INTO `app`.`t` (`id`, `name`) VALUES (4, 'd') ON DUPLICATE KEY UPDATE `id` = VALUES(`id`), `name` = VALUES(`name`)",
		"UPDATE `app`.`t` SET `name` = 'b' WHERE `id` = 1", "DELETE FROM `app`.`t` WHERE `id` IN (2)", "COMMIT",
		"SELECT RELEASE_LOCK(" + lock + ")"}
	if got := f.prod.Log(); !slices.Equal(got, want) {
		t.Errorf("the promote account ran\n %s\nwant\n %s", strings.Join(got, "\n "), strings.Join(want, "\n "))
	}
	images := "INSERT INTO `" + sideDB + "`.`c_t` (`id`, `_sqlfork_existed`, `name`) VALUES (4, 1, 'd'), (1, 1, 'b'), (2, 0, NULL) " +
		"ON DUPLICATE KEY UPDATE `_sqlfork_existed` = VALUES(`_sqlfork_existed`), `name` = VALUES(`name`)"
	if got := f.side.Matching("^INSERT INTO `" + sideDB + "`"); len(got) != 1 || got[0] != images {
		t.Errorf("the images written after the promote %q\nwant %q", got, images)
	}
	if f.prod.Closes() != 1 {
		t.Errorf("the promote connection closed %d times", f.prod.Closes())
	}
	ins := f.side.Matching("^INSERT INTO `_sqlfork_meta`.promotes ")
	if len(ins) != 2 || !strings.Contains(ins[0], "VALUES ('0badcafe', 'sb-0badcafe', 'alice', 'bob', 'api', 'FAIL', '") {
		t.Errorf("audit rows %q", ins)
	}
	if u := f.side.Matching("^UPDATE `_sqlfork_meta`"); len(u) != 0 {
		t.Errorf("an outcome recorded without its row: %q", u)
	}
	// The promote's diff, then the summary that tells whether it left
	// anything (markPromoted).
	if !slices.Equal(f.obs.promoted, []string{"FAIL/committed"}) || !slices.Equal(f.obs.diffed, []string{"promote", "summary"}) {
		t.Errorf("observer told %q, %q", f.obs.promoted, f.obs.diffed)
	}
	f.unscripted()
}

// TestPromoteUnderLock: what the look under lock finds decides: a conflict
// production made after the first look refuses FAIL (partial once DDL ran),
// and the user's rights are asked again.
func TestPromoteUnderLock(t *testing.T) {
	changed := [][]*string{testkit.Row(1, "1", "'z'"), testkit.Row(2, "2", "'x'")}
	lateConflict := func(f *fixture) {
		capturedT(f, changed...)
		f.prod.Match(`^SELECT d\.`).Rows(unchanged...).Times(1) // the first look
	}
	calls := 0
	for _, tc := range []promoteCase{
		{name: "a conflict", setup: lateConflict, code: wire.ErUnknown, outcome: "refused",
			err:   `PROMOTE refused: 1 rows changed in production since the fork and differently in the sandbox: app.t {"id": 1}`,
			after: ranOnProd("^ROLLBACK$")},
		{name: "a conflict after DDL", setup: func(f *fixture) { lateConflict(f); createdForExport(f) }, code: wire.ErUnknown, outcome: "partial",
			err: "PROMOTE refused: 1 rows changed in production", after: ranOnProd("^CREATE TABLE IF NOT EXISTS `app`.`n` ")},
		{name: "the user's rights asked again", setup: func(f *fixture) { calls = 0; capturedT(f, unchanged...) },
			check: func(context.Context, []Need) error {
				if calls++; calls == 2 {
					return errors.New("no longer allowed")
				}
				return nil
			}, outcome: "refused", err: "no longer allowed", after: ranOnProd(" FOR UPDATE$")},
	} {
		t.Run(tc.name, tc.run)
	}
}

// TestPromoteManyConflicts: FAIL's refusal names the first 20 conflicting
// keys and counts the rest.
func TestPromoteManyConflicts(t *testing.T) {
	f := newFixture(t)
	f.promotable()
	f.entry("t", sandbox.KindFork)
	f.both("t", []forker.Column{tID, tName}, "id")
	f.capture("t", "rows", "", "id")
	var rows, theirs [][]*string
	for i := range 25 {
		rows = append(rows, testkit.Row("update", `{"id": `+strconv.Itoa(i)+`}`, `{}`, `{}`, nil, 0, 0, i, i, "'b'", i, "'a'"))
		theirs = append(theirs, testkit.Row(i, i, "'z'"))
	}
	f.query("SELECT CASE WHEN", "`c_t` c", rows...)
	f.prod.Match(`^SELECT d\.`).Rows(theirs...)
	_, err := f.m.Promote(f.ctx, f.sb, "alice", "sql", PromoteOptions{Strategy: "FAIL"}, nil)
	if err == nil || !strings.Contains(err.Error(), `: 25 rows changed in production since the fork`) ||
		!strings.Contains(err.Error(), `app.t {"id": 18}, app.t {"id": 19} and 5 more;`) || strings.Contains(err.Error(), `{"id": 20}`) {
		t.Errorf("refusal %v", err)
	}
}

// TestPromoteAltered: an altered table compared whole, named in
// OVERWRITE, is applied whole: the ALTER before its rows, every row
// upserted, the keys it no longer has deleted, the ALTER after; its rows
// count as updated and deleted.
func TestPromoteAltered(t *testing.T) {
	f := newFixture(t)
	f.promotable()
	altered(f)
	f.query("SELECT 'insert', ", "`app`.`a`", testkit.Row("update", `{}`, `{}`, `{}`, nil, "1", "1", "'x'", "5"))
	f.side.Prefix("SELECT IFNULL(CAST(f.`id` AS CHAR), 'NULL'), ").Rows(testkit.Row("1", "'x'", "5"), testkit.Row("7", "'y'", "NULL"))
	f.side.Prefix("SELECT IFNULL(CAST(r.`id` AS CHAR), 'NULL') FROM ").Rows(testkit.Row("8"))
	// The rebase that follows (a new capture of the table) fails: the
	// promote stands, committed.
	f.side.Exact("SELECT @@session.lock_wait_timeout").Fail(errors.New("the side connection broke"))
	r, err := f.m.Promote(f.ctx, f.sb, "alice", "sql", PromoteOptions{Strategy: "FAIL", Overwrite: []rewrite.Table{{DB: "app", Name: "a"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "promoted sandbox sb-0badcafe: 0 rows inserted, 2 updated, 1 deleted in 1 tables"; r.Info != want || r.Affected != 3 {
		t.Errorf("reply %q (%d), want %q", r.Info, r.Affected, want)
	}
	want := []string{"ALTER TABLE `app`.`a` ADD COLUMN IF NOT EXISTS `v` int(11) DEFAULT NULL AFTER `name`", "START TRANSACTION",
		"INSERT INTO `app`.`a` (`id`, `name`, `v`) VALUES (1, 'x', 5), (7, 'y', NULL) ON DUPLICATE KEY UPDATE `id` = VALUES(`id`), `name` = VALUES(`name`), `v` = VALUES(`v`)",
		"DELETE FROM `app`.`a` WHERE `id` IN (8)", "COMMIT", "ALTER TABLE `app`.`a` ADD KEY IF NOT EXISTS `iv` (`v`)"}
	got := slices.DeleteFunc(f.prod.Log(), func(q string) bool { return strings.HasPrefix(q, "SET ") || strings.HasPrefix(q, "SELECT ") })
	if !slices.Equal(got, want) {
		t.Errorf("the promote account ran\n %s\nwant\n %s", strings.Join(got, "\n "), strings.Join(want, "\n "))
	}
	f.unscripted()
}

// TestMergeRow: a captured row merges by cell with production's — changes
// to different columns merge, one column changed by both to different
// values conflicts there, the same change on both sides does not; an
// insert, a delete, or an update of a row production deleted conflicts
// whole when production's row differs.
func TestMergeRow(t *testing.T) {
	base := []string{"1", "10", "'a'"}
	for _, c := range []struct {
		name   string
		dr     diffRow
		theirs []string
		ok     bool
		whole  bool
		cells  []int
	}{
		{"only the sandbox changed", diffRow{op: "update", beforeLits: base, afterLits: []string{"1", "11", "'a'"}}, base, true, false, nil},
		{"other columns", diffRow{op: "update", beforeLits: base, afterLits: []string{"1", "11", "'a'"}}, []string{"1", "10", "'p'"}, true, false, nil},
		{"the same change", diffRow{op: "update", beforeLits: base, afterLits: []string{"1", "11", "'a'"}}, []string{"1", "11", "'p'"}, true, false, nil},
		{"one column both", diffRow{op: "update", beforeLits: base, afterLits: []string{"1", "11", "'s'"}}, []string{"1", "12", "'s'"}, true, false, []int{1}},
		{"two columns both", diffRow{op: "update", beforeLits: base, afterLits: []string{"1", "11", "'s'"}}, []string{"1", "12", "'p'"}, true, false, []int{1, 2}},
		{"production deleted it", diffRow{op: "update", beforeLits: base, afterLits: []string{"1", "11", "'a'"}}, nil, false, true, nil},
		{"deleted, unchanged", diffRow{op: "delete", beforeLits: base}, base, true, false, nil},
		{"deleted, production changed it", diffRow{op: "delete", beforeLits: base}, []string{"1", "10", "'p'"}, true, true, nil},
		{"deleted on both", diffRow{op: "delete", beforeLits: base}, nil, false, false, nil},
		{"inserted", diffRow{op: "insert", afterLits: base}, nil, false, false, nil},
		{"inserted the same on both", diffRow{op: "insert", afterLits: base}, base, true, false, nil},
		{"inserted on both, differently", diffRow{op: "insert", afterLits: base}, []string{"1", "10", "'p'"}, true, true, nil},
	} {
		whole, cells := mergeRow(c.dr, c.theirs, c.ok)
		if whole != c.whole || !slices.Equal(cells, c.cells) {
			t.Errorf("%s: whole %v, cells %v; want %v, %v", c.name, whole, cells, c.whole, c.cells)
		}
	}
}

// TestChangedColumnsTheirs: the columns a promote leaves as production has
// them are not written; an update left with none is none.
func TestChangedColumnsTheirs(t *testing.T) {
	r := diffRow{op: "update", beforeLits: []string{"1", "10", "'a'"}, afterLits: []string{"1", "11", "'s'"}}
	if got := changedColumns(r); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("changed %v, want [1 2]", got)
	}
	r.theirs = []int{1}
	if got := changedColumns(r); !slices.Equal(got, []int{2}) {
		t.Errorf("changed with column 1 production's %v, want [2]", got)
	}
	r.theirs = []int{1, 2}
	if got := changedColumns(r); len(got) != 0 {
		t.Errorf("changed with both production's %v, want none", got)
	}
}

// TestPromoteDryRunThenMatching: DRY RUN answers the conflicts, the
// statements the strategy applies and their digest, writes nothing and is
// not audited; MATCHING that digest applies exactly those statements; a
// digest of another plan is refused before production is touched.
func TestPromoteDryRunThenMatching(t *testing.T) {
	theirs := [][]*string{testkit.Row(1, "1", "'z'"), testkit.Row(2, "2", "'x'")} // row 1 conflicts
	f := newFixture(t)
	f.promotable()
	capturedT(f, theirs...)
	r, err := f.m.Promote(f.ctx, f.sb, "alice", "sql", PromoteOptions{Strategy: "THEIRS", DryRun: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	insert := "INSERT INTO `app`.`t` (`id`, `name`) VALUES (4, 'd') ON DUPLICATE KEY UPDATE `id` = VALUES(`id`), `name` = VALUES(`name`)"
	del := "DELETE FROM `app`.`t` WHERE `id` IN (2)"
	digest := planDigest("THEIRS", []string{`app.t {"id": 1}: name`}, exportSteps{rows: []string{insert, del}})
	want := []string{`conflict | app.t {"id": 1}: name`, "rows | " + insert, "rows | " + del, "digest | " + digest}
	if got := cells(r); !slices.Equal(got, want) || !slices.Equal(r.Columns, DryRunColumns) {
		t.Errorf("dry run\n %s\nwant\n %s", strings.Join(got, "\n "), strings.Join(want, "\n "))
	}
	if !strings.Contains(r.Info, "would apply 2 statements (1 conflicts resolved)") || !strings.Contains(r.Info, "MATCHING '"+digest+"'") {
		t.Errorf("dry run's message %q", r.Info)
	}
	if w := f.prod.Matching("^(INSERT|UPDATE|DELETE|START) "); len(w) != 0 || len(f.side.Matching("promotes")) != 0 {
		t.Errorf("a dry run wrote %q, audited %q", w, f.side.Matching("promotes"))
	}

	_, err = f.m.Promote(f.ctx, f.sb, "alice", "sql", PromoteOptions{Strategy: "OURS", Matching: digest}, nil)
	var rf *rewrite.Refusal
	if !errors.As(err, &rf) || !strings.Contains(rf.Message, "not the "+digest+" that was reviewed") {
		t.Fatalf("OURS matching THEIRS's digest: %v", err)
	}
	if w := f.prod.Matching("^(INSERT|UPDATE|DELETE|START) "); len(w) != 0 {
		t.Errorf("a promote of a stale plan wrote %q", w)
	}
	if _, err := f.m.Promote(f.ctx, f.sb, "alice", "sql", PromoteOptions{Strategy: "THEIRS", Matching: strings.ToUpper(digest)}, nil); err != nil {
		t.Fatal(err)
	}
	if w := f.prod.Matching("^(INSERT|UPDATE|DELETE) "); !slices.Equal(w, []string{insert, del}) {
		t.Errorf("the promote matching the dry run wrote\n %s", strings.Join(w, "\n "))
	}
}

// TestPromoteFor: FOR promotes the tables it names only; one the sandbox
// did not change is refused.
func TestPromoteFor(t *testing.T) {
	f := newFixture(t)
	f.promotable()
	capturedT(f, testkit.Row(1, "1", "'a'"), testkit.Row(2, "2", "'x'"))
	_, err := f.m.Promote(f.ctx, f.sb, "alice", "sql", PromoteOptions{Tables: []rewrite.Table{{DB: "app", Name: "nosuch"}}}, nil)
	var rf *rewrite.Refusal
	if !errors.As(err, &rf) || !strings.Contains(rf.Message, `sandbox "sb-0badcafe" changed nothing of app.nosuch`) {
		t.Fatalf("FOR a table not changed: %v", err)
	}
	o := PromoteOptions{Tables: []rewrite.Table{{DB: "app", Name: "t"}}, Overwrite: []rewrite.Table{{DB: "app", Name: "o`k"}}, DryRun: true}
	r, err := f.m.Promote(f.ctx, f.sb, "alice", "sql", o, nil)
	if err != nil || len(r.Rows) != 4 {
		t.Fatalf("FOR app.t: %v, %+v", err, r)
	}
	// The PROMOTE its messages suggest names the same tables: the plan
	// would be another without them.
	clauses := " FOR `app`.`t` OVERWRITE `app`.`o``k` STRATEGY FAIL "
	if want := "SANDBOX PROMOTE sb-0badcafe" + clauses + "MATCHING 'sha256:"; !strings.Contains(r.Info, want) {
		t.Errorf("dry run's message %q, want %q in it", r.Info, want)
	}
	o.DryRun, o.Matching = false, "sha256:"+strings.Repeat("0", 64)
	_, err = f.m.Promote(f.ctx, f.sb, "alice", "sql", o, nil)
	if want := "review it again with SANDBOX PROMOTE sb-0badcafe" + clauses + "DRY RUN"; !errors.As(err, &rf) || !strings.Contains(rf.Message, want) {
		t.Errorf("FOR app.t matching another plan: %v, want %q in it", err, want)
	}
}
