package integration

import (
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// TestSandboxChanges: SANDBOX STATUS, LIST and the registry's gauge say
// whether a sandbox holds changes production does not have. A sandbox
// that has not written has none; a write makes them unpromoted; a promote
// FOR one table, or one that keeps production's values in conflicts
// (THEIRS), leaves them unpromoted; a promote that leaves the diff empty
// makes them promoted, until the next write; a RESET gives them back
// (none). STATUS has one set of columns on production and in a sandbox,
// and counts a table's rows as they are now, not at its fork.
func TestSandboxChanges(t *testing.T) {
	prod, _ := env(t)
	e := newDiffEnv(t, "explicit", false, func(c *proxy.Config) { c.PromoteUser, c.PromotePassword = prod.User, prod.Password })
	root := openDB(t, prod.DSN(""))
	const schema = "CREATE TABLE t (id INT PRIMARY KEY, a INT); INSERT INTO t VALUES (1, 1), (2, 2), (3, 3);" +
		"CREATE TABLE u (id INT PRIMARY KEY, b INT); INSERT INTO u VALUES (1, 1), (2, 2);"
	for _, acct := range e.accts {
		t.Run(acct.name, func(t *testing.T) {
			db := "chg_" + acct.short()
			e.database(t, db, schema)
			sc := conn(t, openDB(t, acct.dsn("", db)))
			cols, rows := queryRows(t, sc, "SANDBOX STATUS")
			if len(rows) != 1 || rows[0][2].String != "production" || !slices.Equal(cols, changesStatusColumns) {
				t.Fatalf("STATUS on production: %v %v", cols, rows)
			}
			mustExecC(t, sc, "SANDBOX CREATE "+db)
			wantChanges(t, sc, db, "none", false)
			mustExecC(t, sc, "UPDATE t SET a = 10 WHERE id = 1")
			mustExecC(t, sc, "INSERT INTO t VALUES (4, 4), (5, 5)")
			wantChanges(t, sc, db, "unpromoted", false)
			// A lazy fork (SQLFORK_TEST_LAZY_FORK_ROWS) still filling shows
			// production's estimate at its fork: a count waits for the copy.
			wantString(t, sc, "SELECT COUNT(*) FROM t", "5", "rows of t: %s")
			if n := statusRows(t, sc)[db+".t"]; n != "5" {
				t.Errorf("STATUS table_rows of t: %s, want 5 (3 at its fork, 2 inserted)", n)
			}
			mustExecC(t, sc, "UPDATE u SET b = 20 WHERE id = 1")
			mustExecC(t, sc, "SANDBOX KEEP")
			promoteRights(t, root, acct, sc, db)
			mustExecC(t, sc, "SANDBOX PROMOTE FOR "+db+".t")
			wantChanges(t, sc, db, "unpromoted", true) // u is not promoted
			mustExecC(t, sc, "SANDBOX PROMOTE")
			wantChanges(t, sc, db, "promoted", true)
			wantRegistryGauge(t, acct.h, "kept", "promoted")
			mustExecC(t, sc, "UPDATE u SET b = 30 WHERE id = 2")
			wantChanges(t, sc, db, "unpromoted", true)
			// Production changes the same cell: THEIRS keeps production's
			// value, and the sandbox's change is still not production's.
			mustExecDB(t, root, "UPDATE `"+db+"`.u SET b = 31 WHERE id = 2")
			mustExecC(t, sc, "SANDBOX PROMOTE STRATEGY THEIRS")
			wantChanges(t, sc, db, "unpromoted", true)
			wantRegistryGauge(t, acct.h, "kept", "unpromoted")
			mustExecC(t, sc, "SANDBOX RESET")
			wantChanges(t, sc, db, "none", true)
			mustExecC(t, sc, "SANDBOX DISCARD")
		})
	}
}

// changesStatusColumns are SANDBOX STATUS's columns.
var changesStatusColumns = []string{"sandbox_id", "name", "state", "mode", "owner", "created", "expires", "connections", "changes", "promoted",
	"table_name", "table_state", "table_rows", "table_bytes"}

// wantChanges checks what STATUS and LIST say the sandbox called name
// holds that production does not, and whether it was ever promoted.
func wantChanges(t *testing.T, sc *sql.Conn, name, changes string, promoted bool) {
	t.Helper()
	cols, rows := queryRows(t, sc, "SANDBOX STATUS")
	if !slices.Equal(cols, changesStatusColumns) || len(rows) == 0 {
		t.Fatalf("STATUS: %v, %d rows", cols, len(rows))
	}
	if got := rows[0][8].String; got != changes || rows[0][9].Valid != promoted {
		t.Errorf("STATUS changes %q, promoted %v; want %q, promoted %v", got, rows[0][9], changes, promoted)
	}
	cols, rows = queryRows(t, sc, "SANDBOX LIST")
	i := slices.Index(cols, "changes")
	for _, r := range rows {
		if r[1].String == name && (i < 0 || r[i].String != changes || r[i+1].Valid != promoted) {
			t.Errorf("LIST %v: %v, want changes %q, promoted %v", cols, r, changes, promoted)
		}
	}
}

// statusRows are STATUS's table_rows by table.
func statusRows(t *testing.T, sc *sql.Conn) map[string]string {
	t.Helper()
	_, rows := queryRows(t, sc, "SANDBOX STATUS")
	out := map[string]string{}
	for _, r := range rows {
		out[r[10].String] = r[12].String
	}
	return out
}

// wantRegistryGauge waits for the proxy's reaper to count at least one
// sandbox of state and changes in sqlfork_registry_sandboxes (it counts at
// every round; the test's reap interval is short).
func wantRegistryGauge(t *testing.T, h *proxyHandle, state, changes string) {
	t.Helper()
	labels := map[string]string{"state": state, "changes": changes}
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if h.metric(t, "sqlfork_registry_sandboxes", labels) >= 1 {
			return
		}
	}
	t.Errorf("sqlfork_registry_sandboxes%s never counted a sandbox", strings.ReplaceAll(fmt.Sprint(labels), "map", ""))
}
