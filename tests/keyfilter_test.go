package tests

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestKeyBloomFilterOverTheWire drives KEY_BLOOM_FILTER (design §9) with pgx:
// point reads by = and IN with parameters, INSERT's duplicate check, ALTER in
// both spellings, SHOW CREATE TABLE, and sys.partitions before and after a
// restart (which flushes the memtables, so the filters exist on disk).
func TestKeyBloomFilterOverTheWire(t *testing.T) {
	srv := startServer(t)
	ctx := context.Background()
	c := srv.connect(t, pgx.QueryExecModeCacheStatement)
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := c.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec(`CREATE TABLE f (hash Uint64 AS (farm_hash(key)), key Utf8, v Int64, PRIMARY KEY (hash, key))
		WITH (UNIFORM_PARTITIONS = 4, KEY_BLOOM_FILTER = ENABLED)`)
	exec(`CREATE TABLE n (k Int64, v Int64, PRIMARY KEY (k))`)
	var vals, nvals []string
	for i := 0; i < 2000; i++ {
		vals = append(vals, fmt.Sprintf("('k%d', %d)", 2*i, i))
		nvals = append(nvals, fmt.Sprintf("(%d, %d)", 2*i, i))
	}
	exec("INSERT INTO f (key, v) VALUES " + strings.Join(vals, ","))
	exec("INSERT INTO n (k, v) VALUES " + strings.Join(nvals, ","))

	check := func(stage string) {
		t.Helper()
		var v int64
		if err := c.QueryRow(ctx, "SELECT v FROM f WHERE key = $1", "k10").Scan(&v); err != nil || v != 5 {
			t.Fatalf("%s: point read = %d, %v", stage, v, err)
		}
		if err := c.QueryRow(ctx, "SELECT v FROM f WHERE key = $1", "k11").Scan(&v); !errors.Is(err, pgx.ErrNoRows) {
			t.Fatalf("%s: absent key: %v", stage, err)
		}
		rows, _ := c.Query(ctx, "SELECT v FROM f WHERE key IN ($1, $2, $3, $4) ORDER BY v", "k0", "k1", "k3998", "zz")
		got, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil || fmt.Sprint(got) != "[0 1999]" {
			t.Fatalf("%s: IN list = %v, %v", stage, got, err)
		}
		_, err = c.Exec(ctx, "INSERT INTO f (key, v) VALUES ($1, 0)", "k20")
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "23505" {
			t.Fatalf("%s: duplicate INSERT: %v", stage, err)
		}
	}
	filterCols := func(table string) (on bool, bytes int64) {
		t.Helper()
		err := c.QueryRow(ctx, "SELECT key_bloom_filter, key_bloom_filter_bytes FROM sys.partitions WHERE table_name = $1 AND partition_index = 0", table).Scan(&on, &bytes)
		if err != nil {
			t.Fatal(err)
		}
		return on, bytes
	}
	check("after load")
	srv.restart()
	c = srv.connect(t, pgx.QueryExecModeCacheStatement)
	check("after restart")
	if on, bytes := filterCols("f"); !on || bytes < 2000*10/8 {
		t.Errorf("f: key_bloom_filter=%v bytes=%d", on, bytes)
	}
	if on, bytes := filterCols("n"); on || bytes != 0 {
		t.Errorf("n: key_bloom_filter=%v bytes=%d", on, bytes)
	}

	exec("ALTER TABLE f SET KEY_BLOOM_FILTER DISABLED")
	exec("ALTER TABLE n SET (KEY_BLOOM_FILTER = ENABLED)")
	var ddl string
	if err := c.QueryRow(ctx, "SHOW CREATE TABLE n").Scan(new(string), &ddl); err != nil || !strings.Contains(ddl, "KEY_BLOOM_FILTER = ENABLED") {
		t.Fatalf("SHOW CREATE TABLE n: %q, %v", ddl, err)
	}
	check("after ALTER")
	srv.restart() // cancels the compactions the ALTERs started, if still running
	c = srv.connect(t, pgx.QueryExecModeCacheStatement)
	check("after ALTER and restart")
	if on, _ := filterCols("f"); on {
		t.Errorf("f still ENABLED")
	}
	if on, _ := filterCols("n"); !on {
		t.Errorf("n not ENABLED")
	}
	_, err := c.Exec(ctx, "ALTER TABLE f SET KEY_BLOOM_FILTER MAYBE")
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code[:2] != "22" && pgErr.Code[:2] != "42" {
		t.Errorf("bad value: %v", err)
	}
}

// TestKeyBloomFilterAtCreate: rows of a table created with
// KEY_BLOOM_FILTER = ENABLED get their filter soon after they are written,
// as the rows of an ALTER do, without a restart and long before the
// memtable would fill on its own (storage/keyfilterflush.go). The deadline
// is far beyond the flush delay: it fails only when no filter comes.
func TestKeyBloomFilterAtCreate(t *testing.T) {
	srv := startServer(t)
	ctx := context.Background()
	c := srv.connect(t, pgx.QueryExecModeCacheStatement)
	if _, err := c.Exec(ctx, `CREATE TABLE c (k Int64, v Int64, PRIMARY KEY (k)) WITH (KEY_BLOOM_FILTER = ENABLED)`); err != nil {
		t.Fatal(err)
	}
	var vals []string
	for i := 0; i < 2000; i++ {
		vals = append(vals, fmt.Sprintf("(%d, %d)", i, i))
	}
	if _, err := c.Exec(ctx, "INSERT INTO c VALUES "+strings.Join(vals, ",")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		var bytes int64
		if err := c.QueryRow(ctx, "SELECT key_bloom_filter_bytes FROM sys.partitions WHERE table_name = 'c'").Scan(&bytes); err != nil {
			t.Fatal(err)
		}
		if bytes >= 2000*10/8 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no key filter for the rows of a table created with one: %d bytes", bytes)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
