package capture_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/capture"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry/registrytest"
	"github.com/sqlfork/sqlfork-proxy/session/sessiontest"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
)

const prefix = registrytest.Prefix

var names = registrytest.Names

// env is a registry on the fake upstream with a sandbox holding forks.
type env struct {
	t    *testing.T
	ctx  context.Context
	up   *sessiontest.Upstream
	reg  *registry.Registry
	sb   *registry.Sandbox
	conn sideconn.Conn
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	up := sessiontest.NewUpstream()
	reg := registry.New(registrytest.Config(), up.Dialer(), zap.NewNop(), func(string, int) error { return nil })
	reg.SetNames(names)
	reg.SetLimits(registry.Limits{SideConnections: 4, ForkQueueTimeout: time.Minute})
	registrytest.Start(t, reg)
	sb, err := reg.NewSandbox("s", "u")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := up.Dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// What the fake does not emulate: the side table's DDL and dropping
	// triggers.
	up.On("^CREATE TABLE `" + sandbox.InfoSchema(prefix, sb.ID) + "`").Affected(0)
	up.On(`^SELECT @@session\.lock_wait_timeout$`).Rows(sessiontest.Row("50"))
	return &env{t: t, ctx: ctx, up: up, reg: reg, sb: sb, conn: conn}
}

// fork makes the fork of app.name in the sandbox, with columns id (the
// primary key when keyed), v and extra, and its shape as information_schema
// shows it.
func (e *env) fork(name string, keyed bool, extra ...string) (rewrite.Table, *sandbox.Entry) {
	l := rewrite.Table{DB: "app", Name: name}
	phys := names.Physical(e.sb.ID, l)
	e.up.AddTable(sessiontest.Table{DB: phys.DB, Name: phys.Name})
	where := "TABLE_SCHEMA = '" + phys.DB + "' AND TABLE_NAME = '" + name + "'"
	e.up.On(`^SELECT t\.ENGINE, e\.TRANSACTIONS, t\.TABLE_TYPE .* WHERE t\.TABLE_SCHEMA = '` + phys.DB + `' AND t\.TABLE_NAME = '` + name + `'$`).Rows(sessiontest.Row("InnoDB", "YES", "BASE TABLE"))
	cols := [][]*string{sessiontest.Row("id", "int(11)", "int", nil, nil, "", "NO"),
		sessiontest.Row("v", "varchar(10)", "varchar", "utf8mb4", "utf8mb4_bin", "", "YES")}
	for _, c := range extra {
		cols = append(cols, sessiontest.Row(c, "int(11)", "int", nil, nil, "", "YES"))
	}
	e.up.On(`^SELECT COLUMN_NAME, COLUMN_TYPE, .* WHERE ` + where + ` ORDER BY`).Rows(cols...)
	var keys [][]*string
	if keyed {
		keys = append(keys, sessiontest.Row("PRIMARY", "0", "id", nil))
	}
	e.up.On(`^SELECT INDEX_NAME, NON_UNIQUE, COLUMN_NAME, SUB_PART FROM information_schema\.STATISTICS WHERE ` + where).Rows(keys...)
	// Triggers drop (rules added earlier say otherwise).
	e.up.On(`^DROP TRIGGER IF EXISTS `).Affected(0)
	en := &sandbox.Entry{Logical: l, Phys: phys, Kind: sandbox.KindFork}
	e.reg.SetEntry(e.sb, names.Key(l), en)
	return l, en
}

// fks scripts the foreign keys of app.name: rows of constraint, column,
// parent db, parent table, parent column, ON UPDATE, ON DELETE.
func (e *env) fks(name string, rows ...[]*string) {
	e.up.On(`^SELECT k\.CONSTRAINT_NAME, .* WHERE k\.TABLE_SCHEMA = 'app' AND k\.TABLE_NAME = '` + name + `' `).Rows(rows...)
	// No parent's rows are changed by a foreign key's action (rules added
	// earlier say otherwise).
	e.up.On(`^SELECT COUNT\(\*\) FROM information_schema\.REFERENTIAL_CONSTRAINTS WHERE`).Rows(sessiontest.Row(0))
}

func (e *env) tracker(cfg capture.Config) *capture.Tracker {
	cfg.Prefix = prefix
	return capture.New(cfg, zap.NewNop(), names, e.reg)
}

func (e *env) load() map[string]capture.Info {
	e.t.Helper()
	caps, err := e.tracker(capture.Config{}).Load(e.ctx, e.conn, e.sb.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return caps
}

func TestStart(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cfg     capture.Config
		mode    forker.Mode
		keyed   bool
		extra   []string
		fks     [][]*string
		setup   func(e *env)
		state   string
		reason  string // part of it
		trigger bool   // capture triggers made
	}{
		{name: "captured", keyed: true, state: capture.Rows, trigger: true},
		{name: "capture off", cfg: capture.Config{NoDiffCapture: true}, keyed: true, state: capture.Full, reason: "--diff-capture=false"},
		{name: "schema only", mode: forker.SchemaOnly, keyed: true, state: capture.Full, reason: "forked without its rows"},
		{name: "no key", state: capture.Full, reason: "no primary key or unique key"},
		{name: "marker column", keyed: true, extra: []string{"_sqlfork_existed"}, state: capture.Full, reason: "a column is named _sqlfork_existed"},
		{name: "triggers fail", keyed: true, setup: func(e *env) {
			e.up.On(`^CREATE TRIGGER .* AFTER UPDATE `).Fail(1142, "42000", "TRIGGER command denied")
		}, state: capture.Full, reason: "its capture triggers could not be made"},
		{name: "restrict foreign key", keyed: true, fks: [][]*string{sessiontest.Row("fk", "v", "app", "p", "v", "RESTRICT", "NO ACTION")},
			state: capture.Rows, trigger: true},
		{name: "cascading foreign key", keyed: true, fks: [][]*string{sessiontest.Row("fk", "v", "app", "p", "v", "RESTRICT", "CASCADE")},
			state: capture.Rows, trigger: true},
		{name: "own parent", keyed: true, fks: [][]*string{sessiontest.Row("fk", "v", "app", "t", "v", "RESTRICT", "SET NULL")},
			state: capture.Full, reason: "the table is its own parent"},
		{name: "update changes the key", keyed: true, fks: [][]*string{sessiontest.Row("fk", "id", "app", "p", "id", "CASCADE", "RESTRICT")},
			state: capture.Full, reason: "ON UPDATE changes its key"},
		{name: "parent cascaded into", keyed: true, fks: [][]*string{sessiontest.Row("fk", "v", "app", "p", "v", "RESTRICT", "CASCADE")},
			setup: func(e *env) {
				e.up.On(`REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = 'app' AND TABLE_NAME = 'p'`).Rows(sessiontest.Row(1))
			}, state: capture.Full, reason: "the rows of its parent app.p are changed by a foreign key's action too"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			if tc.setup != nil {
				// Rules answer in the order added: before the env's.
				tc.setup(e)
			}
			l, en := e.fork("t", tc.keyed, tc.extra...)
			e.fks("t", tc.fks...)
			tr := e.tracker(tc.cfg)
			if err := tr.Start(e.ctx, e.conn, e.sb, l, en.Phys, tc.mode); err != nil {
				t.Fatal(err)
			}
			info, ok := e.load()[names.Key(l)]
			if !ok || info.State != tc.state || tc.reason == "" && info.Reason != "" || !strings.Contains(info.Reason, tc.reason) {
				t.Fatalf("capture %+v, want %s %q", info, tc.state, tc.reason)
			}
			made := e.up.Count("^CREATE TRIGGER `" + en.Phys.DB + "`.`_sqlfork_[0-9a-f]{16}_a[iud]` AFTER ")
			if tc.trigger != (made == 3) {
				t.Errorf("%d capture triggers made", made)
			}
			trg, err := tr.Trigger(e.ctx, e.conn, e.sb.ID, l)
			if err != nil || (trg != "") != (tc.state == capture.Rows) || trg != "" && trg != info.Trigger {
				t.Errorf("Trigger = %q, %v; capture %+v", trg, err, info)
			}
			if tc.state == capture.Rows {
				if info.KeyKind != "primary" || len(info.Key) != 1 || info.Key[0] != "id" ||
					info.Side.DB != sandbox.InfoSchema(prefix, e.sb.ID) || !strings.HasPrefix(info.Side.Name, "c_") {
					t.Errorf("capture %+v", info)
				}
				if !e.sb.SideDBMade() || !e.up.HasSchema(info.Side.DB) {
					t.Error("the sandbox's own database was not made")
				}
			}
			if tc.fks != nil && tc.state == capture.Rows {
				wantCascades := 0
				if tc.fks[0][6] != nil && *tc.fks[0][6] == "CASCADE" {
					wantCascades = 1
				}
				if len(info.Cascades) != wantCascades {
					t.Errorf("cascades %+v, want %d", info.Cascades, wantCascades)
				}
			}
			if w := e.up.ProductionWrites(prefix); len(w) > 0 {
				t.Errorf("wrote production: %q", w)
			}
		})
	}
}

func TestStartFails(t *testing.T) {
	for _, rule := range []string{
		`^SELECT t\.ENGINE`,
		`^SELECT k\.CONSTRAINT_NAME`,
		`^SELECT COUNT\(\*\) FROM information_schema\.REFERENTIAL_CONSTRAINTS`,
		`^CREATE DATABASE IF NOT EXISTS`,
		`^REPLACE INTO .*captures`,
	} {
		t.Run(rule, func(t *testing.T) {
			e := newEnv(t)
			e.up.On(rule).Fail(1142, "42000", "denied")
			l, en := e.fork("t", true)
			e.fks("t", sessiontest.Row("fk", "v", "app", "p", "v", "RESTRICT", "CASCADE"))
			if err := e.tracker(capture.Config{}).Start(e.ctx, e.conn, e.sb, l, en.Phys, forker.Full); err == nil {
				t.Error("Start succeeded")
			}
		})
	}
}

// started is a sandbox with the captured fork app.name.
func (e *env) started(name string, fks ...[]*string) (rewrite.Table, *sandbox.Entry, capture.Info) {
	e.t.Helper()
	l, en := e.fork(name, true)
	e.fks(name, fks...)
	if err := e.tracker(capture.Config{}).Start(e.ctx, e.conn, e.sb, l, en.Phys, forker.Full); err != nil {
		e.t.Fatal(err)
	}
	info := e.load()[names.Key(l)]
	if info.State != capture.Rows {
		e.t.Fatalf("capture of %s: %+v", name, info)
	}
	return l, en, info
}

// TestInstallCascades: the triggers capturing what a cascading foreign key
// changes are made on the parent's fork, and recorded; when they cannot
// be, the child's fork is compared whole.
func TestInstallCascades(t *testing.T) {
	for _, fail := range []bool{false, true} {
		t.Run(map[bool]string{false: "made", true: "failed"}[fail], func(t *testing.T) {
			e := newEnv(t)
			pl, pen := e.fork("p", true)
			_ = pl
			l, en, _ := e.started("t", sessiontest.Row("fk", "v", "app", "p", "v", "CASCADE", "CASCADE"))
			if fail {
				e.up.On("^CREATE TRIGGER `"+pen.Phys.DB+"`.`_sqlfork_[0-9a-f]{16}_bu`").Fail(1142, "42000", "denied")
			}
			tr := e.tracker(capture.Config{})
			if err := tr.InstallCascades(e.ctx, e.conn, e.sb, map[string]*sandbox.Entry{names.Key(l): en}); err != nil {
				t.Fatal(err)
			}
			info := e.load()[names.Key(l)]
			if fail {
				if info.State != capture.Full || !strings.Contains(info.Reason, "the capture of its foreign key fk's actions could not be made") {
					t.Errorf("capture %+v", info)
				}
				if n := e.up.Count(`^DROP TRIGGER IF EXISTS .*_a[iud]` + "`$"); n != 3 {
					t.Errorf("%d capture triggers dropped, want 3", n)
				}
				return
			}
			if info.State != capture.Rows || len(info.Cascades) != 1 || len(info.Cascades[0].Triggers) != 2 {
				t.Fatalf("capture %+v", info)
			}
			for _, trg := range info.Cascades[0].Triggers {
				if e.up.Count("^CREATE TRIGGER `"+pen.Phys.DB+"`.`"+trg+"` BEFORE (DELETE|UPDATE) ON `"+pen.Phys.DB+"`.`p` ") != 1 {
					t.Errorf("cascade trigger %s not made on the parent's fork", trg)
				}
			}
			// Nothing to do without forks, or with capture off.
			e.up.ClearLog()
			if err := tr.InstallCascades(e.ctx, e.conn, e.sb, nil); err != nil || len(e.up.Log()) != 0 {
				t.Errorf("with no forks: %v, ran %d statements", err, len(e.up.Log()))
			}
			off := e.tracker(capture.Config{NoDiffCapture: true})
			if err := off.InstallCascades(e.ctx, e.conn, e.sb, map[string]*sandbox.Entry{names.Key(l): en}); err != nil || len(e.up.Log()) != 0 {
				t.Errorf("capture off: %v, ran %d statements", err, len(e.up.Log()))
			}

			// DDL of the parent stops the child's cascade capture: the
			// child is compared whole, the parent's cascade triggers go.
			e.up.ClearLog()
			if err := tr.Stop(e.ctx, e.sb, []rewrite.Table{pl}, capture.SandboxDDL+"ALTER TABLE", nil); err != nil {
				t.Fatal(err)
			}
			child := e.load()[names.Key(l)]
			if child.State != capture.Full || child.Reason != "its parent app.p was ALTER TABLE" {
				t.Errorf("child after its parent's DDL: %+v", child)
			}
			if n := e.up.Count("^DROP TRIGGER IF EXISTS `" + pen.Phys.DB + "`.`_sqlfork_[0-9a-f]{16}_b[du]`$"); n != 2 {
				t.Errorf("%d cascade triggers dropped, want 2", n)
			}
		})
	}
}

// TestStop: DDL of a captured fork records it compared whole, then drops
// its triggers: on the client's connection when given, else on a side
// connection; KeepTriggers leaves them.
func TestStop(t *testing.T) {
	for _, tc := range []struct {
		name    string
		on      string // "", "client", "keep"
		setup   func(e *env)
		dropped bool
		err     bool
	}{
		{name: "side connection", dropped: true},
		{name: "client connection", on: "client", dropped: true},
		{name: "keep triggers", on: "keep"},
		{name: "lock wait", setup: func(e *env) {
			e.up.On(`^DROP TRIGGER IF EXISTS .*_ai`+"`$").Fail(1205, "HY000", "Lock wait timeout exceeded")
		}},
		{name: "drop fails", setup: func(e *env) {
			e.up.On(`^DROP TRIGGER IF EXISTS .*_ai`+"`$").Fail(1142, "42000", "denied")
		}, err: true},
		{name: "record fails", setup: func(e *env) {
			e.up.On(`^UPDATE .*captures SET state`).Fail(1142, "42000", "denied")
		}, err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			if tc.setup != nil {
				tc.setup(e)
			}
			l, en, _ := e.started("t")
			var on forker.Conn
			client, err := e.up.Dial(e.ctx)
			if err != nil {
				t.Fatal(err)
			}
			switch tc.on {
			case "client":
				on = client
			case "keep":
				on = capture.KeepTriggers{}
			}
			e.up.ClearLog()
			err = e.tracker(capture.Config{}).Stop(e.ctx, e.sb, []rewrite.Table{l, {DB: "app", Name: "notforked"}},
				capture.SandboxDDL+"ALTER TABLE", on)
			if (err != nil) != tc.err {
				t.Fatalf("Stop: %v", err)
			}
			if tc.err {
				return
			}
			info := e.load()[names.Key(l)]
			if info.State != capture.Full || info.Reason != "changed by ALTER TABLE" {
				t.Errorf("capture %+v", info)
			}
			var drops []sessiontest.Stmt
			for _, st := range e.up.Log() {
				if strings.HasPrefix(st.SQL, "DROP TRIGGER IF EXISTS `"+en.Phys.DB+"`.`"+info.Trigger) && st.Err == nil {
					drops = append(drops, st)
				}
			}
			if got := len(drops) == 3; got != tc.dropped {
				t.Errorf("%d triggers dropped", len(drops))
			}
			if tc.on == "client" && len(drops) > 0 && drops[0].Conn != client.ID() {
				t.Errorf("dropped on connection %d, want the client's %d", drops[0].Conn, client.ID())
			}
			if tc.on == "" && tc.dropped && e.up.Count(`^SET SESSION lock_wait_timeout = 50$`) != 1 {
				t.Error("the side connection's lock_wait_timeout was not set back")
			}
		})
	}
	// Tables without forks: nothing runs.
	e := newEnv(t)
	e.up.ClearLog()
	if err := e.tracker(capture.Config{}).Stop(e.ctx, e.sb, []rewrite.Table{{DB: "app", Name: "x"}}, "why", nil); err != nil || len(e.up.Log()) != 0 {
		t.Errorf("Stop of no fork: %v, %d statements", err, len(e.up.Log()))
	}
}

// TestLast: the proxy's triggers are made again last when a sandbox's
// trigger went after them, and left alone otherwise.
func TestLast(t *testing.T) {
	for _, tc := range []struct {
		name     string
		triggers [][]*string
		remade   int
	}{
		{name: "ours last", triggers: [][]*string{sessiontest.Row("user_trg", "SET @a = 1"), sessiontest.Row("_sqlfork_0011_ai", "BEGIN END")}},
		{name: "ours first", triggers: [][]*string{sessiontest.Row("_SQLFORK_0011_ai", "BEGIN END"), sessiontest.Row("user_trg", "SET @a = 1")}, remade: 1},
		{name: "none", triggers: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			l, en := e.fork("t", true)
			e.up.On(`^SELECT TRIGGER_NAME, ACTION_STATEMENT FROM information_schema\.TRIGGERS WHERE EVENT_OBJECT_SCHEMA = '` + en.Phys.DB +
				`' AND EVENT_OBJECT_TABLE = 't' AND ACTION_TIMING = 'AFTER' AND EVENT_MANIPULATION = 'INSERT'`).Rows(tc.triggers...)
			e.up.On(`^CREATE OR REPLACE TRIGGER `).Affected(0)
			if err := e.tracker(capture.Config{}).Last(e.ctx, e.sb, l, "after", "insert", nil); err != nil {
				t.Fatal(err)
			}
			if n := e.up.Count("^CREATE OR REPLACE TRIGGER `" + en.Phys.DB + "`.`_SQLFORK_0011_ai` AFTER INSERT ON `" + en.Phys.DB + "`.`t` FOR EACH ROW BEGIN END$"); n != tc.remade {
				t.Errorf("remade %d times, want %d", n, tc.remade)
			}
		})
	}
	// A table the sandbox does not hold: nothing runs.
	e := newEnv(t)
	e.up.ClearLog()
	if err := e.tracker(capture.Config{}).Last(e.ctx, e.sb, rewrite.Table{DB: "app", Name: "x"}, "AFTER", "INSERT", nil); err != nil || len(e.up.Log()) != 0 {
		t.Errorf("Last of no fork: %v, %d statements", err, len(e.up.Log()))
	}
}

func TestSuffix(t *testing.T) {
	for ev, want := range map[string]string{"INSERT": "_ai", "insert": "_ai", "Update": "_au", "DELETE": "_ad", "": "_ad"} {
		if got := capture.Suffix(ev); got != want {
			t.Errorf("Suffix(%q) = %q, want %q", ev, got, want)
		}
	}
}

func TestKeepTriggersDoesNothing(t *testing.T) {
	var k capture.KeepTriggers
	if n, err := k.Exec(context.Background(), "DROP TABLE x"); n != 0 || err != nil {
		t.Errorf("Exec = %d, %v", n, err)
	}
	if rows, err := k.Query(context.Background(), "SELECT 1"); rows != nil || err != nil {
		t.Errorf("Query = %v, %v", rows, err)
	}
}

// TestLoadBadRows: a captures row whose JSON does not read is an error.
func TestLoadBadRows(t *testing.T) {
	for _, col := range []string{"key_cols", "cascades"} {
		e := newEnv(t)
		l, _, _ := e.started("t")
		if _, err := e.up.Exec("UPDATE `_sqlfork_meta`.captures SET " + col + " = '{' WHERE tbl = '" + l.Name + "'"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.tracker(capture.Config{}).Load(e.ctx, e.conn, e.sb.ID); err == nil {
			t.Errorf("Load with bad %s succeeded", col)
		}
	}
	e := newEnv(t)
	e.up.On(`FROM .*captures WHERE sandbox_id`).Fail(1146, "42S02", "gone")
	if _, err := e.tracker(capture.Config{}).Load(e.ctx, e.conn, e.sb.ID); err == nil {
		t.Error("Load of an unreadable registry succeeded")
	}
	if _, err := e.tracker(capture.Config{}).Trigger(e.ctx, e.conn, e.sb.ID, rewrite.Table{DB: "app", Name: "t"}); err == nil {
		t.Error("Trigger of an unreadable registry succeeded")
	}
}
