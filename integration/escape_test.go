package integration

// TestEscapes is the escape suite: table-driven attempts (escape_cases_test.go)
// to make a transparent-mode sandbox change, block or read what it must not —
// production tables, sequences, routines, users, plugins, files, global
// settings, and the proxy's own registry and forks.
//
// Each case runs in a FRESH sandbox (a new client connection through the
// proxy) against a dedicated MariaDB whose proxy account has ALL PRIVILEGES,
// so only the proxy stands between a client and production. Around every case
// the suite takes a fingerprint of everything a case could change (see
// escFingerprint) and requires it to be identical afterwards; every row and
// error a case gets back is scanned for the decoy sandbox's name, secret and
// physical database. A production writer with 1 s lock timeouts runs while
// the case's session is still open, so a case that leaves production locked
// fails too; a direct connection of another user is open during every case
// and must survive it. When a case changed the fingerprint, production is
// rebuilt (escEnv.restore), so later cases are judged on their own.
//
// Run: CI=true go test ./integration -run TestEscapes -count=1 -v
// The last log line of TestEscapes sums up the failures per category.

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/sqlfork/sqlfork-proxy/integration/testdb"
	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// escOutcome is a set of acceptable outcomes of a case.
type escOutcome uint8

const (
	// escOutRefused: a statement failed with an error from the proxy
	// itself (message "sqlfork-proxy: …", one of escRefusalCodes).
	escOutRefused escOutcome = 1 << iota
	// escOutOK: every statement succeeded.
	escOutOK
	// escOutServerError: a statement failed with the server's own error
	// (as it would on a private copy of the database).
	escOutServerError
)

const (
	escRefused              = escOutRefused
	escOK                   = escOutOK
	escOKOrServerError      = escOutOK | escOutServerError
	escRefusedOrOK          = escOutRefused | escOutOK
	escRefusedOrServerError = escOutRefused | escOutServerError
)

func (o escOutcome) String() string {
	var s []string
	if o&escOutRefused != 0 {
		s = append(s, "refused")
	}
	if o&escOutOK != 0 {
		s = append(s, "ok")
	}
	if o&escOutServerError != 0 {
		s = append(s, "server error")
	}
	return strings.Join(s, " or ")
}

// escRefusalCodes are the error codes a proxy refusal may carry.
var escRefusalCodes = map[uint16]bool{1044: true, 1105: true, 1290: true, 1295: true, 1412: true, 1148: true, 1227: true}

// escCheck is a query run in the case's sandbox (same connection) after the
// statements succeeded, with the expected first column of its first row
// ("NULL" for SQL NULL, "<no rows>" for none).
type escCheck struct {
	q, want string
}

// escCase is one escape attempt.
//
// Statements are run in order on one connection through the proxy, each
// with the text protocol (COM_QUERY, every result set read), except:
//   - "prepare:SQL" is a COM_STMT_PREPARE (database/sql Prepare); if the
//     prepare succeeds the statement is executed once with the argument "p"
//     for every '?' (so an unrefused prepare shows its effect).
//
// Placeholders: {secure} (the secure_file_priv directory), {other} (a
// directory outside it), {victim} (connection id of a direct production
// connection of the user 'victim', open during every case and checked to
// survive it), {peer} (upstream connection id of a client of another proxy
// user, open during the case when named), {decoydb} (the decoy sandbox's
// physical database), {decoybinlog} (the binary log holding the decoy's
// UPDATE).
type escCase struct {
	cat, name string
	setup     []string // run directly on production (as root) before the case
	stmts     []string
	expect    escOutcome
	// at is the 1-based index of the statement that must be refused (0:
	// the last); statements before it must succeed and later ones are not
	// run. anyAt accepts a refusal at any statement.
	at    int
	anyAt bool
	// checks run in the sandbox when the outcome was ok.
	checks []escCheck
	// after runs at the end of the case, the session still open (ok or not).
	after func(t *testing.T, r *escRun)
	// Connection: login name (default the proxy's own account; "{user}"
	// in it stands for that account, e.g. "{user}+tag"), password (default
	// the account's), initial database (default esc), extra DSN parameters. loginMayFail accepts a
	// login refused with a server-protocol error (the case then passes if
	// it is refused, and if the login succeeds, the statements must give
	// the expected outcome).
	user, password, db string
	params             []string
	loginMayFail       bool
	// noProxyNames: no row returned may mention the proxy's prefix
	// (_sqlfork) at all.
	noProxyNames bool
	// raw, if set, replaces stmts: it gets a protocol-level connection
	// through the proxy (logged in to esc), sends commands the SQL driver
	// cannot, and returns the response packet that decides the outcome
	// (ERR: refused or server error as for a statement; anything else: ok).
	raw func(e *escEnv, r *raw, vars map[string]string) []byte
	// why documents a non-obvious expectation (shown on failure).
	why string
}

// escRun is the state of a running case, for after hooks.
type escRun struct {
	env     *escEnv
	conn    *sql.Conn
	ctx     context.Context
	results []escStmtResult
}

type escStmtResult struct {
	q    string
	err  error
	rows int
	dur  time.Duration
}

// escEnv is the suite's server, proxy, directories and baseline.
type escEnv struct {
	db              *testdb.Server
	proxy           *proxyHandle
	root            *sql.DB // root over the unix socket (immune to changes of the proxy's account)
	secureDir       string
	otherDir        string
	decoyID         string
	decoyDB         string // physical database of the decoy's fork of esc.secrets
	decoyTbl        string
	decoyBinlog     string // the binary log the decoy's UPDATE went to
	base            escFingerprint
	baseFiles       map[string]bool
	baseUsers       map[string]bool
	baseServers     map[string]bool
	basePlugins     map[string]bool
	baseGlobals     map[string]string
	baseSandboxDBs  string
	forbiddenRows   []string // case-insensitive substrings no row may hold
	forbiddenErrors []string // … nor any error message
}

const (
	escDecoyName   = "decoy_secret_4711"
	escDecoySecret = "DECOY-SECRET-4711"
	escDecoyUser   = "decoyowner"
	escDecoyPW     = "decoy-pw"
	escVictimPW    = "victim-pw"
)

// escGlobals are the global variables the fingerprint records.
var escGlobals = []string{
	"MAX_CONNECTIONS", "MAX_USER_CONNECTIONS", "GENERAL_LOG", "GENERAL_LOG_FILE", "SLOW_QUERY_LOG",
	"EVENT_SCHEDULER", "READ_ONLY", "SQL_MODE", "DEFAULT_STORAGE_ENGINE", "DEFAULT_TMP_STORAGE_ENGINE",
	"ENFORCE_STORAGE_ENGINE", "LOCAL_INFILE", "LOG_BIN_TRUST_FUNCTION_CREATORS", "INNODB_LOCK_WAIT_TIMEOUT",
	"LOCK_WAIT_TIMEOUT", "CHARACTER_SET_SERVER", "COLLATION_SERVER", "CHARACTER_SET_CLIENT", "TIME_ZONE",
	"AUTOCOMMIT", "MAX_ALLOWED_PACKET", "WAIT_TIMEOUT", "INIT_CONNECT", "TX_ISOLATION", "MAX_STATEMENT_TIME",
	"BINLOG_FORMAT", "SERVER_ID", "FOREIGN_KEY_CHECKS", "UNIQUE_CHECKS", "SQL_SELECT_LIMIT", "LOG_WARNINGS",
	"OLD_PASSWORDS", "SECURE_AUTH", "KEY_BUFFER_SIZE", "QUERY_CACHE_TYPE", "QUERY_CACHE_SIZE",
	"INNODB_FILE_PER_TABLE", "INNODB_STRICT_MODE", "SYSTEM_VERSIONING_ALTER_HISTORY", "SQL_LOG_BIN",
	"AUTOMATIC_SP_PRIVILEGES", "DEFAULT_PASSWORD_LIFETIME", "DISCONNECT_ON_EXPIRED_PASSWORD", "MAX_CONNECT_ERRORS",
	"THREAD_POOL_SIZE", "TABLE_OPEN_CACHE", "INNODB_BUFFER_POOL_SIZE", "BINLOG_CHECKSUM", "EXPIRE_LOGS_DAYS",
	"SQL_SAFE_UPDATES", "OPTIMIZER_SWITCH", "NET_READ_TIMEOUT", "NET_WRITE_TIMEOUT", "INTERACTIVE_TIMEOUT",
	"PROXY_PROTOCOL_NETWORKS", "SQL_NOTES", "SQL_WARNINGS", "DELAY_KEY_WRITE", "CONCURRENT_INSERT",
}

// escSchemaFixture creates the production schemas (run as root, with
// multiStatements, default database none). It is run again by restore.
const escSchemaFixture = `
CREATE DATABASE esc;
CREATE DATABASE esc2;
USE esc;
CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(50) NOT NULL, balance INT NOT NULL) ENGINE=InnoDB;
INSERT INTO customers VALUES (1,'ann',100),(2,'bob',200),(3,'cid',300);
CREATE TABLE orders (id INT AUTO_INCREMENT PRIMARY KEY, customer_id INT NOT NULL, amount INT NOT NULL) ENGINE=InnoDB;
INSERT INTO orders (customer_id, amount) VALUES (1,10),(1,20),(2,30);
CREATE TABLE audit (id INT AUTO_INCREMENT PRIMARY KEY, msg VARCHAR(200)) ENGINE=InnoDB;
INSERT INTO audit (msg) VALUES ('a1'),('a2');
CREATE TABLE secrets (id INT PRIMARY KEY, s VARCHAR(100)) ENGINE=InnoDB;
INSERT INTO secrets VALUES (1,'prod-secret-1'),(2,'prod-secret-2');
CREATE TABLE m1 (a INT) ENGINE=MyISAM;
CREATE TABLE m2 (a INT) ENGINE=MyISAM;
INSERT INTO m1 VALUES (1),(2);
INSERT INTO m2 VALUES (3);
CREATE TABLE mm_prod (a INT) ENGINE=MERGE UNION=(m1,m2) INSERT_METHOD=LAST;
CREATE TABLE trg_t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB;
INSERT INTO trg_t VALUES (1, 1);
CREATE TRIGGER trg_t_ai AFTER INSERT ON trg_t FOR EACH ROW INSERT INTO audit (msg) VALUES (CONCAT('trg ', NEW.id));
CREATE SEQUENCE seq1 START WITH 1 INCREMENT BY 1 NOCACHE;
CREATE TABLE seq_default_t (id INT DEFAULT NEXTVAL(seq1), v INT) ENGINE=InnoDB;
INSERT INTO seq_default_t (id, v) VALUES (100, 10);
CREATE FUNCTION f_write(m VARCHAR(100)) RETURNS INT MODIFIES SQL DATA
BEGIN
  INSERT INTO esc.audit (msg) VALUES (m);
  RETURN 1;
END;
CREATE FUNCTION f_read() RETURNS INT READS SQL DATA RETURN (SELECT COUNT(*) FROM customers);
CREATE PROCEDURE p_write() MODIFIES SQL DATA INSERT INTO audit (msg) VALUES ('p_write');
CREATE VIEW v_customers AS SELECT * FROM customers;
CREATE VIEW v_write AS SELECT f_write('via view') AS x;
CREATE VIEW v_nested AS SELECT * FROM v_write;
CREATE EVENT ev1 ON SCHEDULE EVERY 1 DAY STARTS '2030-01-01 00:00:00' DISABLE DO INSERT INTO audit (msg) VALUES ('ev1');
CREATE TABLE esc2.t2 (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB;
INSERT INTO esc2.t2 VALUES (1,'one'),(2,'two');
CREATE SEQUENCE esc2.seq2 NOCACHE;
CREATE FUNCTION esc2.count(x INT) RETURNS INT MODIFIES SQL DATA
BEGIN
  INSERT INTO esc.audit (msg) VALUES ('esc2.count');
  RETURN 1;
END;
CREATE FUNCTION esc2.now() RETURNS INT MODIFIES SQL DATA
BEGIN
  INSERT INTO esc.audit (msg) VALUES ('esc2.now');
  RETURN 1;
END;
CREATE VIEW esc2.vj AS SELECT v.x, jt.a FROM esc.v_write v, JSON_TABLE('[1]', '$[*]' COLUMNS (a INT PATH '$')) jt;
`

// escServerFixture is what lives outside the schemas.
const escServerFixture = `
CREATE USER 'victim'@'%' IDENTIFIED BY '` + escVictimPW + `';
GRANT SELECT ON esc.* TO 'victim'@'%';
INSTALL SONAME 'metadata_lock_info';
`

func TestEscapes(t *testing.T) {
	testdb.Require(t)
	start := time.Now()
	e := escStart(t)

	t.Run("selfcheck/fingerprint-detects-production-changes", e.selfCheckFingerprint)
	t.Run("selfcheck/decoy-strings-are-detected", e.selfCheckDecoy)

	cases := escCases()
	names := map[string]bool{}
	perCat := map[string]int{}
	var cats []string
	for _, c := range cases {
		key := c.cat + "/" + c.name
		if names[key] {
			t.Fatalf("duplicate case %s", key)
		}
		names[key] = true
		if perCat[c.cat] == 0 {
			cats = append(cats, c.cat)
		}
		perCat[c.cat]++
	}
	var summary []string
	for _, c := range cats {
		summary = append(summary, fmt.Sprintf("%s=%d", c, perCat[c]))
	}
	t.Logf("escape suite: %d cases (%s)", len(cases), strings.Join(summary, ", "))

	failedPerCat := map[string][]string{}
	ranPerCat := map[string]int{}
	for _, c := range cases {
		c := c
		ran := false
		if !t.Run(c.cat+"/"+c.name, func(t *testing.T) { ran = true; e.runCase(t, c) }) {
			failedPerCat[c.cat] = append(failedPerCat[c.cat], c.name)
		}
		if ran {
			ranPerCat[c.cat]++
		}
	}
	var lines []string
	total, ran := 0, 0
	for _, c := range cats {
		if ranPerCat[c] == 0 {
			continue
		}
		lines = append(lines, fmt.Sprintf("  %-10s %3d cases, %3d failed %v", c, ranPerCat[c], len(failedPerCat[c]), failedPerCat[c]))
		total += len(failedPerCat[c])
		ran += ranPerCat[c]
	}
	t.Logf("escape suite summary (%s): %d of %d cases failed\n%s", time.Since(start).Round(time.Millisecond),
		total, ran, strings.Join(lines, "\n"))
}

// escStart starts the suite's server, fixture, proxy and decoy.
func escStart(t *testing.T) *escEnv {
	t.Helper()
	base := t.TempDir()
	e := &escEnv{secureDir: filepath.Join(base, "secure"), otherDir: filepath.Join(base, "other")}
	binDir := filepath.Join(base, "binlog")
	for _, d := range []string{e.secureDir, e.otherDir, binDir} {
		if err := os.MkdirAll(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	// Files a case might read through the server.
	escWriteFile(t, filepath.Join(e.secureDir, "in.csv"), "100\tloaded-from-file\n")
	escWriteFile(t, filepath.Join(e.secureDir, "in.xml"), "<rows><row><field name=\"id\">101</field><field name=\"msg\">xml</field></row></rows>\n")
	escWriteFile(t, filepath.Join(e.otherDir, "outside.csv"), "102\toutside\n")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	db, err := testdb.Start(ctx, testdb.Options{ExtraArgs: []string{
		"--secure-file-priv=" + e.secureDir,
		// Binary logs make RESET MASTER / PURGE / FLUSH LOGS visible.
		"--log-bin=" + filepath.Join(binDir, "binlog"),
		// The fixture creates non-deterministic functions with binary logging on.
		"--log-bin-trust-function-creators=1",
	}})
	if err != nil {
		t.Fatalf("start MariaDB: %v", err)
	}
	e.db = db
	t.Cleanup(func() {
		if err := db.Stop(); err != nil {
			t.Logf("stop MariaDB: %v", err)
		}
	})
	e.root = openDB(t, e.rootDSN())
	e.root.SetMaxOpenConns(4)

	escRootScript(t, e.root, escSchemaFixture)
	escRootScript(t, e.root, escServerFixture)
	// Two rotations, so RESET MASTER and PURGE BINARY LOGS change the list.
	escRootScript(t, e.root, "FLUSH BINARY LOGS; FLUSH BINARY LOGS;")

	e.proxy = startTestProxy(t, db.Addr, db, func(c *proxy.Config) {
		c.Mode = "transparent"
		c.Sandbox.ReapInterval = 500 * time.Millisecond
		c.Users = []proxy.User{{Name: escDecoyUser, Password: escDecoyPW}}
	})
	e.makeDecoy(t)

	e.forbiddenRows = []string{escDecoyName, escDecoySecret, e.decoyDB, "_sqlfork_" + e.decoyID}
	e.forbiddenErrors = []string{escDecoySecret, e.decoyDB, "_sqlfork_" + e.decoyID}
	e.rebase(t)
	return e
}

// makeDecoy creates the kept sandbox of another proxy user whose name,
// secret and fork no case may see or change.
func (e *escEnv) makeDecoy(t *testing.T) {
	t.Helper()
	dsn := fmt.Sprintf("%s:%s@tcp(%s)/esc?timeout=5s", escDecoyUser, escDecoyPW, e.proxy.addr)
	d := openDB(t, dsn)
	c, err := d.Conn(context.Background())
	if err != nil {
		t.Fatalf("decoy login: %s", mysqlErr(err))
	}
	for _, q := range []string{"SANDBOX CREATE " + escDecoyName + " TTL 1h", "UPDATE esc.secrets SET s = '" + escDecoySecret + "'"} {
		if _, err := c.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("decoy: %s: %s", q, mysqlErr(err))
		}
	}
	c.Close()
	d.Close()
	if err := e.root.QueryRow("SELECT id FROM _sqlfork_meta.sandboxes WHERE name = ?", escDecoyName).Scan(&e.decoyID); err != nil {
		t.Fatalf("decoy registry row: %v", err)
	}
	if err := e.root.QueryRow("SELECT phys_db, phys_tbl FROM _sqlfork_meta.tables WHERE sandbox_id = ? AND db = 'esc' AND tbl = 'secrets'",
		e.decoyID).Scan(&e.decoyDB, &e.decoyTbl); err != nil {
		t.Fatalf("decoy registry table row: %v", err)
	}
	var s string
	if err := e.root.QueryRow(fmt.Sprintf("SELECT s FROM %s.%s WHERE id = 1", escQI(e.decoyDB), escQI(e.decoyTbl))).Scan(&s); err != nil || s != escDecoySecret {
		t.Fatalf("decoy fork holds %q (%v), want %s", s, err, escDecoySecret)
	}
	var pos, doDB, ignoreDB string
	if err := e.root.QueryRow("SHOW MASTER STATUS").Scan(&e.decoyBinlog, &pos, &doDB, &ignoreDB); err != nil {
		t.Fatalf("SHOW MASTER STATUS: %v", err)
	}
	e.waitDecoyReleased(t)
	t.Logf("decoy sandbox %s (id %s, fork %s.%s, binary log %s)", escDecoyName, e.decoyID, e.decoyDB, e.decoyTbl, e.decoyBinlog)
}

// rebase re-takes the baseline (after start and after a restore).
func (e *escEnv) rebase(t *testing.T) {
	t.Helper()
	old := e.base
	e.base = e.fingerprint(t)
	e.baseFiles = escSetOf(e.base.lines("files"))
	e.baseUsers = escSetOf(escFirstFields(e.base.lines("users")))
	e.baseServers = escSetOf(escFirstFields(e.base.lines("mysql.servers")))
	e.basePlugins = escSetOf(e.base.lines("plugins"))
	e.baseGlobals = map[string]string{}
	for _, l := range e.base.lines("globals") {
		k, v, _ := strings.Cut(l, "=")
		e.baseGlobals[k] = v
	}
	e.baseSandboxDBs = e.sandboxDBs(t)
	if old != nil {
		// The rebuilt fixture should be the same one; binary logs and
		// the decoy's registry timestamps may legitimately differ.
		var diffs []string
		for _, d := range escDiff(old, e.base) {
			if !strings.HasPrefix(d.key, "binlogs") && !strings.HasPrefix(d.key, "decoy") {
				diffs = append(diffs, d.String())
			}
		}
		if len(diffs) > 0 {
			t.Logf("NOTE: after the restore the fixture differs from the original baseline:\n%s", strings.Join(diffs, "\n"))
		}
	}
}

// sandboxDBs lists the sandbox databases on the server (other than the
// registry).
func (e *escEnv) sandboxDBs(t *testing.T) string {
	t.Helper()
	return strings.Join(e.rootLines(t, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE '\\_sqlfork\\_%' AND SCHEMA_NAME NOT IN ('_sqlfork_meta', '_sqlfork_production') ORDER BY 1"), ",")
}

func (e *escEnv) rootDSN() string {
	return fmt.Sprintf("root@unix(%s)/?multiStatements=true&timeout=5s", e.db.Socket)
}

func (e *escEnv) subst(q string, extra map[string]string) string {
	pairs := []string{"{secure}", e.secureDir, "{other}", e.otherDir, "{decoydb}", e.decoyDB, "{decoybinlog}", e.decoyBinlog}
	for k, v := range extra {
		pairs = append(pairs, k, v)
	}
	return strings.NewReplacer(pairs...).Replace(q)
}

// runCase runs one case; see escCase.
func (e *escEnv) runCase(t *testing.T, c escCase) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var problems []string
	fail := func(format string, args ...any) {
		problems = append(problems, fmt.Sprintf(format, args...))
	}

	if err := e.root.PingContext(ctx); err != nil {
		t.Logf("the server does not answer before the case (%v): restoring", err)
		e.restore(t)
	}
	for _, q := range c.setup {
		if _, err := e.root.ExecContext(ctx, e.subst(q, nil)); err != nil {
			t.Fatalf("setup %q: %s", q, mysqlErr(err))
		}
	}
	tStart := time.Now()
	before := e.fingerprint(t)
	tBefore := time.Now()

	// A direct production connection of another user, which no case may
	// kill.
	vars := map[string]string{}
	victimDB := openDB(t, fmt.Sprintf("victim:%s@tcp(%s)/esc?timeout=5s", escVictimPW, e.db.Addr))
	victim, err := victimDB.Conn(ctx)
	if err != nil {
		t.Fatalf("victim connection: %s", mysqlErr(err))
	}
	vars["{victim}"] = queryString(t, victim, "SELECT CONNECTION_ID()")

	// A client of another proxy user, for KILL attempts on a neighbour.
	var peer *sql.Conn
	if strings.Contains(strings.Join(c.stmts, "\n"), "{peer}") {
		pdb := openDB(t, fmt.Sprintf("%s:%s@tcp(%s)/esc?timeout=5s", escDecoyUser, escDecoyPW, e.proxy.addr))
		if peer, err = pdb.Conn(ctx); err != nil {
			t.Fatalf("peer connection: %s", mysqlErr(err))
		}
		vars["{peer}"] = queryString(t, peer, "SELECT CONNECTION_ID()")
	}

	user, pw, dbName := e.db.User, e.db.Password, "esc"
	if c.user != "" {
		user = strings.ReplaceAll(c.user, "{user}", e.db.User)
		if c.password != "" {
			pw = c.password
		}
	}
	if c.db != "" {
		dbName = e.subst(c.db, vars)
	}
	params := append([]string{"multiStatements=true", "timeout=5s"}, c.params...)
	dsn := withParams(fmt.Sprintf("%s:%s@tcp(%s)/%s", user, pw, e.proxy.addr, dbName), params)
	pdb, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	pdb.SetMaxIdleConns(0)

	run := &escRun{env: e, ctx: ctx}
	var got escOutcome
	var firstErr error
	firstErrAt := -1
	var conn *sql.Conn
	var rawConn *raw
	if c.raw != nil {
		err = nil
		rawConn = dialRaw(t, e.proxy.addr, e.db.User, e.db.Password, "esc")
	} else {
		conn, err = pdb.Conn(ctx)
	}
	typed := strings.Join(append(append([]string{dbName, user}, c.params...), c.stmts...), "\n")
	switch {
	case rawConn != nil:
		p := c.raw(e, rawConn, vars)
		res := escStmtResult{q: "(protocol) " + c.name}
		if len(p) > 0 && p[0] == 0xFF && len(p) >= 3 {
			me := &mysql.MySQLError{Number: binary.LittleEndian.Uint16(p[1:3])}
			msg := p[3:]
			if len(msg) >= 6 && msg[0] == '#' {
				copy(me.SQLState[:], msg[1:6])
				msg = msg[6:]
			}
			me.Message = string(msg)
			res.err = me
			firstErr, firstErrAt = me, 0
			e.scanText(me.Message, false, func(string, ...any) {}, 1, "error")
		} else {
			res.rows = 1
			e.scanText(string(p), c.noProxyNames, fail, 1, "response packet")
		}
		run.results = append(run.results, res)
		got = escClassify(firstErr)
		if got == escOutRefused {
			var me *mysql.MySQLError
			errors.As(firstErr, &me)
			// Commands the proxy does not relay at all get 1047 (not
			// a statement refusal); accepted here, and logged.
			t.Logf("refused: %d %s", me.Number, me.Message)
		} else if got == escOutServerError {
			t.Logf("server error: %s", mysqlErr(firstErr))
		} else {
			t.Logf("answered with % x", p[:min(len(p), 24)])
		}
		if c.expect&got == 0 {
			fail("expected %s, got %s", c.expect, func() string {
				if firstErr != nil {
					return mysqlErr(firstErr)
				}
				return fmt.Sprintf("a non-error response % x", p[:min(len(p), 24)])
			}())
		}
		if c.after != nil {
			c.after(t, run)
		}
	case err != nil && c.loginMayFail && escIsServerErr(err):
		t.Logf("login refused (accepted): %s", mysqlErr(err))
		got = c.expect & escOutRefused // a refused login is a refusal
		if got == 0 {
			fail("login failed: %s", mysqlErr(err))
		}
	case err != nil:
		fail("login failed: %s", mysqlErr(err))
	default:
		run.conn = conn
		for i, raw := range c.stmts {
			q := e.subst(raw, vars)
			res := e.execStmt(ctx, conn, q, typed, c.noProxyNames, fail, i+1)
			run.results = append(run.results, res)
			if res.err != nil {
				firstErr, firstErrAt = res.err, i
				break
			}
		}
		got = escClassify(firstErr)
		if got == 0 {
			fail("statement %d failed with a non-server error: %v", firstErrAt+1, firstErr)
		}
		if got == escOutRefused {
			var me *mysql.MySQLError
			errors.As(firstErr, &me)
			t.Logf("refused at statement %d: %d %s", firstErrAt+1, me.Number, me.Message)
			if !escRefusalCodes[me.Number] {
				fail("refused with code %d, which is not one of the accepted refusal codes", me.Number)
			}
			if c.expect&escOutRefused != 0 && !c.anyAt {
				want := len(c.stmts) - 1
				if c.at > 0 {
					want = c.at - 1
				}
				if firstErrAt != want {
					fail("refused at statement %d, want statement %d", firstErrAt+1, want+1)
				}
			}
		}
		if got == escOutServerError {
			t.Logf("server error at statement %d: %s", firstErrAt+1, mysqlErr(firstErr))
		}
		if got != 0 && c.expect&got == 0 {
			if got == escOutOK {
				fail("expected %s, but every statement succeeded", c.expect)
			} else {
				fail("expected %s, got at statement %d: %s", c.expect, firstErrAt+1, mysqlErr(firstErr))
			}
		}
		if got == escOutOK && c.expect&escOutOK != 0 {
			for _, ch := range c.checks {
				if v, err := escScalar(ctx, conn, e.subst(ch.q, vars)); err != nil {
					fail("check %q: %s", ch.q, mysqlErr(err))
				} else if v != ch.want {
					fail("check %q = %q, want %q (the sandbox did not behave as a private copy)", ch.q, v, ch.want)
				}
			}
		}
		if c.after != nil {
			c.after(t, run)
		}
	}

	// Production must not be blocked by the session, still open.
	tRun := time.Now()
	lat, perr := e.probeProduction(ctx)
	if perr != nil {
		fail("production writer blocked while the sandbox session was open (after %s): %v", lat.Round(time.Millisecond), perr)
	}
	if c.cat == "locks" || lat > 300*time.Millisecond {
		t.Logf("production writer latency: %s", lat.Round(time.Microsecond))
	}
	if conn != nil {
		conn.Close()
	}
	if rawConn != nil {
		rawConn.c.Close()
	}
	pdb.Close()

	// Nobody got killed.
	if err := victim.PingContext(ctx); err != nil {
		fail("the direct production connection %s of 'victim' did not survive: %v", vars["{victim}"], err)
	} else if _, err := escScalar(ctx, victim, "SELECT 1"); err != nil {
		fail("the direct production connection %s of 'victim' did not survive: %s", vars["{victim}"], mysqlErr(err))
	}
	victim.Close()
	victimDB.Close()
	if peer != nil {
		if _, err := escScalar(ctx, peer, "SELECT 1"); err != nil {
			fail("the other proxy client (upstream id %s) did not survive: %s", vars["{peer}"], mysqlErr(err))
		}
		peer.Close()
	}

	// The session's unkept sandbox goes with its connection.
	tClose := time.Now()
	if left := e.waitSandboxesGone(t); left != "" {
		fail("sandbox databases still present a minute after the connection closed: %s (baseline: %s)", left, e.baseSandboxDBs)
	}
	tGone := time.Now()
	// Wait until the proxy has let go of the decoy if the case made it
	// load it, so that a change to its registry rows is blamed on this case.
	e.waitDecoyReleased(t)

	after := e.fingerprint(t)
	if d := time.Since(tStart); d > time.Second {
		t.Logf("slow case (%s): fingerprint %s, statements %s, probe and close %s, sandbox discarded after %s, settle and fingerprint %s",
			d.Round(time.Millisecond), tBefore.Sub(tStart).Round(time.Millisecond), tRun.Sub(tBefore).Round(time.Millisecond),
			tClose.Sub(tRun).Round(time.Millisecond), tGone.Sub(tClose).Round(time.Millisecond), time.Since(tGone).Round(time.Millisecond))
	}
	changed := false
	if down, ok := after["server"]; ok {
		changed = true
		fail("the server is gone after the case: %s", down)
	} else if d := escDiff(before, after); len(d) > 0 {
		changed = true
		var s []string
		for _, x := range d {
			s = append(s, x.String())
		}
		fail("production (or the decoy) changed:\n%s", strings.Join(s, "\n"))
	}

	if len(problems) > 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "case %s/%s (expect %s)", c.cat, c.name, c.expect)
		if c.why != "" {
			fmt.Fprintf(&b, " — %s", c.why)
		}
		b.WriteString("\nstatements:\n")
		for i, raw := range c.stmts {
			fmt.Fprintf(&b, "  %d. %q", i+1, e.subst(raw, vars))
			if i < len(run.results) {
				r := run.results[i]
				if r.err != nil {
					fmt.Fprintf(&b, "\n     -> %s", mysqlErr(r.err))
				} else {
					fmt.Fprintf(&b, "\n     -> ok, %d rows (%s)", r.rows, r.dur.Round(time.Microsecond))
				}
			} else if run.conn != nil {
				b.WriteString("\n     -> not run")
			}
			b.WriteString("\n")
		}
		b.WriteString("problems:\n")
		for _, p := range problems {
			fmt.Fprintf(&b, "  - %s\n", strings.ReplaceAll(p, "\n", "\n    "))
		}
		t.Error(b.String())
	}
	// Production is rebuilt when the case changed it, so later cases are
	// judged on their own.
	if changed {
		e.restore(t)
	}
}

// execStmt runs one statement, reads every result set, and scans rows and
// errors for forbidden strings.
func (e *escEnv) execStmt(ctx context.Context, c *sql.Conn, q, typed string, noProxyNames bool, fail func(string, ...any), n int) escStmtResult {
	res := escStmtResult{q: q}
	t0 := time.Now()
	defer func() { res.dur = time.Since(t0) }()
	scan := func(rows *sql.Rows) error {
		defer rows.Close()
		for {
			cols, _ := rows.Columns()
			e.scanText(strings.Join(cols, "|"), noProxyNames, fail, n, "column name")
			for rows.Next() {
				vals, err := scanRow[sql.RawBytes](rows, len(cols))
				if err != nil {
					return err
				}
				res.rows++
				var sb strings.Builder
				for _, v := range vals {
					sb.Write(v)
					sb.WriteByte('|')
				}
				e.scanText(sb.String(), noProxyNames, fail, n, "row")
			}
			if err := rows.Err(); err != nil {
				return err
			}
			if !rows.NextResultSet() {
				break
			}
		}
		return rows.Err()
	}
	if strings.HasPrefix(q, "prepare:") {
		text := strings.TrimPrefix(q, "prepare:")
		st, err := c.PrepareContext(ctx, text)
		if err != nil {
			res.err = err
		} else {
			args := make([]any, strings.Count(text, "?"))
			for i := range args {
				args[i] = "p"
			}
			rows, err := st.QueryContext(ctx, args...)
			if err == nil {
				err = scan(rows)
			}
			res.err = err
			st.Close()
		}
	} else {
		rows, err := c.QueryContext(ctx, q)
		if err == nil {
			err = scan(rows)
		}
		res.err = err
	}
	if res.err != nil {
		// An error may repeat what the client typed (e.g. "access to
		// `<the decoy's database>` is denied"), nothing more.
		msg := res.err.Error()
		for _, f := range e.forbiddenErrors {
			if f != "" && strings.Contains(strings.ToLower(msg), strings.ToLower(f)) && !strings.Contains(strings.ToLower(q+typed), strings.ToLower(f)) {
				fail("statement %d: the error message reveals %q: %s", n, f, msg)
			}
		}
		// The proxy maps physical database names in errors back to
		// logical ones: no error may name a sandbox database the client
		// did not name itself.
		if strings.Contains(strings.ToLower(msg), "_sqlfork") && !strings.Contains(strings.ToLower(q+typed), "_sqlfork") {
			fail("statement %d: the error message names a proxy database: %s", n, msg)
		}
	}
	return res
}

func (e *escEnv) scanText(s string, noProxyNames bool, fail func(string, ...any), n int, what string) {
	ls := strings.ToLower(s)
	for _, f := range e.forbiddenRows {
		if f != "" && strings.Contains(ls, strings.ToLower(f)) {
			fail("statement %d: a %s returned to the client reveals %q: %.300q", n, what, f, s)
			return
		}
	}
	if noProxyNames && strings.Contains(ls, "_sqlfork") {
		fail("statement %d: a %s returned to the client names a proxy database: %.300q", n, what, s)
	}
}

// escClassify maps a statement error to an outcome (0: not a server error).
func escClassify(err error) escOutcome {
	if err == nil {
		return escOutOK
	}
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return 0
	}
	if strings.HasPrefix(me.Message, "sqlfork-proxy:") {
		return escOutRefused
	}
	return escOutServerError
}

func escIsServerErr(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me)
}

func escScalar(ctx context.Context, c interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, q string) (string, error) {
	rows, err := c.QueryContext(ctx, q)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return "", err
		}
		return "<no rows>", nil
	}
	cols, _ := rows.Columns()
	vals, err := scanRow[sql.NullString](rows, len(cols))
	if err != nil {
		return "", err
	}
	for rows.Next() {
	}
	if !vals[0].Valid {
		return "NULL", rows.Err()
	}
	return vals[0].String, rows.Err()
}

// probeProduction writes production rows (without changing them) with 1 s
// lock timeouts, on a fresh direct connection.
func (e *escEnv) probeProduction(ctx context.Context) (time.Duration, error) {
	t0 := time.Now()
	db, err := sql.Open("mysql", e.rootDSN())
	if err != nil {
		return 0, err
	}
	defer db.Close()
	c, err := db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	for _, q := range []string{
		"SET SESSION innodb_lock_wait_timeout = 1, lock_wait_timeout = 1",
		"UPDATE esc.customers SET balance = balance WHERE id = 1",
		"UPDATE esc.customers SET balance = balance WHERE id = 3",
		"UPDATE esc.audit SET msg = msg WHERE id = 1",
		"UPDATE esc.orders SET amount = amount WHERE id = 1",
		"UPDATE esc.secrets SET s = s WHERE id = 1",
		"UPDATE esc.m1 SET a = a WHERE a = 1",
		"UPDATE esc2.t2 SET v = v WHERE id = 1",
	} {
		if _, err := c.ExecContext(ctx, q); err != nil {
			var me *mysql.MySQLError
			if errors.As(err, &me) && (me.Number == 1146 || me.Number == 1049) {
				continue // the fixture itself is gone; the fingerprint says so
			}
			return time.Since(t0), fmt.Errorf("%s: %w", q, err)
		}
	}
	return time.Since(t0), nil
}

// waitDecoyReleased waits until the proxy no longer holds the decoy in
// memory. A process loads a kept sandbox to look at it (an ATTACH, even a
// refused one) and its reaper writes what it holds (last_active…) into the
// registry until the sandbox has been idle for a reap interval and is
// released; after that nothing more is written, so a change to the decoy's
// registry rows is blamed on the case that caused it.
func (e *escEnv) waitDecoyReleased(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for e.proxy.srv.Sandboxes().Counts()["kept"] > 0 {
		if time.Now().After(deadline) {
			t.Logf("NOTE: the proxy still holds a kept sandbox in memory after 15 s")
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitSandboxesGone waits until only the baseline sandbox databases remain;
// it returns the list if they do not within 5 s.
func (e *escEnv) waitSandboxesGone(t *testing.T) string {
	deadline := time.Now().Add(testkit.WaitLimit) // a hang guard, not a speed bound
	for {
		cur := e.sandboxDBs(t)
		if cur == e.baseSandboxDBs {
			return ""
		}
		if time.Now().After(deadline) {
			return cur
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ---- fingerprint ----

// escFingerprint maps a part name to its value (text, lines joined).
type escFingerprint map[string]string

func (f escFingerprint) lines(key string) []string {
	if f[key] == "" {
		return nil
	}
	return strings.Split(f[key], "\n")
}

type escDiffEntry struct{ key, before, after string }

func (d escDiffEntry) String() string {
	short := func(s string) string {
		if len(s) > 600 {
			return s[:600] + "…"
		}
		return s
	}
	b, a := strings.Split(d.before, "\n"), strings.Split(d.after, "\n")
	if len(b) > 1 || len(a) > 1 {
		// Line sets: show what was removed and added.
		bs, as := escSetOf(b), escSetOf(a)
		var out []string
		for _, l := range b {
			if !as[l] {
				out = append(out, "      - "+short(l))
			}
		}
		for _, l := range a {
			if !bs[l] {
				out = append(out, "      + "+short(l))
			}
		}
		if len(out) == 0 {
			out = append(out, "      (order changed)")
		}
		return fmt.Sprintf("  %s:\n%s", d.key, strings.Join(out, "\n"))
	}
	return fmt.Sprintf("  %s:\n      - %s\n      + %s", d.key, short(d.before), short(d.after))
}

func escDiff(a, b escFingerprint) []escDiffEntry {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var sorted []string
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var out []escDiffEntry
	for _, k := range sorted {
		va, oka := a[k]
		vb, okb := b[k]
		if !oka {
			va = "<absent>"
		}
		if !okb {
			vb = "<absent>"
		}
		if va != vb {
			out = append(out, escDiffEntry{k, va, vb})
		}
	}
	return out
}

var escPwChanged = regexp.MustCompile(`"password_last_changed":\d+,?`)

// fingerprint records everything a case could change outside its sandbox.
func (e *escEnv) fingerprint(t *testing.T) escFingerprint {
	t.Helper()
	f := escFingerprint{}
	const notSystem = "NOT IN ('mysql','information_schema','performance_schema','sys') AND %[1]s NOT LIKE '\\_sqlfork%%'"
	ns := func(col string) string { return fmt.Sprintf(notSystem, col) }

	f["schemas"] = strings.Join(e.rootLines(t, "SELECT CONCAT_WS(' ', SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME NOT LIKE '\\_sqlfork%' ORDER BY 1"), "\n")
	type tbl struct{ db, name, typ string }
	var tables []tbl
	rows, err := e.root.Query("SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE, IFNULL(ENGINE, '') FROM information_schema.TABLES WHERE TABLE_SCHEMA " + ns("TABLE_SCHEMA") + " ORDER BY 1, 2")
	if err != nil {
		// The server is gone (or worse): that is the fingerprint.
		return escFingerprint{"server": "ERROR " + err.Error()}
	}
	var list []string
	for rows.Next() {
		var x tbl
		var engine string
		if err := rows.Scan(&x.db, &x.name, &x.typ, &engine); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, x)
		list = append(list, fmt.Sprintf("%s.%s %s %s", x.db, x.name, x.typ, engine))
	}
	rows.Close()
	f["tables"] = strings.Join(list, "\n")
	for _, x := range tables {
		name := escQI(x.db) + "." + escQI(x.name)
		key := x.db + "." + x.name
		switch x.typ {
		case "BASE TABLE", "SYSTEM VERSIONED":
			f["checksum "+key] = e.rootText(t, "CHECKSUM TABLE "+name, 1)
			f["create "+key] = e.rootText(t, "SHOW CREATE TABLE "+name, 1)
		case "SEQUENCE":
			f["sequence "+key] = e.rootText(t, "SELECT * FROM "+name, -1)
			f["create "+key] = e.rootText(t, "SHOW CREATE SEQUENCE "+name, 1)
		case "VIEW":
			f["create "+key] = e.rootText(t, "SHOW CREATE VIEW "+name, 1)
		}
	}
	for _, r := range e.rootRows(t, "SELECT ROUTINE_SCHEMA, ROUTINE_NAME, ROUTINE_TYPE FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA "+ns("ROUTINE_SCHEMA")+" ORDER BY 1, 2, 3") {
		f["create "+strings.ToLower(r[2])+" "+r[0]+"."+r[1]] = e.rootText(t, "SHOW CREATE "+r[2]+" "+escQI(r[0])+"."+escQI(r[1]), 2)
	}
	for _, r := range e.rootRows(t, "SELECT TRIGGER_SCHEMA, TRIGGER_NAME FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA "+ns("TRIGGER_SCHEMA")+" ORDER BY 1, 2") {
		f["create trigger "+r[0]+"."+r[1]] = e.rootText(t, "SHOW CREATE TRIGGER "+escQI(r[0])+"."+escQI(r[1]), 2)
	}
	for _, r := range e.rootRows(t, "SELECT EVENT_SCHEMA, EVENT_NAME, STATUS, IFNULL(LAST_EXECUTED, '') FROM information_schema.EVENTS ORDER BY 1, 2") {
		f["create event "+r[0]+"."+r[1]] = e.rootText(t, "SHOW CREATE EVENT "+escQI(r[0])+"."+escQI(r[1]), 3) + "\nstatus " + r[2] + " last executed " + r[3]
	}

	var users []string
	for _, l := range e.rootLines(t, "SELECT CONCAT(User, '@', Host, ' ', Priv) FROM mysql.global_priv ORDER BY 1") {
		users = append(users, escPwChanged.ReplaceAllString(l, ""))
	}
	f["users"] = strings.Join(users, "\n")
	for k, q := range map[string]string{
		"mysql.db":            "SELECT * FROM mysql.db ORDER BY Host, Db, User",
		"mysql.tables_priv":   "SELECT Host, Db, User, Table_name, Grantor, Table_priv, Column_priv FROM mysql.tables_priv ORDER BY 1, 2, 3, 4",
		"mysql.columns_priv":  "SELECT Host, Db, User, Table_name, Column_name, Column_priv FROM mysql.columns_priv ORDER BY 1, 2, 3, 4, 5",
		"mysql.procs_priv":    "SELECT Host, Db, User, Routine_name, Routine_type, Grantor, Proc_priv FROM mysql.procs_priv ORDER BY 1, 2, 3, 4",
		"mysql.roles_mapping": "SELECT * FROM mysql.roles_mapping ORDER BY 1, 2, 3",
		"mysql.proxies_priv":  "SELECT Host, User, Proxied_host, Proxied_user, With_grant FROM mysql.proxies_priv ORDER BY 1, 2, 3, 4",
		"mysql.servers":       "SELECT Server_name, Host, Db, Username, Port, Socket, Wrapper, Owner FROM mysql.servers ORDER BY 1",
		"mysql.plugin":        "SELECT name, dl FROM mysql.plugin ORDER BY 1",
		"plugins":             "SELECT CONCAT(PLUGIN_NAME, ' ', PLUGIN_STATUS) FROM information_schema.PLUGINS ORDER BY 1",
		"globals":             "SELECT CONCAT(VARIABLE_NAME, '=', VARIABLE_VALUE) FROM information_schema.GLOBAL_VARIABLES WHERE VARIABLE_NAME IN ('" + strings.Join(escGlobals, "','") + "') ORDER BY 1",
		"binlogs":             "SHOW BINARY LOGS",
		"xa prepared":         "XA RECOVER FORMAT='SQL'",
	} {
		if k == "binlogs" {
			f[k] = e.rootText(t, q, 0)
			continue
		}
		f[k] = strings.Join(e.rootLinesAll(t, q), "\n")
	}

	var files []string
	for _, dir := range []string{e.secureDir, e.otherDir} {
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == dir {
				return nil
			}
			rel, _ := filepath.Rel(filepath.Dir(dir), p)
			if d.IsDir() {
				files = append(files, rel+"/")
				return nil
			}
			info, _ := d.Info()
			size := int64(-1)
			if info != nil {
				size = info.Size()
			}
			files = append(files, fmt.Sprintf("%s %d", rel, size))
			return nil
		})
	}
	sort.Strings(files)
	f["files"] = strings.Join(files, "\n")

	// The decoy: its registry rows (lease_until is renewed by the reaper,
	// so it is left out) and its fork.
	if e.decoyID != "" {
		f["decoy registry sandboxes"] = strings.Join(e.rootLinesAll(t, "SELECT id, name, owner, kept, created_at, expires_at, last_active, proxy_id FROM _sqlfork_meta.sandboxes WHERE id = '"+e.decoyID+"' OR name = '"+escDecoyName+"' ORDER BY id"), "\n")
		f["decoy registry tables"] = strings.Join(e.rootLinesAll(t, "SELECT * FROM _sqlfork_meta.tables WHERE sandbox_id = '"+e.decoyID+"' ORDER BY db, tbl"), "\n")
		f["decoy fork checksum"] = e.rootText(t, "CHECKSUM TABLE "+escQI(e.decoyDB)+"."+escQI(e.decoyTbl), 1)
	}
	return f
}

// rootRows runs q as root and returns every row as strings (NULL as
// "NULL"); an error is returned as one row "ERROR …" so that it shows in a
// diff instead of stopping the suite.
func (e *escEnv) rootRows(t *testing.T, q string) [][]string {
	t.Helper()
	return rvQuery(e.root, q)
}

// rootLines is the first column of every row.
func (e *escEnv) rootLines(t *testing.T, q string) []string {
	var out []string
	for _, r := range e.rootRows(t, q) {
		out = append(out, r[0])
	}
	return out
}

// rootLinesAll is every row with its columns joined by '|'.
func (e *escEnv) rootLinesAll(t *testing.T, q string) []string {
	var out []string
	for _, r := range e.rootRows(t, q) {
		out = append(out, strings.Join(r, "|"))
	}
	return out
}

// rootText is column col of every row (-1: all columns), lines joined.
func (e *escEnv) rootText(t *testing.T, q string, col int) string {
	var out []string
	for _, r := range e.rootRows(t, q) {
		switch {
		case col < 0 || len(r) == 1:
			out = append(out, strings.Join(r, "|"))
		case col < len(r):
			out = append(out, r[col])
		}
	}
	return strings.Join(out, "\n")
}

// ---- restore ----

// restore brings production back to the fixture (after a failed case).
func (e *escEnv) restore(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := e.root.PingContext(ctx); err != nil {
		t.Logf("restore: the server does not answer (%v); restarting it", err)
		if err := e.db.Restart(ctx); err != nil {
			t.Fatalf("restore: restart MariaDB: %v", err)
		}
	}
	exec := func(q string) {
		if _, err := e.root.ExecContext(ctx, q); err != nil {
			t.Logf("restore: %s: %s", q, mysqlErr(err))
		}
	}
	// Prepared XA transactions outlive their connection and hold locks.
	for _, r := range e.rootRows(t, "XA RECOVER FORMAT='SQL'") {
		if len(r) == 4 && !strings.HasPrefix(r[0], "ERROR") {
			// 1402 XA_RBROLLBACK: rolled back (as asked).
			if _, err := e.root.ExecContext(ctx, "XA ROLLBACK "+r[3]); err != nil && !strings.HasPrefix(mysqlErr(err), "1402") {
				t.Logf("restore: XA ROLLBACK %s: %s", r[3], mysqlErr(err))
			}
		}
	}
	// Global variables.
	cur := map[string]string{}
	for _, l := range e.rootLines(t, "SELECT CONCAT(VARIABLE_NAME, '=', VARIABLE_VALUE) FROM information_schema.GLOBAL_VARIABLES WHERE VARIABLE_NAME IN ('"+strings.Join(escGlobals, "','")+"')") {
		k, v, _ := strings.Cut(l, "=")
		cur[k] = v
	}
	numeric := regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)
	for k, v := range e.baseGlobals {
		if cur[k] == v {
			continue
		}
		val := "'" + strings.ReplaceAll(v, "'", "''") + "'"
		if numeric.MatchString(v) {
			val = v
		}
		exec("SET GLOBAL " + k + " = " + val)
	}
	// Users and roles: drop the new, rebuild the victim and the proxy's
	// account.
	for _, r := range e.rootRows(t, "SELECT User, Host, JSON_VALUE(Priv, '$.is_role') FROM mysql.global_priv") {
		if len(r) < 3 {
			continue
		}
		if !e.baseUsers[r[0]+"@"+r[1]] {
			if r[2] == "true" {
				exec("DROP ROLE IF EXISTS " + escQS(r[0]))
			} else {
				exec("DROP USER IF EXISTS " + escQS(r[0]) + "@" + escQS(r[1]))
			}
		}
	}
	exec("DROP USER IF EXISTS 'victim'@'%'")
	exec("CREATE USER 'victim'@'%' IDENTIFIED BY '" + escVictimPW + "'")
	exec("GRANT SELECT ON esc.* TO 'victim'@'%'")
	// The proxy's own account, if a case changed it.
	curUsers := escSetOf(e.rootLines(t, "SELECT CONCAT(User, '@', Host, ' ', Priv) FROM mysql.global_priv"))
	baseUsers := escSetOf(e.base.lines("users"))
	for _, host := range []string{"127.0.0.1", "localhost"} {
		prefix := e.db.User + "@" + host + " "
		same := false
		for l := range curUsers {
			if strings.HasPrefix(l, prefix) && baseUsers[escPwChanged.ReplaceAllString(l, "")] {
				same = true
			}
		}
		if same {
			continue
		}
		u := escQS(e.db.User) + "@" + escQS(host)
		exec("CREATE USER IF NOT EXISTS " + u + " IDENTIFIED VIA mysql_native_password USING PASSWORD(" + escQS(e.db.Password) + ")")
		exec("ALTER USER " + u + " IDENTIFIED VIA mysql_native_password USING PASSWORD(" + escQS(e.db.Password) + ") ACCOUNT UNLOCK")
		exec("GRANT ALL PRIVILEGES ON *.* TO " + u + " WITH GRANT OPTION")
	}
	// Servers and plugins.
	for _, r := range e.rootRows(t, "SELECT Server_name FROM mysql.servers") {
		if !e.baseServers[r[0]] && !strings.HasPrefix(r[0], "ERROR") {
			exec("DROP SERVER IF EXISTS " + escQI(r[0]))
		}
	}
	for _, r := range e.rootRows(t, "SELECT PLUGIN_NAME, PLUGIN_STATUS FROM information_schema.PLUGINS") {
		if len(r) == 2 && !e.basePlugins[r[0]+" "+r[1]] {
			exec("UNINSTALL PLUGIN " + escQI(r[0]))
		}
	}
	if !escSetOf(e.rootLines(t, "SELECT PLUGIN_NAME FROM information_schema.PLUGINS"))["METADATA_LOCK_INFO"] {
		exec("INSTALL SONAME 'metadata_lock_info'")
	}
	exec("FLUSH PRIVILEGES")
	// Files.
	for _, dir := range []string{e.secureDir, e.otherDir} {
		var extra []string
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == dir {
				return nil
			}
			rel, _ := filepath.Rel(filepath.Dir(dir), p)
			info, _ := d.Info()
			key := rel + "/"
			if !d.IsDir() && info != nil {
				key = fmt.Sprintf("%s %d", rel, info.Size())
			}
			if !e.baseFiles[key] {
				extra = append(extra, p)
			}
			return nil
		})
		for _, p := range extra {
			if err := os.RemoveAll(p); err != nil && !os.IsNotExist(err) {
				t.Logf("restore: remove %s: %v", p, err)
			}
		}
	}
	escWriteFile(t, filepath.Join(e.secureDir, "in.csv"), "100\tloaded-from-file\n")
	escWriteFile(t, filepath.Join(e.secureDir, "in.xml"), "<rows><row><field name=\"id\">101</field><field name=\"msg\">xml</field></row></rows>\n")
	escWriteFile(t, filepath.Join(e.otherDir, "outside.csv"), "102\toutside\n")
	// Schemas: drop every non-system one and rebuild the fixture.
	for _, s := range e.rootLines(t, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME NOT IN ('mysql','information_schema','performance_schema','sys') AND SCHEMA_NAME NOT LIKE '\\_sqlfork%'") {
		exec("DROP DATABASE IF EXISTS " + escQI(s))
	}
	if _, err := e.root.ExecContext(ctx, escSchemaFixture); err != nil {
		t.Fatalf("restore: rebuild the fixture: %s", mysqlErr(err))
	}
	// The decoy: put its secret back, or make it again if it is gone.
	var n int
	_ = e.root.QueryRow("SELECT COUNT(*) FROM _sqlfork_meta.sandboxes WHERE id = ?", e.decoyID).Scan(&n)
	if n == 1 {
		exec(fmt.Sprintf("UPDATE %s.%s SET s = '%s' WHERE id IN (1, 2)", escQI(e.decoyDB), escQI(e.decoyTbl), escDecoySecret))
	} else {
		t.Logf("restore: the decoy sandbox is gone; making it again")
		e.makeDecoy(t)
	}
	e.rebase(t)
	t.Logf("restore: production rebuilt")
}

// ---- self-checks ----

// selfCheckFingerprint changes production directly in every way the
// fingerprint claims to see, and checks it does (then restores).
func (e *escEnv) selfCheckFingerprint(t *testing.T) {
	base := e.fingerprint(t)
	if d := escDiff(e.base, base); len(d) > 0 {
		t.Fatalf("the fingerprint is not stable:\n%v", d)
	}
	muts := []struct {
		key string // a part of the fingerprint that must change
		do  []string
	}{
		{"checksum esc.customers", []string{"UPDATE esc.customers SET balance = balance + 1 WHERE id = 1"}},
		{"checksum esc.m1", []string{"INSERT INTO esc.m1 VALUES (9)"}},
		{"checksum esc.m2", []string{"INSERT INTO esc.mm_prod VALUES (9)"}},
		{"sequence esc.seq1", []string{"SELECT NEXTVAL(esc.seq1)"}},
		{"create esc.audit", []string{"ALTER TABLE esc.audit AUTO_INCREMENT = 50"}},
		{"create esc.v_customers", nil}, // placeholder, replaced below
		{"create function esc.f_write", []string{"DROP FUNCTION esc.f_write"}},
		{"create trigger esc.trg_t_ai", []string{"DROP TRIGGER esc.trg_t_ai"}},
		{"create event esc.ev1", []string{"ALTER EVENT esc.ev1 ENABLE"}},
		{"schemas", []string{"ALTER DATABASE esc CHARACTER SET latin1"}},
		{"tables", []string{"CREATE TABLE esc2.new_t (a INT)"}},
		{"users", []string{"SET PASSWORD FOR 'victim'@'%' = PASSWORD('changed')"}},
		{"mysql.db", []string{"GRANT INSERT ON esc.* TO 'victim'@'%'"}},
		{"mysql.servers", []string{"CREATE SERVER s1 FOREIGN DATA WRAPPER mysql OPTIONS (HOST '127.0.0.1', DATABASE 'esc', USER 'root', PORT 1)"}},
		{"plugins", []string{"UNINSTALL SONAME 'metadata_lock_info'"}},
		{"globals", []string{"SET GLOBAL max_connections = 77"}},
		{"binlogs", []string{"FLUSH BINARY LOGS"}},
		{"xa prepared", nil}, // needs its own connection, below
		{"files", []string{"SELECT * FROM esc.customers INTO OUTFILE '{secure}/selfcheck.txt'"}},
		{"decoy fork checksum", []string{fmt.Sprintf("UPDATE %s.%s SET s = 'changed' WHERE id = 1", escQI(e.decoyDB), escQI(e.decoyTbl))}},
		{"decoy registry tables", []string{"UPDATE _sqlfork_meta.tables SET row_count = row_count + 1 WHERE sandbox_id = '" + e.decoyID + "'"}},
	}
	muts[5].do = []string{"CREATE OR REPLACE VIEW esc.v_customers AS SELECT id FROM esc.customers"}
	for _, m := range muts {
		before := e.fingerprint(t)
		if m.key == "xa prepared" {
			// A prepared XA transaction outlives its connection.
			xdb := openDB(t, e.rootDSN())
			c, err := xdb.Conn(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{"XA START 'selfcheck'", "XA END 'selfcheck'", "XA PREPARE 'selfcheck'"} {
				if _, err := c.ExecContext(context.Background(), q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			c.Close()
			xdb.Close()
		}
		for _, q := range m.do {
			if _, err := e.root.Exec(e.subst(q, nil)); err != nil {
				t.Fatalf("self-check mutation %q: %s", q, mysqlErr(err))
			}
		}
		after := e.fingerprint(t)
		found := false
		for _, d := range escDiff(before, after) {
			if d.key == m.key {
				found = true
			}
		}
		if !found {
			t.Errorf("the fingerprint did not see %v (part %q); diff: %v", m.do, m.key, escDiff(before, after))
		}
	}
	// Registry rows are not part of the fixture: undo that one by hand.
	if _, err := e.root.Exec("UPDATE _sqlfork_meta.tables SET row_count = row_count - 1 WHERE sandbox_id = '" + e.decoyID + "'"); err != nil {
		t.Fatal(err)
	}
	// The detector's own report reads well, and the restore works.
	t.Logf("example fingerprint diff after the self-check mutations:\n%s", func() string {
		var s []string
		for _, d := range escDiff(base, e.fingerprint(t)) {
			s = append(s, d.String())
		}
		return strings.Join(s, "\n")
	}())
	e.restore(t)
	for _, d := range escDiff(base, e.fingerprint(t)) {
		if !strings.HasPrefix(d.key, "binlogs") && !strings.HasPrefix(d.key, "decoy registry sandboxes") {
			t.Errorf("restore did not bring back %s", d)
		}
	}
}

// selfCheckDecoy proves the decoy's strings are there to be found and that
// the scanner finds them: its owner reads them through the proxy, on the
// same code path the cases use.
func (e *escEnv) selfCheckDecoy(t *testing.T) {
	ctx := context.Background()
	d := openDB(t, fmt.Sprintf("%s:%s@tcp(%s)/esc?multiStatements=true", escDecoyUser, escDecoyPW, e.proxy.addr))
	c, err := d.Conn(ctx)
	if err != nil {
		t.Fatal(mysqlErr(err))
	}
	defer c.Close()
	for _, q := range []string{"SANDBOX LIST", "SANDBOX ATTACH " + escDecoyName + "; SELECT s FROM esc.secrets WHERE id = 1"} {
		var found []string
		res := e.execStmt(ctx, c, q, "", true, func(format string, args ...any) { found = append(found, fmt.Sprintf(format, args...)) }, 1)
		if res.err != nil {
			t.Fatalf("%s: %s", q, mysqlErr(res.err))
		}
		if len(found) == 0 {
			t.Errorf("%s as the decoy's owner: the scanner found nothing; it would miss a leak", q)
		} else {
			t.Logf("%s as the decoy's owner: detected: %s", q, found[0])
		}
	}
	// An error message naming the decoy's fork is caught too.
	var found []string
	e.execStmt(ctx, c, "SELECT * FROM `no_such_table_"+escDecoySecret+"`", "", false, func(format string, args ...any) { found = append(found, fmt.Sprintf(format, args...)) }, 1)
	if len(found) != 0 {
		t.Errorf("an error message repeating what the client typed was reported: %v", found)
	}
	// … but one the client did not type is.
	found = nil
	e.forbiddenErrors = append(e.forbiddenErrors, "doesn't exist")
	e.execStmt(ctx, c, "SELECT * FROM `no_such_table`", "", false, func(format string, args ...any) { found = append(found, fmt.Sprintf(format, args...)) }, 1)
	e.forbiddenErrors = e.forbiddenErrors[:len(e.forbiddenErrors)-1]
	if len(found) == 0 {
		t.Errorf("a forbidden string in an error message was not detected")
	}
	// The check-against-production part: a direct read of the fork.
	var s string
	if err := e.root.QueryRow(fmt.Sprintf("SELECT s FROM %s.%s WHERE id = 1", escQI(e.decoyDB), escQI(e.decoyTbl))).Scan(&s); err != nil || s != escDecoySecret {
		t.Errorf("decoy fork reads %q (%v)", s, err)
	}
	c.Close()
	d.Close()
	e.waitDecoyReleased(t)
	if left := e.waitSandboxesGone(t); left != "" {
		t.Errorf("after the decoy owner detached: sandbox databases %s, want %s", left, e.baseSandboxDBs)
	}
	e.rebase(t) // last_active of the decoy moved
}

// ---- small helpers ----

func escRootScript(t *testing.T, db *sql.DB, script string) {
	t.Helper()
	if _, err := db.Exec(script); err != nil {
		t.Fatalf("fixture: %s", mysqlErr(err))
	}
}

func escWriteFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o666); err != nil {
		t.Fatal(err)
	}
}

func escQI(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }
func escQS(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", "''") + "'"
}

func escSetOf(l []string) map[string]bool {
	m := map[string]bool{}
	for _, s := range l {
		m[s] = true
	}
	return m
}

func escFirstFields(l []string) []string {
	var out []string
	for _, s := range l {
		f, _, _ := strings.Cut(s, " ")
		out = append(out, f)
	}
	return out
}
