-- Demo schema for local development (loaded by scripts/run.sh on first start
-- of the throwaway MariaDB). Re-runnable: it drops and recreates `demo`.
-- 5 customers + 6 products + 9 orders = 20 rows, two foreign keys, a view.

DROP DATABASE IF EXISTS demo;
CREATE DATABASE demo CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci;
USE demo;

CREATE TABLE customers (
  id         INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  name       VARCHAR(100) NOT NULL,
  email      VARCHAR(255) NOT NULL,
  country    CHAR(2)      NOT NULL,
  created_at DATETIME     NOT NULL DEFAULT CURRENT_TIMESTAMP,
  UNIQUE KEY uk_customers_email (email)
) ENGINE=InnoDB;

CREATE TABLE products (
  id       INT UNSIGNED  NOT NULL AUTO_INCREMENT PRIMARY KEY,
  sku      VARCHAR(32)   NOT NULL,
  name     VARCHAR(100)  NOT NULL,
  price    DECIMAL(10,2) NOT NULL,
  in_stock INT           NOT NULL DEFAULT 0,
  attrs    JSON          NULL,
  UNIQUE KEY uk_products_sku (sku)
) ENGINE=InnoDB;

CREATE TABLE orders (
  id          INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  customer_id INT UNSIGNED NOT NULL,
  product_id  INT UNSIGNED NOT NULL,
  quantity    INT UNSIGNED NOT NULL DEFAULT 1,
  status      ENUM('pending','paid','shipped','cancelled') NOT NULL DEFAULT 'pending',
  ordered_at  DATETIME     NOT NULL,
  note        TEXT         NULL,
  KEY idx_orders_customer (customer_id),
  KEY idx_orders_product (product_id),
  CONSTRAINT fk_orders_customer FOREIGN KEY (customer_id) REFERENCES customers (id),
  CONSTRAINT fk_orders_product  FOREIGN KEY (product_id)  REFERENCES products (id)
) ENGINE=InnoDB;

INSERT INTO customers (id, name, email, country, created_at) VALUES
  (1, 'Ada Lovelace',     'ada@example.com',    'GB', '2024-01-05 09:12:00'),
  (2, 'Grace Hopper',     'grace@example.com',  'US', '2024-02-11 14:30:00'),
  (3, 'Linus Torvalds',   'linus@example.com',  'FI', '2024-03-02 08:45:00'),
  (4, 'Margaret Hamilton','margaret@example.com','US', '2024-03-20 17:05:00'),
  (5, 'José Müller',      'jose@example.com',   'DE', '2024-04-01 10:00:00');

INSERT INTO products (id, sku, name, price, in_stock, attrs) VALUES
  (1, 'KB-001',  'Mechanical keyboard', 89.90, 25, '{"layout": "ISO", "switch": "brown"}'),
  (2, 'MS-002',  'Wireless mouse',      24.50, 80, '{"dpi": 1600}'),
  (3, 'MN-003',  '27" monitor',        219.00, 10, '{"resolution": "2560x1440"}'),
  (4, 'CB-004',  'USB-C cable',          9.99, 200, NULL),
  (5, 'HS-005',  'Headset',             59.00, 0,  '{"wireless": true}'),
  (6, 'DK-006',  'Docking station',    149.00, 7,  NULL);

INSERT INTO orders (id, customer_id, product_id, quantity, status, ordered_at, note) VALUES
  (1, 1, 1, 1, 'shipped',   '2024-04-02 10:00:00', NULL),
  (2, 1, 4, 3, 'shipped',   '2024-04-02 10:00:00', 'gift wrap'),
  (3, 2, 3, 2, 'paid',      '2024-04-10 16:20:00', NULL),
  (4, 3, 2, 1, 'pending',   '2024-04-15 11:11:00', NULL),
  (5, 3, 6, 1, 'pending',   '2024-04-15 11:12:00', 'deliver after 5pm'),
  (6, 4, 5, 1, 'cancelled', '2024-04-18 09:00:00', 'out of stock'),
  (7, 4, 1, 2, 'paid',      '2024-04-19 13:45:00', NULL),
  (8, 5, 2, 1, 'shipped',   '2024-04-21 08:30:00', NULL),
  (9, 5, 4, 5, 'paid',      '2024-04-22 19:00:00', NULL);

CREATE SQL SECURITY INVOKER VIEW order_totals AS
  SELECT o.id            AS order_id,
         c.name          AS customer,
         p.name          AS product,
         o.quantity,
         p.price,
         o.quantity * p.price AS total,
         o.status,
         o.ordered_at
    FROM orders o
    JOIN customers c ON c.id = o.customer_id
    JOIN products  p ON p.id = o.product_id;
