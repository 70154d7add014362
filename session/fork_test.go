package session_test

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/session"
	"github.com/sqlfork/sqlfork-proxy/session/sessiontest"
)

// TestForkCopy: the first write to a table copies it into the sandbox —
// CREATE TABLE … LIKE, one INSERT … SELECT of its stored columns, its
// AUTO_INCREMENT position — under the fork lock, with a marker row first
// and the fork's row after; the statement is then sent to the fork.
func TestForkCopy(t *testing.T) {
	e := newEnv(t, session.Config{}, nil)
	s := e.transparent("u")
	id := e.idOf(s)
	phys := q(physDB(id, "app")) + `\.` + q("t")
	e.up.ClearLog()
	p := e.mustPlan(s, "UPDATE t SET a = 1 WHERE id = 2")
	if want := "UPDATE `" + physDB(id, "app") + "`.`t` SET a = 1 WHERE id = 2"; p.SQL != want || !p.Flags().Changed {
		t.Errorf("SQL %q (changed %v), want %q", p.SQL, p.Flags().Changed, want)
	}
	order := []string{
		`^INSERT INTO ` + q("_sqlfork_meta") + `\.sandboxes `,
		`^REPLACE INTO ` + q("_sqlfork_meta") + `\.holders `,
		`^SELECT GET_LOCK\('sqlfork:[0-9a-f]{40}', 1800\)$`,
		`^CREATE DATABASE IF NOT EXISTS ` + q(physDB(id, "app")) + `$`,
		`^REPLACE INTO ` + q("_sqlfork_meta") + `\.tables .*'forking'`,
		`^CREATE TABLE ` + phys + ` LIKE ` + q("app") + `\.` + q("t") + `$`,
		`^INSERT INTO ` + phys + " \\(`id`, `a`\\) SELECT `id`, `a` FROM " + q("app") + `\.` + q("t") + `$`,
		`^ALTER TABLE ` + phys + ` AUTO_INCREMENT = 4$`,
		`^REPLACE INTO ` + q("_sqlfork_meta") + `\.tables .*'fork'`,
		`^SELECT RELEASE_LOCK\('sqlfork:[0-9a-f]{40}'\)$`,
	}
	inOrder(t, e.up.Log(), order)
	// The sandbox's database is made by this fork: no leftover to clear.
	if n := e.count(`^DROP TABLE`); n != 0 {
		t.Errorf("cleared a leftover in a database made just now: %q", e.up.Matching(`^DROP TABLE`))
	}
	if kind, rows, bytes := e.tableRow(id, "app", "t"); kind != "fork" || rows != "3" || bytes != "16384" {
		t.Errorf("registry row: %s, %s rows, %s bytes", kind, rows, bytes)
	}
	if f, ok := e.up.Describe(physDB(id, "app"), "t"); !ok || f.Rows != 3 || f.AutoIncrement != 4 {
		t.Errorf("fork: %+v", f)
	}
	// Once per (sandbox, table): later statements, reads too, use the fork.
	e.up.ClearLog()
	for _, sql := range []string{"UPDATE t SET a = 2", "DELETE FROM t", "SELECT * FROM t"} {
		if p := e.mustPlan(s, sql); !strings.Contains(p.SQL, physDB(id, "app")) {
			t.Errorf("%q sent as %q", sql, p.SQL)
		}
	}
	if n := e.count(`LIKE|GET_LOCK`); n != 0 {
		t.Errorf("forked again: %q", e.up.Matching(`LIKE|GET_LOCK`))
	}
	if e.m.Forks() != 1 {
		t.Errorf("Forks() = %d", e.m.Forks())
	}
	// Another sandbox forks its own copy.
	other := e.transparent("u")
	e.mustPlan(other, "UPDATE t SET a = 3")
	if n := e.count(`^CREATE TABLE .* LIKE `); n != 1 {
		t.Errorf("%d forks for the second sandbox", n)
	}
}

// inOrder fails the test unless statements matching each pattern ran in
// that order.
func inOrder(t *testing.T, log []sessiontest.Stmt, patterns []string) {
	t.Helper()
	i := 0
	for _, st := range log {
		if i < len(patterns) && regexp.MustCompile(patterns[i]).MatchString(st.SQL) {
			if st.Err != nil {
				t.Errorf("%s failed: %v", st.SQL, st.Err)
			}
			i++
		}
	}
	if i < len(patterns) {
		var sqls []string
		for _, st := range log {
			sqls = append(sqls, st.SQL)
		}
		t.Errorf("no statement matching %s after the earlier ones; ran:\n%s", patterns[i], strings.Join(sqls, "\n"))
	}
}

// TestForkModes: what each kind of statement forks.
func TestForkModes(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		kind string // registry row of the first table written
		copy bool   // rows copied
		tbl  string
	}{
		{sql: "INSERT INTO t (a) VALUES (1)", kind: "fork", copy: true, tbl: "t"},
		{sql: "UPDATE t SET a = 1", kind: "fork", copy: true, tbl: "t"},
		{sql: "DELETE FROM t WHERE id = 1", kind: "fork", copy: true, tbl: "t"},
		{sql: "ALTER TABLE t ADD COLUMN c INT", kind: "fork", copy: true, tbl: "t"},
		{sql: "CREATE INDEX i ON t (a)", kind: "fork", copy: true, tbl: "t"},
		{sql: "LOCK TABLES t WRITE", kind: "fork", copy: true, tbl: "t"},
		{sql: "SELECT * FROM t FOR UPDATE", kind: "fork", copy: true, tbl: "t"},
		{sql: "INSERT INTO u (t_id) SELECT id FROM t", kind: "fork", copy: true, tbl: "t"},
		{sql: "TRUNCATE TABLE t", kind: "schema", tbl: "t"},
		{sql: "DROP TABLE t", kind: "schema", tbl: "t"},
		{sql: "CREATE TABLE n (id INT)", kind: "absent", tbl: "n"},
		{sql: "RENAME TABLE t TO n", kind: "absent", copy: true, tbl: "n"},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			e := newEnv(t, session.Config{}, nil)
			s := e.transparent("u")
			id := e.idOf(s)
			p := e.mustPlan(s, tc.sql)
			if !strings.Contains(p.SQL, "`"+physDB(id, "app")+"`.`"+tc.tbl+"`") {
				t.Errorf("sent as %q", p.SQL)
			}
			if kind, _, _ := e.tableRow(id, "app", tc.tbl); kind != tc.kind {
				t.Errorf("%s is %q in the registry, want %q", tc.tbl, kind, tc.kind)
			}
			if got := e.count(`^INSERT INTO .* SELECT `) > 0; got != tc.copy {
				t.Errorf("rows copied: %v, want %v", got, tc.copy)
			}
		})
	}
}

// TestForkSeekDB: on SeekDB a fork is FORK TABLE, reported done once a
// no-op DDL on the fork succeeds; schema-only forks are CREATE TABLE …
// LIKE.
func TestForkSeekDB(t *testing.T) {
	e := newEnv(t, session.Config{}, func(up *sessiontest.Upstream) {
		up.SetVersion("5.7.25-OceanBase seekdb-v1.1.0.0")
		up.AddTable(sessiontest.Table{DB: "app", Name: "c", Rows: 7, Comment: "it's c"})
		// The fork's background task holds DDL off once.
		up.On("^ALTER TABLE .* COMMENT = ").Nth(1).Fail(1205, "HY000", "Lock wait timeout exceeded")
	})
	s := e.transparent("u")
	id := e.idOf(s)
	fork := q(physDB(id, "app")) + `\.` + q("c")
	e.mustPlan(s, "UPDATE c SET id = 1")
	inOrder(t, e.up.Log(), []string{`^FORK TABLE ` + q("app") + `\.` + q("c") + ` TO ` + fork + `$`})
	if n := e.count(`^ALTER TABLE ` + fork + ` COMMENT = 'it''s c'$`); n != 2 {
		t.Errorf("%d probes of the fork, want 2 (one busy, one through)", n)
	}
	if kind, rows, _ := e.tableRow(id, "app", "c"); kind != "fork" || rows != "7" {
		t.Errorf("registry row: %s with %s rows", kind, rows)
	}
	e.mustPlan(s, "TRUNCATE TABLE t")
	if n := e.count(`^CREATE TABLE ` + q(physDB(id, "app")) + `\.` + q("t") + ` LIKE `); n != 1 {
		t.Errorf("schema-only fork on SeekDB: %q", e.up.Matching(`^(CREATE|FORK) `))
	}
}

// TestForkRefused: tables no fork can hold faithfully are refused with
// the reason, and nothing of them is left in the sandbox.
func TestForkRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		table sessiontest.Table
		sql   string
		code  uint16
		msg   string
	}{
		{name: "sequence default", table: sessiontest.Table{DB: "app", Name: "x",
			Columns: []sessiontest.Column{{Name: "id", Default: "nextval(`app`.`seq`)"}}},
			sql: "UPDATE x SET id = 1", code: 1105, msg: "names a production sequence"},
		{name: "system-versioned", table: sessiontest.Table{DB: "app", Name: "x", Type: "SYSTEM VERSIONED"},
			sql: "UPDATE x SET id = 1", code: 1105, msg: "system-versioned"},
		{name: "no insertable column", table: sessiontest.Table{DB: "app", Name: "x",
			Columns: []sessiontest.Column{{Name: "g", Generated: "1"}}},
			sql: "UPDATE x SET g = 1", code: 1105, msg: "no columns that can be copied"},
		{name: "MERGE engine", table: sessiontest.Table{DB: "app", Name: "x", Engine: "MRG_MyISAM"},
			sql: "UPDATE x SET id = 1", code: 1290, msg: "reads and writes other tables"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, session.Config{}, func(up *sessiontest.Upstream) {
				if tc.table.Name != "" {
					up.AddTable(tc.table)
				}
			})
			s := e.transparent("u")
			id := e.idOf(s)
			_, err := plan(e.ctx, s, tc.sql)
			wantCode(t, err, tc.code, "HY000", tc.msg)
			for _, tbl := range []string{"x", "v"} {
				if e.up.HasTable(physDB(id, "app"), tbl) {
					t.Errorf("%s left in the sandbox", tbl)
				}
				if kind, _, _ := e.tableRow(id, "app", tbl); kind != "" {
					t.Errorf("registry row %q left for %s", kind, tbl)
				}
			}
		})
	}
}

// TestForkFails: a fork that fails leaves nothing behind, and the next
// statement forks again.
func TestForkFails(t *testing.T) {
	for _, tc := range []struct {
		name string
		rule string
		code uint16 // 0: not a MySQL error
		// marker: the fork's marker row stays (reconciliation drops it).
		marker bool
	}{
		{name: "copy fails", rule: `^INSERT INTO .* SELECT `, code: 1205},
		{name: "create fails", rule: `^CREATE TABLE .* LIKE `, code: 1205},
		{name: "marker cannot be written", rule: `^REPLACE INTO .*\.tables .*'forking'`, code: 1205},
		{name: "fork row cannot be written", rule: `^REPLACE INTO .*\.tables .*'fork'`, code: 1205, marker: true},
		{name: "sandbox cannot be recorded", rule: `^INSERT INTO .*\.sandboxes `, code: 1205},
		{name: "schema cannot be created", rule: `^CREATE DATABASE .*_app`, code: 1205},
		{name: "lock unreadable", rule: `^SELECT GET_LOCK\(.*, [1-9][0-9]*\)$`, code: 1205},
		{name: "connection breaks", rule: `^INSERT INTO .* SELECT `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, session.Config{}, func(up *sessiontest.Upstream) {
				if tc.code != 0 {
					up.On(tc.rule).Nth(1).Fail(tc.code, "HY000", "Lock wait timeout exceeded")
				} else {
					up.On(tc.rule).Nth(1).Break()
				}
			})
			s := e.transparent("u")
			id := e.idOf(s)
			_, err := plan(e.ctx, s, "UPDATE t SET a = 1")
			code, _, _, _ := sessiontest.Code(err)
			if err == nil || code != tc.code {
				t.Fatalf("error %v (code %d), want code %d", err, code, tc.code)
			}
			if tc.code != 0 { // a broken connection could not clean up
				if kind, _, _ := e.tableRow(id, "app", "t"); kind != "" && !(tc.marker && kind == "forking") {
					t.Errorf("registry row %q left", kind)
				}
				if e.up.HasTable(physDB(id, "app"), "t") {
					t.Errorf("half-made fork left")
				}
			}
			p := e.mustPlan(s, "UPDATE t SET a = 1")
			if kind, rows, _ := e.tableRow(id, "app", "t"); kind != "fork" || rows != "3" || !p.Flags().Changed {
				t.Errorf("retry: registry %s with %s rows, SQL %q", kind, rows, p.SQL)
			}
		})
	}
}

// TestForkLockTimeout: another process holding the fork lock past the
// timeout refuses the statement with 1205, and nothing is forked.
func TestForkLockTimeout(t *testing.T) {
	e := newEnv(t, session.Config{}, func(up *sessiontest.Upstream) {
		// The fork lock (waited for up to the fork timeout), not the
		// sandbox's life lock.
		up.On(`^SELECT GET_LOCK\('[^']*', 1800\)$`).Nth(1).Rows(sessiontest.Row("0"))
	})
	s := e.transparent("u")
	_, err := plan(e.ctx, s, "UPDATE t SET a = 1")
	wantCode(t, err, 1205, "HY000", "timed out waiting for another proxy to fork app.t")
	if n := e.count(`^CREATE TABLE .* LIKE `); n != 0 {
		t.Error("forked without the lock")
	}
}

// TestForkOnceConcurrently: connections of one sandbox writing the same
// table at once, through one process or two, make one fork.
func TestForkOnceConcurrently(t *testing.T) {
	for _, processes := range []int{1, 2} {
		t.Run(map[int]string{1: "one process", 2: "two processes"}[processes], func(t *testing.T) {
			copying := newGate()
			locks := make(chan struct{}, 16)
			e := newEnv(t, session.Config{}, func(up *sessiontest.Upstream) {
				up.On(`^INSERT INTO .* SELECT `).Nth(1).Before(copying.hook)
				up.On(`^SELECT GET_LOCK\(`).Before(func(string) { locks <- struct{}{} })
			})
			managers := []*session.Manager{e.m}
			if processes == 2 {
				m2 := e.start(session.Config{})
				defer m2.Close()
				managers = append(managers, m2)
			}
			const writers = 4
			var sessions []*session.Session
			for i := range writers {
				s := openOn(e, managers[i%processes], session.Options{User: "u", Mode: session.Explicit, Sandbox: "shared"})
				defer s.Close()
				sessions = append(sessions, s)
			}
			defer copying.open() // before the sessions close: the held fork holds the sandbox
			var wg sync.WaitGroup
			sqls := make([]string, writers)
			errs := make([]error, writers)
			for i, s := range sessions {
				wg.Add(1)
				go func() {
					defer wg.Done()
					p, err := plan(e.ctx, s, "UPDATE t SET a = 1")
					errs[i] = err
					if err == nil {
						sqls[i] = p.SQL
					}
				}()
				if i == 0 {
					copying.reached(t) // the first fork is copying rows
					await(t, locks, "the first fork's lock")
				}
			}
			if processes == 2 {
				await(t, locks, "the other process to wait for the lock")
			}
			copying.open()
			wg.Wait()
			for i, err := range errs {
				if err != nil || sqls[i] != sqls[0] || !strings.Contains(sqls[i], "_sqlfork_") {
					t.Errorf("writer %d: %q, %v", i, sqls[i], err)
				}
			}
			if n := e.count(`^CREATE TABLE .* LIKE `); n != 1 {
				t.Errorf("%d forks, want 1", n)
			}
		})
	}
}

// TestForkBytesLimit: max-fork-bytes bounds what one sandbox forks: a fork
// past it is refused with 1114, and a reload can raise it.
func TestForkBytesLimit(t *testing.T) {
	cfg := session.Config{Guardrails: session.Guardrails{MaxForkBytes: 40000}}
	e := newEnv(t, cfg, nil)
	s := e.transparent("u")
	id := e.idOf(s)
	e.mustPlan(s, "UPDATE t SET a = 1") // 16384 bytes
	_, err := plan(e.ctx, s, "UPDATE u SET t_id = 1")
	wantCode(t, err, 1114, "HY000", "past its limit of 40000 forked bytes (16384 used)")
	if err != nil && !strings.Contains(err.Error(), "--max-fork-bytes") {
		t.Errorf("no remedy in %v", err)
	}
	if kind, _, _ := e.tableRow(id, "app", "u"); kind != "" {
		t.Errorf("registry row %q for the refused fork", kind)
	}
	// Schema-only forks copy no bytes and are not bounded.
	e.mustPlan(s, "TRUNCATE TABLE u")
	e.m.SetLimits(session.Config{Guardrails: session.Guardrails{MaxForkBytes: 1 << 20}})
	other := e.transparent("u")
	e.mustPlan(other, "UPDATE u SET t_id = 1")
}

// TestViewCopied: a statement that writes through a production view, or
// reads it under locks, gets the sandbox's own copy of the view, reading
// the fork of its table, made after the fork; a plain read of a view whose
// tables the sandbox does not hold reads production's view.
func TestViewCopied(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		copy bool
	}{
		{"UPDATE v SET id = 1", true},
		{"SELECT * FROM v FOR UPDATE", true},
		{"SELECT * FROM v", false},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			e := newEnv(t, session.Config{}, nil)
			s := e.transparent("u")
			id := e.idOf(s)
			p := e.mustPlan(s, tc.sql)
			made := e.count(`^CREATE OR REPLACE SQL SECURITY INVOKER VIEW ` + q(physDB(id, "app")) + `\.` + q("v") +
				` AS select ` + q(physDB(id, "app")) + `\.` + q("t") + `\.` + q("id") + ` AS ` + q("id") + ` from ` +
				q(physDB(id, "app")) + `\.` + q("t") + `$`)
			if tc.copy {
				if made != 1 {
					t.Errorf("view copies made: %d, want 1; statements: %q", made, e.up.Matching(`^CREATE `))
				}
				if !strings.Contains(p.SQL, physDB(id, "app")+"`.`v`") {
					t.Errorf("statement sent: %s, want it on the copy", p.SQL)
				}
				if kind, _, _ := e.tableRow(id, "app", "v"); kind != "view" {
					t.Errorf("registry row of the copy: %q, want view", kind)
				}
				return
			}
			if made != 0 || p.SQL != tc.sql {
				t.Errorf("a read of an untouched view: %d copies, sent %q", made, p.SQL)
			}
		})
	}
}

// TestTriggersCopied: a fork carries its production table's triggers, in
// their order, on the fork.
func TestTriggersCopied(t *testing.T) {
	e := newEnv(t, session.Config{}, func(up *sessiontest.Upstream) {
		up.AddTable(sessiontest.Table{DB: "app", Name: "x", Triggers: 2})
	})
	s := e.transparent("u")
	id := e.idOf(s)
	e.mustPlan(s, "UPDATE x SET id = 1")
	for i := 0; i < 2; i++ {
		if n := e.count(`^CREATE TRIGGER ` + q(physDB(id, "app")) + `\.` + q(fmt.Sprintf("x_trg%d", i)) + ` BEFORE INSERT ON ` +
			q(physDB(id, "app")) + `\.` + q("x") + ` FOR EACH ROW SET NEW\.id = NEW\.id$`); n != 1 {
			t.Errorf("trigger x_trg%d made %d times on the fork; statements: %q", i, n, e.up.Matching(`^CREATE TRIGGER`))
		}
	}
}
