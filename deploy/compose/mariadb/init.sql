-- A sample production schema and the accounts of the compose demo.
CREATE DATABASE shop;
CREATE TABLE shop.customers (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(64) NOT NULL, email VARCHAR(128) UNIQUE);
CREATE TABLE shop.orders (id INT AUTO_INCREMENT PRIMARY KEY, customer_id INT NOT NULL, total DECIMAL(10,2),
  created DATETIME DEFAULT CURRENT_TIMESTAMP, FOREIGN KEY (customer_id) REFERENCES shop.customers(id));
INSERT INTO shop.customers (name, email) VALUES ('Ada', 'ada@example.com'), ('Linus', 'linus@example.com');
INSERT INTO shop.orders (customer_id, total) VALUES (1, 19.99), (1, 5.00), (2, 42.00);

-- app: the proxy's least-privilege upstream account. Read-only on production
-- (SHOW VIEW: SHOW CREATE VIEW), SELECT on mysql.func (the proxy lists
-- loadable functions), all privileges on the proxy's own databases only
-- (`\_` is a literal _, `_` alone would match any character).
CREATE USER 'app'@'%' IDENTIFIED BY 'app-pw';
GRANT SELECT, SHOW VIEW ON shop.* TO 'app'@'%';
GRANT SELECT ON mysql.func TO 'app'@'%';
GRANT ALL PRIVILEGES ON `\_sqlfork%`.* TO 'app'@'%';

-- sqlfork_promote: the promote account (--promote-user), the only one that
-- writes production, and only for a promote (docs/OPERATIONS.md).
CREATE USER 'sqlfork_promote'@'%' IDENTIFIED BY 'promote-pw';
GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, ALTER, INDEX, CREATE VIEW, SHOW VIEW ON shop.* TO 'sqlfork_promote'@'%';

-- dev: a developer's own account, logging in through the proxy (which relays
-- the login to this server). It may write shop, so its SANDBOX PROMOTE may
-- apply what its sandboxes changed; its sandboxes live in `\_sqlfork%`.
CREATE USER 'dev'@'%' IDENTIFIED BY 'dev-pw';
GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, ALTER, INDEX, CREATE VIEW, SHOW VIEW ON shop.* TO 'dev'@'%';
GRANT SELECT ON mysql.func TO 'dev'@'%';
GRANT ALL PRIVILEGES ON `\_sqlfork%`.* TO 'dev'@'%';
