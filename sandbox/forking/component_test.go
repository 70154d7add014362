package forking

import (
	"slices"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/session/sessiontest"
)

// fkQuery is forker.ForeignKeys' query; fkRow is app.u.t_id referencing
// app.t.id with the given ON DELETE rule.
const fkQuery = `^SELECT k\.TABLE_SCHEMA, k\.TABLE_NAME, k\.CONSTRAINT_NAME`

func fkRow(onDelete string) []*string {
	return sessiontest.Row("app", "u", "u_t", "t_id", "app", "t", "id", "RESTRICT", onDelete, 1)
}

// fkDDL scripts what adding a key to a fork sends, which the fake does
// not emulate: the key itself and the index names it restores.
func fkDDL(up *sessiontest.Upstream) {
	up.On(`^SET SESSION foreign_key_checks = [01]$`).Affected(0)
	up.On(` ADD CONSTRAINT `).Affected(0)
	up.On(`^ALTER TABLE .* RENAME INDEX `).Affected(0)
}

// indexes answers RestoreIndexNames' query: production's u has its key's
// index named u_t, the fork (in the database phys) got the column's name.
func indexes(up *sessiontest.Upstream, phys string) {
	up.On(`^SELECT TABLE_SCHEMA, INDEX_NAME, GROUP_CONCAT`).Rows(
		sessiontest.Row("app", "u_t", "t_id"),
		sessiontest.Row(phys, "t_id", "t_id"))
}

// noIndexes answers RestoreIndexNames' query with nothing to rename.
func noIndexes(up *sessiontest.Upstream) {
	up.On(`^SELECT TABLE_SCHEMA, INDEX_NAME, GROUP_CONCAT`).Rows()
}

// TestForeignKeyComponent: a table with foreign keys is forked with every
// table they connect it to, whole whatever the statement asked, each fork
// given its production table's keys, pointing at the sandbox's tables.
func TestForeignKeyComponent(t *testing.T) {
	for _, tc := range []struct {
		name     string
		table    string
		mode     forker.Mode
		onDelete string
		clause   string
	}{
		{name: "child, schema only asked", table: "u", mode: forker.SchemaOnly, onDelete: "RESTRICT"},
		{name: "parent", table: "t", mode: forker.Full, onDelete: "CASCADE", clause: " ON DELETE CASCADE"},
		{name: "set null", table: "u", mode: forker.Full, onDelete: "SET NULL", clause: " ON DELETE SET NULL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, "copy", func(up *sessiontest.Upstream) {
				up.On(fkQuery).Rows(fkRow(tc.onDelete))
				fkDDL(up)
			})
			sb := r.sandbox("")
			indexes(r.up, r.phys(sb, "u").DB)
			e, made, err := r.fk.Ensure(r.ctx, sb, tbl(tc.table), tc.mode, nil)
			if err != nil || !made || e.Logical != tbl(tc.table) {
				t.Fatalf("Ensure = %+v, %v, %v", e, made, err)
			}
			for _, name := range []string{"t", "u"} {
				if r.kind(sb, name) != sandbox.KindFork || r.row(sb, name) != "fork" || !r.has(sb, name) {
					t.Errorf("%s: entry %q, registry %q, table %v; want a full fork", name, r.kind(sb, name), r.row(sb, name), r.has(sb, name))
				}
			}
			key := `^ALTER TABLE ` + qt(r.phys(sb, "u")) + ` ADD CONSTRAINT ` + q("u_t") + ` FOREIGN KEY \(` + q("t_id") +
				`\) REFERENCES ` + qt(r.phys(sb, "t")) + ` \(` + q("id") + `\)` + tc.clause + `$`
			if n := r.count(key); n != 1 {
				t.Errorf("key added %d times; statements: %q", n, r.up.Matching(`ADD CONSTRAINT`))
			}
			if n := r.count(`^ALTER TABLE ` + qt(r.phys(sb, "u")) + ` RENAME INDEX ` + q("t_id") + ` TO ` + q("u_t") + `$`); n != 1 {
				t.Errorf("index renamed %d times; statements: %q", n, r.up.Matching(`RENAME INDEX`))
			}
			if r.fk.Forks() != 2 {
				t.Errorf("Forks() = %d, want 2", r.fk.Forks())
			}
		})
	}
}

// TestForeignKeyParentInSandbox: a table whose parent the sandbox holds
// already is forked alone, its key pointing at the parent's fork; with a
// parent the sandbox dropped it gets no key (production could not hold
// one either).
func TestForeignKeyParentInSandbox(t *testing.T) {
	for _, dropped := range []bool{false, true} {
		t.Run(map[bool]string{false: "forked", true: "dropped"}[dropped], func(t *testing.T) {
			r := newRig(t, "copy", func(up *sessiontest.Upstream) {
				// The key is made after t's fork.
				up.On(fkQuery).Nth(1).Rows()
				up.On(fkQuery).Rows(fkRow("RESTRICT"))
				fkDDL(up)
				noIndexes(up)
			})
			sb := r.sandbox("")
			if _, _, err := r.fk.Ensure(r.ctx, sb, tbl("t"), forker.Full, nil); err != nil {
				t.Fatal(err)
			}
			if r.kind(sb, "u") != "" {
				t.Fatalf("u forked with t before the key existed")
			}
			if dropped {
				pt := r.phys(sb, "t")
				if _, err := r.up.Exec("DROP TABLE IF EXISTS " + pt.Quoted()); err != nil {
					t.Fatal(err)
				}
				if err := r.fk.Refresh(r.ctx, sb, []rewrite.Table{tbl("t")}); err != nil {
					t.Fatal(err)
				}
			}
			r.up.ClearLog()
			if _, _, err := r.fk.Ensure(r.ctx, sb, tbl("u"), forker.Full, nil); err != nil {
				t.Fatal(err)
			}
			if n := r.count(`^CREATE TABLE .* LIKE `); n != 1 {
				t.Errorf("%d forks, want u's only: %q", n, r.up.Matching(`LIKE`))
			}
			want := map[bool]int{false: 1, true: 0}[dropped]
			if n := r.count(`^ALTER TABLE ` + qt(r.phys(sb, "u")) + ` ADD CONSTRAINT .* REFERENCES ` + qt(r.phys(sb, "t"))); n != want {
				t.Errorf("key added %d times, want %d", n, want)
			}
		})
	}
}

// TestComponentUndone: when a fork of the component cannot get its keys
// or triggers, none of the component's forks stays.
func TestComponentUndone(t *testing.T) {
	for _, tc := range []struct {
		name string
		rule string
	}{
		{name: "key refused", rule: ` ADD CONSTRAINT `},
		{name: "indexes unreadable", rule: `^SELECT TABLE_SCHEMA, INDEX_NAME, GROUP_CONCAT`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, "copy", func(up *sessiontest.Upstream) {
				up.On(tc.rule).Fail(1005, "HY000", "Can't create table (errno: 150 \"Foreign key constraint is incorrectly formed\")")
				up.On(fkQuery).Rows(fkRow("RESTRICT"))
				fkDDL(up)
				noIndexes(up)
			})
			sb := r.sandbox("")
			_, _, err := r.fk.Ensure(r.ctx, sb, tbl("t"), forker.Full, nil)
			if code(err) != 1005 {
				t.Fatalf("Ensure = %v, want 1005", err)
			}
			for _, name := range []string{"t", "u"} {
				if r.kind(sb, name) != "" || r.row(sb, name) != "" || r.has(sb, name) {
					t.Errorf("%s left: entry %q, registry %q, table %v", name, r.kind(sb, name), r.row(sb, name), r.has(sb, name))
				}
			}
		})
	}
}

// triggerRows scripts x's triggers: one row per body, AFTER INSERT.
func triggerRows(up *sessiontest.Upstream, table string, bodies ...string) {
	var rows [][]*string
	for i, b := range bodies {
		rows = append(rows, sessiontest.Row(table+"_t"+string(rune('0'+i)), "AFTER", "INSERT", b, "STRICT_TRANS_TABLES",
			"utf8mb4", "utf8mb4_general_ci"))
	}
	up.On(`^SELECT TRIGGER_NAME, .* EVENT_OBJECT_TABLE = '` + table + `' `).Rows(rows...)
}

// TestTriggersCopied: a fork gets its production table's triggers, their
// bodies rewritten to the sandbox; the tables a body names are forked with
// it; the stored routines a body calls are listed for the session to
// place; an AFTER trigger precedes the change capture's.
func TestTriggersCopied(t *testing.T) {
	for _, tc := range []struct {
		name     string
		body     string
		capture  bool
		setup    func(up *sessiontest.Upstream)
		want     string // the CREATE TRIGGER, with %p for the sandbox's app database
		forked   []string
		routines []registry.RoutineRef
	}{
		{name: "plain", body: "SET @n = NEW.id",
			want: "CREATE TRIGGER `%p`.`x_t0` AFTER INSERT ON `%p`.`x` FOR EACH ROW SET @n = NEW.id"},
		{name: "names a table", body: "INSERT INTO log (id) VALUES (NEW.id)", forked: []string{"log"},
			setup: func(up *sessiontest.Upstream) { up.AddTable(sessiontest.Table{DB: "app", Name: "log"}) },
			want:  "CREATE TRIGGER `%p`.`x_t0` AFTER INSERT ON `%p`.`x` FOR EACH ROW INSERT INTO `%p`.`log` (id) VALUES (NEW.id)"},
		{name: "before the capture", body: "SET @n = NEW.id", capture: true,
			want: "CREATE TRIGGER `%p`.`x_t0` AFTER INSERT ON `%p`.`x` FOR EACH ROW PRECEDES `_sqlfork_abc_ai` SET @n = NEW.id"},
		{name: "calls a procedure", body: "CALL app.p(NEW.id)",
			routines: []registry.RoutineRef{{Kind: "PROCEDURE", DB: "app", Name: "p"}},
			want:     "CREATE TRIGGER `%p`.`x_t0` AFTER INSERT ON `%p`.`x` FOR EACH ROW CALL `%p`.`p`(NEW.id)"},
		{name: "calls a stored function", body: "SET @n = f(NEW.id)",
			setup:    func(up *sessiontest.Upstream) { up.AddFunction("app", "f") },
			routines: []registry.RoutineRef{{Kind: "FUNCTION", DB: "app", Name: "f"}},
			want:     "CREATE TRIGGER `%p`.`x_t0` AFTER INSERT ON `%p`.`x` FOR EACH ROW SET @n = f(NEW.id)"},
		{name: "calls a qualified stored function", body: "SET @n = app.f(NEW.id)",
			setup:    func(up *sessiontest.Upstream) { up.AddFunction("app", "f") },
			routines: []registry.RoutineRef{{Kind: "FUNCTION", DB: "app", Name: "f"}},
			want:     "CREATE TRIGGER `%p`.`x_t0` AFTER INSERT ON `%p`.`x` FOR EACH ROW SET @n = `%p`.`f`(NEW.id)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, "copy", func(up *sessiontest.Upstream) {
				up.AddTable(sessiontest.Table{DB: "app", Name: "x"})
				triggerRows(up, "x", tc.body)
				if tc.capture {
					up.On("^SELECT state, trg FROM `_sqlfork_meta`\\.captures ").Rows(sessiontest.Row("rows", "_sqlfork_abc"))
				}
				if tc.setup != nil {
					tc.setup(up)
				}
			})
			sb := r.sandbox("")
			if _, _, err := r.fk.Ensure(r.ctx, sb, tbl("x"), forker.Full, nil); err != nil {
				t.Fatal(err)
			}
			want := strings.ReplaceAll(tc.want, "%p", r.phys(sb, "x").DB)
			if got := r.up.Matching(`^CREATE TRIGGER `); len(got) != 1 || got[0] != want {
				t.Errorf("triggers made:\n%q\nwant\n%q", got, want)
			}
			for _, name := range append([]string{"x"}, tc.forked...) {
				if r.kind(sb, name) != sandbox.KindFork {
					t.Errorf("%s is %q, want forked", name, r.kind(sb, name))
				}
			}
			if got := sb.TakeNeeded(); !slices.Equal(got, tc.routines) {
				t.Errorf("routines needed %+v, want %+v", got, tc.routines)
			}
		})
	}
}

// TestTriggerHazards: a table whose trigger the sandbox cannot hold
// faithfully is refused with the reason, and nothing is forked.
func TestTriggerHazards(t *testing.T) {
	for _, tc := range []struct {
		name  string
		body  string
		setup func(up *sessiontest.Upstream)
		why   string
	}{
		{name: "unparseable", body: "SET NEW.id = ((", why: "has a body the proxy cannot read"},
		{name: "two statements", body: "SET @n = 1; SET @m = 2", why: "cannot be read by the proxy"},
		{name: "drops a routine", body: "DROP PROCEDURE app.p", why: "defines or drops a stored routine"},
		{name: "server-wide", body: "SET @n = (SELECT COUNT(*) FROM performance_schema.threads)", why: "reads what the whole server holds"},
		{name: "loadable function", body: "SET @n = udf1(NEW.id)", why: "udf1",
			setup: func(up *sessiontest.Upstream) { up.AddUDF("udf1") }},
		{name: "reads information_schema", body: "SET @n = (SELECT COUNT(*) FROM information_schema.TABLES)",
			why: "information_schema"},
		{name: "reads a file", body: "SET @n = LOAD_FILE('/etc/passwd')", why: "reaches outside the database"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, "copy", func(up *sessiontest.Upstream) {
				up.AddTable(sessiontest.Table{DB: "app", Name: "x"})
				triggerRows(up, "x", tc.body)
				if tc.setup != nil {
					tc.setup(up)
				}
			})
			sb := r.sandbox("")
			_, _, err := r.fk.Ensure(r.ctx, sb, tbl("x"), forker.Full, nil)
			if code(err) != 1105 || !strings.Contains(err.Error(), "cannot fork app.x: its trigger `x_t0` ") ||
				!strings.Contains(err.Error(), tc.why) {
				t.Fatalf("Ensure = %v, want a refusal saying %q", err, tc.why)
			}
			if r.kind(sb, "x") != "" || r.has(sb, "x") || r.count(`^CREATE TABLE .* LIKE `) != 0 {
				t.Error("a refused table was forked")
			}
			if _, failed := r.obs.report(); strings.Join(failed, ";") != "copy refused" {
				t.Errorf("failures reported: %q", failed)
			}
		})
	}
}

// TestTriggerCopyFails: a fork whose trigger cannot be made is undone.
func TestTriggerCopyFails(t *testing.T) {
	r := newRig(t, "copy", func(up *sessiontest.Upstream) {
		up.AddTable(sessiontest.Table{DB: "app", Name: "x"})
		triggerRows(up, "x", "SET @n = NEW.id")
		up.On(`^CREATE TRIGGER `).Fail(1142, "42000", "TRIGGER command denied")
	})
	sb := r.sandbox("")
	_, _, err := r.fk.Ensure(r.ctx, sb, tbl("x"), forker.Full, nil)
	if code(err) != 1142 || !strings.Contains(err.Error(), "create trigger x_t0") {
		t.Fatalf("Ensure = %v", err)
	}
	if r.kind(sb, "x") != "" || r.has(sb, "x") || r.row(sb, "x") != "" {
		t.Error("the fork without its trigger stayed")
	}
}

// TestConnectedForkFails: when the fork of a table the component needs
// fails, the forks made before it in the same call must go too: kept,
// they would stay without their keys or triggers for good (the next
// Ensure finds them in place and adds nothing).
func TestConnectedForkFails(t *testing.T) {
	for _, tc := range []struct {
		name  string
		table string
		setup func(up *sessiontest.Upstream)
		// check fails unless the table's fork, made by a retry, has what
		// connects it.
		made string
	}{
		{name: "foreign key", table: "u", made: ` ADD CONSTRAINT `, setup: func(up *sessiontest.Upstream) {
			up.On(fkQuery).Rows(fkRow("RESTRICT"))
			fkDDL(up)
			noIndexes(up)
		}},
		{name: "trigger", table: "x", made: `^CREATE TRIGGER `, setup: func(up *sessiontest.Upstream) {
			up.AddTable(sessiontest.Table{DB: "app", Name: "x"})
			up.AddTable(sessiontest.Table{DB: "app", Name: "log"})
			triggerRows(up, "x", "INSERT INTO log (id) VALUES (NEW.id)")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, "copy", func(up *sessiontest.Upstream) {
				// The second fork of the call (the connected table's) fails.
				up.On(`^CREATE TABLE .* LIKE `).Nth(2).Fail(1205, "HY000", "Lock wait timeout exceeded")
				tc.setup(up)
			})
			sb := r.sandbox("")
			_, _, err := r.fk.Ensure(r.ctx, sb, tbl(tc.table), forker.Full, nil)
			if code(err) != 1205 || !strings.Contains(err.Error(), "which app."+tc.table+" needs") {
				t.Fatalf("Ensure = %v, want the connected fork's 1205", err)
			}
			if r.kind(sb, tc.table) != "" || r.row(sb, tc.table) != "" || r.has(sb, tc.table) {
				t.Errorf("%s's fork stayed without what connects it: entry %q, registry %q", tc.table, r.kind(sb, tc.table), r.row(sb, tc.table))
			}
			if _, _, err := r.fk.Ensure(r.ctx, sb, tbl(tc.table), forker.Full, nil); err != nil {
				t.Fatal(err)
			}
			if r.count(tc.made) == 0 {
				t.Errorf("after a retry %s's fork still lacks what connects it (no %s)", tc.table, tc.made)
			}
		})
	}
}
