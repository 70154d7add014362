package integration

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// TestDiffCapturesCascades: rows a foreign key's action changes (ON DELETE
// CASCADE, ON DELETE SET NULL, ON UPDATE CASCADE) fire no trigger; the
// capture's triggers on the parents' forks keep their images, so the
// children are diffed by their captured rows (method capture), the counts
// are the cascades', the export gives production the sandbox's tables, and
// PROMOTE sees a conflict on a cascaded row.
func TestDiffCapturesCascades(t *testing.T) {
	db, _ := env(t)
	e := newDiffEnv(t, "transparent", true, func(c *proxy.Config) { c.PromoteUser, c.PromotePassword = db.User, db.Password })
	replicaRoot := openDB(t, e.replica.DSN(""))
	root := openDB(t, db.DSN(""))
	const schema = `CREATE TABLE parent (id INT PRIMARY KEY, code INT NOT NULL UNIQUE, name VARCHAR(20));
CREATE TABLE items (id INT PRIMARY KEY, parent_id INT, qty INT, FOREIGN KEY (parent_id) REFERENCES parent (id) ON DELETE CASCADE);
CREATE TABLE notes (id INT PRIMARY KEY, parent_code INT, body VARCHAR(20),
  FOREIGN KEY (parent_code) REFERENCES parent (code) ON DELETE SET NULL ON UPDATE CASCADE);
INSERT INTO parent VALUES (1, 10, 'a'), (2, 20, 'b'), (3, 30, 'c');
INSERT INTO items VALUES (1, 1, 1), (2, 1, 2), (3, 2, 3), (4, 3, 4);
INSERT INTO notes VALUES (1, 10, 'x'), (2, 20, 'y'), (3, 30, 'z');`
	for _, acct := range e.accts {
		t.Run(acct.name, func(t *testing.T) {
			name := "drvcas_" + acct.short()
			e.database(t, name, schema)
			sb := conn(t, openDB(t, acct.dsn("", name)))
			mustExecC(t, sb, "DELETE FROM parent WHERE id = 1")          // cascades: items 1, 2 deleted; notes 1 parent_code NULL
			mustExecC(t, sb, "UPDATE parent SET code = 21 WHERE id = 2") // cascades: notes 2 parent_code 21
			mustExecC(t, sb, "UPDATE items SET qty = 30 WHERE id = 3")
			sum := diffSummary(t, sb, "SANDBOX DIFF SUMMARY")
			for table, want := range map[string]string{
				"parent": "capture 0 1 1", "items": "capture 0 1 2", "notes": "capture 0 2 0",
			} {
				got := sum[name+"."+table]
				if s := fmt.Sprintf("%s %d %d %d", got.method, got.ins, got.upd, got.del); s != want {
					t.Errorf("DIFF SUMMARY %s: %s (%+v), want %s", table, s, got, want)
				}
			}
			stmts := sandboxExport(t, sb, "SANDBOX EXPORT")
			applyExport(t, e.replica, stmts)
			compareWithReplica(t, sb, replicaRoot, name, []string{"items", "notes", "parent"}, "export")
			if t.Failed() {
				t.Logf("export:\n%s", strings.Join(stmts, ";\n"))
			}
			// Production changed a row the cascade deleted in the sandbox.
			mustExecDB(t, root, "UPDATE `"+name+"`.items SET qty = 99 WHERE id = 2")
			promoteRights(t, root, acct, sb, name)
			if _, err := sb.ExecContext(t.Context(), "SANDBOX PROMOTE"); err == nil || !strings.Contains(err.Error(), `items {"id": 2}`) {
				t.Errorf("PROMOTE: %v, want the conflict on items 2 refused", err)
			}
			// DDL of the child drops the capture of its cascades; later
			// deletes of the parent still work.
			mustExecC(t, sb, "ALTER TABLE items ADD COLUMN extra INT")
			mustExecC(t, sb, "DELETE FROM parent WHERE id = 3")
			if got := diffSummary(t, sb, "SANDBOX DIFF SUMMARY")[name+".items"]; got.method != "compare" {
				t.Errorf("items after its ALTER: %+v, want compared whole", got)
			}
		})
	}
}
