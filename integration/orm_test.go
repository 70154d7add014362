package integration

import (
	"context"
	"fmt"
	"net"
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

// TestORMSQLAlchemy: SQLAlchemy ORM (Debian's python3-sqlalchemy and
// python3-pymysql, seen by /usr/bin/python3) through a sandbox.
func TestORMSQLAlchemy(t *testing.T) {
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil || exec.Command(py, "-c", "import sqlalchemy, pymysql").Run() != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("/usr/bin/python3 with sqlalchemy and pymysql is required (apt-get install python3-sqlalchemy python3-pymysql)")
		}
		t.Skip("needs /usr/bin/python3 with python3-sqlalchemy and python3-pymysql")
	}
	db, h := sandboxProxy(t, "transparent", nil)
	ormDatabases(t, "sa_direct", "sa_sb")
	holder := conn(t, openDB(t, h.userDSN(sandboxUser+"+sqlalchemy", "sa_sb")))
	mustExecC(t, holder, "SELECT 1")
	compareRuns(t, func(sandboxed bool, n int) string {
		url := "mysql+pymysql://" + db.User + ":" + db.Password + "@" + db.Addr + "/sa_direct?charset=utf8mb4"
		if sandboxed {
			url = "mysql+pymysql://" + sandboxUser + "%2Bsqlalchemy:" + sandboxPassword + "@" + h.addr + "/sa_sb?charset=utf8mb4"
		}
		return runWorkload(t, py, "sqlalchemy_workload.py", url, string(rune('0'+n)))
	})
}

// npmInstall installs the Node workload's packages once per test binary.
var npmInstall struct {
	once sync.Once
	err  error
}

// TestORMMysql2: mysql2 for Node through a sandbox.
func TestORMMysql2(t *testing.T) {
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
	db, h := sandboxProxy(t, "transparent", nil)
	ormDatabases(t, "m2_direct", "m2_sb")
	holder := conn(t, openDB(t, h.userDSN(sandboxUser+"+mysql2", "m2_sb")))
	mustExecC(t, holder, "SELECT 1")
	compareRuns(t, func(sandboxed bool, n int) string {
		host, port, _ := net.SplitHostPort(db.Addr)
		args := []string{"node/workload.js", host, port, db.User, db.Password, "m2_direct", fmt.Sprint(n)}
		if sandboxed {
			host, port, _ = net.SplitHostPort(h.addr)
			args = []string{"node/workload.js", host, port, sandboxUser + "+mysql2", sandboxPassword, "m2_sb", fmt.Sprint(n)}
		}
		return strings.ReplaceAll(runWorkload(t, "node", args...), "m2_sb", "m2_direct")
	})
}

// TestORMConnectorJ: MariaDB Connector/J (Debian's libmariadb-java) with
// DatabaseMetaData, batches, server-side prepared statements, a rolled-back
// transaction and ResultSetMetaData, through a sandbox.
func TestORMConnectorJ(t *testing.T) {
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
	if out, err := exec.Command("javac", "-d", classes, "-cp", jar, filepath.Join(ormDir(t), "java", "Workload.java")).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	db, h := sandboxProxy(t, "transparent", nil)
	ormDatabases(t, "cj_direct", "cj_sb")
	holder := conn(t, openDB(t, h.userDSN(sandboxUser+"+connj", "cj_sb")))
	mustExecC(t, holder, "SELECT 1")
	cp := jar + string(os.PathListSeparator) + classes
	compareRuns(t, func(sandboxed bool, n int) string {
		url := "jdbc:mariadb://" + db.Addr + "/cj_direct?useServerPrepStmts=true"
		user, pw := db.User, db.Password
		if sandboxed {
			url = "jdbc:mariadb://" + h.addr + "/cj_sb?useServerPrepStmts=true"
			user, pw = sandboxUser+"+connj", sandboxPassword
		}
		return runWorkload(t, "java", "-cp", cp, "Workload", url, user, pw, fmt.Sprint(n))
	})
}
