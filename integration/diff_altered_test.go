package integration

import (
	"context"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// TestDiffAlteredByRow: the capture of a fork follows the sandbox's ALTER
// TABLE (ADD and DROP COLUMN, indexes), so an altered table is
// diffed by row like any other — the backfill of a column the sandbox
// added is an update of its rows, and what production changed meanwhile
// (a price, a row it inserted, a column of a row the sandbox changed) is
// never shown as the sandbox's — and PROMOTE, whatever the strategy,
// applies the ALTER, then exactly the rows the sandbox changed: production's
// own changes stay.
func TestDiffAlteredByRow(t *testing.T) {
	prod, _ := env(t)
	e := newDiffEnv(t, "transparent", false, func(c *proxy.Config) { c.PromoteUser, c.PromotePassword = prod.User, prod.Password })
	root := openDB(t, prod.DSN(""))
	const schema = "CREATE TABLE products (id INT PRIMARY KEY, name VARCHAR(20), price DECIMAL(8,2), legacy INT, code VARCHAR(4)); " +
		"INSERT INTO products VALUES (1, 'pen', 89.90, 7, 'a'), (2, 'ink', 5.00, 7, 'b'), (3, 'pad', 3.50, 7, 'c');"
	for _, acct := range e.accts {
		for _, strategy := range []string{"FAIL", "THEIRS", "OURS"} {
			t.Run(acct.name+"/"+strategy, func(t *testing.T) {
				name := "alt_" + acct.short() + "_" + strings.ToLower(strategy)
				e.database(t, name, schema)
				sc := conn(t, openDB(t, acct.dsn(name, name)))
				direct := openDB(t, prod.DSN(name))
				mustExecC(t, sc, "UPDATE products SET name = 'Pen' WHERE id = 1") // captured before the ALTERs
				mustExecDB(t, direct, "UPDATE products SET price = 99.00 WHERE id = 1")
				mustExecC(t, sc, "ALTER TABLE products ADD COLUMN discontinued TINYINT NOT NULL DEFAULT 0")
				mustExecC(t, sc, "UPDATE products SET discontinued = 1 WHERE id = 2")
				mustExecDB(t, direct, "INSERT INTO products VALUES (4, 'cap', 1.00, 7, 'd')")
				mustExecC(t, sc, "ALTER TABLE products DROP COLUMN legacy, ADD INDEX (name)")
				mustExecC(t, sc, "UPDATE products SET code = 'c2' WHERE id = 3")
				mustExecC(t, sc, "INSERT INTO products (id, name, price, code) VALUES (5, 'mug', 7.00, 'e')")

				sum := diffSummary(t, sc, "SANDBOX DIFF SUMMARY")
				if got, want := sum[name+".products"], (sumRow{change: "altered", ins: 1, upd: 3, keyKind: "primary", method: "capture"}); got != want {
					t.Errorf("DIFF SUMMARY products: %+v, want %+v", got, want)
				}
				var detail []string
				for _, r := range diffDetail(t, sc, "SANDBOX DIFF") {
					if r.op != "ddl" {
						detail = append(detail, r.op+" "+r.key.String+" "+r.before.String+" -> "+r.after.String)
					}
				}
				want := []string{
					`update {"id": 1} {"id": 1, "name": "pen", "price": 89.90, "code": "a", "discontinued": 0} -> {"id": 1, "name": "Pen", "price": 89.90, "code": "a", "discontinued": 0}`,
					`update {"id": 2} {"id": 2, "name": "ink", "price": 5.00, "code": "b", "discontinued": 0} -> {"id": 2, "name": "ink", "price": 5.00, "code": "b", "discontinued": 1}`,
					`update {"id": 3} {"id": 3, "name": "pad", "price": 3.50, "code": "c", "discontinued": 0} -> {"id": 3, "name": "pad", "price": 3.50, "code": "c2", "discontinued": 0}`,
					`insert {"id": 5}  -> {"id": 5, "name": "mug", "price": 7.00, "code": "e", "discontinued": 0}`,
				}
				if strings.Join(detail, "\n") != strings.Join(want, "\n") {
					t.Errorf("SANDBOX DIFF:\n %s\nwant\n %s", strings.Join(detail, "\n "), strings.Join(want, "\n "))
				}

				promoteRights(t, root, acct, sc, name)
				if _, err := sc.ExecContext(context.Background(), "SANDBOX PROMOTE STRATEGY "+strategy); err != nil {
					t.Fatalf("PROMOTE STRATEGY %s: %s", strategy, mysqlErr(err))
				}
				got := allRows(t, root, "SELECT id, name, price, code, discontinued FROM `"+name+"`.products ORDER BY id")
				if want := "1 Pen 99.00 a 0|2 ink 5.00 b 1|3 pad 3.50 c2 0|4 cap 1.00 d 0|5 mug 7.00 e 0"; got != want {
					t.Errorf("production after PROMOTE STRATEGY %s: %s, want %s", strategy, got, want)
				}
				if cols := strings.Join(tableColumns(t, root, name, "products"), ","); cols != "id,name,price,code,discontinued" {
					t.Errorf("production's columns after PROMOTE: %s", cols)
				}
				// What it promoted is production's now: no change is left,
				// not even the ALTER.
				if got := diffSummary(t, sc, "SANDBOX DIFF SUMMARY"); len(got) != 0 {
					t.Errorf("DIFF SUMMARY after PROMOTE: %+v, want nothing left", got)
				}
			})
		}
	}
}

// tableColumns are db.table's columns, in order.
func tableColumns(t *testing.T, c rowQuerier, db, table string) []string {
	t.Helper()
	_, rows := queryRows(t, c, "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = '"+db+"' AND TABLE_NAME = '"+table+
		"' ORDER BY ORDINAL_POSITION")
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r[0].String
	}
	return out
}

// TestDetachWarnsOfChangesDiscarded: DETACH of a sandbox with changes that
// nothing keeps says, with a warning SHOW WARNINGS lists, that they are
// gone.
func TestDetachWarnsOfChangesDiscarded(t *testing.T) {
	e := newDiffEnv(t, "transparent", false, nil)
	e.database(t, "detachw", "CREATE TABLE t (id INT PRIMARY KEY, v INT); INSERT INTO t VALUES (1, 1);")
	sc := conn(t, openDB(t, e.accts[1].dsn("", "detachw")))
	mustExecC(t, sc, "UPDATE t SET v = 2 WHERE id = 1")
	mustExecC(t, sc, "SANDBOX DETACH")
	_, rows := queryRows(t, sc, "SHOW WARNINGS")
	if len(rows) != 1 || rows[0][0].String != "Warning" || rows[0][1].String != "1105" ||
		!strings.Contains(rows[0][2].String, "its changes to 1 tables were discarded with it") {
		t.Errorf("SHOW WARNINGS after DETACH: %v", rows)
	}
	wantString(t, sc, "SELECT v FROM t WHERE id = 1", "1", "after DETACH the new sandbox reads %s, want production's 1")
}

// TestDiffJSONColumn: a JSON column is JSON in every image of a diff — the
// fork-time one too, though the side table keeps it as text — so a row
// whose other column changed shows the document unchanged.
func TestDiffJSONColumn(t *testing.T) {
	e := newDiffEnv(t, "transparent", false, nil)
	e.database(t, "diffjson", `CREATE TABLE j (id INT PRIMARY KEY, doc JSON, v INT); INSERT INTO j VALUES (1, '{"k": [1, "x"]}', 0);`)
	sc := conn(t, openDB(t, e.accts[0].dsn("", "diffjson")))
	mustExecC(t, sc, "UPDATE j SET v = 1 WHERE id = 1")
	d := diffDetail(t, sc, "SANDBOX DIFF")
	want := []string{`update {"id": 1, "doc": {"k": [1, "x"]}, "v": 0} {"id": 1, "doc": {"k": [1, "x"]}, "v": 1}`}
	var got []string
	for _, r := range d {
		got = append(got, r.op+" "+r.before.String+" "+r.after.String)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("SANDBOX DIFF:\n %s\nwant\n %s", strings.Join(got, "\n "), strings.Join(want, "\n "))
	}
}
