package integration

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// ormDir is integration/orm, which holds the workloads in other languages.
func ormDir(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "orm")
}

// runWorkload runs a workload program and returns its transcript.
func runWorkload(t *testing.T, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = ormDir(t)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

// ormDatabases makes an empty database for the direct runs and one for the
// sandboxed runs (readable, not writable, by the sandbox's upstream
// account), and checks at the end that production gained no table in it.
func ormDatabases(t *testing.T, direct, sandboxed string) {
	t.Helper()
	db, _ := env(t)
	root := openDB(t, db.DSN("")+"?multiStatements=true")
	if _, err := root.Exec("DROP DATABASE IF EXISTS " + direct + "; CREATE DATABASE " + direct + "; DROP DATABASE IF EXISTS " + sandboxed +
		"; CREATE DATABASE " + sandboxed + "; GRANT SELECT ON " + sandboxed + ".* TO '" + sandboxUser + "'@'%'"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		var n int
		if err := root.QueryRow("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?", sandboxed).Scan(&n); err != nil || n != 0 {
			t.Errorf("production %s has %d tables (%v), want none", sandboxed, n, err)
		}
		_, _ = root.Exec("DROP DATABASE IF EXISTS " + direct + "; DROP DATABASE IF EXISTS " + sandboxed)
	})
}

// compareRuns runs a workload twice directly and twice through a sandbox.
func compareRuns(t *testing.T, run func(sandboxed bool, n int) string) {
	t.Helper()
	for n := 1; n <= 2; n++ {
		want, got := run(false, n), run(true, n)
		if got != want {
			t.Errorf("run %d: through the sandbox\n%s\ndirectly\n%s", n, got, want)
		} else {
			t.Logf("run %d transcript (both):\n%s", n, got)
		}
	}
}

// ormCompare runs a workload (run) on a proxy in transparent mode through
// compareRuns: directly in the database <prefix>_direct, and through one
// sandbox (the user-name tag tag, kept by a holder connection) in
// <prefix>_sb, which production gains no table in.
func ormCompare(t *testing.T, tag, prefix string, run func(tg ormTarget, n int) string) {
	t.Helper()
	db, h := sandboxProxy(t, "transparent", nil)
	direct, sandboxed := prefix+"_direct", prefix+"_sb"
	ormDatabases(t, direct, sandboxed)
	holder := conn(t, openDB(t, h.userDSN(sandboxUser+"+"+tag, sandboxed)))
	mustExecC(t, holder, "SELECT 1")
	compareRuns(t, func(inSandbox bool, n int) string {
		if inSandbox {
			return run(ormTarget{h.addr, sandboxUser + "+" + tag, sandboxPassword, sandboxed}, n)
		}
		return run(ormTarget{db.Addr, db.User, db.Password, direct}, n)
	})
}

// ormTarget is where a workload connects: a server (MariaDB or the proxy),
// an account (the proxy's user may carry a sandbox tag) and a database.
type ormTarget struct{ addr, user, password, db string }

// requireSQLAlchemy returns the Python that has SQLAlchemy and PyMySQL
// (Debian's python3-sqlalchemy and python3-pymysql), or skips the test.
func requireSQLAlchemy(t *testing.T) string {
	t.Helper()
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil || exec.Command(py, "-c", "import sqlalchemy, pymysql").Run() != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("/usr/bin/python3 with sqlalchemy and pymysql is required (apt-get install python3-sqlalchemy python3-pymysql)")
		}
		t.Skip("needs /usr/bin/python3 with python3-sqlalchemy and python3-pymysql")
	}
	return py
}

// runSQLAlchemy runs the SQLAlchemy workload (run n) against tg.
func runSQLAlchemy(t *testing.T, py string, tg ormTarget, n int) string {
	t.Helper()
	u := "mysql+pymysql://" + url.QueryEscape(tg.user) + ":" + url.QueryEscape(tg.password) + "@" + tg.addr + "/" + tg.db + "?charset=utf8mb4"
	return runWorkload(t, py, "sqlalchemy_workload.py", u, fmt.Sprint(n))
}

// npmInstall installs the Node workload's packages once per test binary.
var npmInstall struct {
	once sync.Once
	err  error
}

// requireMysql2 makes sure node and the Node workload's packages (mysql2)
// are there, or skips the test.
func requireMysql2(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node is required (apt-get install nodejs npm)")
		}
		t.Skip("needs node and npm")
	}
	dir := filepath.Join(ormDir(t), "node")
	npmInstall.once.Do(func() {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "mysql2")); err == nil {
			return
		}
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			npmInstall.err = fmt.Errorf("npm ci: %v\n%s", err, out)
		}
	})
	if npmInstall.err != nil {
		t.Fatal(npmInstall.err)
	}
}

// runMysql2 runs the mysql2 workload (run n) against tg.
func runMysql2(t *testing.T, tg ormTarget, n int) string {
	t.Helper()
	host, port, _ := net.SplitHostPort(tg.addr)
	return runWorkload(t, "node", "node/workload.js", host, port, tg.user, tg.password, tg.db, fmt.Sprint(n))
}

// requireConnectorJ compiles a Connector/J program (Debian's
// libmariadb-java and a JDK; source relative to integration/) and returns
// its class path, or skips the test.
func requireConnectorJ(t *testing.T, source string) string {
	t.Helper()
	jar := "/usr/share/java/mariadb-java-client.jar"
	_, errJar := os.Stat(jar)
	_, errJavac := exec.LookPath("javac")
	if errJar != nil || errJavac != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("javac and " + jar + " are required (apt-get install default-jdk-headless libmariadb-java)")
		}
		t.Skip("needs javac and libmariadb-java")
	}
	classes := t.TempDir()
	if out, err := exec.Command("javac", "-d", classes, "-cp", jar, filepath.Join(ormDir(t), "..", source)).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	return jar + string(os.PathListSeparator) + classes
}

// runConnectorJ runs the Connector/J workload (run n) against tg.
func runConnectorJ(t *testing.T, cp string, tg ormTarget, n int) string {
	t.Helper()
	u := "jdbc:mariadb://" + tg.addr + "/" + tg.db + "?useServerPrepStmts=true"
	return runWorkload(t, "java", "-cp", cp, "Workload", u, tg.user, tg.password, fmt.Sprint(n))
}

// TestORMSQLAlchemy: SQLAlchemy ORM (Debian's python3-sqlalchemy and
// python3-pymysql, seen by /usr/bin/python3) through a sandbox.
func TestORMSQLAlchemy(t *testing.T) {
	py := requireSQLAlchemy(t)
	ormCompare(t, "sqlalchemy", "sa", func(tg ormTarget, n int) string { return runSQLAlchemy(t, py, tg, n) })
}

// TestORMMysql2: mysql2 for Node through a sandbox.
func TestORMMysql2(t *testing.T) {
	requireMysql2(t)
	ormCompare(t, "mysql2", "m2", func(tg ormTarget, n int) string {
		return strings.ReplaceAll(runMysql2(t, tg, n), "m2_sb", "m2_direct")
	})
}

// TestORMConnectorJ: MariaDB Connector/J (Debian's libmariadb-java) with
// DatabaseMetaData, batches, server-side prepared statements, a rolled-back
// transaction and ResultSetMetaData, through a sandbox.
func TestORMConnectorJ(t *testing.T) {
	cp := requireConnectorJ(t, "orm/java/Workload.java")
	ormCompare(t, "connj", "cj", func(tg ormTarget, n int) string { return runConnectorJ(t, cp, tg, n) })
}
