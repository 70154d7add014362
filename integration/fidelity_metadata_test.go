package integration

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	gmysql "github.com/go-mysql-org/go-mysql/mysql"

	"github.com/sqlfork/sqlfork-proxy/integration/testdb"
)

// fidSchema is the production database both sides start from: names that
// sort differently by byte and by information_schema's collation, and a
// production view.
const fidSchema = `
CREATE DATABASE fid;
CREATE TABLE fid.users (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(64) NOT NULL UNIQUE);
INSERT INTO fid.users (name) VALUES ('alice'), ('bob');
CREATE TABLE fid.orders (id INT PRIMARY KEY, user_id INT, KEY (user_id));
INSERT INTO fid.orders VALUES (1, 1);
CREATE TABLE fid.B (a INT);
CREATE TABLE fid.a (a INT);
CREATE TABLE fid._x (a INT);
CREATE TABLE fid.Z (a INT);
CREATE VIEW fid.pv AS SELECT id FROM fid.users;
CREATE DATABASE fid2;
CREATE TABLE fid2.kids (id INT PRIMARY KEY);
INSERT INTO fid2.kids VALUES (1);`

// fidStep is one statement of a fidelity script: run through a sandbox
// and on a direct copy, its outcomes must be equal.
type fidStep struct {
	sql string
	// prepared runs it as a prepared statement.
	prepared bool
	// mask are labels of columns whose values legitimately differ (times,
	// storage statistics of a copy).
	mask []string
}

// fidScript is run in order in one session of database fid: SHOW
// statements the proxy answers, then the same after the sandbox forked,
// created, dropped tables and made a view, names the server writes into
// answers (definitions, plans, labels, syntax errors, warnings), and the
// sandbox's information_schema.
var fidScript = []fidStep{
	{sql: "SHOW TABLES"},
	{sql: "SHOW FULL TABLES"},
	{sql: "SHOW TABLES LIKE '%a%'"},
	{sql: "SHOW FULL TABLES WHERE Table_type = 'BASE TABLE'"},
	{sql: "SHOW TABLE STATUS", mask: fidVolatile},
	{sql: "SHOW TABLE STATUS LIKE 'users'", mask: fidVolatile},
	{sql: "SHOW DATABASES LIKE 'fid%'"},
	{sql: "SHOW SCHEMAS WHERE `Database` = 'fid'"},
	{sql: "SHOW TABLES FROM nonexist"},
	{sql: "SHOW PROCEDURE STATUS WHERE Db = 'fid'"},
	{sql: "SHOW FUNCTION STATUS WHERE Db = 'fid'"},
	{sql: "SHOW FULL TABLES", prepared: true},
	{sql: "SELECT table_name FROM information_schema.tables WHERE table_schema = 'fid' ORDER BY table_name"},
	{sql: "INSERT INTO users (name) VALUES ('carol')"},
	{sql: "CREATE TABLE made (id INT PRIMARY KEY, uid INT, FOREIGN KEY (uid) REFERENCES users (id))"},
	{sql: "DROP TABLE Z"},
	{sql: "CREATE VIEW v1 AS SELECT u.id, u.name FROM users u WHERE EXISTS (SELECT 1 FROM orders o WHERE o.user_id = u.id)"},
	{sql: "SHOW TABLES"},
	{sql: "SHOW FULL TABLES"},
	{sql: "SHOW TABLE STATUS", mask: fidVolatile},
	{sql: "SHOW TABLE STATUS WHERE Name IN ('made', 'users')", mask: fidVolatile},
	{sql: "SHOW TABLES", prepared: true},
	{sql: "SELECT table_name FROM information_schema.tables WHERE table_schema = 'fid' ORDER BY table_name"},
	{sql: "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'fid' ORDER BY TABLE_NAME DESC"},
	{sql: "SHOW CREATE VIEW v1"},
	{sql: "SHOW CREATE VIEW v1", prepared: true},
	{sql: "SELECT TABLE_NAME, VIEW_DEFINITION FROM information_schema.VIEWS WHERE TABLE_SCHEMA = 'fid' ORDER BY TABLE_NAME", prepared: true},
	{sql: "EXPLAIN SELECT * FROM users u JOIN orders o ON o.user_id = u.id", prepared: true, mask: []string{"rows", "type", "possible_keys", "key", "key_len", "Extra"}},
	{sql: "SELECT TABLE_NAME, VIEW_DEFINITION FROM information_schema.VIEWS WHERE TABLE_SCHEMA = 'fid' ORDER BY TABLE_NAME"},
	{sql: "SHOW CREATE TABLE made"},
	{sql: "SELECT TABLE_NAME, REFERENCED_TABLE_SCHEMA, REFERENCED_TABLE_NAME FROM information_schema.KEY_COLUMN_USAGE " +
		"WHERE TABLE_SCHEMA = 'fid' AND REFERENCED_TABLE_NAME IS NOT NULL"},
	{sql: "SELECT EXISTS(SELECT 1 FROM users WHERE id = 1), (SELECT COUNT(*) FROM fid.orders) AS n"},
	{sql: "SELECT * FROM v1 ORDER BY id"},
	{sql: "EXPLAIN SELECT * FROM users u JOIN orders o ON o.user_id = u.id", mask: []string{"rows", "type", "possible_keys", "key", "key_len", "Extra"}},
	{sql: "TABLE users"},
	{sql: "SELECT * FROM users WHERE"},
	{sql: "SELECT * FROM users u JOIN orders o ON o.user_id = u.id WHERE u.id = 1 GROUP BY u.name HAVING HAVING 1"},
	{sql: "SELECT * FROM users WHERE id = 1 AND AND name = '" + strings.Repeat("y", 100) + "'"},
	{sql: "DROP TABLE IF EXISTS never_was"},
	{sql: "SHOW WARNINGS"},
	{sql: "SELECT CAST('x' AS SIGNED)"},
	{sql: "SHOW WARNINGS LIMIT 1"},
	{sql: "SHOW COUNT(*) WARNINGS"},
	{sql: "SELECT * FROM Z"},
	{sql: "INSERT INTO users (id, name) VALUES (1, 'again')"},
	{sql: "SHOW DATABASES LIKE 'fid'"},
	{sql: "SELECT EXISTS(SELECT 1 FROM users WHERE id = 1 AND name <> '" + strings.Repeat("x", 240) + "')"},
	{sql: "SELECT t.TABLE_SCHEMA, t.TABLE_NAME AS n, t.TABLE_TYPE FROM information_schema.TABLES t WHERE t.TABLE_SCHEMA = 'fid' ORDER BY n"},
	{sql: "SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'fid' ORDER BY 1, 2", prepared: true},
	{sql: "SELECT CONSTRAINT_SCHEMA, TABLE_NAME, REFERENCED_TABLE_NAME, UNIQUE_CONSTRAINT_SCHEMA FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = 'fid'"},
	{sql: "SHOW COLUMNS FROM users"},
	{sql: "DESCRIBE made"},
	{sql: "SHOW INDEX FROM users", mask: []string{"Cardinality"}},
	{sql: "SHOW CREATE TABLE users"},
	{sql: "INSERT INTO made VALUES (1, 99)"},
	{sql: "DELETE FROM users WHERE id = 1"},
	{sql: "INSERT INTO made VALUES (1, 2)"},
	{sql: "DELETE FROM users WHERE id = 2"},
	{sql: "SELECT * FROM made"},
	{sql: "CREATE SEQUENCE s"},
	{sql: "CREATE TABLE ds (id INT DEFAULT NEXTVAL(s), c INT)"},
	{sql: "SELECT COLUMN_NAME, COLUMN_DEFAULT FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'fid' AND TABLE_NAME = 'ds' ORDER BY ORDINAL_POSITION"},
	{sql: "DESCRIBE ds"},
	{sql: "SHOW CREATE TABLE ds"},
	{sql: "SHOW FULL TABLES"},
	{sql: "SELECT table_name, table_rows IS NOT NULL FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY 1"},
	{sql: "SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'fid'"},
	{sql: "SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'fid' AND TABLE_NAME = 'made' ORDER BY 1, 2"},
	{sql: "SELECT CONSTRAINT_NAME, CONSTRAINT_TYPE FROM information_schema.TABLE_CONSTRAINTS WHERE TABLE_SCHEMA = 'fid' ORDER BY TABLE_NAME, 1"},
	{sql: "SELECT SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'fid'"},
	{sql: "SHOW INDEX FROM made", mask: []string{"Cardinality"}},
	{sql: "SHOW COLUMNS FROM made LIKE 'u%'"},
	{sql: "SHOW TABLES FROM fid LIKE 'm%'"},
	{sql: "SHOW FULL TABLES IN fid"},
	{sql: "SHOW TABLE STATUS FROM fid LIKE 'B'", mask: fidVolatile},
	{sql: "SELECT DATABASE(), SCHEMA()"},
	{sql: "CREATE TABLE IF NOT EXISTS made (a INT)"},
	{sql: "DROP TABLE IF EXISTS Z"},
	{sql: "RENAME TABLE made TO made2"},
	{sql: "SHOW CREATE TABLE made2"},
	{sql: "SHOW TABLES"},
	{sql: "ALTER TABLE users ADD CONSTRAINT chk CHECK (id < 1000)"},
	{sql: "INSERT INTO users (id, name) VALUES (2000, 'z')"},
	{sql: "SELECT CONSTRAINT_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = 'fid'"},
	{sql: "SHOW CREATE TABLE users"},
	{sql: "UPDATE users SET name = 'x' WHERE id = 99"},
	{sql: "SELECT UPPER(table_name) FROM information_schema.tables WHERE table_schema = 'fid' ORDER BY 1"},
	// The labels of an EXECUTE are the prepared text's (mtr's prepare).
	{sql: "PREPARE lbl FROM 'SELECT table_name FROM information_schema.tables WHERE table_schema = ''fid'' AND table_name = ''users'' " +
		"UNION ALL SELECT table_name FROM information_schema.tables WHERE table_schema = ''fid'' AND table_name = ''kids'''"},
	{sql: "EXECUTE lbl"},
	{sql: "DEALLOCATE PREPARE lbl"},
	{sql: "CREATE TABLE fid2.child (id INT PRIMARY KEY, kid INT, FOREIGN KEY (kid) REFERENCES kids (id))"},
	{sql: "SHOW CREATE TABLE fid2.child"},
	{sql: "INSERT INTO fid2.child VALUES (1, 99)"},
	{sql: "INSERT INTO fid2.child VALUES (1, 1)"},
	{sql: "SELECT TABLE_SCHEMA, TABLE_NAME, REFERENCED_TABLE_SCHEMA, REFERENCED_TABLE_NAME FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = 'fid2' AND REFERENCED_TABLE_NAME IS NOT NULL"},
	{sql: "SELECT TABLE_NAME AS n, TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'fid' ORDER BY n"},
	{sql: "SELECT CONCAT(table_schema, '.', table_name) AS q, LENGTH(table_name) FROM information_schema.tables WHERE table_schema = 'fid' ORDER BY 1"},
	{sql: "SELECT COUNT(*), MAX(table_name), MIN(create_time) IS NOT NULL FROM information_schema.tables WHERE table_schema = 'fid'"},
	{sql: "SELECT c.table_name, c.column_name, k.referenced_table_name FROM information_schema.columns c LEFT JOIN information_schema.key_column_usage k " +
		"ON k.table_schema = c.table_schema AND k.table_name = c.table_name AND k.column_name = c.column_name " +
		"WHERE c.table_schema = 'fid' ORDER BY 1, 2"},
	// Triggers the sandbox makes, listed as the server lists them.
	{sql: "CREATE TRIGGER users_bi BEFORE INSERT ON users FOR EACH ROW SET NEW.name = LOWER(NEW.name)"},
	{sql: "CREATE TRIGGER a_ai AFTER INSERT ON a FOR EACH ROW INSERT INTO B VALUES (NEW.a)"},
	{sql: "CREATE TRIGGER users_bd BEFORE DELETE ON users FOR EACH ROW SET @d = OLD.id"},
	{sql: "CREATE TRIGGER users_bi2 BEFORE INSERT ON users FOR EACH ROW PRECEDES users_bi SET @i = NEW.id"},
	{sql: "CREATE TRIGGER users_au AFTER UPDATE ON users FOR EACH ROW SET @u = NEW.id", prepared: true},
	{sql: "DROP TRIGGER users_au", prepared: true},
	{sql: "DROP TRIGGER users_au", prepared: true},
	{sql: "SHOW TRIGGERS", mask: fidTriggerVolatile},
	{sql: "SHOW TRIGGERS", prepared: true, mask: fidTriggerVolatile},
	{sql: "SHOW TRIGGERS LIKE 'u%'", mask: fidTriggerVolatile},
	{sql: "SHOW TRIGGERS FROM fid WHERE `Event` = 'INSERT'", mask: fidTriggerVolatile},
	{sql: "SHOW TRIGGERS FROM nonexist"},
	{sql: "SHOW CREATE TRIGGER users_bi", mask: []string{"SQL Original Statement", "Created"}},
	{sql: "SHOW CREATE TRIGGER fid.a_ai", mask: []string{"SQL Original Statement", "Created"}},
	{sql: "SELECT TRIGGER_SCHEMA, TRIGGER_NAME, EVENT_OBJECT_SCHEMA, EVENT_OBJECT_TABLE, ACTION_ORDER, ACTION_STATEMENT FROM information_schema.TRIGGERS " +
		"WHERE TRIGGER_SCHEMA = 'fid' AND TRIGGER_NAME LIKE 'users%' ORDER BY 1, 2"},
	{sql: "INSERT INTO a VALUES (5)"},
	{sql: "SELECT * FROM B"},
	{sql: "DROP TRIGGER users_bd"},
	{sql: "SHOW TRIGGERS LIKE 'users'", mask: fidTriggerVolatile},
}

// fidTriggerVolatile are SHOW TRIGGERS columns a sandbox shows otherwise:
// when the trigger was made, its definer (the proxy's upstream account),
// and its statement, whose tables the sandbox's copy names qualified.
var fidTriggerVolatile = []string{"Created", "Definer", "Statement"}

// fidNoDB is run in a session with no current database.
var fidNoDB = []fidStep{
	{sql: "CREATE TABLE t1 (a INT)"},
	{sql: "SELECT * FROM t1"},
	{sql: "INSERT INTO t1 VALUES (1)"},
	{sql: "SHOW TABLES"},
	{sql: "SHOW TABLE STATUS"},
	{sql: "SELECT 1"},
	{sql: "SELECT COUNT(*) FROM fid.orders"},
	{sql: "CREATE TABLE fid.nodb (a INT)"},
	{sql: "SELECT * FROM fid.nodb"},
}

// fidVolatile are SHOW TABLE STATUS columns a copy made at another time
// (and a fork's storage) legitimately show otherwise.
var fidVolatile = []string{"Rows", "Avg_row_length", "Data_length", "Index_length", "Data_free", "Create_time", "Update_time",
	"Check_time", "Max_data_length", "Max_index_length"}

// TestFidelityMetadata runs fidScript and fidNoDB through a sandbox and on a
// direct connection to a copy of the database (another server), and
// requires equal outcomes statement by statement: rows, errors (code,
// SQLSTATE, message), affected rows, warnings, and every column
// definition's names, type, length, flags, character set and decimals. No
// answer through the proxy may hold one of its physical names, and
// production must not change. It runs with the proxy's upstream account
// holding only SELECT on production and with one holding ALL PRIVILEGES.
func TestFidelityMetadata(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sandDB, leastPriv, allPriv, directDB := directAndSandboxes(ctx, t)
	for _, srv := range []*testdb.Server{sandDB, directDB} {
		root := openDB(t, srv.DSN("")+"?multiStatements=true")
		if _, err := root.Exec("DROP DATABASE IF EXISTS fid; DROP DATABASE IF EXISTS fid2;" + fidSchema); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_, _ = openDB(t, sandDB.DSN("")+"?multiStatements=true").Exec("DROP DATABASE IF EXISTS fid; DROP DATABASE IF EXISTS fid2")
	})
	root := openDB(t, sandDB.DSN("")+"?multiStatements=true")
	if _, err := root.Exec("GRANT SELECT, SHOW VIEW ON fid.* TO '" + sandboxUser + "'@'%'; GRANT SELECT, SHOW VIEW ON fid2.* TO '" + sandboxUser + "'@'%'"); err != nil {
		t.Fatal(err)
	}
	// The direct copy's account of the same name may write its copy.
	directRoot := openDB(t, directDB.DSN("")+"?multiStatements=true")
	if _, err := directRoot.Exec(fmt.Sprintf("CREATE USER '%[1]s'@'%%' IDENTIFIED BY '%[2]s'; GRANT ALL PRIVILEGES ON fid.* TO '%[1]s'@'%%'; GRANT ALL PRIVILEGES ON fid2.* TO '%[1]s'@'%%'; "+
		"GRANT SELECT ON mysql.func TO '%[1]s'@'%%'", sandboxUser, sandboxPassword)); err != nil {
		t.Fatal(err)
	}
	for _, acc := range []struct {
		name, user, password, directPassword string
		h                                    *proxyHandle
	}{
		{"least-privilege", sandboxUser, sandboxPassword, sandboxPassword, leastPriv},
		{"all-privileges", sandDB.User, sandDB.Password, directDB.Password, allPriv},
	} {
		t.Run(acc.name, func(t *testing.T) {
			before := fidProduction(t, sandDB)
			direct := func(db string) *client.Conn { return fidConn(t, directDB.Addr, acc.user, acc.directPassword, db) }
			through := func(db string) *client.Conn { return fidConn(t, acc.h.addr, acc.user, acc.password, db) }
			fidCompare(t, "fid", fidScript, direct("fid"), through("fid"))
			fidCompare(t, "no database", fidNoDB, direct(""), through(""))
			for db, input := range map[string]string{"fid": fidMultiInput, "": fidMultiNoDB} {
				fidMulti(t, input, fmt.Sprintf("%s:%s@tcp(%s)/%s?multiStatements=true", acc.user, acc.directPassword, directDB.Addr, db),
					fmt.Sprintf("%s:%s@tcp(%s)/%s?multiStatements=true", acc.user, acc.password, acc.h.addr, db))
			}
			sc := through("fid")
			if out := fidOutcome(sc, fidStep{sql: "SHOW DATABASES"}); strings.Contains(out, "_sqlfork") {
				t.Errorf("SHOW DATABASES through the proxy lists the proxy's databases:\n%s", out)
			}
			if after := fidProduction(t, sandDB); after != before {
				t.Errorf("production changed:\n before: %s\n after:  %s", before, after)
			}
			// The direct copy starts afresh for the next account.
			if _, err := directRoot.Exec("DROP DATABASE fid; DROP DATABASE fid2;" + fidSchema); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// fidCompare runs steps on both connections and reports each difference,
// and every physical name of the proxy's in the sandbox's outcomes.
func fidCompare(t *testing.T, what string, steps []fidStep, direct, sandbox *client.Conn) {
	t.Helper()
	for i, st := range steps {
		want, got := fidOutcome(direct, st), fidOutcome(sandbox, st)
		if want != got {
			t.Errorf("%s, step %d %q:\n direct:\n%s\n sandbox:\n%s", what, i, st.sql, want, got)
		}
		if strings.Contains(got, "_sqlfork") {
			t.Errorf("%s, step %d %q: the sandbox's answer names the proxy's databases:\n%s", what, i, st.sql, got)
		}
	}
}

// fidConn is a protocol-level connection (go-mysql's client, which gives
// every field of a column definition).
func fidConn(t *testing.T, addr, user, password, db string) *client.Conn {
	t.Helper()
	c, err := client.Connect(addr, user, password, db)
	if err != nil {
		t.Fatalf("connect %s as %s: %v", addr, user, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// fidOutcome is what one statement did, as comparable text: the error, or
// the affected rows and warnings of an OK, or the column definitions and
// rows of a result set (masked columns' values left out), followed by the
// warnings' messages.
func fidOutcome(c *client.Conn, st fidStep) string {
	var r *gmysql.Result
	var err error
	if st.prepared {
		var ps *client.Stmt
		if ps, err = c.Prepare(st.sql); err == nil {
			r, err = ps.Execute()
			_ = ps.Close()
		}
	} else {
		r, err = c.Execute(st.sql)
	}
	var me *gmysql.MyError
	if errors.As(err, &me) {
		return fmt.Sprintf("error %d (%s) %s", me.Code, me.State, me.Message)
	}
	if err != nil {
		return "failed: " + err.Error()
	}
	var b strings.Builder
	if r.Resultset == nil || len(r.Fields) == 0 {
		fmt.Fprintf(&b, "ok affected=%d", r.AffectedRows)
	} else {
		masked := map[int]bool{}
		for i, f := range r.Fields {
			fmt.Fprintf(&b, "col %q schema=%q table=%q org_table=%q org_name=%q charset=%d length=%d type=%d flags=%#x decimals=%d\n",
				f.Name, f.Schema, f.Table, f.OrgTable, f.OrgName, f.Charset, f.ColumnLength, f.Type, f.Flag, f.Decimal)
			for _, m := range st.mask {
				if string(f.Name) == m {
					masked[i] = true
				}
			}
		}
		for _, row := range r.Values {
			b.WriteString("|")
			for i, v := range row {
				switch {
				case masked[i]:
					b.WriteString(" *")
				case v.Type == gmysql.FieldValueTypeNull:
					b.WriteString(" NULL")
				default:
					fmt.Fprintf(&b, " %s", v.String())
				}
			}
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(&b, " warnings=%d", r.Warnings)
	if r.Warnings > 0 && !strings.HasPrefix(strings.ToUpper(st.sql), "SHOW") {
		if w, err := c.Execute("SHOW WARNINGS"); err == nil {
			for _, row := range w.Values {
				fmt.Fprintf(&b, "\n warning %s %s %s", row[0].String(), row[1].String(), row[2].String())
			}
		}
	}
	return b.String()
}

// fidProduction is production's state on the sandbox's server: its tables,
// their checksums and its views' definitions.
func fidProduction(t *testing.T, db *testdb.Server) string {
	t.Helper()
	var b strings.Builder
	for _, q := range []string{
		"SELECT GROUP_CONCAT(TABLE_NAME, ':', TABLE_TYPE ORDER BY TABLE_NAME) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'fid'",
		"SELECT GROUP_CONCAT(VIEW_DEFINITION) FROM information_schema.VIEWS WHERE TABLE_SCHEMA = 'fid'",
	} {
		b.WriteString(queryString(t, openDB(t, db.DSN("")), q) + ";")
	}
	for _, tbl := range []string{"users", "orders", "B", "a", "_x", "Z"} {
		b.WriteString(tbl + "=" + checksum(t, db, "fid.`"+tbl+"`") + ";")
	}
	return b.String()
}

// fidMultiInput is one input of several statements, among them SHOW
// statements the proxy answers itself.
const fidMultiInput = "CREATE TABLE multi (a INT); SHOW TABLES LIKE 'mul%'; SHOW FULL TABLES WHERE Tables_in_fid = 'multi'; " +
	"SHOW TABLE STATUS LIKE 'multi'; SHOW DATABASES LIKE 'fid'; DROP TABLE IF EXISTS nope; SHOW WARNINGS; SELECT COUNT(*) FROM multi"

// fidMultiNoDB is an input of several statements with no current
// database: the statement naming a table without its database fails after
// the one before it ran.
const fidMultiNoDB = "SELECT COUNT(*) FROM fid.orders; CREATE TABLE t1 (a INT); SELECT 2"

// fidMulti runs input directly and through the proxy (DSNs with
// multiStatements=true) and requires the same result sets.
func fidMulti(t *testing.T, input, directDSN, proxyDSN string) {
	t.Helper()
	want, got := multiOutcome(t, input, directDSN), multiOutcome(t, input, proxyDSN)
	if want != got {
		t.Errorf("%s:\n direct:\n%s\n sandbox:\n%s", input, want, got)
	}
}

// multiOutcome is every result set of input: labels and rows (the times
// and sizes of SHOW TABLE STATUS left out), and the error that ended it.
func multiOutcome(t *testing.T, input, dsn string) string {
	t.Helper()
	c := conn(t, openDB(t, dsn))
	rows, err := c.QueryContext(context.Background(), input)
	if err != nil {
		return "error " + mysqlErr(err)
	}
	defer rows.Close()
	var b strings.Builder
	for {
		cols, _ := rows.Columns()
		b.WriteString(strings.Join(cols, ",") + "\n")
		for rows.Next() {
			vals, err := scanStrings(rows)
			if err != nil {
				return "scan: " + err.Error()
			}
			for i, v := range vals {
				if !slices.Contains(fidVolatile, cols[i]) {
					b.WriteString(" " + v.String)
				}
			}
			b.WriteString("\n")
		}
		if !rows.NextResultSet() {
			break
		}
	}
	if err := rows.Err(); err != nil {
		b.WriteString("error " + mysqlErr(err))
	}
	return b.String()
}
