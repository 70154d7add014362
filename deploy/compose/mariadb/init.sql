-- A sample production schema and the proxy's least-privilege account.
CREATE DATABASE shop;
CREATE TABLE shop.customers (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(64) NOT NULL, email VARCHAR(128) UNIQUE);
CREATE TABLE shop.orders (id INT AUTO_INCREMENT PRIMARY KEY, customer_id INT NOT NULL, total DECIMAL(10,2),
  created DATETIME DEFAULT CURRENT_TIMESTAMP, FOREIGN KEY (customer_id) REFERENCES shop.customers(id));
INSERT INTO shop.customers (name, email) VALUES ('Ada', 'ada@example.com'), ('Linus', 'linus@example.com');
INSERT INTO shop.orders (customer_id, total) VALUES (1, 19.99), (1, 5.00), (2, 42.00);
CREATE USER 'app'@'%' IDENTIFIED BY 'app-pw';
-- Read-only on production (SHOW VIEW: SHOW CREATE VIEW), SELECT on mysql.func
-- (the proxy lists loadable functions), all privileges on the proxy's own
-- databases only (`\_` is a literal _, `_` alone would match any character).
GRANT SELECT, SHOW VIEW ON shop.* TO 'app'@'%';
GRANT SELECT ON mysql.func TO 'app'@'%';
GRANT ALL PRIVILEGES ON `\_sqlfork%`.* TO 'app'@'%';
