-- psql's describe commands and catalog queries, answered from PivotDB's
-- catalog (pg_catalog and information_schema are virtual tables).
CREATE TABLE orders (id Uint64, customer Utf8 NOT NULL, total Decimal(12,2), note varchar(40) DEFAULT 'none', created Timestamp, PRIMARY KEY (id));
CREATE TABLE events (host Utf8, ts Timestamp, v Double, PRIMARY KEY (host, ts));
CREATE INDEX orders_customer ON orders (customer);
\l
\dn
\dt
\d
\dt ord*
\dt nosuch
\di
SELECT c.relname, c.relkind, c.relhasindex, c.relnatts
FROM pg_catalog.pg_class c
WHERE c.relnamespace = 'public'::regnamespace AND pg_catalog.pg_table_is_visible(c.oid)
ORDER BY 1;
SELECT a.attname AS "Column", pg_catalog.format_type(a.atttypid, a.atttypmod) AS "Type",
       CASE WHEN a.attnotnull THEN 'not null' ELSE '' END AS "Nullable"
FROM pg_catalog.pg_attribute a
WHERE a.attrelid = 'orders'::regclass AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum;
SELECT pg_catalog.pg_get_indexdef(i.indexrelid, 0, true), i.indisprimary
FROM pg_catalog.pg_index i WHERE i.indrelid = 'events'::regclass;
\x
SELECT table_name, column_name, ordinal_position, is_nullable, data_type, character_maximum_length, column_default
FROM information_schema.columns WHERE table_name = 'orders' AND column_name IN ('id', 'note') ORDER BY 3;
\x
SELECT current_database(), current_schema(), current_user, current_setting('server_version_num');
SELECT version() ~ '^PostgreSQL 15\.' AS is_pg15;
SELECT name, setting FROM pg_settings WHERE name IN ('DateStyle', 'TimeZone', 'server_encoding') ORDER BY 1;
SELECT 'nosuch'::regclass;
-- \d orders and \du use ARRAY(SELECT ...) (psql's policies footer, role
-- memberships), which yields the text form of an array. \d orders still
-- stops at psql 15's publications footer (a ::int2[] cast, subscripts and
-- generate_series in FROM): 0A000 until those exist.
\d orders
\du
