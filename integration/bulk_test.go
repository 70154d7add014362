package integration

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// TestBulkExecuteAsDirect (issue 13): the proxy offers MariaDB's bulk
// operations as the server does, so Connector/J sends its batches as
// COM_STMT_BULK_EXECUTE through it as directly (its batch inserts), and
// they do what they do directly: a batch insert that forks its table, one
// inside a committed transaction after another table's fork made the proxy
// prepare the statement again, a batch that fails on a duplicate key; its
// other batches (prepared executions) too. In
// passthrough mode, and in a sandbox with the SELECT-only and the ALL
// PRIVILEGES upstream account; production's copy stays as it was.
func TestBulkExecuteAsDirect(t *testing.T) {
	cp := requireConnectorJ(t, "clients/Bulk.java")
	db := leastPrivilegeEnv(t)
	root := openDB(t, db.DSN("")+"?multiStatements=true")
	seed := func(name string) {
		mustExecDB(t, root, fmt.Sprintf(`DROP DATABASE IF EXISTS %[1]s; CREATE DATABASE %[1]s;
CREATE TABLE %[1]s.bk_items (k INT PRIMARY KEY, v VARCHAR(20));
CREATE TABLE %[1]s.bk_keys (k INT PRIMARY KEY); CREATE TABLE %[1]s.bk_other (k INT PRIMARY KEY);
INSERT INTO %[1]s.bk_items VALUES (1, 'a'), (2, 'b'); INSERT INTO %[1]s.bk_keys VALUES (1);
GRANT SELECT ON %[1]s.* TO '%[2]s'@'%%'`, name, sandboxUser))
		t.Cleanup(func() { _, _ = root.Exec("DROP DATABASE IF EXISTS " + name) })
	}
	contents := func(name string) string {
		var s string
		if err := root.QueryRow(fmt.Sprintf("SELECT CONCAT((SELECT GROUP_CONCAT(k, ':', IFNULL(v, '-') ORDER BY k) FROM %[1]s.bk_items), "+
			"' / ', (SELECT GROUP_CONCAT(k ORDER BY k) FROM %[1]s.bk_keys))", name)).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	run := func(addr, user, password, name string) string {
		url := "jdbc:mariadb://" + addr + "/" + name + "?useServerPrepStmts=true&useBulkStmts=true"
		return runWorkload(t, "java", "-cp", cp, "Bulk", url, user, password)
	}
	seed("bk_direct")
	want := run(db.Addr, db.User, db.Password, "bk_direct")
	for _, line := range []string{"row 11 null", "row 12 v12", "row 41 sel0", "row 60 sel1", "row 21 tx21", "row 10 u1-10", "duplicate batch: 1062 23000 clean"} {
		if !strings.Contains(want, line) {
			t.Fatalf("directly, no %q in:\n%s", line, want)
		}
	}
	const seeded = "1:a,2:b / 1"
	cases := []struct {
		name, mode     string
		leastPrivilege bool
	}{
		{"passthrough", "passthrough", false},
		{"sandbox, SELECT-only account", "transparent", true},
		{"sandbox, ALL PRIVILEGES account", "transparent", false},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := fmt.Sprintf("bk_%d", i)
			seed(name)
			var h *proxyHandle
			user, password := db.User, db.Password
			if c.leastPrivilege {
				_, h = sandboxProxy(t, c.mode, nil)
				user, password = sandboxUser, sandboxPassword
			} else {
				h = startTestProxy(t, db.Addr, db, func(cfg *proxy.Config) { cfg.Mode = c.mode })
			}
			got := strings.ReplaceAll(run(h.addr, user, password, name), name, "bk_direct")
			if got != want {
				t.Errorf("through the proxy:\n%s\ndirectly:\n%s", got, want)
			}
			if n := h.metric(t, "sqlfork_commands_total", map[string]string{"command": "stmt_bulk_execute"}); n < 3 {
				t.Errorf("%v COM_STMT_BULK_EXECUTE through the proxy, want at least 3 (the batch inserts); transcript:\n%s", n, got)
			}
			if c.mode == "passthrough" {
				return
			}
			if got := contents(name); got != seeded {
				t.Errorf("production's %s changed: %s, want %s", name, got, seeded)
			}
		})
	}
}
