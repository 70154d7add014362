package forking

import (
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/session/sessiontest"
)

// TestRefresh: after DDL a table's entry follows what the sandbox holds:
// a fork gone is dropped, a table back (or created where production has
// none) is created, with its size; an absent table still missing and a
// table the sandbox never touched stay as they are.
func TestRefresh(t *testing.T) {
	for _, tc := range []struct {
		name  string
		table string
		mode  forker.Mode
		// ddl changes the sandbox's table (its physical name) first.
		ddl        func(r *rig, phys rewrite.Table)
		kind       sandbox.Kind
		rows       int64
		unrecorded bool // Refresh writes no registry row
	}{
		{name: "fork dropped", table: "t", mode: forker.Full, kind: sandbox.KindDropped,
			ddl: func(r *rig, p rewrite.Table) { r.exec("DROP TABLE IF EXISTS " + p.Quoted()) }},
		{name: "fork kept", table: "t", mode: forker.Full, kind: sandbox.KindFork, rows: 3},
		{name: "dropped, then created again", table: "t", mode: forker.SchemaOnly, kind: sandbox.KindCreated, rows: 10,
			ddl: func(r *rig, p rewrite.Table) {
				r.exec("DROP TABLE IF EXISTS " + p.Quoted())
				if err := r.fk.Refresh(r.ctx, r.sb, []rewrite.Table{tbl("t")}); err != nil || r.kind(r.sb, "t") != sandbox.KindDropped {
					r.t.Fatalf("refresh after the drop: %v, %q", err, r.kind(r.sb, "t"))
				}
				r.exec("CREATE TABLE " + p.Quoted() + " LIKE `app`.`u`")
				r.exec("INSERT INTO " + p.Quoted() + " (`id`, `t_id`) SELECT `id`, `t_id` FROM `app`.`u`")
			}},
		{name: "created where production has none", table: "n", mode: forker.Full, kind: sandbox.KindCreated, rows: 3,
			ddl: func(r *rig, p rewrite.Table) {
				r.exec("CREATE TABLE " + p.Quoted() + " LIKE `app`.`t`")
				r.exec("INSERT INTO " + p.Quoted() + " (`id`, `a`) SELECT `id`, `a` FROM `app`.`t`")
			}},
		{name: "absent and still missing", table: "n", mode: forker.Full, kind: sandbox.KindAbsent, unrecorded: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, "copy", nil)
			r.sb = r.sandbox("")
			if _, _, err := r.fk.Ensure(r.ctx, r.sb, tbl(tc.table), tc.mode, nil); err != nil {
				t.Fatal(err)
			}
			before, _ := r.sb.Resolve(r.names.Key(tbl(tc.table)))
			if tc.ddl != nil {
				tc.ddl(r, r.phys(r.sb, tc.table))
			}
			r.up.ClearLog()
			// app.u was never touched: it is skipped.
			if err := r.fk.Refresh(r.ctx, r.sb, []rewrite.Table{tbl(tc.table), tbl("u")}); err != nil {
				t.Fatal(err)
			}
			e, _ := r.sb.Resolve(r.names.Key(tbl(tc.table)))
			if e.Kind != tc.kind || e.Rows != tc.rows {
				t.Errorf("entry %s with %d rows, want %s with %d", e.Kind, e.Rows, tc.kind, tc.rows)
			}
			if r.kind(r.sb, "u") != "" {
				t.Errorf("u got an entry %q", r.kind(r.sb, "u"))
			}
			writes := r.count(`^REPLACE INTO .*\.tables `)
			if tc.unrecorded {
				if writes != 0 || e != before {
					t.Errorf("an absent table still missing was recorded again (%d writes)", writes)
				}
				return
			}
			if writes != 1 || r.row(r.sb, tc.table) != string(tc.kind) {
				t.Errorf("%d registry writes, row %q; want 1, %q", writes, r.row(r.sb, tc.table), tc.kind)
			}
			if e.Epoch <= before.Epoch {
				t.Errorf("epoch %d not past %d: transactions would not see the change", e.Epoch, before.Epoch)
			}
		})
	}
}

// TestRefreshFails: a size that cannot be read, or a registry that cannot
// be written, fails the refresh and leaves the entry.
func TestRefreshFails(t *testing.T) {
	for _, rule := range []string{`^SELECT TABLE_ROWS, DATA_LENGTH`, `^REPLACE INTO .*\.tables `} {
		t.Run(rule, func(t *testing.T) {
			r := newRig(t, "copy", nil)
			sb := r.sandbox("")
			e, _, err := r.fk.Ensure(r.ctx, sb, tbl("t"), forker.Full, nil)
			if err != nil {
				t.Fatal(err)
			}
			r.up.On(rule).Fail(1205, "HY000", "Lock wait timeout exceeded")
			if err := r.fk.Refresh(r.ctx, sb, []rewrite.Table{tbl("t")}); code(err) != 1205 {
				t.Errorf("Refresh = %v, want 1205", err)
			}
			if now, _ := sb.Resolve(r.names.Key(tbl("t"))); now != e {
				t.Errorf("entry changed to %+v", now)
			}
		})
	}
}

// TestUnfork: a schema-only fork made for a DROP that failed goes again —
// registry row, table and entry — so the sandbox reads production's table;
// anything else is left alone.
func TestUnfork(t *testing.T) {
	for _, tc := range []struct {
		name string
		mode forker.Mode
		// before runs between the fork and Unfork.
		before func(r *rig, sb *registry.Sandbox)
		gone   bool // the fork, row and entry are gone
		kind   sandbox.Kind
		code   uint16
	}{
		{name: "schema-only fork", mode: forker.SchemaOnly, gone: true},
		{name: "full fork", mode: forker.Full, kind: sandbox.KindFork},
		{name: "the DROP took it", mode: forker.SchemaOnly, kind: sandbox.KindSchema, before: func(r *rig, sb *registry.Sandbox) {
			r.exec("DROP TABLE IF EXISTS " + r.phys(sb, "t").Quoted())
		}},
		{name: "row cannot be deleted", mode: forker.SchemaOnly, kind: sandbox.KindSchema, code: 1205, before: func(r *rig, _ *registry.Sandbox) {
			r.up.On(`^DELETE FROM .*\.tables WHERE `).Fail(1205, "HY000", "Lock wait timeout exceeded")
		}},
		{name: "size unreadable", mode: forker.SchemaOnly, kind: sandbox.KindSchema, code: 1205, before: func(r *rig, _ *registry.Sandbox) {
			r.up.On(`^SELECT TABLE_ROWS, DATA_LENGTH`).Fail(1205, "HY000", "Lock wait timeout exceeded")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, "copy", nil)
			sb := r.sandbox("")
			if _, _, err := r.fk.Ensure(r.ctx, sb, tbl("t"), tc.mode, nil); err != nil {
				t.Fatal(err)
			}
			if tc.before != nil {
				tc.before(r, sb)
			}
			err := r.fk.Unfork(r.ctx, sb, tbl("t"))
			if code(err) != tc.code || (tc.code == 0) != (err == nil) {
				t.Fatalf("Unfork = %v, want code %d", err, tc.code)
			}
			if tc.gone {
				if r.kind(sb, "t") != "" || r.row(sb, "t") != "" || r.has(sb, "t") {
					t.Errorf("left: entry %q, row %q, table %v", r.kind(sb, "t"), r.row(sb, "t"), r.has(sb, "t"))
				}
				return
			}
			if r.kind(sb, "t") != tc.kind {
				t.Errorf("entry %q, want %q", r.kind(sb, "t"), tc.kind)
			}
		})
	}
	// A table the sandbox never forked: nothing to do.
	r := newRig(t, "copy", nil)
	sb := r.sandbox("")
	r.up.ClearLog()
	if err := r.fk.Unfork(r.ctx, sb, tbl("t")); err != nil || len(r.up.Log()) != 0 {
		t.Errorf("Unfork of an untouched table = %v, ran %d statements", err, len(r.up.Log()))
	}
}

// TestCreateSchema: a sandbox database is made once, with its production
// database's character set and collation when it has them.
func TestCreateSchema(t *testing.T) {
	defaults := "^SELECT SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME"
	for _, tc := range []struct {
		name  string
		setup func(up *sessiontest.Upstream)
		want  string // the CREATE DATABASE ("" for none)
		code  uint16
		made  bool // the fake made the schema (it does not emulate defaults)
	}{
		{name: "production without defaults", want: "CREATE DATABASE IF NOT EXISTS `_sqlfork_1_app`", made: true},
		{name: "production's defaults", setup: func(up *sessiontest.Upstream) {
			up.On(defaults).Rows(sessiontest.Row("app", "latin1", "latin1_swedish_ci"))
			up.On(" CHARACTER SET ").Affected(1)
		}, want: "CREATE DATABASE IF NOT EXISTS `_sqlfork_1_app` CHARACTER SET `latin1` COLLATE `latin1_swedish_ci`"},
		{name: "exists already", setup: func(up *sessiontest.Upstream) {
			up.On(defaults).Rows(sessiontest.Row("app", "latin1", "latin1_swedish_ci"), sessiontest.Row("_sqlfork_1_app", "utf8mb4", "utf8mb4_bin"))
		}},
		{name: "defaults unreadable", setup: func(up *sessiontest.Upstream) {
			up.On(defaults).Fail(1205, "HY000", "busy")
		}, code: 1205},
		{name: "cannot create", setup: func(up *sessiontest.Upstream) {
			up.On("^CREATE DATABASE IF NOT EXISTS `_sqlfork_1_app`").Fail(1044, "42000", "Access denied")
		}, want: "CREATE DATABASE IF NOT EXISTS `_sqlfork_1_app`", code: 1044},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, "copy", tc.setup)
			c, err := r.up.Dial(r.ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			r.up.ClearLog()
			err = r.fk.CreateSchema(r.ctx, c, "app", "_sqlfork_1_app")
			if code(err) != tc.code || (tc.code == 0) != (err == nil) {
				t.Fatalf("CreateSchema = %v, want code %d", err, tc.code)
			}
			got := r.up.Matching("^CREATE DATABASE")
			if strings.Join(got, ";") != tc.want {
				t.Errorf("ran %q, want %q", got, tc.want)
			}
			if r.up.HasSchema("_sqlfork_1_app") != tc.made {
				t.Errorf("schema made: %v, want %v", !tc.made, tc.made)
			}
		})
	}
}

// TestBodyHazardUnprovable: a body the engine could not prove safe is
// refused with the engine's reason.
func TestBodyHazardUnprovable(t *testing.T) {
	r := newRig(t, "copy", nil)
	why, routines, err := r.fk.BodyHazard(r.ctx, "app", rewrite.Statement{Unprovable: "a dynamic statement"})
	if err != nil || routines != nil || why != "has a body the proxy cannot read (a dynamic statement)" {
		t.Errorf("BodyHazard = %q, %v, %v", why, routines, err)
	}
}
