package integration

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
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
	if el != "unpromoted" && el != "" && st == "unpromoted" && li == "unpromoted" {
		// The other process learns of the write from the registry: at
		// once when the writing process had a side connection free, else
		// at its next lease renewal, a reap interval later
		// (registry.SaveWriteNow).
		testkit.Eventually(t, what+": the other proxy's LIST says unpromoted", func() bool {
			_, _, el = x.changes(t, x.sc)
			return el == "unpromoted"
		})
	}
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

// id is the sandbox's id, as STATUS through c shows it.
func rt26bID(t *testing.T, c *sql.Conn) string {
	t.Helper()
	_, rows := queryRows(t, c, "SANDBOX STATUS")
	if len(rows) == 0 || !rows[0][0].Valid {
		t.Fatal("SANDBOX STATUS: no sandbox id")
	}
	return rows[0][0].String
}

// sandboxObjects are the tables and views in the databases of the sandbox
// whose id is id, and its rows in the registry's tables, as the server has
// them.
func rt26bObjects(t *testing.T, root *sql.DB, id string) (objects, registered string) {
	t.Helper()
	like := strings.ReplaceAll("_sqlfork_"+id, "_", "\\_") + "%"
	// A lazy fork's staging table (fc_…) comes and goes as its fill ends:
	// not the sandbox's objects.
	objects = rt26Rows(t, root, "SELECT IFNULL(GROUP_CONCAT(TABLE_SCHEMA, '.', TABLE_NAME ORDER BY TABLE_SCHEMA, TABLE_NAME), '') "+
		"FROM information_schema.TABLES WHERE TABLE_SCHEMA LIKE '"+like+"' AND TABLE_NAME NOT LIKE 'fc\\_%'")
	registered = rt26Rows(t, root, "SELECT IFNULL(GROUP_CONCAT(db, '.', tbl, ':', kind ORDER BY db, tbl), '') FROM _sqlfork_meta.tables WHERE sandbox_id = '"+id+"'")
	return objects, registered
}

func init() {
	rt26bAttacks = append(rt26bAttacks, rt26bResetAttacks...)
	rt26bAttacks = append(rt26bAttacks, rt26bCreateAttack)
}

// rt26bPost posts body to the admin API at base's path with the token
// tok, and returns the status and the answer.
func rt26bPost(t *testing.T, base, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer tok")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// rt26bCreateAttack: POST /api/v1/sandboxes with bodies a careless or
// hostile client sends — names and owners no login could be, the user
// separator in the owner, control, bidi and zero-width characters, JSON
// of other shapes, TTLs negative, numeric or beyond max-sandbox-ttl, a
// name another user's sandbox holds — is refused with 400 or 409, and
// makes nothing. A sandbox made for a user is that user's: it logs in to
// it, another user can neither see, attach nor log in to it, and the
// reaper leaves it.
var rt26bCreateAttack = rt26b{
	name:   "CreateAPI",
	schema: rt26bSchema,
	run: func(t *testing.T, x *rt26bCtx) {
		srv := httptest.NewServer(adminapi.NewHandler(adminapi.Options{Sandboxes: x.acct.h.srv.Admin(), Token: "tok",
			Proxy: adminapi.Proxy{Listen: x.acct.h.addr, UserSeparator: "+"}}))
		t.Cleanup(srv.Close)
		made := x.db + "_c"
		count := func() string {
			return rt26Rows(t, x.root, "SELECT COUNT(*) FROM _sqlfork_meta.sandboxes")
		}
		before := count()
		body := func(name, owner, ttl string) string {
			return fmt.Sprintf(`{"name": %q, "owner": %q, "ttl": %q}`, name, owner, ttl)
		}
		for _, c := range []struct {
			body string
			want int
		}{
			{body("a b", rt26bOther, "1h"), 400},
			{body("a`b", rt26bOther, "1h"), 400},
			{body("a.b", rt26bOther, "1h"), 400},
			{body("ａb", rt26bOther, "1h"), 400},
			{body(strings.Repeat("a", 49), rt26bOther, "1h"), 400},
			{body("", rt26bOther, "1h"), 400},
			{body(made, rt26bOther+"+"+made, "1h"), 400},
			{body(made, "a b", "1h"), 400},
			{body(made, "\u001b[31mroot", "1h"), 400},
			{`{"name": "` + made + `", "owner": "[2J` + rt26bOther + `"}`, 400},
			{`{"name": "` + made + `", "owner": "‮` + rt26bOther + `"}`, 400},
			{`{"name": "` + made + `", "owner": "` + rt26bOther + `​"}`, 400},
			{`{"name": "` + made + `", "owner": "` + rt26bOther + `
"}`, 400},
			{body(made, "", "1h"), 400},
			{body(made, strings.Repeat("o", 129), "1h"), 400},
			{body(made, rt26bOther, "-1h"), 400},
			{body(made, rt26bOther, "1e9"), 400},
			{body(made, rt26bOther, "9223372036"), 400}, // beyond max-sandbox-ttl
			{body(made, rt26bOther, "100000d"), 400},
			{`{"name": "` + made + `", "owner": "` + rt26bOther + `", "ttl": 3600}`, 400},
			{`{"name": "` + made + `", "owner": "` + rt26bOther + `", "kept": false}`, 400},
			{`{"name": "` + made + `", "owner": "` + rt26bOther + `"} {"name": "x"}`, 400},
			{`[{"name": "` + made + `", "owner": "` + rt26bOther + `"}]`, 400},
			{`null`, 400},
			{``, 400},
			{body(x.db, rt26bOther, "1h"), 409}, // the account's own sandbox's name
		} {
			code, answer := rt26bPost(t, srv.URL, "/api/v1/sandboxes", c.body)
			t.Logf("%s: %d %s", c.body, code, strings.TrimSpace(answer))
			if code != c.want {
				t.Errorf("create %s: %d %s, want %d", c.body, code, answer, c.want)
			}
			if strings.ContainsAny(answer, "\x1b\u202e\u200b") {
				t.Errorf("create %s: the answer holds a raw escape: %q", c.body, answer)
			}
		}
		if got := count(); got != before {
			t.Fatalf("refused creates made sandboxes: %s, were %s", got, before)
		}
		if code, answer := rt26bPost(t, srv.URL, "/api/v1/sandboxes", body(made, rt26bOther, "1h")); code != http.StatusCreated {
			t.Fatalf("create %s for %s: %d %s", made, rt26bOther, code, answer)
		}
		ownerConn := conn(t, openDB(t, x.acct.h.userDSN(rt26bOther, x.db)))
		t.Cleanup(func() { _, _ = ownerConn.ExecContext(context.Background(), "SANDBOX DISCARD "+made) })
		if code, answer := rt26bPost(t, srv.URL, "/api/v1/sandboxes", body(made, sandboxUser, "1h")); code != http.StatusConflict {
			t.Errorf("create %s again for another owner: %d %s, want 409", made, code, answer)
		}
		x.acct.h.awaitReaps(t, 3)
		tagged := conn(t, openDB(t, x.acct.h.userDSN(rt26bOther+"+"+made, x.db)))
		_, rows := queryRows(t, tagged, "SANDBOX STATUS")
		if len(rows) == 0 || rows[0][1].String != made || rows[0][4].String != rt26bOther || rows[0][2].String != "kept" {
			t.Errorf("the owner's login to %s: STATUS %v, want it, kept, owned by %s", made, rows, rt26bOther)
		}
		mustExecC(t, tagged, "UPDATE t SET v = 5 WHERE id = 1")
		// The account (another user, no sandbox admin) neither sees,
		// attaches, resets, diffs nor logs in to it.
		_, rows = queryRows(t, x.sc, "SANDBOX LIST")
		for _, r := range rows {
			if r[1].String == made {
				t.Errorf("another user's LIST shows %s: %v", made, r)
			}
		}
		stranger := conn(t, openDB(t, x.acct.dsn("", x.db)))
		for _, q := range []string{"SANDBOX ATTACH " + made, "SANDBOX RESET " + made, "SANDBOX DIFF " + made, "SANDBOX DISCARD " + made} {
			if _, err := stranger.ExecContext(context.Background(), q); err == nil {
				t.Errorf("%s by another user: done", q)
			}
		}
		if c, err := openDB(t, x.acct.dsn(made, x.db)).Conn(context.Background()); err == nil {
			var name, owner sql.NullString
			if err := c.QueryRowContext(context.Background(), "SELECT 1").Scan(new(int)); err == nil {
				_, rows := queryRows(t, c, "SANDBOX STATUS")
				if len(rows) > 0 {
					name, owner = rows[0][1], rows[0][4]
				}
				if owner.String == rt26bOther {
					t.Errorf("another user logging in with the tag %s entered %s's sandbox %s", made, rt26bOther, name.String)
				}
			}
			c.Close()
		}
		wantString(t, tagged, "SELECT v FROM t WHERE id = 1", "5", "the owner's sandbox reads %s after the stranger's attempts, want its 5")
	},
}

var rt26bResetAttacks = []rt26b{
	{
		// Statements prepared (COM_STMT_PREPARE and PREPARE), in this
		// connection and another of the sandbox, while t was forked, run
		// after a RESET dropped the fork: they read production's rows as
		// they are now and write a fresh fork, never production, never
		// the dropped fork's stale rows.
		name:     "ResetPrepared",
		schema:   rt26bSchema,
		promotes: true, // production's own change; checked below
		run: func(t *testing.T, x *rt26bCtx) {
			ctx := context.Background()
			b := x.attach(t, "")
			mustExecC(t, x.sc, "UPDATE t SET v = 10 WHERE id = 1")
			mustExecDB(t, x.root, "UPDATE `"+x.db+"`.t SET v = 20 WHERE id = 2") // production's change after the fork
			upd, err := x.sc.PrepareContext(ctx, "UPDATE t SET v = ? WHERE id = ?")
			if err != nil {
				t.Fatal(mysqlErr(err))
			}
			defer upd.Close()
			sel, err := b.PrepareContext(ctx, "SELECT GROUP_CONCAT(v ORDER BY id) FROM t")
			if err != nil {
				t.Fatal(mysqlErr(err))
			}
			defer sel.Close()
			mustExecC(t, x.sc, "PREPARE sp FROM 'UPDATE t SET v = 55 WHERE id = 3'")
			mustExecC(t, b, "PREPARE bp FROM 'DELETE FROM u WHERE id = 1'")
			mustExecC(t, x.sc, "SANDBOX RESET")
			var got string
			if err := sel.QueryRowContext(ctx).Scan(&got); err != nil || got != "1,20,3" {
				t.Errorf("a SELECT prepared before the reset, run after it: %q %s, want production's 1,20,3", got, mysqlErr(err))
			}
			if _, err := upd.ExecContext(ctx, 44, 1); err != nil {
				t.Errorf("an UPDATE prepared before the reset: %s", mysqlErr(err))
			}
			mustExecC(t, x.sc, "EXECUTE sp")
			mustExecC(t, b, "EXECUTE bp")
			wantString(t, b, "SELECT GROUP_CONCAT(v ORDER BY id) FROM t", "44,20,55", "the sandbox's t after the prepared writes: %s, want 44,20,55")
			wantString(t, x.sc, "SELECT COUNT(*) FROM u", "0", "the sandbox's u after the prepared DELETE: %s rows, want 0")
			if d := diffDetail(t, x.sc, "SANDBOX DIFF"); len(d) != 3 {
				t.Errorf("DIFF after the prepared writes: %v, want 2 updates of t and a delete of u", d)
			}
			if got := rt26Rows(t, x.root, "SELECT CONCAT((SELECT GROUP_CONCAT(v ORDER BY id) FROM `"+x.db+"`.t), '/', (SELECT COUNT(*) FROM `"+x.db+"`.u))"); got != "1,20,3/1" {
				t.Errorf("production after the prepared writes: %s, want 1,20,3/1 (its own change only)", got)
			}
		},
	},
	{
		// FOR lists naming what is not the sandbox's: another user's
		// sandbox's fork by its physical name, the registry, the server's
		// schemas, names with wildcards, quotes, a dot inside the quotes,
		// another case, look-alike and zero-width characters, a very long
		// name. Nothing of another sandbox, the registry or the server goes;
		// the other user's sandbox cannot be named.
		name:   "ResetForeignNames",
		schema: rt26bSchema,
		run: func(t *testing.T, x *rt26bCtx) {
			ctx := context.Background()
			victimName := x.db + "_v"
			victim := conn(t, openDB(t, x.acct.h.userDSN(rt26bOther, x.db)))
			mustExecC(t, victim, "SANDBOX CREATE "+victimName+" TTL 2h")
			t.Cleanup(func() { _, _ = victim.ExecContext(context.Background(), "SANDBOX DISCARD "+victimName) })
			mustExecC(t, victim, "UPDATE t SET v = 99 WHERE id = 1")
			mustExecC(t, victim, "CREATE TABLE vmade (id INT PRIMARY KEY)")
			vid := rt26bID(t, victim)
			vObjects, vReg := rt26bObjects(t, x.root, vid)
			vphys := "_sqlfork_" + vid + "_" + x.db
			if !strings.Contains(vObjects, vphys+".t") {
				t.Fatalf("the victim's tables %s: no %s.t", vObjects, vphys)
			}
			mustExecC(t, x.sc, "UPDATE u SET v = 7 WHERE id = 1")
			id := rt26bID(t, x.sc)
			ownObjects, ownReg := rt26bObjects(t, x.root, id)
			meta := rt26Rows(t, x.root, "SELECT (SELECT COUNT(*) FROM _sqlfork_meta.sandboxes), (SELECT COUNT(*) FROM _sqlfork_meta.tables), (SELECT COUNT(*) FROM mysql.user)")
			for _, stmt := range []string{
				"SANDBOX RESET " + victimName,
				"SANDBOX RESET " + victimName + " FOR t",
				"SANDBOX RESET FOR `" + vphys + "`.t",
				"SANDBOX RESET FOR `" + vphys + "`.vmade",
				"SANDBOX RESET FOR `" + vphys + ".t`",
				"SANDBOX RESET FOR `_sqlfork_" + vid + "`.`_sqlfork_captures`",
				"SANDBOX RESET FOR _sqlfork_meta.sandboxes",
				"SANDBOX RESET FOR _sqlfork_meta.tables, _sqlfork_meta.promotes",
				"SANDBOX RESET FOR mysql.user",
				"SANDBOX RESET FOR information_schema.TABLES",
				"SANDBOX RESET FOR performance_schema.threads",
				"SANDBOX RESET FOR `" + x.db + ".u`",
				"SANDBOX RESET FOR `u%`",
				"SANDBOX RESET FOR `%`",
				"SANDBOX RESET FOR `_`",
				"SANDBOX RESET FOR U",
				"SANDBOX RESET FOR `ｕ`",
				"SANDBOX RESET FOR `u\u200b`",
				"SANDBOX RESET FOR `u `",
				"SANDBOX RESET FOR `" + strings.Repeat("u", 300) + "`",
				"SANDBOX RESET FOR `u``; DROP TABLE u; -- `",
				"SANDBOX RESET FOR u FOR u",
				"SANDBOX RESET FOR",
				"SANDBOX RESET FOR .u",
				"SANDBOX RESET FOR " + x.db + ".",
			} {
				_, err := x.sc.ExecContext(ctx, stmt)
				t.Logf("%s: %s", stmt, mysqlErr(err))
				if err != nil && strings.HasPrefix(mysqlErr(err), "non-server") {
					t.Errorf("%s: %s, want a MySQL error", stmt, mysqlErr(err))
				}
				wantString(t, x.sc, "SELECT 1", "1", "the session answers %s after "+stmt)
				if o, r := rt26bObjects(t, x.root, vid); o != vObjects || r != vReg {
					t.Fatalf("%s changed the other user's sandbox: tables %s, registry %s; were %s, %s", stmt, o, r, vObjects, vReg)
				}
				if o, r := rt26bObjects(t, x.root, id); o != ownObjects || r != ownReg {
					t.Fatalf("%s reset the sandbox's own u, which it did not name: tables %s, registry %s; were %s, %s", stmt, o, r, ownObjects, ownReg)
				}
			}
			if got := rt26Rows(t, x.root, "SELECT (SELECT COUNT(*) FROM _sqlfork_meta.sandboxes), (SELECT COUNT(*) FROM _sqlfork_meta.tables), (SELECT COUNT(*) FROM mysql.user)"); got != meta {
				t.Errorf("the registry or mysql.user changed: %s, were %s", got, meta)
			}
			wantString(t, victim, "SELECT v FROM t WHERE id = 1", "99", "the other user's sandbox reads %s, want its 99")
			wantString(t, x.sc, "SELECT v FROM u WHERE id = 1", "7", "the sandbox's u reads %s, want its 7")
		},
	},

	{
		// RESET FOR t then PROMOTE: what the sandbox wrote to t before the
		// reset is never applied (no stale capture or fork rows), what it
		// wrote after is, with production's change since the fork kept;
		// then a whole RESET leaves nothing to promote.
		name:     "ResetThenPromote",
		schema:   rt26bSchema,
		promotes: true,
		run: func(t *testing.T, x *rt26bCtx) {
			mustExecC(t, x.sc, "UPDATE t SET v = 10 WHERE id = 1")
			mustExecC(t, x.sc, "DELETE FROM t WHERE id = 3")
			mustExecC(t, x.sc, "INSERT INTO t VALUES (4, 4)")
			mustExecC(t, x.sc, "UPDATE u SET v = 5 WHERE id = 1")
			mustExecDB(t, x.root, "UPDATE `"+x.db+"`.t SET v = 200 WHERE id = 2")
			mustExecC(t, x.sc, "SANDBOX RESET FOR t")
			mustExecC(t, x.sc, "UPDATE t SET v = 30 WHERE id = 3")
			x.grant(t)
			_, _, digest := (&rt26Ctx{sc: x.sc}).dryRun(t, "SANDBOX PROMOTE STRATEGY FAIL DRY RUN")
			mustExecC(t, x.sc, "SANDBOX PROMOTE STRATEGY FAIL MATCHING '"+digest+"'")
			if got := rt26Rows(t, x.root, "SELECT id, v FROM `"+x.db+"`.t ORDER BY id"); got != "1 1|2 200|3 30" {
				t.Errorf("production's t after RESET FOR t and PROMOTE: %s, want 1 1|2 200|3 30 (only the write after the reset)", got)
			}
			if got := rt26Rows(t, x.root, "SELECT id, v FROM `"+x.db+"`.u"); got != "1 5" {
				t.Errorf("production's u after the promote: %s, want 1 5", got)
			}
			mustExecC(t, x.sc, "UPDATE t SET v = 40 WHERE id = 1")
			mustExecC(t, x.sc, "INSERT INTO u VALUES (2, 2)")
			before := x.production(t)
			mustExecC(t, x.sc, "SANDBOX RESET")
			if st, li, _ := x.changes(t, x.sc); st != "none" || li != "none" {
				t.Errorf("after a whole RESET STATUS says %q, LIST %q; want none", st, li)
			}
			if _, plan, _ := (&rt26Ctx{sc: x.sc}).dryRun(t, "SANDBOX PROMOTE DRY RUN"); len(plan) != 0 {
				t.Errorf("DRY RUN after a whole RESET: %v", plan)
			}
			mustExecC(t, x.sc, "SANDBOX PROMOTE")
			if after := x.production(t); after != before {
				t.Errorf("a PROMOTE after a whole RESET changed production: %s, was %s", after, before)
			}
		},
	},
	{
		// RESET inside a multi-statement, before and after a write.
		name:   "ResetMultiStatement",
		schema: rt26bSchema,
		run: func(t *testing.T, x *rt26bCtx) {
			multi := x.attach(t, "", "multiStatements=true")
			mustExecC(t, x.sc, "UPDATE t SET v = 10 WHERE id = 1")
			for _, q := range []string{"SANDBOX RESET; UPDATE t SET v = 3 WHERE id = 1", "UPDATE t SET v = 4 WHERE id = 1; SANDBOX RESET",
				"SANDBOX RESET FOR t; SANDBOX RESET FOR u"} {
				_, err := multi.ExecContext(context.Background(), q)
				t.Logf("%s: %s", q, mysqlErr(err))
				if err != nil && strings.HasPrefix(mysqlErr(err), "non-server") {
					t.Errorf("%s: %s, want a MySQL error", q, mysqlErr(err))
				}
				wantString(t, multi, "SELECT 1", "1", "the session answers %s after "+q)
			}
		},
	},
	{
		// A second proxy holds forks of the sandbox; the first resets it
		// whole: the second's connection reads production's rows after,
		// and its next write forks afresh (a statement it prepared before
		// too); no table or registry row is left behind.
		name:     "ResetSecondProxy",
		schema:   rt26bSchema,
		promotes: true, // production's own change after the reset
		run: func(t *testing.T, x *rt26bCtx) {
			ctx := context.Background()
			b := x.attach(t, x.second(x.db))
			mustExecC(t, b, "UPDATE u SET v = 50 WHERE id = 1")
			upd, err := b.PrepareContext(ctx, "UPDATE u SET v = ? WHERE id = 1")
			if err != nil {
				t.Fatal(mysqlErr(err))
			}
			defer upd.Close()
			mustExecC(t, x.sc, "UPDATE t SET v = 10 WHERE id = 1")
			mustExecC(t, x.sc, "SANDBOX RESET")
			mustExecDB(t, x.root, "UPDATE `"+x.db+"`.u SET v = 2 WHERE id = 1") // production's change after the reset
			wantString(t, b, "SELECT v FROM u WHERE id = 1", "2", "the second proxy's connection reads u %s after the reset, want production's 2")
			wantString(t, b, "SELECT v FROM t WHERE id = 1", "1", "the second proxy's connection reads t %s after the reset, want production's 1")
			if _, err := upd.ExecContext(ctx, 60); err != nil {
				t.Fatalf("the second proxy's prepared UPDATE after the reset: %s", mysqlErr(err))
			}
			wantString(t, x.sc, "SELECT v FROM u WHERE id = 1", "60", "the first proxy reads u %s after the second's write, want 60")
			if d := diffDetail(t, x.sc, "SANDBOX DIFF"); len(d) != 1 || d[0].table != x.db+".u" {
				t.Errorf("DIFF after the reset and one write: %v, want u's update", d)
			}
			mustExecC(t, b, "SANDBOX RESET")
			if o, r := rt26bObjects(t, x.root, rt26bID(t, x.sc)); o != "" || r != "" {
				t.Errorf("after a RESET through the second proxy the sandbox still has tables %q, registry rows %q", o, r)
			}
			wantString(t, x.sc, "SELECT v FROM u WHERE id = 1", "2", "the first proxy reads u %s after the second reset it, want production's 2")
		},
	},

	{
		// RESETs racing writes of another connection of the sandbox (and a
		// second proxy's): each either runs or is refused clearly; after
		// a last RESET nothing is left — no table without its registry
		// row, nor one the other way.
		name:   "ResetRacingWrites",
		schema: rt26bSchema,
		run: func(t *testing.T, x *rt26bCtx) {
			ctx := context.Background()
			writers := []*sql.Conn{x.attach(t, ""), x.attach(t, "")}
			done := make(chan []string, len(writers))
			for i, w := range writers {
				go func() {
					var errs []string
					for n := range 30 {
						q := fmt.Sprintf("UPDATE t SET v = v + 1 WHERE id = %d", 1+i)
						if n%3 == 2 {
							q = fmt.Sprintf("INSERT INTO u VALUES (%d, 0)", 100*(i+1)+n)
						}
						if _, err := w.ExecContext(ctx, q); err != nil {
							errs = append(errs, q+": "+mysqlErr(err))
						}
					}
					done <- errs
				}()
			}
			for range 6 {
				if _, err := x.sc.ExecContext(ctx, "SANDBOX RESET"); err != nil {
					t.Logf("RESET during writes: %s", mysqlErr(err))
					if !strings.HasPrefix(mysqlErr(err), "1205") {
						t.Errorf("RESET during writes: %s, want it done or refused with 1205", mysqlErr(err))
					}
				}
			}
			for range writers {
				for _, e := range <-done {
					t.Errorf("a write during RESETs: %s", e)
				}
			}
			mustExecC(t, x.sc, "SANDBOX RESET")
			if o, r := rt26bObjects(t, x.root, rt26bID(t, x.sc)); o != "" || r != "" {
				t.Errorf("after the last RESET the sandbox still has tables %q, registry rows %q", o, r)
			}
			for _, w := range append(writers, x.sc) {
				wantString(t, w, "SELECT CONCAT((SELECT GROUP_CONCAT(v ORDER BY id) FROM t), '/', (SELECT COUNT(*) FROM u))", "1,2,3/1",
					"a connection reads %s after the last RESET, want production's 1,2,3/1")
			}
		},
	},
}
