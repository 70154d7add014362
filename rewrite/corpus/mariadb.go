package corpus

// mariadb are MariaDB-only forms the TiDB parser does not read and the
// engine reads anyway (rewrite/recovery, rewrite/mariadb.go), each with
// its exact output.
var mariadb = []Case{
	// EXPLAIN's MariaDB modifiers; ANALYZE runs its statement.
	{SQL: "ANALYZE SELECT * FROM users", Class: "read", Reads: "app.users", Want: "ANALYZE SELECT * FROM `sbx`.`s1_users`"},
	{SQL: "ANALYZE FORMAT=JSON UPDATE users SET name = 'x' WHERE id = 1", Class: "write", Writes: "app.users",
		Want: "ANALYZE FORMAT=JSON UPDATE `sbx`.`s1_users` SET name = 'x' WHERE id = 1"},
	{SQL: "EXPLAIN EXTENDED SELECT u.id FROM users u JOIN orders o ON o.user_id = u.id", Class: "read", Reads: "app.orders,app.users",
		Want: "EXPLAIN EXTENDED SELECT u.id FROM `sbx`.`s1_users` u JOIN `sbx`.`s1_orders` o ON o.user_id = u.id"},
	{SQL: "EXPLAIN PARTITIONS SELECT * FROM orders WHERE id = 1", Class: "read", Reads: "app.orders",
		Want: "EXPLAIN PARTITIONS SELECT * FROM `sbx`.`s1_orders` WHERE id = 1"},
	// Character sets the parser does not take as introducers.
	{SQL: "SELECT * FROM users WHERE name = _latin2'x' OR name = _ucs2 0x0041", Class: "read", Reads: "app.users",
		Want: "SELECT * FROM `sbx`.`s1_users` WHERE name = _latin2'x' OR name = _ucs2 0x0041"},
	// Dynamic columns.
	{SQL: "SELECT COLUMN_GET(COLUMN_CREATE(1, name AS CHAR), 1 AS CHAR(10)) FROM users", Class: "read", Reads: "app.users",
		Want: "SELECT COLUMN_GET(COLUMN_CREATE(1, name AS CHAR), 1 AS CHAR(10)) FROM `sbx`.`s1_users`"},
	// An argument's alias in a call by a bare name names a parameter (the
	// server refuses it for a built-in or stored function, 1583 / 1584,
	// and gives it to a UDF).
	{SQL: "SELECT CONV(id AS n, 10, 16), INSTR(name \"p\", 'x') FROM users WHERE id IN (SELECT ABS((SELECT MAX(user_id) FROM orders) m))",
		Class: "read", Reads: "app.orders,app.users", NoServer: "a built-in's named argument is the server's 1583, after it read the statement",
		Want: "SELECT CONV(id AS n, 10, 16), INSTR(name \"p\", 'x') FROM `sbx`.`s1_users` WHERE id IN (SELECT ABS((SELECT MAX(user_id) FROM `sbx`.`s1_orders`) m))"},
	// A collation the parser does not know (MariaDB's charset-less
	// uca1400_*): the server says whether it has it.
	{SQL: "SELECT CONVERT(name USING utf8mb4) COLLATE uca1400_as_cs AS n FROM users ORDER BY n", Class: "read", Reads: "app.users",
		Want: "SELECT CONVERT(name USING utf8mb4) COLLATE uca1400_as_cs AS n FROM `sbx`.`s1_users` ORDER BY n"},
	// A cast to DOUBLE(m, d); a double past the range the server reads
	// (its 1367, after it read the statement).
	{SQL: "SELECT CAST(id AS DOUBLE(10,2)) FROM users", Class: "read", Reads: "app.users",
		Want: "SELECT CAST(id AS DOUBLE(10,2)) FROM `sbx`.`s1_users`"},
	{SQL: "INSERT INTO orders (id, total) VALUES (1, 1.8e308)", Class: "write", Writes: "app.orders",
		NoServer: "the server's 1367: an illegal double, after it read the statement",
		Want:     "INSERT INTO `sbx`.`s1_orders` (id, total) VALUES (1, 1.8e308)"},
	// JSON_ARRAYAGG's clauses (every expression in place), SOUNDS LIKE,
	// NATURAL INNER | STRAIGHT_JOIN.
	{SQL: "SELECT u.id, JSON_ARRAYAGG(DISTINCT o.id ORDER BY o.id LIMIT 3) FROM users u NATURAL INNER JOIN orders o WHERE u.name SOUNDS LIKE (SELECT name FROM posts LIMIT 1) GROUP BY u.id",
		Class: "read", Reads: "app.orders,app.posts,app.users",
		Want: "SELECT u.id, JSON_ARRAYAGG(DISTINCT o.id ORDER BY o.id LIMIT 3) FROM `sbx`.`s1_users` u NATURAL INNER JOIN `sbx`.`s1_orders` o WHERE u.name SOUNDS LIKE (SELECT name FROM `sbx`.`s1_posts` LIMIT 1) GROUP BY u.id"},
	{SQL: "SELECT orders.id FROM users NATURAL STRAIGHT_JOIN orders", Class: "read", Reads: "app.orders,app.users",
		Want: "SELECT `s1_orders`.id FROM `sbx`.`s1_users` NATURAL STRAIGHT_JOIN `sbx`.`s1_orders`"},
	// A multi-table UPDATE's ORDER BY and LIMIT (the ordering's
	// qualifiers renamed in place); EXPLAIN of VALUES; VALUE(col) in a
	// condition.
	{SQL: "UPDATE users, orders SET users.name = 'x' WHERE orders.user_id = users.id ORDER BY orders.id DESC LIMIT 2", Class: "write",
		Writes: "app.orders,app.users",
		Want:   "UPDATE `sbx`.`s1_users`, `sbx`.`s1_orders` SET `s1_users`.name = 'x' WHERE `s1_orders`.user_id = `s1_users`.id ORDER BY `s1_orders`.id DESC LIMIT 2"},
	{SQL: "EXPLAIN FORMAT=JSON VALUES (1, 2) UNION SELECT id, 2 FROM users", Class: "read", Reads: "app.users",
		Want: "EXPLAIN FORMAT=JSON VALUES (1, 2) UNION SELECT id, 2 FROM `sbx`.`s1_users`"},
	{SQL: "SELECT COUNT(*) FROM users GROUP BY VALUE(name)", Class: "read", Reads: "app.users",
		Want: "SELECT COUNT(*) FROM `sbx`.`s1_users` GROUP BY VALUE(name)"},
	// An index's [NOT] IGNORED.
	{SQL: "CREATE INDEX orders ON users (name) NOT IGNORED", Class: "ddl", Writes: "app.users",
		Want: "CREATE INDEX orders ON `sbx`.`s1_users` (name) NOT IGNORED"},
	{SQL: "ALTER TABLE users RENAME INDEX a TO b, ALTER INDEX b IGNORED", Class: "ddl", Writes: "app.users",
		Want: "ALTER TABLE `sbx`.`s1_users` RENAME INDEX a TO b, ALTER INDEX b IGNORED"},
	// RENAME TABLE IF EXISTS; ALGORITHM=NOCOPY.
	{SQL: "RENAME TABLE IF EXISTS users TO users_old, orders TO orders_old", Class: "ddl",
		Writes: "app.orders,app.orders_old,app.users,app.users_old",
		Want:   "RENAME TABLE IF EXISTS `sbx`.`s1_users` TO users_old, `sbx`.`s1_orders` TO orders_old"},
	{SQL: "ALTER TABLE users RENAME COLUMN name TO full_name, ALGORITHM=NOCOPY", Class: "ddl", Writes: "app.users",
		Want: "ALTER TABLE `sbx`.`s1_users` RENAME COLUMN name TO full_name, ALGORITHM=NOCOPY"},
	// A type qualified by mariadb_schema; MariaDB's EXAMPLE engine (its
	// tables are always empty) with its own options.
	{SQL: "CREATE TABLE users (a mariadb_schema.date)", Class: "ddl", Writes: "app.users",
		Want: "CREATE TABLE `sbx`.`s1_users` (a mariadb_schema.date)"},
	{SQL: "CREATE TABLE users (a INT) ENGINE=example ULL=10 one_or_two='one'", Class: "ddl", Writes: "app.users",
		NoServer: "the EXAMPLE engine is a plugin the test server may lack",
		Want:     "CREATE TABLE `sbx`.`s1_users` (a INT) ENGINE=example ULL=10 one_or_two='one'"},
	// LOAD DATA's PARTITION; WEIGHT_STRING's LEVEL; a window frame's
	// EXCLUDE and COUNT(DISTINCT …) OVER.
	{SQL: "LOAD DATA LOCAL INFILE 'f.txt' INTO TABLE users PARTITION (p0, p1) (id, name)", Class: "write", Writes: "app.users",
		NoServer: "the test table has no partitions",
		Want:     "LOAD DATA LOCAL INFILE 'f.txt' INTO TABLE `sbx`.`s1_users` PARTITION (p0, p1) (id, name)"},
	{SQL: "SELECT HEX(WEIGHT_STRING(name AS CHAR(3) LEVEL 1-2 DESC)), COUNT(DISTINCT id) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING EXCLUDE TIES) FROM users",
		Class: "read", Reads: "app.users",
		Want: "SELECT HEX(WEIGHT_STRING(name AS CHAR(3) LEVEL 1-2 DESC)), COUNT(DISTINCT id) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING EXCLUDE TIES) FROM `sbx`.`s1_users`"},
	// DEFAULT(col)'s qualifier, which the parser's walk skips.
	{SQL: "SELECT DEFAULT(users.name), DEFAULT(app.users.id) FROM users", Class: "read", Reads: "app.users",
		Want: "SELECT DEFAULT(`s1_users`.name), DEFAULT(`sbx`.`s1_users`.id) FROM `sbx`.`s1_users`"},
	// Digits with letters that form no number are a name (1a, 1ea10).
	{SQL: "SELECT 1a.id FROM users 1a WHERE 1a.id > 1e1", Class: "read", Reads: "app.users",
		Want: "SELECT 1a.id FROM `sbx`.`s1_users` 1a WHERE 1a.id > 1e1"},
	// CREATE TABLE's query in two pairs of parentheses, or a table value
	// constructor; CREATE OR REPLACE DATABASE (DDL naming no table);
	// FLUSH SLOW LOGS.
	{SQL: "CREATE TABLE users ((SELECT * FROM orders WHERE id <= 3) ORDER BY 1 DESC) LIMIT 2", Class: "ddl", Reads: "app.orders",
		Writes: "app.users", Want: "CREATE TABLE `sbx`.`s1_users` ((SELECT * FROM `sbx`.`s1_orders` WHERE id <= 3) ORDER BY 1 DESC) LIMIT 2"},
	{SQL: "CREATE TABLE users (a CHAR(1)) VALUES ('a'), ('b') UNION VALUES ('c')", Class: "ddl", Writes: "app.users",
		Want: "CREATE TABLE `sbx`.`s1_users` (a CHAR(1)) VALUES ('a'), ('b') UNION VALUES ('c')"},
	{SQL: "CREATE OR REPLACE DATABASE IF NOT EXISTS reports", Class: "ddl", NoServer: "not run by the round trip: it drops a database"},
	{SQL: "FLUSH SLOW LOGS", Class: "other"},
	// An aggregate's name apart from its '('.
	{SQL: "SELECT MAX (id), COUNT (*) FROM users", Class: "read", Reads: "app.users", Want: "SELECT MAX (id), COUNT (*) FROM `sbx`.`s1_users`"},
	// Statements read from their words (rewrite/mariadb.go).
	{SQL: "ALTER TABLE users CONVERT PARTITION p0 TO TABLE orders", Class: "ddl", Writes: "app.orders,app.users",
		NoServer: "the test table has no partitions",
		Want:     "ALTER TABLE `sbx`.`s1_users` CONVERT PARTITION p0 TO TABLE `sbx`.`s1_orders`"},
	{SQL: "ALTER TABLE users CONVERT TABLE other.things TO PARTITION p1 VALUES LESS THAN (10, MAXVALUE) WITHOUT VALIDATION", Class: "ddl",
		Writes: "app.users,other.things", NoServer: "the test table has no partitions",
		Want: "ALTER TABLE `sbx`.`s1_users` CONVERT TABLE `sbx`.`s1_things` TO PARTITION p1 VALUES LESS THAN (10, MAXVALUE) WITHOUT VALIDATION"},
	{SQL: "CHECK TABLE users", Class: "other", Reads: "app.users", Want: "CHECK TABLE `sbx`.`s1_users`"},
	{SQL: "CHECK TABLE users, other.things FOR UPGRADE", Class: "other", Reads: "app.users,other.things",
		Want: "CHECK TABLE `sbx`.`s1_users`, `sbx`.`s1_things` FOR UPGRADE"},
	{SQL: "REPAIR TABLE users", Class: "other", Writes: "app.users", Want: "REPAIR TABLE `sbx`.`s1_users`"},
	{SQL: "CHECKSUM TABLE users, products EXTENDED", Class: "other", Reads: "app.products,app.users",
		Want: "CHECKSUM TABLE `sbx`.`s1_users`, products EXTENDED"},
	{SQL: "XA START 'x'", Class: "other"},
	{SQL: "LOAD XML INFILE 'x.xml' IGNORE INTO TABLE users ROWS IDENTIFIED BY '<row>' (id, @n) SET name = @n", Class: "write",
		Writes: "app.users", NoServer: "a file on the server (refused in a sandbox: Statement.Outside)",
		Want: "LOAD XML INFILE 'x.xml' IGNORE INTO TABLE `sbx`.`s1_users` ROWS IDENTIFIED BY '<row>' (id, @n) SET name = @n"},
	{SQL: "RESET QUERY CACHE", Class: "other"},
	{SQL: "FLUSH LOCAL SLOW LOGS, USER_RESOURCES", Class: "other"},
	{SQL: "BACKUP UNLOCK", Class: "other"},
	{SQL: "SHOW CONTRIBUTORS", Class: "read"},
	{SQL: "HELP no_such_topic", Class: "read"},
	{SQL: "SHOW LOCAL VARIABLES LIKE 'sql_mode'", Class: "read"},
	{SQL: "SHOW WARNINGS LIMIT 1", Class: "read"},
	{SQL: "START TRANSACTION READ ONLY, WITH CONSISTENT SNAPSHOT", Class: "transaction"},
	{SQL: "KILL QUERY @id", Class: "other", NoServer: "not run by the round trip: it would end a connection"},
	{SQL: "BACKUP LOCK users", Class: "other", Reads: "app.users", Want: "BACKUP LOCK `sbx`.`s1_users`",
		NoServer: "not run by the round trip: its lock is held until BACKUP UNLOCK, and would stall the schema's rebuilds"},
	{SQL: "SET STATEMENT max_statement_time=10 FOR LOAD INDEX INTO CACHE other.things", Class: "other", Reads: "other.things",
		Want: "SET STATEMENT max_statement_time=10 FOR LOAD INDEX INTO CACHE `sbx`.`s1_things`"},
	{SQL: "GET DIAGNOSTICS CONDITION 1 @m = MESSAGE_TEXT", Class: "session"},
	{SQL: "SHOW CREATE TRIGGER app.tr", Class: "read"},
	{SQL: "EXECUTE IMMEDIATE 'SELECT 1'", Class: "read"},
	{SQL: "EXECUTE IMMEDIATE 'DELETE FROM users'", Class: "write", Writes: "app.users", Want: "EXECUTE IMMEDIATE 'DELETE FROM `sbx`.`s1_users`'"},
	{SQL: "EXECUTE IMMEDIATE 'SELECT * FROM orders WHERE id = ?' USING 1", Class: "read", Reads: "app.orders",
		Want: "EXECUTE IMMEDIATE 'SELECT * FROM `sbx`.`s1_orders` WHERE id = ?' USING 1"},
	{SQL: "EXECUTE IMMEDIATE CONCAT('DELETE FROM ', 'users')", Class: "session", Refuse: "dynamic SQL"},
	{SQL: "PREPARE s FROM CONCAT('DELETE FROM ', 'users')", Class: "session", Refuse: "FROM an expression is dynamic SQL"},
	{SQL: "PREPARE s FROM (SELECT name FROM users LIMIT 1)", Class: "session", Refuse: "FROM an expression is dynamic SQL"},
	// Triggers (rewrite/trigger.go): refused by a resolver that does not
	// place them.
	{SQL: "CREATE TRIGGER tr BEFORE INSERT ON users FOR EACH ROW SET NEW.name = 'x'", Class: "routine", Writes: "app.users",
		Refuse: "CREATE TRIGGER acts on a trigger"},
	{SQL: "CREATE TRIGGER trg_orders AFTER INSERT ON orders FOR EACH ROW UPDATE users SET comments_count = comments_count + 1 WHERE id = NEW.user_id",
		Class: "routine", Writes: "app.orders,app.users", Refuse: "run it on a direct connection"},
	{SQL: "CREATE FUNCTION app.f() RETURNS INT RETURN (SELECT COUNT(*) FROM users)", Class: "routine", Reads: "app.users",
		Refuse: "definition runs statements the proxy cannot confine"},
	{SQL: "DROP FUNCTION IF EXISTS app.f", Class: "routine", Refuse: "DROP FUNCTION acts on"},
	// A syntax error before a CREATE PROCEDURE stops the input (it once
	// made the engine analyse the same text without end).
	{SQL: "a |;\ncreate procedure p1() begin select 1; end", Class: "read"},
	// CAST to MariaDB's INT / INTEGER.
	{SQL: "SELECT CAST(id AS INT), CAST(name AS INTEGER) FROM users", Class: "read", Reads: "app.users",
		Want: "SELECT CAST(id AS INT), CAST(name AS INTEGER) FROM `sbx`.`s1_users`"},
	// Names the tree declares are no tables: a partition, an index and a
	// user spelled like sandboxed tables.
	{SQL: "CREATE TABLE users (id INT, KEY orders (id)) PARTITION BY RANGE (id) (PARTITION orders VALUES LESS THAN (10), PARTITION p1 VALUES LESS THAN MAXVALUE)",
		Class: "ddl", Writes: "app.users",
		Want: "CREATE TABLE `sbx`.`s1_users` (id INT, KEY orders (id)) PARTITION BY RANGE (id) (PARTITION orders VALUES LESS THAN (10), PARTITION p1 VALUES LESS THAN MAXVALUE)"},
	{SQL: "CREATE USER users@localhost", Class: "other"},
	{SQL: "GRANT SELECT ON app.products TO users@localhost", Class: "other"},
	// A CTE shadows a table of its name in its WITH's query expression
	// (subqueries included); a non-recursive CTE's body sees only the CTEs
	// before it, so its own name there is the table; a name qualified with
	// a database is always the table.
	{SQL: "WITH users AS (SELECT * FROM products) SELECT * FROM users", Class: "read", Reads: "app.products"},
	{SQL: "WITH RECURSIVE orders(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM orders WHERE n < 3) SELECT * FROM orders", Class: "read"},
	{SQL: "WITH orders AS (SELECT * FROM orders WHERE total > 10) SELECT o.id, u.name FROM orders o JOIN users u ON u.id = o.user_id",
		Class: "read", Reads: "app.orders,app.users",
		Want: "WITH orders AS (SELECT * FROM `sbx`.`s1_orders` WHERE total > 10) SELECT o.id, u.name FROM orders o JOIN `sbx`.`s1_users` u ON u.id = o.user_id"},
	{SQL: "WITH users AS (SELECT 1 AS id) SELECT * FROM app.users WHERE id IN (SELECT id FROM users)", Class: "read", Reads: "app.users",
		Want: "WITH users AS (SELECT 1 AS id) SELECT * FROM `sbx`.`s1_users` WHERE id IN (SELECT id FROM users)"},
	{SQL: "SELECT * FROM users WHERE id IN (WITH users AS (SELECT 1 AS id) SELECT id FROM users)", Class: "read", Reads: "app.users",
		Want: "SELECT * FROM `sbx`.`s1_users` WHERE id IN (WITH users AS (SELECT 1 AS id) SELECT id FROM users)"},
	{SQL: "WITH a AS (SELECT * FROM orders), orders AS (SELECT 5 AS id) SELECT * FROM a, orders", Class: "read", Reads: "app.orders",
		Want: "WITH a AS (SELECT * FROM `sbx`.`s1_orders`), orders AS (SELECT 5 AS id) SELECT * FROM a, orders"},
	{SQL: "INSERT INTO orders (id) WITH orders AS (SELECT 7 AS id) SELECT id FROM orders", Class: "write", Writes: "app.orders",
		Want: "INSERT INTO `sbx`.`s1_orders` (id) WITH orders AS (SELECT 7 AS id) SELECT id FROM orders"},
	// A qualifier spelled like a CTE that is also a table of the statement
	// could name either.
	{SQL: "WITH users AS (SELECT * FROM users) SELECT users.id FROM users", Class: "read", Reads: "app.users", Refuse: "could be either; rename the CTE"},
	// CREATE OR REPLACE, ALTER ONLINE, MariaDB's row limits, column
	// attributes and CHECK OPTION.
	{SQL: "CREATE OR REPLACE TABLE products (id INT)", Class: "ddl", Writes: "app.products"},
	{SQL: "CREATE OR REPLACE TABLE users (id INT)", Class: "ddl", Writes: "app.users", Want: "CREATE OR REPLACE TABLE `sbx`.`s1_users` (id INT)"},
	{SQL: "ALTER ONLINE TABLE users ADD COLUMN nick VARCHAR(20) INVISIBLE", Class: "ddl", Writes: "app.users",
		Want: "ALTER ONLINE TABLE `sbx`.`s1_users` ADD COLUMN nick VARCHAR(20) INVISIBLE"},
	{SQL: "SELECT * FROM orders ORDER BY total DESC OFFSET 1 ROWS FETCH FIRST 2 ROWS WITH TIES", Class: "read", Reads: "app.orders",
		Want: "SELECT * FROM `sbx`.`s1_orders` ORDER BY total DESC OFFSET 1 ROWS FETCH FIRST 2 ROWS WITH TIES"},
	{SQL: "SELECT * FROM users LIMIT 10 ROWS EXAMINED 1000", Class: "read", Reads: "app.users", Want: "SELECT * FROM `sbx`.`s1_users` LIMIT 10 ROWS EXAMINED 1000"},
	{SQL: "CREATE VIEW big_orders AS SELECT * FROM orders WHERE total > 100 WITH CASCADED CHECK OPTION", Class: "ddl",
		Reads: "app.orders", Writes: "app.big_orders",
		Want: "CREATE VIEW big_orders AS SELECT * FROM `sbx`.`s1_orders` WHERE total > 100 WITH CASCADED CHECK OPTION"},
	{SQL: "SET STATEMENT sql_mode='' FOR UPDATE users SET name = 'x'", Class: "write", Writes: "app.users",
		Want: "SET STATEMENT sql_mode='' FOR UPDATE `sbx`.`s1_users` SET name = 'x'"},
	// Operands MariaDB takes more freely (LIKE … ESCAPE of any operand,
	// LIKE … IN chains, IS tests chained), FROM DUAL HAVING, FROM t = a.
	{SQL: "SELECT * FROM users WHERE name LIKE 'a|%' ESCAPE (SELECT MIN('|') FROM orders) IN (1)", Class: "read",
		Reads: "app.orders,app.users",
		Want:  "SELECT * FROM `sbx`.`s1_users` WHERE name LIKE 'a|%' ESCAPE (SELECT MIN('|') FROM `sbx`.`s1_orders`) IN (1)"},
	{SQL: "SELECT name REGEXP 'a' LIKE 1, name IS NULL IS FALSE FROM users", Class: "read", Reads: "app.users",
		Want: "SELECT name REGEXP 'a' LIKE 1, name IS NULL IS FALSE FROM `sbx`.`s1_users`"},
	{SQL: "SELECT id FROM users WHERE EXISTS ((SELECT 1 FROM DUAL HAVING users.id > 1) INTERSECT (SELECT 1 FROM DUAL HAVING users.id < 9))",
		Class: "read", Reads: "app.users",
		Want: "SELECT id FROM `sbx`.`s1_users` WHERE EXISTS ((SELECT 1 FROM DUAL HAVING `s1_users`.id > 1) INTERSECT (SELECT 1 FROM DUAL HAVING `s1_users`.id < 9))"},
	{SQL: "SELECT u.name FROM users = u LIMIT 1", Class: "read", Reads: "app.users", Want: "SELECT u.name FROM `sbx`.`s1_users` = u LIMIT 1"},
	// RETURNING columns; CACHE INDEX.
	{SQL: "INSERT INTO users (name) SELECT name FROM products RETURNING id", Class: "write", Reads: "app.products", Writes: "app.users",
		Want: "INSERT INTO `sbx`.`s1_users` (name) SELECT name FROM products RETURNING id"},
	{SQL: "REPLACE INTO users (id, name) VALUES (1, 'a') RETURNING id, name", Class: "write", Writes: "app.users",
		Want: "REPLACE INTO `sbx`.`s1_users` (id, name) VALUES (1, 'a') RETURNING id, name"},
	{SQL: "ANALYZE TABLE users PERSISTENT FOR COLUMNS (name) INDEXES ()", Class: "other", Reads: "app.users",
		Want: "ANALYZE TABLE `sbx`.`s1_users` PERSISTENT FOR COLUMNS (name) INDEXES ()"},
	// CREATE / ALTER TABLE in forms only MariaDB knows, read from their
	// words when nothing after the name can name another table.
	{SQL: "CREATE TABLE users_hist (id INT) WITH SYSTEM VERSIONING", Class: "ddl", Writes: "app.users_hist"},
	{SQL: "ALTER TABLE users ADD COLUMN born YEAR(2), ADD COLUMN note BLOB COMPRESSED", Class: "ddl", Writes: "app.users",
		Want: "ALTER TABLE `sbx`.`s1_users` ADD COLUMN born YEAR(2), ADD COLUMN note BLOB COMPRESSED"},
	// LOCK TABLES with aliases and MariaDB's lock types; VALUE(col).
	{SQL: "LOCK TABLES users READ, orders LOW_PRIORITY WRITE", Class: "session", Reads: "app.users", Writes: "app.orders",
		Want: "LOCK TABLES `sbx`.`s1_users` READ, `sbx`.`s1_orders` LOW_PRIORITY WRITE"},
	{SQL: "LOCK TABLES users AS u READ, orders o WRITE CONCURRENT", Class: "session", Reads: "app.users", Writes: "app.orders",
		Want: "LOCK TABLES `sbx`.`s1_users` AS u READ, `sbx`.`s1_orders` o WRITE CONCURRENT"},
	{SQL: "INSERT INTO users (id, name) VALUES (1, 'a') ON DUPLICATE KEY UPDATE name = VALUE(name)", Class: "write", Writes: "app.users",
		Want: "INSERT INTO `sbx`.`s1_users` (id, name) VALUES (1, 'a') ON DUPLICATE KEY UPDATE name = VALUE(name)"},
	{SQL: "SELECT * FROM users PROCEDURE ANALYSE()", Class: "read", Reads: "app.users", Want: "SELECT * FROM `sbx`.`s1_users` PROCEDURE ANALYSE()"},
	// Views the parser does not read; accounts and databases in MariaDB's
	// forms.
	{SQL: "ALTER VIEW active_users AS SELECT * FROM users WHERE id IN (SELECT user_id FROM orders)", Class: "ddl",
		Reads: "app.orders,app.users", Writes: "app.active_users",
		Want: "ALTER VIEW active_users AS SELECT * FROM `sbx`.`s1_users` WHERE id IN (SELECT user_id FROM `sbx`.`s1_orders`)"},
	{SQL: "CREATE VIEW IF NOT EXISTS user_names AS SELECT name FROM users", Class: "ddl", Reads: "app.users", Writes: "app.user_names",
		Want: "CREATE VIEW IF NOT EXISTS user_names AS SELECT name FROM `sbx`.`s1_users`"},
	{SQL: "CREATE DATABASE IF NOT EXISTS reports CHARACTER SET latin2 COLLATE DEFAULT", Class: "ddl"},
	// Compound statements sent as statements, read like a procedure's
	// body: each statement and expression rewritten in place.
	{SQL: "BEGIN NOT ATOMIC DECLARE n INT DEFAULT (SELECT COUNT(*) FROM orders); IF n > 0 THEN UPDATE users SET name = 'x' WHERE id = n; END IF; END",
		Class: "write", Reads: "app.orders", Writes: "app.users",
		Want: "BEGIN NOT ATOMIC DECLARE n INT DEFAULT (SELECT COUNT(*) FROM `sbx`.`s1_orders`); IF n > 0 THEN UPDATE `sbx`.`s1_users` SET name = 'x' WHERE id = n; END IF; END"},
	{SQL: "FOR i IN 1..3 DO INSERT INTO orders (id) VALUES (i); END FOR", Class: "write", Writes: "app.orders",
		Want: "FOR i IN 1..3 DO INSERT INTO `sbx`.`s1_orders` (id) VALUES (i); END FOR"},
	// Table value constructors.
	{SQL: "SELECT id, name FROM users WHERE id IN (VALUES (1), (2)) UNION VALUES (3, 'x')", Class: "read", Reads: "app.users",
		Want: "SELECT id, name FROM `sbx`.`s1_users` WHERE id IN (VALUES (1), (2)) UNION VALUES (3, 'x')"},
	// Ordered-set aggregates; lock waits.
	{SQL: "SELECT name, PERCENTILE_DISC(0.5) WITHIN GROUP (ORDER BY total) OVER (PARTITION BY name) FROM orders", Class: "read", Reads: "app.orders",
		Want: "SELECT name, PERCENTILE_DISC(0.5) WITHIN GROUP (ORDER BY total) OVER (PARTITION BY name) FROM `sbx`.`s1_orders`"},
	{SQL: "SELECT * FROM users WHERE id = 1 FOR UPDATE NOWAIT", Class: "read", Reads: "app.users",
		Want: "SELECT * FROM `sbx`.`s1_users` WHERE id = 1 FOR UPDATE NOWAIT"},
	// HANDLER: the table opened is read (and forked first); a handler
	// named after its table keeps the logical name.
	{SQL: "HANDLER users OPEN", Class: "read", Reads: "app.users", Want: "HANDLER `sbx`.`s1_users` OPEN AS `users`"},
	{SQL: "HANDLER other.things OPEN AS t", Class: "read", Reads: "other.things", Want: "HANDLER `sbx`.`s1_things` OPEN AS t"},
}
