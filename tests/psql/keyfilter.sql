-- KEY_BLOOM_FILTER (design.md §9) through psql: the setting in CREATE TABLE,
-- both ALTER spellings, SHOW CREATE TABLE, sys.partitions, point reads by
-- full key (=, IN, INSERT's duplicate check) and invalid values.
CREATE TABLE kv (k Uint64, v Utf8, PRIMARY KEY (k)) WITH (UNIFORM_PARTITIONS = 2, KEY_BLOOM_FILTER = ENABLED);
INSERT INTO kv VALUES (1, 'a'), (2, 'b'), (3, 'c');
INSERT INTO kv VALUES (2, 'dup');
SELECT k, v FROM kv WHERE k IN (1, 3, 5) ORDER BY k;
SELECT v FROM kv WHERE k = 2;
SHOW CREATE TABLE kv;
SELECT partition_index, key_bloom_filter FROM sys.partitions WHERE table_name = 'kv' ORDER BY partition_index;
ALTER TABLE kv SET KEY_BLOOM_FILTER DISABLED;
SHOW CREATE TABLE kv;
ALTER TABLE kv SET (KEY_BLOOM_FILTER = ENABLED);
SHOW CREATE TABLE kv;
SELECT k, v FROM kv WHERE k IN (1, 3, 5) ORDER BY k;
ALTER TABLE kv SET KEY_BLOOM_FILTER MAYBE;
ALTER TABLE kv SET (KEY_BLOOM_FILTER = 1);
ALTER TABLE kv RESET (KEY_BLOOM_FILTER);
