package corpus

// mariadb are MariaDB-only forms the TiDB parser does not read and the
// engine reads anyway (rewrite/recover.go, rewrite/mariadb.go), each with
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
	{SQL: "SELECT COLUMN_GET(COLUMN_CREATE(1, name AS CHAR(10)), 1 AS CHAR CHARACTER SET utf8mb4) FROM users", Class: "read", Reads: "app.users",
		Want: "SELECT COLUMN_GET(COLUMN_CREATE(1, name AS CHAR(10)), 1 AS CHAR CHARACTER SET utf8mb4) FROM `sbx`.`s1_users`"},
}
