package integration

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// TestDiffSeekDBStrategy: with the seekdb fork strategy (FORK TABLE, here
// the emulating shim; a real SeekDB with SQLFORK_TEST_SEEKDB_ADDR), a fork's
// changes are captured as with the copy strategy: DIFF counts them by key,
// EXPORT writes them, and PROMOTE (shim only: it writes production) makes
// production the sandbox's rows.
func TestDiffSeekDBStrategy(t *testing.T) {
	db := leastPrivilegeEnv(t)
	root := openDB(t, db.DSN("")+"?multiStatements=true")
	if _, err := root.Exec(`DROP DATABASE IF EXISTS sdiff; CREATE DATABASE sdiff;
CREATE TABLE sdiff.items (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL, qty INT);
INSERT INTO sdiff.items VALUES (1, 'a', 1), (2, 'b', 2), (3, 'c', 3), (4, 'd', 4);
GRANT SELECT, SHOW VIEW ON sdiff.* TO '` + sandboxUser + `'@'%';`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = root.Exec("DROP DATABASE IF EXISTS sdiff") })
	addr, user, pw, shim := seekdbUpstream(t, db, 100*time.Millisecond)
	real := shim == nil
	h := startTestProxy(t, addr, db, func(c *proxy.Config) {
		c.Mode = "transparent"
		c.UpstreamUser, c.UpstreamPassword = user, pw
		if !real {
			c.PromoteUser, c.PromotePassword = db.User, db.Password
		}
	})
	c := conn(t, openDB(t, fmt.Sprintf("%s:%s@tcp(%s)/sdiff", user, pw, h.addr)))
	mustExecC(t, c, "SANDBOX CREATE seekdiff")
	mustExecC(t, c, "UPDATE items SET qty = 20 WHERE id = 2")
	if s := h.srv.Sandboxes().Strategy(); s != "seekdb" {
		t.Fatalf("strategy %q, want seekdb", s)
	}
	mustExecC(t, c, "INSERT INTO items VALUES (5, 'e', 5)")
	mustExecC(t, c, "DELETE FROM items WHERE id = 3")
	mustExecC(t, c, "UPDATE items SET qty = qty WHERE id = 4") // no change

	got := rowsOf(t, c, "SANDBOX DIFF SUMMARY")
	want := [][]string{{"sdiff.items", "forked", "1", "1", "1", "0", "primary", "capture", "NULL"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("DIFF SUMMARY = %v, want %v", got, want)
	}
	var ops []string
	for _, r := range rowsOf(t, c, "SANDBOX DIFF") {
		ops = append(ops, r[1]+" "+r[2])
	}
	if w := []string{`update {"id": 2}`, `delete {"id": 3}`, `insert {"id": 5}`}; fmt.Sprint(ops) != fmt.Sprint(w) {
		t.Errorf("DIFF ops = %q, want %q", ops, w)
	}
	var stmts []string
	for _, r := range rowsOf(t, c, "SANDBOX EXPORT") {
		stmts = append(stmts, r[0])
	}
	export := strings.Join(stmts, ";\n")
	for _, w := range []string{"INSERT INTO `sdiff`.`items`", "UPDATE `sdiff`.`items` SET `qty` = 20 WHERE `id` = 2",
		"DELETE FROM `sdiff`.`items` WHERE `id` IN (3)"} {
		if !strings.Contains(export, w) {
			t.Errorf("EXPORT lacks %q:\n%s", w, export)
		}
	}
	if real {
		return
	}
	promoteRights(t, openDB(t, db.DSN("")), diffAccount{name: "least-privilege"}, c, "sdiff")
	mustExecC(t, c, "SANDBOX PROMOTE")
	if got, want := allRows(t, root, "SELECT id, name, qty FROM sdiff.items ORDER BY id"), "1 a 1|2 b 20|4 d 4|5 e 5"; got != want {
		t.Errorf("production after PROMOTE: %s, want %s", got, want)
	}
}

// allRows is every row of query on db, columns joined by spaces, rows by |.
func allRows(t *testing.T, db *sql.DB, query string) string {
	t.Helper()
	var out []string
	for _, r := range rowsOf(t, db, query) {
		out = append(out, strings.Join(r, " "))
	}
	return strings.Join(out, "|")
}
