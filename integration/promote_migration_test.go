package integration

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// TestPromoteORMMigration: a migration as applications run them, in a
// named sandbox (the login tag user+name: the test's own connection and
// the migration's attach the same sandbox) — SQLAlchemy's (ALTER TABLE
// through connection.execute(text(…)), a backfill through the ORM
// session, an edit, a delete and new ORM objects committed, an edit rolled
// back; integration/orm/sqlalchemy_migration.py) or go-sql-driver's in
// transactions — while production, directly, changes other rows, other
// columns of the rows the backfill sets, the row the migration edits and
// the one it deletes, and deletes a row the backfill sets. DIFF lists
// every backfilled row (the oracle's capturedDiff, with the ALTER as its
// ddl row), and for every strategy a DRY RUN then PROMOTE MATCHING its
// digest leaves production as the oracle's merge by cell says: the
// column added, the backfill where production kept the row, production's
// own changes kept (oracleRun).
func TestPromoteORMMigration(t *testing.T) {
	py := requireSQLAlchemy(t)
	prod, _ := env(t)
	e := newDiffEnv(t, "transparent", false, func(c *proxy.Config) { c.PromoteUser, c.PromotePassword = prod.User, prod.Password })
	root := openDB(t, prod.DSN(""))
	acct := e.accts[0]
	migrations := map[string]func(t *testing.T, db string, sc *sql.Conn){
		"sqlalchemy": func(t *testing.T, db string, _ *sql.Conn) {
			tg := ormTarget{acct.h.addr, acct.user + "+" + db, acct.password, db}
			t.Logf("SQLAlchemy:\n%s", runWorkload(t, py, "sqlalchemy_migration.py",
				"mysql+pymysql://"+tg.user+":"+tg.password+"@"+tg.addr+"/"+tg.db+"?charset=utf8mb4"))
		},
		"gosql": goMigration,
	}
	for _, name := range []string{"sqlalchemy", "gosql"} {
		for _, strategy := range []string{"FAIL", "THEIRS", "OURS"} {
			t.Run(name+"/"+strategy, func(t *testing.T) {
				db := "omig_" + name + "_" + strings.ToLower(strategy)
				e.database(t, db, customersSchema())
				sc := conn(t, openDB(t, acct.dsn(db, db)))
				direct := openDB(t, prod.DSN(db))
				mustExecC(t, sc, "UPDATE customers SET name = name WHERE id = 0") // forks customers
				base := readORows(t, root, db, "customers")
				for _, q := range []string{"UPDATE customers SET country = 'IE' WHERE id = 4", "UPDATE customers SET name = 'Bobby' WHERE id = 2",
					"INSERT INTO customers VALUES (50, 'Prod', 'UK')", "DELETE FROM customers WHERE id = 7"} {
					mustExecDB(t, direct, q)
				}
				migrations[name](t, db, sc)
				for _, q := range []string{"UPDATE customers SET country = 'US' WHERE id = 10", "UPDATE customers SET name = 'Ivy' WHERE id = 9",
					"UPDATE customers SET name = 'Fay2' WHERE id = 6"} {
					mustExecDB(t, direct, q)
				}
				ours, theirs := readORows(t, sc, db, "customers"), readORows(t, root, db, "customers")
				cols := append(base.cols[:len(base.cols):len(base.cols)], "loyalty_tier")
				w := &ddlWorkload{cols: cols, added: map[string]string{"loyalty_tier": "NULL"}}
				ot := w.expect(t, base, ours, theirs, strategy)
				ot.name = "customers"
				// The rows DIFF must list as backfilled (the oracle's lines
				// are checked against DIFF's): UK 1, 4, 7 (which production
				// deleted: a conflict), 10; DE 3, 6, 12 (9 the migration
				// deleted).
				backfilled := 0
				for _, l := range ot.diff {
					if strings.Contains(l, "loyalty_tier=gold") || strings.Contains(l, "loyalty_tier=silver") {
						backfilled++
					}
				}
				if backfilled != 7 {
					t.Errorf("the oracle lists %d backfilled rows, want 7:\n%s", backfilled, strings.Join(ot.diff, "\n"))
				}
				r := &oracleRun{root: root, acct: acct, sc: sc, db: db, strategy: strategy, tables: []oracleTable{ot},
					story: fmt.Sprintf("base %s\nsandbox %s\nproduction %s", base, ours, theirs)}
				r.check(t)
			})
		}
	}
}

// customersSchema: 12 customers, from the UK (id % 3 = 1), France and
// Germany.
func customersSchema() string {
	var vals []string
	for i := 1; i <= 12; i++ {
		vals = append(vals, fmt.Sprintf("(%d, 'c%d', '%s')", i, i, []string{"DE", "UK", "FR"}[i%3]))
	}
	return "CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(32) NOT NULL, country CHAR(2) NOT NULL); " +
		"INSERT INTO customers VALUES " + strings.Join(vals, ", ") + ";"
}

// goMigration is the SQLAlchemy migration through go-sql-driver on sc: the
// ALTER in a transaction (it commits it), the backfill, edit, delete and
// inserts in another, and an edit in a third rolled back.
func goMigration(t *testing.T, _ string, sc *sql.Conn) {
	t.Helper()
	for i, stmts := range [][]string{
		{"ALTER TABLE customers ADD COLUMN loyalty_tier VARCHAR(16) NULL"},
		{"UPDATE customers SET loyalty_tier = 'gold' WHERE country = 'UK'", "UPDATE customers SET loyalty_tier = 'silver' WHERE country = 'DE'",
			"UPDATE customers SET name = 'Bob Ltd' WHERE id = 2", "DELETE FROM customers WHERE id = 9",
			"INSERT INTO customers (id, name, country, loyalty_tier) VALUES (100, 'new-0', 'FR', 'bronze'), (101, 'new-1', 'FR', 'bronze'), (102, 'new-2', 'FR', 'bronze')"},
		{"UPDATE customers SET loyalty_tier = 'platinum' WHERE id = 1"},
	} {
		tx, err := sc.BeginTx(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range stmts {
			mustExecC(t, tx, q)
		}
		if i == 2 {
			err = tx.Rollback()
		} else {
			err = tx.Commit()
		}
		if err != nil {
			t.Fatalf("migration transaction %d: %s", i, mysqlErr(err))
		}
	}
}
