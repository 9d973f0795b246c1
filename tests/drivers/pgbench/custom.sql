-- pgbench custom script (pgbench -n -f), run by tests/drivers_test.go in
-- every -M mode against the table bench_kv (k Int64 key, v Int64).
\set k random(1, 100)
\set d random(-5, 5)
BEGIN;
UPSERT INTO bench_kv (k, v) VALUES (:k, :d);
SELECT v FROM bench_kv WHERE k = :k;
UPDATE bench_kv SET v = v + 1 WHERE k = :k;
END;
SELECT count(*) FROM bench_kv WHERE k BETWEEN :k AND :k + 10;
