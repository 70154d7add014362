package rewrite

import (
	"errors"
	"strings"
	"testing"
)

// mapResolver maps tables case-insensitively, as lower_case_table_names=1.
type mapResolver map[Table]Table

func (m mapResolver) Resolve(t Table, write bool) (Table, bool, error) {
	p, ok := m[Table{DB: strings.ToLower(t.DB), Name: strings.ToLower(t.Name)}]
	return p, ok, nil
}

// testResolver sandboxes app.users, app.orders and other.things.
var testResolver = mapResolver{
	{DB: "app", Name: "users"}:    {DB: "sbx", Name: "s1_users"},
	{DB: "app", Name: "orders"}:   {DB: "sbx", Name: "s1_orders"},
	{DB: "other", Name: "things"}: {DB: "sbx", Name: "s1_things"},
	{DB: "app", Name: "order"}:    {DB: "sbx", Name: "s1_order"},
	{DB: "app", Name: "status"}:   {DB: "sbx", Name: "s1_status"},
}

// corpusCase is one statement: its class, the tables it reads and writes,
// and the exact rewritten text (want "" means unchanged), or a refusal.
type corpusCase struct {
	sql    string
	class  Class
	reads  string // comma-separated db.table
	writes string
	want   string
	refuse string // substring of the refusal message
}

var baseCorpus = []corpusCase{
	{sql: "SELECT 1", class: ClassRead},
	{sql: "SELECT * FROM users", class: ClassRead, reads: "app.users", want: "SELECT * FROM `sbx`.`s1_users`"},
	{sql: "SELECT * FROM products", class: ClassRead, reads: "app.products"},
	{sql: "select u.id, u.name from users u where u.id = 1", class: ClassRead, reads: "app.users",
		want: "select u.id, u.name from `sbx`.`s1_users` u where u.id = 1"},
	{sql: "SELECT users.id FROM users WHERE users.name = 'users'", class: ClassRead, reads: "app.users",
		want: "SELECT `s1_users`.id FROM `sbx`.`s1_users` WHERE `s1_users`.name = 'users'"},
	{sql: "SELECT app.users.id FROM app.users", class: ClassRead, reads: "app.users",
		want: "SELECT `sbx`.`s1_users`.id FROM `sbx`.`s1_users`"},
	{sql: "SELECT `users`.* FROM `app`.`users`", class: ClassRead, reads: "app.users",
		want: "SELECT `s1_users`.* FROM `sbx`.`s1_users`"},
	{sql: "SELECT id FROM users WHERE users = 1", class: ClassRead, reads: "app.users",
		want: "SELECT id FROM `sbx`.`s1_users` WHERE users = 1"},
	{sql: "SELECT status FROM status WHERE status.status = 'x'", class: ClassRead, reads: "app.status",
		want: "SELECT status FROM `sbx`.`s1_status` WHERE `s1_status`.status = 'x'"},
	{sql: "SELECT * FROM `order` ORDER BY id", class: ClassRead, reads: "app.order",
		want: "SELECT * FROM `sbx`.`s1_order` ORDER BY id"},
	{sql: "INSERT INTO users (name) VALUES ('a'), ('b')", class: ClassWrite, writes: "app.users",
		want: "INSERT INTO `sbx`.`s1_users` (name) VALUES ('a'), ('b')"},
	{sql: "INSERT INTO users(name) SELECT name FROM products", class: ClassWrite, reads: "app.products", writes: "app.users",
		want: "INSERT INTO `sbx`.`s1_users`(name) SELECT name FROM products"},
	{sql: "INSERT INTO users (id, name) VALUES (1, 'a') ON DUPLICATE KEY UPDATE name = VALUES(name)", class: ClassWrite, writes: "app.users",
		want: "INSERT INTO `sbx`.`s1_users` (id, name) VALUES (1, 'a') ON DUPLICATE KEY UPDATE name = VALUES(name)"},
	{sql: "REPLACE INTO users SET id = 1, name = 'x'", class: ClassWrite, writes: "app.users",
		want: "REPLACE INTO `sbx`.`s1_users` SET id = 1, name = 'x'"},
	{sql: "UPDATE users SET name = 'C:\\\\temp\\\\new' WHERE id = 1", class: ClassWrite, writes: "app.users",
		want: "UPDATE `sbx`.`s1_users` SET name = 'C:\\\\temp\\\\new' WHERE id = 1"},
	{sql: "UPDATE users u JOIN orders o ON o.user_id = u.id SET u.total = o.total", class: ClassWrite, writes: "app.orders,app.users",
		want: "UPDATE `sbx`.`s1_users` u JOIN `sbx`.`s1_orders` o ON o.user_id = u.id SET u.total = o.total"},
	{sql: "DELETE FROM users WHERE id = 1", class: ClassWrite, writes: "app.users", want: "DELETE FROM `sbx`.`s1_users` WHERE id = 1"},
	{sql: "DELETE u FROM users u JOIN orders o ON o.user_id = u.id WHERE o.id = 1", class: ClassWrite, writes: "app.orders,app.users",
		want: "DELETE u FROM `sbx`.`s1_users` u JOIN `sbx`.`s1_orders` o ON o.user_id = u.id WHERE o.id = 1"},
	{sql: "DELETE users FROM users JOIN products ON products.id = users.id", class: ClassWrite, reads: "", writes: "app.products,app.users",
		want: "DELETE `sbx`.`s1_users` FROM `sbx`.`s1_users` JOIN products ON products.id = `s1_users`.id"},
	{sql: "WITH recent AS (SELECT * FROM orders WHERE id > 10) SELECT * FROM recent JOIN users ON users.id = recent.user_id",
		class: ClassRead, reads: "app.orders,app.users",
		want: "WITH recent AS (SELECT * FROM `sbx`.`s1_orders` WHERE id > 10) SELECT * FROM recent JOIN `sbx`.`s1_users` ON `s1_users`.id = recent.user_id"},
	{sql: "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 5) SELECT * FROM t JOIN users ON users.id = t.n",
		class: ClassRead, reads: "app.users",
		want: "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 5) SELECT * FROM t JOIN `sbx`.`s1_users` ON `s1_users`.id = t.n"},
	{sql: "SELECT id FROM users UNION SELECT id FROM other.things", class: ClassRead, reads: "app.users,other.things",
		want: "SELECT id FROM `sbx`.`s1_users` UNION SELECT id FROM `sbx`.`s1_things`"},
	{sql: "SELECT * FROM (SELECT * FROM users) AS users WHERE users.id = 1", class: ClassRead, reads: "app.users",
		refuse: "both a table and a table alias"},
	{sql: "SELECT /*+ MAX_EXECUTION_TIME(1000) */ id FROM users /* users */ -- users\n", class: ClassRead, reads: "app.users",
		want: "SELECT /*+ MAX_EXECUTION_TIME(1000) */ id FROM `sbx`.`s1_users` /* users */ -- users\n"},
	{sql: "SELECT _utf8mb4'users' AS x, \"users\" FROM users LOCK IN SHARE MODE", class: ClassRead, reads: "app.users",
		want: "SELECT _utf8mb4'users' AS x, \"users\" FROM `sbx`.`s1_users` LOCK IN SHARE MODE"},
	{sql: "SELECT * FROM users FOR UPDATE", class: ClassRead, reads: "app.users", want: "SELECT * FROM `sbx`.`s1_users` FOR UPDATE"},
	{sql: "SELECT 1; UPDATE users SET a = 1; SELECT * FROM orders", class: ClassRead, reads: "app.orders", writes: "app.users",
		want: "SELECT 1; UPDATE `sbx`.`s1_users` SET a = 1; SELECT * FROM `sbx`.`s1_orders`"},
	{sql: "CREATE TABLE users_copy LIKE users", class: ClassDDL, reads: "app.users", writes: "app.users_copy",
		want: "CREATE TABLE users_copy LIKE `sbx`.`s1_users`"},
	{sql: "ALTER TABLE users ADD COLUMN age INT CHECK (age > 0)", class: ClassDDL, writes: "app.users",
		want: "ALTER TABLE `sbx`.`s1_users` ADD COLUMN age INT CHECK (age > 0)"},
	{sql: "TRUNCATE TABLE orders", class: ClassDDL, writes: "app.orders", want: "TRUNCATE TABLE `sbx`.`s1_orders`"},
	{sql: "DROP TABLE IF EXISTS users, products", class: ClassDDL, writes: "app.products,app.users",
		want: "DROP TABLE IF EXISTS `sbx`.`s1_users`, products"},
	{sql: "CREATE INDEX idx_name ON users (name)", class: ClassDDL, writes: "app.users", want: "CREATE INDEX idx_name ON `sbx`.`s1_users` (name)"},
	{sql: "SHOW CREATE TABLE users", class: ClassRead, reads: "app.users", want: "SHOW CREATE TABLE `sbx`.`s1_users`"},
	{sql: "SHOW COLUMNS FROM users", class: ClassRead, reads: "app.users", want: "SHOW COLUMNS FROM `sbx`.`s1_users`"},
	{sql: "DESCRIBE users", class: ClassRead, reads: "app.users", want: "DESCRIBE `sbx`.`s1_users`"},
	{sql: "LOCK TABLES users WRITE, products READ", class: ClassSession, reads: "app.products", writes: "app.users",
		want: "LOCK TABLES `sbx`.`s1_users` WRITE, products READ"},
	{sql: "BEGIN", class: ClassTransaction},
	{sql: "SET @a = 1", class: ClassSession},
	{sql: "CALL app.proc()", class: ClassRoutine, refuse: "CALL runs a stored procedure"},
	{sql: "SELECT * FROM users FOR SYSTEM_TIME ALL", class: ClassUnparseable, refuse: "names the sandboxed table `users`"},
	{sql: "SELECT * FROM products FOR SYSTEM_TIME ALL", class: ClassUnparseable},
	{sql: "CREATE OR REPLACE TABLE products (id INT)", class: ClassUnparseable, refuse: "cannot parse this statement"},
	{sql: "SANDBOX STATUS", class: ClassSandbox},
	{sql: "SELECT /*M! users.id, */ 1 FROM users", class: ClassRead, reads: "app.users", refuse: "MariaDB executable comment"},
	{sql: "SELECT 1 /*M!100100 FROM users */", class: ClassRead, refuse: "MariaDB executable comment"},
	{sql: "/*!40000 ALTER TABLE users DISABLE KEYS */", class: ClassDDL, writes: "app.users",
		want: "/*!40000 ALTER TABLE `sbx`.`s1_users` DISABLE KEYS */"},
	{sql: "SELECT * FROM users WHERE name = 'it''s users' AND note = \"x\\\" users\"", class: ClassRead, reads: "app.users",
		want: "SELECT * FROM `sbx`.`s1_users` WHERE name = 'it''s users' AND note = \"x\\\" users\""},
}

func tables(ts []Table) string {
	var s []string
	for _, t := range ts {
		s = append(s, t.String())
	}
	return strings.Join(s, ",")
}

func runCorpus(t *testing.T, cases []corpusCase) {
	e := NewEngine(0)
	for _, c := range cases {
		t.Run(c.sql, func(t *testing.T) {
			opts := Options{DB: "app"}
			a := e.Analyze(c.sql, opts)
			var reads, writes []Table
			for _, st := range a.Statements {
				reads = append(reads, st.Reads...)
				writes = append(writes, st.Writes...)
			}
			sortTables(reads)
			sortTables(writes)
			if got := a.Statements[0].Class; got != c.class {
				t.Errorf("class %s, want %s", got, c.class)
			}
			if got := tables(reads); got != c.reads {
				t.Errorf("reads %q, want %q", got, c.reads)
			}
			if got := tables(writes); got != c.writes {
				t.Errorf("writes %q, want %q", got, c.writes)
			}
			res, err := e.Rewrite(c.sql, opts, testResolver)
			if c.refuse != "" {
				var r *Refusal
				if !errors.As(err, &r) || !strings.Contains(r.Message, c.refuse) {
					t.Fatalf("want refusal containing %q, got %v (result %+v)", c.refuse, err, res)
				}
				return
			}
			if err != nil {
				t.Fatalf("rewrite: %v", err)
			}
			want := c.want
			if want == "" {
				want = c.sql
			}
			if res.SQL != want {
				t.Fatalf("rewrite:\n got  %s\n want %s", res.SQL, want)
			}
		})
	}
}

func TestCorpus(t *testing.T) { runCorpus(t, baseCorpus) }
