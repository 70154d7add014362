package session_test

import (
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/session"
	"github.com/sqlfork/sqlfork-proxy/session/sessiontest"
)

// withTriggers adds app.x, a production table with two triggers (x_trg0,
// x_trg1).
func withTriggers(up *sessiontest.Upstream) {
	up.AddTable(sessiontest.Table{DB: "app", Name: "x", Triggers: 2})
}

// TestCreateTriggerPlanned: CREATE TRIGGER in a sandbox forks its table
// and every table its body names first, and is sent with the trigger in
// the sandbox's database, on the fork, its body naming the forks, and
// DEFINER = CURRENT_USER in place of the client's definer.
func TestCreateTriggerPlanned(t *testing.T) {
	e := newEnv(t, session.Config{}, withTriggers)
	s, id, db := e.transparentApp()
	p := e.mustPlan(s, "CREATE DEFINER = root@localhost TRIGGER t_ai AFTER INSERT ON t FOR EACH ROW INSERT INTO x VALUES (NEW.id)")
	if want := "CREATE DEFINER = CURRENT_USER TRIGGER " + db + ".`t_ai` AFTER INSERT ON " + db + ".`t` FOR EACH ROW INSERT INTO " +
		db + ".`x` VALUES (NEW.id)"; p.SQL != want {
		t.Errorf("SQL %q, want %q", p.SQL, want)
	}
	for _, tbl := range []string{"t", "x"} {
		if kind, _, _ := e.tableRow(id, "app", tbl); kind != "fork" {
			t.Errorf("registry row of %s: %q, want fork", tbl, kind)
		}
	}
	// A table the sandbox created is used as it is.
	e.mustPlan(s, "CREATE TABLE mine (id INT)")
	if p := e.mustPlan(s, "CREATE TRIGGER m_bi BEFORE INSERT ON mine FOR EACH ROW SET NEW.id = 1"); p.SQL !=
		"CREATE TRIGGER "+db+".`m_bi` BEFORE INSERT ON "+db+".`mine` FOR EACH ROW SET NEW.id = 1" {
		t.Errorf("SQL %q", p.SQL)
	}
	// With other statements in one input: each trigger made as when sent
	// alone, the body that is one statement ending at its ';'.
	if p := e.mustPlan(s, "DROP TRIGGER IF EXISTS m_bi; CREATE TRIGGER m_bi BEFORE INSERT ON mine FOR EACH ROW SET NEW.id = 2;SELECT 2"); p.SQL !=
		"DROP TRIGGER IF EXISTS "+db+".`m_bi`; CREATE TRIGGER "+db+".`m_bi` BEFORE INSERT ON "+db+".`mine` FOR EACH ROW SET NEW.id = 2;SELECT 2" {
		t.Errorf("SQL %q", p.SQL)
	}
}

// TestDropTriggerPlanned: DROP TRIGGER of a production trigger forks its
// table (with the trigger's copy) and drops the copy; SHOW CREATE TRIGGER
// shows production's trigger until then, the sandbox's after.
func TestDropTriggerPlanned(t *testing.T) {
	e := newEnv(t, session.Config{}, withTriggers)
	s, id, db := e.transparentApp()
	if p := e.mustPlan(s, "SHOW CREATE TRIGGER x_trg1"); p.SQL != "SHOW CREATE TRIGGER x_trg1" {
		t.Errorf("SHOW CREATE TRIGGER of production's trigger sent as %q", p.SQL)
	}
	if kind, _, _ := e.tableRow(id, "app", "x"); kind != "" {
		t.Errorf("SHOW CREATE TRIGGER forked x (%q)", kind)
	}
	if p := e.mustPlan(s, "DROP TRIGGER IF EXISTS app.x_trg0"); p.SQL != "DROP TRIGGER IF EXISTS "+db+".`x_trg0`" {
		t.Errorf("SQL %q", p.SQL)
	}
	if kind, _, _ := e.tableRow(id, "app", "x"); kind != "fork" {
		t.Errorf("registry row of x: %q, want fork", kind)
	}
	if p := e.mustPlan(s, "SHOW CREATE TRIGGER x_trg1"); p.SQL != "SHOW CREATE TRIGGER "+db+".`x_trg1`" {
		t.Errorf("SHOW CREATE TRIGGER of the sandbox's copy sent as %q", p.SQL)
	}
	// A trigger neither has: the sandbox's database, where the server says
	// it does not exist.
	if p := e.mustPlan(s, "DROP TRIGGER nosuch"); p.SQL != "DROP TRIGGER "+db+".`nosuch`" {
		t.Errorf("SQL %q", p.SQL)
	}
}

// TestTriggerDDLRefused: trigger statements a sandbox cannot hold are
// refused before anything is forked, with the reason, or with the server's
// own error where it refuses them too.
func TestTriggerDDLRefused(t *testing.T) {
	e := newEnv(t, session.Config{}, withTriggers)
	s := e.transparent("u")
	id := e.idOf(s)
	for _, c := range []struct {
		sql, state, msg string
		code            uint16
	}{
		{"CREATE TRIGGER r AFTER INSERT ON t FOR EACH ROW SET @x = LOAD_FILE('/etc/passwd')", "HY000", "reads a file on the database server", 1290},
		{"CREATE TRIGGER r AFTER INSERT ON t FOR EACH ROW INSERT INTO u SELECT COUNT(*) FROM information_schema.TABLES", "HY000",
			"reads information_schema", 1290},
		{"CREATE TRIGGER r AFTER INSERT ON t FOR EACH ROW BEGIN SHOW TABLES; END", "HY000", "SHOW", 1290},
		{"SELECT 1; CREATE TRIGGER r AFTER INSERT ON t FOR EACH ROW INSERT INTO u VALUES (1) junk; DELETE FROM u", "HY000", "CREATE TRIGGER", 1290},
		{"CREATE TRIGGER r AFTER INSERT ON mysql.user FOR EACH ROW SET @a = 1", "HY000", "Triggers can not be created on system tables", 1465},
	} {
		_, err := plan(e.ctx, s, c.sql)
		wantCode(t, err, c.code, c.state, c.msg)
	}
	for _, tbl := range []string{"t", "u", "x"} {
		if kind, _, _ := e.tableRow(id, "app", tbl); kind != "" {
			t.Errorf("a refused trigger forked %s (%q)", tbl, kind)
		}
	}
	// No database: the server's 1046.
	_, err := s.PlanWith(e.ctx, "DROP TRIGGER x_trg0", rewrite.Options{}, false)
	wantCode(t, err, 1046, "3D000", "No database selected")
}
