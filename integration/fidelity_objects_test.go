package integration

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/integration/testdb"
	"github.com/sqlfork/sqlfork-proxy/proxy"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
)

// objCase is one fidelity case over a database's objects: the production
// schema (made alike on a direct server and behind the proxy, in a
// database of the case's own), then statements run on each side in one
// session, whose outcomes must be identical.
type objCase struct {
	name   string
	schema string   // statements making production, run as root
	steps  []string // the session's statements
	// mask, when set, matches what may differ between two runs of a step
	// (ANALYZE's timings): it is blanked in both outcomes.
	mask *regexp.Regexp
	// multi: the session's connections send several statements in one
	// input (multiStatements=true).
	multi bool
}

// runObjCases runs cases through a sandbox — with the least-privilege
// upstream account and with an ALL PRIVILEGES one — and directly, requiring
// identical outcomes step by step (rows and labels, error codes and texts,
// affected rows, insert ids, warnings), identical final tables, and
// production unchanged behind the proxy.
func runObjCases(t *testing.T, cases []objCase) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	sandDB, direct, accts := objServers(ctx, t)
	// The cases' databases go with the test: views and functions left in
	// them would be read by later tests' information_schema queries.
	t.Cleanup(func() {
		for i := range cases {
			for _, srv := range []*testdb.Server{direct, sandDB} {
				_, _ = openDB(t, srv.DSN("")).Exec(fmt.Sprintf("DROP DATABASE IF EXISTS fx%d", i))
			}
		}
	})
	for _, acct := range accts {
		for i, c := range cases {
			t.Run(acct.name+"/"+c.name, func(t *testing.T) {
				name := fmt.Sprintf("fx%d", i)
				objCaseRun(ctx, t, c, name, direct, sandDB, acct.dsn(name))
			})
		}
	}
}

// objAccount is a way through a sandbox: a name, and the DSN of database
// db.
type objAccount struct {
	name string
	dsn  func(db string) string
}

// objServers starts what the object fidelity tests compare: the shared
// server behind a transparent proxy with the least-privilege upstream
// account and another with an ALL PRIVILEGES one (accts), and a direct
// server of its own.
func objServers(ctx context.Context, t *testing.T) (sandDB, direct *testdb.Server, accts []objAccount) {
	sandDB, leastPriv := sandboxProxy(t, "transparent", nil)
	allPriv := startTestProxy(t, sandDB.Addr, sandDB, func(c *proxy.Config) { c.Mode = "transparent" })
	direct = testdb.StartForTest(ctx, t, testdb.Options{})
	return sandDB, direct, []objAccount{
		{"least-privilege", func(db string) string { return leastPriv.userDSN(sandboxUser, db) }},
		{"all-privileges", func(db string) string { return allPriv.dsn(db) }},
	}
}

// grantProcRead lets the proxy's least-privilege account read routines'
// definitions (SELECT on mysql.proc, docs/OPERATIONS.md) for the test.
func grantProcRead(t *testing.T, db *testdb.Server) {
	t.Helper()
	root := openDB(t, db.DSN(""))
	mustExecDB(t, root, "GRANT SELECT ON mysql.proc TO '"+sandboxUser+"'@'%'")
	t.Cleanup(func() { _, _ = root.Exec("REVOKE SELECT ON mysql.proc FROM '" + sandboxUser + "'@'%'") })
}

// productionRoutines makes production's function app.fn and procedure
// app.proc (each given as its definition after CREATE FUNCTION app. or
// CREATE PROCEDURE app.), lets the least-privilege account read their
// definitions, and drops them when the test ends. It returns root's pool.
func productionRoutines(t *testing.T, db *testdb.Server, fn, proc string) *sql.DB {
	t.Helper()
	grantProcRead(t, db)
	root := openDB(t, db.DSN(""))
	fnName, _, _ := strings.Cut(fn, "(")
	procName, _, _ := strings.Cut(proc, "(")
	setUp(t, root, []string{"CREATE FUNCTION app." + fn, "CREATE PROCEDURE app." + proc},
		"DROP FUNCTION IF EXISTS app."+fnName, "DROP PROCEDURE IF EXISTS app."+procName)
	return root
}

// objCaseRun runs one case in database name.
func objCaseRun(ctx context.Context, t *testing.T, c objCase, name string, direct, sandDB *testdb.Server, dsn string) {
	rootSand, before := objDatabase(ctx, t, name, c.schema, direct, sandDB)
	ddsn := direct.DSN(name)
	if c.multi {
		ddsn, dsn = withParams(ddsn, []string{"multiStatements=true"}), withParams(dsn, []string{"multiStatements=true"})
	}
	dc := conn(t, openDB(t, ddsn))
	sc := conn(t, openDB(t, dsn))
	for i, q := range c.steps {
		want, got := objOutcome(ctx, dc, q), objOutcome(ctx, sc, q)
		if c.mask != nil {
			want, got = c.mask.ReplaceAllString(want, "…"), c.mask.ReplaceAllString(got, "…")
		}
		if want != got {
			t.Errorf("step %d %s\n direct:  %s\n sandbox: %s", i, q, want, got)
		}
	}
	if w, g := objDump(ctx, t, dc), objDump(ctx, t, sc); w != g {
		t.Errorf("final tables differ (direct, sandbox):\n%s", lineDiff(w, g))
	}
	if after := objProduction(ctx, t, rootSand, name); after != before {
		t.Errorf("production changed (before, after):\n%s", lineDiff(before, after))
	}
}

// sortedRows is an outcome with its rows in order: a table or view read
// whole has none of its own.
func sortedRows(outcome string) string {
	parts := strings.Split(outcome, "|")
	if strings.HasPrefix(outcome, "error") || len(parts) < 3 {
		return outcome
	}
	sort.Strings(parts[1:])
	return strings.Join(parts, "|")
}

// lineDiff shows the lines of a and b from the first that differs, a few
// of each.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	i := 0
	for i < len(al) && i < len(bl) && al[i] == bl[i] {
		i++
	}
	from := max(i-2, 0)
	part := func(l []string) string { return strings.Join(l[min(from, len(l)):min(i+4, len(l))], "\n   ") }
	return fmt.Sprintf("  from line %d:\n - %s\n + %s", from+1, part(al), part(bl))
}

// objDatabase makes the database name from schema on the direct server
// and behind the proxy (production), lets the proxy's least-privilege
// account read it, and returns a root connection behind the proxy with
// production as it is before the session.
func objDatabase(ctx context.Context, t *testing.T, name, schema string, direct, sandDB *testdb.Server) (*sql.DB, string) {
	for _, srv := range []*testdb.Server{direct, sandDB} {
		root := openDB(t, srv.DSN("")+"?multiStatements=true")
		if _, err := root.Exec("DROP DATABASE IF EXISTS " + name + "; CREATE DATABASE " + name +
			" CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci; USE " + name + ";" + schema); err != nil {
			t.Fatalf("schema: %v", err)
		}
	}
	rootSand := openDB(t, sandDB.DSN(""))
	// TRIGGER: MariaDB shows a table's triggers only to accounts with it.
	if _, err := rootSand.Exec("GRANT SELECT, SHOW VIEW, TRIGGER ON " + name + ".* TO '" + sandboxUser + "'@'%'"); err != nil {
		t.Fatal(err)
	}
	return rootSand, objProduction(ctx, t, rootSand, name)
}

// rowsStep marks a step whose rows are compared although its first word
// does not say it returns any (EXECUTE of a prepared query): objOutcome
// runs the rest of the step as a query.
const rowsStep = "(rows) "

// binaryStep marks a step run as a prepared statement (COM_STMT_PREPARE,
// then EXECUTE with binary rows).
const binaryStep = "(binary) "

// binaryOutcome is objOutcome of q run as a prepared statement.
func binaryOutcome(ctx context.Context, c *sql.Conn, q string) string {
	st, err := c.PrepareContext(ctx, q)
	if err != nil {
		return errOutcome(err)
	}
	defer st.Close()
	rows, err := st.QueryContext(ctx)
	if err != nil {
		return errOutcome(err)
	}
	out := rowsOutcome(rows)
	if warn := diffOutcome(ctx, c, "SHOW WARNINGS", nil, true); warn != "Level,Code,Message" {
		out += " warnings: " + warn
	}
	return out
}

// objOutcome runs q and says what it did, with its warnings.
func objOutcome(ctx context.Context, c *sql.Conn, q string) string {
	if q, ok := strings.CutPrefix(q, binaryStep); ok {
		return binaryOutcome(ctx, c, q)
	}
	q, query := strings.CutPrefix(q, rowsStep)
	w := strings.ToUpper(strings.TrimSpace(q))
	for _, p := range []string{"SELECT", "SHOW", "WITH", "DESC", "CHECK", "CALL", "VALUES", "TABLE ", "EXPLAIN", "ANALYZE"} {
		query = query || strings.HasPrefix(w, p)
	}
	out := diffOutcome(ctx, c, q, nil, query)
	if warn := diffOutcome(ctx, c, "SHOW WARNINGS", nil, true); warn != "Level,Code,Message" {
		out += " warnings: " + warn
	}
	return out
}

// objDump is every table of the session's database with its rows and
// definition.
func objDump(ctx context.Context, t *testing.T, c *sql.Conn) string {
	var names []string
	rows, err := c.QueryContext(ctx, "SHOW FULL TABLES")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n, typ string
		_ = rows.Scan(&n, &typ)
		names = append(names, n+" "+typ)
	}
	rows.Close()
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		tbl, typ, _ := strings.Cut(n, " ")
		b.WriteString(n + ":")
		if typ != "VIEW" { // a view's definer is the account that made it: the proxy's in a sandbox
			b.WriteString(" " + diffOutcome(ctx, c, "SHOW CREATE TABLE `"+tbl+"`", nil, true))
		}
		b.WriteString("\n")
		if typ == "BASE TABLE" || typ == "VIEW" {
			b.WriteString("  rows: " + sortedRows(diffOutcome(ctx, c, "SELECT * FROM `"+tbl+"`", nil, true)) + "\n")
		}
	}
	b.WriteString("triggers: " + diffOutcome(ctx, c, objTriggers, nil, true) + "\n")
	return b.String()
}

// objTriggers lists the triggers of the current database and the order
// they run in (not their definer, made in a sandbox by the proxy's
// account, nor their statement, whose tables a sandbox's copy names
// qualified).
const objTriggers = "SELECT TRIGGER_SCHEMA, TRIGGER_NAME, EVENT_OBJECT_SCHEMA, EVENT_OBJECT_TABLE, ACTION_TIMING, EVENT_MANIPULATION, " +
	"ACTION_ORDER, ACTION_ORIENTATION, SQL_MODE FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() ORDER BY 2, 4"

// objProduction is production's database name as root sees it: tables,
// definitions, checksums.
func objProduction(ctx context.Context, t *testing.T, root *sql.DB, name string) string {
	c, err := root.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, "USE "+name); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString(objDump(ctx, t, c))
	b.WriteString(diffOutcome(ctx, c, "SELECT TRIGGER_NAME, ACTION_STATEMENT, DEFINER FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() ORDER BY 1", nil, true) + "\n")
	b.WriteString(diffOutcome(ctx, c, "SELECT CONSTRAINT_NAME, TABLE_NAME, REFERENCED_TABLE_NAME FROM information_schema.REFERENTIAL_CONSTRAINTS "+
		"WHERE CONSTRAINT_SCHEMA = DATABASE() OR UNIQUE_CONSTRAINT_SCHEMA = DATABASE() ORDER BY 1, 2", nil, true))
	return b.String()
}

// fkSchema: customers ← orders ← items (ON DELETE CASCADE), customers ←
// notes (SET NULL / ON UPDATE CASCADE), a self-reference, and a table
// outside every key.
const fkSchema = `
CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(20)) ENGINE=InnoDB;
CREATE TABLE orders (id INT PRIMARY KEY, cust INT, qty INT, CONSTRAINT fk_cust FOREIGN KEY (cust) REFERENCES customers(id));
CREATE TABLE items (id INT PRIMARY KEY, ord INT, CONSTRAINT fk_ord FOREIGN KEY (ord) REFERENCES orders(id) ON DELETE CASCADE);
CREATE TABLE notes (id INT PRIMARY KEY, cust INT NULL, CONSTRAINT fk_note FOREIGN KEY (cust) REFERENCES customers(id) ON DELETE SET NULL ON UPDATE CASCADE);
CREATE TABLE staff (id INT PRIMARY KEY, boss INT NULL, FOREIGN KEY (boss) REFERENCES staff(id) ON DELETE CASCADE);
CREATE TABLE loose (id INT PRIMARY KEY, v INT);
INSERT INTO customers VALUES (1,'a'),(2,'b'),(3,'c');
INSERT INTO orders VALUES (10,1,5),(11,2,6);
INSERT INTO items VALUES (100,10),(101,11),(102,10);
INSERT INTO notes VALUES (1,1),(2,3),(3,NULL);
INSERT INTO staff VALUES (1,NULL),(2,1),(3,2),(4,NULL);
INSERT INTO loose VALUES (1,1);`

const fkKeys = "SELECT k.TABLE_NAME, k.CONSTRAINT_NAME, k.COLUMN_NAME, k.REFERENCED_TABLE_SCHEMA, k.REFERENCED_TABLE_NAME, k.REFERENCED_COLUMN_NAME, " +
	"r.UPDATE_RULE, r.DELETE_RULE FROM information_schema.KEY_COLUMN_USAGE k JOIN information_schema.REFERENTIAL_CONSTRAINTS r " +
	"ON r.CONSTRAINT_SCHEMA = k.CONSTRAINT_SCHEMA AND r.CONSTRAINT_NAME = k.CONSTRAINT_NAME AND r.TABLE_NAME = k.TABLE_NAME " +
	"WHERE k.TABLE_SCHEMA = DATABASE() ORDER BY 1, 2"

// TestFidelityForeignKeys: keys defined in production hold in a sandbox as
// on a copy of the database — what production refuses is refused, what it
// cascades is cascaded on the sandbox's rows — and keys created in the
// sandbox too; information_schema keeps every key. And tables a sandbox
// creates get their database's character set.
func TestFidelityForeignKeys(t *testing.T) {
	runObjCases(t, []objCase{
		{name: "restrict", schema: fkSchema, steps: []string{
			"DELETE FROM customers WHERE id = 1",
			"UPDATE customers SET id = 9 WHERE id = 2",
			"INSERT INTO orders VALUES (12, 99, 1)",
			"UPDATE orders SET cust = 98 WHERE id = 10",
			"TRUNCATE TABLE customers",
			"DROP TABLE customers",
			"DROP TABLE orders",
			"DELETE FROM customers WHERE id = 3",
			"SELECT * FROM notes ORDER BY id",
			fkKeys,
		}},
		{name: "child-first", schema: fkSchema, steps: []string{
			"INSERT INTO items VALUES (103, 77)",
			"INSERT INTO items VALUES (103, 11)",
			fkKeys,
			"SHOW CREATE TABLE items",
			"DELETE FROM customers WHERE id = 2",
		}},
		{name: "cascade", schema: fkSchema, steps: []string{
			"DELETE FROM orders WHERE id = 10",
			"SELECT * FROM items ORDER BY id",
			"UPDATE customers SET id = 30 WHERE id = 3",
			"SELECT * FROM notes ORDER BY id",
			"DELETE FROM customers WHERE id = 30",
			"SELECT * FROM notes ORDER BY id",
			"DELETE FROM staff WHERE id = 1",
			"SELECT * FROM staff ORDER BY id",
			"SELECT COUNT(*) FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = DATABASE()",
		}},
		{name: "transaction", schema: fkSchema, steps: []string{
			"BEGIN",
			"SELECT COUNT(*) FROM items",
			"DELETE FROM orders WHERE id = 11",
			"SELECT * FROM items ORDER BY id",
			"ROLLBACK",
			"SELECT * FROM items ORDER BY id",
			"DELETE FROM loose",
			"SELECT COUNT(*) FROM orders",
		}},
		{name: "sandbox-keys", schema: fkSchema, steps: []string{
			"CREATE TABLE refunds (id INT PRIMARY KEY, ord INT, FOREIGN KEY (ord) REFERENCES orders(id) ON DELETE CASCADE)",
			"INSERT INTO refunds VALUES (1, 11)",
			"INSERT INTO refunds VALUES (2, 55)",
			"DELETE FROM orders WHERE id = 11",
			"SELECT * FROM refunds",
			"ALTER TABLE loose ADD CONSTRAINT fk_loose FOREIGN KEY (v) REFERENCES customers(id)",
			"INSERT INTO loose VALUES (2, 42)",
			"DELETE FROM customers WHERE id = 1",
			fkKeys,
		}},
		{name: "charset", schema: "CREATE TABLE seed (id INT PRIMARY KEY);", steps: []string{
			"CREATE TABLE jp (id INT PRIMARY KEY, a VARCHAR(10))",
			"INSERT INTO jp VALUES (1, '日本')",
			"SELECT a, HEX(a), CHARSET(a), COLLATION(a) FROM jp",
			"SHOW CREATE TABLE jp",
			"CREATE TABLE lat (id INT PRIMARY KEY, a VARCHAR(10)) CHARACTER SET latin1",
			"INSERT INTO lat VALUES (1, '日本')",
			"SELECT TABLE_NAME, TABLE_COLLATION FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() ORDER BY 1",
			"SELECT COLUMN_NAME, CHARACTER_SET_NAME, COLLATION_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME, 1",
		}},
	})
}

// viewSchema: views over customers ← orders ← items — a join with GROUP BY,
// subqueries, a view of a view with UNION, an updatable view WITH CHECK
// OPTION, a TEMPTABLE one.
const viewSchema = fkSchema + `
CREATE VIEW order_totals AS SELECT c.name, SUM(o.qty) AS q FROM customers c JOIN orders o ON o.cust = c.id GROUP BY c.name;
CREATE VIEW v2 AS SELECT o.id, (SELECT name FROM customers WHERE customers.id = o.cust) AS cname, qty * 2 AS dbl FROM orders o
  WHERE EXISTS (SELECT 1 FROM items i WHERE i.ord = o.id);
CREATE VIEW v3 AS SELECT * FROM v2 UNION SELECT id, 'x', 0 FROM orders;
CREATE VIEW big_orders AS SELECT id, cust, qty FROM orders WHERE qty > 5 WITH CHECK OPTION;
CREATE ALGORITHM = TEMPTABLE VIEW tmp_loose AS SELECT v, COUNT(*) AS n FROM loose GROUP BY v;`

// TestFidelityViews: production views read in a sandbox see the sandbox's
// tables (forks, created and dropped tables), writes through updatable
// views land in forks with their check options, and views dropped,
// replaced or created in the sandbox live there — each case compared with
// the same statements on a direct copy.
func TestFidelityViews(t *testing.T) {
	runObjCases(t, []objCase{
		{name: "read-after-fork", schema: viewSchema, steps: []string{
			"SELECT * FROM order_totals ORDER BY name",
			"UPDATE orders SET qty = 10 WHERE id = 10",
			"SELECT * FROM order_totals ORDER BY name",
			"SELECT * FROM v3 ORDER BY id, cname",
			"DELETE FROM items WHERE id IN (100, 102)",
			"SELECT * FROM v2 ORDER BY id",
			"SELECT * FROM v3 ORDER BY id, cname",
			"INSERT INTO loose VALUES (2, 1), (3, 7)",
			"SELECT * FROM tmp_loose ORDER BY v",
			"SELECT o.name, o.q, (SELECT COUNT(*) FROM v2) AS n FROM order_totals o ORDER BY 1",
			"SHOW CREATE VIEW order_totals",
			"SELECT TABLE_NAME, VIEW_DEFINITION, CHECK_OPTION, IS_UPDATABLE, SECURITY_TYPE FROM information_schema.VIEWS WHERE TABLE_SCHEMA = DATABASE() ORDER BY 1",
		}},
		{name: "write-through", schema: viewSchema, steps: []string{
			"UPDATE big_orders SET qty = 9 WHERE id = 11",
			"INSERT INTO big_orders VALUES (20, 1, 3)",
			"INSERT INTO big_orders VALUES (20, 1, 30)",
			"SELECT * FROM big_orders ORDER BY id",
			"INSERT INTO big_orders VALUES (21, 99, 30)",
			"DELETE FROM big_orders WHERE id = 20",
			"UPDATE order_totals SET q = 1",
			"DELETE FROM v2 WHERE id = 10",
			"SELECT * FROM orders ORDER BY id",
			"SELECT * FROM big_orders WHERE id = 11 FOR UPDATE",
		}},
		{name: "dropped-table", schema: viewSchema, steps: []string{
			"DROP TABLE items",
			"SELECT * FROM v2",
			"SELECT * FROM v3",
			"SELECT * FROM order_totals ORDER BY name",
			"ALTER TABLE customers DROP COLUMN name",
			"SELECT * FROM order_totals",
			"CREATE TABLE items (id INT PRIMARY KEY, ord INT)",
			"SELECT * FROM v2",
		}},
		{name: "view-ddl", schema: viewSchema, steps: []string{
			"DROP VIEW order_totals",
			"SELECT * FROM order_totals",
			"DROP VIEW order_totals",
			"DROP VIEW IF EXISTS order_totals",
			"CREATE VIEW order_totals AS SELECT 1 AS one",
			"SELECT * FROM order_totals",
			"CREATE VIEW v2 AS SELECT 1",
			"CREATE OR REPLACE VIEW v2 AS SELECT id, qty FROM orders",
			"UPDATE orders SET qty = 50 WHERE id = 11",
			"SELECT * FROM v2 ORDER BY id",
			"SELECT * FROM v3 ORDER BY id, cname",
			"CREATE VIEW mine AS SELECT name, q FROM order_totals",
			"CREATE VIEW mine2 AS SELECT * FROM big_orders",
			"UPDATE orders SET qty = 77 WHERE id = 10",
			"SELECT * FROM mine2 ORDER BY id",
			"RENAME TABLE big_orders TO huge_orders",
			"SELECT * FROM huge_orders ORDER BY id",
			"SELECT * FROM big_orders",
			"SHOW FULL TABLES",
		}},
		{name: "failed-ddl-commits", schema: viewSchema, steps: []string{
			"DROP TABLE items",
			"INSERT INTO customers VALUES (8, 'h')",
			"BEGIN",
			"SELECT * FROM v2",
			"SELECT * FROM items",
			"SHOW CREATE TABLE orders",
			"UPDATE customers SET id = id + 10 WHERE id = 5",
			"DROP TABLE customers",
			"UPDATE customers SET id = id + 10 WHERE id = 3",
			"ROLLBACK",
			"SELECT * FROM customers ORDER BY id",
		}},
		{name: "transaction", schema: viewSchema, steps: []string{
			"BEGIN",
			"SELECT * FROM order_totals ORDER BY name",
			"UPDATE orders SET qty = qty + 1",
			"SELECT * FROM order_totals ORDER BY name",
			"SELECT * FROM big_orders ORDER BY id",
			"ROLLBACK",
			"SELECT * FROM order_totals ORDER BY name",
		}},
	})
}

// trigSchema: triggers that change the row (BEFORE), write other tables
// (AFTER: an audit log, a counter), run in an order (FOLLOWS) and read
// another table.
const trigSchema = `
CREATE TABLE accounts (id INT PRIMARY KEY, balance INT NOT NULL, note VARCHAR(40) NOT NULL DEFAULT '', cap INT);
CREATE TABLE audit (id INT AUTO_INCREMENT PRIMARY KEY, acct INT, delta INT, what VARCHAR(10));
CREATE TABLE stats (k VARCHAR(10) PRIMARY KEY, n INT NOT NULL);
CREATE TABLE limits (k INT PRIMARY KEY, max_balance INT);
INSERT INTO accounts (id, balance) VALUES (1, 100), (2, 50);
INSERT INTO stats VALUES ('deleted', 0), ('inserted', 0);
INSERT INTO limits VALUES (1, 500);
CREATE TRIGGER acc_bi BEFORE INSERT ON accounts FOR EACH ROW SET NEW.balance = GREATEST(NEW.balance, 0), NEW.cap = (SELECT max_balance FROM limits WHERE k = 1);
CREATE TRIGGER acc_ai AFTER INSERT ON accounts FOR EACH ROW UPDATE stats SET n = n + 1 WHERE k = 'inserted';
CREATE TRIGGER acc_au AFTER UPDATE ON accounts FOR EACH ROW INSERT INTO audit (acct, delta, what) VALUES (NEW.id, NEW.balance - OLD.balance, 'update');
CREATE TRIGGER acc_bu1 BEFORE UPDATE ON accounts FOR EACH ROW SET NEW.note = CONCAT(NEW.note, 'a');
CREATE TRIGGER acc_bu2 BEFORE UPDATE ON accounts FOR EACH ROW FOLLOWS acc_bu1 SET NEW.note = CONCAT(NEW.note, 'b');
CREATE TRIGGER acc_ad AFTER DELETE ON accounts FOR EACH ROW BEGIN
  UPDATE stats SET n = n + 1 WHERE k = 'deleted';
  INSERT INTO audit (acct, delta, what) VALUES (OLD.id, -OLD.balance, 'delete');
END;`

// TestFidelityTriggers: a fork carries its table's triggers, so writes in
// a sandbox do what they do on a copy of the database — rows changed by
// BEFORE triggers, side effects of AFTER triggers in the sandbox's copies
// of the tables they write, in production's order — and production's
// tables never change.
func TestFidelityTriggers(t *testing.T) {
	runObjCases(t, []objCase{
		{name: "row-and-side-effects", schema: trigSchema, steps: []string{
			"INSERT INTO accounts (id, balance) VALUES (3, -5)",
			"SELECT * FROM accounts ORDER BY id",
			"UPDATE accounts SET balance = balance + 10 WHERE id <= 2",
			"SELECT * FROM accounts ORDER BY id",
			"SELECT acct, delta, what FROM audit ORDER BY id",
			"DELETE FROM accounts WHERE id = 2",
			"SELECT * FROM stats ORDER BY k",
			"SELECT acct, delta, what FROM audit ORDER BY id",
		}},
		{name: "side-table-first", schema: trigSchema, steps: []string{
			"UPDATE limits SET max_balance = 7",
			"INSERT INTO accounts (id, balance) VALUES (4, 1)",
			"SELECT * FROM accounts ORDER BY id",
			"DELETE FROM audit",
			"UPDATE accounts SET balance = 0",
			"SELECT acct, delta, what FROM audit ORDER BY id",
		}},
		{name: "transaction", schema: trigSchema, steps: []string{
			"BEGIN",
			"SELECT COUNT(*) FROM audit",
			"UPDATE accounts SET balance = 1 WHERE id = 1",
			"SELECT acct, delta, what FROM audit ORDER BY id",
			"ROLLBACK",
			"SELECT acct, delta, what FROM audit ORDER BY id",
			"SELECT * FROM accounts ORDER BY id",
		}},
	})
}

// TestFidelityTriggerFunctions: production's triggers that call stored
// functions and procedures are carried by forks, and triggers a sandbox
// makes may call them too — the sandbox's copies of the routines run,
// their writes in forks — as on a copy of the database.
func TestFidelityTriggerFunctions(t *testing.T) {
	db := leastPrivilegeEnv(t)
	grantProcRead(t, db)
	schema := `CREATE TABLE acct (id INT PRIMARY KEY, balance INT);
CREATE TABLE log (id INT AUTO_INCREMENT PRIMARY KEY, what VARCHAR(40));
CREATE FUNCTION note(w VARCHAR(40)) RETURNS INT MODIFIES SQL DATA BEGIN INSERT INTO log (what) VALUES (w); RETURN 1; END;
CREATE FUNCTION clamp(x INT) RETURNS INT DETERMINISTIC RETURN GREATEST(0, LEAST(x, 100));
CREATE TRIGGER acct_bu BEFORE UPDATE ON acct FOR EACH ROW SET NEW.balance = clamp(NEW.balance);
CREATE TRIGGER acct_ai AFTER INSERT ON acct FOR EACH ROW SET @n = note(CONCAT('ins ', NEW.id));
CREATE PROCEDURE log_del(IN i INT) INSERT INTO log (what) VALUES (CONCAT('proc del ', i));
CREATE TRIGGER acct_ad AFTER DELETE ON acct FOR EACH ROW CALL log_del(OLD.id);
INSERT INTO acct VALUES (1, 50);`
	runObjCases(t, []objCase{
		{name: "carried", schema: schema, steps: []string{
			"UPDATE acct SET balance = 500 WHERE id = 1",
			"SELECT * FROM acct ORDER BY id",
			"INSERT INTO acct VALUES (2, -3)",
			"SELECT what FROM log ORDER BY id",
			"SELECT @n",
			"DELETE FROM acct WHERE id = 2",
			"SELECT what FROM log ORDER BY id",
		}},
		{name: "made", schema: schema, steps: []string{
			"CREATE TRIGGER acct_bd BEFORE DELETE ON acct FOR EACH ROW SET @d = note(CONCAT('del ', OLD.id))",
			"DELETE FROM acct WHERE id = 1",
			"SELECT what FROM log ORDER BY id",
			"CREATE FUNCTION twice(x INT) RETURNS INT DETERMINISTIC RETURN x * 2",
			"CREATE TRIGGER acct_bi BEFORE INSERT ON acct FOR EACH ROW SET NEW.balance = twice(NEW.balance)",
			"INSERT INTO acct VALUES (3, 7)",
			"SELECT * FROM acct ORDER BY id",
			"SELECT what FROM log ORDER BY id",
			"CREATE TRIGGER acct_bu2 BEFORE UPDATE ON acct FOR EACH ROW CALL log_del(-NEW.id)",
			"UPDATE acct SET balance = 1 WHERE id = 3",
			"SELECT what FROM log ORDER BY id",
		}},
	})
}

// trigDDLSchema: a table with a production trigger, a side-effect table,
// another table with a trigger, a view.
const trigDDLSchema = `
CREATE TABLE t (id INT PRIMARY KEY, v INT);
CREATE TABLE log (id INT AUTO_INCREMENT PRIMARY KEY, what VARCHAR(20), tid INT);
CREATE TABLE other (id INT PRIMARY KEY);
INSERT INTO t VALUES (1, 10), (2, 20);
INSERT INTO log (what, tid) VALUES ('seed', 0);
CREATE TRIGGER t_bu BEFORE UPDATE ON t FOR EACH ROW SET NEW.v = NEW.v + 1;
CREATE TRIGGER other_ai AFTER INSERT ON other FOR EACH ROW INSERT INTO log (what, tid) VALUES ('other', NEW.id);
CREATE VIEW tv AS SELECT id, v FROM t;`

const logRows = "SELECT id, what, tid FROM log ORDER BY id"

// TestFidelityTriggerDDL: CREATE and DROP TRIGGER in a sandbox act on the
// sandbox's tables as on a copy of the database — a trigger made on a
// production table runs on its fork and writes the sandbox's copies of
// what its body names, a production trigger dropped in the sandbox no
// longer runs there (production keeps it), names clash with production's
// as on the server, the server's errors are the same — and production
// never gets or loses a trigger.
func TestFidelityTriggerDDL(t *testing.T) {
	runObjCases(t, []objCase{
		{name: "create-on-production", schema: trigDDLSchema, steps: []string{
			"CREATE TRIGGER t_ai AFTER INSERT ON t FOR EACH ROW INSERT INTO log (what, tid) VALUES ('insert', NEW.id)",
			"INSERT INTO t VALUES (3, 30)",
			logRows,
			"UPDATE t SET v = 0 WHERE id = 3",
			"SELECT * FROM t ORDER BY id",
			"CREATE TRIGGER t_bu2 BEFORE UPDATE ON t FOR EACH ROW PRECEDES t_bu SET NEW.v = NEW.v * 10",
			"UPDATE t SET v = 1 WHERE id = 1",
			"SELECT * FROM t ORDER BY id",
			"CREATE OR REPLACE DEFINER = CURRENT_USER TRIGGER t_ai AFTER INSERT ON t FOR EACH ROW INSERT INTO log (what, tid) VALUES ('again', NEW.id)",
			"INSERT INTO t VALUES (4, 40)",
			logRows,
			objTriggers,
			"INSERT INTO other VALUES (1)",
			logRows,
		}},
		{name: "drop-production", schema: trigDDLSchema, steps: []string{
			"DROP TRIGGER t_bu",
			"UPDATE t SET v = 5 WHERE id = 1",
			"SELECT * FROM t ORDER BY id",
			"DROP TRIGGER t_bu",
			"DROP TRIGGER IF EXISTS t_bu",
			"SHOW CREATE TRIGGER t_bu",
			"BEGIN",
			"INSERT INTO log (what, tid) VALUES ('in-trx', 1)",
			"DROP TRIGGER other_ai",
			"ROLLBACK",
			"INSERT INTO other VALUES (2)",
			logRows,
			objTriggers,
		}},
		{name: "sandbox-table", schema: trigDDLSchema, steps: []string{
			"CREATE TABLE mine (id INT PRIMARY KEY, n INT, note VARCHAR(20))",
			"CREATE TRIGGER mine_bi BEFORE INSERT ON mine FOR EACH ROW BEGIN\n  SET NEW.n = (SELECT COUNT(*) FROM t);\n  IF NEW.id > 1 THEN SET NEW.note = 'big'; END IF;\nEND",
			"CREATE TRIGGER mine_ad AFTER DELETE ON mine FOR EACH ROW INSERT INTO log (what, tid) VALUES ('mine', OLD.id)",
			"INSERT INTO mine (id) VALUES (1), (2)",
			"SELECT * FROM mine ORDER BY id",
			"DELETE FROM mine WHERE id = 1",
			logRows,
			objTriggers,
			"DROP TRIGGER mine_bi",
			"INSERT INTO mine (id) VALUES (3)",
			"SELECT * FROM mine ORDER BY id",
			"DROP TABLE mine",
			objTriggers,
			"DROP TRIGGER mine_ad",
		}},
		// CREATE TRIGGER with other statements in one input (main.parser):
		// split as the server reads it — a body that is one statement
		// ends at its ';' — each trigger made as when sent alone.
		{name: "with-other-statements", schema: trigDDLSchema, multi: true, steps: []string{
			"CREATE TRIGGER t_ai AFTER INSERT ON t FOR EACH ROW SET @a := NEW.id;SELECT 2",
			"INSERT INTO t VALUES (3, 30); SELECT @a",
			"DROP TRIGGER IF EXISTS t_ai; CREATE TRIGGER t_ai AFTER INSERT ON t FOR EACH ROW BEGIN\n  INSERT INTO log (what, tid) VALUES ('multi', NEW.id);\nEND; " +
				"INSERT INTO t VALUES (4, 40)",
			logRows,
			"CREATE TABLE mine (id INT); CREATE TRIGGER mine_bi BEFORE INSERT ON mine FOR EACH ROW SET NEW.id = NEW.id * 2; INSERT INTO mine VALUES (5)",
			"SELECT * FROM mine",
			"CREATE TRIGGER mine_bi BEFORE INSERT ON mine FOR EACH ROW SET @b = 1; SELECT 3",
			objTriggers,
		}},
		{name: "errors", schema: trigDDLSchema, steps: []string{
			"CREATE TRIGGER x AFTER INSERT ON nosuch FOR EACH ROW SET @a = 1",
			"CREATE TRIGGER x AFTER INSERT ON tv FOR EACH ROW SET @a = 1",
			"CREATE TRIGGER x AFTER INSERT ON t FOR EACH ROW FOLLOWS nosuch SET @a = 1",
			"CREATE TRIGGER x BEFORE INSERT ON t FOR EACH ROW FOLLOWS t_bu SET @a = 1",
			"CREATE TRIGGER t_bu AFTER INSERT ON log FOR EACH ROW SET @a = 1",
			"CREATE TRIGGER IF NOT EXISTS other_ai AFTER INSERT ON other FOR EACH ROW SET @a = 1",
			"CREATE OR REPLACE TRIGGER other_ai AFTER INSERT ON t FOR EACH ROW SET @a = 1",
			"CREATE OR REPLACE TRIGGER IF NOT EXISTS x AFTER INSERT ON t FOR EACH ROW SET @a = 1",
			"CREATE TRIGGER x AFTER INSERT ON mysql.user FOR EACH ROW SET @a = 1",
			"CREATE TRIGGER mysql.x AFTER INSERT ON t FOR EACH ROW SET @a = 1",
			"CREATE TRIGGER x AFTER INSERT ON t FOR EACH ROW xyzzy",
			"CREATE TRIGGER x AFTER INSERT ON t FOR EACH ROW FOLLOWS",
			"CREATE TRIGGER x DURING INSERT ON t FOR EACH ROW SET @a = 1",
			"DROP TRIGGER x, y",
			"CREATE TRIGGER x AFTER INSERT ON t FOR EACH ROW INSERT INTO nosuch VALUES (1)",
			"INSERT INTO t VALUES (9, 9)",
			"CREATE TRIGGER x AFTER INSERT ON t FOR EACH ROW SET NEW.v = 1",
			"CREATE TEMPORARY TABLE tmp (a INT)",
			"CREATE TRIGGER y AFTER INSERT ON tmp FOR EACH ROW SET @a = 1",
			"DROP TRIGGER nosuch",
			"DROP TRIGGER IF EXISTS nosuch",
			"SHOW CREATE TRIGGER nosuch",
			objTriggers,
		}},
	})
}

// TestTriggerDDLShown: what a sandbox shows of its triggers — SHOW
// TRIGGERS, SHOW CREATE TRIGGER, information_schema.TRIGGERS — names its
// tables by their logical databases, never the proxy's; SHOW CREATE
// TRIGGER of a production trigger whose table the sandbox does not hold
// shows production's. Triggers whose bodies would reach beyond the sandbox
// (information_schema, a server file) are refused with 1290 saying why;
// production never changes.
func TestTriggerDDLShown(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	sandDB, direct, accts := objServers(ctx, t)
	grantProcRead(t, sandDB) // the least-privilege account sees stored functions with it
	const schema = trigDDLSchema + `
CREATE FUNCTION twice(x INT) RETURNS INT DETERMINISTIC RETURN x * 2;
CREATE PROCEDURE note(IN w VARCHAR(20)) INSERT INTO log (what) VALUES (w);`
	for i, acct := range accts {
		t.Run(acct.name, func(t *testing.T) {
			name := fmt.Sprintf("fs%d", i)
			rootSand, before := objDatabase(ctx, t, name, schema, direct, sandDB)
			sc := conn(t, openDB(t, acct.dsn(name)))
			shown := func(q, want string) {
				t.Helper()
				out := diffOutcome(ctx, sc, q, nil, true)
				if strings.Contains(out, "_sqlfork") || !strings.Contains(out, want) {
					t.Errorf("%s: %s\n want no _sqlfork and %q", q, out, want)
				}
			}
			shown("SHOW CREATE TRIGGER t_bu", "TRIGGER t_bu BEFORE UPDATE ON t FOR EACH ROW SET NEW.v = NEW.v + 1")
			mustExecC(t, sc, "CREATE TRIGGER t_ai AFTER INSERT ON t FOR EACH ROW INSERT INTO log (what, tid) VALUES ('ins', NEW.id)")
			shown("SHOW TRIGGERS", "t_ai,INSERT,t,INSERT INTO `"+name+"`.`log` (what, tid) VALUES ('ins', NEW.id),AFTER")
			shown("SHOW CREATE TRIGGER t_ai", "TRIGGER `"+name+"`.`t_ai` AFTER INSERT ON `"+name+"`.`t` FOR EACH ROW")
			shown("SELECT TRIGGER_SCHEMA, EVENT_OBJECT_SCHEMA, ACTION_STATEMENT FROM information_schema.TRIGGERS WHERE TRIGGER_NAME = 't_ai'",
				name+","+name+",INSERT INTO `"+name+"`.`log`")
			shown("SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA LIKE '%sqlfork%'", "COUNT(*)|0")
			for q, why := range map[string]string{
				"CREATE TRIGGER r3 AFTER INSERT ON t FOR EACH ROW INSERT INTO log (what) SELECT COUNT(*) FROM information_schema.TABLES": "information_schema",
				"CREATE TRIGGER r4 AFTER INSERT ON t FOR EACH ROW INSERT INTO log (what) SELECT LOAD_FILE('/etc/passwd')":                "",
			} {
				_, err := sc.ExecContext(ctx, q)
				if e := mysqlErr(err); !strings.HasPrefix(e, "1290") || !strings.Contains(e, why) {
					t.Errorf("%s: %s, want 1290 saying %q", q, e, why)
				}
			}
			// information_schema: the server's 1044 for the account.
			_, err := sc.ExecContext(ctx, "CREATE TRIGGER r5 AFTER INSERT ON information_schema.TABLES FOR EACH ROW SET @a = 1")
			if e := mysqlErr(err); !strings.HasPrefix(e, "1044 (42000) Access denied for user '") || !strings.HasSuffix(e, "to database 'information_schema'") {
				t.Errorf("a trigger on information_schema: %s, want the server's 1044", e)
			}
			if after := objProduction(ctx, t, rootSand, name); after != before {
				t.Errorf("production changed (before, after):\n%s", lineDiff(before, after))
			}
		})
	}
}

// procSchema: production procedures that write (with an OUT parameter),
// read, call each other, and SIGNAL.
const procSchema = `
CREATE TABLE acct (id INT PRIMARY KEY, balance INT NOT NULL);
CREATE TABLE ledger (id INT AUTO_INCREMENT PRIMARY KEY, acct INT, amount INT);
INSERT INTO acct VALUES (1, 100), (2, 5);
CREATE PROCEDURE deposit(IN a INT, IN amt INT, OUT nb INT) MODIFIES SQL DATA COMMENT 'adds money'
BEGIN
  UPDATE acct SET balance = balance + amt WHERE id = a;
  INSERT INTO ledger (acct, amount) VALUES (a, amt);
  SELECT balance INTO nb FROM acct WHERE id = a;
END;
CREATE PROCEDURE report() READS SQL DATA SELECT a.id, a.balance, COUNT(l.id) AS n FROM acct a LEFT JOIN ledger l ON l.acct = a.id GROUP BY a.id ORDER BY a.id;
CREATE PROCEDURE pay_twice(IN a INT) BEGIN CALL deposit(a, 1, @x); CALL deposit(a, 2, @y); SELECT @x, @y; END;
CREATE PROCEDURE fail_if_poor(IN a INT) BEGIN
  SELECT balance INTO @b FROM acct WHERE id = a;
  SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'checked';
END;`

// TestFidelityProcedures: production's procedures called in a sandbox run
// there — their writes in forks, their reads of the sandbox's tables, OUT
// parameters, result sets, procedures they call (themselves too), SIGNAL —
// as on a copy of the database, and production never changes. (The least-privilege account
// reads their definitions with SELECT on mysql.proc.)
func TestFidelityProcedures(t *testing.T) {
	db := leastPrivilegeEnv(t)
	grantProcRead(t, db)
	runObjCases(t, []objCase{
		{name: "call", schema: procSchema, steps: []string{
			"CALL deposit(1, 10, @nb)",
			"SELECT @nb",
			"CALL report()",
			"UPDATE acct SET balance = 0 WHERE id = 2",
			"CALL report()",
			"CALL pay_twice(2)",
			"SELECT * FROM ledger ORDER BY id",
			"CALL fail_if_poor(2)",
			"SELECT @b",
			"SELECT ROUTINE_NAME, ROUTINE_TYPE, SQL_DATA_ACCESS, ROUTINE_COMMENT FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE() ORDER BY 1",
			"SELECT SPECIFIC_NAME, PARAMETER_MODE, PARAMETER_NAME, DATA_TYPE FROM information_schema.PARAMETERS WHERE SPECIFIC_SCHEMA = DATABASE() ORDER BY 1, ORDINAL_POSITION",
		}},
		// MariaDB's cursors with parameters: the cursor's query reads the
		// sandbox's tables, and so do OPEN's and FOR's actual parameters.
		{name: "cursor-parameters", schema: cursorSchema, steps: []string{
			"CALL copy_range(1, 2)",
			"SELECT * FROM t2 ORDER BY a, b",
			"UPDATE t1 SET b = 'z' WHERE a = 2",
			"INSERT INTO t1 VALUES (4, 'd')",
			"CALL copy_range(2, 9)",
			"SELECT * FROM t2 ORDER BY a, b",
			"CREATE PROCEDURE sum_from(lo INT, OUT s INT) BEGIN DECLARE c CURSOR (IN p INT) FOR SELECT a FROM t1 WHERE a >= p; " +
				"SET s = 0; FOR r IN c((SELECT MIN(a) FROM t1 WHERE a >= lo)) DO SET s = s + r.a; INSERT INTO t2 VALUES (r.a, 'for'); END FOR; END",
			"CALL sum_from(2, @s)",
			"SELECT @s",
			"SELECT * FROM t2 ORDER BY a, b",
			"CREATE PROCEDURE bad_count() BEGIN DECLARE c CURSOR (p INT) FOR SELECT a FROM t1 WHERE a = p; OPEN c(1, 2); END",
			"CREATE PROCEDURE bad_out() BEGIN DECLARE c CURSOR (OUT p INT) FOR SELECT a FROM t1; OPEN c(1); END",
			// SHOW STATUS and SHOW VARIABLES name no table: a body may hold them.
			"CREATE PROCEDURE settings() BEGIN SET max_sp_recursion_depth = 3; SHOW VARIABLES LIKE 'max_sp_recursion_depth'; " +
				"SHOW SESSION STATUS LIKE 'no_such_status'; IF (SELECT COUNT(*) FROM t2) > 100 THEN SHOW STATUS LIKE 'Memory_used'; END IF; END",
			"CALL settings()",
		}},
		// Anchored types read the sandbox's definitions of their tables:
		// in procedures made there and in production's, copied.
		{name: "anchored-types", schema: cursorSchema + `
CREATE PROCEDURE anchored(OUT o TYPE OF t1.b) BEGIN
  DECLARE v TYPE OF t1.b DEFAULT 'a text longer than ten';
  DECLARE r ROW TYPE OF t1;
  SET r.b = 'a row text longer than ten', o = v;
  SELECT v, r.b;
END;`, steps: []string{
			"ALTER TABLE t1 MODIFY b VARCHAR(40)",
			"CALL anchored(@o)",
			"SELECT @o",
			"CREATE PROCEDURE mine(x TYPE OF t1.b) BEGIN DECLARE c CURSOR (k TYPE OF t1.a) FOR SELECT b FROM t1 WHERE a = k; " +
				"BEGIN DECLARE r ROW TYPE OF c; DECLARE s ROW TYPE OF t2; OPEN c(1); FETCH c INTO r; CLOSE c; SET s.b = x; SELECT r.b, s.b; END; END",
			"ALTER TABLE t2 MODIFY b VARCHAR(40)",
			"CALL mine('a parameter longer than ten')",
		}},
		// SHOW statements in a body whose answers the CALL's answer tells
		// back: tables forked, made in the body and production's, and the
		// server's warnings naming them; in text and binary rows.
		{name: "body-show", schema: cursorSchema + `
CREATE PROCEDURE described() BEGIN
  SHOW CREATE TABLE t1;
  SHOW COLUMNS FROM t2 LIKE 'b';
  DROP TABLE IF EXISTS gone;
  SHOW WARNINGS;
END;`, steps: []string{
			"CALL described()",
			"UPDATE t1 SET b = 'z' WHERE a = 1",
			"ALTER TABLE t1 ADD KEY kb (b)",
			"CALL described()",
			"CREATE PROCEDURE made(x DATETIME) BEGIN CREATE TABLE t3 SELECT x, a FROM t1; SHOW CREATE TABLE t3; " +
				"SHOW INDEX FROM t1; SHOW FULL COLUMNS FROM t3; DROP TABLE t3; DROP TABLE IF EXISTS t3; SHOW WARNINGS; " +
				"SHOW COUNT(*) WARNINGS; SHOW ERRORS; SELECT * FROM t1 ORDER BY a; END",
			"CALL made('2026-01-02 03:04:05')",
			"(binary) CALL made('2026-01-02 03:04:05')",
			"(binary) CALL described()",
		}},
		// Blocks nested deeper than the engine once read; nested deeper
		// than the server's parser reads, the server's own error.
		{name: "nesting", schema: cursorSchema, steps: []string{
			"CREATE PROCEDURE deep() BEGIN " + strings.Repeat("BEGIN ", 150) + "INSERT INTO t2 SELECT a, 'deep' FROM t1; " + strings.Repeat("END; ", 150) + "END",
			"CALL deep()",
			"SELECT * FROM t2 ORDER BY a, b",
			"CREATE PROCEDURE too_deep() BEGIN " + strings.Repeat("BEGIN ", 33000) + "INSERT INTO t2 VALUES (0, 'x'); " + strings.Repeat("END; ", 33000) + "END",
			"CALL too_deep()",
		}},
		// A procedure that calls itself is copied once.
		{name: "recursion", schema: `CREATE TABLE n (i INT);
CREATE PROCEDURE fill(IN x INT) BEGIN IF x > 0 THEN INSERT INTO n VALUES (x); CALL fill(x - 1); END IF; END;`, steps: []string{
			"SET max_sp_recursion_depth = 10",
			"CALL fill(3)",
			"SELECT * FROM n ORDER BY i",
		}},
		{name: "transaction", schema: procSchema, steps: []string{
			"BEGIN",
			"CALL deposit(2, 7, @nb)",
			"SELECT @nb",
			"ROLLBACK",
			"CALL report()",
		}},
	})
}

// cursorSchema: a procedure reading a table through a cursor with
// parameters (MariaDB's), and writing another.
const cursorSchema = `CREATE TABLE t1 (a INT, b VARCHAR(10));
CREATE TABLE t2 (a INT, b VARCHAR(10));
INSERT INTO t1 VALUES (1, 'a'), (2, 'b'), (3, 'c');
CREATE PROCEDURE copy_range(lo INT, hi INT) BEGIN
  DECLARE done INT DEFAULT FALSE;
  DECLARE va INT;
  DECLARE vb VARCHAR(10);
  DECLARE cur CURSOR (pmin INT, pmax INT) FOR SELECT a, b FROM t1 WHERE a BETWEEN pmin AND pmax ORDER BY a;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET done = TRUE;
  OPEN cur(lo, (SELECT MAX(a) FROM t1 WHERE a <= hi));
  l: LOOP
    FETCH cur INTO va, vb;
    IF done THEN LEAVE l; END IF;
    INSERT INTO t2 VALUES (va, vb);
  END LOOP;
  CLOSE cur;
END;`

// funcSchema: stored functions that read, write (a function may, when
// called from a statement), call each other and return text.
const funcSchema = `CREATE TABLE acct (id INT PRIMARY KEY, balance INT, owner VARCHAR(20));
CREATE TABLE audit (id INT AUTO_INCREMENT PRIMARY KEY, what VARCHAR(40));
INSERT INTO acct VALUES (1, 100, 'ann'), (2, 5, 'bob');
CREATE FUNCTION balance_of(a INT) RETURNS INT READS SQL DATA RETURN (SELECT balance FROM acct WHERE id = a);
CREATE FUNCTION total() RETURNS INT READS SQL DATA RETURN (SELECT SUM(balance) FROM acct);
CREATE FUNCTION rich(a INT) RETURNS VARCHAR(10) CHARSET utf8mb4 DETERMINISTIC RETURN IF(balance_of(a) > 50, 'rich', 'poor');
CREATE FUNCTION logged(w VARCHAR(40)) RETURNS INT MODIFIES SQL DATA BEGIN
  INSERT INTO audit (what) VALUES (w);
  RETURN LAST_INSERT_ID();
END;
CREATE FUNCTION greet(n VARCHAR(20)) RETURNS VARCHAR(40) CHARSET utf8mb4 RETURN CONCAT('héllo ', n);
CREATE PROCEDURE show_total() SELECT total() AS t, rich(1) AS r;`

// aggSchema: an aggregate function that sums its group and writes each
// row it fetches.
const aggSchema = `CREATE TABLE emp (id INT, dept INT, sal INT);
CREATE TABLE seen (sal INT);
INSERT INTO emp VALUES (1, 1, 10), (2, 1, 20), (3, 2, 5);
CREATE AGGREGATE FUNCTION total_sal(x INT) RETURNS INT BEGIN
  DECLARE s INT DEFAULT 0;
  DECLARE CONTINUE HANDLER FOR NOT FOUND RETURN s;
  LOOP
    FETCH GROUP NEXT ROW;
    SET s = s + x;
    INSERT INTO seen VALUES (x);
  END LOOP;
END;`

// TestFidelityFunctions: production's stored functions called in a
// sandbox run sandbox copies — their reads see the sandbox's tables,
// their writes land in forks, functions they call too — and functions
// the sandbox creates, replaces and drops live there only, as on a copy
// of the database; production never changes.
func TestFidelityFunctions(t *testing.T) {
	db := leastPrivilegeEnv(t)
	grantProcRead(t, db)
	runObjCases(t, []objCase{
		{name: "calls", schema: funcSchema, steps: []string{
			"SELECT balance_of(1), total(), rich(2), greet(owner) FROM acct ORDER BY id",
			"UPDATE acct SET balance = 70 WHERE id = 2",
			"SELECT balance_of(2), total(), rich(2)",
			"SELECT id FROM acct WHERE rich(id) = 'rich' ORDER BY id",
			"SELECT logged('first'), logged('second')",
			"SELECT * FROM audit ORDER BY id",
			"INSERT INTO audit (what) VALUES (greet('x'))",
			"UPDATE acct SET owner = greet(owner) WHERE id = 1",
			"SELECT `balance_of`(1), DATABASE()",
			"SELECT ROUTINE_NAME, ROUTINE_TYPE, DATA_TYPE, SQL_DATA_ACCESS FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE() ORDER BY 1",
		}},
		{name: "define", schema: funcSchema, steps: []string{
			"CREATE FUNCTION twice(x INT) RETURNS INT DETERMINISTIC RETURN x * 2",
			"SELECT twice(balance) FROM acct ORDER BY id",
			"CREATE FUNCTION twice(x INT) RETURNS INT RETURN x",
			"CREATE OR REPLACE FUNCTION twice(x INT) RETURNS INT RETURN x * 3 + total()",
			// Clears the 1304 above from the diagnostics area, on a copy as
			// in a sandbox. (Without it, the next statement would keep the
			// 1304 on a copy but not in a sandbox: a statement whose function
			// reads a table with triggers that write another table — the
			// fork's capture triggers — clears it; docs/SANDBOXES.md.)
			"SELECT COUNT(*) FROM acct",
			"SELECT twice(1)",
			"CREATE FUNCTION count_audit() RETURNS INT RETURN (SELECT COUNT(*) FROM audit)",
			"INSERT INTO audit (what) VALUES ('x')",
			"SELECT count_audit()",
			"DROP FUNCTION twice",
			"SELECT twice(1)",
			"DROP FUNCTION IF EXISTS twice",
			"CREATE PROCEDURE use_fn(OUT r INT) SET r = twice(2) + balance_of(1)",
			"CREATE FUNCTION twice(x INT) RETURNS INT RETURN x * 2",
			"CALL use_fn(@r)",
			"SELECT @r",
			// A body may read what lists no database's objects.
			"CREATE FUNCTION cs_max(cs VARCHAR(64)) RETURNS INT RETURN (SELECT MAXLEN FROM information_schema.CHARACTER_SETS WHERE CHARACTER_SET_NAME = cs)",
			"SELECT cs_max('utf8mb4'), cs_max('latin1')",
			"CREATE PROCEDURE st_q(OUT n INT) SELECT COUNT(*) > 0 INTO n FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'QUESTIONS'",
			"CALL st_q(@q)",
			"SELECT @q",
			// An error quoting the call as sent: told back as written.
			"CREATE FUNCTION g1() RETURNS POINT RETURN 1",
			"SELECT g1()",
		}},
		// Views calling stored functions read the sandbox's copies.
		{name: "views", schema: funcSchema + `
CREATE VIEW v_rich AS SELECT id, rich(id) AS r, balance_of(id) AS b FROM acct;
CREATE VIEW v_over AS SELECT id, r FROM v_rich WHERE b > 10;`, steps: []string{
			"SELECT * FROM v_rich ORDER BY id",
			"UPDATE acct SET balance = 99 WHERE id = 2",
			"SELECT * FROM v_rich ORDER BY id",
			"SELECT * FROM v_over ORDER BY id",
			"CREATE OR REPLACE FUNCTION rich(a INT) RETURNS VARCHAR(10) CHARSET utf8mb4 RETURN 'changed'",
			"SELECT * FROM v_over ORDER BY id",
			"CREATE VIEW v_mine AS SELECT total() AS t, greet('z') AS g",
			"SELECT * FROM v_mine",
			// Columns named after their expressions keep the client's text.
			"CREATE VIEW v_lab AS SELECT balance_of(1), greet( 'x' ), id FROM acct",
			"SELECT * FROM v_lab ORDER BY id",
			"CREATE TABLE t_lab AS SELECT balance_of(id), id FROM acct",
			"SELECT * FROM t_lab ORDER BY id",
			// (v_mine's definition names its functions with their database:
			// the server qualifies calls of another database's functions.)
			"SELECT TABLE_NAME, IF(TABLE_NAME IN ('v_mine', 'v_lab'), '', VIEW_DEFINITION) FROM information_schema.VIEWS WHERE TABLE_SCHEMA = DATABASE() ORDER BY 1",
		}},
		// Production's routines dropped in the sandbox are gone there only.
		{name: "drop", schema: funcSchema, steps: []string{
			"CALL show_total()",
			"DROP FUNCTION rich",
			"SELECT rich(1)",
			"CALL show_total()",
			"SELECT balance_of(1)",
			"ALTER FUNCTION balance_of COMMENT 'changed' SQL SECURITY INVOKER",
			"ALTER PROCEDURE show_total COMMENT 'p'",
			"SELECT ROUTINE_NAME, ROUTINE_COMMENT, SECURITY_TYPE FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE() ORDER BY 1",
			"ALTER FUNCTION nosuch COMMENT 'x'",
			"DROP PROCEDURE show_total",
			"CALL show_total()",
			"DROP FUNCTION IF EXISTS rich",
			"CREATE FUNCTION rich(a INT) RETURNS INT RETURN a",
			"SELECT rich(5)",
			"CREATE FUNCTION greet(n INT) RETURNS INT RETURN n",
			"SELECT greet('x')",
			"SELECT ROUTINE_NAME, ROUTINE_TYPE FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE() ORDER BY 1",
		}},
		// Aggregate functions: their bodies fetch the group's rows; calls
		// in grouping queries run the sandbox's copies, whose writes land
		// in forks.
		{name: "aggregate", schema: aggSchema, steps: []string{
			"SELECT dept, total_sal(sal) FROM emp GROUP BY dept ORDER BY dept",
			"SELECT * FROM seen ORDER BY sal",
			"UPDATE emp SET sal = 100 WHERE id = 3",
			"SELECT total_sal(sal), total_sal(id) FROM emp",
			"SELECT dept FROM emp GROUP BY dept HAVING total_sal(sal) > 25 ORDER BY total_sal(sal)",
			"SELECT total_sal(sal) FROM emp WHERE 1 = 0",
			"CREATE AGGREGATE FUNCTION cnt(x INT) RETURNS INT BEGIN DECLARE n INT DEFAULT 0; DECLARE CONTINUE HANDLER FOR NOT FOUND RETURN n; " +
				"LOOP FETCH GROUP NEXT ROW; SET n = n + 1; END LOOP; END",
			"SELECT dept, cnt(id), total_sal(sal) FROM emp GROUP BY dept ORDER BY dept",
			"SELECT * FROM seen ORDER BY sal",
			"CREATE FUNCTION not_agg(x INT) RETURNS INT BEGIN FETCH GROUP NEXT ROW; RETURN x; END",
			"CREATE AGGREGATE FUNCTION no_fetch(x INT) RETURNS INT RETURN x",
			"SELECT ROUTINE_NAME, ROUTINE_TYPE FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE() ORDER BY 1",
			"DROP FUNCTION total_sal",
			"SELECT total_sal(sal) FROM emp",
		}},
		{name: "transaction", schema: funcSchema, steps: []string{
			"BEGIN",
			"SELECT logged('in trx')",
			"ROLLBACK",
			"SELECT COUNT(*) FROM audit",
			"SELECT balance_of(1)",
		}},
	})
}

// TestFidelitySequenceEngine: the Sequence engine's tables (seq_1_to_N),
// which every database has, are read as production's — in INSERT …
// SELECT and locking reads too — and never forked. (A multi-table UPDATE
// or DELETE joining one is refused: the proxy takes every table it joins
// for written.)
func TestFidelitySequenceEngine(t *testing.T) {
	runObjCases(t, []objCase{
		{name: "seq", schema: "CREATE TABLE t (a INT);", steps: []string{
			"INSERT INTO t SELECT seq FROM seq_1_to_5",
			"SELECT SUM(a) FROM t",
			"SELECT * FROM seq_0_to_9_step_3",
			"SELECT * FROM seq_1_to_3 FOR UPDATE",
			"CREATE VIEW v AS SELECT seq FROM seq_1_to_4",
			"SELECT SUM(seq) FROM v",
			"UPDATE t SET a = a * 10 WHERE a IN (SELECT seq FROM seq_1_to_2)",
			"SELECT * FROM t ORDER BY a",
			// A function's keyword right before "(" is the function: the
			// server's 1064, though the rewritten name would be a table.
			"create table BIT_AND(a int)",
			"create table `BIT_AND`(a int)",
			// Keywords of the server's function list its grammar also
			// takes for a name: tables.
			"create table ADDDATE(a int)",
			"create table SYSDATE(a int)",
			"SHOW TABLES",
			// Under IGNORE_SPACE, whitespace before "(" too.
			"SET sql_mode = 'IGNORE_SPACE'",
			"create table COUNT (a int)",
			"create table COUNT\n(a int)",
			"create table COUNT /* c */ (a int)",
			"create table SUBDATE (a int)",
			"SET sql_mode = DEFAULT",
			"SHOW TABLES",
			// HELP reads the server's help tables only.
			"HELP 'function_of_my_dream'",
		}},
	})
}

// TestFidelityFlushTables: FLUSH TABLE[S] of named tables or of every
// table, which shows a client nothing, is a no-op in a sandbox (production's tables are not
// closed, no RELOAD privilege needed), in a statement and in a procedure
// body (MariaDB's test runner's mtr.add_suppression runs one).
func TestFidelityFlushTables(t *testing.T) {
	db := leastPrivilegeEnv(t)
	grantProcRead(t, db)
	runObjCases(t, []objCase{
		{name: "flush", schema: "CREATE TABLE t (a INT); CREATE TABLE sup (p VARCHAR(40)); INSERT INTO t VALUES (1);" +
			"CREATE PROCEDURE add_sup(x VARCHAR(40)) BEGIN INSERT INTO sup VALUES (x); FLUSH NO_WRITE_TO_BINLOG TABLE sup; END;", steps: []string{
			"FLUSH TABLES t",
			"FLUSH LOCAL TABLE t, sup",
			"CALL add_sup('a pattern')",
			"SELECT * FROM sup",
			"INSERT INTO t VALUES (2)",
			"FLUSH TABLE t",
			"SELECT * FROM t ORDER BY a",
			"FLUSH TABLES",
			"FLUSH NO_WRITE_TO_BINLOG TABLES",
			"SELECT * FROM t ORDER BY a",
		}},
	})
}

// TestFidelitySQLPrepare: statements prepared with SQL PREPARE run in the
// sandbox at EXECUTE — prepared again when the sandbox forked a table they
// read since — as on a copy of the database.
func TestFidelitySQLPrepare(t *testing.T) {
	runObjCases(t, []objCase{
		{name: "prepare-execute", schema: "CREATE TABLE t (id INT PRIMARY KEY, v INT); INSERT INTO t VALUES (1, 1), (2, 2);", steps: []string{
			"PREPARE s FROM 'SELECT * FROM t WHERE id > ? ORDER BY id'",
			"SET @a = 0",
			"EXECUTE s USING @a",
			"UPDATE t SET v = v + 10",
			"EXECUTE s USING @a",
			"PREPARE w FROM 'INSERT INTO t VALUES (?, ?)'",
			"SET @i = 10, @v = 5",
			"EXECUTE w USING @i, @v",
			"EXECUTE w USING @i, @v",
			"EXECUTE w USING 20, ABS(-7)",
			"PREPARE f FROM 'SELECT SFORMAT(\"={:d}=\", ?)'",
			"EXECUTE f USING 100",
			"PREPARE c FROM 'CREATE TABLE t2 AS SELECT id, v FROM t WHERE id < 3'",
			"EXECUTE c",
			"SELECT * FROM t2 ORDER BY id",
			"EXECUTE c",
			"DROP TABLE t2",
			"EXECUTE c",
			"SELECT COUNT(*) FROM t2",
			"SHOW TABLES",
			"SELECT * FROM t ORDER BY id",
			"DEALLOCATE PREPARE w",
			"EXECUTE w USING @i, @v",
			"PREPARE s FROM 'SELECT COUNT(*) FROM t'",
			"EXECUTE s",
			"BEGIN",
			"EXECUTE s",
			"DELETE FROM t WHERE id = 10",
			"EXECUTE s",
			"ROLLBACK",
			"EXECUTE s",
		}},
		// Dynamic SQL: the text computed from variables and literals.
		{name: "dynamic", schema: "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20)); INSERT INTO t VALUES (1, 'a'), (2, 'b');", steps: []string{
			"SET @q = 'UPDATE t SET v = CONCAT(v, ''!'') WHERE id = ?', @id = 1",
			"PREPARE u FROM @q",
			"EXECUTE u USING @id",
			"SELECT * FROM t ORDER BY id",
			"SET @tbl = 't'",
			"EXECUTE IMMEDIATE CONCAT('SELECT COUNT(*), MAX(v) FROM ', @tbl)",
			"EXECUTE IMMEDIATE CONCAT('INSERT INTO ', @tbl, ' VALUES (?, ?)') USING 3, 'ç日'",
			"SELECT * FROM t ORDER BY id",
			"PREPARE n FROM @nosuch",
			"SET @bad = 'SELEC 1'",
			"PREPARE b FROM @bad",
			"EXECUTE IMMEDIATE @bad",
			"SET @two = 'SELECT 1; SELECT 2'",
			"PREPARE b FROM @two",
			"PREPARE b FROM ' ? v FROM t WHERE id = 1 '",
			"PREPARE b FROM 'SELECT v FROM t WHERE'",
		}},
		// EXECUTE IMMEDIATE of a statement the proxy answers or watches by
		// its kind runs as that statement sent itself.
		{name: "immediate-itself", schema: "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20)); INSERT INTO t VALUES (1, 'a'), (2, 'b');", steps: []string{
			"SET @tbl = 't', @coll = 'utf8mb4_uca1400_ai_ci'",
			"EXECUTE IMMEDIATE 'SHOW TABLES'",
			"EXECUTE IMMEDIATE CONCAT('SHOW CREATE TABLE ', @tbl)",
			"EXECUTE IMMEDIATE CONCAT('SHOW COLUMNS FROM ', @tbl)",
			"EXECUTE IMMEDIATE 'SET @x = 5'",
			"SELECT @x",
			"EXECUTE IMMEDIATE SFORMAT('CREATE VIEW v AS SELECT id, CONVERT(v USING utf8mb4) COLLATE {} AS c FROM {} WHERE id > 1', @coll, @tbl)",
			"SELECT id, c, COLLATION(c) FROM v",
			"SHOW FULL TABLES",
			"EXECUTE IMMEDIATE 'BEGIN'",
			"INSERT INTO t VALUES (5, 'e')",
			"EXECUTE IMMEDIATE 'ROLLBACK'",
			"SELECT * FROM t ORDER BY id",
			"EXECUTE IMMEDIATE CONCAT('CREATE PROCEDURE p() SELECT COUNT(*) FROM ', @tbl)",
			"EXECUTE IMMEDIATE 'CALL p()'",
			"EXECUTE IMMEDIATE 'DROP PROCEDURE p'",
			"SELECT 1/0",
			"EXECUTE IMMEDIATE 'SHOW WARNINGS'",
			"EXECUTE IMMEDIATE 'PREPARE s FROM ''SELECT 1'''",
			"EXECUTE IMMEDIATE CONCAT('DEALLOCATE PREPARE ', 's')",
			"EXECUTE IMMEDIATE 'SELEC 1'",
			"EXECUTE IMMEDIATE 'SHOW TABLES; SELECT 1'",
			"EXECUTE IMMEDIATE 'SHOW TABLES LIKE ?'",
			"DROP VIEW v",
		}},
		// PREPARE of such a statement, then EXECUTE.
		{name: "prepare-itself", schema: "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20)); INSERT INTO t VALUES (1, 'a'), (2, 'b');", steps: []string{
			"PREPARE s FROM 'SHOW TABLES'",
			"EXECUTE s",
			"SET @q = 'CREATE VIEW v AS SELECT * FROM t WHERE id > 1'",
			"PREPARE c FROM @q",
			"EXECUTE c",
			"SELECT * FROM v",
			"EXECUTE c",
			"PREPARE z FROM 'SET @z = 3'",
			"EXECUTE z",
			"SELECT @z",
			"EXECUTE z USING 1",
			"PREPARE d FROM CONCAT('SHOW CREATE VIEW ', 'v')",
			"EXECUTE d",
			"PREPARE p FROM 'CREATE PROCEDURE p() SELECT COUNT(*) FROM t'",
			"EXECUTE p",
			"CALL p()",
			"PREPARE b FROM 'BEGIN'",
			"EXECUTE b",
			"INSERT INTO t VALUES (7, 'g')",
			"ROLLBACK",
			"SELECT * FROM t ORDER BY id",
			"DROP PROCEDURE p",
			"DROP VIEW v",
		}},
	})
}

// TestFidelityInfoSchemaTables: a table made from a query of
// information_schema names its columns as the query wrote them, and the
// query lists the table being made, as on the server.
func TestFidelityInfoSchemaTables(t *testing.T) {
	runObjCases(t, []objCase{
		{name: "ctas", schema: "CREATE TABLE t1 (x INT); CREATE TABLE t2 (x INT);", steps: []string{
			"CREATE TABLE t3 (x INT)",
			"CREATE TABLE t4 AS SELECT table_name FROM information_schema.TABLES WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE'",
			"DELETE FROM t4 WHERE table_name NOT IN (SELECT table_name FROM information_schema.TABLES WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE')",
			"SELECT * FROM t4 ORDER BY table_name",
			"SHOW CREATE TABLE t4",
			"CREATE TABLE t5 SELECT i.`Table_Name`, i.table_type, table_rows + 0 FROM information_schema.TABLES i WHERE table_schema = DATABASE() AND table_name = 't1'",
			"SHOW CREATE TABLE t5",
			"CREATE VIEW v AS SELECT table_name FROM information_schema.TABLES WHERE table_schema = DATABASE() AND table_name LIKE 't%'",
			"SELECT * FROM v ORDER BY 1",
			"DROP TABLE t4",
			"CREATE TABLE t4 AS SELECT table_name FROM information_schema.TABLES WHERE table_schema = DATABASE() AND table_name = 't4'",
			"SELECT * FROM t4",
			"DROP VIEW v",
		}},
	})
}

// TestSQLPrepareOutsideThenInSandbox: a statement prepared on production
// (explicit mode, production writes allowed) is production's: EXECUTE of
// it after SANDBOX CREATE is refused, never run on production from the
// sandbox; prepared again in the sandbox, it writes the fork.
func TestSQLPrepareOutsideThenInSandbox(t *testing.T) {
	users := []proxy.User{{Name: "carol", Password: sandboxPassword}}
	db, _ := env(t) // the account must be able to write production
	p := startTestProxy(t, db.Addr, db, func(c *proxy.Config) { c.Mode, c.Users, c.ProductionWrites = "explicit", users, "allow" })
	root := openDB(t, directDSN(db, ""))
	mustExecDB(t, root, "CREATE TABLE IF NOT EXISTS app.prep_w (id INT)")
	t.Cleanup(func() { _, _ = root.Exec("DROP TABLE IF EXISTS app.prep_w") })
	c := conn(t, openDB(t, p.userDSN("carol", "app")))
	mustExecC(t, c, "PREPARE w FROM 'INSERT INTO prep_w VALUES (1)'")
	mustExecC(t, c, "SANDBOX CREATE")
	_, err := c.ExecContext(context.Background(), "EXECUTE w")
	if e := mysqlErr(err); !strings.HasPrefix(e, "1105") {
		t.Errorf("EXECUTE in a sandbox of a statement prepared on production: %s, want 1105", e)
	}
	mustExecC(t, c, "PREPARE w FROM 'INSERT INTO prep_w VALUES (2)'")
	mustExecC(t, c, "EXECUTE w")
	wantString(t, c, "SELECT GROUP_CONCAT(id) FROM prep_w", "2", "the sandbox's prep_w: %q, want 2")
	var n int
	if err := root.QueryRow("SELECT COUNT(*) FROM app.prep_w").Scan(&n); err != nil || n != 0 {
		t.Errorf("production's prep_w has %d rows (%v), want 0", n, err)
	}
}

// TestFidelityExplainJSON: EXPLAIN FORMAT=JSON of a statement reading the
// sandbox's forks names their columns as the server does for tables of the
// current database (no database), and other databases' with theirs.
func TestFidelityExplainJSON(t *testing.T) {
	runObjCases(t, []objCase{
		{name: "explain-json", schema: "CREATE TABLE t1 (a INT, b INT, KEY (a)); CREATE TABLE t2 (a INT PRIMARY KEY, c INT); " +
			"INSERT INTO t1 VALUES (1, 1), (2, 2), (3, 3); INSERT INTO t2 VALUES (1, 1), (2, 2);", steps: []string{
			"UPDATE t1 SET b = b WHERE a = 0",
			"UPDATE t2 SET c = c WHERE a = 0",
			"EXPLAIN FORMAT=JSON SELECT * FROM t1 WHERE t1.b = 1 AND t1.a IN (1, 2)",
			"EXPLAIN FORMAT=JSON SELECT * FROM t1 JOIN t2 ON t2.a = t1.a WHERE t1.b > 0",
			"EXPLAIN SELECT * FROM t1 JOIN t2 ON t2.a = t1.a WHERE t1.b > 0",
		}},
	})
}

// TestShowCreateSandboxRoutine: SHOW CREATE FUNCTION | PROCEDURE shows the
// sandbox's own routines (made, altered there; 1305 once dropped there)
// with logical names, and production's for routines the sandbox did not
// change (a copy it runs included).
func TestShowCreateSandboxRoutine(t *testing.T) {
	db, p := sandboxProxy(t, "transparent", nil)
	root := productionRoutines(t, db, "sc_f(x INT) RETURNS INT DETERMINISTIC RETURN x + 1", "sc_p() SELECT sc_f(1) AS v")
	ctx := context.Background()
	c := p.appConn(t)
	show := func(c interface {
		QueryRowContext(context.Context, string, ...any) *sql.Row
	}, what string) (string, error) {
		var name, mode, text, cs, coll, dbColl sql.NullString
		err := c.QueryRowContext(ctx, "SHOW CREATE "+what).Scan(&name, &mode, &text, &cs, &coll, &dbColl)
		return text.String, err
	}
	prodF, err := show(root, "FUNCTION app.sc_f")
	if err != nil {
		t.Fatal(err)
	}
	mustExecC(t, c, "CALL sc_p()") // copies both
	if got, err := show(c, "FUNCTION sc_f"); err != nil || got != prodF {
		t.Errorf("an untouched copy: %q, %v; want production's %q", got, err, prodF)
	}
	mustExecC(t, c, "CREATE FUNCTION sc_g(x INT) RETURNS INT RETURN sc_f(x) * 2")
	mustExecC(t, c, "ALTER PROCEDURE sc_p COMMENT 'mine'")
	for what, want := range map[string]string{"FUNCTION sc_g": "FUNCTION `sc_g`(x INT) RETURNS int(11)\nRETURN `app`.`sc_f`(x) * 2",
		"PROCEDURE sc_p": "COMMENT 'mine'"} {
		got, err := show(c, what)
		if err != nil || !strings.Contains(got, want) || strings.Contains(got, "_sqlfork") {
			t.Errorf("SHOW CREATE %s: %q, %v; want it to hold %q and no physical name", what, got, err, want)
		}
	}
	mustExecC(t, c, "DROP FUNCTION sc_f")
	if _, err := show(c, "FUNCTION sc_f"); err == nil || !strings.Contains(err.Error(), "1305") || strings.Contains(err.Error(), "_sqlfork") {
		t.Errorf("SHOW CREATE of a function the sandbox dropped: %v, want 1305 naming app", err)
	}
	if got, err := show(root, "FUNCTION app.sc_f"); err != nil || got != prodF {
		t.Errorf("production's function changed: %q, %v", got, err)
	}
}

// TestFidelityPlans: the plans of ANALYZE (in a table and in JSON, its
// timings aside), of EXPLAIN FORMAT=JSON with a "ref" list that the
// sandbox's longer names would break across lines, of EXECUTE of a
// prepared EXPLAIN or ANALYZE, and the optimizer trace read after a
// statement on the sandbox's forks read as directly.
func TestFidelityPlans(t *testing.T) {
	runObjCases(t, []objCase{
		{name: "plans", schema: "CREATE TABLE t1 (a INT, b INT, c INT, KEY (a)); CREATE TABLE t2 (a INT, b INT, c INT, d INT, KEY (a, b, c)); " +
			"INSERT INTO t1 VALUES (1, 1, 1), (2, 2, 2), (3, 3, 3); INSERT INTO t2 SELECT seq % 4, seq % 4, seq % 4, seq FROM seq_1_to_50;",
			mask: regexp.MustCompile(`"r_[a-z_]*time_ms": [0-9.e+-]+|"r_engine_stats": \{[^}]*\}`),
			steps: []string{
				"UPDATE t1 SET b = b WHERE a = 0",
				"UPDATE t2 SET d = d WHERE a = 0",
				"ANALYZE SELECT * FROM t1 JOIN t2 ON t2.a = t1.a AND t2.b = t1.b AND t2.c = t1.c WHERE t1.a IN (2, 3)",
				"ANALYZE FORMAT=JSON SELECT * FROM t1 WHERE t1.a IN (2, 3, 4)",
				"EXPLAIN FORMAT=JSON SELECT * FROM t1 JOIN t2 ON t2.a = t1.a AND t2.b = t1.b AND t2.c = t1.c",
				"ANALYZE FORMAT=JSON SELECT * FROM t1 JOIN t2 ON t2.a = t1.a AND t2.b = t1.b AND t2.c = t1.c",
				"SET optimizer_trace = 'enabled=on'",
				"SELECT COUNT(DISTINCT a), SUM(DISTINCT b) FROM t1",
				"SELECT JSON_DETAILED(JSON_EXTRACT(trace, '$**.prepare_sum_aggregators')) FROM INFORMATION_SCHEMA.OPTIMIZER_TRACE",
				"SET optimizer_trace = 'enabled=off'",
				"PREPARE s FROM 'EXPLAIN SELECT * FROM t1 JOIN t2 ON t2.a = t1.a AND t2.b = t1.b AND t2.c = t1.c'",
				rowsStep + "EXECUTE s",
				"PREPARE s FROM 'ANALYZE FORMAT=JSON SELECT * FROM t1 JOIN t2 ON t2.a = t1.a AND t2.b = t1.b AND t2.c = t1.c WHERE t1.b > 1'",
				rowsStep + "EXECUTE s",
				"CREATE TABLE t3 (a INT PRIMARY KEY)",
				"CREATE TABLE t4 (a INT PRIMARY KEY)",
				"INSERT INTO t3 VALUES (1), (2)",
				"INSERT INTO t4 VALUES (1), (2)",
				"CREATE VIEW v4 AS SELECT * FROM t4",
				"PREPARE s FROM \"\nEXPLAIN\nSELECT a\nFROM t3\nWHERE a IN (SELECT * FROM v4)\n\"",
				rowsStep + "EXECUTE s",
				rowsStep + "EXECUTE s",
			}},
		// Warnings and notes naming a forked table's column or the table in
		// the server's own words (`db`.`t`.`col`): the logical database,
		// not the statement's text.
		{name: "warning-names", schema: "CREATE TABLE tw (a TIME, b VARCHAR(10)); INSERT INTO tw VALUES ('10:00:00', '');",
			steps: []string{
				"UPDATE tw SET b = b WHERE a IS NULL",
				"SELECT * FROM tw WHERE a = b",
				"EXPLAIN EXTENDED SELECT a FROM tw WHERE 1 XOR 1",
				"CREATE FUNCTION fw() RETURNS INT RETURN 1",
				"EXPLAIN EXTENDED SELECT a FROM tw WHERE a = fw() + LENGTH(b)",
				"ALTER TABLE tw RENAME TO tw2, DISABLE KEYS",
				"SELECT * FROM tw2",
			}},
	})
}

// TestFidelityMaintenance: CHECK, ANALYZE, OPTIMIZE, REPAIR and CHECKSUM
// TABLE, and ALTER TABLE … ANALYZE | CHECK | OPTIMIZE | REPAIR PARTITION,
// in a sandbox run on its copies of production's tables (which stay
// as they are) and on its own, and answer as directly, tables named by
// their logical databases; those of the server's own schemas stay refused.
func TestFidelityMaintenance(t *testing.T) {
	runObjCases(t, []objCase{
		{name: "maintenance", schema: "CREATE TABLE t1 (a INT, b INT, KEY (a)) ENGINE=MyISAM; CREATE TABLE t2 (a INT PRIMARY KEY, c INT) ENGINE=InnoDB; " +
			"INSERT INTO t1 VALUES (1, 1), (2, 2), (3, 3); INSERT INTO t2 VALUES (1, 1), (2, 2); CREATE VIEW pv AS SELECT a FROM t1;",
			steps: []string{
				"CHECK TABLE t1",
				"CHECKSUM TABLE t1, t2",
				"ANALYZE TABLE t1, t2",
				"SELECT a FROM t1 WHERE a > 1",
				"OPTIMIZE TABLE t2",
				"REPAIR TABLE t1 QUICK",
				"CHECK TABLE t1, t2 EXTENDED",
				"CREATE TABLE t3 (a INT, KEY (a)) ENGINE=Aria",
				"INSERT INTO t3 VALUES (1), (2)",
				"CHECK TABLE t3",
				"ANALYZE TABLE t3 PERSISTENT FOR ALL",
				"ANALYZE NO_WRITE_TO_BINLOG TABLE t3",
				"OPTIMIZE TABLE t3",
				"CHECK TABLE no_such_table",
				"CREATE TEMPORARY TABLE tt (a INT)",
				"INSERT INTO tt VALUES (1)",
				"CHECK TABLE tt",
				"ANALYZE TABLE tt",
				"CHECK TABLE pv",
				"CHECK TABLE t1, tt, pv",
				"REPAIR TABLE pv",
				"CHECKSUM TABLE t3 EXTENDED",
				rowsStep + "ALTER TABLE t1 ANALYZE PARTITION p1",
				"CREATE TABLE t5 (a INT) PARTITION BY HASH (a) PARTITIONS 2",
				"INSERT INTO t5 VALUES (1), (2), (3)",
				rowsStep + "ALTER TABLE t5 ANALYZE PARTITION p0, p1",
				rowsStep + "ALTER TABLE t5 CHECK PARTITION ALL",
				rowsStep + "alter table t5 check partition all for upgrade",
				rowsStep + "ALTER TABLE t5 OPTIMIZE PARTITION p0",
				rowsStep + "ALTER TABLE t5 REPAIR PARTITION p0, p1",
			}},
	})
}

// TestFidelityColumnsOrder: information_schema.COLUMNS read without an
// ORDER BY lists a table's columns by their position, and the tables of a
// database (the sandbox's own, its forks and production's) in order, as
// the server lists them.
func TestFidelityColumnsOrder(t *testing.T) {
	long := strings.Repeat("abcdefghij", 30)
	runObjCases(t, []objCase{
		{name: "columns-order", schema: "CREATE TABLE p1 (a INT, b INT); CREATE TABLE p2 (z INT, y INT, x INT);", steps: []string{
			"CREATE TABLE t1 (c1 VARCHAR(10) NOT NULL COMMENT 'A" + long + "', c2 INTEGER COMMENT 'a" + long + "', c3 INTEGER COMMENT '0" +
				long + "', c4 INTEGER, c5 INTEGER, c6 INTEGER, c7 INTEGER, c8 VARCHAR(100), c9 CHAR(50), c10 DATETIME, INDEX i1 (c1), INDEX i2 (c2))",
			"SELECT column_name, char_length(column_comment) FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = 't1'",
			"SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = DATABASE()",
			"UPDATE p2 SET x = 1",
			"SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = DATABASE()",
			"SELECT column_name FROM information_schema.columns WHERE table_schema = DATABASE() ORDER BY column_name DESC",
		}},
	})
}

// TestFidelityCompoundSyntax: a compound statement with a syntax error,
// which the engine reads as several statements, gets the server's own
// syntax error (MariaDB's sp-memory-leak); a valid one the engine cannot
// read stays refused.
func TestFidelityCompoundSyntax(t *testing.T) {
	runObjCases(t, []objCase{
		{name: "compound-syntax", schema: "CREATE TABLE t1 (a INT);", steps: []string{
			"BEGIN NOT ATOMIC\n  IF SCALAR() expected_THEN_here;\nEND",
			"BEGIN NOT ATOMIC\n  WHILE SCALAR() expected_DO_here;\nEND",
			"BEGIN NOT ATOMIC\n  REPEAT SELECT 1; UNTIL SCALAR() expected_END_here;\nEND",
			"BEGIN NOT ATOMIC\n  DECLARE cur CURSOR (a INT) FOR SELECT a+1;\n  OPEN cur(1,sp_followed_by_syntax_error();\n  CLOSE cur;\nEND;",
			"SELECT * FROM t1",
		}},
	})
}

// TestFidelityAnonymousBlocks: anonymous compound statements (BEGIN NOT
// ATOMIC … END, labelled loops sent as statements) run at once and read
// and write the sandbox's tables — production's forked on the block's
// first write, before it runs — through cursors, handlers, loops and
// nested blocks, as on a copy; JSON_TABLE's document may be a subquery.
// A block may hold DDL of tables and views, which a procedure's body may.
func TestFidelityAnonymousBlocks(t *testing.T) {
	runObjCases(t, []objCase{
		{name: "cursor-handler-loop", schema: cursorSchema, steps: []string{
			"BEGIN NOT ATOMIC\n  DECLARE done INT DEFAULT FALSE;\n  DECLARE va INT;\n  DECLARE vb VARCHAR(10);\n" +
				"  DECLARE cur CURSOR FOR SELECT a, b FROM t1 WHERE a >= 2 ORDER BY a;\n" +
				"  DECLARE CONTINUE HANDLER FOR NOT FOUND SET done = TRUE;\n  OPEN cur;\n  l: LOOP\n    FETCH cur INTO va, vb;\n" +
				"    IF done THEN LEAVE l; END IF;\n    INSERT INTO t2 VALUES (va, CONCAT(vb, '!'));\n  END LOOP;\n  CLOSE cur;\nEND",
			"SELECT * FROM t2 ORDER BY a, b",
			"UPDATE t1 SET b = 'z' WHERE a = 3",
			"BEGIN NOT ATOMIC DECLARE n INT DEFAULT (SELECT COUNT(*) FROM t2); WHILE n > 0 DO UPDATE t2 SET b = CONCAT(b, n) WHERE a = n + 1; SET n = n - 1; END WHILE; END;",
			"SELECT * FROM t2 ORDER BY a, b",
			"BEGIN NOT ATOMIC DECLARE i INT DEFAULT 0; lbl: REPEAT SET i = i + 1; INSERT INTO t1 SELECT a + 10 * i, b FROM t1 WHERE a = 1; UNTIL i >= 3 END REPEAT lbl; END",
			"WHILE (SELECT COUNT(*) FROM t1) < 7 DO INSERT INTO t1 SELECT MAX(a) + 1, 'w' FROM t1; END WHILE",
			// No label outside a stored program: the server's 1064, on
			// the text as sent.
			"lbl: WHILE (SELECT COUNT(*) FROM t1) < 7 DO INSERT INTO t1 SELECT MAX(a) + 1, 'w' FROM t1; END WHILE lbl",
			"lbl: LOOP DELETE FROM t2; LEAVE lbl; END LOOP",
			"lbl: BEGIN NOT ATOMIC DELETE FROM t2; END lbl",
			"SHOW WARNINGS",
			"SELECT * FROM t1 ORDER BY a",
			"BEGIN NOT ATOMIC FOR r IN (SELECT a, b FROM t1 WHERE a > 10 ORDER BY a) DO INSERT INTO t2 VALUES (r.a, r.b); END FOR; " +
				"BEGIN DELETE FROM t1 WHERE a > 20; END; SELECT COUNT(*) AS n FROM t1; END",
			"SELECT * FROM t2 ORDER BY a, b",
		}},
		// A handler that catches the block's error, and one that does not:
		// the rows written before the error stay, as on the server.
		{name: "handlers", schema: "CREATE TABLE k (id INT PRIMARY KEY, v INT); INSERT INTO k VALUES (1, 10);", steps: []string{
			"BEGIN NOT ATOMIC DECLARE EXIT HANDLER FOR SQLEXCEPTION SELECT 'caught' AS what; INSERT INTO k VALUES (2, 20); INSERT INTO k VALUES (1, 0); INSERT INTO k VALUES (3, 30); END",
			"SELECT * FROM k ORDER BY id",
			"BEGIN NOT ATOMIC INSERT INTO k VALUES (4, 40); INSERT INTO k VALUES (1, 0); END",
			"SELECT * FROM k ORDER BY id",
			"IF (SELECT COUNT(*) FROM k) > 2 THEN DELETE FROM k WHERE id = 4; ELSE DELETE FROM k; END IF",
			"SELECT * FROM k ORDER BY id",
			"BEGIN NOT ATOMIC DECLARE s INT; SELECT SUM(v) INTO s FROM k; UPDATE k SET v = s WHERE id = 1; SELECT s; END",
			"SELECT * FROM k ORDER BY id",
		}},
		// DDL in a block, as in a procedure's body: its tables are forked
		// or placed before it runs, and read as made after it; a block
		// may read a table's rows and then drop it; its DDL commits the
		// open transaction; its failing DDL is the server's error.
		{name: "ddl", schema: "CREATE TABLE k (id INT PRIMARY KEY, v INT); INSERT INTO k VALUES (1, 10), (2, 20);", steps: []string{
			"BEGIN NOT ATOMIC\n  DECLARE var TINYTEXT CHARACTER SET utf8 DEFAULT 'x';\n  CREATE TABLE n1 AS SELECT var;\n  INSERT INTO n1 VALUES ('y');\nEND;",
			"SHOW CREATE TABLE n1",
			"SELECT * FROM n1 ORDER BY var",
			"BEGIN NOT ATOMIC ALTER TABLE k ADD w INT DEFAULT 7; UPDATE k SET w = v + 1 WHERE id = 1; CREATE TABLE k2 LIKE k; " +
				"INSERT INTO k2 SELECT * FROM k; DROP TABLE n1; END",
			"SELECT * FROM k ORDER BY id",
			"SHOW CREATE TABLE k2",
			"SELECT * FROM k2 ORDER BY id",
			"SELECT * FROM n1",
			"SHOW TABLES",
			"BEGIN NOT ATOMIC CREATE TABLE k2 (a INT); END",
			"BEGIN NOT ATOMIC CREATE VIEW kv AS SELECT id, w FROM k2; CREATE INDEX kw ON k2 (w); END",
			"SELECT * FROM kv ORDER BY id",
			"SHOW INDEX FROM k2",
			"START TRANSACTION",
			"INSERT INTO k VALUES (5, 50, 0)",
			"BEGIN NOT ATOMIC CREATE TABLE k3 (a INT); INSERT INTO k3 VALUES (1); END",
			"ROLLBACK",
			"SELECT * FROM k ORDER BY id",
			"SELECT * FROM k3",
			"BEGIN NOT ATOMIC INSERT INTO k2 SELECT id + 100, v, w FROM k; DROP TABLE k; RENAME TABLE k3 TO k4; END",
			"SELECT * FROM k2 ORDER BY id",
			"SELECT * FROM k",
			"SELECT * FROM k4",
			"IF (SELECT COUNT(*) FROM k4) > 0 THEN TRUNCATE TABLE k4; DROP VIEW kv; END IF",
			"SELECT COUNT(*) FROM k4",
			"SELECT * FROM kv",
		}},
		{name: "json-table", schema: "CREATE TABLE docs (id INT, j TEXT); CREATE TABLE out1 (a INT); INSERT INTO docs VALUES (1, '[1,2,3]');", steps: []string{
			"BEGIN NOT ATOMIC INSERT INTO out1 SELECT x FROM JSON_TABLE((SELECT j FROM docs WHERE id = 1), '$[*]' COLUMNS (x INT PATH '$')) AS jt; END",
			"UPDATE docs SET j = '[7]'",
			"SELECT d.id, jt.x FROM docs d, JSON_TABLE(d.j, '$[*]' COLUMNS (x INT PATH '$')) AS jt ORDER BY 1, 2",
			"SELECT * FROM out1 ORDER BY a",
		}},
	})
}

// inCharset writes s, UTF-8, in the single-byte character set cs, with the
// table rewrite decodes it with (TestCharsetBytes checks it against the
// server).
func inCharset(t *testing.T, cs, s string) string {
	t.Helper()
	d, ok := rewrite.DescribeCharset(cs)
	if !ok || d.Unicode == nil {
		t.Fatalf("no decoding table for %s", cs)
	}
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 {
			b.WriteRune(r)
			continue
		}
		i := slices.Index(d.Unicode, r)
		if i < 0 {
			t.Fatalf("%q has no byte in %s", r, cs)
		}
		b.WriteByte(byte(0x80 + i))
	}
	return b.String()
}

// TestFidelityClientCharsetNames: names written in a single-byte client
// character set (koi8r, cp1251) name the tables whose names the catalog
// holds in Unicode, in a sandbox as on a copy — reads of production's
// table, its fork on the first write, tables the sandbox creates and
// drops, SHOW and EXPLAIN — and bytes of another character set name
// another table.
func TestFidelityClientCharsetNames(t *testing.T) {
	schema := "CREATE TABLE `таблица` (id INT PRIMARY KEY, `поле` VARCHAR(20)) CHARACTER SET utf8mb4;" +
		"INSERT INTO `таблица` VALUES (1, 'один'), (2, 'два');"
	steps := func(cs, set string) []string {
		e := func(s string) string { return inCharset(t, cs, s) }
		return []string{
			set,
			e("SELECT id, поле, HEX(поле) FROM таблица ORDER BY id"),
			e("INSERT INTO таблица VALUES (3, 'три')"),
			e("UPDATE таблица SET поле = 'ноль' WHERE id = 1"),
			e("SELECT id, поле FROM `таблица` WHERE поле <> 'два' ORDER BY id"),
			e("SELECT COUNT(*) FROM таблица AS т"),
			e("create table таб (кол0 int, кол1 int, key индекс0 (кол0), key индекс01 (кол0,кол1))"),
			e("insert into таб (кол0) values (1)"),
			e("insert into таб (кол0) values (2)"),
			e("explain select кол0 from таб where кол0=1"),
			"SHOW TABLES",
			e("SHOW CREATE TABLE таблица"),
			e("SHOW COLUMNS FROM таб"),
			e("SHOW TABLES LIKE 'таб%'"),
			e("SHOW FULL TABLES WHERE Table_type = 'BASE TABLE' AND 1 IN (SELECT 1 FROM таблица WHERE id = 3)"),
			e("SHOW COLUMNS FROM таблица LIKE 'по%'"),
			e("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'таб%' ORDER BY 1"),
			inCharset(t, map[string]string{"koi8r": "cp1251", "cp1251": "koi8r"}[cs], "SELECT * FROM таблица"),
			e("DROP TABLE IF EXISTS таб, t1, t2"),
			e("SELECT * FROM таб"),
			"SET NAMES utf8mb4",
		}
	}
	runObjCases(t, []objCase{
		{name: "koi8r", schema: schema, steps: steps("koi8r", "SET NAMES koi8r")},
		{name: "cp1251", schema: schema, steps: steps("cp1251", "SET CHARACTER SET cp1251")},
	})
}
