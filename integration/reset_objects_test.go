package integration

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	gmysql "github.com/go-mysql-org/go-mysql/mysql"

	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// resetObjectsSchema is the database of the tests of SANDBOX RESET and
// the sandbox's views and routines: tables t and u, and production's view
// pv, procedures pp and pq and function pf over t, function pr; tables u
// and w.
const resetObjectsSchema = "CREATE TABLE t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB;" +
	"CREATE TABLE u (id INT PRIMARY KEY, v INT) ENGINE=InnoDB;" +
	"CREATE TABLE w (id INT PRIMARY KEY, v INT) ENGINE=InnoDB;" +
	"INSERT INTO t VALUES (1, 1), (2, 2); INSERT INTO u VALUES (1, 1); INSERT INTO w VALUES (1, 1);" +
	"CREATE VIEW pv AS SELECT id, v FROM t;" +
	"CREATE PROCEDURE pp() SELECT v FROM t WHERE id = 1;" +
	"CREATE PROCEDURE pq() SELECT 'production''s pq' AS q;" +
	"CREATE FUNCTION pf() RETURNS INT READS SQL DATA RETURN (SELECT v FROM t WHERE id = 2);" +
	"CREATE FUNCTION pr() RETURNS INT DETERMINISTIC RETURN 1;"

// resetObjectsEnv is one account's sandbox over a database made from
// resetObjectsSchema: sc its connection, root a direct one to production.
type resetObjectsEnv struct {
	db   string
	acct string
	sc   *sql.Conn
	root *sql.Conn
	pool *sql.DB
	// raw is another connection of the sandbox, which reads OK messages.
	raw *raw
}

// resetObjectsRun runs f for each account (ALL PRIVILEGES and least
// privilege) with a kept sandbox named after the database.
func resetObjectsRun(t *testing.T, prefix string, f func(t *testing.T, x resetObjectsEnv)) {
	e := newDiffEnv(t, "explicit", false, nil)
	resetObjectsEach(t, e, prefix, f)
}

// resetObjectsEach is resetObjectsRun in e.
func resetObjectsEach(t *testing.T, e *diffEnv, prefix string, f func(t *testing.T, x resetObjectsEnv)) {
	grantProcRead(t, e.prod)
	for _, acct := range e.accts {
		t.Run(acct.name, func(t *testing.T) {
			db := prefix + "_" + acct.short()
			e.database(t, db, resetObjectsSchema)
			pool := openDB(t, e.prod.DSN(db))
			mustExecDB(t, pool, "GRANT EXECUTE ON `"+db+"`.* TO '"+sandboxUser+"'@'%'")
			sc := conn(t, openDB(t, acct.dsn("", db)))
			mustExecC(t, sc, "SANDBOX CREATE "+db+" TTL 2h")
			t.Cleanup(func() { _, _ = sc.ExecContext(context.Background(), "SANDBOX DISCARD "+db) })
			r := dialRaw(t, acct.h.addr, acct.user, acct.password, db)
			r.query("SANDBOX ATTACH " + db)
			f(t, resetObjectsEnv{db: db, acct: acct.name, sc: sc, root: conn(t, pool), pool: pool, raw: r})
		})
	}
}

// same checks that each of qs has the same outcome (rows, or the error)
// in the sandbox as on a direct connection to production.
func (x resetObjectsEnv) same(t *testing.T, when string, qs ...string) {
	t.Helper()
	x.sameOn(t, x.sc, when, qs...)
}

// sameOn is same on the sandbox's connection sc.
func (x resetObjectsEnv) sameOn(t *testing.T, sc *sql.Conn, when string, qs ...string) {
	t.Helper()
	ctx := context.Background()
	for _, q := range qs {
		want, got := objOutcome(ctx, x.root, q), objOutcome(ctx, sc, q)
		if want != got {
			t.Errorf("%s: %s\n production: %s\n sandbox:    %s", when, q, want, got)
		}
	}
}

// held lists what the server has in the sandbox's own databases (tables,
// views, routines, triggers) and the registry's rows of it.
func (x resetObjectsEnv) held(t *testing.T) string {
	t.Helper()
	id := rt26bID(t, x.sc)
	_, registered := rt26bObjects(t, x.pool, id)
	// Its databases (its information_schema views, in _sqlfork_<id>, are the proxy's).
	like := "'" + strings.ReplaceAll("_sqlfork_"+id+"_", "_", "\\_") + "%'"
	objects := rt26Rows(t, x.pool, "SELECT IFNULL(GROUP_CONCAT(TABLE_SCHEMA, '.', TABLE_NAME ORDER BY 1), '') FROM information_schema.TABLES WHERE TABLE_SCHEMA LIKE "+like)
	routines := rt26Rows(t, x.pool, "SELECT IFNULL(GROUP_CONCAT(ROUTINE_SCHEMA, '.', ROUTINE_NAME ORDER BY 1), '') FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA LIKE "+like)
	triggers := rt26Rows(t, x.pool, "SELECT IFNULL(GROUP_CONCAT(TRIGGER_SCHEMA, '.', TRIGGER_NAME ORDER BY 1), '') FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA LIKE "+like)
	if objects+registered+routines+triggers == "" {
		return ""
	}
	return "tables and views [" + objects + "] routines [" + routines + "] triggers [" + triggers + "] registry [" + registered + "]"
}

// TestSandboxResetObjectsFor: the red team's sequence — a write to t, then
// a view, a function and a procedure the sandbox makes over t — and a view
// over that view, the sandbox's copies of production's view and procedure
// over t, then SANDBOX RESET FOR t: they go with t (named in the OK
// message), so each reads as on production (its own objects do not exist
// there); a view over another table stays, with that table's changes;
// production is untouched.
func TestSandboxResetObjectsFor(t *testing.T) {
	resetObjectsRun(t, "resetobjfor", func(t *testing.T, x resetObjectsEnv) {
		for _, q := range []string{"UPDATE t SET v = 10 WHERE id = 1", "CREATE VIEW tv AS SELECT id, v FROM t",
			"CREATE FUNCTION rf() RETURNS INT READS SQL DATA RETURN (SELECT v FROM t WHERE id = 1)",
			"CREATE PROCEDURE rp() SELECT v FROM t WHERE id = 1", "CREATE VIEW tv2 AS SELECT v FROM tv",
			"UPDATE u SET v = 50 WHERE id = 1", "CREATE VIEW uv AS SELECT v FROM u",
			"CREATE TRIGGER wt BEFORE UPDATE ON w FOR EACH ROW SET NEW.v = rf()", "UPDATE w SET v = 0 WHERE id = 1"} {
			mustExecC(t, x.sc, q)
		}
		for _, q := range []string{"SELECT v FROM tv WHERE id = 1", "SELECT rf()", "CALL rp()", "SELECT * FROM tv2 WHERE v = 10",
			"SELECT v FROM pv WHERE id = 1", "CALL pp()", "SELECT v FROM w"} {
			wantString(t, x.sc, q, "10", q+" reads %s before the reset, want the sandbox's 10")
		}
		prod := databaseChecksum(t, x.pool, x.db)
		msg := x.info(t, "SANDBOX RESET FOR t")
		wantMsg := "reset with them, as they use those tables: function " + x.db + ".rf, procedure " + x.db + ".pp, procedure " + x.db + ".rp, " +
			"view " + x.db + ".pv, view " + x.db + ".tv, view " + x.db + ".tv2"
		if !strings.Contains(msg, wantMsg) {
			t.Errorf("RESET FOR t says %q, want it to hold %q", msg, wantMsg)
		}
		// w's trigger calls rf: w goes too.
		if wantMsg := "foreign keys or triggers link them: " + x.db + ".w;"; !strings.Contains(msg, wantMsg) {
			t.Errorf("RESET FOR t says %q, want it to hold %q", msg, wantMsg)
		}
		x.same(t, "after RESET FOR t", "SELECT v FROM tv WHERE id = 1", "SELECT rf()", "CALL rp()", "SELECT * FROM tv2",
			"SELECT v FROM pv ORDER BY id", "CALL pp()", "SELECT pf()", "SELECT v FROM t ORDER BY id")
		wantString(t, x.sc, "SELECT v FROM uv", "50", "uv reads %s after RESET FOR t, want the sandbox's 50")
		x.same(t, "after RESET FOR t", "SELECT v FROM w")
		mustExecC(t, x.sc, "UPDATE w SET v = 5 WHERE id = 1")
		wantString(t, x.sc, "SELECT v FROM w", "5", "w reads %s after a write following the reset, want 5 (no trigger)")
		mustExecC(t, x.sc, "UPDATE t SET v = 30 WHERE id = 1")
		wantString(t, x.sc, "SELECT v FROM pv WHERE id = 1", "30", "pv reads %s after the next write, want the fresh fork's 30")
		mustExecC(t, x.sc, "CREATE VIEW tv AS SELECT id, v FROM t")
		wantString(t, x.sc, "SELECT v FROM tv WHERE id = 1", "30", "tv made again reads %s, want the fresh fork's 30")
		if after := databaseChecksum(t, x.pool, x.db); after != prod {
			t.Errorf("production changed: %s, was %s", after, prod)
		}
	})
}

// TestSandboxResetObjectsAll: a whole SANDBOX RESET after the sandbox made
// a view, a procedure, a function and a trigger, copied production's view
// (read after a fork), procedure (CALL) and function, replaced one of
// production's procedures and dropped another leaves nothing of the
// sandbox's own behind — no table, view, routine, trigger or registry row
// in its databases — and every name reads as on production, production's
// changes since included; production is untouched.
func TestSandboxResetObjectsAll(t *testing.T) {
	resetObjectsRun(t, "resetobjall", func(t *testing.T, x resetObjectsEnv) {
		for _, q := range []string{"UPDATE t SET v = 10 WHERE id = 1", "CREATE VIEW sv AS SELECT id, v FROM t",
			"CREATE PROCEDURE sp() SELECT 'sandbox''s sp' AS s", "CREATE FUNCTION sf() RETURNS INT DETERMINISTIC RETURN 7",
			"CREATE TRIGGER su BEFORE UPDATE ON u FOR EACH ROW SET NEW.v = NEW.v + 1000", "UPDATE u SET v = 5 WHERE id = 1",
			"DROP PROCEDURE pq", "CREATE OR REPLACE FUNCTION pr() RETURNS INT DETERMINISTIC RETURN 2",
			"CALL pp()", "SELECT pf()", "SELECT * FROM pv"} {
			rows, err := x.sc.QueryContext(context.Background(), q)
			if err != nil {
				t.Fatalf("%s: %s", q, mysqlErr(err))
			}
			rows.Close()
		}
		wantString(t, x.sc, "SELECT v FROM u", "1005", "u reads %s before the reset, want the sandbox trigger's 1005")
		wantString(t, x.sc, "SELECT pr()", "2", "pr() reads %s before the reset, want the sandbox's 2")
		if got := objOutcome(context.Background(), x.sc, "CALL pq()"); !strings.HasPrefix(got, "error 1305") {
			t.Fatalf("CALL of the procedure the sandbox dropped: %s, want 1305", got)
		}
		mustExecDB(t, x.pool, "UPDATE t SET v = 20 WHERE id = 2") // production's change after the forks
		prod := databaseChecksum(t, x.pool, x.db)
		if msg := x.info(t, "SANDBOX RESET"); !strings.Contains(msg, "procedure "+x.db+".sp") || !strings.Contains(msg, "view "+x.db+".sv") ||
			!strings.Contains(msg, "function "+x.db+".sf") {
			t.Errorf("RESET says %q, want it to name the sandbox's view, procedure and function", msg)
		}
		if h := x.held(t); h != "" {
			t.Errorf("after RESET the sandbox still holds %s", h)
		}
		x.same(t, "after RESET", "SELECT * FROM sv", "CALL sp()", "SELECT sf()", "CALL pp()", "SELECT pf()", "CALL pq()", "SELECT pr()",
			"SELECT * FROM pv ORDER BY id", "SELECT * FROM t ORDER BY id", "SELECT * FROM u")
		// The trigger went with u's fork: the next write forks u afresh.
		mustExecC(t, x.sc, "UPDATE u SET v = 6 WHERE id = 1")
		wantString(t, x.sc, "SELECT v FROM u", "6", "u reads %s after a write following the reset, want 6 (no trigger)")
		mustExecC(t, x.sc, "SANDBOX RESET")
		x.same(t, "after the second RESET", "SELECT * FROM u", "CALL pp()", "SELECT pf()")
		if after := databaseChecksum(t, x.pool, x.db); after != prod {
			t.Errorf("production changed: %s, was %s", after, prod)
		}
	})
}

// TestSandboxResetObjectsSecondProxy: a second proxy process whose
// connection of the sandbox used its routines and copied production's
// procedure and function sees the reset another process made: every name
// reads as on production there too.
func TestSandboxResetObjectsSecondProxy(t *testing.T) {
	e := newDiffEnv(t, "explicit", false, nil)
	_, least2 := sandboxProxy(t, "explicit", nil)
	all2 := startTestProxy(t, e.prod.Addr, e.prod, func(c *proxy.Config) {
		c.Mode = "explicit"
		c.Sandbox.ReapInterval = 500 * time.Millisecond
	})
	second := map[string]func(db string) string{
		"least-privilege": func(db string) string { return least2.userDSN(sandboxUser, db) },
		"all-privileges": func(db string) string {
			return fmt.Sprintf("%s:%s@tcp(%s)/%s", e.prod.User, e.prod.Password, all2.addr, db)
		},
	}
	resetObjectsEach(t, e, "resetobj2nd", func(t *testing.T, x resetObjectsEnv) {
		b := conn(t, openDB(t, second[x.acct](x.db)))
		mustExecC(t, b, "SANDBOX ATTACH "+x.db)
		mustExecC(t, x.sc, "CREATE FUNCTION sf() RETURNS INT DETERMINISTIC RETURN 7")
		mustExecC(t, x.sc, "CREATE PROCEDURE sp() SELECT 'sandbox''s sp' AS s")
		mustExecC(t, x.sc, "UPDATE t SET v = 10 WHERE id = 1")
		for _, q := range []string{"SELECT sf()", "CALL sp()", "CALL pp()", "SELECT pf()"} {
			rows, err := b.QueryContext(context.Background(), q)
			if err != nil {
				t.Fatalf("%s through the second proxy: %s", q, mysqlErr(err))
			}
			rows.Close()
		}
		mustExecC(t, x.sc, "SANDBOX RESET")
		// A read of a table its map leaves to production makes the second
		// process check the registry (SANDBOX RESET in docs/SANDBOXES.md).
		wantString(t, b, "SELECT COUNT(*) FROM u", "1", "u has %s rows through the second proxy, want 1")
		x.sameOn(t, b, "through the second proxy after RESET", "SELECT sf()", "CALL sp()", "CALL pp()", "SELECT pf()", "SELECT v FROM t ORDER BY id")
	})
}

// info runs q on x's raw connection and returns its OK packet's message.
func (x resetObjectsEnv) info(t *testing.T, q string) string {
	t.Helper()
	x.raw.send(append([]byte{0x03}, q...)...)
	p := x.raw.read()
	if p[0] != 0x00 {
		t.Fatalf("%s: want OK, got %q", q, p)
	}
	pos := 1
	for range 2 { // affected rows, last insert id
		_, _, n := gmysql.LengthEncodedInt(p[pos:])
		pos += n
	}
	return string(p[pos+4:]) // after the status and warnings
}
