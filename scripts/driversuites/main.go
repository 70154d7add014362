// Command driversuites runs database drivers' own test suites directly
// against a throwaway MariaDB and through sqlfork-proxy — in passthrough
// mode (the drivers' accounts configured in the proxy, and relayed to the
// server) and through one named sandbox of a SELECT-only account — and
// prints, per driver, how each way fared and every test whose outcome
// differs from the direct run, with the reason when the difference is one a
// sandbox makes by design (docs/DRIVERS.md). scripts/driver-suites.sh runs
// it; see there for usage.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	_ "github.com/go-sql-driver/mysql"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/sqlfork/sqlfork-proxy/integration/testdb"
	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/metrics"
	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// The drivers, at the versions whose suites were measured (docs/DRIVERS.md).
const (
	gsdModule     = "github.com/go-sql-driver/mysql@v1.10.1"
	gomysqlModule = "github.com/go-mysql-org/go-mysql@v1.16.0"
)

// Ways a suite runs.
const (
	direct      = "direct"      // straight to MariaDB, as the drivers' CI runs them
	passthrough = "passthrough" // the proxy in passthrough mode, the drivers' accounts configured in it
	relay       = "relay"       // the proxy in passthrough mode, the drivers' accounts relayed to the server
	sandbox     = "sandbox"     // the proxy in transparent mode: one named sandbox of the SELECT-only account
)

// Accounts on the throwaway server, as the drivers' CI make them.
const (
	gsdUser, gsdPassword     = "gotest", "secret"       // go-sql-driver's CI (ALL PRIVILEGES)
	test2User, test2Password = "test2", "some password" // PyMySQL's CI (ALL ON test2.*)
	proxyUser                = "sqlfork"                // the proxy's SELECT-only account (docs/OPERATIONS.md)
)

// exceptions are the differences a sandbox makes by design (and why): the
// tests need what a sandbox, or its SELECT-only account, refuses. Keys are
// suite and test name; a parent test fails when one of its subtests does.
var exceptions = map[string]string{
	"gsd TestConcurrent": "opens connections up to max_connections; MariaDB keeps its last slot (max_connections+1) " +
		"for accounts with CONNECTION ADMIN, which the test's own account has directly and the proxy's SELECT-only " +
		"account has not, so the connection landing on it gets 1040 (08004) after authentication, which the test " +
		"does not accept (it passes through the sandbox when the proxy's account has CONNECTION ADMIN)",
	"gomysql TestClientSuite/TestLongPassword": "creates an account (CREATE USER): accounts are server state, refused in a sandbox",
	"pymysql pymysql.tests.test_connection.TestAuthentication::testAuthEd25519": "calls the loadable function " +
		"ed25519_password (refused: a UDF's effects cannot be confined) and creates accounts (CREATE USER, server state)",
	"pymysql pymysql.tests.test_connection.TestAuthentication::test_plugin": "reads mysql.user (every account's " +
		"password hash), which the SELECT-only account of docs/OPERATIONS.md may not read",
	"pymysql pymysql.tests.test_issues.TestOldIssues::test_issue_6": "connects to the database mysql and reads " +
		"mysql.user (every account's password hash), which the SELECT-only account may not read",
}

// skipped are tests left out of every way, and why.
var skipped = map[string]string{
	"gsd TestConnectorReturnsTimeout": "dials 1.1.1.1:1234 and wants a connect timeout: needs the internet, not the database",
	"gomysql Example*":                "the package's examples dial 127.0.0.1:3306 as root, whatever the flags say",
}

func main() {
	o := parseFlags()
	logf("logs and results in %s", o.out)
	srcs := copySources(&o)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	certs := filepath.Join(o.out, "certs")
	if err := makeCerts(certs); err != nil {
		fatal(err)
	}
	db := startServer(ctx, certs)
	defer db.Stop()
	proxyPassword := db.Password
	if err := setupServer(ctx, db); err != nil {
		fatal(err)
	}
	logf("MariaDB on %s", db.Addr)
	addrs := startProxies(ctx, o, db.Addr, proxyPassword, certs)

	report := &strings.Builder{}
	unexpected := runSuites(ctx, report, o, srcs, addrs, proxyPassword)
	fmt.Print(report.String())
	if err := os.WriteFile(filepath.Join(o.out, "report.txt"), []byte(report.String()), 0o644); err != nil {
		fatal(err)
	}
	if unexpected > 0 {
		fmt.Printf("\n%d unexpected difference(s)\n", unexpected)
		os.Exit(1)
	}
	fmt.Println("\nno unexpected difference")
}

// logf writes a line of progress to stderr.
func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, "==> "+format+"\n", args...) }

// options are driversuites' flags and argument.
type options struct {
	out          string   // directory for logs and results
	suites, ways []string // what runs, and how
	gsdDir       string   // go-sql-driver/mysql sources, or "": the module cache
	gomysqlDir   string   // go-mysql sources, or "": the module cache
	python       string   // Python for PyMySQL, or "": found
	pymysqlDir   string   // a PyMySQL checkout, or "": PyMySQL left out
}

// parseFlags reads the command line, making the output directory (a new
// temporary one without -out).
func parseFlags() options {
	out := flag.String("out", "", "directory for logs and results (default: a new temporary directory)")
	suitesFlag := flag.String("suites", "gsd,gomysql,pymysql", "suites to run: gsd (go-sql-driver/mysql), gomysql (go-mysql client), pymysql")
	waysFlag := flag.String("ways", "direct,passthrough,relay,sandbox", "ways to run them")
	gsdDir := flag.String("gsd", "", "go-sql-driver/mysql v1.10.1 sources (default: the Go module cache, downloaded if missing)")
	gomysqlDir := flag.String("gomysql", "", "go-mysql v1.16.0 sources (default: the Go module cache, downloaded if missing)")
	python := flag.String("python", "", "Python with pytest, cryptography and PyNaCl, for PyMySQL (default: the first of python3, /usr/bin/python3 that has pytest)")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: driversuites [flags] [PYMYSQL_DIR]\n\nPYMYSQL_DIR is a PyMySQL checkout (its tests are run unchanged); without it PyMySQL is left out.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	o := options{out: *out, gsdDir: *gsdDir, gomysqlDir: *gomysqlDir, python: *python, pymysqlDir: flag.Arg(0)}
	if o.out == "" {
		d, err := os.MkdirTemp("", "sqlfork-drivers-")
		if err != nil {
			fatal(err)
		}
		o.out = d
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		fatal(err)
	}
	o.suites, o.ways = strings.Split(*suitesFlag, ","), strings.Split(*waysFlag, ",")
	return o
}

// copySources copies each suite's sources under o.out/src, so that nothing
// is written where they are: the copies' directories by suite. Finding
// PyMySQL's Python fills in o.python.
func copySources(o *options) map[string]string {
	srcs := map[string]string{}
	for _, s := range o.suites {
		var dir string
		var err error
		switch s {
		case "gsd":
			dir, err = moduleDir(o.gsdDir, gsdModule)
		case "gomysql":
			dir, err = moduleDir(o.gomysqlDir, gomysqlModule)
		case "pymysql":
			if o.pymysqlDir == "" {
				logf("no PyMySQL checkout given: PyMySQL left out")
				continue
			}
			if o.python == "" {
				o.python = findPython()
			}
			dir = o.pymysqlDir
		default:
			fatal(fmt.Errorf("unknown suite %q", s))
		}
		if err != nil {
			fatal(err)
		}
		dst := filepath.Join(o.out, "src", s)
		if err := copyTree(dir, dst); err != nil {
			fatal(err)
		}
		srcs[s] = dst
		logf("%s: %s", s, dir)
	}
	return srcs
}

// findPython is the first of python3, /usr/bin/python3 that has pytest,
// cryptography and PyNaCl.
func findPython() string {
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(p, "-c", "import pytest, cryptography, nacl").Run() == nil {
			return p
		}
	}
	fatal(errors.New("no python3 with pytest, cryptography and PyNaCl (give one with -python)"))
	return ""
}

// startServer starts the throwaway MariaDB, with TLS from certs, set as
// the drivers' CI set theirs.
func startServer(ctx context.Context, certs string) *testdb.Server {
	logf("starting a throwaway MariaDB")
	db, err := testdb.Start(ctx, testdb.Options{Logf: logf, ExtraArgs: []string{
		"--max-connections=50", // as go-sql-driver's CI: TestConcurrent opens max_connections connections
		"--local-infile=1", "--performance-schema=ON", "--max-allowed-packet=48M",
		"--ssl-ca=" + filepath.Join(certs, "ca.pem"), "--ssl-cert=" + filepath.Join(certs, "server-cert.pem"),
		"--ssl-key=" + filepath.Join(certs, "server-key.pem"),
	}})
	if err != nil {
		fatal(err)
	}
	return db
}

// startProxies starts a proxy for each of o.ways but direct, in front of
// upstream: the address of each way.
func startProxies(ctx context.Context, o options, upstream, proxyPassword, certs string) map[string]string {
	addrs := map[string]string{direct: upstream}
	for _, w := range o.ways {
		if w == direct {
			continue
		}
		addr, err := startProxy(ctx, w, upstream, proxyPassword, certs, filepath.Join(o.out, "proxy-"+w+".log"))
		if err != nil {
			fatal(err)
		}
		addrs[w] = addr
		logf("proxy (%s) on %s", w, addr)
	}
	return addrs
}

// runSuites runs each suite of srcs each way, writing to report what was
// left out and how each suite fared: the count of unexpected differences.
func runSuites(ctx context.Context, report io.Writer, o options, srcs, addrs map[string]string, proxyPassword string) int {
	var left []string
	for k, why := range skipped {
		left = append(left, "  "+k+": "+why)
	}
	sort.Strings(left)
	fmt.Fprintf(report, "left out in every way:\n%s\n", strings.Join(left, "\n"))
	unexpected := 0
	for _, s := range o.suites {
		dir, ok := srcs[s]
		if !ok {
			continue
		}
		results := map[string]map[string]string{}
		for _, w := range o.ways {
			addr, ok := addrs[w]
			if !ok {
				fatal(fmt.Errorf("unknown way %q", w))
			}
			logf("%s, %s", s, w)
			logFile := filepath.Join(o.out, s+"-"+w+".log")
			res, err := runSuite(ctx, o, s, w, dir, addr, proxyPassword, logFile)
			if err != nil {
				logf("%s, %s: %v (see %s)", s, w, err, logFile)
				fmt.Fprintf(report, "%s, %s did not run: %v (see %s)\n", s, w, err, logFile)
				unexpected++
			}
			results[w] = res
		}
		unexpected += summarize(report, s, o.ways, results)
	}
	return unexpected
}

// runSuite runs suite, whose sources are in dir, one way, through addr,
// logging to logFile: the outcome of each test.
func runSuite(ctx context.Context, o options, suite, way, dir, addr, proxyPassword, logFile string) (map[string]string, error) {
	switch suite {
	case "gsd":
		return runGSD(ctx, dir, way, addr, proxyPassword, logFile)
	case "gomysql":
		return runGoMySQL(ctx, dir, way, addr, proxyPassword, logFile)
	case "pymysql":
		return runPyMySQL(ctx, o.python, dir, way, addr, proxyPassword, logFile, filepath.Join(o.out, suite+"-"+way+".xml"))
	}
	return nil, nil
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "driversuites:", err)
	os.Exit(2)
}

// moduleDir is dir, or the module's directory in the Go module cache
// (downloaded through the Go module proxy if missing).
func moduleDir(dir, module string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	out, err := exec.Command("go", "mod", "download", "-json", module).Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s: %w", module, err)
	}
	var m struct{ Dir, Error string }
	if err := json.Unmarshal(out, &m); err != nil {
		return "", err
	}
	if m.Error != "" || m.Dir == "" {
		return "", fmt.Errorf("go mod download %s: %s", module, m.Error)
	}
	return m.Dir, nil
}

// copyTree copies the files of src to dst (made writable), leaving out
// version control and caches.
func copyTree(src, dst string) error {
	_ = os.RemoveAll(dst)
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "__pycache__" || d.Name() == ".pytest_cache") {
			return filepath.SkipDir
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		o, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		if _, err := io.Copy(o, in); err != nil {
			o.Close()
			return err
		}
		return o.Close()
	})
}

// makeCerts writes a CA and a server certificate for 127.0.0.1 and
// localhost (the server's and the proxy's), with RSA keys.
func makeCerts(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ca, err := testkit.NewPKI("sqlfork driver suites", true)
	if err != nil {
		return err
	}
	srv, err := ca.Loopback("127.0.0.1")
	if err != nil {
		return err
	}
	for name, b := range map[string][]byte{"ca.pem": ca.CAPEM, "server-cert.pem": srv.CertPEM, "server-key.pem": srv.KeyPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// setupServer makes the databases and accounts the drivers' CI make, and
// turns the test server's own account (testdb's, which the proxy logs in
// with) into the SELECT-only account of docs/OPERATIONS.md.
func setupServer(ctx context.Context, db *testdb.Server) error {
	conn, err := sql.Open("mysql", db.DSN(""))
	if err != nil {
		return err
	}
	defer conn.Close()
	c, err := conn.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	for _, q := range []string{
		// PyMySQL's CI (ci/docker-entrypoint-initdb.d): root without a
		// password, test1 and test2, and ed25519.
		"CREATE USER IF NOT EXISTS 'root'@'127.0.0.1'", "GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION",
		"CREATE DATABASE test1 DEFAULT CHARACTER SET utf8mb4", "CREATE DATABASE test2 DEFAULT CHARACTER SET utf8mb4",
		fmt.Sprintf("CREATE USER %s IDENTIFIED BY '%s'", test2User, test2Password), "GRANT ALL ON test2.* TO " + test2User,
		fmt.Sprintf("CREATE USER %s@localhost IDENTIFIED BY '%s'", test2User, test2Password), "GRANT ALL ON test2.* TO " + test2User + "@localhost",
		`INSTALL SONAME "auth_ed25519"`, `CREATE FUNCTION ed25519_password RETURNS STRING SONAME "auth_ed25519.so"`,
		// go-sql-driver's CI: gotest/secret with every privilege, database gotest.
		fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED BY '%s'", gsdUser, gsdPassword), fmt.Sprintf("GRANT ALL PRIVILEGES ON *.* TO '%s'@'%%'", gsdUser),
		"CREATE DATABASE gotest",
		// go-mysql's CI: database test.
		"CREATE DATABASE test",
	} {
		if _, err := c.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	// From here on as root: the test account becomes the SELECT-only one.
	root, err := sql.Open("mysql", "root@tcp("+db.Addr+")/")
	if err != nil {
		return err
	}
	defer root.Close()
	for _, host := range []string{"127.0.0.1", "localhost"} {
		for _, q := range []string{
			"REVOKE ALL PRIVILEGES, GRANT OPTION FROM '%s'@'%s'",
			"GRANT SELECT, SHOW VIEW ON gotest.* TO '%s'@'%s'", "GRANT SELECT, SHOW VIEW ON test.* TO '%s'@'%s'",
			"GRANT SELECT, SHOW VIEW ON test1.* TO '%s'@'%s'", "GRANT SELECT, SHOW VIEW ON test2.* TO '%s'@'%s'",
			"GRANT SELECT ON mysql.func TO '%s'@'%s'", "GRANT ALL PRIVILEGES ON `\\_sqlfork%%`.* TO '%s'@'%s'",
		} {
			if _, err := root.ExecContext(ctx, fmt.Sprintf(q, db.User, host)); err != nil {
				return fmt.Errorf("%s: %w", fmt.Sprintf(q, db.User, host), err)
			}
		}
	}
	if db.User != proxyUser {
		return fmt.Errorf("the test server's account is %q, not %q", db.User, proxyUser)
	}
	return nil
}

// startProxy runs a proxy of the given way in this process.
func startProxy(ctx context.Context, way, upstream, password, certs, logPath string) (string, error) {
	cfg := proxy.DefaultConfig()
	cfg.Listen, cfg.Upstream = "127.0.0.1:0", upstream
	cfg.UpstreamUser, cfg.UpstreamPassword = proxyUser, password
	cfg.TLSCert, cfg.TLSKey = filepath.Join(certs, "server-cert.pem"), filepath.Join(certs, "server-key.pem")
	cfg.UpstreamTLS = "required"
	switch way {
	case passthrough:
		cfg.Mode = "passthrough"
		for _, u := range []struct{ name, password string }{{gsdUser, gsdPassword}, {"root", ""}, {test2User, test2Password}} {
			cfg.Users = append(cfg.Users, proxy.User{Name: u.name, Password: u.password, UpstreamUser: u.name,
				UpstreamPassword: u.password, Mode: "passthrough"})
		}
	case relay:
		cfg.Mode = "passthrough"
	case sandbox:
		cfg.Mode = "transparent"
	default:
		return "", fmt.Errorf("unknown way %q", way)
	}
	f, err := os.Create(logPath)
	if err != nil {
		return "", err
	}
	enc := zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig())
	logger := zap.New(zapcore.NewCore(enc, zapcore.AddSync(f), zap.InfoLevel))
	m := metrics.New(prometheus.NewRegistry())
	m.SetBuildInfo("driver-suites", "", runtime.Version())
	srv, err := proxy.New(cfg, logger, m)
	if err != nil {
		return "", err
	}
	go func() {
		if err := srv.Serve(ctx); err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintln(os.Stderr, "proxy:", way, err)
		}
	}()
	return srv.Addr().String(), nil
}

// login is the account a suite uses in a way: the drivers' own directly and
// in passthrough, a named sandbox of the SELECT-only account in a sandbox.
func login(way, user, password, proxyPassword, tag string) (string, string) {
	if way == sandbox {
		return proxyUser + "+" + tag, proxyPassword
	}
	return user, password
}

// runGSD runs go-sql-driver/mysql's suite (its CI's settings).
func runGSD(ctx context.Context, dir, way, addr, proxyPassword, logFile string) (map[string]string, error) {
	user, pass := login(way, gsdUser, gsdPassword, proxyPassword, "gsd-"+randomTag())
	cmd := exec.CommandContext(ctx, "go", "test", "-json", "-count=1", "-skip", "^TestConnectorReturnsTimeout$", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MYSQL_TEST_USER="+user, "MYSQL_TEST_PASS="+pass, "MYSQL_TEST_ADDR="+addr, "MYSQL_TEST_CONCURRENT=1")
	return runGoTest(cmd, logFile)
}

// runGoMySQL runs go-mysql's client tests (its CI's settings).
func runGoMySQL(ctx context.Context, dir, way, addr, proxyPassword, logFile string) (map[string]string, error) {
	user, pass := login(way, gsdUser, gsdPassword, proxyPassword, "gomysql-"+randomTag())
	host, port, _ := net.SplitHostPort(addr)
	cmd := exec.CommandContext(ctx, "go", "test", "-json", "-count=1", "-skip", "^Example", "./client",
		"-args", "-host", host, "-port", port, "-user", user, "-pass", pass, "-db", "test")
	cmd.Dir = dir
	return runGoTest(cmd, logFile)
}

// runGoTest runs a go test -json command and reads each test's outcome
// (PASS, FAIL, SKIP), writing the tests' output to logFile.
func runGoTest(cmd *exec.Cmd, logFile string) (map[string]string, error) {
	f, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = f
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	res := map[string]string{}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var ev struct{ Action, Test, Output string }
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			fmt.Fprintln(f, sc.Text())
			continue
		}
		if ev.Output != "" {
			io.WriteString(f, ev.Output)
		}
		if ev.Test == "" {
			continue
		}
		switch ev.Action {
		case "pass", "fail", "skip":
			res[ev.Test] = strings.ToUpper(ev.Action)
		}
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		err = nil // failing tests are results
	}
	return res, err
}

// runPyMySQL runs PyMySQL's suite (its CI's settings, less the unix-socket
// database, which is not the proxy's) with pytest.
func runPyMySQL(ctx context.Context, python, dir, way, addr, proxyPassword, logFile, xmlFile string) (map[string]string, error) {
	host, port, _ := net.SplitHostPort(addr)
	var p int
	fmt.Sscan(port, &p)
	tag := "pymysql-" + randomTag()
	u0, p0 := login(way, "root", "", proxyPassword, tag)
	u1, p1 := login(way, test2User, test2Password, proxyPassword, tag)
	dbs := []map[string]any{
		{"host": host, "port": p, "user": u0, "password": p0, "database": "test1", "use_unicode": true, "local_infile": true},
		{"host": host, "port": p, "user": u1, "password": p1, "database": "test2"},
	}
	js, _ := json.MarshalIndent(dbs, "", " ")
	if err := os.WriteFile(filepath.Join(dir, "pymysql", "tests", "databases.json"), js, 0o644); err != nil {
		return nil, err
	}
	f, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cmd := exec.CommandContext(ctx, python, "-m", "pytest", "-v", "-p", "no:cacheprovider", "-rA", "--junitxml="+xmlFile, "pymysql")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONPATH="+dir)
	cmd.Stdout, cmd.Stderr = f, f
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 1 {
		err = nil // failing tests are results
	}
	if err != nil {
		return nil, err
	}
	return readJUnit(xmlFile)
}

// readJUnit reads pytest's JUnit XML: each test's outcome (PASSED, FAILED,
// ERROR, SKIPPED, XFAIL).
func readJUnit(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	type child struct {
		XMLName xml.Name
		Type    string `xml:"type,attr"`
	}
	type testcase struct {
		Class    string  `xml:"classname,attr"`
		Name     string  `xml:"name,attr"`
		Children []child `xml:",any"`
	}
	var doc struct {
		Suites []struct {
			Cases []testcase `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	res := map[string]string{}
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			st := "PASSED"
			for _, ch := range c.Children {
				switch ch.XMLName.Local {
				case "failure":
					st = "FAILED"
				case "error":
					st = "ERROR"
				case "skipped":
					st = "SKIPPED"
					if ch.Type == "pytest.xfail" {
						st = "XFAIL"
					}
				}
			}
			res[c.Class+"::"+c.Name] = st
		}
	}
	return res, nil
}

func randomTag() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// summarize writes the suite's counts per way and its differences from the
// direct run; it returns the number of differences that are no exception.
func summarize(w io.Writer, suite string, ways []string, results map[string]map[string]string) int {
	fmt.Fprintf(w, "\n== %s\n", suite)
	for _, way := range ways {
		res := results[way]
		counts := map[string]int{}
		top := map[string]int{}
		for name, st := range res {
			counts[st]++
			if !strings.Contains(name, "/") || suite == "pymysql" {
				top[st]++
			}
		}
		fmt.Fprintf(w, "%-12s %s\n", way, countLine(counts, top, suite))
	}
	base, ok := results[direct]
	if !ok {
		return 0
	}
	unexpected := 0
	for _, way := range ways {
		if way == direct {
			continue
		}
		res := results[way]
		var names []string
		for n := range base {
			names = append(names, n)
		}
		for n := range res {
			if _, ok := base[n]; !ok {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		fmt.Fprintf(w, "-- direct vs %s\n", way)
		diffs := 0
		for _, n := range names {
			a, b := orDash(base[n]), orDash(res[n])
			if a == b {
				continue
			}
			diffs++
			why := ""
			if way == sandbox {
				why = exceptionFor(suite, n, base, res)
			}
			if why == "" {
				unexpected++
				fmt.Fprintf(w, "%-7s -> %-7s %s\n", a, b, n)
			} else {
				fmt.Fprintf(w, "%-7s -> %-7s %s  [by design: %s]\n", a, b, n, why)
			}
		}
		if diffs == 0 {
			fmt.Fprintln(w, "(none)")
		}
	}
	return unexpected
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// countLine is "N tests: P passed, F failed, S skipped" (with top-level
// tests for Go suites).
func countLine(counts, top map[string]int, suite string) string {
	total := 0
	for _, n := range counts {
		total += n
	}
	if suite == "pymysql" {
		return fmt.Sprintf("%d tests: %d passed, %d failed, %d errors, %d skipped, %d xfail", total, counts["PASSED"],
			counts["FAILED"], counts["ERROR"], counts["SKIPPED"], counts["XFAIL"])
	}
	tt := top["PASS"] + top["FAIL"] + top["SKIP"]
	return fmt.Sprintf("%d tests and subtests: %d passed, %d failed, %d skipped (top-level %d: %d passed, %d failed, %d skipped)",
		total, counts["PASS"], counts["FAIL"], counts["SKIP"], tt, top["PASS"], top["FAIL"], top["SKIP"])
}

// exceptionFor is the by-design reason for a test's different outcome in a
// sandbox: its own, its parent's (a subtest of an excepted test), or, for
// a parent test, its failing subtests' when every one is excepted.
func exceptionFor(suite, name string, base, res map[string]string) string {
	if why, ok := exceptions[suite+" "+name]; ok {
		return why
	}
	if i := strings.Index(name, "/"); i >= 0 {
		if why, ok := exceptions[suite+" "+name[:i]]; ok {
			return why
		}
	}
	// A parent failing because of excepted subtests (or missing subtests,
	// when its setup refused what a sandbox refuses).
	var whys []string
	prefix := name + "/"
	for n, st := range res {
		if !strings.HasPrefix(n, prefix) || st == base[n] {
			continue
		}
		if _, ok := exceptions[suite+" "+n]; !ok {
			return ""
		}
		whys = append(whys, strings.TrimPrefix(n, prefix))
	}
	if len(whys) == 0 {
		return ""
	}
	sort.Strings(whys)
	return "its subtests " + strings.Join(whys, ", ") + " (above)"
}
