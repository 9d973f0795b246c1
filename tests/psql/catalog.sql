-- psql's \dt+, \di+, \l+, \df, \sv, \dC and \d of a view, and the size
-- functions: sizes are the data sizes of the shards (keys and values).
CREATE TABLE big (id Uint64, name Utf8 NOT NULL, n Int32, PRIMARY KEY (id));
CREATE INDEX big_name ON big (name);
CREATE TABLE small (k Int8, u Uint32, at Datetime, PRIMARY KEY (k));
CREATE VIEW named AS SELECT id, name AS label FROM big WHERE n > 0;
INSERT INTO big SELECT x, 'name ' || CAST(x AS Utf8), x % 3 FROM generate_series(1, 500) AS g(x);
INSERT INTO small VALUES (1, 2, Datetime('2020-01-01T00:00:00Z'));
\dt+
\di+
\l+
\df
\sv named
\d named
\d small
\dC boolean
SELECT pg_relation_size('big') > 0 AS has_rows, pg_relation_size('big_pkey') AS pkey_bytes,
       pg_table_size('big') = pg_relation_size('big') AS table_is_relation,
       pg_indexes_size('big') = pg_relation_size('big_name') AS one_index,
       pg_total_relation_size('big') = pg_relation_size('big') + pg_relation_size('big_name') AS total,
       pg_relation_size('big', 'fsm') AS fsm, pg_relation_size('named') AS view_bytes;
SELECT pg_database_size('pivotdb') = pg_total_relation_size('big') + pg_total_relation_size('small') AS db_total,
       pg_database_size(current_database()) = pg_database_size((SELECT oid FROM pg_database WHERE datname = 'pivotdb')) AS by_oid;
SELECT pg_relation_size('big', 'nosuch');
SELECT pg_database_size('nosuch');
SELECT x, pg_size_pretty(x) FROM (VALUES (0::bigint), (10239::bigint), (10240::bigint), (20971519::bigint), (20971520::bigint), (-10240::bigint), (1099511627776::bigint)) AS v(x);
SELECT pg_size_pretty(123456789012345678901234::numeric);
SELECT set_config('work_mem', '8MB', false), current_setting('work_mem');
SELECT set_config('work_mem', '8MB', true);
-- pg_class.reloptions lists the YQL table settings with the current shard
-- boundaries; pg_dump writes them back as WITH (name = 'value'), which
-- CREATE TABLE reads.
CREATE TABLE parted (a Utf8, b Int64, PRIMARY KEY (a, b)) WITH (PARTITION_AT_KEYS = (("m"), ("m", 5)), AUTO_PARTITIONING_PARTITION_SIZE_MB = 512, KEY_BLOOM_FILTER = ENABLED);
SELECT relname, reloptions FROM pg_class WHERE relname IN ('parted', 'small') ORDER BY 1;
CREATE TABLE parted_copy (a Utf8, b Int64, PRIMARY KEY (a, b)) WITH (auto_partitioning_partition_size_mb='512', partition_at_keys='(("m"), ("m", 5))', key_bloom_filter='ENABLED');
SELECT (SELECT reloptions FROM pg_class WHERE relname = 'parted') = (SELECT reloptions FROM pg_class WHERE relname = 'parted_copy') AS same;
-- reloptions is a text[]: psql's \d+ footer lists it as Options, and
-- clients unnest it (issue 20).
\d+ parted
SELECT o FROM pg_catalog.pg_class c, pg_catalog.unnest(c.reloptions) AS o WHERE c.relname = 'parted' AND o LIKE 'key%';
SELECT cardinality(reloptions), reloptions[3], relacl IS NULL AS no_acl FROM pg_class WHERE relname = 'parted';
