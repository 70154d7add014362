package integration

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// TestPromoteTriggerEchoes: a production trigger on a table the sandbox
// changed writes another table the sandbox changed (its copy in the fork
// wrote that row already): PROMOTE refuses with FAIL and THEIRS, naming the
// trigger, as production would write the row a second time; OURS applies.
func TestPromoteTriggerEchoes(t *testing.T) {
	db, _ := env(t)
	root := openDB(t, db.DSN("")+"?multiStatements=true")
	if _, err := root.Exec(`DROP DATABASE IF EXISTS pecho; CREATE DATABASE pecho;
CREATE TABLE pecho.acct (id INT PRIMARY KEY, balance INT NOT NULL);
CREATE TABLE pecho.audit (id INT AUTO_INCREMENT PRIMARY KEY, acct INT NOT NULL, delta INT NOT NULL);
INSERT INTO pecho.acct VALUES (1, 100), (2, 50);
CREATE TRIGGER pecho.acct_au AFTER UPDATE ON pecho.acct FOR EACH ROW INSERT INTO pecho.audit (acct, delta) VALUES (NEW.id, NEW.balance - OLD.balance);`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = root.Exec("DROP DATABASE IF EXISTS pecho") })
	// An account that sees production's triggers (the fork carries them).
	h := startTestProxy(t, db.Addr, db, func(c *proxy.Config) {
		c.Mode = "transparent"
		c.UpstreamUser, c.UpstreamPassword = db.User, db.Password
		c.PromoteUser, c.PromotePassword = db.User, db.Password
	})
	c := conn(t, openDB(t, fmt.Sprintf("%s:%s@tcp(%s)/pecho", db.User, db.Password, h.addr)))
	mustExecC(t, c, "UPDATE acct SET balance = 90 WHERE id = 1")
	if got := queryString(t, c, "SELECT COUNT(*) FROM audit"); got != "1" {
		t.Fatalf("the fork's copy of the trigger wrote %s audit rows, want 1", got)
	}
	for _, s := range []string{"FAIL", "THEIRS"} {
		_, err := c.ExecContext(t.Context(), "SANDBOX PROMOTE STRATEGY "+s)
		if err == nil || !strings.Contains(err.Error(), "trigger `acct_au` on pecho.acct writes pecho.audit") || !strings.Contains(err.Error(), "1105") {
			t.Errorf("PROMOTE %s: %v, want 1105 naming the trigger", s, err)
		}
	}
	if got := allRows(t, root, "SELECT id, balance FROM pecho.acct ORDER BY id"); got != "1 100|2 50" {
		t.Errorf("production changed by a refused PROMOTE: %s", got)
	}
	mustExecC(t, c, "SANDBOX PROMOTE STRATEGY OURS")
	if got := allRows(t, root, "SELECT id, balance FROM pecho.acct ORDER BY id"); got != "1 90|2 50" {
		t.Errorf("production after PROMOTE OURS: %s", got)
	}
	// The sandbox's audit row, and the one production's trigger wrote again.
	if got := allRows(t, root, "SELECT acct, delta FROM pecho.audit ORDER BY id"); got != "1 -10|1 -10" {
		t.Errorf("production's audit after PROMOTE OURS: %s", got)
	}
}
