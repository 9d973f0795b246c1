-- TTL (design.md §8) through psql: a row stamped in the year 2000 is hidden
-- at once (the runner, every minute by default, erases it later), a numeric
-- column AS SECONDS works, invalid TTLs are refused.
CREATE TABLE t (id Int64, ts Timestamp, PRIMARY KEY (id)) WITH (TTL = Interval("PT1H") ON ts);
INSERT INTO t VALUES (1, Timestamp("2000-01-01T00:00:00Z")), (2, Timestamp("2100-01-01T00:00:00Z")), (3, NULL);
SELECT id, ts FROM t ORDER BY id;
INSERT INTO t VALUES (1, Timestamp("2100-01-01T00:00:00Z"));
SELECT count(*) FROM t;
CREATE TABLE u (id Uint64, e Uint64, PRIMARY KEY (id)) WITH (TTL = Interval("PT1H") ON e AS SECONDS);
INSERT INTO u VALUES (1, 946684800), (2, 4102444800);
SELECT id, e FROM u;
ALTER TABLE u SET (TTL = Interval("P1D") ON e AS MILLISECONDS);
SELECT id, e FROM u ORDER BY id;
ALTER TABLE u RESET (TTL);
SHOW CREATE TABLE t;
CREATE TABLE bad (id Int64, ts Timestamp, PRIMARY KEY (id)) WITH (TTL = 3600 ON ts);
CREATE TABLE bad (id Int64, ts Timestamp, PRIMARY KEY (id)) WITH (TTL = Interval("-PT1H") ON ts);
CREATE TABLE bad (id Int64, ts Timestamp, PRIMARY KEY (id)) WITH (TTL = Interval("PT1H") ON created);
CREATE TABLE bad (id Int64, s Utf8, PRIMARY KEY (id)) WITH (TTL = Interval("PT1H") ON s);
CREATE TABLE bad (id Int64, e Uint64, PRIMARY KEY (id)) WITH (TTL = Interval("PT1H") ON e);
CREATE TABLE bad (id Int64, ts Timestamp, PRIMARY KEY (id)) WITH (TTL = Interval("PT1H") ON ts AS SECONDS);
ALTER TABLE t DROP COLUMN ts;
