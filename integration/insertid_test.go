package integration

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// Issue 28: INSERT | REPLACE … SELECT into a forked table with an
// AUTO_INCREMENT column, whose rows all carry their ids, answered last
// insert id 0 in a sandbox where a copy of the database answers the last
// row's (MariaDB's select_insert::send_data reads the id after putting the
// row back to its defaults when the table has triggers, and a fork has
// the capture's). The proxy reads the id the capture's trigger kept and
// answers it (session/insertid.go); the statement's warnings stay, and the
// next statement reads ROW_COUNT() and FOUND_ROWS() as the INSERT left
// them.

// idSetup makes the tables of the insert id tests: orders, whose rows are
// copied with their ids, into its own fork and into other; audited, which
// has a trigger of production's.
var idSetup = []string{
	"CREATE TABLE orders (id INT AUTO_INCREMENT PRIMARY KEY, v INT NOT NULL)",
	"INSERT INTO orders VALUES (1, 1), (2, 2), (3, 3), (619, 4), (620, 5)",
	"CREATE TABLE other (id INT AUTO_INCREMENT PRIMARY KEY, v INT NOT NULL)",
	"INSERT INTO other VALUES (1, 1)",
	"CREATE TABLE audited (id INT AUTO_INCREMENT PRIMARY KEY, v INT NOT NULL)",
	"CREATE TRIGGER audited_ai AFTER INSERT ON audited FOR EACH ROW SET @audited = NEW.id",
	"INSERT INTO audited VALUES (1, 1)",
}

// idStatements are run in a sandbox and on its copy, and must answer
// alike: last insert ids, affected rows, warnings, ROW_COUNT() and
// FOUND_ROWS() after, the rows at the end. A "?" statement is prepared
// (COM_STMT_EXECUTE) with the argument 1000.
var idStatements = []string{
	// The issue's: the rows carry their ids.
	"REPLACE INTO orders (id, v) SELECT id, v + 1 FROM orders WHERE id BETWEEN 619 AND 620",
	"SELECT ROW_COUNT(), FOUND_ROWS(), @@warning_count, LAST_INSERT_ID()",
	"SELECT ROW_COUNT(), FOUND_ROWS()",
	"INSERT INTO other (id, v) SELECT id, v FROM orders WHERE id BETWEEN 2 AND 619 ORDER BY id",
	"SELECT row_count() AS r, found_rows ()",
	"INSERT INTO other (id, v) SELECT id + 10, v FROM orders WHERE id BETWEEN 1 AND 3",
	"SET @x = 1",
	"SELECT FOUND_ROWS(), ROW_COUNT()",
	// IGNORE: a duplicate, then the last row, inserted; all ignored.
	"INSERT IGNORE INTO other (id, v) SELECT id, v FROM orders WHERE id IN (1, 620) ORDER BY id",
	"SHOW WARNINGS",
	"SELECT @@warning_count, ROW_COUNT(), FOUND_ROWS()",
	"INSERT IGNORE INTO other (id, v) SELECT id, v FROM orders WHERE id IN (2, 3)",
	"SELECT ROW_COUNT(), FOUND_ROWS()",
	// A generated id, ON DUPLICATE KEY UPDATE: the server's answer.
	"INSERT INTO other (v) SELECT v FROM orders WHERE id = 1",
	"INSERT INTO other (id, v) SELECT id, 9 FROM orders WHERE id = 619 ON DUPLICATE KEY UPDATE v = other.v + 10",
	"SELECT ROW_COUNT(), FOUND_ROWS()",
	// A table production gave a trigger: 0 on the copy too.
	"INSERT INTO audited (id, v) SELECT id + 100, v FROM orders WHERE id <= 2",
	"SELECT ROW_COUNT(), FOUND_ROWS(), @audited",
	// Prepared: the execution's OK too; the text after still reads the
	// INSERT's counts.
	"INSERT INTO other (id, v) SELECT id + ?, v FROM orders WHERE id BETWEEN 3 AND 620",
	"SELECT ROW_COUNT(), FOUND_ROWS()",
	// A value the variable held before must not be answered: a row the
	// capture saw inserted, then a TRUNCATE (capture's triggers dropped),
	// then a row of explicit id 0, which the server answers 0.
	"INSERT INTO other (id, v) VALUES (900, 1)",
	"TRUNCATE TABLE other",
	"SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_AUTO_VALUE_ON_ZERO')",
	"INSERT INTO other (id, v) SELECT 0, v FROM orders WHERE id = 1",
	"INSERT INTO other (id, v) SELECT id, v FROM orders WHERE id BETWEEN 2 AND 3",
	"SELECT * FROM other ORDER BY id",
	"SELECT * FROM orders ORDER BY id",
}

// TestInsertSelectLastInsertIDAsDirect runs idStatements through a sandbox
// and directly on a copy of the database, with the proxy's least-privilege
// upstream account and with its ALL PRIVILEGES one.
func TestInsertSelectLastInsertIDAsDirect(t *testing.T) {
	db, least := sandboxProxy(t, "transparent", nil)
	all := startTestProxy(t, db.Addr, db, func(c *proxy.Config) { c.Mode = "transparent" })
	root := openDB(t, db.DSN(""))
	for _, c := range []struct {
		name, db string
		dsn      func(string) string
	}{
		{"least-privilege", "iid_lp", func(d string) string { return least.userDSN(sandboxUser, d) }},
		{"all-privileges", "iid_all", func(d string) string { return all.dsn(d) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			rt27Databases(t, root, c.db, idSetup)
			mustExecDB(t, root, "GRANT SELECT, SHOW VIEW, TRIGGER ON "+c.db+".* TO '"+sandboxUser+"'@'%'")
			sb := conn(t, openDB(t, c.dsn(c.db)))
			ref := conn(t, openDB(t, directDSN(db, c.db+"_ref")))
			for _, q := range idStatements {
				got, want := idAsk(t, sb, q), strings.ReplaceAll(idAsk(t, ref, q), c.db+"_ref", c.db)
				if got != want {
					t.Errorf("%s:\n sandbox: %s\n    copy: %s", q, got, want)
				}
			}
			var n int
			if err := root.QueryRow("SELECT COUNT(*) FROM " + c.db + ".other").Scan(&n); err != nil || n != 1 {
				t.Errorf("production's other has %d rows (%v), want its 1", n, err)
			}
		})
	}
}

// idAsk runs q on c and describes its answer: the labels and rows of a
// query, the affected rows and last insert id of another statement (q
// prepared with the argument 1000 when it holds "?"), or the error.
func idAsk(t *testing.T, c *sql.Conn, q string) string {
	t.Helper()
	ctx := context.Background()
	if strings.HasPrefix(q, "SELECT") || strings.HasPrefix(q, "SHOW") {
		rows, err := c.QueryContext(ctx, q)
		if err != nil {
			return "error " + mysqlErr(err)
		}
		return rowsOutcome(rows)
	}
	var r sql.Result
	var err error
	if strings.Contains(q, "?") {
		var st *sql.Stmt
		if st, err = c.PrepareContext(ctx, q); err == nil {
			r, err = st.ExecContext(ctx, 1000)
			_ = st.Close()
		}
	} else {
		r, err = c.ExecContext(ctx, q)
	}
	if err != nil {
		return "error " + mysqlErr(err)
	}
	n, _ := r.RowsAffected()
	id, _ := r.LastInsertId()
	return fmt.Sprintf("affected %d, id %d", n, id)
}
