-- The walk-through of README.md, run through psql.
CREATE TABLE users (id Uint64, name Utf8 NOT NULL, visits Int32 DEFAULT 0, PRIMARY KEY (id));
INSERT INTO users (id, name) VALUES (1, 'ann'), (2, 'bob');
UPSERT INTO users (id, visits) VALUES (1, 5);
REPLACE INTO users (id, name) VALUES (2, 'rob');
SELECT name, visits FROM users ORDER BY id;
BEGIN;
DELETE FROM users WHERE id = 1;
SELECT count(*) FROM users;
ROLLBACK;
SELECT count(*), max(visits) FROM users;
INSERT INTO users (id, name) VALUES (1, 'dup');
SELEC 1;
SELECT name FROM users WHERE nosuch = 1;
-- ping
CREATE TABLE users (id Int32);
DROP TABLE IF EXISTS nothere;
SELECT Date("2024-02-29"), Timestamp("2024-01-01T10:00:00Z") + Interval("PT1H"), 18446744073709551615::Uint64;
