package integration

import (
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
)

// TestAdminReviewLoopCLI: the review loop through the CLI alone. `sandbox
// create` makes a kept sandbox for a proxy user, which outlives the
// reaper's letting go of it; `sandbox connect` prints a mariadb command
// line that, given the user's password, logs in to it; the writes made
// there are the diff, per column (`price: 89.90 → 99.00`), in colour with
// --color=always and plain when piped, a hostile value (a clear-screen
// sequence, a line end) escaped in both; `sandbox promote` applies them.
func TestAdminReviewLoopCLI(t *testing.T) {
	db := leastPrivilegeEnv(t)
	mariadb := mariadbCLI(t)
	root := openDB(t, db.DSN("")+"?multiStatements=true")
	readOnlyDatabase(t, root, "cli_loop")
	mustExecC(t, root, `CREATE TABLE cli_loop.t (id INT PRIMARY KEY, price DECIMAL(10,2), label VARCHAR(64)) ENGINE=InnoDB;
INSERT INTO cli_loop.t VALUES (1, 89.90, 'pen'), (2, 5.00, 'ink');`)
	metricsAddr := freeAddr(t)
	startProxyProcess(t, db, "--mode", "explicit", "--metrics-listen", metricsAddr, "--admin-token", "s3cret",
		"--promote-user", db.User, "--promote-password", db.Password)
	cli := adminCLI(t, metricsAddr, "s3cret")

	out, errOut, err := cli("create", "loopbox", "--owner", sandboxUser, "--ttl", "2h")
	if err != nil || !strings.Contains(out, "sandbox loopbox created for "+sandboxUser+", kept until ") {
		t.Fatalf("sandbox create: %v\n%s%s", err, out, errOut)
	}
	// Kept: the tests after this one on the shared server must not find
	// its schemas (run before the proxy stops).
	t.Cleanup(func() {
		if _, errOut, err := cli("discard", "loopbox"); err != nil {
			t.Errorf("sandbox discard loopbox: %v\n%s", err, errOut)
		}
	})
	if _, errOut, err = cli("create", "loopbox", "--owner", sandboxUser); err == nil || !strings.Contains(errOut, "already exists") ||
		!strings.Contains(errOut, "(HTTP 409)") {
		t.Errorf("sandbox create of a name taken: %v\n%s", err, errOut)
	}
	// The reaper lets go of it (no connection here uses it): its holder
	// row goes; the registry keeps it.
	testkit.Eventually(t, "the proxy to let go of loopbox", func() bool {
		return strings.Join(column(t, root, "SELECT COUNT(*) FROM _sqlfork_meta.holders h JOIN _sqlfork_meta.sandboxes s"+
			" ON s.id = h.sandbox_id WHERE s.name = 'loopbox'"), "") == "0"
	})
	if out, _, err = cli("show", "loopbox"); err != nil || !strings.Contains(out, "state:        kept") {
		t.Fatalf("sandbox show after the reaper: %v\n%s", err, out)
	}

	out, errOut, err = cli("connect", "loopbox", "--database", "cli_loop", "-o", "json")
	var conn struct{ Login, MariaDB string }
	if err != nil || json.Unmarshal([]byte(out), &conn) != nil || conn.Login != sandboxUser+"+loopbox" {
		t.Fatalf("sandbox connect: %v\n%s%s", err, out, errOut)
	}
	if strings.Contains(out, sandboxPassword) {
		t.Errorf("sandbox connect printed the password:\n%s", out)
	}
	run := func(sql string) string {
		t.Helper()
		words := strings.Fields(conn.MariaDB) // plain words: nothing to unquote
		if len(words) == 0 || words[0] != "mariadb" || !strings.Contains(conn.MariaDB, " -p") {
			t.Fatalf("connect's command line: %q", conn.MariaDB)
		}
		for i, w := range words {
			if w == "-p" { // it asks for the password; the user gives it
				words[i] = "-p" + sandboxPassword
			}
		}
		cmd := exec.Command(mariadb, append(append([]string{"--no-defaults"}, words[1:]...), "--batch", "--skip-column-names", "-e", sql)...)
		cmd.Env = append(os.Environ(), "MYSQL_PWD=", "LC_ALL=C")
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s -e %q: %v\n%s", conn.MariaDB, sql, err, b)
		}
		return string(b)
	}
	run("UPDATE t SET price = 99.00 WHERE id = 1; UPDATE t SET label = CONCAT('x', CHAR(27 USING utf8mb4), '[2J', CHAR(10 USING utf8mb4), 'y') WHERE id = 2;" +
		" INSERT INTO t VALUES (3, 1.50, 'cap')")
	if got := run("SELECT CONCAT(id, ':', price) FROM t ORDER BY id"); got != "1:99.00\n2:5.00\n3:1.50\n" {
		t.Errorf("the sandbox reads %q", got)
	}
	if got := strings.Join(column(t, root, "SELECT CONCAT(id, ':', price) FROM cli_loop.t ORDER BY id"), ","); got != "1:89.90,2:5.00" {
		t.Errorf("production reads %s before the promote", got)
	}

	plain, errOut, err := cli("diff", "loopbox")
	if err != nil {
		t.Fatalf("sandbox diff: %v\n%s", err, errOut)
	}
	for _, want := range []string{`update +\{"id":1\} +price: 89\.90 → 99\.00 `, `update +\{"id":2\} +label: "ink" → "x\\u001[bB]\[2J\\ny" `,
		`insert +\{"id":3\} +\{"id":3,"price":1\.50,"label":"cap"\} `} {
		if !regexp.MustCompile(want).MatchString(plain) {
			t.Errorf("sandbox diff lacks %s:\n%s", want, plain)
		}
	}
	if strings.Contains(plain, "\x1b") || strings.Count(plain, "\n") != 4 {
		t.Errorf("sandbox diff, piped, holds an escape sequence or a line a value broke:\n%q", plain)
	}
	colored, errOut, err := cli("diff", "loopbox", "--color=always")
	sgr := regexp.MustCompile("\x1b\\[[0-9;]*m")
	if err != nil || !strings.Contains(colored, "price: \x1b[31m89.90\x1b[0m → \x1b[32m99.00\x1b[0m") ||
		sgr.ReplaceAllString(colored, "") != plain {
		t.Errorf("sandbox diff --color=always: %v\n%q\nplain:\n%q%s", err, colored, plain, errOut)
	}

	out, errOut, err = cli("promote", "loopbox")
	if err != nil || !strings.Contains(out, "outcome:   committed") {
		t.Fatalf("sandbox promote: %v\n%s%s", err, out, errOut)
	}
	if got := strings.Join(column(t, root, "SELECT CONCAT(id, ':', price, ':', HEX(label)) FROM cli_loop.t ORDER BY id"), ","); got !=
		"1:99.00:70656E,2:5.00:781B5B324A0A79,3:1.50:636170" {
		t.Errorf("production after the promote: %s", got)
	}
}
