package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// requireTool returns the path of the first of names found in $PATH. A
// missing tool fails the test when CI=true and skips it otherwise.
func requireTool(t testing.TB, names ...string) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	msg := fmt.Sprintf("%s not found in $PATH", strings.Join(names, " or "))
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s; CI=true, so this test must not be skipped", msg)
	}
	t.Skipf("skipping: %s", msg)
	return ""
}

// mariadbCLI returns the mariadb (or mysql) command-line client.
func mariadbCLI(t testing.TB) string {
	t.Helper()
	return requireTool(t, "mariadb", "mysql")
}

// cliResult is what one run of the command-line client produced.
type cliResult struct {
	stdout, stderr string
	exit           int
}

// cliCmd is the command-line client bin logging in to addr (host:port)
// with args, option files and the environment's defaults ignored so the
// machine's my.cnf cannot change the output.
func cliCmd(ctx context.Context, bin, addr, user, password string, args ...string) *exec.Cmd {
	host, port, _ := net.SplitHostPort(addr)
	full := append([]string{"--no-defaults", "--protocol=TCP", "-h" + host, "-P" + port, "-u" + user, "-p" + password}, args...)
	cmd := exec.CommandContext(ctx, bin, full...)
	cmd.Env = append(os.Environ(), "MYSQL_HOST=", "MYSQL_TCP_PORT=", "MYSQL_PWD=", "LC_ALL=C")
	return cmd
}

// runCLI runs the command-line client against addr (host:port), reading
// stdin from the file named by script when it is not empty. Option files
// are ignored so the machine's my.cnf cannot change the output.
func runCLI(t testing.TB, bin, addr, user, password, script string, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := cliCmd(ctx, bin, addr, user, password, args...)
	if script != "" {
		f, err := os.Open(script)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd.Stdin = f
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	exit, ok := exitStatus(ctx, err)
	if !ok {
		t.Fatalf("%s %s: %v\nstderr: %s", bin, strings.Join(args, " "), err, stderr.String())
	}
	return cliResult{stdout: stdout.String(), stderr: stderr.String(), exit: exit}
}

// exitStatus is the exit status of a command that ran (err is what its Run
// returned, ctx the context it ran under); ok is false if it did not start
// or ctx stopped it.
func exitStatus(ctx context.Context, err error) (status int, ok bool) {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, true
	case errors.As(err, &ee) && ctx.Err() == nil:
		return ee.ExitCode(), true
	}
	return 0, false
}

// diffFirst describes where two outputs first differ.
func diffFirst(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n  direct:  %.300q\n  proxied: %.300q", i+1, x, y)
		}
	}
	return "(no line differs)"
}

// cliScript exercises results, errors, warnings, multi-statement lines,
// multiple result sets, COM_INIT_DB, LOAD DATA LOCAL, transactions, the
// client's DELIMITER handling and a large row. %[1]s is the LOAD DATA file.
// It writes only to a temporary table and to cli_scratch, which it creates
// and drops, so direct and proxied runs see the same state.
const cliScript = `SELECT id, name, email, score, created, bio, avatar FROM app.users ORDER BY id;
SELECT NULL AS n, x'00FF41' AS b, _binary 'a\0b' AS b2, 'tab\there' AS t, 1.5 AS d, CAST(NULL AS BINARY) AS nb;
SELECT * FROM app.no_such_table;
SELEC broken syntax;
SELECT 1/0 AS div0;
SELECT CAST('12abc' AS SIGNED) AS conv, 'after' AS s;
SELECT 1; SELECT 2;
CALL app.two_results();
use other
SELECT DATABASE();
SELECT * FROM things ORDER BY id;
use app
SELECT DATABASE(), COUNT(*) FROM users;
CREATE TEMPORARY TABLE tmp_load (id INT PRIMARY KEY, label VARCHAR(20), note VARCHAR(20)) ENGINE=InnoDB;
LOAD DATA LOCAL INFILE '%[1]s' INTO TABLE tmp_load FIELDS TERMINATED BY ',' LINES TERMINATED BY '\n';
SELECT COUNT(*) FROM tmp_load;
SELECT * FROM tmp_load ORDER BY id;
START TRANSACTION;
INSERT INTO tmp_load VALUES (100, 'rolled back', NULL);
SELECT COUNT(*), @@in_transaction FROM tmp_load;
ROLLBACK;
SELECT COUNT(*), @@in_transaction FROM tmp_load;
INSERT INTO tmp_load VALUES (1, 'duplicate', NULL);
DROP DATABASE IF EXISTS cli_scratch;
CREATE DATABASE cli_scratch;
USE cli_scratch;
DELIMITER //
CREATE PROCEDURE count_to(IN n INT)
BEGIN
  DECLARE i INT DEFAULT 0;
  WHILE i < n DO
    SET i = i + 1;
  END WHILE;
  SELECT i AS counted, DATABASE() AS db;
  SELECT 'second' AS result;
END//
SELECT 'inside delimiter block' AS s//
DELIMITER ;
CALL count_to(7);
SELECT ROUTINE_NAME, ROUTINE_TYPE FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = 'cli_scratch';
SELECT REPEAT('x', 200000);
SELECT LENGTH(REPEAT('y', 300000)) AS len, 'end' AS e;
DROP DATABASE cli_scratch;
SELECT DATABASE();
SELECT 'done' AS finished;
`

// cliLoadData is the LOAD DATA file: a NULL, a short and a long row, so
// LOAD DATA produces warnings too.
const cliLoadData = "1,one,a\n2,two\n3,three,c,extra\n4,\\N,d\n5,five,e\n"

func TestCLIMatchesDirect(t *testing.T) {
	db, p := env(t)
	bin := mariadbCLI(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "load.csv")
	if err := os.WriteFile(data, []byte(cliLoadData), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "script.sql")
	if err := os.WriteFile(script, []byte(fmt.Sprintf(cliScript, data)), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--batch", "--show-warnings", "--force", "--local-infile=1", "app"}
	direct := runCLI(t, bin, db.Addr, db.User, db.Password, script, args...)
	initDB := func() float64 { return p.metric(t, "sqlfork_commands_total", map[string]string{"command": "init_db"}) }
	before := initDB()
	proxied := runCLI(t, bin, p.addr, db.User, db.Password, script, args...)
	// "use other", "use app" and "USE cli_scratch" are COM_INIT_DB; seeing
	// them proves the proxied run went through the proxy.
	if got := initDB() - before; got < 3 {
		t.Errorf("proxy counted %v COM_INIT_DB during the proxied run, want >= 3", got)
	}

	// The direct run must itself be substantive, or comparing proves nothing.
	for _, want := range []string{
		"alice", "\\0", "NULL", "2\n", "b\tc\nx\t2\n", "other\n", "two\n",
		"COUNT(*)\n5\n", "6\t1\n", "counted\tdb\n7\tcli_scratch\n", "second\n",
		"inside delimiter block", strings.Repeat("x", 200000) + "\n", "300000\tend\n",
		"count_to\tPROCEDURE", "finished\ndone\n",
		"Division by 0", "Truncated incorrect INTEGER value",
		"doesn't contain data for all columns", "was truncated",
	} {
		if !strings.Contains(direct.stdout+direct.stderr, want) {
			t.Errorf("direct CLI output lacks %q", want)
		}
	}
	for _, want := range []string{"ERROR 1146 (42S02) at line 3", "ERROR 1064 (42000) at line 4", "ERROR 1062 (23000)"} {
		if !strings.Contains(direct.stderr, want) {
			t.Errorf("direct CLI stderr lacks %q:\n%s", want, direct.stderr)
		}
	}
	if t.Failed() {
		t.Fatalf("direct run is not what the script expects; stdout:\n%.3000s\nstderr:\n%s", direct.stdout, direct.stderr)
	}

	if direct.stdout != proxied.stdout {
		t.Errorf("stdout differs (%d vs %d bytes) at %s", len(direct.stdout), len(proxied.stdout), diffFirst(direct.stdout, proxied.stdout))
	}
	if direct.stderr != proxied.stderr {
		t.Errorf("stderr differs:\n--- direct\n%s\n--- proxied\n%s", direct.stderr, proxied.stderr)
	}
	if direct.exit != proxied.exit {
		t.Errorf("exit status: direct %d, proxied %d", direct.exit, proxied.exit)
	}
}

// TestCLILoginErrorsMatchDirect: login failures print the same line.
func TestCLILoginErrorsMatchDirect(t *testing.T) {
	db, p := env(t)
	bin := mariadbCLI(t)
	cases := []struct {
		name, user, password, db, want string
	}{
		{"wrong-password", db.User, "wrong-" + db.Password, "app",
			fmt.Sprintf("ERROR 1045 (28000): Access denied for user '%s'@'127.0.0.1' (using password: YES)\n", db.User)},
		{"unknown-user", "no_such_user", "whatever", "app",
			"ERROR 1045 (28000): Access denied for user 'no_such_user'@'127.0.0.1' (using password: YES)\n"},
		{"unknown-database", db.User, db.Password, "no_such_db",
			"ERROR 1049 (42000): Unknown database 'no_such_db'\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"--batch", tc.db, "-e", "SELECT 'logged in'"}
			direct := runCLI(t, bin, db.Addr, tc.user, tc.password, "", args...)
			proxied := runCLI(t, bin, p.addr, tc.user, tc.password, "", args...)
			if direct.stderr != tc.want || direct.exit == 0 || direct.stdout != "" {
				t.Fatalf("direct: exit %d stdout %q stderr %q, want stderr %q", direct.exit, direct.stdout, direct.stderr, tc.want)
			}
			if proxied != direct {
				t.Fatalf("proxied differs from direct:\n  direct:  exit %d stdout %q stderr %q\n  proxied: exit %d stdout %q stderr %q",
					direct.exit, direct.stdout, direct.stderr, proxied.exit, proxied.stdout, proxied.stderr)
			}
		})
	}
}
