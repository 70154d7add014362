package integration

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gmysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-sql-driver/mysql"

	"github.com/sqlfork/sqlfork-proxy/integration/testdb"
	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// TestIsolationBetweenProxyUsers: two proxy users, alice and bob, mapped
// to the SAME upstream account, each with sandboxes of their own. The
// upstream would let either reach everything of the other's; through the
// proxy bob has no read, write, kill, lock or metadata path to alice's
// sessions and sandboxes — by physical names, the registry, the process
// list, KILL, information_schema, SHOW, the server's statistics, logins,
// protocol commands, files or GET_LOCK — in a sandbox and outside one
// (explicit mode on production). Each refusal is checked for its error
// code; where bob's equivalent action on his own objects can succeed, it
// must, and where the shared account reaches alice's objects directly,
// a direct connection shows it does (so each check can fail). Run with
// the ALL PRIVILEGES account and with the least-privilege one.
func TestIsolationBetweenProxyUsers(t *testing.T) {
	for _, acct := range []string{"all privileges", "least privilege"} {
		t.Run(acct, func(t *testing.T) {
			db, p := sharedAccountProxy(t, acct, "explicit", nil)
			upDSN := directDSN(db, "")
			if acct == "least privilege" {
				upDSN = fmt.Sprintf("%s:%s@tcp(%s)/", sandboxUser, sandboxPassword, db.Addr)
			}
			isolationSuite(t, db, p, openDB(t, upDSN))
		})
	}
}

// sharedAccountProxy starts a proxy in mode for the users alice and bob,
// both mapped to one upstream account: the least-privilege one when acct
// is "least privilege", else the ALL PRIVILEGES one (which may write
// production); its reaper runs every 500 ms, and mutate, when set, changes
// the configuration further.
func sharedAccountProxy(t *testing.T, acct, mode string, mutate func(*proxy.Config)) (*testdb.Server, *proxyHandle) {
	t.Helper()
	users := func(c *proxy.Config) {
		c.Users = []proxy.User{{Name: "alice", Password: sandboxPassword}, {Name: "bob", Password: sandboxPassword}}
		if mutate != nil {
			mutate(c)
		}
	}
	if acct == "least privilege" {
		return sandboxProxy(t, mode, users)
	}
	db, _ := env(t)
	return db, startTestProxy(t, db.Addr, db, func(c *proxy.Config) {
		c.Mode, c.Sandbox.ReapInterval = mode, 500*time.Millisecond
		users(c)
	})
}

// isoCase is one path from bob to alice's objects. q is bob's statement
// ({A} is alice's sandbox database for app, {AID} her sandbox id, {AUP}
// her connection's upstream thread id, {AGREET} its greeting id, {DATA}
// the server's data directory), run where says ("in" bob's sandbox, "out"
// on production, "both"). code is the error bob must get; with code 0 the
// statement must succeed and no value of its result may contain hide or
// an alice marker, and every string of show (bob's own objects) must
// appear. own is the equivalent statement on bob's own objects in his
// sandbox, which must succeed (where one exists). or is another
// acceptable code. control, when set, runs q on a direct
// connection of the shared upstream account and must find a marker of
// alice's (or succeed): only the proxy stands between them.
type isoCase struct {
	name    string
	q       string
	where   string
	code    uint16
	or      uint16 // another acceptable code (1142: the account may not read it at all)
	show    []string
	own     string
	control bool
}

func isolationSuite(t *testing.T, db *testdb.Server, p *proxyHandle, upstream *sql.DB) {
	ctx := context.Background()
	root := openDB(t, directDSN(db, ""))
	sandboxID := func(name string) string {
		t.Helper()
		var id string
		if err := root.QueryRow("SELECT id FROM _sqlfork_meta.sandboxes WHERE name = ?", name).Scan(&id); err != nil {
			t.Fatalf("sandbox %s: %v", name, err)
		}
		return id
	}
	discard := func(user string, names ...string) {
		c := openDB(t, p.userDSN(user, ""))
		for _, n := range names {
			if _, err := c.Exec("SANDBOX DISCARD " + n); err != nil {
				t.Logf("cleanup: %s: SANDBOX DISCARD %s: %s", user, n, mysqlErr(err))
			}
		}
	}

	// Alice: two kept sandboxes with a fork, a table of her own and data
	// only she wrote; a statement of hers running.
	alice := conn(t, openDB(t, p.userDSN("alice", "app")))
	t.Cleanup(func() { discard("alice", "iso_alice_1", "iso_alice_2", "iso_alice_3") })
	mustExecC(t, alice, "SANDBOX CREATE iso_alice_1 TTL 1h")
	mustExecC(t, alice, "UPDATE users SET email = 'alice-marker-1@example.com' WHERE name = 'alice'")
	mustExecC(t, alice, "CREATE TABLE alice_secret (id INT PRIMARY KEY, s VARCHAR(40), KEY (s))")
	mustExecC(t, alice, "INSERT INTO alice_secret VALUES (1, 'alice-marker-2')")
	alice2 := conn(t, openDB(t, p.userDSN("alice", "other")))
	mustExecC(t, alice2, "SANDBOX CREATE iso_alice_2 TTL 1h")
	mustExecC(t, alice2, "INSERT INTO things VALUES (77, 'alice-marker-3')")
	aID := sandboxID("iso_alice_1")
	aPhys := "_sqlfork_" + aID + "_app"

	sleeper := dialRaw(t, p.addr, "alice", sandboxPassword, "app")
	sleeper.query("SANDBOX ATTACH iso_alice_1")
	aGreet, aUp := fmt.Sprint(sleeper.c.GetConnectionID()), sleeper.scalar("SELECT CONNECTION_ID()")
	sleepDone := make(chan error, 1)
	go func() {
		_, err := sleeper.c.Execute("SELECT SLEEP(60), COUNT(*) FROM alice_secret /*alice-marker-4*/")
		sleepDone <- err
	}()
	testkit.Eventually(t, "alice's statement to run", func() bool {
		var n int
		_ = root.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE '%alice-marker-4%' AND ID = ?", aUp).Scan(&n)
		return n == 1
	})
	markers := []string{"alice-marker", "alice_secret", "iso_alice", aID}

	// Bob: a sandbox with a fork and a table of his own, and a session on
	// production.
	t.Cleanup(func() { discard("bob", "iso_bob_1") })
	bobIn := conn(t, openDB(t, p.userDSN("bob", "app", "multiStatements=true")))
	mustExecC(t, bobIn, "SANDBOX CREATE iso_bob_1 TTL 1h")
	mustExecC(t, bobIn, "UPDATE users SET email = 'bob-own@example.com' WHERE name = 'bob'")
	mustExecC(t, bobIn, "CREATE TABLE bob_own (id INT PRIMARY KEY, b VARCHAR(40), KEY (b))")
	bobOut := conn(t, openDB(t, p.userDSN("bob", "app", "multiStatements=true")))
	bID := sandboxID("iso_bob_1")
	var bobUp string
	if err := bobIn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&bobUp); err != nil {
		t.Fatal(err)
	}

	subst := func(q string) string {
		return strings.NewReplacer("{A}", aPhys, "{AID}", aID, "{AUP}", aUp, "{AGREET}", aGreet,
			"{DATA}", filepath.ToSlash(db.DataDir), "{B}", "_sqlfork_"+bID+"_app").Replace(q)
	}
	cases := []isoCase{
		// Alice's sandboxes by physical name.
		{name: "read her fork", q: "SELECT email FROM `{A}`.users", where: "both", code: 1044, control: true,
			own: "SELECT email FROM users WHERE email = 'bob-own@example.com'"},
		{name: "write her fork", q: "UPDATE `{A}`.users SET email = 'bob'", where: "both", code: 1044,
			own: "UPDATE users SET email = 'bob-own@example.com' WHERE name = 'bob'"},
		{name: "read her table", q: "SELECT * FROM `{A}`.alice_secret", where: "both", code: 1044, control: true,
			own: "SELECT * FROM bob_own"},
		{name: "write her table", q: "INSERT INTO `{A}`.alice_secret VALUES (2, 'bob')", where: "in", code: 1044,
			own: "INSERT INTO bob_own VALUES (1, 'bob')"},
		{name: "her table's definition", q: "SHOW CREATE TABLE `{A}`.alice_secret", where: "both", code: 1044, control: true,
			own: "SHOW CREATE TABLE bob_own"},
		{name: "her information_schema views", q: "SELECT * FROM `_sqlfork_{AID}`.TABLES", where: "both", code: 1044},
		{name: "the registry", q: "SELECT * FROM _sqlfork_meta.sandboxes", where: "both", code: 1044, control: true},
		{name: "the registry's tables", q: "SELECT * FROM _sqlfork_meta.tables", where: "both", code: 1044, control: true},
		{name: "USE her schema", q: "USE `{A}`", where: "both", code: 1044, own: "USE app"},
		{name: "SHOW TABLES of her schema", q: "SHOW TABLES FROM `{A}`", where: "both", code: 1044, control: true},
		{name: "SHOW TABLE STATUS of her schema", q: "SHOW TABLE STATUS FROM `{A}`", where: "both", code: 1044, control: true},
		{name: "SHOW INDEX of her table", q: "SHOW INDEX FROM alice_secret FROM `{A}`", where: "both", code: 1044, control: true},

		// Sandbox statements naming her sandboxes.
		{name: "SANDBOX ATTACH hers", q: "SANDBOX ATTACH iso_alice_1", where: "both", code: 1105, own: "SANDBOX ATTACH iso_bob_1"},
		{name: "SANDBOX DISCARD hers", q: "SANDBOX DISCARD iso_alice_2", where: "both", code: 1105},
		{name: "SANDBOX LIST", q: "SANDBOX LIST", where: "both", show: []string{"iso_bob_1"}},
		{name: "SANDBOX STATUS", q: "SANDBOX STATUS", where: "in", show: []string{"iso_bob_1", "bob_own"}},

		// Her threads and statements.
		{name: "SHOW PROCESSLIST", q: "SHOW PROCESSLIST", where: "both", show: []string{bobUp}},
		{name: "SHOW FULL PROCESSLIST", q: "SHOW FULL PROCESSLIST", where: "both", show: []string{"SHOW FULL PROCESSLIST", bobUp}, control: true},
		{name: "information_schema.PROCESSLIST", q: "SELECT * FROM information_schema.PROCESSLIST", where: "both", code: 1290, control: true},
		{name: "information_schema.PROCESSLIST by id", q: "SELECT INFO FROM information_schema.PROCESSLIST WHERE ID = {AUP}", where: "both", code: 1290, control: true},
		{name: "SHOW EXPLAIN FOR her thread", q: "SHOW EXPLAIN FOR {AUP}", where: "both", code: 1290},
		{name: "EXPLAIN FOR CONNECTION", q: "EXPLAIN FOR CONNECTION {AUP}", where: "both", code: 1290},
		{name: "performance_schema threads", q: "SELECT * FROM performance_schema.threads", where: "both", code: 1290},
		{name: "performance_schema statements", q: "SELECT SQL_TEXT FROM performance_schema.events_statements_history", where: "both", code: 1290},
		{name: "SHOW ENGINE INNODB STATUS", q: "SHOW ENGINE INNODB STATUS", where: "both", code: 1290},
		{name: "KILL her connection by greeting id", q: "KILL {AGREET}", where: "both", code: 1094},
		{name: "KILL her connection by upstream id", q: "KILL {AUP}", where: "both", code: 1094},
		{name: "KILL QUERY hers", q: "KILL QUERY {AUP}", where: "both", code: 1094},

		// Listings of databases and tables.
		{name: "SHOW DATABASES", q: "SHOW DATABASES", where: "both", show: []string{"app"}},
		{name: "SHOW SCHEMAS", q: "SHOW SCHEMAS", where: "both", show: []string{"app"}},
		{name: "SHOW DATABASES in a multi-statement input", q: "SELECT 1; SHOW DATABASES", where: "both", show: []string{"app"}},
		{name: "SHOW PROCESSLIST in a multi-statement input", q: "SELECT 1; SHOW PROCESSLIST", where: "both", show: []string{bobUp}},
		{name: "SCHEMATA in a multi-statement input", q: "SELECT 1; SELECT SCHEMA_NAME FROM information_schema.SCHEMATA", where: "both", show: []string{"app"}},
		{name: "SHOW DATABASES LIKE", q: "SHOW DATABASES LIKE '\\_sqlfork%'", where: "both", control: true},
		{name: "SCHEMATA", q: "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA", where: "both", show: []string{"app"}},
		{name: "TABLES", q: "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES", where: "both", show: []string{"users"}, control: true},
		{name: "TABLES in her sandbox's schema", q: "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = '{A}'", where: "both", control: true},
		{name: "TABLES (bob's own)", q: "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'app'", where: "in", show: []string{"bob_own"}},
		{name: "COLUMNS", q: "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME FROM information_schema.COLUMNS", where: "both", control: true},
		{name: "STATISTICS", q: "SELECT TABLE_SCHEMA, TABLE_NAME, INDEX_NAME FROM information_schema.STATISTICS", where: "both", control: true},
		{name: "TABLE_CONSTRAINTS", q: "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLE_CONSTRAINTS", where: "both", control: true},
		{name: "KEY_COLUMN_USAGE", q: "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.KEY_COLUMN_USAGE", where: "both", control: true},
		{name: "PARTITIONS", q: "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.PARTITIONS", where: "both", control: true},
		{name: "SHOW TABLES", q: "SHOW TABLES FROM app", where: "in", show: []string{"bob_own"}},
		{name: "SHOW TABLE STATUS", q: "SHOW TABLE STATUS FROM app", where: "both", show: []string{"users"}},
		{name: "mysql.innodb_table_stats", q: "SELECT * FROM mysql.innodb_table_stats", where: "both", code: 1290, control: true},
		{name: "mysql.innodb_index_stats", q: "SELECT * FROM mysql.innodb_index_stats", where: "both", code: 1290, control: true},
		{name: "mysql.table_stats", q: "SELECT * FROM mysql.table_stats", where: "both", code: 1290},
		{name: "INNODB_SYS_TABLES", q: "SELECT NAME FROM information_schema.INNODB_SYS_TABLES", where: "both", code: 1290, control: true},
		{name: "INNODB_SYS_TABLESTATS", q: "SELECT NAME FROM information_schema.INNODB_SYS_TABLESTATS", where: "both", code: 1290, control: true},
		{name: "INNODB_BUFFER_PAGE", q: "SELECT TABLE_NAME FROM information_schema.INNODB_BUFFER_PAGE", where: "both", code: 1290},
		{name: "TABLE_STATISTICS", q: "SELECT * FROM information_schema.TABLE_STATISTICS", where: "both", code: 1290},
		{name: "SHOW TABLE_STATISTICS", q: "SHOW TABLE_STATISTICS", where: "both", code: 1290},
		{name: "SHOW INDEX_STATISTICS", q: "SHOW INDEX_STATISTICS", where: "both", code: 1290},
		{name: "GEOMETRY_COLUMNS", q: "SELECT * FROM information_schema.GEOMETRY_COLUMNS", where: "both", code: 1290},
		{name: "SHOW OPEN TABLES", q: "SHOW OPEN TABLES", where: "both", code: 1290, control: true},
		{name: "SHOW BINLOG EVENTS", q: "SHOW BINLOG EVENTS", where: "both", code: 1290},
		{name: "a view over information_schema", q: "SELECT * FROM sys.schema_auto_increment_columns", where: "both", code: 1290, or: 1142},

		// Files of her sandbox on the server.
		{name: "LOAD_FILE of her table's file", q: "SELECT LOAD_FILE('{DATA}/{A}/alice_secret.ibd')", where: "both", code: 1290},
		{name: "LOAD DATA INFILE of her table's file", q: "LOAD DATA INFILE '{DATA}/{A}/alice_secret.frm' INTO TABLE bob_own", where: "in", code: 1290},
	}

	bobOwnConn := dialRaw(t, p.addr, "bob", sandboxPassword, "app")
	for _, c := range cases {
		for _, where := range []string{"in", "out"} {
			if c.where != "both" && c.where != where {
				continue
			}
			t.Run(c.name+"/"+where, func(t *testing.T) {
				bob := bobIn
				if where == "out" {
					bob = bobOut
				}
				q := subst(c.q)
				rows, err := isoQuery(ctx, bob, q)
				if c.code != 0 {
					if code := isoCode(err); code != c.code && (c.or == 0 || code != c.or) {
						t.Fatalf("bob: %s: %s (rows %v), want error %d", q, mysqlErr(err), rows, c.code)
					}
				} else if err != nil {
					t.Fatalf("bob: %s: %s", q, mysqlErr(err))
				} else {
					all := strings.Join(rows, "\n")
					for _, m := range append(markers, "_sqlfork") {
						if strings.Contains(all, m) {
							t.Fatalf("bob: %s shows %q:\n%s", q, m, all)
						}
					}
					for _, r := range rows {
						// Alice's thread, as the first column (a process list's
						// Id): elsewhere in a row its digits may be part of a port.
						if id, _, _ := strings.Cut(r, "\t"); id == aUp {
							t.Fatalf("bob: %s shows alice's thread %s:\n%s", q, aUp, all)
						}
					}
					for _, s := range c.show {
						if !strings.Contains(all, s) {
							t.Fatalf("bob: %s does not show his own %q:\n%s", q, s, all)
						}
					}
				}
				if c.own != "" && where == "in" {
					if _, err := isoQuery(ctx, bob, subst(c.own)); err != nil {
						t.Fatalf("bob: his own %s: %s", subst(c.own), mysqlErr(err))
					}
				}
				if c.control && where == "in" {
					got, err := isoQuery(ctx, upstream, q)
					if code := isoCode(err); code == 1044 || code == 1142 || code == 1227 || code == 1143 {
						t.Logf("control: the upstream account itself may not run %s (%d)", q, code)
						return
					} else if err != nil {
						t.Fatalf("control: %s directly: %s", q, mysqlErr(err))
					}
					all := strings.Join(got, "\n")
					found := false
					for _, m := range append(markers, aPhys) {
						found = found || strings.Contains(all, m)
					}
					if !found {
						t.Fatalf("control: %s on a direct connection of the shared account shows nothing of alice's:\n%s", q, all)
					}
				}
			})
		}
	}

	// Every information_schema table of the server: refused (1290), or
	// nothing of alice's nor of the proxy's databases in it.
	t.Run("every information_schema table", func(t *testing.T) {
		names := column(t, root, "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'information_schema' ORDER BY 1")
		refused := 0
		for _, n := range append(names, "NO_SUCH_TABLE") {
			for _, bob := range []*sql.Conn{bobIn, bobOut} {
				q := "SELECT * FROM information_schema.`" + n + "`"
				got, err := isoQuery(ctx, bob, q)
				if code := isoCode(err); code == 1290 {
					refused++
					continue
				} else if err != nil {
					t.Errorf("bob: %s: %s", q, mysqlErr(err))
					continue
				}
				// The account's own grant on the proxy's databases names
				// their prefix, nothing of alice's.
				all := strings.ReplaceAll(strings.Join(got, "\n"), "\\_sqlfork%", "")
				for _, m := range append(markers, "_sqlfork", "alice-marker") {
					if strings.Contains(all, m) {
						t.Errorf("bob: %s shows %q", q, m)
					}
				}
			}
		}
		t.Logf("%d information_schema tables, %d reads refused", len(names), refused)
	})

	// COM_PROCESS_INFO: bob's own connections only.
	t.Run("COM_PROCESS_INFO", func(t *testing.T) {
		bobOwnConn.send(0x0A)
		ids := map[string]bool{}
		for _, row := range readTextResult(t, bobOwnConn) {
			if strings.Contains(strings.Join(row, "\t"), "alice-marker") {
				t.Fatalf("COM_PROCESS_INFO shows alice's statement: %q", row)
			}
			ids[row[0]] = true
		}
		if ids[aUp] || !ids[bobUp] {
			t.Fatalf("COM_PROCESS_INFO ids %v: alice's %s must not be there, bob's %s must", ids, aUp, bobUp)
		}
	})

	// A connection alice hands over to bob with COM_CHANGE_USER is bob's
	// from then on: out of her process list and beyond her KILL.
	t.Run("COM_CHANGE_USER", func(t *testing.T) {
		r := dialRaw(t, p.addr, "alice", sandboxPassword, "app")
		if reply := r.changeUser("bob", sandboxPassword, "app"); reply[0] != 0 {
			t.Fatalf("COM_CHANGE_USER to bob: %q", reply)
		}
		id := r.scalar("SELECT CONNECTION_ID()")
		listed := func(c *sql.Conn) bool {
			rows, err := isoQuery(ctx, c, "SHOW PROCESSLIST")
			if err != nil {
				t.Fatalf("SHOW PROCESSLIST: %s", mysqlErr(err))
			}
			for _, row := range rows {
				if strings.HasPrefix(row, id+"\t") {
					return true
				}
			}
			return false
		}
		if listed(alice) || !listed(bobOut) {
			t.Fatalf("connection %s after COM_CHANGE_USER to bob: in alice's process list %v, in bob's %v", id, listed(alice), listed(bobOut))
		}
		if _, err := alice.ExecContext(ctx, "KILL QUERY "+id); isoCode(err) != 1094 {
			t.Fatalf("alice: KILL QUERY of bob's connection: %s, want 1094", mysqlErr(err))
		}
		if _, err := bobOut.ExecContext(ctx, "KILL QUERY "+id); err != nil {
			t.Fatalf("bob: KILL QUERY of his own connection: %s", mysqlErr(err))
		}
	})

	// Logins and protocol commands naming the proxy's databases.
	t.Run("login database", func(t *testing.T) {
		for _, dbName := range []string{"_sqlfork_meta", aPhys, "_sqlfork_" + aID} {
			c := openDB(t, p.userDSN("bob", dbName))
			if err := c.PingContext(ctx); isoCode(err) != 1044 {
				t.Errorf("bob logging in with database %s: %s, want 1044", dbName, mysqlErr(err))
			}
		}
		if err := openDB(t, p.userDSN("bob", "other")).PingContext(ctx); err != nil {
			t.Fatalf("bob logging in with database other: %v", err)
		}
		// The login tag naming her sandbox, and his own.
		if err := openDB(t, p.userDSN("bob+iso_alice_1", "app")).PingContext(ctx); isoCode(err) != 1105 {
			t.Errorf("bob logging in to her sandbox by tag: %s, want 1105", mysqlErr(err))
		}
		own := conn(t, openDB(t, p.userDSN("bob+iso_bob_1", "app")))
		if got := queryString(t, own, "SELECT email FROM users WHERE name = 'bob'"); got != "bob-own@example.com" {
			t.Fatalf("bob in his own sandbox by tag reads %q", got)
		}
	})
	t.Run("COM_INIT_DB and COM_FIELD_LIST", func(t *testing.T) {
		r := dialRaw(t, p.addr, "bob", sandboxPassword, "app")
		for _, dbName := range []string{"_sqlfork_meta", aPhys} {
			if code := errCode(r.c.UseDB(dbName)); code != 1044 {
				t.Errorf("COM_INIT_DB %s: code %d, want 1044", dbName, code)
			}
		}
		if got := r.scalar("SELECT DATABASE()"); got != "app" {
			t.Fatalf("database after refused COM_INIT_DB: %q", got)
		}
		// Her table is not in app on production: the field list of the
		// current database cannot reach it.
		if _, err := r.c.FieldList("alice_secret", ""); errCode(err) != 1146 {
			t.Errorf("COM_FIELD_LIST alice_secret: %v, want 1146", err)
		}
		if fields, err := r.c.FieldList("users", ""); err != nil || len(fields) == 0 {
			t.Fatalf("COM_FIELD_LIST of bob's own users: %v", err)
		}
		if err := r.c.UseDB("other"); err != nil {
			t.Fatalf("COM_INIT_DB other: %v", err)
		}
		direct := dialRaw(t, db.Addr, db.User, db.Password, aPhys)
		if fields, err := direct.c.FieldList("alice_secret", ""); err != nil || len(fields) == 0 {
			t.Fatalf("control: COM_FIELD_LIST in her schema directly: %v", err)
		}
	})

	// GET_LOCK: bob holds the fork lock name as it would be without the
	// registry's secret; alice's first write in a fresh sandbox does not
	// wait for it. The real (salted) name, which only the proxy knows,
	// does stall it.
	t.Run("GET_LOCK", func(t *testing.T) {
		a3 := conn(t, openDB(t, p.userDSN("alice", "app")))
		mustExecC(t, a3, "SANDBOX CREATE iso_alice_3 TTL 1h")
		mustExecC(t, a3, "SELECT 1") // registered
		id := sandboxID("iso_alice_3")
		unsalted := sha256.Sum256([]byte(id + "\x00app\x00users"))
		var got sql.NullString
		if err := bobOut.QueryRowContext(ctx, "SELECT GET_LOCK(?, 1)", "sqlfork:"+hex.EncodeToString(unsalted[:20])).Scan(&got); err != nil || got.String != "1" {
			t.Fatalf("bob: GET_LOCK: %v %s", got, mysqlErr(err))
		}
		// Bob holds it until the test ends: a fork that waited for it
		// would not answer before the fork timeout, and then with an error.
		mustExecC(t, a3, "UPDATE users SET score = 1 WHERE name = 'carol'")
		// Control: the salted name stalls her fork of another table.
		var secret string
		if err := root.QueryRow("SELECT value FROM _sqlfork_meta.settings WHERE name = 'lock_secret'").Scan(&secret); err != nil {
			t.Fatal(err)
		}
		salted := sha256.Sum256([]byte(secret + "\x00" + id + "\x00other\x00things"))
		holder, err := root.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer holder.Close()
		if err := holder.QueryRowContext(ctx, "SELECT GET_LOCK(?, 1)", "sqlfork:"+hex.EncodeToString(salted[:20])).Scan(&got); err != nil || got.String != "1" {
			t.Fatalf("control: GET_LOCK: %v %v", got, err)
		}
		done := make(chan error, 1)
		go func() { _, err := a3.ExecContext(ctx, "UPDATE other.things SET label = 'x' WHERE id = 1"); done <- err }()
		select {
		case err := <-done:
			t.Fatalf("control: alice's fork did not wait for the lock held under its real name (%v)", err)
		case <-time.After(1500 * time.Millisecond):
		}
		if _, err := holder.ExecContext(ctx, "DO RELEASE_LOCK(?)", "sqlfork:"+hex.EncodeToString(salted[:20])); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatalf("alice's write after the lock was released: %s", mysqlErr(err))
		}
	})

	// Alice was not disturbed: her statement still runs, she sees it and
	// ends it; her sandboxes hold what she wrote.
	t.Run("alice unaffected", func(t *testing.T) {
		rows, err := isoQuery(ctx, alice, "SHOW FULL PROCESSLIST")
		if err != nil || !strings.Contains(strings.Join(rows, "\n"), "alice-marker-4") {
			t.Fatalf("alice does not see her own statement: %v %s", rows, mysqlErr(err))
		}
		// Her sandbox's database is told back in her words.
		if all := strings.Join(rows, "\n"); strings.Contains(all, "_sqlfork") || !strings.Contains(all, "`app`.`alice_secret`") {
			t.Errorf("alice's process list shows her statement with physical names: %v", rows)
		}
		if _, err := alice.ExecContext(ctx, "KILL QUERY "+aUp); err != nil {
			t.Fatalf("alice: KILL QUERY of her own statement: %s", mysqlErr(err))
		}
		wantInterrupted(t, sleepDone, "her statement")
		if got := queryString(t, alice, "SELECT s FROM alice_secret"); got != "alice-marker-2" {
			t.Fatalf("her table: %q", got)
		}
		if got := queryString(t, alice, "SELECT email FROM users WHERE name = 'alice'"); got != "alice-marker-1@example.com" {
			t.Fatalf("her fork: %q", got)
		}
		if got := queryString(t, alice2, "SELECT label FROM things WHERE id = 77"); got != "alice-marker-3" {
			t.Fatalf("her second sandbox: %q", got)
		}
	})
}

// isoQuery runs q and returns the rows of all its results, tab-joined
// (NULL as "NULL").
func isoQuery(ctx context.Context, c interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, q string) ([]string, error) {
	rows, err := c.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for {
		cols, err := rows.Columns()
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			vals, err := scanRow[sql.NullString](rows, len(cols))
			if err != nil {
				return nil, err
			}
			out = append(out, strings.Join(nullText(vals), "\t")+"\t")
		}
		if !rows.NextResultSet() {
			return out, rows.Err()
		}
	}
}

// isoCode is the server error number of err (0 for none or another error).
func isoCode(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return errCode(err)
}

// readTextResult reads a text result set after a command was sent.
func readTextResult(t *testing.T, r *raw) [][]string {
	t.Helper()
	p := r.read()
	if p[0] == 0xFF {
		t.Fatalf("error: %q", p[9:])
	}
	n := int(p[0])
	for {
		if d := r.read(); d[0] == 0xFE && len(d) < 9 {
			break
		}
	}
	var rows [][]string
	for {
		d := r.read()
		if d[0] == 0xFE && len(d) < 9 {
			return rows
		}
		row := make([]string, 0, n)
		for len(d) > 0 && len(row) < n {
			if d[0] == 0xFB {
				row, d = append(row, "NULL"), d[1:]
				continue
			}
			l, _, m := gmysql.LengthEncodedInt(d)
			row, d = append(row, string(d[m:m+int(l)])), d[m+int(l):]
		}
		rows = append(rows, row)
	}
}

// TestProcessListLikeServer: the process list the proxy answers has the
// server's column names and types (SHOW PROCESSLIST, SHOW FULL
// PROCESSLIST, by the text and the binary protocol's metadata), and
// mariadb-admin processlist works through it, listing the user's own
// connection by the id CONNECTION_ID() returns and no other user's.
func TestProcessListLikeServer(t *testing.T) {
	db, p := sharedAccountProxy(t, "least privilege", "transparent", nil)
	ctx := context.Background()
	direct := conn(t, openDB(t, directDSN(db, "")))
	alice := conn(t, openDB(t, p.userDSN("alice", "")))
	shape := func(c *sql.Conn, q string) string {
		t.Helper()
		rows, err := c.QueryContext(ctx, q)
		if err != nil {
			t.Fatalf("%s: %s", q, mysqlErr(err))
		}
		defer rows.Close()
		types, err := rows.ColumnTypes()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, ct := range types {
			n, _ := ct.Nullable()
			out = append(out, fmt.Sprintf("%s:%s:%v", ct.Name(), ct.DatabaseTypeName(), n))
		}
		return strings.Join(out, " ")
	}
	for _, q := range []string{"SHOW PROCESSLIST", "SHOW FULL PROCESSLIST"} {
		want, got := shape(direct, q), shape(alice, q)
		t.Logf("%s: %s", q, got)
		if got != want {
			t.Errorf("%s through the proxy: %s\ndirectly: %s", q, got, want)
		}
	}
	// The caller's own row shows its statement as sent (PyMySQL's
	// test_issue_36 finds its connection by Info = "show processlist").
	for _, c := range []*sql.Conn{direct, alice} {
		var own string
		if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&own); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"show processlist", "show full  processlist -- own"} {
			rows, err := c.QueryContext(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			info := "(no row)"
			for rows.Next() {
				var f [9]sql.NullString
				dest := make([]any, 0, 9)
				cols, _ := rows.Columns()
				for i := range cols {
					dest = append(dest, &f[i])
				}
				if err := rows.Scan(dest...); err != nil {
					t.Fatal(err)
				}
				if f[0].String == own {
					info = f[7].String
				}
			}
			rows.Close()
			if info != q {
				t.Errorf("%s: the caller's own row has Info %q, want the text as sent", q, info)
			}
		}
	}

	bob := conn(t, openDB(t, p.userDSN("bob", "")))
	var bobID string
	if err := bob.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&bobID); err != nil {
		t.Fatal(err)
	}
	admin := requireTool(t, "mariadb-admin", "mysqladmin")
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := cliCmd(cctx, admin, p.addr, "alice", sandboxPassword, "processlist").CombinedOutput()
	if err != nil {
		t.Fatalf("mariadb-admin processlist: %v\n%s", err, out)
	}
	lines := strings.Split(string(out), "\n")
	var own []string
	for _, l := range lines {
		f := strings.Fields(strings.Trim(l, "| "))
		if len(f) > 2 && f[0] != "Id" {
			own = append(own, f[0])
			if f[0] == bobID || f[2] != "alice" {
				t.Errorf("mariadb-admin processlist through the proxy lists another user's connection: %q", l)
			}
		}
	}
	if len(own) == 0 || !strings.Contains(strings.ToUpper(string(out)), "SHOW PROCESSLIST") {
		t.Fatalf("mariadb-admin processlist does not list its own connection:\n%s", out)
	}
}

// appOnlyReader starts a proxy in mode whose user carol is mapped to the
// upstream account iso_app_only, which may read only app (and its
// sandboxes), and returns it and a connection of carol's to app.
func appOnlyReader(t *testing.T, mode string) (*proxyHandle, *sql.Conn) {
	t.Helper()
	db, _ := env(t)
	root := openDB(t, db.DSN("")+"?multiStatements=true")
	mustExecDB(t, root, "CREATE USER IF NOT EXISTS 'iso_app_only'@'%' IDENTIFIED BY 'iso-pw'; "+
		"GRANT SELECT ON app.* TO 'iso_app_only'@'%'; GRANT ALL PRIVILEGES ON `\\_sqlfork%`.* TO 'iso_app_only'@'%'")
	_, p := sandboxProxy(t, mode, func(c *proxy.Config) {
		c.Users = []proxy.User{{Name: "carol", Password: sandboxPassword, UpstreamUser: "iso_app_only", UpstreamPassword: "iso-pw"}}
	})
	return p, conn(t, openDB(t, p.userDSN("carol", "app")))
}

// TestProductionInfoSchemaAsReader: outside a sandbox information_schema's
// listings are read through the proxy's views, which must show a user
// mapped to a narrower upstream account no more than that account sees
// itself (they run with the reader's privileges, not the proxy's).
func TestProductionInfoSchemaAsReader(t *testing.T) {
	p, carol := appOnlyReader(t, "explicit")
	for q, want := range map[string]string{
		"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'app'":    "", // some
		"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'other'":  "0",
		"SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'other'": "0",
		"SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'other'": "0",
	} {
		got := queryString(t, carol, q)
		if want == "" && got == "0" || want != "" && got != want {
			t.Errorf("carol: %s = %s, want %q (her upstream account sees only app)", q, got, want)
		}
	}
	// The proxy's own account does see other: the views must not lend it.
	if got := queryString(t, openDB(t, p.userDSN(sandboxUser, "")), "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'other'"); got == "0" {
		t.Fatalf("control: the proxy's account sees no table of other")
	}
}

// TestSandboxInfoSchemaAsReader is TestProductionInfoSchemaAsReader in a
// sandbox: the sandbox's information_schema views show a user mapped to a
// narrower upstream account no more than that account sees.
func TestSandboxInfoSchemaAsReader(t *testing.T) {
	_, carol := appOnlyReader(t, "transparent")
	mustExecC(t, carol, "UPDATE users SET score = 3 WHERE name = 'carol'")
	for q, want := range map[string]string{
		"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'app' AND TABLE_NAME = 'users'": "1",
		"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'other'":                        "0",
		"SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'other'":                       "0",
		"SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'other'":                       "0",
	} {
		if got := queryString(t, carol, q); got != want {
			t.Errorf("carol: %s = %s, want %s (her upstream account sees only app)", q, got, want)
		}
	}
}

// TestIsolationProductionWritesAllow: with --production-writes=allow a user
// outside a sandbox writes production, but still reaches nothing of
// another user's: what the proxy cannot see through (dynamic SQL, CALL,
// stored program definitions) is refused, and the process list and
// information_schema stay filtered.
func TestIsolationProductionWritesAllow(t *testing.T) {
	// The account must be able to write production.
	db, p := sharedAccountProxy(t, "all privileges", "explicit", func(c *proxy.Config) { c.ProductionWrites = "allow" })
	ctx := context.Background()
	root := openDB(t, directDSN(db, ""))
	mustExecDB(t, root, "CREATE TABLE IF NOT EXISTS app.iso_allow (id INT)")
	t.Cleanup(func() { _, _ = root.Exec("DROP TABLE IF EXISTS app.iso_allow") })
	alice := conn(t, openDB(t, p.userDSN("alice", "app")))
	mustExecC(t, alice, "SET @alice_marker = 'alice-allow-marker'")
	var aliceID string
	if err := alice.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&aliceID); err != nil {
		t.Fatal(err)
	}
	bob := conn(t, openDB(t, p.userDSN("bob", "app", "multiStatements=true")))
	mustExecC(t, bob, "INSERT INTO iso_allow VALUES (1)") // production writes are allowed
	for _, c := range []struct {
		q    string
		code uint16
	}{
		{"SET @q = 'SHOW PROCESSLIST'; PREPARE s FROM @q", 1290},
		{"EXECUTE IMMEDIATE 'SELECT * FROM information_schema.PROCESSLIST'", 1290},
		{"CREATE PROCEDURE app.iso_p() SELECT * FROM information_schema.PROCESSLIST", 1290},
		{"CALL app.two_results()", 1290},
		{"SELECT * FROM information_schema.PROCESSLIST", 1290},
		{"CREATE TABLE app.iso_copy AS SELECT * FROM information_schema.PROCESSLIST", 1290},
		{"SELECT * FROM `_sqlfork_meta`.sandboxes", 1044},
	} {
		if _, err := isoQuery(ctx, bob, c.q); isoCode(err) != c.code {
			t.Errorf("bob: %s: %s, want %d", c.q, mysqlErr(err), c.code)
		}
	}
	for _, q := range []string{"SHOW PROCESSLIST", "SHOW DATABASES", "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES"} {
		rows, err := isoQuery(ctx, bob, q)
		if err != nil {
			t.Fatalf("bob: %s: %s", q, mysqlErr(err))
		}
		for _, row := range rows {
			if strings.HasPrefix(row, aliceID+"\t") || strings.Contains(row, "_sqlfork") {
				t.Errorf("bob: %s shows %q", q, row)
			}
		}
	}
}

// TestSandboxProceduresIsolated: a sandbox's own procedures are in its
// databases, which every proxy user's shared upstream account sees: another
// user finds none of them in information_schema.ROUTINES and PARAMETERS,
// SHOW PROCEDURE STATUS or mysql.proc, nor calls or drops them; their
// owner sees them under their logical database. With the ALL PRIVILEGES
// account (mysql.proc readable) and the least-privilege one.
func TestSandboxProceduresIsolated(t *testing.T) {
	for _, acct := range []string{"all privileges", "least privilege"} {
		t.Run(acct, func(t *testing.T) {
			db, p := sharedAccountProxy(t, acct, "transparent", nil)
			ctx := context.Background()
			alice := conn(t, openDB(t, p.userDSN("alice", "app")))
			mustExecC(t, alice, "CREATE PROCEDURE alice_secret_proc(IN alice_param INT) SELECT alice_param")
			wantString(t, alice, "SELECT ROUTINE_SCHEMA FROM information_schema.ROUTINES WHERE ROUTINE_NAME = 'alice_secret_proc'", "app", "alice's own procedure in information_schema.ROUTINES: schema %q, want app")
			rows, err := alice.QueryContext(ctx, "SHOW PROCEDURE STATUS LIKE 'alice_secret%'")
			if err != nil {
				t.Fatal(mysqlErr(err))
			}
			var dbs []string
			for rows.Next() {
				vals, err := scanStrings(rows)
				if err != nil {
					t.Fatal(err)
				}
				dbs = append(dbs, vals[0].String)
			}
			rows.Close()
			if strings.Join(dbs, ",") != "app" {
				t.Errorf("alice's SHOW PROCEDURE STATUS: databases %v, want [app]", dbs)
			}
			root := openDB(t, db.DSN(""))
			var n int
			if err := root.QueryRow("SELECT COUNT(*) FROM information_schema.ROUTINES WHERE ROUTINE_NAME = 'alice_secret_proc' AND ROUTINE_SCHEMA LIKE '\\_sqlfork%'").Scan(&n); err != nil || n != 1 {
				t.Fatalf("control: the procedure upstream: %d, %v", n, err)
			}
			bob := conn(t, openDB(t, p.userDSN("bob", "app")))
			for _, q := range []string{
				"SELECT COUNT(*) FROM information_schema.ROUTINES WHERE ROUTINE_NAME LIKE 'alice%'",
				"SELECT COUNT(*) FROM information_schema.PARAMETERS WHERE PARAMETER_NAME LIKE 'alice%'",
			} {
				if got := queryString(t, bob, q); got != "0" {
					t.Errorf("bob: %s = %s", q, got)
				}
			}
			if rows, err := bob.QueryContext(ctx, "SHOW PROCEDURE STATUS"); err != nil {
				t.Fatal(mysqlErr(err))
			} else {
				for rows.Next() {
					vals, _ := scanStrings(rows)
					if strings.HasPrefix(vals[1].String, "alice") || strings.HasPrefix(vals[0].String, "_sqlfork") {
						t.Errorf("bob's SHOW PROCEDURE STATUS lists %s.%s", vals[0].String, vals[1].String)
					}
				}
				rows.Close()
			}
			if _, err := bob.ExecContext(ctx, "SELECT * FROM mysql.proc"); !strings.HasPrefix(mysqlErr(err), "1290") && !strings.HasPrefix(mysqlErr(err), "1142") {
				t.Errorf("bob: mysql.proc: %s, want 1290 (or the server's 1142)", mysqlErr(err))
			}
			if _, err := bob.ExecContext(ctx, "CALL alice_secret_proc(1)"); !strings.HasPrefix(mysqlErr(err), "1305") {
				t.Errorf("bob: CALL of alice's procedure: %s, want 1305", mysqlErr(err))
			}
			if _, err := bob.ExecContext(ctx, "DROP PROCEDURE alice_secret_proc"); !strings.HasPrefix(mysqlErr(err), "1305") {
				t.Errorf("bob: DROP of alice's procedure: %s, want 1305", mysqlErr(err))
			}
			wantString(t, alice, "SELECT COUNT(*) FROM information_schema.ROUTINES WHERE ROUTINE_NAME = 'alice_secret_proc'", "1", "alice's procedure after bob: %s")
		})
	}
}
