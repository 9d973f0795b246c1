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
-- \d NAME runs psql 15's footer queries: ARRAY(SELECT ...) (policies), and
-- the publications footer's ::int2[] cast, array_upper, subscripts,
-- generate_series in FROM and string_agg. \du uses ARRAY(SELECT ...).
\d orders
\d events
\du
-- \d+ adds the storage and description columns and its footer reads
-- reloptions || array(...) and pg_catalog.unnest(reloptions) (issue 20).
\d+ orders
\d+ events
-- The pieces on their own.
SELECT s, ('{10,20,30}'::pg_catalog.int2[])[s] AS elem FROM pg_catalog.generate_series(0, pg_catalog.array_upper('{10,20,30}'::int2[], 1) + 1) s ORDER BY 1;
SELECT string_agg(attname, ', ') FROM generate_series(1, 3) s JOIN pg_catalog.pg_attribute ON attnum = ('{3,1}'::int4[])[s] WHERE attrelid = 'orders'::regclass;
SELECT '{1,x}'::int2[];
