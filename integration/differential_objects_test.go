package integration

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/integration/testdb"
)

// objDiffSchema is the production the object workload starts from, in a
// utf8mb4 database: foreign keys with cascades (customers ← orders ←
// items, tags outside every key), a sequence, views (a join with GROUP
// BY, an updatable one WITH CHECK OPTION, a view of a view), triggers (one
// counting orders per customer in another table, one changing the row),
// stored functions (one reading orders, one writing tags) and a procedure.
const objDiffSchema = `
CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, UNIQUE KEY (name));
CREATE TABLE orders (id INT AUTO_INCREMENT PRIMARY KEY, cust INT NOT NULL, qty INT NOT NULL, note VARCHAR(40),
  CONSTRAINT fk_cust FOREIGN KEY (cust) REFERENCES customers (id) ON DELETE CASCADE ON UPDATE CASCADE);
CREATE TABLE items (id INT AUTO_INCREMENT PRIMARY KEY, ord INT NULL, label VARCHAR(40),
  CONSTRAINT fk_ord FOREIGN KEY (ord) REFERENCES orders (id) ON DELETE SET NULL);
CREATE TABLE tags (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(40));
CREATE SEQUENCE s1 START WITH 100 INCREMENT BY 5;
INSERT INTO customers VALUES (1, 'Ada'), (2, 'Bjørn'), (3, '日本'), (4, 'Zoë');
INSERT INTO orders (cust, qty, note) VALUES (1, 5, 'first'), (2, 7, 'ünïcode'), (3, 2, '😀 emoji'), (1, 9, NULL);
INSERT INTO items (ord, label) VALUES (1, 'a'), (1, 'b'), (2, 'c'), (3, 'д');
INSERT INTO tags (v) VALUES ('x'), ('y');
CREATE VIEW v_tot AS SELECT c.name, COUNT(o.id) AS n, COALESCE(SUM(o.qty), 0) AS q FROM customers c LEFT JOIN orders o ON o.cust = c.id GROUP BY c.name;
CREATE VIEW v_big AS SELECT id, cust, qty, note FROM orders WHERE qty >= 5 WITH CHECK OPTION;
CREATE TABLE ocount (cust INT PRIMARY KEY, n INT NOT NULL);
CREATE TRIGGER orders_ai AFTER INSERT ON orders FOR EACH ROW INSERT INTO ocount VALUES (NEW.cust, 1) ON DUPLICATE KEY UPDATE n = n + 1;
CREATE TRIGGER orders_bu BEFORE UPDATE ON orders FOR EACH ROW SET NEW.note = LEFT(CONCAT(COALESCE(NEW.note, ''), '~'), 40);
CREATE VIEW v_items AS SELECT i.id, i.label, t.name FROM items i LEFT JOIN orders o ON o.id = i.ord LEFT JOIN v_tot t ON t.n = o.qty;
CREATE FUNCTION cust_qty(c INT) RETURNS INT READS SQL DATA RETURN (SELECT COALESCE(SUM(qty), 0) FROM orders WHERE cust = c);
CREATE FUNCTION tag_it(x VARCHAR(40)) RETURNS INT MODIFIES SQL DATA BEGIN
  INSERT INTO tags (v) VALUES (x);
  RETURN (SELECT COUNT(*) FROM tags);
END;
CREATE PROCEDURE add_order(IN c INT, IN q INT) INSERT INTO orders (cust, qty, note) VALUES (c, q, 'proc');`

// objGen makes a seeded random workload over objDiffSchema's objects.
type objGen struct {
	genState
	r     *rand.Rand
	views []string // views the workload made
	procs []string // procedures the workload made
	funcs []string // functions the workload made
}

var objWords = []string{"Ada", "Bjørn", "日本", "Zoë", "Ñandú", "straße", "😀", "x", "Ω", "ça"}

func (g *objGen) word() string { return objWords[g.r.Intn(len(objWords))] }

func (g *objGen) next1() diffStmt {
	r := g.r
	switch k := r.Intn(100); {
	case k < 10:
		return diffStmt{sql: "INSERT INTO orders (cust, qty, note) VALUES (?, ?, ?)",
			args: []any{1 + r.Intn(6), r.Intn(12), g.word()}, prepare: r.Intn(2) == 0} // cust 5, 6: no such customer
	case k < 15:
		return diffStmt{sql: "INSERT INTO items (ord, label) VALUES (?, ?)", args: []any{r.Intn(9), g.word()}}
	case k < 19:
		return diffStmt{sql: fmt.Sprintf("INSERT INTO customers VALUES (%d, '%s%d')", 5+r.Intn(6), g.word(), r.Intn(3))}
	case k < 23:
		return diffStmt{sql: fmt.Sprintf("UPDATE customers SET id = id + 10 WHERE id = %d", 1+r.Intn(5))}
	case k < 27:
		return diffStmt{sql: fmt.Sprintf("DELETE FROM customers WHERE id = %d", 1+r.Intn(16))}
	case k < 30:
		return diffStmt{sql: fmt.Sprintf("DELETE FROM orders WHERE qty < %d", r.Intn(6))}
	case k < 33:
		return diffStmt{sql: fmt.Sprintf("UPDATE orders SET qty = qty + %d, note = '%s' WHERE id %% 3 = %d", r.Intn(4), g.word(), r.Intn(3))}
	case k < 37:
		return diffStmt{sql: fmt.Sprintf("UPDATE v_big SET qty = %d WHERE id = %d", r.Intn(10), 1+r.Intn(8))} // CHECK OPTION below 5
	case k < 39:
		return diffStmt{sql: fmt.Sprintf("INSERT INTO v_big (cust, qty, note) VALUES (%d, %d, '%s')", 1+r.Intn(5), r.Intn(10), g.word())}
	case k < 41:
		return diffStmt{sql: fmt.Sprintf("DELETE FROM v_big WHERE qty > %d", 6+r.Intn(6))}
	case k < 44:
		return diffStmt{sql: "SELECT * FROM v_tot ORDER BY name", query: true}
	case k < 47:
		return g.routine()
	case k < 50:
		return diffStmt{sql: "SELECT * FROM v_items ORDER BY id", query: true}
	case k < 53:
		return diffStmt{sql: "SELECT name, CHAR_LENGTH(name), HEX(name) FROM customers WHERE name LIKE ? ORDER BY name", args: []any{"%" + string([]rune(g.word())[:1]) + "%"}, query: true, prepare: r.Intn(2) == 0}
	case k < 56:
		return diffStmt{sql: "SELECT o.id, o.note, c.name, (SELECT COUNT(*) FROM items i WHERE i.ord = o.id) FROM orders o JOIN customers c ON c.id = o.cust ORDER BY o.id", query: true}
	case k < 59:
		if g.inTx {
			return diffStmt{sql: "SELECT LASTVAL(s1)", query: true}
		}
		return diffStmt{sql: []string{"SELECT NEXTVAL(s1)", "SELECT NEXT VALUE FOR s1", "SELECT LASTVAL(s1)", "SELECT PREVIOUS VALUE FOR s1"}[r.Intn(4)], query: true}
	case k < 60:
		if g.inTx {
			return diffStmt{sql: "SELECT * FROM s1", query: true}
		}
		return diffStmt{sql: fmt.Sprintf("SELECT SETVAL(s1, %d)", 200+r.Intn(50)), query: true}
	case k < 62:
		return diffStmt{sql: "SELECT * FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = DATABASE() AND REFERENCED_TABLE_NAME IS NOT NULL ORDER BY TABLE_NAME, CONSTRAINT_NAME", query: true}
	case k < 64:
		return diffStmt{sql: "SELECT TABLE_NAME, TABLE_TYPE, TABLE_COLLATION FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() ORDER BY 1", query: true}
	case k < 66:
		return diffStmt{sql: "SHOW CREATE TABLE " + []string{"customers", "orders", "items", "tags", "s1"}[r.Intn(5)], query: true}
	case k < 73:
		return g.txStep(r)
	case k < 76:
		g.inTx = false // DDL commits
		return diffStmt{sql: fmt.Sprintf("CREATE VIEW %s AS SELECT c.name, o.qty, o.note FROM customers c JOIN orders o ON o.cust = c.id WHERE o.qty > %d", g.fresh("vw", &g.views), r.Intn(8))}
	case k < 79:
		if len(g.views) == 0 {
			return diffStmt{sql: "SELECT * FROM v_tot WHERE n > 1 ORDER BY name", query: true}
		}
		return diffStmt{sql: "SELECT * FROM " + g.views[r.Intn(len(g.views))] + " ORDER BY name, qty, note", query: true}
	case k < 80:
		g.inTx = false
		return diffStmt{sql: fmt.Sprintf("CREATE OR REPLACE VIEW v_tot AS SELECT c.name, COUNT(o.id) AS n, %d AS q FROM customers c LEFT JOIN orders o ON o.cust = c.id GROUP BY c.name", r.Intn(9))}
	case k < 82:
		g.inTx = false
		return diffStmt{sql: "CREATE PROCEDURE " + g.fresh("p", &g.procs) + "(IN x VARCHAR(40)) BEGIN INSERT INTO tags (v) VALUES (x); SELECT COUNT(*) AS n FROM tags; END"}
	case k < 85:
		if len(g.procs) == 0 {
			return diffStmt{sql: "SELECT COUNT(*) FROM tags", query: true}
		}
		return diffStmt{sql: "CALL " + g.procs[r.Intn(len(g.procs))] + "('" + g.word() + "')", query: true}
	case k < 87:
		g.inTx = false
		return diffStmt{sql: fmt.Sprintf("ALTER TABLE tags ADD COLUMN c%d VARCHAR(10) DEFAULT '%s'", g.next+r.Intn(1000), g.word())}
	case k < 89:
		return diffStmt{sql: "INSERT INTO tags (v) VALUES (?)", args: []any{g.word() + g.word()}, prepare: true}
	case k < 90:
		return diffStmt{sql: "SELECT v, LENGTH(v), CHAR_LENGTH(v) FROM tags ORDER BY v, id", query: true}
	case k < 91:
		return diffStmt{sql: "SELECT * FROM ocount ORDER BY cust", query: true}
	case k < 93:
		g.inTx = false
		return diffStmt{sql: "TRUNCATE TABLE " + []string{"items", "tags", "orders"}[r.Intn(3)]} // orders: referenced, 1701
	case k < 95:
		return diffStmt{sql: "SELECT * FROM v_big ORDER BY id", query: true}
	case k < 97:
		return diffStmt{sql: "UPDATE v_tot SET q = 1"} // not updatable
	default:
		g.inTx = false
		return diffStmt{sql: "DROP TABLE " + []string{"customers", "items", "tags"}[r.Intn(3)]} // customers: referenced
	}
}

// routine calls production's stored functions and procedure, or makes and
// calls functions of the session's own.
func (g *objGen) routine() diffStmt {
	r := g.r
	switch k := r.Intn(6); {
	case k == 0:
		return diffStmt{sql: "SELECT id, name, cust_qty(id) FROM customers ORDER BY id", query: true}
	case k == 1 && !g.inTx: // a write whose replay would differ: kept out of transactions, as NEXTVAL is
		return diffStmt{sql: "SELECT tag_it(?)", args: []any{g.word()}, query: true, prepare: r.Intn(2) == 0}
	case k == 2 && !g.inTx:
		return diffStmt{sql: fmt.Sprintf("CALL add_order(%d, %d)", 1+r.Intn(6), r.Intn(12))}
	case k == 3 && !g.inTx:
		return diffStmt{sql: fmt.Sprintf("CREATE FUNCTION %s(x INT) RETURNS INT RETURN x * %d + cust_qty(x)", g.fresh("f", &g.funcs), 1+r.Intn(5))}
	case len(g.funcs) > 0:
		f := g.funcs[r.Intn(len(g.funcs))]
		return diffStmt{sql: "SELECT id, " + f + "(id) AS v FROM customers WHERE " + f + "(id) > ? ORDER BY id", args: []any{r.Intn(20)}, query: true}
	}
	return diffStmt{sql: "SELECT cust_qty(?)", args: []any{1 + r.Intn(4)}, query: true, prepare: true}
}

// TestDifferentialObjects runs a seeded random workload over foreign keys
// with cascades, views (read, written through, made and replaced), a
// sequence, triggers, production's stored functions and procedure,
// functions and procedures made in the session, and utf8mb4 text directly
// on one MariaDB and through a sandbox in front of a second one, and
// requires identical outcomes statement by statement and identical final
// tables, with production behind the proxy unchanged — with the
// least-privilege upstream account (which reads routines' definitions
// with SELECT on mysql.proc) and with an ALL PRIVILEGES one.
func TestDifferentialObjects(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	sandDB, direct, accts := objServers(ctx, t)
	grantProcRead(t, sandDB)
	seeds, perSeed := []int64{1, 2, 3, 4, 5}, 1000
	var total, diffs atomic.Int64
	// Each seed and account has a database of its own: they run side by
	// side (go test's -parallel, GOMAXPROCS by default), each statement
	// waiting on two servers' round trips.
	t.Run("seeds", func(t *testing.T) {
		for a, acct := range accts {
			for _, seed := range seeds {
				t.Run(fmt.Sprintf("%s/%d", acct.name, seed), func(t *testing.T) {
					t.Parallel()
					name := fmt.Sprintf("od%d_%d", seed, a)
					t.Cleanup(func() {
						for _, srv := range []*testdb.Server{direct, sandDB} {
							_, _ = openDB(t, srv.DSN("")).Exec("DROP DATABASE IF EXISTS " + name)
						}
					})
					n, d := objDifferential(ctx, t, acct.name, seed, perSeed, name, direct, sandDB, acct.dsn(name))
					total.Add(int64(n))
					diffs.Add(int64(d))
				})
			}
		}
	})
	t.Logf("%d statements, %d differences", total.Load(), diffs.Load())
}

// objDifferential runs one seed's workload in database name and returns
// the statements run and the differences found.
func objDifferential(ctx context.Context, t *testing.T, acct string, seed int64, n int, name string, direct, sandDB *testdb.Server, dsn string) (int, int) {
	rootSand, before := objDatabase(ctx, t, name, objDiffSchema, direct, sandDB)
	dc := conn(t, openDB(t, direct.DSN(name)))
	sc := conn(t, openDB(t, dsn))
	g := &objGen{r: rand.New(rand.NewSource(seed))}
	diffs := compareWorkload(ctx, t, fmt.Sprintf("%s seed %d", acct, seed), dc, sc, n, g.next1)
	if w, g := objDump(ctx, t, dc), objDump(ctx, t, sc); w != g {
		t.Errorf("%s seed %d: final tables differ (direct, sandbox):\n%s", acct, seed, lineDiff(w, g))
	}
	if after := objProduction(ctx, t, rootSand, name); after != before {
		t.Errorf("%s seed %d: production changed (before, after):\n%s", acct, seed, lineDiff(before, after))
	}
	if strings.Contains(before, "_sqlfork") {
		t.Errorf("production names a sandbox")
	}
	t.Logf("%s seed %d: %d statements, %d differences", acct, seed, n, diffs)
	return n, diffs
}
