package integration

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// Red-team tests of the review loop's newest surfaces with the
// least-privilege and the ALL PRIVILEGES upstream accounts: SANDBOX RESET
// (crafted FOR lists, statements prepared before it, objects the sandbox
// made over a reset table, a promote after it, a second proxy), the
// change marks STATUS and LIST show (every kind of write must make them
// unpromoted while DIFF shows rows: a sandbox said to be promoted is one a
// user discards, losing what it holds), and the admin API's create. Each
// subtest runs in a named, kept sandbox of its own database; production
// is checked unchanged but through PROMOTE.

// rt26b is one attack; unless it promotes, production must be as it was
// after it.
type rt26b struct {
	name, schema string
	promotes     bool
	run          func(t *testing.T, x *rt26bCtx)
}

// rt26bCtx is what an attack works with: its database and sandbox (both
// called db), a connection sc of the sandbox through the account's proxy,
// root (the server, no database), and the environment.
type rt26bCtx struct {
	db   string
	acct diffAccount
	sc   *sql.Conn
	root *sql.DB
	e    *diffEnv
	// second is a DSN of a second proxy on the same upstream, logging in
	// upstream as the account's proxy does (one per account, shared).
	second func(db string) string
}

// attach is another connection of the test's sandbox (params: DSN
// parameters), through the account's proxy or the one dsn names.
func (x *rt26bCtx) attach(t *testing.T, dsn string, params ...string) *sql.Conn {
	t.Helper()
	if dsn == "" {
		dsn = x.acct.dsn("", x.db)
	}
	c := conn(t, openDB(t, withParams(dsn, params)))
	mustExecC(t, c, "SANDBOX ATTACH "+x.db)
	return c
}

// grant gives the least-privilege account a writer's rights on the test's
// database, so that its promotes may apply.
func (x *rt26bCtx) grant(t *testing.T) {
	t.Helper()
	if x.acct.name != "least-privilege" {
		return
	}
	g := "INSERT, UPDATE, DELETE, CREATE, DROP, ALTER, INDEX, REFERENCES, CREATE VIEW ON `" + x.db + "`.* TO '" + sandboxUser + "'@'%'"
	mustExecDB(t, x.root, "GRANT "+g)
	t.Cleanup(func() { _, _ = x.root.Exec("REVOKE " + strings.Replace(g, " TO ", " FROM ", 1)) })
}

// production is the test database's tables and checksums.
func (x *rt26bCtx) production(t *testing.T) string {
	t.Helper()
	return strings.Join(tableNames(t, x.root, x.db), ",") + ": " + databaseChecksum(t, x.root, x.db)
}

// changes is what STATUS (through c) and LIST (through c and through a
// connection of the second proxy on production) say of the sandbox.
func (x *rt26bCtx) changes(t *testing.T, c *sql.Conn) (status, list, elsewhere string) {
	t.Helper()
	_, rows := queryRows(t, c, "SANDBOX STATUS")
	if len(rows) == 0 {
		t.Fatal("SANDBOX STATUS: no rows")
	}
	status = rows[0][8].String
	listed := func(c rowQuerier) string {
		cols, rows := queryRows(t, c, "SANDBOX LIST")
		i := slices.Index(cols, "changes")
		for _, r := range rows {
			if r[1].String == x.db && i >= 0 {
				return r[i].String
			}
		}
		return "(not listed)"
	}
	list = listed(c)
	if x.second != nil {
		elsewhere = listed(conn(t, openDB(t, x.second(x.db))))
	}
	return status, list, elsewhere
}

// wantUnpromoted checks that, as DIFF shows rows, STATUS and LIST say the
// sandbox holds unpromoted changes, after what.
func (x *rt26bCtx) wantUnpromoted(t *testing.T, what string) {
	t.Helper()
	d := diffDetail(t, x.sc, "SANDBOX DIFF")
	if len(d) == 0 {
		t.Errorf("%s: DIFF shows nothing: the attack wrote nothing", what)
		return
	}
	st, li, el := x.changes(t, x.sc)
	if st != "unpromoted" || li != "unpromoted" || el != "unpromoted" && el != "" {
		t.Errorf("%s: DIFF shows %d rows (%s %s), but STATUS says changes %q, LIST %q, LIST through the other proxy %q: "+
			"a sandbox said to hold nothing unpromoted is one its user discards, losing them", what, len(d), d[0].op, d[0].key.String, st, li, el)
	}
}

// promoteClean promotes the sandbox whole and checks it is then promoted.
func (x *rt26bCtx) promoteClean(t *testing.T, what string) {
	t.Helper()
	mustExecC(t, x.sc, "SANDBOX PROMOTE STRATEGY OURS")
	if d := diffDetail(t, x.sc, "SANDBOX DIFF"); len(d) != 0 {
		t.Fatalf("%s: DIFF after a promote: %v", what, d)
	}
	if st, li, _ := x.changes(t, x.sc); st != "promoted" || li != "promoted" {
		t.Errorf("%s: after a clean promote STATUS says %q, LIST %q; want promoted", what, st, li)
	}
}

// rt26bOther is the proxy user (besides the account's) the tests log in as.
const rt26bOther = "other"

func TestRedTeam26b(t *testing.T) {
	prod, _ := env(t)
	mutate := func(c *proxy.Config) {
		c.PromoteUser, c.PromotePassword = prod.User, prod.Password
		c.Users = []proxy.User{{Name: rt26bOther, Password: sandboxPassword}}
	}
	e := newDiffEnv(t, "explicit", false, mutate)
	// A second proxy per account on the same upstream and registry.
	seconds := map[string]func(db string) string{}
	_, least2 := sandboxProxy(t, "explicit", mutate)
	seconds["least-privilege"] = func(db string) string { return least2.userDSN(sandboxUser, db) }
	all2 := startTestProxy(t, prod.Addr, prod, func(c *proxy.Config) {
		c.Mode = "explicit"
		c.Sandbox.ReapInterval = 500 * time.Millisecond
		mutate(c)
	})
	seconds["all-privileges"] = func(db string) string {
		return fmt.Sprintf("%s:%s@tcp(%s)/%s", prod.User, prod.Password, all2.addr, db)
	}
	root := openDB(t, prod.DSN(""))
	for _, a := range rt26bAttacks {
		t.Run(a.name, func(t *testing.T) {
			for _, acct := range e.accts {
				t.Run(acct.name, func(t *testing.T) {
					db := "rt26b_" + strings.ToLower(a.name)
					if len(db) > 36 {
						db = db[:36]
					}
					db += "_" + acct.short()
					e.database(t, db, a.schema)
					x := &rt26bCtx{db: db, acct: acct, root: root, e: e, second: seconds[acct.name]}
					x.sc = conn(t, openDB(t, acct.dsn("", db)))
					mustExecC(t, x.sc, "SANDBOX CREATE "+db+" TTL 2h")
					t.Cleanup(func() {
						c := conn(t, openDB(t, acct.dsn("", db)))
						_, _ = c.ExecContext(context.Background(), "SANDBOX DISCARD "+db)
					})
					before := x.production(t)
					a.run(t, x)
					if after := x.production(t); !a.promotes && after != before {
						t.Errorf("production changed without a promote: %s, was %s", after, before)
					}
				})
			}
		})
	}
}

const rt26bSchema = "CREATE TABLE t (id INT PRIMARY KEY, v INT); INSERT INTO t VALUES (1, 1), (2, 2), (3, 3);" +
	"CREATE TABLE u (id INT PRIMARY KEY, v INT); INSERT INTO u VALUES (1, 1);"

var rt26bAttacks = []rt26b{
	{
		// Every kind of write after a clean promote: the change marks must
		// say unpromoted while DIFF shows what it wrote.
		name:     "ChangesWriteKinds",
		schema:   rt26bSchema,
		promotes: true,
		run: func(t *testing.T, x *rt26bCtx) {
			mustExecC(t, x.sc, "UPDATE t SET v = 10 WHERE id = 1")
			mustExecC(t, x.sc, "CREATE PROCEDURE bump() UPDATE t SET v = v + 1 WHERE id = 2")
			mustExecC(t, x.sc, "CREATE FUNCTION fbump() RETURNS INT MODIFIES SQL DATA BEGIN UPDATE t SET v = v + 100 WHERE id = 3; RETURN 1; END")
			stmt, err := x.sc.PrepareContext(context.Background(), "UPDATE t SET v = ? WHERE id = 1")
			if err != nil {
				t.Fatalf("prepare: %s", mysqlErr(err))
			}
			defer stmt.Close()
			mustExecC(t, x.sc, "PREPARE sqlprep FROM 'UPDATE t SET v = v + 1000 WHERE id = 1'")
			mustExecC(t, x.sc, "PREPARE sqlcall FROM 'CALL bump()'")
			mustExecC(t, x.sc, "PREPARE sqlfunc FROM 'SELECT fbump()'")
			callStmt, err := x.sc.PrepareContext(context.Background(), "CALL bump()")
			if err != nil {
				t.Fatalf("prepare: %s", mysqlErr(err))
			}
			defer callStmt.Close()
			mustExecC(t, x.sc, "CREATE TRIGGER ut AFTER UPDATE ON u FOR EACH ROW UPDATE t SET v = v + 1 WHERE id = 1")
			multi := x.attach(t, "", "multiStatements=true")
			x.grant(t)
			x.promoteClean(t, "the first promote")
			for _, w := range []struct {
				what string
				run  func() error
			}{
				{"a prepared statement (COM_STMT_EXECUTE) prepared before the promote", func() error {
					_, err := stmt.ExecContext(context.Background(), 42)
					return err
				}},
				{"CALL of the sandbox's procedure", func() error { _, err := x.sc.ExecContext(context.Background(), "CALL bump()"); return err }},
				{"SELECT of the sandbox's function that writes", func() error {
					_, err := x.sc.ExecContext(context.Background(), "SELECT fbump()")
					return err
				}},
				{"DO of the sandbox's function that writes", func() error { _, err := x.sc.ExecContext(context.Background(), "DO fbump()"); return err }},
				{"SET of a variable to the sandbox's function that writes", func() error {
					_, err := x.sc.ExecContext(context.Background(), "SET @rt = fbump()")
					return err
				}},
				{"EXECUTE of a PREPARE made before the promote", func() error {
					_, err := x.sc.ExecContext(context.Background(), "EXECUTE sqlprep")
					return err
				}},
				{"EXECUTE of a prepared CALL", func() error { _, err := x.sc.ExecContext(context.Background(), "EXECUTE sqlcall"); return err }},
				{"EXECUTE of a prepared SELECT of the function that writes", func() error {
					_, err := x.sc.ExecContext(context.Background(), "EXECUTE sqlfunc")
					return err
				}},
				{"CALL through COM_STMT_EXECUTE", func() error { _, err := callStmt.ExecContext(context.Background()); return err }},
				{"a compound statement", func() error {
					_, err := x.sc.ExecContext(context.Background(), "BEGIN NOT ATOMIC UPDATE t SET v = v + 3 WHERE id = 2; END")
					return err
				}},
				{"the sandbox's trigger, fired by a write of another table", func() error {
					_, err := x.sc.ExecContext(context.Background(), "UPDATE u SET v = v + 1")
					return err
				}},
				{"a multi-statement whose second statement fails", func() error {
					_, err := multi.ExecContext(context.Background(), "UPDATE t SET v = 77 WHERE id = 2; INSERT INTO t VALUES (1, 1)")
					if err == nil {
						t.Errorf("the multi-statement's duplicate key did not fail")
					}
					return nil
				}},
				{"a transaction's write, then COMMIT", func() error {
					for _, q := range []string{"BEGIN", "UPDATE u SET v = 9 WHERE id = 1", "COMMIT"} {
						if _, err := x.sc.ExecContext(context.Background(), q); err != nil {
							return err
						}
					}
					return nil
				}},
			} {
				if err := w.run(); err != nil {
					t.Errorf("%s: %s", w.what, mysqlErr(err))
					continue
				}
				x.wantUnpromoted(t, w.what)
				x.promoteClean(t, "the promote after "+w.what)
			}
		},
	},
	{
		// A transaction of one connection writes; another connection of
		// the sandbox promotes while it is open (its write invisible to
		// the promote, which then finds the diff empty); the transaction
		// commits. DIFF shows its write: the marks must not say promoted.
		name:     "ChangesOpenTxnPromote",
		schema:   rt26bSchema,
		promotes: true,
		run: func(t *testing.T, x *rt26bCtx) {
			mustExecC(t, x.sc, "UPDATE t SET v = 10 WHERE id = 1")
			x.grant(t)
			x.promoteClean(t, "the first promote")
			b := x.attach(t, "")
			mustExecC(t, x.sc, "BEGIN")
			mustExecC(t, x.sc, "UPDATE t SET v = 20 WHERE id = 2")
			done := make(chan error, 1)
			go func() { _, err := b.ExecContext(context.Background(), "SANDBOX PROMOTE STRATEGY OURS"); done <- err }()
			var err error
			select {
			case err = <-done:
				mustExecC(t, x.sc, "COMMIT")
			case <-time.After(10 * time.Second): // the promote waits for the transaction: commit it
				mustExecC(t, x.sc, "COMMIT")
				err = <-done
			}
			t.Logf("the promote during the transaction: %q", mysqlErr(err))
			x.wantUnpromoted(t, "a write committed after a promote that ran during its transaction")
		},
	},
	{
		// Two proxies share a sandbox: the second writes, the first
		// promotes it clean, the second writes again. The first proxy's
		// LIST (and the registry) must see the second write.
		name:     "ChangesSecondProxy",
		schema:   rt26bSchema,
		promotes: true,
		run: func(t *testing.T, x *rt26bCtx) {
			b := x.attach(t, x.second(x.db))
			mustExecC(t, b, "UPDATE t SET v = 10 WHERE id = 1")
			x.grant(t)
			x.promoteClean(t, "the promote of the second proxy's write")
			mustExecC(t, b, "UPDATE t SET v = 20 WHERE id = 2")
			x.wantUnpromoted(t, "a write through the second proxy after the first promoted")
		},
	},
}
