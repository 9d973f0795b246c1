-- The schema and data tests/pgdump/shop-inserts.sql was dumped from, by
-- PostgreSQL 15.18: psql -f shop-schema.sql shop && pg_dump --inserts shop
-- (and shop-copy.sql by plain pg_dump shop)
-- (the \restrict lines of pg_dump 15.14+ taken out, for older psql).
CREATE ROLE app_owner;
CREATE TABLE customers (
    id serial PRIMARY KEY,
    email varchar(100) NOT NULL UNIQUE,
    name text NOT NULL,
    vip boolean DEFAULT false,
    created timestamp DEFAULT '2024-01-01 00:00:00'
);
CREATE TABLE orders (
    id bigserial PRIMARY KEY,
    customer_id integer NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
    total numeric(10,2) CHECK (total >= 0),
    placed date NOT NULL,
    note text,
    weight double precision,
    payload bytea
);
CREATE INDEX orders_customer ON orders (customer_id);
CREATE INDEX orders_placed_total ON orders (placed, total);
CREATE TABLE events (at timestamptz NOT NULL, kind smallint, tag uuid, body json);
CREATE SEQUENCE invoice_no START 1000 INCREMENT 10;
CREATE VIEW big_orders AS SELECT id, customer_id, total FROM orders WHERE total > 100;
ALTER TABLE customers OWNER TO app_owner;
INSERT INTO customers (email, name, vip) VALUES ('ann@example.com', 'Ann', true), ('bob@example.com', 'Bob O''Neil', false), ('cy@example.com', 'Cy', NULL);
INSERT INTO orders (customer_id, total, placed, note, weight, payload) VALUES
 (1, 150.50, '2024-02-01', 'first', 1.5, '\xdeadbeef'), (1, 20.00, '2024-02-02', NULL, NULL, NULL), (2, 999.99, '2024-03-01', 'tab	and
newline', 2.25, ''), (3, 0, '2024-03-05', 'zero', -0.5, '\x00');
INSERT INTO events VALUES ('2024-01-01 10:00:00+00', 1, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{"k": [1, 2]}'), ('2024-01-02 11:30:00+00', 2, NULL, NULL);
SELECT nextval('invoice_no'), nextval('invoice_no');
