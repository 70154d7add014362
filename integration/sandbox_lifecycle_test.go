package integration

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/sqlfork/sqlfork-proxy/integration/testdb"
	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// TestSandboxForkTableShapes forks tables of the shapes the copy strategy
// must handle: no primary key, generated columns, a foreign key, a
// trigger (MariaDB shows triggers only to accounts with the TRIGGER
// privilege, so this schema grants it; see docs/SANDBOXES.md), a very long
// database name; and refuses a system-versioned one.
func TestSandboxForkTableShapes(t *testing.T) {
	db, h := sandboxProxy(t, "transparent", nil)
	longDB := "shapes_" + strings.Repeat("x", 57) // 64 characters
	root := openDB(t, db.DSN("")+"?multiStatements=true")
	if _, err := root.Exec(fmt.Sprintf(`
DROP DATABASE IF EXISTS shapes; CREATE DATABASE shapes;
CREATE TABLE shapes.nopk (a INT, b VARCHAR(10));
INSERT INTO shapes.nopk VALUES (1,'x'),(1,'x'),(2,NULL);
CREATE TABLE shapes.gen (id INT PRIMARY KEY AUTO_INCREMENT, price INT, qty INT,
  total INT AS (price * qty) STORED, label VARCHAR(20) AS (CONCAT('n', id)) VIRTUAL, KEY (total));
INSERT INTO shapes.gen (price, qty) VALUES (2,3),(5,5);
CREATE TABLE shapes.parent (id INT PRIMARY KEY);
CREATE TABLE shapes.child (id INT PRIMARY KEY, parent_id INT, FOREIGN KEY (parent_id) REFERENCES shapes.parent(id));
INSERT INTO shapes.parent VALUES (1); INSERT INTO shapes.child VALUES (1, 1);
CREATE TABLE shapes.trig (id INT PRIMARY KEY, n INT);
CREATE TRIGGER shapes.trig_bi BEFORE INSERT ON shapes.trig FOR EACH ROW SET NEW.n = 42;
CREATE TABLE shapes.sv (id INT PRIMARY KEY) WITH SYSTEM VERSIONING;
DROP DATABASE IF EXISTS %[1]s; CREATE DATABASE %[1]s; CREATE TABLE %[1]s.t (id INT PRIMARY KEY); INSERT INTO %[1]s.t VALUES (1);
GRANT SELECT, TRIGGER ON shapes.* TO '%[2]s'@'%%'; GRANT SELECT ON %[1]s.* TO '%[2]s'@'%%';`, longDB, sandboxUser)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = root.Exec("DROP DATABASE IF EXISTS shapes; DROP DATABASE IF EXISTS " + longDB) })
	c := conn(t, openDB(t, h.userDSN(sandboxUser, "shapes")))

	mustExecC(t, c, "INSERT INTO nopk VALUES (3, 'y')")
	wantString(t, c, "SELECT COUNT(*) FROM nopk", "4", "table without a primary key: %s rows in the fork, want 4 (duplicates kept)")
	mustExecC(t, c, "INSERT INTO gen (price, qty) VALUES (10, 10)")
	wantString(t, c, "SELECT GROUP_CONCAT(total ORDER BY id) FROM gen", "6,25,100", "generated columns: totals %q, want 6,25,100")
	wantString(t, c, "SELECT label FROM gen WHERE id = 3", "n3", "virtual column: %q")
	// The fork of a child table keeps its foreign key, to the fork of its
	// parent (forked with it): an orphan is refused as directly.
	_, err := c.ExecContext(context.Background(), "INSERT INTO child VALUES (2, 99)")
	if e := mysqlErr(err); !strings.HasPrefix(e, "1452") || strings.Contains(e, "_sqlfork") {
		t.Errorf("orphan child row: %s, want 1452 naming logical tables", e)
	}
	mustExecC(t, c, "INSERT INTO child VALUES (2, 1)")
	// The fork carries the trigger.
	mustExecC(t, c, "INSERT INTO trig VALUES (1, 0)")
	wantString(t, c, "SELECT n FROM trig WHERE id = 1", "42", "table with a trigger: n = %s in the fork, want the trigger's 42")
	_, err = c.ExecContext(context.Background(), "INSERT INTO sv VALUES (1)")
	if e := mysqlErr(err); !strings.HasPrefix(e, "1105") || !strings.Contains(e, "system-versioned") {
		t.Errorf("system-versioned table: %s, want 1105 saying why", e)
	}
	if n := h.metric(t, "sqlfork_fork_failures_total", map[string]string{"strategy": "copy", "result": "refused"}); n != 1 {
		t.Errorf("sqlfork_fork_failures_total{result=refused} = %v, want 1", n)
	}
	mustExecC(t, c, "UPDATE `"+longDB+"`.t SET id = 2")
	wantString(t, c, "SELECT id FROM `"+longDB+"`.t", "2", "long database name: %q")
	var longest int
	if err := root.QueryRow("SELECT MAX(LENGTH(SCHEMA_NAME)) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE '\\_sqlfork\\_%'").Scan(&longest); err != nil || longest > 64 {
		t.Errorf("sandbox schema names up to %d characters (%v)", longest, err)
	}
	for q, want := range map[string]string{"SELECT COUNT(*) FROM shapes.nopk": "3", "SELECT COUNT(*) FROM shapes.gen": "2",
		"SELECT COUNT(*) FROM shapes.child": "1", "SELECT id FROM `" + longDB + "`.t": "1"} {
		if got := queryString(t, root, q); got != want {
			t.Errorf("production changed: %s = %s, want %s", q, got, want)
		}
	}
}

// TestSandboxLimits: --max-sandboxes and --max-fork-bytes refuse with
// clear errors.
func TestSandboxLimits(t *testing.T) {
	_, h := sandboxProxy(t, "transparent", func(c *proxy.Config) {
		c.Sandbox.MaxSandboxes = 2
		c.Sandbox.Guardrails.MaxForkBytes = 1 // any real table is bigger
	})
	pool := openDB(t, h.userDSN(sandboxUser, "app"))
	c1, c2 := conn(t, pool), conn(t, pool)
	_, err := c1.ExecContext(context.Background(), "UPDATE users SET score = 1")
	if e := mysqlErr(err); !strings.HasPrefix(e, "1114") || !strings.Contains(e, "max-fork-bytes") {
		t.Errorf("fork past the byte limit: %s", e)
	}
	_ = c2
	_, err = pool.Conn(context.Background())
	if e := mysqlErr(err); !strings.HasPrefix(e, "1040") || !strings.Contains(e, "max-sandboxes") {
		t.Errorf("third sandbox: %s", e)
	}
}

// TestSandboxExpiryAndReconcile: a kept sandbox past its TTL is dropped by
// the reaper; at start the proxy drops databases and tables of sandboxes
// the registry does not know (a crash mid-fork), never anything else.
func TestSandboxExpiryAndReconcile(t *testing.T) {
	db, h := sandboxProxy(t, "explicit", nil)
	root := openDB(t, db.DSN("")+"?multiStatements=true")
	c := h.appConn(t)
	mustExecC(t, c, "SANDBOX CREATE shortlived TTL 1s")
	mustExecC(t, c, "UPDATE users SET score = 5 WHERE id = 2")
	mustExecC(t, c, "SANDBOX DETACH")
	testkit.Eventually(t, "the expired sandbox to be dropped", func() bool {
		var n int
		_ = root.QueryRow("SELECT COUNT(*) FROM _sqlfork_meta.sandboxes WHERE name = 'shortlived'").Scan(&n)
		return n == 0 && len(sandboxSchemas(t, root)) == 0
	})

	// Leftovers of a crash, and a look-alike that is not ours.
	if _, err := root.Exec(`CREATE DATABASE _sqlfork_deadbeef_app; CREATE TABLE _sqlfork_deadbeef_app.users (id INT);
CREATE DATABASE IF NOT EXISTS _sqlfork_notanid_app; CREATE TABLE IF NOT EXISTS _sqlfork_notanid_app.keep (id INT);`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = root.Exec("DROP DATABASE IF EXISTS _sqlfork_notanid_app") })
	h2 := startTestProxy(t, db.Addr, db, func(c *proxy.Config) {
		c.Mode = "transparent"
		c.UpstreamUser, c.UpstreamPassword = sandboxUser, sandboxPassword
	})
	if _, err := openDB(t, h2.userDSN(sandboxUser, "app")).Exec("SELECT 1"); err != nil { // starts the manager
		t.Fatal(err)
	}
	wantString(t, root, "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = '_sqlfork_deadbeef_app'", "0", "orphaned sandbox database survived reconciliation: %s left")
	wantString(t, root, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = '_sqlfork_notanid_app'", "1", "reconciliation dropped a database that is not a sandbox's: %s tables left, want 1")
}

// TestSandboxOwnershipAndAudit: other users cannot see, attach or discard
// a sandbox; admins can; writes in a sandbox are audited.
func TestSandboxOwnershipAndAudit(t *testing.T) {
	db := leastPrivilegeEnv(t)
	core, logs := observer.New(zap.InfoLevel)
	h, err := startProxyLogging(db.Addr, db, func(c *proxy.Config) {
		c.Mode = "explicit"
		c.UpstreamUser, c.UpstreamPassword = sandboxUser, sandboxPassword
		c.Users = []proxy.User{{Name: "other", Password: sandboxPassword}, {Name: "boss", Password: sandboxPassword}}
		c.Sandbox.Admins = []string{"boss"}
	}, zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.stop)
	owner := h.appConn(t)
	mustExecC(t, owner, "SANDBOX CREATE mine TTL 1h")
	mustExecC(t, owner, "UPDATE users SET score = 1 WHERE id = 3")
	// A prepared write is audited at each execution, not once at prepare.
	st, err := owner.PrepareContext(context.Background(), "UPDATE users SET score = ? WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []int{5, 6, 1} {
		if _, err := st.Exec(v, 3); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	other := conn(t, openDB(t, h.userDSN("other", "app")))
	for _, q := range []string{"SANDBOX ATTACH mine", "SANDBOX DISCARD mine"} {
		_, err := other.ExecContext(context.Background(), q)
		if e := mysqlErr(err); !strings.HasPrefix(e, "1105") || !strings.Contains(e, "no sandbox named") {
			t.Errorf("other user, %s: %s", q, e)
		}
	}
	if got := queryString(t, other, "SELECT COUNT(*) FROM (SELECT 1) x"); got != "1" {
		t.Fatal(got)
	}
	rows, err := other.QueryContext(context.Background(), "SANDBOX LIST")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		t.Error("another user's SANDBOX LIST shows a sandbox")
	}
	rows.Close()
	if _, err := sql.Open("mysql", h.userDSN("other+mine", "app")); err != nil {
		t.Fatal(err)
	}
	if _, err := openDB(t, h.userDSN("other+mine", "app")).Exec("SELECT 1"); !strings.Contains(mysqlErr(err), "no sandbox named") {
		t.Errorf("other user tagging into the sandbox: %s", mysqlErr(err))
	}
	boss := conn(t, openDB(t, h.userDSN("boss", "app")))
	mustExecC(t, boss, "SANDBOX ATTACH mine")
	wantString(t, boss, "SELECT score FROM users WHERE id = 3", "1.00", "admin in the sandbox reads %q")
	mustExecC(t, boss, "SANDBOX DISCARD mine")

	audits := logs.FilterField(zap.String("audit", "write")).All()
	if len(audits) != 4 {
		t.Fatalf("%d audit records, want 4 (a statement, a prepared one executed 3 times)", len(audits))
	}
	for i, a := range audits {
		if got, want := a.ContextMap()["prepared"], i > 0; got != want {
			t.Errorf("audit record %d: prepared = %v, want %v", i, got, want)
		}
	}
	f := audits[0].ContextMap()
	if f["sandbox"] != "mine" || f["user"] != sandboxUser || !strings.Contains(fmt.Sprint(f["tables"]), "app.users") ||
		!strings.Contains(fmt.Sprint(f["physical"]), "_sqlfork_") {
		t.Errorf("audit record %v", f)
	}
}

// TestSandboxLowerCaseTableNames runs a sandbox on a MariaDB with
// lower_case_table_names=1, where the server folds names: any spelling of a
// table is one fork, and the reaper (1 s here) keeps it.
func TestSandboxLowerCaseTableNames(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	db := testdb.StartForTest(ctx, t, testdb.Options{ExtraArgs: []string{"--lower-case-table-names=1"}})
	root := openDB(t, db.DSN("")+"?multiStatements=true")
	if _, err := root.Exec("CREATE DATABASE Shop; CREATE TABLE Shop.Items (id INT PRIMARY KEY, n INT); INSERT INTO Shop.Items VALUES (1, 1)"); err != nil {
		t.Fatal(err)
	}
	h := startTestProxy(t, db.Addr, db, func(c *proxy.Config) {
		c.Mode = "transparent"
		c.Sandbox.ReapInterval = time.Second
	})
	c := conn(t, openDB(t, h.dsn("Shop")))
	mustExecC(t, c, "UPDATE Items SET n = 2")
	mustExecC(t, c, "UPDATE shop.items SET n = n + 1")
	mustExecC(t, c, "UPDATE SHOP.ITEMS SET n = n + 1")
	if n := h.srv.Sandboxes().Forks(); n != 1 {
		t.Errorf("three spellings forked %d times, want once", n)
	}
	h.awaitReaps(t, 2)
	wantString(t, c, "SELECT n FROM Items", "4", "the sandbox reads n=%s, want 4 (the fork kept across reaper rounds)")
	wantString(t, root, "SELECT n FROM Shop.Items", "1", "production changed: n=%s")
}

// awaitReaps returns once the proxy's sandbox reaper has finished n more
// rounds (its sandbox manager runs).
func (h *proxyHandle) awaitReaps(t *testing.T, n int64) {
	t.Helper()
	m := h.srv.Sandboxes()
	if m == nil {
		t.Fatal("the proxy runs no sandbox manager")
	}
	from := m.Reaps()
	testkit.Eventually(t, fmt.Sprintf("%d rounds of the reaper", n), func() bool { return m.Reaps() >= from+n })
}
