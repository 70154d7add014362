// Package corpus holds the rewrite engine's statement corpus: each case
// gives a statement, its class, the tables it reads and writes, and the exact
// text the engine must produce under Resolver (or the refusal it must give).
// The rewrite package's tests check the engine against it; the integration
// tests send every output to a real MariaDB. It imports nothing of the
// engine, so both can use it.
package corpus

import "slices"

// Case is one corpus statement, run with current database DB ("app" when
// empty).
type Case struct {
	SQL    string
	DB     string
	Class  string // read, write, ddl, transaction, session, routine, sandbox, other, unparseable
	Reads  string // comma-separated db.table, sorted
	Writes string
	Want   string // exact output; "" means unchanged
	Refuse string // substring of the refusal message; "" means no refusal
	// NoServer marks statements MariaDB itself would reject (TiDB- or
	// MySQL-only syntax kept to exercise the engine).
	NoServer string
}

// ServerVersion is the MariaDB version (MYSQL_VERSION_ID) the cases assume
// when they use version comments: /*!NNNNNN */ runs for versions up to it.
const ServerVersion = 101100

// Resolver is the fork map every case runs under, logical db.table to
// physical db.table (lower case; lookups are case-insensitive). Tables of
// the test schema not listed here (app.products, app.audit) stay as they
// are.
var Resolver = map[[2]string][2]string{
	{"app", "users"}:      {"sbx", "s1_users"},
	{"app", "orders"}:     {"sbx", "s1_orders"},
	{"app", "order"}:      {"sbx", "s1_order"},
	{"app", "status"}:     {"sbx", "s1_status"},
	{"app", "posts"}:      {"sbx", "s1_posts"},
	{"app", "comments"}:   {"sbx", "s1_comments"},
	{"app", "accounts"}:   {"sbx", "s1_accounts"},
	{"app", "line_items"}: {"sbx", "s1_line_items"},
	{"app", "tags"}:       {"sbx", "s1_tags"},
	{"app", "posts_tags"}: {"sbx", "s1_posts_tags"},
	{"other", "things"}:   {"sbx", "s1_things"},
	{"shop", "customers"}: {"sbx", "s1_customers"},
}

// Cases returns every case of the corpus.
func Cases() []Case {
	return slices.Concat(base, prepared, admin, useSwitch, regressions,
		gormCases, hibernateCases, activeRecordCases, sqlalchemyCases, prismaCases,
		formCases, fidelityCases, refusalCases, classCases, mariadb)
}

var base = []Case{
	{SQL: "SELECT 1", Class: "read"},
	{SQL: "SELECT * FROM users", Class: "read", Reads: "app.users", Want: "SELECT * FROM `sbx`.`s1_users`"},
	{SQL: "SELECT * FROM products", Class: "read", Reads: "app.products"},
	{SQL: "select u.id, u.name from users u where u.id = 1", Class: "read", Reads: "app.users",
		Want: "select u.id, u.name from `sbx`.`s1_users` u where u.id = 1"},
	{SQL: "SELECT users.id FROM users WHERE users.name = 'users'", Class: "read", Reads: "app.users",
		Want: "SELECT `s1_users`.id FROM `sbx`.`s1_users` WHERE `s1_users`.name = 'users'"},
	{SQL: "SELECT app.users.id FROM app.users", Class: "read", Reads: "app.users",
		Want: "SELECT `sbx`.`s1_users`.id FROM `sbx`.`s1_users`"},
	{SQL: "SELECT `users`.* FROM `app`.`users`", Class: "read", Reads: "app.users",
		Want: "SELECT `s1_users`.* FROM `sbx`.`s1_users`"},
	{SQL: "SELECT id FROM users WHERE users = 1", Class: "read", Reads: "app.users",
		Want: "SELECT id FROM `sbx`.`s1_users` WHERE users = 1"},
	{SQL: "SELECT status FROM status WHERE status.status = 'x'", Class: "read", Reads: "app.status",
		Want: "SELECT status FROM `sbx`.`s1_status` WHERE `s1_status`.status = 'x'"},
	{SQL: "SELECT * FROM `order` ORDER BY id", Class: "read", Reads: "app.order",
		Want: "SELECT * FROM `sbx`.`s1_order` ORDER BY id"},
	{SQL: "INSERT INTO users (name) VALUES ('a'), ('b')", Class: "write", Writes: "app.users",
		Want: "INSERT INTO `sbx`.`s1_users` (name) VALUES ('a'), ('b')"},
	{SQL: "INSERT INTO users(name) SELECT name FROM products", Class: "write", Reads: "app.products", Writes: "app.users",
		Want: "INSERT INTO `sbx`.`s1_users`(name) SELECT name FROM products"},
	{SQL: "INSERT INTO users (id, name) VALUES (1, 'a') ON DUPLICATE KEY UPDATE name = VALUES(name)", Class: "write", Writes: "app.users",
		Want: "INSERT INTO `sbx`.`s1_users` (id, name) VALUES (1, 'a') ON DUPLICATE KEY UPDATE name = VALUES(name)"},
	{SQL: "REPLACE INTO users SET id = 1, name = 'x'", Class: "write", Writes: "app.users",
		Want: "REPLACE INTO `sbx`.`s1_users` SET id = 1, name = 'x'"},
	{SQL: "UPDATE users SET name = 'C:\\\\temp\\\\new' WHERE id = 1", Class: "write", Writes: "app.users",
		Want: "UPDATE `sbx`.`s1_users` SET name = 'C:\\\\temp\\\\new' WHERE id = 1"},
	{SQL: "UPDATE users u JOIN orders o ON o.user_id = u.id SET u.total = o.total", Class: "write", Writes: "app.orders,app.users",
		Want: "UPDATE `sbx`.`s1_users` u JOIN `sbx`.`s1_orders` o ON o.user_id = u.id SET u.total = o.total"},
	{SQL: "DELETE FROM users WHERE id = 1", Class: "write", Writes: "app.users", Want: "DELETE FROM `sbx`.`s1_users` WHERE id = 1"},
	{SQL: "DELETE u FROM users u JOIN orders o ON o.user_id = u.id WHERE o.id = 1", Class: "write", Writes: "app.orders,app.users",
		Want: "DELETE u FROM `sbx`.`s1_users` u JOIN `sbx`.`s1_orders` o ON o.user_id = u.id WHERE o.id = 1"},
	{SQL: "DELETE users FROM users JOIN products ON products.id = users.id", Class: "write", Reads: "", Writes: "app.products,app.users",
		Want: "DELETE `sbx`.`s1_users` FROM `sbx`.`s1_users` JOIN products ON products.id = `s1_users`.id"},
	{SQL: "WITH recent AS (SELECT * FROM orders WHERE id > 10) SELECT * FROM recent JOIN users ON users.id = recent.user_id",
		Class: "read", Reads: "app.orders,app.users",
		Want: "WITH recent AS (SELECT * FROM `sbx`.`s1_orders` WHERE id > 10) SELECT * FROM recent JOIN `sbx`.`s1_users` ON `s1_users`.id = recent.user_id"},
	{SQL: "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 5) SELECT * FROM t JOIN users ON users.id = t.n",
		Class: "read", Reads: "app.users",
		Want: "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 5) SELECT * FROM t JOIN `sbx`.`s1_users` ON `s1_users`.id = t.n"},
	{SQL: "SELECT id FROM users UNION SELECT id FROM other.things", Class: "read", Reads: "app.users,other.things",
		Want: "SELECT id FROM `sbx`.`s1_users` UNION SELECT id FROM `sbx`.`s1_things`"},
	{SQL: "SELECT * FROM (SELECT * FROM users) AS users WHERE users.id = 1", Class: "read", Reads: "app.users",
		Refuse: "both a table and a table alias"},
	{SQL: "SELECT /*+ MAX_EXECUTION_TIME(1000) */ id FROM users /* users */ -- users\n", Class: "read", Reads: "app.users",
		Want: "SELECT /*+ MAX_EXECUTION_TIME(1000) */ id FROM `sbx`.`s1_users` /* users */ -- users\n"},
	{SQL: "SELECT _utf8mb4'users' AS x, \"users\" FROM users LOCK IN SHARE MODE", Class: "read", Reads: "app.users",
		Want: "SELECT _utf8mb4'users' AS x, \"users\" FROM `sbx`.`s1_users` LOCK IN SHARE MODE"},
	{SQL: "SELECT * FROM users FOR UPDATE", Class: "read", Reads: "app.users", Want: "SELECT * FROM `sbx`.`s1_users` FOR UPDATE"},
	{SQL: "SELECT 1; UPDATE users SET a = 1; SELECT * FROM orders", Class: "read", Reads: "app.orders", Writes: "app.users",
		Want: "SELECT 1; UPDATE `sbx`.`s1_users` SET a = 1; SELECT * FROM `sbx`.`s1_orders`"},
	{SQL: "CREATE TABLE users_copy LIKE users", Class: "ddl", Reads: "app.users", Writes: "app.users_copy",
		Want: "CREATE TABLE users_copy LIKE `sbx`.`s1_users`"},
	{SQL: "ALTER TABLE users ADD COLUMN age INT CHECK (age > 0)", Class: "ddl", Writes: "app.users",
		Want: "ALTER TABLE `sbx`.`s1_users` ADD COLUMN age INT CHECK (age > 0)"},
	{SQL: "TRUNCATE TABLE orders", Class: "ddl", Writes: "app.orders", Want: "TRUNCATE TABLE `sbx`.`s1_orders`"},
	{SQL: "DROP TABLE IF EXISTS users, products", Class: "ddl", Writes: "app.products,app.users",
		Want: "DROP TABLE IF EXISTS `sbx`.`s1_users`, products"},
	{SQL: "CREATE INDEX idx_name ON users (name)", Class: "ddl", Writes: "app.users", Want: "CREATE INDEX idx_name ON `sbx`.`s1_users` (name)"},
	{SQL: "SHOW CREATE TABLE users", Class: "read", Reads: "app.users", Want: "SHOW CREATE TABLE `sbx`.`s1_users`"},
	{SQL: "SHOW COLUMNS FROM users", Class: "read", Reads: "app.users", Want: "SHOW COLUMNS FROM `sbx`.`s1_users`"},
	{SQL: "DESCRIBE users", Class: "read", Reads: "app.users", Want: "DESCRIBE `sbx`.`s1_users`"},
	{SQL: "LOCK TABLES users WRITE, products READ", Class: "session", Reads: "app.products", Writes: "app.users",
		Want: "LOCK TABLES `sbx`.`s1_users` WRITE, products READ"},
	{SQL: "BEGIN", Class: "transaction"},
	{SQL: "SET @a = 1", Class: "session"},
	{SQL: "CALL app.proc()", Class: "routine", Refuse: "CALL runs a stored procedure"},
	{SQL: "SELECT * FROM users FOR SYSTEM_TIME ALL", Class: "unparseable", Refuse: "names the sandboxed table `app`.`users`"},
	{SQL: "SELECT * FROM products FOR SYSTEM_TIME ALL", Class: "unparseable"},
	{SQL: "SANDBOX STATUS", Class: "sandbox"},
	// MariaDB runs /*M! … */ (with or without a version up to its own).
	{SQL: "SELECT /*M! users.id, */ 1 FROM users", Class: "read", Reads: "app.users",
		Want: "SELECT /*M! `s1_users`.id, */ 1 FROM `sbx`.`s1_users`"},
	{SQL: "SELECT 1 /*M!100100 FROM users */", Class: "read", Reads: "app.users",
		Want: "SELECT 1 /*M!100100 FROM `sbx`.`s1_users` */"},
	// Version comments as the server reads them: newer versions and MySQL
	// 5.7+ versions (50700-99999) are skipped, the nested comment too.
	{SQL: "SELECT 1 /*!999999 ' */ , name FROM users -- ' */", Class: "read", Reads: "app.users",
		Want: "SELECT 1 /*!999999 ' */ , name FROM `sbx`.`s1_users` -- ' */"},
	{SQL: "SELECT 1 /*!50700 FROM users */", Class: "read"},
	{SQL: "SELECT 1 /*M!50700 FROM users */", Class: "read", Reads: "app.users",
		Want: "SELECT 1 /*M!50700 FROM `sbx`.`s1_users` */"},
	{SQL: "SELECT 1 /*!1234567 FROM users */", Class: "read"},
	{SQL: "SELECT 1 /*!100000 FROM users */", Class: "read", Reads: "app.users",
		Want: "SELECT 1 /*!100000 FROM `sbx`.`s1_users` */"},
	{SQL: "SELECT 1 /*!109999 FROM users */", Class: "read"},
	{SQL: "SELECT 1 /*!99999 /* FROM users */ FROM orders */", Class: "read"},
	{SQL: "SELECT 1 /*!40101 /* x */ , id FROM users */", Class: "read", Reads: "app.users",
		Want: "SELECT 1 /*!40101 /* x */ , id FROM `sbx`.`s1_users` */"},
	{SQL: "/*!40000 ALTER TABLE users DISABLE KEYS */", Class: "ddl", Writes: "app.users",
		Want: "/*!40000 ALTER TABLE `sbx`.`s1_users` DISABLE KEYS */"},
	{SQL: "SELECT * FROM users WHERE name = 'it''s users' AND note = \"x\\\" users\"", Class: "read", Reads: "app.users",
		Want: "SELECT * FROM `sbx`.`s1_users` WHERE name = 'it''s users' AND note = \"x\\\" users\""},
}

// prepared covers SQL PREPARE, whose string literal is rewritten inside.
var prepared = []Case{
	{SQL: "PREPARE s FROM 'SELECT * FROM users WHERE id = ?'", Class: "session", Reads: "app.users",
		Want: "PREPARE s FROM 'SELECT * FROM `sbx`.`s1_users` WHERE id = ?'"},
	{SQL: "PREPARE s FROM 'UPDATE users SET name = ''it''''s'' WHERE id = ?'", Class: "session", Writes: "app.users",
		Want: "PREPARE s FROM 'UPDATE `sbx`.`s1_users` SET name = ''it''''s'' WHERE id = ?'"},
	{SQL: "PREPARE s FROM \"SELECT * FROM products WHERE name = 'x'\"", Class: "session", Reads: "app.products"},
	{SQL: "PREPARE s FROM @q", Class: "session", Refuse: "PREPARE ... FROM @variable"},
	{SQL: "EXECUTE s USING @a", Class: "session", Refuse: "EXECUTE runs a statement prepared"},
}

// admin covers DDL and administrative forms where table names hide in
// unusual places.
var admin = []Case{
	{SQL: "ALTER TABLE users RENAME TO users2", Class: "ddl", Writes: "app.users,app.users2",
		Want: "ALTER TABLE `sbx`.`s1_users` RENAME TO users2"},
	{SQL: "RENAME TABLE users TO users2, orders TO orders2", Class: "ddl", Writes: "app.orders,app.orders2,app.users,app.users2",
		Want: "RENAME TABLE `sbx`.`s1_users` TO users2, `sbx`.`s1_orders` TO orders2"},
	{SQL: "ALTER TABLE users ADD CONSTRAINT fk FOREIGN KEY (a) REFERENCES orders(id)", Class: "ddl", Writes: "app.orders,app.users",
		Want: "ALTER TABLE `sbx`.`s1_users` ADD CONSTRAINT fk FOREIGN KEY (a) REFERENCES `sbx`.`s1_orders`(id)"},
	{SQL: "CREATE TABLE x (id INT, FOREIGN KEY (id) REFERENCES users(id))", Class: "ddl", Reads: "app.users", Writes: "app.x",
		Want: "CREATE TABLE x (id INT, FOREIGN KEY (id) REFERENCES `sbx`.`s1_users`(id))"},
	{SQL: "CREATE TABLE x AS SELECT * FROM users", Class: "ddl", Reads: "app.users", Writes: "app.x",
		Want: "CREATE TABLE x AS SELECT * FROM `sbx`.`s1_users`"},
	{SQL: "CREATE VIEW v AS SELECT * FROM users", Class: "ddl", Reads: "app.users", Writes: "app.v",
		Want: "CREATE VIEW v AS SELECT * FROM `sbx`.`s1_users`"},
	{SQL: "INSERT INTO users TABLE orders", Class: "write", Reads: "app.orders", Writes: "app.users",
		Want: "INSERT INTO `sbx`.`s1_users` TABLE `sbx`.`s1_orders`", NoServer: "MySQL 8 TABLE statement"},
	{SQL: "EXPLAIN UPDATE users SET name = 'a'", Class: "read", Writes: "app.users",
		Want: "EXPLAIN UPDATE `sbx`.`s1_users` SET name = 'a'"},
	{SQL: "ANALYZE TABLE users", Class: "other", Reads: "app.users", Want: "ANALYZE TABLE `sbx`.`s1_users`"},
	{SQL: "OPTIMIZE TABLE users", Class: "other", Writes: "app.users", Want: "OPTIMIZE TABLE `sbx`.`s1_users`"},
	{SQL: "OPTIMIZE TABLE products", Class: "other", Writes: "app.products"},
	{SQL: "FLUSH TABLES users", Class: "read", Reads: "app.users", Want: "FLUSH TABLES `sbx`.`s1_users`"},
	{SQL: "SELECT * FROM users INTO OUTFILE '/tmp/sqlfork-x'", Class: "read", Reads: "app.users",
		Want: "SELECT * FROM `sbx`.`s1_users` INTO OUTFILE '/tmp/sqlfork-x'"},
	{SQL: "DO (SELECT COUNT(*) FROM users)", Class: "other", Reads: "app.users", Want: "DO (SELECT COUNT(*) FROM `sbx`.`s1_users`)"},
	{SQL: "SET @x = (SELECT COUNT(*) FROM users)", Class: "session", Reads: "app.users",
		Want: "SET @x = (SELECT COUNT(*) FROM `sbx`.`s1_users`)"},
	{SQL: "UPDATE products SET name = (SELECT MAX(name) FROM users)", Class: "write", Reads: "app.users", Writes: "app.products",
		Want: "UPDATE products SET name = (SELECT MAX(name) FROM `sbx`.`s1_users`)"},
	{SQL: "INSERT INTO users (name) VALUES ('r') RETURNING id", Class: "write", Writes: "app.users",
		Want: "INSERT INTO `sbx`.`s1_users` (name) VALUES ('r') RETURNING id"},
	{SQL: "DELETE FROM users WHERE id = 1 RETURNING id", Class: "write", Writes: "app.users",
		Want: "DELETE FROM `sbx`.`s1_users` WHERE id = 1 RETURNING id"},
}

// useSwitch covers USE inside a multi-statement input: later unqualified
// names belong to the new database.
var useSwitch = []Case{
	{SQL: "USE other; INSERT INTO things VALUES (1); SELECT * FROM users", Class: "session",
		Reads: "other.users", Writes: "other.things",
		Want: "USE other; INSERT INTO `sbx`.`s1_things` VALUES (1); SELECT * FROM users"},
	{SQL: "SELECT * FROM users; USE other; SELECT * FROM things, app.users", Class: "read",
		Reads: "app.users,other.things",
		Want:  "SELECT * FROM `sbx`.`s1_users`; USE other; SELECT * FROM `sbx`.`s1_things`, `sbx`.`s1_users`"},
}

// regressions are inputs that once reached production unrewritten, or were
// refused or classified wrongly.
var regressions = []Case{
	{SQL: "PREPARE s FROM 'SELECT 1'; DELETE FROM users WHERE id = 1", Class: "session", Writes: "app.users",
		Want: "PREPARE s FROM 'SELECT 1'; DELETE FROM `sbx`.`s1_users` WHERE id = 1"},
	{SQL: "PREPARE s FROM 'SELECT * FROM users'; SELECT 'SELECT * FROM users'", Class: "session", Reads: "app.users",
		Want: "PREPARE s FROM 'SELECT * FROM `sbx`.`s1_users`'; SELECT 'SELECT * FROM users'"},
	{SQL: "SET STATEMENT max_statement_time=1 FOR UPDATE other.things SET name='x'", Class: "write", Writes: "other.things",
		Want: "SET STATEMENT max_statement_time=1 FOR UPDATE `sbx`.`s1_things` SET name='x'"},
	{SQL: "SELECT * FROM products FOR SYSTEM_TIME ALL; DELETE FROM other.things", Class: "unparseable", Refuse: "more than one statement"},
	{SQL: "SELECT * FROM products FOR SYSTEM_TIME ALL; SELECT 1", Class: "unparseable", Refuse: "more than one statement"},
	{SQL: "START SLAVE", Class: "other"},
	{SQL: "PURGE BINARY LOGS BEFORE NOW()", Class: "unparseable", Refuse: "cannot parse this statement"},
	{SQL: "SHOW RELAYLOG 'x' EVENTS", Class: "unparseable", Refuse: "whole server"},
	{SQL: "SELECT * FROM products FOR SYSTEM_TIME ALL JOIN other.things", Class: "unparseable", Refuse: "names the sandboxed table `other`.`things`"},
	{SQL: "SELECT 1; /*M! DELETE FROM other.things */", Class: "read", Writes: "other.things",
		Want: "SELECT 1; /*M! DELETE FROM `sbx`.`s1_things` */"},
	{SQL: "SELECT 1 /*M!100100 FROM other.things */", Class: "read", Reads: "other.things",
		Want: "SELECT 1 /*M!100100 FROM `sbx`.`s1_things` */"},
	{SQL: "CREATE TABLE orders2 (id INT PRIMARY KEY, user_id INT REFERENCES users (id))", Class: "ddl",
		Reads: "app.users", Writes: "app.orders2",
		Want: "CREATE TABLE orders2 (id INT PRIMARY KEY, user_id INT REFERENCES `sbx`.`s1_users` (id))"},
	{SQL: "CREATE TABLE all_users (id INT) ENGINE=MERGE UNION=(users, accounts) INSERT_METHOD=LAST", Class: "ddl",
		Writes: "app.all_users", Refuse: "ENGINE=MERGE is not an engine the proxy can confine"},
	{SQL: "ALTER TABLE status ADD COLUMN status INT", Class: "ddl", Writes: "app.status",
		Want: "ALTER TABLE `sbx`.`s1_status` ADD COLUMN status INT"},
	{SQL: "SHOW COLUMNS FROM things FROM other", Class: "read", Reads: "other.things", Want: "SHOW COLUMNS FROM `sbx`.`s1_things`"},
	{SQL: "SHOW COLUMNS FROM products FROM app", Class: "read", Reads: "app.products"},
	{SQL: "SHOW FULL COLUMNS FROM users IN app LIKE 'n%'", Class: "read", Reads: "app.users", Want: "SHOW FULL COLUMNS FROM `sbx`.`s1_users` LIKE 'n%'"},
	{SQL: "SANDBOX STATUS; DROP TABLE users", Class: "sandbox", Refuse: "must be sent alone"},
	{SQL: "SELECT App.Users.id FROM app.users", Class: "read", Reads: "app.users",
		Want: "SELECT `sbx`.`s1_users`.id FROM `sbx`.`s1_users`"},
	{SQL: "SELECT * FROM accounts JOIN users ON accounts.id = users.id FOR UPDATE OF accounts", Class: "read",
		Reads: "app.accounts,app.users", NoServer: "MySQL 8 FOR UPDATE OF",
		Want: "SELECT * FROM `sbx`.`s1_accounts` JOIN `sbx`.`s1_users` ON `s1_accounts`.id = `s1_users`.id FOR UPDATE OF `sbx`.`s1_accounts`"},
	{SQL: "CREATE SEQUENCE tags", Class: "ddl", Writes: "app.tags", Want: "CREATE SEQUENCE `sbx`.`s1_tags`"},
	{SQL: "SELECT `users`.`id` FROM `users` AS `users`", Class: "read", Reads: "app.users",
		Want: "SELECT `users`.`id` FROM `sbx`.`s1_users` AS `users`"},
	{SQL: "SELECT products.id FROM users AS products JOIN products AS p ON p.id = products.id", Class: "read",
		Reads: "app.products,app.users",
		Want:  "SELECT products.id FROM `sbx`.`s1_users` AS products JOIN products AS p ON p.id = products.id"},
	{SQL: "SELECT * FROM products AS users; SELECT users.id FROM users", Class: "read", Reads: "app.products,app.users",
		Want: "SELECT * FROM products AS users; SELECT `s1_users`.id FROM `sbx`.`s1_users`"},
	{SQL: "SHOW TABLE STATUS; SELECT * FROM status", Class: "read", Reads: "app.status", Refuse: "cannot locate every reference"},
}
