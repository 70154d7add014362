package session_test

// Session.Plan's decisions and the transaction tracking of Executed and
// Restarted, as they are now (the planner, session/decide.go, is being
// reworked: keep these tests here, and few).

import (
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/session"
	"github.com/sqlfork/sqlfork-proxy/session/sessiontest"
)

const inTrans = 0x0001 // SERVER_STATUS_IN_TRANS

// run plans sql and records it as executed with the server status given.
func (e *env) run(s *session.Session, sql string, status uint16) *session.Plan {
	e.t.Helper()
	p := e.mustPlan(s, sql)
	if err := s.Executed(e.ctx, p, status, false); err != nil {
		e.t.Fatalf("Executed(%q): %v", sql, err)
	}
	return p
}

// TestPlanTransactionRestart: a transaction that uses a table forked after
// its read view was taken (its first plain read) must move past the fork:
// restarted when it has only read, replayed when it has written; DDL
// commits it anyway.
func TestPlanTransactionRestart(t *testing.T) {
	e := newEnv(t, session.Config{}, nil)
	s := e.transparent("u")
	if p := e.run(s, "BEGIN", inTrans); !p.Flags().Begin || p.Flags().TxEnd || p.Flags().Stateful {
		t.Errorf("BEGIN planned as %+v", p)
	}
	e.run(s, "SELECT * FROM t", inTrans)
	p := e.mustPlan(s, "UPDATE t SET a = 1")
	if !p.Flags().Restart || p.Flags().Replay || !p.Flags().Stateful {
		t.Errorf("a read-only transaction meeting a fork: restart %v, replay %v, stateful %v", p.Flags().Restart, p.Flags().Replay, p.Flags().Stateful)
	}
	s.Restarted(false)
	if err := s.Executed(e.ctx, p, inTrans, false); err != nil {
		t.Fatal(err)
	}
	if p := e.run(s, "SELECT * FROM t", inTrans); p.Flags().Restart || p.Flags().Replay {
		t.Error("restarted again for the same fork")
	}
	p = e.mustPlan(s, "UPDATE u SET t_id = 1")
	if p.Flags().Restart || !p.Flags().Replay {
		t.Errorf("a transaction that wrote, meeting a fork: restart %v, replay %v", p.Flags().Restart, p.Flags().Replay)
	}
	wantCode(t, s.ReplayRefused("a savepoint"), 1412, "HY000", "Table definition has changed, please retry transaction")
	s.Restarted(true)
	if err := s.Executed(e.ctx, p, inTrans, false); err != nil {
		t.Fatal(err)
	}
	if p := e.run(s, "COMMIT", 0); !p.Flags().TxEnd {
		t.Error("COMMIT does not end the transaction")
	}

	// DDL in a transaction: the fork it needs is made, and the
	// transaction committed first.
	e.run(s, "START TRANSACTION", inTrans)
	e.run(s, "SELECT * FROM t", inTrans)
	e.up.AddTable(sessiontest.Table{DB: "app", Name: "w", Rows: 1})
	p = e.mustPlan(s, "ALTER TABLE w ADD COLUMN c INT")
	if !p.Flags().DDL || !p.Flags().Restart || p.Flags().Replay {
		t.Errorf("DDL in a transaction: %+v", p)
	}
	// COM_RESET_CONNECTION ends the transaction, keeps the sandbox.
	s.Reset()
	if p := e.mustPlan(s, "SELECT * FROM w"); p.Flags().Restart || p.Flags().Replay || s.SandboxName() == "" {
		t.Errorf("after Reset: %+v in %q", p, s.SandboxName())
	}
}

// TestPlanDDLRefresh: after DDL the proxy reads back which of its tables
// exist in the sandbox: created, dropped — and a failed DROP's
// schema-only fork is undone.
func TestPlanDDLRefresh(t *testing.T) {
	e := newEnv(t, session.Config{}, nil)
	s := e.transparent("u")
	id := e.idOf(s)
	phys := physDB(id, "app")

	p := e.mustPlan(s, "CREATE TABLE n (id INT)")
	e.up.AddTable(sessiontest.Table{DB: phys, Name: "n"}) // what the statement did upstream
	if err := s.Executed(e.ctx, p, 0, false); err != nil {
		t.Fatal(err)
	}
	if kind, _, _ := e.tableRow(id, "app", "n"); kind != "created" {
		t.Errorf("created table is %q", kind)
	}

	p = e.mustPlan(s, "DROP TABLE t")
	if _, err := e.up.Exec("DROP TABLE IF EXISTS `" + phys + "`.`t`"); err != nil {
		t.Fatal(err)
	}
	if err := s.Executed(e.ctx, p, 0, false); err != nil {
		t.Fatal(err)
	}
	if kind, _, _ := e.tableRow(id, "app", "t"); kind != "dropped" {
		t.Errorf("dropped table is %q", kind)
	}
	if p := e.mustPlan(s, "SELECT * FROM t"); !strings.Contains(p.SQL, phys) {
		t.Errorf("a dropped table is read from production: %q", p.SQL)
	}

	// A DROP that fails: the sandbox sees the production table again.
	p = e.mustPlan(s, "DROP TABLE u")
	if err := s.Executed(e.ctx, p, 0, true); err != nil {
		t.Fatal(err)
	}
	if kind, _, _ := e.tableRow(id, "app", "u"); kind != "" || e.up.HasTable(phys, "u") {
		t.Errorf("failed DROP left %q in the registry, fork present %v", kind, e.up.HasTable(phys, "u"))
	}
	if p := e.mustPlan(s, "SELECT * FROM u"); p.Flags().Changed {
		t.Errorf("after a failed DROP u is read from %q", p.SQL)
	}
	// A DROP that is never sent: the same.
	p = e.mustPlan(s, "DROP TABLE u")
	s.Abandon(e.ctx, p)
	if kind, _, _ := e.tableRow(id, "app", "u"); kind != "" {
		t.Errorf("abandoned DROP left %q", kind)
	}
}

// TestPlanRefusals: inputs Plan refuses before looking at tables.
func TestPlanRefusals(t *testing.T) {
	e := newEnv(t, session.Config{}, nil)
	s := e.transparent("u")
	if !s.ChangesLexing("SET NAMES latin1; SELECT 1", rewrite.Options{}) || s.ChangesLexing("SELECT 1", rewrite.Options{}) {
		t.Error("ChangesLexing")
	}
	_, err := plan(e.ctx, s, "SET NAMES latin1; SELECT 1")
	wantCode(t, err, 1290, "HY000", "must be sent on its own or last")
	if p := e.mustPlan(s, "SELECT 1; SET NAMES latin1"); !p.Flags().ReadVars || p.Flags().Statements != 2 || p.Class() != "multi" {
		t.Errorf("SET NAMES last: %+v", p)
	}
	if p := e.mustPlan(s, "USE app"); !p.Flags().UseDB {
		t.Error("USE does not ask to read the database back")
	}
	_, err = plan(e.ctx, s, "SELECT * FROM _sqlfork_meta.sandboxes")
	wantCode(t, err, 1044, "42000", "")
	_, err = plan(e.ctx, s, "SHOW ENGINE INNODB STATUS")
	wantCode(t, err, 1290, "HY000", "")
	// SET GLOBAL alone is the sandbox's (integration/globals_test.go);
	// with other statements it is refused.
	_, err = plan(e.ctx, s, "SELECT 1; SET GLOBAL max_connections = 1")
	wantCode(t, err, 1290, "HY000", "SET GLOBAL here (a sandbox keeps the globals")
	_, err = plan(e.ctx, s, "SET @@GLOBAL.keycache1.key_buffer_size = 1")
	wantCode(t, err, 1290, "HY000", "this form of SET GLOBAL")
	_, err = plan(e.ctx, s, "SET GLOBAL sort_buffer_size = (SELECT COUNT(*) FROM app.t)")
	wantCode(t, err, 1290, "HY000", "reads a table")
	_, err = plan(e.ctx, s, "SET GLOBAL sort_buffer_size = f()")
	wantCode(t, err, 1290, "HY000", "may not call")
	_, err = plan(e.ctx, s, "SELECT * FROM information_schema.PROCESSLIST")
	wantCode(t, err, 1290, "HY000", "every connection of the server")
	s.SetVars(session.Vars{SQLMode: "STRICT_TRANS_TABLES,ORACLE", Charset: "utf8mb4"})
	_, err = plan(e.ctx, s, "SELECT 1")
	wantCode(t, err, 1290, "HY000", "sql_mode ORACLE changes how the server reads statements")
	if !strings.Contains(s.VarsQuery(), "tx_isolation") || !strings.Contains(s.VarsFallbackQuery(), "''") {
		t.Errorf("vars queries %q, %q", s.VarsQuery(), s.VarsFallbackQuery())
	}
}

// TestPlanPrepared: a prepared statement is planned against the sandbox's
// state of the moment; when the sandbox changes, the plan is stale and the
// proxy prepares it again.
func TestPlanPrepared(t *testing.T) {
	e := newEnv(t, session.Config{}, nil)
	s := e.transparent("u")
	opts := rewrite.Options{DB: "app"}
	p, err := s.PlanWith(e.ctx, "SELECT COUNT(t.id) FROM t", opts, true)
	if err != nil {
		t.Fatal(err)
	}
	if s.Stale(p.Flags().Version, opts) {
		t.Error("stale at once")
	}
	if s.Classify("SELECT 1") != "read" || p.Class() != "read" {
		t.Errorf("class %s", p.Class())
	}
	e.mustPlan(s, "UPDATE t SET a = 1")
	if !s.Stale(p.Flags().Version, opts) {
		t.Error("not stale after a fork of its table")
	}
	p, err = s.PlanWith(e.ctx, "SELECT COUNT(t.id) FROM t", opts, true)
	if err != nil || !p.Flags().Changed {
		t.Fatalf("%+v, %v", p, err)
	}
	// Expression labels holding a replaced name are told back.
	e.up.AddTable(sessiontest.Table{DB: "app", Name: "seq1", Type: "SEQUENCE", Rows: 1})
	n := e.mustPlan(s, "SELECT NEXTVAL(seq1)")
	phys := "`" + physDB(e.idOf(s), "app") + "`.`seq1`"
	if want := "SELECT NEXTVAL(" + phys + ")"; n.SQL != want {
		t.Errorf("SQL %q, want %q", n.SQL, want)
	}
	if got, ok := n.Label("NEXTVAL(" + phys + ")"); !ok || got != "NEXTVAL(seq1)" {
		t.Errorf("Label = %q, %v", got, ok)
	}
	if _, ok := n.Label("x"); ok {
		t.Error("a label without a replaced name relabelled")
	}
	if !s.Stale(p.Flags().Version, rewrite.Options{DB: "other"}) {
		t.Error("a plan read in another database is not stale")
	}
	w, err := s.PlanWith(e.ctx, "UPDATE t SET a = ?", opts, true)
	if err != nil {
		t.Fatal(err)
	}
	s.AuditExecution(w)
	found := false
	for _, l := range e.logs.All() {
		if l.Message == "sandbox write" && l.ContextMap()["prepared"] == true {
			found = true
			seen := map[string]bool{}
			for _, f := range l.Context {
				if seen[f.Key] {
					t.Errorf("the audit entry has the key %q twice", f.Key)
				}
				seen[f.Key] = true
			}
			if !seen["thread_id"] {
				t.Errorf("the audit entry has no thread_id: %v", l.ContextMap())
			}
		}
	}
	if !found {
		t.Error("no audit entry for the prepared write's execution")
	}
}

// TestPlanNoRestartWithoutReadView: a transaction holds no read view until
// its first plain read, so one that has only written (and read under locks
// for a write) uses a table forked after it began as it is: nothing to restart or
// replay, whoever forked the table. Its next plain read takes a view that
// sees the fork; a fork after that needs a replay again.
func TestPlanNoRestartWithoutReadView(t *testing.T) {
	e := newEnv(t, session.Config{}, func(up *sessiontest.Upstream) {
		up.AddTable(sessiontest.Table{DB: "app", Name: "w", Rows: 1})
	})
	s := e.transparent("u")
	e.run(s, "BEGIN", inTrans)
	e.run(s, "UPDATE t SET a = 1", inTrans)
	e.run(s, "INSERT INTO w (id) SELECT a FROM t", inTrans) // reads t under locks
	if p := e.run(s, "UPDATE u SET t_id = 2", inTrans); p.Flags().Restart || p.Flags().Replay {
		t.Errorf("a write-only transaction meeting its own fork: restart %v, replay %v", p.Flags().Restart, p.Flags().Replay)
	}
	if p := e.run(s, "SELECT * FROM u", inTrans); p.Flags().Restart || p.Flags().Replay {
		t.Errorf("the first plain read after the fork: restart %v, replay %v", p.Flags().Restart, p.Flags().Replay)
	}
	e.up.AddTable(sessiontest.Table{DB: "app", Name: "x", Rows: 1})
	if p := e.mustPlan(s, "DELETE FROM x"); p.Flags().Restart || !p.Flags().Replay {
		t.Errorf("a fork after the read view, in a transaction that wrote: restart %v, replay %v", p.Flags().Restart, p.Flags().Replay)
	}
	e.run(s, "ROLLBACK", 0)

	// START TRANSACTION WITH CONSISTENT SNAPSHOT takes the view at once.
	other := e.transparent("u")
	e.run(other, "START TRANSACTION WITH CONSISTENT SNAPSHOT", inTrans)
	if p := e.mustPlan(other, "UPDATE t SET a = 2"); !p.Flags().Restart {
		t.Errorf("a consistent snapshot meeting a fork is not restarted: %+v", p.Flags())
	}
}

// TestPlanRestartAtFirstWrite: a transaction whose read view is older than
// another connection's fork is restarted at its first write, whatever
// table that write uses, so that meeting the fork later needs no replay.
func TestPlanRestartAtFirstWrite(t *testing.T) {
	e := newEnv(t, session.Config{}, nil)
	s := e.open(session.Options{User: "u", Mode: session.Transparent, Sandbox: "warm"})
	other := e.open(session.Options{User: "u", Mode: session.Transparent, Sandbox: "warm"})
	e.mustPlan(other, "UPDATE t SET a = 1")
	e.run(s, "BEGIN", inTrans)
	e.run(s, "SELECT * FROM t", inTrans) // the read view: after t's fork
	if p := e.mustPlan(s, "UPDATE t SET a = 2"); p.Flags().Restart || p.Flags().Replay {
		t.Fatalf("no fork since the read view, yet %+v", p.Flags())
	}
	e.mustPlan(other, "UPDATE u SET t_id = 1") // a fork after s's read view
	p := e.mustPlan(s, "UPDATE t SET a = 2")
	if !p.Flags().Restart || p.Flags().Replay {
		t.Fatalf("the first write after another connection's fork: %+v", p.Flags())
	}
	s.Restarted(false)
	if err := s.Executed(e.ctx, p, inTrans, false); err != nil {
		t.Fatal(err)
	}
	if p := e.mustPlan(s, "UPDATE u SET t_id = 2"); p.Flags().Restart || p.Flags().Replay {
		t.Errorf("the fork met after the restart: %+v", p.Flags())
	}
}
